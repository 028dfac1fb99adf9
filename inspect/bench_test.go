package inspect_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/internal/benchdata"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// benchPartition builds a partition of about size bytes of batches of
// 1000 100-byte records in a Mem: segments of 8 MiB, closed cleanly.
func benchPartition(b *testing.B, codec compress.Codec, size int64) (*vfs.Mem, int64) {
	b.Helper()
	c := &clock{t: t0}
	m := vfs.MemOptions{Clock: func() time.Time { return c.t }}.New()
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{"segment.bytes": "8388608"})
	if err != nil {
		b.Fatal(err)
	}
	l, err := kafkalog.Open(m, "/logs/bench-0", cfg, kafkalog.Options{Clock: c})
	if err != nil {
		b.Fatal(err)
	}
	recs := benchdata.Records(benchdata.Shapes[1])
	for i := range recs {
		recs[i].Timestamp = t0.UnixMilli()
	}
	var w record.Builder
	spec := record.NewBatchSpec(0, codec)
	batch, err := w.AppendBatch(nil, &spec, recs)
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for total < size {
		if _, err := l.Append(bytes.Clone(batch), 0); err != nil {
			b.Fatal(err)
		}
		total += int64(len(batch))
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	return m, total
}

// BenchmarkVerify verifies a 32 MiB partition (4 segments) and reports
// the .log bytes checked per second: every batch's CRC and records
// (decompressed), every index entry, the snapshots and checkpoints.
func BenchmarkVerify(b *testing.B) {
	for _, codec := range []compress.Codec{compress.None, compress.Zstd} {
		b.Run(fmt.Sprintf("codec=%v", codec), func(b *testing.B) {
			m, total := benchPartition(b, codec, 32<<20)
			b.SetBytes(total)
			b.ReportAllocs()
			for b.Loop() {
				rep, err := inspect.Verify(m, "/logs/bench-0", inspect.Options{Now: t0.UnixMilli()})
				if err != nil || !rep.OK {
					b.Fatalf("%v\n%s", err, dump(rep))
				}
			}
		})
	}
}

// BenchmarkFindEntry measures resynchronisation over 1 MiB of damage:
// three bytes in four zero, the rest random, which makes many candidate
// headers look plausible.
func BenchmarkFindEntry(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	data := make([]byte, 1<<20)
	for j := range data {
		if rng.IntN(4) == 0 {
			data[j] = byte(rng.Uint32())
		}
	}
	r := bytes.NewReader(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := record.FindEntry(r, int64(len(data)), 0); ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
