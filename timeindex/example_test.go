package timeindex_test

import (
	"fmt"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/vfs"
)

func ExampleAppendEntry() {
	b, err := timeindex.AppendEntry(nil, 1000, timeindex.Entry{Timestamp: 1700000000123, Offset: 1234})
	fmt.Printf("% x %v\n", b, err)
	fmt.Printf("%+v\n", timeindex.DecodeEntry(b, 1000))
	// Output:
	// 00 00 01 8b cf e5 68 7b 00 00 00 ea <nil>
	// {Timestamp:1700000000123 Offset:1234}
}

func ExampleTimeIndex() {
	fsys := vfs.NewMem()
	x, err := timeindex.OpenTimeIndex(fsys, "00000000000000001000.timeindex", 1000, index.OpenOptions{Writable: true, MaxIndexSize: segment.DefaultMaxIndexSize})
	if err != nil {
		panic(err)
	}
	fmt.Println(x.Length(), x.LastEntry())
	x.MaybeAppend(1700000000100, 1010, false)
	x.MaybeAppend(1700000000100, 1020, false) // not larger: ignored
	x.MaybeAppend(1700000000250, 1031, false)
	fmt.Println(x.Entries(), x.Lookup(1700000000200), x.Lookup(5))
	x.MaybeAppend(1700000000300, 1040, true) // the entry written at roll
	x.TrimToValidSize()
	fmt.Println(x.Length(), x.Close())
	// Output:
	// 10485756 {-1 1000}
	// 2 {1700000000100 1010} {-1 1000}
	// 36 <nil>
}
