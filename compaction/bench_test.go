package compaction_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// writeBench writes a partition of batches of 16 records (100-byte
// values) over keys keys, a tenth of them tombstones, in segments of
// 200 batches, then an active segment: bytes is its size.
func writeBench(tb testing.TB, fsys vfs.FS, dir string, batches, keys int, codec compress.Codec) (bytes int64) {
	return writeBenchSegments(tb, fsys, dir, batches, 200, keys, codec)
}

// writeBenchSegments is writeBench with segments of perSegment batches.
func writeBenchSegments(tb testing.TB, fsys vfs.FS, dir string, batches, perSegment, keys int, codec compress.Codec) (bytes int64) {
	p := newLog(tb, fsys, dir, nil)
	var b record.Builder
	recs := make([]record.Record, 16)
	val := make([]byte, 100)
	for i := range val {
		val[i] = byte('a' + i%26)
	}
	n := 0
	for i := range batches {
		for j := range recs {
			recs[j] = record.Record{Timestamp: t0 + int64(n), Key: fmt.Appendf(nil, "key-%07d", (n*7919)%keys), Value: val}
			if n%10 == 9 {
				recs[j].Value = nil
			}
			n++
		}
		spec := record.NewBatchSpec(0, codec)
		buf, err := b.AppendBatch(nil, &spec, recs)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := p.l.Append(buf, 0); err != nil {
			tb.Fatal(err)
		}
		bytes += int64(len(buf))
		if i%perSegment == perSegment-1 {
			p.roll()
		}
	}
	p.roll()
	p.close()
	return bytes
}

// BenchmarkClean cleans partitions of about 8 MiB in memory: every
// record read and decided, the survivors rewritten (verbatim where
// possible, rebuilt otherwise), the indexes built and the segments
// swapped. SetBytes is the size of the dirty section.
func BenchmarkClean(b *testing.B) {
	for _, c := range []struct {
		codec compress.Codec
		keys  int
	}{{compress.None, 1000}, {compress.None, 100000}, {compress.Zstd, 1000}, {compress.LZ4, 100000}} {
		b.Run(fmt.Sprintf("codec=%v/keys=%d", c.codec, c.keys), func(b *testing.B) {
			cfg := testConfig(b, nil)
			var size int64
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				fsys := vfs.NewMem()
				size = writeBench(b, fsys, "/kafka/bench-0", 4000, c.keys, c.codec)
				b.StartTimer()
				if _, err := compaction.Clean(fsys, "/kafka/bench-0", cfg, compaction.Options{Clock: clock{t0 + 7*day}}); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(size)
		})
	}
}

// BenchmarkPlan is the dry run of the same: everything but the writes.
func BenchmarkPlan(b *testing.B) {
	fsys := vfs.NewMem()
	size := writeBench(b, fsys, "/kafka/bench-0", 4000, 1000, compress.None)
	cfg := testConfig(b, nil)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compaction.Plan(fsys, "/kafka/bench-0", cfg, compaction.Options{Clock: clock{t0 + 7*day}}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPlanAllocsPerRecord checks that deciding records allocates nothing
// per record: a dry run over four times the records (in as many segments,
// over the same keys) allocates no more than a few extra times.
func TestPlanAllocsPerRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	allocs := func(batches int) float64 {
		fsys := vfs.NewMem()
		writeBenchSegments(t, fsys, "/kafka/a-0", batches, batches/4, 500, compress.None)
		cfg := testConfig(t, nil)
		return testing.AllocsPerRun(3, func() {
			if _, err := compaction.Plan(fsys, "/kafka/a-0", cfg, compaction.Options{Clock: clock{t0 + 7*day}}); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(400), allocs(1600) // 6400 and 25600 records, 4 segments each
	perRecord := (large - small) / 19200
	t.Logf("%.0f allocations for 6400 records, %.0f for 25600: %.4f per extra record", small, large, perRecord)
	if perRecord > 0.002 {
		t.Fatalf("%.4f allocations per record", perRecord)
	}
}

// TestCleanAllocsPerRecord checks that a clean allocates nothing per
// record: cleaning twice the records (in as many segments, over the same
// keys, with every batch rewritten) allocates no more than a few extra
// times. The index interval is large, so that the indexes of the cleaned
// segments take one entry each: an index append costs an allocation (the
// engine's index files publish a snapshot per entry), once per
// index.interval.bytes of output, not per record.
func TestCleanAllocsPerRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	cfg := testConfig(t, map[string]string{"index.interval.bytes": "104857600"})
	allocs := func(batches int) (float64, int) {
		var n float64
		for round := range 2 { // the first warms up what is allocated once per process
			fsys := vfs.NewMem()
			writeBenchSegments(t, fsys, "/kafka/a-0", batches, batches/4, 500, compress.None)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			rep, err := compaction.Clean(fsys, "/kafka/a-0", cfg, compaction.Options{Clock: clock{t0 + 7*day}})
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Stats.MessagesRead != int64(16*batches) || rep.Removed.BatchesRewritten == 0 {
				t.Fatalf("read %d records, rewrote %d batches", rep.Stats.MessagesRead, rep.Removed.BatchesRewritten)
			}
			if round == 1 {
				n = float64(after.Mallocs - before.Mallocs)
			}
		}
		return n, 16 * batches
	}
	small, ns := allocs(400)
	large, nl := allocs(1600)
	perRecord := (large - small) / float64(nl-ns)
	t.Logf("%.0f allocations for %d records, %.0f for %d: %.4f per extra record", small, ns, large, nl, perRecord)
	if perRecord > 0.002 {
		t.Fatalf("%.4f allocations per record", perRecord)
	}
}
