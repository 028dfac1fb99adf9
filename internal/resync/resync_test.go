package resync_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/maprange"
	"github.com/segkit/segkit/internal/resync"
	"github.com/segkit/segkit/record"
)

// testLog is n batches of 20 records with 200-byte values.
func testLog(t *testing.T, n int) (data []byte, pos []int64) {
	t.Helper()
	for i := 0; i < n; i++ {
		recs := make([]record.Record, 20)
		for j := range recs {
			recs[j] = record.Record{Timestamp: int64(1000 + i*20 + j), Value: bytes.Repeat([]byte{byte(i + j)}, 200)}
		}
		spec := record.NewBatchSpec(int64(i*20), compress.None)
		pos = append(pos, int64(len(data)))
		var err error
		if data, err = record.AppendBatch(data, &spec, recs); err != nil {
			t.Fatal(err)
		}
	}
	return data, pos
}

// walked is what a walk saw.
type walked struct {
	Entries []int64
	Damage  []string
}

func walk(t *testing.T, w *resync.Walker, r io.ReaderAt, size int64) (walked, error) {
	var got walked
	err := w.Walk(r, size, "seg.log", func(e *record.Entry) error {
		got.Entries = append(got.Entries, e.Position)
		_ = e.Batch.ComputeCRC() // the entry's bytes, as verify reads them
		return nil
	}, func(d resync.Damage) error {
		got.Damage = append(got.Damage, fmt.Sprintf("%d-%d %v tail %v resynced %v zeros %d/%v", d.Start, d.End, d.Err, d.Tail, d.Resynced, d.ZeroRun, d.Zeros))
		return nil
	})
	return got, err
}

// TestWalkMappedMatchesReader walks damaged logs as OS files (read through
// mappings) and from memory: the same entries and damage, with one Walker
// reused across files of both kinds.
func TestWalkMappedMatchesReader(t *testing.T) {
	clean, pos := testLog(t, 300)
	if len(clean)-9 < maprange.MinSize {
		t.Fatalf("%d bytes: fewer than maprange.MinSize would be read, not mapped", len(clean))
	}
	corrupt := bytes.Clone(clean)
	corrupt[pos[100]+300] ^= 1
	zeroed := bytes.Clone(clean)
	clear(zeroed[pos[150]:pos[160]])
	var w resync.Walker
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"clean", clean},
		{"corrupt", corrupt},
		{"zeroed", zeroed},
		{"torn", clean[:len(clean)-9]},
		{"zero_tail", append(bytes.Clone(clean), make([]byte, 70000)...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "seg.log")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want, err := walk(t, &w, bytes.NewReader(tt.data), int64(len(tt.data)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := walk(t, &w, f, int64(len(tt.data)))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("walk of the OS file differs (-memory +file):\n%s", d)
			}
			if len(want.Entries) < 100 {
				t.Fatalf("only %d entries walked", len(want.Entries))
			}
		})
	}
}
