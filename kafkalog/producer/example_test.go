package producer_test

import (
	"fmt"

	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// Two transactional producers interleave; the first aborts while the
// second's transaction is still open, so the aborted transaction's last
// stable offset is where the second one began.
func ExampleState() {
	s := producer.NewState()
	batches := []producer.BatchInfo{
		{ProducerID: 1, BaseSequence: 0, BaseOffset: 0, LastOffset: 2, MaxTimestamp: 100, IsTransactional: true},
		{ProducerID: 2, BaseSequence: 0, BaseOffset: 3, LastOffset: 4, MaxTimestamp: 101, IsTransactional: true},
		{ProducerID: 1, BaseSequence: -1, BaseOffset: 5, LastOffset: 5, MaxTimestamp: 102, IsTransactional: true, IsControl: true,
			Marker: &producer.Marker{Type: record.ControlAbort, CoordinatorEpoch: 0}},
		{ProducerID: 2, BaseSequence: -1, BaseOffset: 6, LastOffset: 6, MaxTimestamp: 103, IsTransactional: true, IsControl: true,
			Marker: &producer.Marker{Type: record.ControlCommit, CoordinatorEpoch: 0}},
	}
	for _, b := range batches {
		txn, lso, err := s.Replay(b)
		if err != nil {
			fmt.Println(err)
			return
		}
		if txn != nil {
			fmt.Printf("producer %d: offsets %d..%d aborted=%v, last stable offset %d\n", txn.ProducerID, txn.FirstOffset, txn.LastOffset, txn.IsAborted, lso)
		}
	}

	fsys := vfs.NewMem()
	fsys.MkdirAll("orders-0", 0o755)
	producer.WriteSnapshot(fsys, "orders-0", s.MapEndOffset(), s.Snapshot())
	offsets, _ := producer.ListSnapshots(fsys, "orders-0")
	entries, _ := producer.ReadSnapshot(fsys, "orders-0", offsets[0])
	fmt.Println(producer.SnapshotFileName(offsets[0]), len(entries), "producers")
	// Output:
	// producer 1: offsets 0..5 aborted=true, last stable offset 3
	// producer 2: offsets 3..6 aborted=false, last stable offset 7
	// 00000000000000000007.snapshot 2 producers
}

func ExampleAppendSnapshot() {
	b := producer.AppendSnapshot(nil, nil)
	fmt.Printf("% x\n", b)
	entries, err := producer.DecodeSnapshot(b)
	fmt.Println(len(entries), err)
	b[9] = 1 // claim an entry that is not there
	_, err = producer.DecodeSnapshot(b)
	fmt.Println(err)
	// Output:
	// 00 01 48 67 4b c7 00 00 00 00
	// 0 <nil>
	// byte 6: format: truncated input: Snapshot failed schema validation: 1 entries need 46 bytes, only 0 available
}
