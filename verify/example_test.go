package verify_test

import (
	"bytes"
	"fmt"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/verify"
	"github.com/segkit/segkit/vfs"
)

func ExampleOffsetIndex() {
	// A log of three 3 KiB batches, and an index entry for the third.
	var log []byte
	for off := int64(0); off < 3; off++ {
		spec := record.NewBatchSpec(off, compress.None)
		log, _ = record.AppendBatch(log, &spec, []record.Record{{Timestamp: 1000 + off, Value: make([]byte, 3000)}})
	}
	sum, _ := verify.SummarizeLog(bytes.NewReader(log), int64(len(log)), "00000000000000000000.log")
	built, _ := verify.RebuildOffsetIndex(nil, 0, sum.Entries, segment.DefaultIndexIntervalBytes)

	fsys := vfs.NewMem()
	bad := append(built, 0, 0, 0, 2, 0, 0, 0, 10) // offset 2 at byte 10: not a batch start
	vfs.WriteFile(fsys, "00000000000000000000.index", bad, 0o644)
	x, _ := index.OpenOffsetIndex(fsys, "00000000000000000000.index", 0, index.OpenOptions{})
	fmt.Println(x.Entry(0))
	for _, p := range verify.OffsetIndex(x, sum.Entries) {
		fmt.Println(p.Level, p.Kind, p.Position)
	}
	// Output:
	// {2 6140}
	// error index-offset-order 8
	// error index-not-batch-boundary 8
}
