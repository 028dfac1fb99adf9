package index_test

import (
	"testing"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/vfs"
)

var sink index.Entry

// TestAllocs holds the read path and the entry codec to zero allocations.
func TestAllocs(t *testing.T) {
	x := openOffset(t, vfs.NewMem(), "x.index", 0, 1<<16, true)
	for i := range 3000 {
		if err := x.Append(int64(5*i+1), int32(4100*i)); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 0, 64)
	enc := encode(t, 0, index.Entry{Offset: 5, Position: 9})
	var err error
	for name, f := range map[string]func(){
		"Lookup":    func() { sink = x.Lookup(7777) },
		"LookupLow": func() { sink = x.Lookup(-5) },
		"Entry":     func() { sink = x.Entry(1234) },
		"LastEntry": func() { sink = x.LastEntry() },
		"IsFull":    func() { _ = x.IsFull() },
		"FetchUpperBoundOffset": func() {
			sink, _ = index.FetchUpperBoundOffset(x, 100000, 4096)
		},
		"AppendEntry": func() { buf, err = index.AppendEntry(buf[:0], 0, index.Entry{Offset: 5, Position: 9}) },
		"DecodeEntry": func() { sink = index.DecodeEntry(enc, 0) },
		"Padding":     func() { _ = x.Padding() },
	} {
		if n := testing.AllocsPerRun(200, f); n != 0 {
			t.Errorf("%s: %v allocs, want 0", name, n)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}
