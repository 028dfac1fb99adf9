package compaction_test

import (
	"fmt"
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
		if i%200 == 199 {
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
// per record: a dry run over twice the records (the same keys) allocates
// no more than a few extra times, per segment, not per record.
func TestPlanAllocsPerRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	allocs := func(batches int) float64 {
		fsys := vfs.NewMem()
		writeBench(t, fsys, "/kafka/a-0", batches, 500, compress.None)
		cfg := testConfig(t, nil)
		return testing.AllocsPerRun(3, func() {
			if _, err := compaction.Plan(fsys, "/kafka/a-0", cfg, compaction.Options{Clock: clock{t0 + 7*day}}); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(400), allocs(800) // 6400 and 12800 records, 2 and 4 segments
	perRecord := (large - small) / 6400
	t.Logf("%.0f allocations for 6400 records, %.0f for 12800: %.3f per extra record", small, large, perRecord)
	if perRecord > 0.05 {
		t.Fatalf("%.3f allocations per record", perRecord)
	}
}
