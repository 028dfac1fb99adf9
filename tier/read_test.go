package tier_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

// TestRemoteReadEqualsLocalRead reads every offset with several maxBytes
// before the local deletion (from local disk) and after it (from the
// remote): the bytes are the same.
func TestRemoteReadEqualsLocalRead(t *testing.T) {
	fsys := vfs.NewMem()
	c := newClock(t0)
	cfg := tieredConfig(t, 4096, map[string]string{"local.retention.ms": "1000"})
	fill(t, fsys, cfg, c, 300)
	l, tr, _ := mustOpen(t, fsys, cfg, c)
	defer l.Close()
	sizes := []int{1, 200, 1000, 5000}
	type key struct {
		off int64
		max int
	}
	before := map[key][]byte{}
	for off := int64(0); off < 300; off++ {
		for _, mb := range sizes {
			res, err := l.Read(off, mb, nil, kafkalog.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			before[key{off, mb}] = bytes.Clone(res.Records)
		}
	}
	if _, err := tr.Upload(); err != nil {
		t.Fatal(err)
	}
	c.advance(10_000)
	if n, err := tr.DeleteLocal(); err != nil || n == 0 {
		t.Fatalf("local deletion: %d %v", n, err)
	}
	local := tr.LocalLogStartOffset()
	remote := 0
	for k, want := range before {
		res, err := tr.Read(k.off, k.max)
		if err != nil {
			t.Fatalf("read %d/%d: %v", k.off, k.max, err)
		}
		if res.Remote != (k.off < local) {
			t.Fatalf("read %d: remote %v with local start %d", k.off, res.Remote, local)
		}
		if res.Remote {
			remote++
		}
		// A local read runs across segment ends only when the segment
		// ends; both stop at the segment's end, so the bytes match.
		if !bytes.Equal(res.Records, want) {
			t.Fatalf("read %d/%d (remote %v): %d bytes, local read gave %d", k.off, k.max, res.Remote, len(res.Records), len(want))
		}
	}
	if remote == 0 {
		t.Fatal("no read went to the remote")
	}
}

// TestRemoteReadLargeEntries reads entries larger than the read path's
// 64 KiB window.
func TestRemoteReadLargeEntries(t *testing.T) {
	fsys := vfs.NewMem()
	c := newClock(t0)
	cfg := tieredConfig(t, 300_000, map[string]string{"local.retention.ms": "1000", "max.message.bytes": "2000000"})
	l, err := kafkalog.Open(fsys, logDir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkpoint.WritePartitionMetadata(fsys, logDir, testTopicID)
	var w record.Builder
	big := func(i int) []byte { return []byte(strings.Repeat(string(rune('a'+i%26)), 70_000+i*1000)) }
	for i := range 12 {
		spec := record.NewBatchSpec(0, compress.None)
		b, _ := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: c.millis(), Value: big(i)}})
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	tr, _, err := tier.Open(fsys, l, tier.NewDir(fsys, remoteDir), tier.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	if up, err := tr.Upload(); err != nil || len(up.Copied) == 0 {
		t.Fatalf("upload %v", err)
	}
	c.advance(10_000)
	if _, err := tr.DeleteLocal(); err != nil {
		t.Fatal(err)
	}
	if tr.LocalLogStartOffset() < 3 {
		t.Fatalf("local start %d", tr.LocalLogStartOffset())
	}
	for off := int64(0); off < tr.LocalLogStartOffset(); off++ {
		res, err := tr.Read(off, 10)
		if err != nil || !res.Remote {
			t.Fatalf("read %d: %v", off, err)
		}
		s := record.NewScanner(res.Records, "", 0)
		var it record.EntryIterator
		var r record.Record
		if !s.Next() {
			t.Fatalf("read %d: no entry (%v)", off, s.Err())
		}
		it.Reset(s.Entry())
		if !it.Next(&r) || r.Offset != off || !bytes.Equal(r.Value, big(int(off))) {
			t.Fatalf("read %d: record %d of %d bytes", off, r.Offset, len(r.Value))
		}
	}
}

// TestOpenTransactionHoldsCopy: a transaction still open keeps the last
// stable offset at its first offset, and no segment past it is copied.
func TestOpenTransactionHoldsCopy(t *testing.T) {
	fsys := vfs.NewMem()
	c := newClock(t0)
	cfg := tieredConfig(t, 4096, nil)
	fill(t, fsys, cfg, c, 100)
	l, err := kafkalog.Open(fsys, logDir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	txStart := l.LogEndOffset()
	var w record.Builder
	for i := range 60 {
		spec := record.NewBatchSpec(0, compress.None)
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence, spec.Transactional = 7, 0, int32(i), true
		b, _ := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: c.millis(), Value: value(txStart + int64(i))}})
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.LastStableOffset(); got != txStart {
		t.Fatalf("last stable offset %d, want %d", got, txStart)
	}
	tr, _, err := tier.Open(fsys, l, tier.NewDir(fsys, remoteDir), tier.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	up, err := tr.Upload()
	if err != nil {
		t.Fatal(err)
	}
	if len(up.Copied) == 0 {
		t.Fatal("nothing copied")
	}
	for _, m := range up.Copied {
		if m.EndOffset+1 > txStart {
			t.Errorf("segment %d..%d copied past the last stable offset %d", m.StartOffset, m.EndOffset, txStart)
		}
	}
	if n := len(l.Segments()) - 1; len(up.Copied) >= n {
		t.Errorf("copied %d of %d closed segments: the open transaction held none back", len(up.Copied), n)
	}
}

// TestEvents: OnEvent sees every durable step in order.
func TestEvents(t *testing.T) {
	fsys := vfs.NewMem()
	c := newClock(t0)
	cfg := tieredConfig(t, 4096, map[string]string{"local.retention.ms": "1000"})
	fill(t, fsys, cfg, c, 100)
	l, err := kafkalog.Open(fsys, logDir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var got []tier.EventKind
	tr, _, err := tier.Open(fsys, l, tier.NewDir(fsys, remoteDir), tier.Options{Clock: c, OnEvent: func(e tier.Event) { got = append(got, e.Kind) }})
	if err != nil {
		t.Fatal(err)
	}
	up, _ := tr.Upload()
	c.advance(5000)
	tr.DeleteLocal()
	var want []tier.EventKind
	for range up.Copied {
		want = append(want, tier.EventCopyStarted, tier.EventCopyFinished)
	}
	want = append(want, tier.EventLocalDelete)
	if len(up.Copied) == 0 || !equalKinds(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

func equalKinds(a, b []tier.EventKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
