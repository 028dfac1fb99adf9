package tier_test

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

// uploaded builds a tiered log whose closed segments are all copied
// (two leader epochs), and returns the remote's metadata.
func uploaded(t *testing.T) (vfs.FS, kafkalog.Config, *clock, []tier.SegmentMetadata) {
	t.Helper()
	fsys := vfs.NewMem()
	c := newClock(t0)
	cfg := tieredConfig(t, 4096, map[string]string{"local.retention.ms": "60000"})
	fill(t, fsys, cfg, c, 400)
	l, tr, _ := mustOpen(t, fsys, cfg, c)
	if _, err := tr.Upload(); err != nil {
		t.Fatal(err)
	}
	c.advance(120_000)
	if _, err := tr.DeleteLocal(); err != nil {
		t.Fatal(err)
	}
	meta := tr.Metadata()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if len(meta) < 4 {
		t.Fatalf("only %d segments copied", len(meta))
	}
	return fsys, cfg, c, meta
}

func TestDiscoverMatchesMetadata(t *testing.T) {
	fsys, cfg, c, meta := uploaded(t)
	d := tier.NewDir(fsys, remoteDir)
	tp := meta[0].ID.TopicIDPartition
	got, err := d.Discover(tp)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(meta) {
		t.Fatalf("discovered %d segments, the metadata has %d", len(got), len(meta))
	}
	epochs := 0
	for i := range got {
		if got[i].BrokerID != -1 {
			t.Errorf("segment %d: broker id %d, want -1 (unknown)", got[i].StartOffset, got[i].BrokerID)
		}
		x, y := got[i], meta[i]
		x.EventTimestampMs, y.EventTimestampMs, x.BrokerID, y.BrokerID = 0, 0, 0, 0
		if fmt.Sprint(x) != fmt.Sprint(y) {
			t.Errorf("segment %d: discovered\n  %+v\nrecorded\n  %+v", y.StartOffset, got[i], meta[i])
		}
		epochs += len(x.SegmentLeaderEpochs)
	}
	if epochs <= len(got) {
		t.Errorf("no segment holds two leader epochs (%d entries in %d segments): the test lost its point", epochs, len(got))
	}

	// A broker's remote: the files and no segkit metadata. Open over it,
	// read-only, serves everything from offset 0.
	if err := fsys.RemoveAll(path.Join(remoteDir, tier.MetadataDirName)); err != nil {
		t.Fatal(err)
	}
	if again, err := d.Discover(tp); err != nil || len(again) != len(got) {
		t.Fatalf("after the metadata went: %d segments, %v", len(again), err)
	}
	l, err := kafkalog.Open(fsys, logDir, cfg, kafkalog.Options{Clock: c, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ro := tier.ReadOnly(d, got)
	tr, rep, err := tier.Open(fsys, l, ro, tier.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unknown)+len(rep.Missing)+len(rep.CopiesAbandoned)+len(rep.DeletesFinished)+len(rep.TempRemoved) != 0 {
		t.Errorf("start-up over a discovered remote: %+v", rep)
	}
	if tr.LogStartOffset() != 0 || tr.LocalLogStartOffset() != meta[len(meta)-1].EndOffset+1 {
		t.Errorf("log start %d, local %d; want 0, %d", tr.LogStartOffset(), tr.LocalLogStartOffset(), meta[len(meta)-1].EndOffset+1)
	}
	total, remote, err := collect(t, tr, 700)
	if err != nil || total != 400 || remote != meta[len(meta)-1].EndOffset+1 {
		t.Errorf("read %d records (%d from the remote): %v", total, remote, err)
	}
	// Every change is refused.
	m := got[0]
	for name, err := range map[string]error{
		"copy":   ro.CopyLogSegmentData(m, tier.SegmentData{}),
		"delete": ro.DeleteLogSegmentData(m),
		"put":    ro.PutSegmentMetadata(m),
		"remove": ro.(tier.Auditor).RemoveFile(tp, "x"),
	} {
		if !errors.Is(err, tier.ErrReadOnly) {
			t.Errorf("%s on a read-only remote: %v", name, err)
		}
	}
	if _, err := tr.DeleteRemote(); err != nil {
		t.Errorf("no retention.ms: nothing to delete, got %v", err)
	}
}

func TestDiscoverRefusesToGuess(t *testing.T) {
	fsys, _, _, meta := uploaded(t)
	d := tier.NewDir(fsys, remoteDir)
	tp := meta[0].ID.TopicIDPartition
	pd := d.PartitionDir(tp)
	m := meta[1]
	file := func(ft tier.FileType) string { return d.FilePath(m, ft) }
	read := func(p string) []byte {
		b, err := vfs.ReadFile(fsys, p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name string
		do   func()
		want string
		is   error
	}{
		{"stray file", func() { vfs.WriteFile(fsys, path.Join(pd, "notes.txt"), []byte("x"), 0o644) }, "not a remote segment file", nil},
		{"unfinished copy", func() { fsys.Remove(file(tier.FileProducerSnapshot)) }, "has no .snapshot file", nil},
		{"overlap", func() {
			other := m
			other.ID.ID[0] ^= 1
			for ft := tier.FileSegment; ft <= tier.FileProducerSnapshot; ft++ {
				if b, err := vfs.ReadFile(fsys, file(ft)); err == nil {
					vfs.WriteFile(fsys, d.FilePath(other, ft), b, 0o644)
				}
			}
		}, "overlap", nil},
		{"torn log", func() {
			b := read(file(tier.FileSegment))
			vfs.WriteFile(fsys, file(tier.FileSegment), b[:len(b)-3], 0o644)
		}, "", format.ErrTruncated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Each case starts from the upload's files.
			saved := map[string][]byte{}
			infos, _ := vfs.ReadDir(fsys, pd)
			for _, fi := range infos {
				saved[fi.Name()] = read(path.Join(pd, fi.Name()))
			}
			defer func() {
				fsys.RemoveAll(pd)
				fsys.MkdirAll(pd, 0o755)
				for n, b := range saved {
					vfs.WriteFile(fsys, path.Join(pd, n), b, 0o644)
				}
			}()
			tc.do()
			got, err := d.Discover(tp)
			if err == nil || tc.want != "" && !strings.Contains(err.Error(), tc.want) || tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("Discover: %d segments, error %v; want an error (%q %v)", len(got), err, tc.want, tc.is)
			}
		})
	}
	// Restored, it reads again; a partition without a directory has none.
	if got, err := d.Discover(tp); err != nil || len(got) != len(meta) {
		t.Errorf("restored: %d segments, %v", len(got), err)
	}
	other := tp
	other.Partition = 7
	if got, err := d.Discover(other); err != nil || got != nil {
		t.Errorf("no directory: %v %v", got, err)
	}
	if !slices.IsSortedFunc(meta, func(a, b tier.SegmentMetadata) int { return int(a.StartOffset - b.StartOffset) }) {
		t.Error("metadata unsorted")
	}
}
