package inspect_test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/vfs"
)

// realNow is the time the real-data tests judge timestamps at: a fixed
// date, so that the warnings do not change as the calendar moves.
const realNow = 1_798_761_600_000 // 2027-01-01T00:00:00Z

// TestVerifyRealData verifies every partition of every set written by a
// real broker: zero errors. Warnings are allowed (the active segments'
// preallocated indexes could not be collected, the files' mtimes are
// those of the copy) and are logged.
func TestVerifyRealData(t *testing.T) {
	for _, dir := range realdata.PartitionDirs(t) {
		t.Run(realdata.Rel(t, dir), func(t *testing.T) {
			rep, err := inspect.Verify(vfs.OS(), filepath.ToSlash(dir), inspect.Options{Now: realNow})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Partitions) != 1 {
				t.Fatalf("%d partitions, want 1", len(rep.Partitions))
			}
			kinds := map[string]int{}
			for _, p := range rep.Problems {
				if p.Level == finding.Error {
					t.Errorf("%s", p)
				}
				kinds[p.Level.String()+" "+p.Kind]++
			}
			if !rep.OK {
				t.Errorf("OK is false")
			}
			t.Logf("%d segments, %d batches, %d records; %v", rep.Segments, rep.Batches, rep.Records, kinds)
			if testing.Verbose() {
				for _, p := range rep.Problems {
					t.Logf("  %s", p)
				}
			}
		})
	}
}

// TestVerifyRealLogDirs verifies each real log directory as a whole (the
// directory that holds the partitions and the checkpoints), and checks that
// nothing in it changed: names, sizes, modes, mtimes and contents.
func TestVerifyRealLogDirs(t *testing.T) {
	for _, logDir := range realdata.LogDirs(t) {
		t.Run(realdata.Rel(t, logDir), func(t *testing.T) {
			before := treeState(t, logDir)
			rep, err := inspect.Verify(vfs.OS(), filepath.ToSlash(logDir), inspect.Options{Now: realNow})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK || len(rep.Partitions) == 0 {
				t.Errorf("OK %v with %d partitions, %d errors", rep.OK, len(rep.Partitions), rep.Count(finding.Error))
			}
			if after := treeState(t, logDir); after != before {
				t.Errorf("the directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// treeState describes every file under root: name, size, mode, mtime and
// content hash.
func treeState(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h := ""
		if !d.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h = fmt.Sprintf("%x", sha256.Sum256(data))
		}
		fmt.Fprintf(&b, "%s %d %v %d %s\n", p, fi.Size(), fi.Mode(), fi.ModTime().UnixNano(), h)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
