package describe_test

import (
	"fmt"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/describe"
	"github.com/segkit/segkit/record"
)

// A batch and its records as the views show them, whatever the magic.
func ExampleWalker() {
	var b record.Builder
	spec := record.NewBatchSpec(40, compress.Gzip)
	spec.ProducerID, spec.BaseSequence = 7, 2
	log, _ := b.AppendBatch(nil, &spec, []record.Record{
		{Timestamp: 1_700_000_000_000, Key: []byte("k"), Value: []byte("v"), Headers: []record.Header{{Key: []byte("trace")}}},
		{Timestamp: 1_700_000_000_001, Value: []byte("w")},
	})
	log, _ = b.AppendLegacyWrapper(log, &record.LegacySpec{Offset: 42, Magic: record.MagicV1, Codec: compress.Snappy},
		[]record.Record{{Timestamp: 5, Value: []byte("x")}, {Timestamp: 6, Value: []byte("y")}})

	var w describe.Walker
	for s := record.NewScanner(log, "00000000000000000040.log", 0); s.Next(); {
		e := s.Entry()
		d := describe.NewBatch(e)
		if err := w.Wrapper(&d, e); err != nil {
			fmt.Println(err)
		}
		fmt.Printf("magic %d %s: offsets %d-%d, %d records\n", d.Magic, d.Codec, d.BaseOffset, d.LastOffset, d.Count)
		for w.Reset(e); w.Next(); {
			r := w.Record()
			fmt.Printf("  offset %d keySize %d valueSize %d headers %d sequence %d\n", r.Offset, r.KeySize, r.ValueSize, len(r.Headers), r.Sequence)
		}
	}
	// Output:
	// magic 2 gzip: offsets 40-41, 2 records
	//   offset 40 keySize 1 valueSize 1 headers 1 sequence 2
	//   offset 41 keySize -1 valueSize 1 headers 0 sequence 3
	// magic 1 snappy: offsets 42-43, 2 records
	//   offset 42 keySize -1 valueSize 1 headers 0 sequence -1
	//   offset 43 keySize -1 valueSize 1 headers 0 sequence -1
}
