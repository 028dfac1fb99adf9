package segment_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// Where files are not mapped, a ReaderScanner reading with ReadAt sees a
// small file from its buffer, and the shrink below goes unseen: this test
// is of the mapping.

// TestRecoverMappedFileShrinks truncates the .log while it is recovered
// through its mapping, from the recovery's own hook: past the entries
// still to read (the scanner's reads fault, and it reads on to the new
// end), or before the entry the hook is reading (the hook's read faults).
// Either way Recover returns an I/O error, without panicking or cutting
// the .log.
func TestRecoverMappedFileShrinks(t *testing.T) {
	for _, cut := range []int64{64 << 10, 0} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			cfg := segment.Config{IndexIntervalBytes: 1024, MaxIndexSize: 1 << 20}
			dir := filepath.ToSlash(t.TempDir())
			pdir := path.Join(dir, "p-0")
			fsys := vfs.OS()
			if err := fsys.MkdirAll(pdir, 0o755); err != nil {
				t.Fatal(err)
			}
			s, err := segment.Create(fsys, pdir, 0, cfg, &fakeClock{})
			if err != nil {
				t.Fatal(err)
			}
			appendBatches(t, s, 0, 200, 5000)
			s.Close()
			logPath := path.Join(pdir, "00000000000000000000.log")
			s, err = segment.Open(fsys, pdir, 0, cfg, segment.OpenOptions{Clock: &fakeClock{}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			n := 0
			_, err = s.Recover(segment.RecoverHooks{OnBatch: func(e *record.Entry) ([]index.AbortedTxn, error) {
				if n++; n == 3 {
					if err := os.Truncate(filepath.FromSlash(logPath), cut); err != nil {
						t.Fatal(err)
					}
				}
				_ = e.Batch.ComputeCRC()
				return nil, nil
			}})
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Op != "read" || pe.Path != logPath || !strings.Contains(err.Error(), "shrank") {
				t.Fatalf("Recover = %v, want the read error of a file that shrank", err)
			}
			if fi, err := os.Stat(filepath.FromSlash(logPath)); err != nil || fi.Size() != cut {
				t.Fatalf("the .log is %v bytes (%v), want %d: recovery cut it", fi.Size(), err, cut)
			}
		})
	}
}
