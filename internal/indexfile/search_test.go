package indexfile_test

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/segkit/segkit/internal/indexfile"
)

// TestSearchSorted checks Kafka's search against sort.Search on increasing
// keys, across the warm-section boundary.
func TestSearchSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 1023, 1024, 1025, 1026, 2050, 5000} {
		keys := make([]int64, n)
		k := int64(0)
		for i := range keys {
			k += 1 + rng.Int64N(5)
			keys[i] = k
		}
		key := func(i int) int64 { return keys[i] }
		for target := int64(-1); target <= k+2; target++ {
			want := sort.Search(n, func(i int) bool { return keys[i] > target }) - 1
			if got := indexfile.LargestLowerBound(n, 8, target, key); got != want {
				t.Fatalf("n=%d LargestLowerBound(%d) = %d, want %d", n, target, got, want)
			}
			up := sort.Search(n, func(i int) bool { return keys[i] >= target })
			got := indexfile.SmallestUpperBound(n, 8, target, key)
			// Kafka's quirk: an exact match at the first slot of the
			// searched range is skipped; anything else is exact.
			if up == n {
				up = -1
			}
			if got != up && !(up >= 0 && keys[up] == target && got == up+1 || got == -1 && up == n-1 && keys[up] == target) {
				t.Fatalf("n=%d SmallestUpperBound(%d) = %d, want %d", n, target, got, up)
			}
		}
	}
}

// TestSearchUnsorted checks what holds on keys that do not increase (a
// damaged or zero-padded file): LargestLowerBound returns -1 or a slot
// whose key is at most the target; SmallestUpperBound, which promises
// nothing about the key there, returns -1 or a slot in range.
func TestSearchUnsorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 300 {
		n := rng.IntN(3000)
		keys := make([]int64, n)
		for i := range keys {
			keys[i] = rng.Int64N(1000)
		}
		if round%3 == 0 { // a zero tail, as padding leaves
			for i := n - n/4; i < n; i++ {
				keys[i] = 0
			}
		}
		key := func(i int) int64 { return keys[i] }
		for range 50 {
			target := rng.Int64N(1100) - 50
			if s := indexfile.LargestLowerBound(n, 12, target, key); s >= n || s >= 0 && keys[s] > target {
				t.Fatalf("round %d: LargestLowerBound(%d) = %d", round, target, s)
			}
			if s := indexfile.SmallestUpperBound(n, 12, target, key); s >= n || s < -1 || n == 0 && s != -1 {
				t.Fatalf("round %d: SmallestUpperBound(%d) = %d", round, target, s)
			}
		}
	}
}
