package inspect_test

import (
	"fmt"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
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

func ExampleVerify() {
	fsys := examplePartition()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixMilli()

	rep, _ := inspect.Verify(fsys, "/logs/orders-0", inspect.Options{Now: now})
	fmt.Println(rep.OK, rep.Segments, rep.Batches, rep.Records, len(rep.Problems))

	// Damage a record of the third batch (batches are 118 bytes here).
	flipByte(fsys, "/logs/orders-0/00000000000000000000.log", 2*118+80)
	rep, _ = inspect.Verify(fsys, "/logs/orders-0", inspect.Options{Now: now})
	fmt.Println(rep.OK, rep.Batches, rep.Records)
	for _, p := range rep.Problems {
		fmt.Println(p.Level, p.File, p.Position, p.Kind)
	}
	// Output:
	// true 1 5 15 0
	// false 4 12
	// error /logs/orders-0/00000000000000000000.log 236 log-crc
}

func Example_findEntry() {
	fsys := examplePartition()
	f, _ := fsys.Open("/logs/orders-0/00000000000000000000.log")
	defer f.Close()
	st, _ := f.Stat()
	// From inside the first batch, the next batch starts at 118.
	pos, ok, err := record.FindEntry(f, st.Size(), 1)
	fmt.Println(pos, ok, err)
	// Output:
	// 118 true <nil>
}
