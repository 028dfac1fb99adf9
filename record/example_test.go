package record_test

import (
	"fmt"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/record"
)

// Build a v2 batch, then read it back: a Scanner finds the entries of a
// segment's bytes (checking each CRC), an EntryIterator yields the records
// of an entry of any magic.
func Example() {
	var w record.Builder // reusable: its buffers are kept between batches
	spec := record.NewBatchSpec(100, compress.Zstd)
	log, err := w.AppendBatch(nil, &spec, []record.Record{
		{Timestamp: 1700000000000, Key: []byte("k1"), Value: []byte("v1")},
		{Timestamp: 1700000000005, Key: []byte("k2"), Value: []byte("v2"), Headers: []record.Header{{Key: []byte("h"), Value: []byte("x")}}},
	})
	if err != nil {
		panic(err)
	}

	s := record.NewScanner(log, "00000000000000000100.log", 0)
	var it record.EntryIterator
	var r record.Record
	for s.Next() {
		e := s.Entry()
		fmt.Println("entry at", e.Position, "offsets", e.BaseOffset(), "to", e.LastOffset(), "magic", e.Magic)
		it.Reset(e)
		for it.Next(&r) {
			fmt.Println(r.Offset, r.Timestamp, string(r.Key), string(r.Value), len(r.Headers))
		}
		if err := it.Err(); err != nil {
			panic(err)
		}
	}
	if err := s.Err(); err != nil {
		panic(err) // a *format.CorruptionError naming the file and byte
	}
	// Output:
	// entry at 0 offsets 100 to 101 magic 2
	// 100 1700000000000 k1 v1 0
	// 101 1700000000005 k2 v2 1
}
