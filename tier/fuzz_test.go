package tier_test

import (
	"path"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

// FuzzNames: a remote partition directory or segment file name parses or
// fails, and what parses prints back as the same name (a segment's
// offset may be unpadded, as older LocalTieredStorage versions wrote it).
func FuzzNames(f *testing.F) {
	m := sampleMeta()
	f.Add(tier.PartitionDirName(m.ID.TopicIDPartition))
	for ft := tier.FileSegment; ft <= tier.FileProducerSnapshot; ft++ {
		f.Add(tier.SegmentFileName(m.StartOffset, m.ID.ID, ft))
	}
	f.Add("orders-3-")
	f.Add("00000000000000000100-.log")
	f.Fuzz(func(t *testing.T, name string) {
		if tp, err := tier.ParsePartitionDirName(name); err == nil {
			if got := tier.PartitionDirName(tp); got != name {
				t.Fatalf("partition %q parses to %+v, which prints %q", name, tp, got)
			}
		}
		if start, id, ft, err := tier.ParseSegmentFileName(name); err == nil {
			// Both the 20-digit and the unpadded offset parse; the
			// printed name is the padded one.
			again, id2, ft2, err := tier.ParseSegmentFileName(tier.SegmentFileName(start, id, ft))
			if err != nil || again != start || id2 != id || ft2 != ft {
				t.Fatalf("segment %q parses to %d %v %v; printed back: %d %v %v %v", name, start, id, ft, again, id2, ft2, err)
			}
		}
	})
}

// FuzzReadRemote: a remote segment whose .log holds any bytes (a broker
// wrote it, or damage) is discovered and read without a panic or an
// unbounded allocation, and what a read returns is whole, valid entries.
func FuzzReadRemote(f *testing.F) {
	var w record.Builder
	spec := record.NewBatchSpec(0, compress.None)
	good, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: 1, Value: []byte("a")}, {Timestamp: 2, Value: []byte("b")}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, int64(0))
	f.Add(good[:len(good)-3], int64(1))
	f.Add(append(append([]byte(nil), good...), good[:20]...), int64(0))
	f.Add([]byte{}, int64(0))
	f.Fuzz(func(t *testing.T, log []byte, offset int64) {
		m := sampleMeta()
		m.StartOffset = 0
		mem := vfs.NewMem()
		d := tier.NewDir(mem, "/r")
		dir := d.PartitionDir(m.ID.TopicIDPartition)
		if err := mem.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[tier.FileType][]byte{
			tier.FileSegment: log, tier.FileOffsetIndex: nil, tier.FileTimeIndex: nil,
			tier.FileProducerSnapshot: nil, tier.FileLeaderEpochCheckpoint: []byte("0\n1\n0 0\n"),
		}
		for ft, b := range files {
			if err := vfs.WriteFile(mem, path.Join(dir, tier.SegmentFileName(0, m.ID.ID, ft)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ms, err := d.Discover(m.ID.TopicIDPartition)
		if err != nil {
			return // refused
		}
		for _, sm := range ms {
			b, err := tier.ReadSegment(d, sm, offset, 1<<10)
			if err != nil {
				return
			}
			sc := record.NewScanner(b, "r", 0)
			for sc.Next() {
			}
			if sc.ValidBytes() != len(b) {
				t.Fatalf("ReadSegment returned %d bytes, of which %d are whole entries", len(b), sc.ValidBytes())
			}
		}
	})
}
