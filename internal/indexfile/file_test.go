package indexfile_test

import (
	"bytes"
	"errors"
	"io/fs"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/indexfile"
	"github.com/segkit/segkit/vfs"
)

// open opens path of fsys or fails the test.
func open(tb testing.TB, fsys vfs.FS, path string, entrySize, max int, writable bool) *indexfile.File {
	tb.Helper()
	x, err := indexfile.Open(fsys, path, entrySize, max, writable)
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

func writeFile(tb testing.TB, fsys vfs.FS, path string, b []byte) {
	tb.Helper()
	if err := vfs.WriteFile(fsys, path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

func readAll(tb testing.TB, fsys vfs.FS, path string) []byte {
	tb.Helper()
	b, err := vfs.ReadFile(fsys, path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// entry returns an entry of size bytes, all b.
func entry(size int, b byte) []byte { return bytes.Repeat([]byte{b}, size) }

func TestOpenErrors(t *testing.T) {
	fsys := vfs.NewMem()
	writeFile(t, fsys, "x", make([]byte, 24))
	for _, tt := range []struct {
		name      string
		path      string
		entrySize int
		max       int
		writable  bool
		want      error
	}{
		{"entry_size_0", "x", 0, 64, true, indexfile.ErrInvalidSize},
		{"entry_size_17", "x", 17, 64, false, indexfile.ErrInvalidSize},
		{"max_below_one_entry", "x", 12, 11, true, indexfile.ErrInvalidSize},
		{"read_only_missing", "missing", 8, 64, false, fs.ErrNotExist},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := indexfile.Open(fsys, tt.path, tt.entrySize, tt.max, tt.writable); !errors.Is(err, tt.want) {
				t.Fatalf("Open = %v, want %v", err, tt.want)
			}
		})
	}
	// A read-only open ignores maxIndexSize.
	x := open(t, fsys, "x", 8, -1, false)
	if x.Entries() != 3 || x.MaxEntries() != 3 || x.Length() != 24 || x.Writable() || x.Path() != "x" {
		t.Fatalf("read-only open: %d entries of %d, length %d, writable %v, path %q", x.Entries(), x.MaxEntries(), x.Length(), x.Writable(), x.Path())
	}
}

// TestOpen covers what a fresh and an existing file look like: a created
// file is preallocated to roundDown(maxIndexSize, entrySize), an existing
// one keeps its length and trusts floor(length/entrySize) entries.
func TestOpen(t *testing.T) {
	fsys := vfs.NewMem()
	x := open(t, fsys, "new", 12, 100, true)
	if x.Length() != 96 || x.MaxEntries() != 8 || x.Entries() != 0 || len(readAll(t, fsys, "new")) != 96 {
		t.Fatalf("created: length %d, %d of %d entries", x.Length(), x.Entries(), x.MaxEntries())
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}

	// 2 entries, a zero one, and 5 bytes of a partial one.
	file := append(append(entry(12, 1), entry(12, 2)...), make([]byte, 12+5)...)
	writeFile(t, fsys, "old", file)
	x = open(t, fsys, "old", 12, 1200, true)
	defer x.Close()
	v := x.View()
	if v.Length() != int64(len(file)) || v.Entries() != 3 || v.MaxEntries() != 3 {
		t.Fatalf("existing: %+v", v)
	}
	if !bytes.Equal(v.Data(), file[:24]) {
		t.Fatalf("Data = %x, want the entries up to the last non-zero one", v.Data())
	}
	if !bytes.Equal(v.Entry(2), make([]byte, 12)) || !bytes.Equal(v.Entry(1), entry(12, 2)) {
		t.Fatalf("Entry(1) = %x, Entry(2) = %x", v.Entry(1), v.Entry(2))
	}
	want := indexfile.Padding{Entries: 3, ValidEntries: 2, ZeroBytes: 12 + 5, Untrimmed: true}
	if p := x.Padding(); p != want {
		t.Fatalf("Padding = %+v, want %+v", p, want)
	}
}

// TestOpenChunks checks the non-zero prefix across the 64 KiB read chunks:
// data after a zero run that spans chunks is kept, the zero tail is not,
// and a non-zero partial trailing entry is not padding.
func TestOpenChunks(t *testing.T) {
	const es = 12
	for _, tt := range []struct {
		name     string
		size     int
		nonZero  []int // byte offsets set to 0xff
		wantData int
		wantPad  indexfile.Padding
	}{
		{"all_zero", 3 * indexfile.ReadChunk, nil, 0,
			indexfile.Padding{Entries: 3 * indexfile.ReadChunk / es, ZeroBytes: 3 * indexfile.ReadChunk / es * es, Untrimmed: true}},
		{"data_after_zero_chunks", 3*indexfile.ReadChunk + 4, []int{0, 2*indexfile.ReadChunk + 100}, (2*indexfile.ReadChunk+100)/es*es + es,
			indexfile.Padding{Entries: (3*indexfile.ReadChunk + 4) / es, ValidEntries: (2*indexfile.ReadChunk+100)/es + 1,
				ZeroBytes: int64((3*indexfile.ReadChunk+4)/es-(2*indexfile.ReadChunk+100)/es-1)*es + (3*indexfile.ReadChunk+4)%es, Untrimmed: true}},
		{"non_zero_partial_tail", 10*es + 3, []int{5, 10*es + 1}, es,
			indexfile.Padding{Entries: 10, ValidEntries: 1, ZeroBytes: 9 * es, Untrimmed: true}},
		{"trimmed", 4 * es, []int{4*es - 1}, 4 * es, indexfile.Padding{Entries: 4, ValidEntries: 4}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := make([]byte, tt.size)
			for _, off := range tt.nonZero {
				file[off] = 0xff
			}
			fsys := vfs.NewMem()
			writeFile(t, fsys, "x", file)
			x := open(t, fsys, "x", es, -1, false)
			if got := x.View().Data(); !bytes.Equal(got, file[:tt.wantData]) {
				t.Fatalf("Data holds %d bytes, want %d", len(got), tt.wantData)
			}
			if p := x.Padding(); p != tt.wantPad {
				t.Fatalf("Padding = %+v, want %+v", p, tt.wantPad)
			}
		})
	}
}

// TestViewIsSnapshot checks that a View does not change when the File does:
// appends write past it, truncation copies the survivors.
func TestViewIsSnapshot(t *testing.T) {
	fsys := vfs.NewMem()
	x := open(t, fsys, "x", 8, 80, true)
	defer x.Close()
	for i := range 4 {
		if err := x.Append(entry(8, byte(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	before := x.View()
	saved := bytes.Clone(before.Data())
	if err := x.TruncateEntries(1); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := x.Append(entry(8, byte(9+i))); err != nil {
			t.Fatal(err)
		}
	}
	if before.Entries() != 4 || !bytes.Equal(before.Data(), saved) {
		t.Fatalf("the old view changed: %d entries, %x", before.Entries(), before.Data())
	}
	if v := x.View(); v.Entries() != 4 || !bytes.Equal(v.Entry(0), entry(8, 1)) || !bytes.Equal(v.Entry(3), entry(8, 11)) {
		t.Fatalf("new view: %d entries, %x", v.Entries(), v.Data())
	}
}

// TestWriteBehind checks that appends reach the file at Flush, and that
// TruncateEntries zeroes the slots of written entries it removes.
func TestWriteBehind(t *testing.T) {
	fsys := vfs.NewMem()
	x := open(t, fsys, "x", 8, 64, true)
	for i := range 3 {
		if err := x.Append(entry(8, byte(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	if got := readAll(t, fsys, "x"); !bytes.Equal(got, make([]byte, 64)) {
		t.Fatalf("appends reached the file before Flush: %x", got)
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	want := append(append(append(entry(8, 1), entry(8, 2)...), entry(8, 3)...), make([]byte, 40)...)
	if got := readAll(t, fsys, "x"); !bytes.Equal(got, want) {
		t.Fatalf("after Flush: %x", got)
	}
	if err := x.TruncateEntries(1); err != nil {
		t.Fatal(err)
	}
	want = append(entry(8, 1), make([]byte, 56)...)
	if got := readAll(t, fsys, "x"); !bytes.Equal(got, want) {
		t.Fatalf("after TruncateEntries: %x", got)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestResizeTrimReset(t *testing.T) {
	fsys := vfs.NewMem()
	x := open(t, fsys, "x", 12, 120, true)
	defer x.Close()
	for i := range 3 {
		if err := x.Append(entry(12, byte(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	if changed, err := x.Resize(35); changed || !errors.Is(err, indexfile.ErrInvalidSize) {
		t.Fatalf("Resize below the entries = %v, %v", changed, err)
	}
	if changed, err := x.Resize(-1); changed || !errors.Is(err, indexfile.ErrInvalidSize) {
		t.Fatalf("Resize(-1) = %v, %v", changed, err)
	}
	if changed, err := x.Resize(60); !changed || err != nil || x.Length() != 60 || x.MaxEntries() != 5 {
		t.Fatalf("Resize(60) = %v, %v: length %d", changed, err, x.Length())
	}
	if changed, err := x.Resize(65); changed || err != nil {
		t.Fatalf("Resize(65), which rounds to 60 = %v, %v", changed, err)
	}
	if err := x.TrimToValidSize(); err != nil || x.Length() != 36 || x.MaxEntries() != 3 {
		t.Fatalf("TrimToValidSize = %v: length %d", err, x.Length())
	}
	if err := x.Append(entry(12, 4)); !errors.Is(err, indexfile.ErrIndexFull) {
		t.Fatalf("Append to a trimmed file = %v, want ErrIndexFull", err)
	}
	if got := readAll(t, fsys, "x"); !bytes.Equal(got[24:], entry(12, 3)) {
		t.Fatalf("a trimmed file ends %x", got[24:])
	}
	if err := x.Reset(); err != nil || x.Entries() != 0 || x.Length() != 120 {
		t.Fatalf("Reset = %v: %d entries, length %d", err, x.Entries(), x.Length())
	}
	if got := readAll(t, fsys, "x"); !bytes.Equal(got, make([]byte, 120)) {
		t.Fatalf("after Reset: %x", got)
	}
}

func TestDiscardPadding(t *testing.T) {
	fsys := vfs.NewMem()
	writeFile(t, fsys, "x", append(entry(8, 7), make([]byte, 8*5)...))
	x := open(t, fsys, "x", 8, -1, false) // read-only files may discard too
	if ok, err := x.DiscardPadding(); !ok || err != nil || x.Entries() != 1 || x.MaxEntries() != 6 {
		t.Fatalf("DiscardPadding = %v, %v: %d of %d entries", ok, err, x.Entries(), x.MaxEntries())
	}
	if ok, err := x.DiscardPadding(); ok || err != nil {
		t.Fatalf("second DiscardPadding = %v, %v", ok, err)
	}
	if p := x.Padding(); p.Untrimmed || p.ValidEntries != 1 {
		t.Fatalf("Padding after DiscardPadding = %+v", p)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := x.DiscardPadding(); !errors.Is(err, indexfile.ErrClosed) {
		t.Fatalf("DiscardPadding after Close = %v", err)
	}
}

func TestReadOnlyAndClosed(t *testing.T) {
	fsys := vfs.NewMem()
	writeFile(t, fsys, "x", entry(8, 1))
	ro := open(t, fsys, "x", 8, -1, false)
	for name, err := range map[string]error{
		"Check":           ro.Check(),
		"Append":          ro.Append(entry(8, 2)),
		"TruncateEntries": ro.TruncateEntries(0),
		"TrimToValidSize": ro.TrimToValidSize(),
		"Reset":           ro.Reset(),
	} {
		if !errors.Is(err, indexfile.ErrReadOnly) {
			t.Errorf("read-only %s = %v, want ErrReadOnly", name, err)
		}
	}
	if err := ro.Flush(); err != nil {
		t.Errorf("read-only Flush = %v, want nil", err)
	}
	if ro.Closed() {
		t.Fatal("Closed before Close")
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if !ro.Closed() || ro.Entries() != 1 {
		t.Fatalf("after Close: Closed %v, %d entries", ro.Closed(), ro.Entries())
	}
	if err := ro.Close(); !errors.Is(err, indexfile.ErrClosed) {
		t.Errorf("second Close = %v", err)
	}

	w := open(t, fsys, "x", 8, 64, true)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Check":   w.Check(),
		"Append":  w.Append(entry(8, 2)),
		"Flush":   w.Flush(),
		"Rename":  w.Rename("y"),
		"Reset":   w.Reset(),
		"Resize":  func() error { _, err := w.Resize(8); return err }(),
		"Discard": func() error { _, err := w.DiscardPadding(); return err }(),
	} {
		if !errors.Is(err, indexfile.ErrClosed) {
			t.Errorf("closed %s = %v, want ErrClosed", name, err)
		}
	}
}

func TestAppendPanicsOnWrongSize(t *testing.T) {
	x := open(t, vfs.NewMem(), "x", 8, 64, true)
	defer x.Close()
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	_ = x.Append(make([]byte, 7))
}

func TestRenameDelete(t *testing.T) {
	fsys := vfs.NewMem()
	x := open(t, fsys, "a", 8, 64, true)
	if err := x.Append(entry(8, 1)); err != nil {
		t.Fatal(err)
	}
	if err := x.Rename("b"); err != nil || x.Path() != "b" {
		t.Fatalf("Rename = %v, path %q", err, x.Path())
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, fsys, "b"); !bytes.Equal(got[:8], entry(8, 1)) {
		t.Fatalf("renamed file %x", got)
	}
	if err := x.Delete(); err != nil || !x.Closed() {
		t.Fatalf("Delete = %v, Closed %v", err, x.Closed())
	}
	if _, err := fsys.Stat("b"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the file is still there: %v", err)
	}
	if err := x.Delete(); err != nil {
		t.Fatalf("Delete of a file already gone = %v", err)
	}
}

func TestCorruptIndexf(t *testing.T) {
	err := indexfile.CorruptIndexf("x.index", 16, "the last offset %d is below %d", 3, 5)
	var ce *format.CorruptionError
	if !errors.As(err, &ce) || ce.Path != "x.index" || ce.Offset != 16 {
		t.Fatalf("%v (%T) is not a *format.CorruptionError at x.index byte 16", err, err)
	}
	if !errors.Is(err, indexfile.ErrCorruptIndex) || !errors.Is(err, format.ErrInvalid) {
		t.Fatalf("%v does not match ErrCorruptIndex and format.ErrInvalid", err)
	}
	const want = "x.index: byte 16: index: corrupt index: the last offset 3 is below 5 (format: invalid value)"
	if err.Error() != want {
		t.Fatalf("message %q, want %q", err.Error(), want)
	}
}

var sinkView *indexfile.View

// TestAllocs holds the reading methods to zero allocations.
func TestAllocs(t *testing.T) {
	fsys := vfs.NewMem()
	writeFile(t, fsys, "x", append(entry(12, 1), make([]byte, 12*100)...))
	x := open(t, fsys, "x", 12, -1, false)
	for name, f := range map[string]func(){
		"View":    func() { sinkView = x.View() },
		"Entry":   func() { _ = x.View().Entry(50) },
		"Padding": func() { _ = x.Padding() },
		"Entries": func() { _ = x.Entries() },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocs, want 0", name, n)
		}
	}
}
