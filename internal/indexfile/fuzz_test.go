package indexfile_test

import (
	"bytes"
	"testing"

	"github.com/segkit/segkit/internal/indexfile"
	"github.com/segkit/segkit/vfs"
)

// FuzzOpen opens arbitrary bytes as a read-only file of entries and checks
// what it trusts and keeps against a plain model: floor(len/entrySize)
// entries; in memory, the whole entries up to the last one holding a
// non-zero byte; Padding, the trailing all-zero entries (plus a zero
// partial entry); every Entry equal to the file's bytes.
func FuzzOpen(f *testing.F) {
	f.Add([]byte{}, uint8(8))
	f.Add(make([]byte, 24), uint8(12))
	f.Add(append(bytes.Repeat([]byte{1}, 8), make([]byte, 21)...), uint8(8))
	f.Add(append(make([]byte, 30), 1), uint8(12))
	f.Add(append(make([]byte, indexfile.ReadChunk+5), 1, 0, 0), uint8(12))
	f.Fuzz(func(t *testing.T, file []byte, esByte uint8) {
		es := 1 + int(esByte)%16
		fsys := vfs.NewMem()
		writeFile(t, fsys, "x", file)
		x := open(t, fsys, "x", es, -1, false)
		defer x.Close()

		n := len(file) / es
		valid := n
		for valid > 0 && !bytes.ContainsFunc(file[(valid-1)*es:valid*es], func(r rune) bool { return r != 0 }) {
			valid--
		}
		tail := file[n*es:]
		zeroBytes := int64(n-valid) * int64(es)
		if bytes.Count(tail, []byte{0}) == len(tail) {
			zeroBytes += int64(len(tail))
		}
		want := indexfile.Padding{Entries: n, ValidEntries: valid, ZeroBytes: zeroBytes, Untrimmed: valid < n}
		if p := x.Padding(); p != want {
			t.Fatalf("Padding = %+v, want %+v", p, want)
		}
		v := x.View()
		if v.Entries() != n || v.MaxEntries() != n || v.Length() != int64(len(file)) {
			t.Fatalf("View %+v for %d bytes of %d-byte entries", v, len(file), es)
		}
		if !bytes.Equal(v.Data(), file[:valid*es]) {
			t.Fatalf("Data holds %d bytes, want %d", len(v.Data()), valid*es)
		}
		for i := range n {
			if !bytes.Equal(v.Entry(i), file[i*es:(i+1)*es]) {
				t.Fatalf("Entry(%d) = %x, want %x", i, v.Entry(i), file[i*es:(i+1)*es])
			}
		}
	})
}
