package repair_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/repair"
	"github.com/segkit/segkit/vfs"
)

// examplePartition writes five batches of three records to orders-0 in a
// Mem and closes the log.
func examplePartition() *vfs.Mem {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	fsys := vfs.MemOptions{Clock: func() time.Time { return now }}.New()
	l, err := kafkalog.Open(fsys, "/logs/orders-0", kafkalog.DefaultConfig(), kafkalog.Options{Clock: &clock{t: now}})
	if err != nil {
		panic(err)
	}
	var w record.Builder
	for i := 0; i < 5; i++ {
		recs := []record.Record{
			{Timestamp: now.UnixMilli(), Key: []byte("order"), Value: []byte(fmt.Sprintf("order %d", 3*i))},
			{Timestamp: now.UnixMilli(), Key: []byte("order"), Value: []byte(fmt.Sprintf("order %d", 3*i+1))},
			{Timestamp: now.UnixMilli(), Key: []byte("order"), Value: []byte(fmt.Sprintf("order %d", 3*i+2))},
		}
		spec := record.NewBatchSpec(0, compress.None)
		b, err := w.AppendBatch(nil, &spec, recs)
		if err != nil {
			panic(err)
		}
		if _, err := l.Append(b, 0); err != nil {
			panic(err)
		}
	}
	if err := l.Close(); err != nil {
		panic(err)
	}
	return fsys
}

// flipByte inverts one byte of a file.
func flipByte(fsys vfs.FS, name string, at int) {
	b, err := vfs.ReadFile(fsys, name)
	if err != nil {
		panic(err)
	}
	b[at] ^= 0xff
	if err := vfs.WriteFile(fsys, name, b, 0o644); err != nil {
		panic(err)
	}
}

func ExampleSalvage() {
	fsys := examplePartition()
	flipByte(fsys, "/logs/orders-0/00000000000000000000.log", 2*118+80)

	rep, err := repair.Salvage(fsys, "/logs/orders-0", fsys, "/salvaged/orders-0", repair.SalvageOptions{})
	if err != nil {
		panic(err)
	}
	for _, f := range rep.Files {
		for _, l := range f.Lost {
			fmt.Printf("lost bytes %d..%d (%d): %s\n", l.Start, l.End, l.Length, strings.SplitN(l.Reason, ":", 2)[0])
		}
	}
	fmt.Println("kept", rep.Batches, "batches,", rep.Records, "records; missing offsets", rep.MissingOffsets)
	// Output:
	// lost bytes 236..354 (118): byte 253
	// kept 4 batches, 12 records; missing offsets [6-8]
}
