package checkpoint_test

import (
	"fmt"

	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/vfs"
)

func ExampleWriteOffsets() {
	fsys := vfs.NewMem()
	fsys.MkdirAll("data", 0o755)
	p := "data/" + checkpoint.RecoveryPointFile
	checkpoint.WriteOffsets(fsys, p, map[checkpoint.TopicPartition]int64{
		{Topic: "orders", Partition: 1}: 17,
		{Topic: "orders", Partition: 0}: 42,
	})
	b, _ := vfs.ReadFile(fsys, p)
	fmt.Printf("%q\n", b)

	offs, _ := checkpoint.ReadOffsets(fsys, p)
	fmt.Println(offs[checkpoint.TopicPartition{Topic: "orders", Partition: 0}])

	_, err := checkpoint.ParseOffsets([]byte("0\n2\norders 0 42\n"))
	fmt.Println(err)
	// Output:
	// "0\n2\norders 0 42\norders 1 17\n"
	// 42
	// byte 2: format: invalid value: Expected [2] entries in checkpoint file, but found only [1]
}

func ExampleLeaderEpochCache() {
	fsys := vfs.NewMem()
	fsys.MkdirAll("orders-0", 0o755)
	p := "orders-0/" + checkpoint.LeaderEpochFile

	c, _ := checkpoint.LoadLeaderEpochCache(fsys, p) // missing: empty
	c.Assign(0, 0)
	c.Assign(2, 100)
	c.Assign(5, 250)
	fmt.Println(c.EndOffsetFor(2, 300)) // epoch 2 ends where 5 starts
	fmt.Println(c.EndOffsetFor(5, 300)) // the latest ends at the log end
	c.TruncateFromEnd(200)              // the log was truncated to 200
	c.Flush(fsys, p)
	b, _ := vfs.ReadFile(fsys, p)
	fmt.Printf("%q\n", b)
	// Output:
	// 2 250
	// 5 300
	// "0\n2\n0 0\n2 100\n"
}

func ExampleParsePartitionDir() {
	for _, name := range []string{"orders-3", "orders-3.5b2e0a63f48d4b1c9f0bf6c1e8c0a1d2-delete", "meta.properties"} {
		d, err := checkpoint.ParsePartitionDir(name)
		if err != nil {
			fmt.Println("not a partition directory")
			continue
		}
		fmt.Println(d.Topic, d.Partition, d.Kind)
	}
	// Output:
	// orders 3 live
	// orders 3 delete
	// not a partition directory
}

func ExampleReadPartitionMetadata() {
	fsys := vfs.NewMem()
	fsys.MkdirAll("orders-0", 0o755)
	id, _ := checkpoint.ParseUUID("Rkh9AX0GSAe8U38BBNFwlg")
	checkpoint.WritePartitionMetadata(fsys, "orders-0", id)
	b, _ := vfs.ReadFile(fsys, "orders-0/partition.metadata")
	fmt.Printf("%q\n", b)
	m, err := checkpoint.ReadPartitionMetadata(fsys, "orders-0")
	fmt.Println(m.Version, m.TopicID, err)
	// Output:
	// "version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg"
	// 0 Rkh9AX0GSAe8U38BBNFwlg <nil>
}

func ExampleReadCleanShutdown() {
	fsys := vfs.NewMem()
	fsys.MkdirAll("data", 0o755)
	checkpoint.WriteCleanShutdown(fsys, "data", 6439)
	fmt.Println(checkpoint.ReadCleanShutdown(fsys, "data"))
	checkpoint.RemoveCleanShutdown(fsys, "data")
	fmt.Println(checkpoint.ReadCleanShutdown(fsys, "data"))
	// Output:
	// true 6439 <nil>
	// false -1 <nil>
}
