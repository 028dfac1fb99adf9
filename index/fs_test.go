package index_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/vfs"
)

// filesystems returns the FSes every life-cycle test runs on: the
// in-memory one and the real disk (a temporary directory; under GOOS=js,
// node's filesystem).
func filesystems(t *testing.T) map[string]vfs.FS {
	return map[string]vfs.FS{"mem": vfs.NewMem(), "os": vfs.Sub(vfs.OS(), t.TempDir())}
}

// TestLifeCycleOnEveryFS runs a segment's index life on each FS and
// compares the bytes left on disk: create, append, crash-reopen (padding
// found and dropped), truncate, trim, reopen, rename, delete.
func TestLifeCycleOnEveryFS(t *testing.T) {
	results := map[string][]byte{}
	for name, fsys := range filesystems(t) {
		t.Run(name, func(t *testing.T) {
			x := openOffset(t, fsys, "00000000000000000100.index", 100, 256, true)
			for i := range 10 {
				if err := x.Append(int64(100+5*(i+1)), int32(4200*(i+1))); err != nil {
					t.Fatal(err)
				}
			}
			if err := x.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := x.Close(); err != nil { // a crash: not trimmed
				t.Fatal(err)
			}
			x = openOffset(t, fsys, "00000000000000000100.index", 100, 256, true)
			if p := x.Padding(); !p.Untrimmed || p.ValidEntries != 10 || p.Entries != 32 {
				t.Fatalf("padding %+v", p)
			}
			if _, err := x.DiscardPadding(); err != nil {
				t.Fatal(err)
			}
			if err := x.TruncateTo(130); err != nil {
				t.Fatal(err)
			}
			if err := x.TrimToValidSize(); err != nil {
				t.Fatal(err)
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			y := openOffset(t, fsys, "00000000000000000100.index", 100, -1, false)
			want := []index.Entry{{105, 4200}, {110, 8400}, {115, 12600}, {120, 16800}, {125, 21000}}
			if got := y.AppendAll(nil); !slices.Equal(got, want) || y.SanityCheck() != nil {
				t.Fatalf("entries %v", got)
			}
			results[name] = readAll(t, fsys, "00000000000000000100.index")
			w := openOffset(t, fsys, "00000000000000000100.index", 100, 256, true)
			if err := w.Rename("00000000000000000100.index.deleted"); err != nil {
				t.Fatal(err)
			}
			if err := w.Delete(); err != nil {
				t.Fatal(err)
			}
			if _, err := fsys.Stat("00000000000000000100.index.deleted"); !isNotExist(err) {
				t.Fatalf("not deleted: %v", err)
			}
		})
	}
	if !bytes.Equal(results["mem"], results["os"]) || len(results["mem"]) != 40 {
		t.Fatalf("the FSes disagree: %x vs %x", results["mem"], results["os"])
	}
}
