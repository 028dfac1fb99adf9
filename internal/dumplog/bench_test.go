package dumplog_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/benchdata"
	"github.com/segkit/segkit/internal/dumplog"
	"github.com/segkit/segkit/record"
)

// benchLog builds a segment of every kind of entry a dump describes: v2
// batches (uncompressed with headers, zstd-compressed, a transaction
// marker) and legacy v1 and v0 messages and gzip wrappers.
func benchLog(b *testing.B) []byte {
	b.Helper()
	var w record.Builder
	var log []byte
	var err error
	off := int64(0)
	for _, c := range []compress.Codec{compress.None, compress.Zstd} {
		recs := benchdata.Records(benchdata.Shapes[1])
		for i := range recs {
			recs[i].Headers = []record.Header{{Key: []byte("trace"), Value: []byte("abc")}}
		}
		for range 8 {
			spec := record.NewBatchSpec(off, c)
			spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = 7, 1, int32(off)
			if log, err = w.AppendBatch(log, &spec, recs); err != nil {
				b.Fatal(err)
			}
			off += int64(len(recs))
		}
	}
	spec := record.NewBatchSpec(off, compress.None)
	spec.ProducerID, spec.ProducerEpoch = 7, 1
	if log, err = w.AppendEndTxnMarker(log, &spec, record.EndTxnMarker{Type: record.ControlCommit}, benchdata.BaseTimestamp); err != nil {
		b.Fatal(err)
	}
	off++
	// Legacy entries go in a segment of their own in Kafka; the dump does
	// not mind, and one file keeps the benchmark simple.
	recs := benchdata.Records(benchdata.Shapes[0])
	for _, magic := range []int8{record.MagicV0, record.MagicV1} {
		for _, r := range recs {
			s := record.LegacySpec{Offset: off, Magic: magic, Timestamp: r.Timestamp}
			if log, err = record.AppendLegacyMessage(log, &s, r.Key, r.Value); err != nil {
				b.Fatal(err)
			}
			off++
		}
		s := record.LegacySpec{Offset: off, Magic: magic, Codec: compress.Gzip}
		if log, err = w.AppendLegacyWrapper(log, &s, recs); err != nil {
			b.Fatal(err)
		}
		off += int64(len(recs))
	}
	return log
}

// BenchmarkLog dumps benchLog's segment in each output mode.
func BenchmarkLog(b *testing.B) {
	log := benchLog(b)
	for _, m := range []struct {
		name string
		opt  dumplog.Options
	}{
		{"text", dumplog.Options{}},
		{"text-deep", dumplog.Options{Deep: true}},
		{"text-print-data", dumplog.Options{PrintData: true}},
		{"json", dumplog.Options{JSON: true}},
		{"json-print-data", dumplog.Options{JSON: true, PrintData: true}},
	} {
		b.Run(fmt.Sprintf("mode=%s", m.name), func(b *testing.B) {
			b.SetBytes(int64(len(log)))
			b.ReportAllocs()
			r := bytes.NewReader(log)
			for b.Loop() {
				res, err := dumplog.Log(io.Discard, r, int64(len(log)), "00000000000000000000.log", m.opt)
				if err != nil || res.Problems != 0 || res.Batches != 16+1+2*(16+1) {
					b.Fatalf("%+v, %v", res, err)
				}
			}
		})
	}
}
