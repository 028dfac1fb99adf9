package record_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/internal/maprange"
	"github.com/segkit/segkit/record"
)

// TestReaderScannerMapFileShrinks truncates a file under a ReaderScanner
// that views it through memory mappings: reading the mapped pages past the
// new end faults (SIGBUS), which Next recovers, reading on with ReadAt. The
// scan then finds what a scan of the truncated file finds.
func TestReaderScannerMapFileShrinks(t *testing.T) {
	var data []byte
	for len(data) < 256<<10 {
		data = append(data, mustBatch(t, 40)...)
	}
	path := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if maprange.For(f) == nil {
		t.Skip("no mappings on this platform")
	}
	// A page boundary well past the first entries: the bytes before it
	// stay as they were, the pages after it go.
	cut := int64(128 << 10)
	var rs record.ReaderScanner
	rs.Map = maprange.For(f)
	rs.Reset(f, int64(len(data)), path, 0)
	var got scanResult
	for rs.Next() {
		e := rs.Entry()
		got.Entries = append(got.Entries, [2]int64{e.Position, int64(e.Size())})
		if len(got.Entries) == 3 {
			if err := os.Truncate(path, cut); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := rs.Err(); err != nil {
		got.Err = err.Error()
	}
	got.ValidEnd = rs.ValidEnd()
	k, at, n := rs.Tail()
	got.Tail = [3]int64{int64(k), at, n}
	rs.Close()

	want := scanAll(&record.ReaderScanner{}, data[:cut])
	want.Err = ""
	if d := cmp.Diff(want.Entries, got.Entries); d != "" {
		t.Errorf("entries (-truncated file +scan under truncation):\n%s", d)
	}
	if got.Err != "" || got.ValidEnd != want.ValidEnd || got.Tail != want.Tail {
		t.Errorf("stopped with err %q, valid end %d, tail %v; want none, %d, %v", got.Err, got.ValidEnd, got.Tail, want.ValidEnd, want.Tail)
	}
	if got.ValidEnd >= cut || len(got.Entries) < 4 {
		t.Fatalf("the scan stopped at %d after %d entries: the truncation at %d was not read across", got.ValidEnd, len(got.Entries), cut)
	}
}
