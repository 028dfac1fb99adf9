package kafkalog_test

import (
	"fmt"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// Write a partition, then open it read-only as a tool would: read from
// offset N on, and find the offset for a timestamp (a ListOffsets request).
func Example() {
	fsys := vfs.NewMem()
	dir := "/var/kafka-logs/orders-0"
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{})
	if err != nil {
		panic(err)
	}
	var w record.Builder
	for i := range 3 {
		spec := record.NewBatchSpec(0, compress.Snappy)
		b, _ := w.AppendBatch(nil, &spec, []record.Record{
			{Timestamp: 1000 + int64(i)*10, Key: []byte(fmt.Sprint("k", i)), Value: []byte("a")},
			{Timestamp: 1005 + int64(i)*10, Key: []byte(fmt.Sprint("k", i)), Value: []byte("b")},
		})
		if _, err := l.Append(b, 0); err != nil { // as the partition's leader, epoch 0
			panic(err)
		}
	}
	if err := l.Close(); err != nil { // a clean shutdown: indexes trimmed, checkpoints written
		panic(err)
	}

	r, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	fmt.Println("offsets", r.LogStartOffset(), "to", r.LogEndOffset())
	for rec, err := range r.Records(3) {
		if err != nil {
			panic(err)
		}
		fmt.Println(rec.Offset, rec.Timestamp, string(rec.Key), string(rec.Value))
	}
	at, found, err := r.OffsetForTimestamp(1012)
	fmt.Println("first record at or after 1012:", at.Offset, at.Timestamp, found, err)
	// Output:
	// offsets 0 to 6
	// 3 1015 k1 b
	// 4 1020 k2 a
	// 5 1025 k2 b
	// first record at or after 1012: 3 1015 true <nil>
}
