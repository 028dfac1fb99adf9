package segment_test

import (
	"fmt"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// One segment: append batches with Kafka's index rules, then locate an
// offset and a timestamp through its indexes.
func Example() {
	fsys := vfs.NewMem()
	if err := fsys.MkdirAll("orders-0", 0o755); err != nil { // the partition directory
		panic(err)
	}
	s, err := segment.Create(fsys, "orders-0", 100, segment.DefaultConfig(), nil)
	if err != nil {
		panic(err)
	}
	var w record.Builder
	for i := range 3 {
		spec := record.NewBatchSpec(100+int64(i)*2, compress.None)
		b, _ := w.AppendBatch(nil, &spec, []record.Record{
			{Timestamp: 5000 + int64(i)*100, Value: []byte("x")},
			{Timestamp: 5050 + int64(i)*100, Value: []byte("y")},
		})
		info, err := segment.Describe(b)
		if err != nil {
			panic(err)
		}
		if err := s.Append(b, info); err != nil {
			panic(err)
		}
	}
	pos, found, _ := s.TranslateOffset(103)
	fmt.Println("offset 103: batch at byte", pos.Position, found)
	at, found, _ := s.FindOffsetByTimestamp(5120, 100)
	fmt.Println("first record at or after 5120:", at.Offset, at.Timestamp, found)
	fmt.Println("size", s.Size(), "close", s.Close())
	// Output:
	// offset 103: batch at byte 77 true
	// first record at or after 5120: 103 5150 true
	// size 231 close <nil>
}
