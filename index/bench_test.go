package index_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// lookupFixture is an index of n entries (offsets 3 apart, positions 4 KiB
// apart), the same entries decoded into a slice, and random targets.
type lookupFixture struct {
	x       *index.OffsetIndex
	decoded []index.Entry
	targets []int64
}

func newLookupFixture(tb testing.TB, n int) *lookupFixture {
	tb.Helper()
	const base = 1_000_000
	raw := make([]byte, 0, n*index.EntrySize)
	decoded := make([]index.Entry, n)
	for i := range n {
		e := index.Entry{Offset: base + int64(3*i+2), Position: int32(4100 * i)}
		decoded[i] = e
		raw, _ = index.AppendEntry(raw, base, e)
	}
	fsys := vfs.NewMem()
	writeFile(tb, fsys, "b.index", raw)
	x := openOffset(tb, fsys, "b.index", base, -1, false)
	rng := rand.New(rand.NewPCG(7, 8))
	targets := make([]int64, 1<<16)
	for i := range targets {
		targets[i] = base + rng.Int64N(int64(3*n+10))
	}
	return &lookupFixture{x: x, decoded: decoded, targets: targets}
}

// sortSearchLookup is the baseline: the greatest entry at most target in a
// decoded slice, with sort.Search.
func sortSearchLookup(es []index.Entry, base, target int64) index.Entry {
	i := sort.Search(len(es), func(i int) bool { return es[i].Offset > target })
	if i == 0 {
		return index.Entry{Offset: base}
	}
	return es[i-1]
}

// BenchmarkLookup compares OffsetIndex.Lookup with sort.Search over a
// decoded []Entry, on 1M entries (a full 8 MiB index), at random targets.
func BenchmarkLookup(b *testing.B) {
	f := newLookupFixture(b, 1<<20)
	b.Run("entries=1M/OffsetIndex", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(index.EntrySize)
		i := 0
		for b.Loop() {
			sink = f.x.Lookup(f.targets[i&(len(f.targets)-1)])
			i++
		}
	})
	b.Run("entries=1M/sort.Search", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(index.EntrySize)
		i := 0
		for b.Loop() {
			sink = sortSearchLookup(f.decoded, f.x.BaseOffset(), f.targets[i&(len(f.targets)-1)])
			i++
		}
	})
}

// BenchmarkLookupRatio times both lookups in the same run, interleaved in
// blocks, and reports ns per lookup of each and their ratio
// (sort.Search / OffsetIndex: above 1 means OffsetIndex is faster).
func BenchmarkLookupRatio(b *testing.B) {
	f := newLookupFixture(b, 1<<20)
	b.ReportAllocs()
	const block = 4096
	var tIndex, tSort time.Duration
	n := 0
	for b.Loop() {
		start := time.Now()
		for j := range block {
			sink = f.x.Lookup(f.targets[(n+j)&(len(f.targets)-1)])
		}
		mid := time.Now()
		for j := range block {
			sink = sortSearchLookup(f.decoded, f.x.BaseOffset(), f.targets[(n+j)&(len(f.targets)-1)])
		}
		tIndex += mid.Sub(start)
		tSort += time.Since(mid)
		n += block
	}
	b.ReportMetric(float64(tIndex.Nanoseconds())/float64(n), "ns/lookup-index")
	b.ReportMetric(float64(tSort.Nanoseconds())/float64(n), "ns/lookup-sort")
	b.ReportMetric(float64(tSort)/float64(tIndex), "sort/index")
}

// BenchmarkAppend measures appends to a preallocated index on vfs.NewMem
// (one WriteAt each); the index is reset when it fills.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{1 << 16, segment.DefaultMaxIndexSize} {
		b.Run(fmt.Sprintf("maxIndexSize=%d", size), func(b *testing.B) {
			x := openOffset(b, vfs.NewMem(), "a.index", 0, size, true)
			b.ReportAllocs()
			b.SetBytes(index.EntrySize)
			off := int64(0)
			for b.Loop() {
				if x.IsFull() {
					if err := x.Reset(); err != nil {
						b.Fatal(err)
					}
					off = 0
				}
				off++
				if err := x.Append(off, int32(off)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOpen measures opening an 8 MiB index (read whole) and a 10 MiB
// preallocated one holding 1000 entries (the zero tail is scanned, not
// kept).
func BenchmarkOpen(b *testing.B) {
	full := make([]byte, 0, 8<<20)
	for i := range 1 << 20 {
		full, _ = index.AppendEntry(full, 0, index.Entry{Offset: int64(i + 1), Position: int32(i)})
	}
	padded := make([]byte, segment.DefaultMaxIndexSize)
	copy(padded, full[:8000])
	for name, data := range map[string][]byte{"full-8MiB": full, "padded-10MiB": padded} {
		b.Run(name, func(b *testing.B) {
			fsys := vfs.NewMem()
			writeFile(b, fsys, "o.index", data)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				x := openOffset(b, fsys, "o.index", 0, -1, false)
				x.Close()
			}
		})
	}
}
