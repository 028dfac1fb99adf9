package resync_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/internal/maprange"
	"github.com/segkit/segkit/internal/resync"
	"github.com/segkit/segkit/record"
)

// TestWalkMappedFileShrinks truncates a file while it is walked, from the
// entry callback: past the entries still to read (the scanner faults and
// reads on to the new end), or before the entry the callback reads (its
// read faults, and Walk returns an I/O error). Neither crashes.
func TestWalkMappedFileShrinks(t *testing.T) {
	data, pos := testLog(t, 300)
	if len(data) < maprange.MinSize {
		t.Fatalf("%d bytes: fewer than maprange.MinSize would be read, not mapped", len(data))
	}
	for _, tt := range []struct {
		name   string
		cut    int64
		wantIO bool
	}{
		{"past_the_entries_read", 256 << 10, false},
		{"before_the_entry_read", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "seg.log")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var w resync.Walker
			n := 0
			var last int64
			err = w.Walk(f, int64(len(data)), path, func(e *record.Entry) error {
				if n++; n == 3 {
					if err := os.Truncate(path, tt.cut); err != nil {
						t.Fatal(err)
					}
				}
				last = e.Position
				_ = e.Batch.ComputeCRC()
				return nil
			}, func(resync.Damage) error { return nil })
			var pe *fs.PathError
			isIO := errors.As(err, &pe) && pe.Op == "read" && pe.Path == path && strings.Contains(err.Error(), "shrank")
			if tt.wantIO && !isIO {
				t.Fatalf("Walk = %v, want the read error of a file that shrank", err)
			}
			// Past the entries read, the walk reads on to the new end; what
			// it finds after that (looking for the next entry within the old
			// size) is a read error of its own.
			entry := pos[1] - pos[0]
			if !tt.wantIO && (last >= tt.cut || last < tt.cut-2*entry) {
				t.Fatalf("the last entry walked is at %d; want the last one before the cut at %d (Walk = %v)", last, tt.cut, err)
			}
		})
	}
}
