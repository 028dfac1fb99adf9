package index_test

import (
	"fmt"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/vfs"
)

func ExampleAppendEntry() {
	// Offset 1234 of the segment starting at 1000, at byte 8192 of its .log.
	b, err := index.AppendEntry(nil, 1000, index.Entry{Offset: 1234, Position: 8192})
	fmt.Printf("% x %v\n", b, err)
	fmt.Printf("%+v\n", index.DecodeEntry(b, 1000))
	// Output:
	// 00 00 00 ea 00 00 20 00 <nil>
	// {Offset:1234 Position:8192}
}

func ExampleOffsetIndex() {
	fsys := vfs.NewMem()
	x, err := index.OpenOffsetIndex(fsys, "00000000000000001000.index", 1000, index.OpenOptions{Writable: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(x.Length(), x.IsFull()) // preallocated: 10 MiB
	for _, e := range []index.Entry{{1010, 4200}, {1025, 8400}, {1031, 12600}} {
		if err := x.Append(e.Offset, e.Position); err != nil {
			panic(err)
		}
	}
	fmt.Println(x.Lookup(1027), x.Lookup(5), x.LastEntry())
	fmt.Println(x.Append(1020, 20000)) // offsets must increase
	// At roll: trim to the entries, then close.
	if err := x.TrimToValidSize(); err != nil {
		panic(err)
	}
	fmt.Println(x.Length(), x.Close())
	// Output:
	// 10485760 false
	// {1025 8400} {1000 0} {1031 12600}
	// 00000000000000001000.index: index: offset out of order: offset 1020 is not larger than the last offset 1031 (entry 3)
	// 24 <nil>
}

func ExampleOffsetIndex_Padding() {
	// An index a broker left untrimmed: two entries, then zeros.
	fsys := vfs.NewMem()
	b, _ := index.AppendEntry(nil, 0, index.Entry{Offset: 40, Position: 4500})
	b, _ = index.AppendEntry(b, 0, index.Entry{Offset: 90, Position: 9100})
	vfs.WriteFile(fsys, "00000000000000000000.index", append(b, make([]byte, 1024)...), 0o644)

	x, _ := index.OpenOffsetIndex(fsys, "00000000000000000000.index", 0, index.OpenOptions{})
	fmt.Println(x.Entries(), x.LastEntry()) // Kafka's view
	fmt.Printf("%+v\n", x.Padding())
	// Output:
	// 130 {0 0}
	// {Entries:130 ValidEntries:2 ZeroBytes:1024 Untrimmed:true}
}

func ExampleTransactionIndex() {
	fsys := vfs.NewMem()
	x, _ := index.OpenTransactionIndex(fsys, "00000000000000000000.txnindex", 0, index.OpenOptions{Writable: true})
	x.Append(index.AbortedTxn{ProducerID: 7, FirstOffset: 3, LastOffset: 9, LastStableOffset: 3})
	x.Append(index.AbortedTxn{ProducerID: 8, FirstOffset: 12, LastOffset: 20, LastStableOffset: 12})
	fmt.Println(x.Overlapping(0, 10))
	fmt.Println(x.Overlapping(10, 15))
	// Output:
	// [AbortedTxn(version=0, producerId=7, firstOffset=3, lastOffset=9, lastStableOffset=3)]
	// [AbortedTxn(version=0, producerId=8, firstOffset=12, lastOffset=20, lastStableOffset=12)]
}
