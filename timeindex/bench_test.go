package timeindex_test

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/vfs"
)

// BenchmarkLookup compares TimeIndex.Lookup with sort.Search over a decoded
// []Entry, on 1M entries (12 MiB), at random timestamps.
func BenchmarkLookup(b *testing.B) {
	const n = 1 << 20
	raw := make([]byte, 0, n*timeindex.EntrySize)
	decoded := make([]timeindex.Entry, n)
	for i := range n {
		e := timeindex.Entry{Timestamp: 1_700_000_000_000 + int64(5*i), Offset: int64(i)}
		decoded[i] = e
		raw, _ = timeindex.AppendEntry(raw, 0, e)
	}
	fsys := vfs.NewMem()
	writeFile(b, fsys, "b.timeindex", raw)
	x := openTime(b, fsys, "b.timeindex", 0, -1, false)
	rng := rand.New(rand.NewPCG(1, 1))
	targets := make([]int64, 1<<16)
	for i := range targets {
		targets[i] = 1_700_000_000_000 + rng.Int64N(5*n+20) - 10
	}
	b.Run("entries=1M/TimeIndex", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(timeindex.EntrySize)
		i := 0
		for b.Loop() {
			sink = x.Lookup(targets[i&(len(targets)-1)])
			i++
		}
	})
	b.Run("entries=1M/sort.Search", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(timeindex.EntrySize)
		i := 0
		for b.Loop() {
			ts := targets[i&(len(targets)-1)]
			j := sort.Search(len(decoded), func(j int) bool { return decoded[j].Timestamp > ts })
			if j == 0 {
				sink = timeindex.Entry{Timestamp: format.NoTimestamp}
			} else {
				sink = decoded[j-1]
			}
			i++
		}
	})
}

// BenchmarkMaybeAppend measures appends to a preallocated time index on
// vfs.NewMem; the index is reset when it fills.
func BenchmarkMaybeAppend(b *testing.B) {
	x := openTime(b, vfs.NewMem(), "a.timeindex", 0, segment.DefaultMaxIndexSize, true)
	b.ReportAllocs()
	b.SetBytes(timeindex.EntrySize)
	n := int64(0)
	for b.Loop() {
		if x.IsFull() {
			if err := x.Reset(); err != nil {
				b.Fatal(err)
			}
			n = 0
		}
		n++
		if err := x.MaybeAppend(1_700_000_000_000+n, n, false); err != nil {
			b.Fatal(err)
		}
	}
}
