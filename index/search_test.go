package index_test

import (
	"math/rand/v2"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/indexfile"
	"github.com/segkit/segkit/vfs"
)

// TestLookupMatchesKafkaSearch checks that OffsetIndex.Lookup (the inlined
// search) picks the same slot as indexfile.LargestLowerBound (tested there
// against sort.Search) on any bytes, sorted or
// not, and always an entry at most the target.
func TestLookupMatchesKafkaSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		n := rng.IntN(2200)
		b := make([]byte, n*8)
		sorted := round%2 == 0
		rel := int32(0)
		for i := range n {
			if sorted {
				rel += 1 + rng.Int32N(3)
			} else {
				rel = rng.Int32N(1000) - 100
			}
			format.PutInt32(b[i*8:], rel)
			format.PutInt32(b[i*8+4:], rng.Int32())
		}
		// Zero padding after the data half the time.
		if round%4 == 1 {
			b = append(b, make([]byte, 8*rng.IntN(50))...)
			n = len(b) / 8
		}
		fsys := vfs.NewMem()
		writeFile(t, fsys, "x.index", b)
		const base = 1000
		x := openOffset(t, fsys, "x.index", base, -1, false)
		key := func(i int) int64 { return int64(format.Int32(b[i*8:])) }
		for range 200 {
			target := base + rng.Int64N(int64(rel)+300) - 150
			slot := indexfile.LargestLowerBound(n, 8, target-base, key)
			want := index.Entry{Offset: base}
			if slot >= 0 {
				want = index.DecodeEntry(b[slot*8:], base)
			}
			got := x.Lookup(target)
			if got != want {
				t.Fatalf("round %d n %d: Lookup(%d) = %+v, want %+v", round, n, target, got, want)
			}
			if got.Offset > target && slot >= 0 {
				t.Fatalf("round %d: Lookup(%d) = %+v is above the target", round, target, got)
			}
		}
	}
}
