package segment_test

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// recovered is what a recovery of one segment left: its result and the
// bytes of the segment's files.
type recovered struct {
	Res                   string
	Log, Index, TimeIndex []byte
	Entries               int
	FirstBatch, LastBatch int64
}

// recoverIn writes data as the .log of partition p-0 under dir of fsys,
// recovers it, and returns what the recovery left.
func recoverIn(t *testing.T, fsys vfs.FS, dir string, data []byte, cfg segment.Config) recovered {
	t.Helper()
	pdir := path.Join(dir, "p-0")
	if err := fsys.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vfs.WriteFile(fsys, path.Join(pdir, "00000000000000000000.log"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := segment.Open(fsys, pdir, 0, cfg, segment.OpenOptions{Clock: &fakeClock{}})
	if err != nil {
		t.Fatal(err)
	}
	var got recovered
	got.FirstBatch, got.LastBatch = -1, -1
	res, err := s.Recover(segment.RecoverHooks{OnBatch: func(e *record.Entry) ([]index.AbortedTxn, error) {
		// The hook reads the entry's bytes, as the log's producer-state
		// rebuild does.
		if got.FirstBatch < 0 {
			got.FirstBatch = e.Position
		}
		got.LastBatch = e.Position
		got.Entries++
		_ = e.Batch.ComputeCRC()
		return nil, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	reason := ""
	if res.Reason != nil {
		reason = strings.ReplaceAll(res.Reason.Error(), dir, "DIR")
	}
	got.Res = fmt.Sprintf("valid %d truncated %d entries %d next %d tail %v reason %s", res.ValidBytes, res.Truncated, res.Entries, res.NextOffset, res.Tail, reason)
	read := func(name string) []byte {
		b, err := vfs.ReadFile(fsys, path.Join(pdir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	got.Log, got.Index, got.TimeIndex = read("00000000000000000000.log"), read("00000000000000000000.index"), read("00000000000000000000.timeindex")
	return got
}

// TestRecoverMappedMatchesMem recovers the same damaged logs in memory
// (read with ReadAt) and on the OS (read through one mapping of the
// .log, both passes): the results and the files left are the same.
func TestRecoverMappedMatchesMem(t *testing.T) {
	cfg := segment.Config{IndexIntervalBytes: 1024, MaxIndexSize: 1 << 20}
	src := newMem()
	s, err := segment.Create(src, "p-0", 0, cfg, &fakeClock{})
	if err != nil {
		t.Fatal(err)
	}
	pos := appendBatches(t, s, 0, 120, 5000)
	size := s.Size()
	s.Close()
	clean, err := vfs.ReadFile(src, "p-0/00000000000000000000.log")
	if err != nil {
		t.Fatal(err)
	}
	damaged := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), clean...)) }
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"clean", clean},
		{"torn_last_batch", clean[:size-7]},
		{"zero_tail", damaged(func(b []byte) []byte { return append(b, make([]byte, 70000)...) })},
		{"bitflip_in_batch_60", damaged(func(b []byte) []byte { b[pos[60]+100] ^= 0x10; return b })},
		{"damaged_base_offset", damaged(func(b []byte) []byte { copy(b[pos[70]:], format.AppendInt64(nil, 695)); return b })},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := recoverIn(t, vfs.NewMem(), "/memdir", tt.data, cfg)
			got := recoverIn(t, vfs.OS(), filepath.ToSlash(t.TempDir()), tt.data, cfg)
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("recovery on the OS differs from recovery in memory (-mem +os):\n%s", d)
			}
		})
	}
}
