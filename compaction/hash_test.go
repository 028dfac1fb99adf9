package compaction

import (
	"crypto/md5"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestHashKeysMatchMD5 checks hashKeys (eight lanes at a time with AVX2)
// against crypto/md5: every key length around the one-block limit, keys
// too long for one block among short ones, groups of every size.
func TestHashKeysMatchMD5(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(keys [][]byte) {
		t.Helper()
		out := make([]keyHash, len(keys))
		hashKeys(out, keys)
		for i, k := range keys {
			if out[i] != hashKey(k) || out[i].digest() != md5.Sum(k) {
				t.Fatalf("%d keys: key %d (%d bytes %x): %x, want %x", len(keys), i, len(k), k, out[i].digest(), md5.Sum(k))
			}
		}
	}
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	for n := 0; n <= 130; n++ {
		keys := make([][]byte, 17)
		for i := range keys {
			keys[i] = random(n)
		}
		check(keys)
	}
	for groups := range 40 {
		keys := make([][]byte, groups)
		for i := range keys {
			keys[i] = random(rng.IntN(80))
		}
		if groups%5 == 0 && groups > 0 {
			keys[0] = nil
		}
		check(keys)
	}
}

func FuzzHashKeys(f *testing.F) {
	f.Add([]byte("user-0000000001"), []byte(""), 3)
	f.Add(make([]byte, 55), make([]byte, 56), 9)
	f.Fuzz(func(t *testing.T, a, b []byte, n int) {
		n = n&15 + 1
		keys := make([][]byte, n)
		for i := range keys {
			if i%2 == 0 {
				keys[i] = a
			} else {
				keys[i] = b
			}
		}
		out := make([]keyHash, n)
		hashKeys(out, keys)
		for i, k := range keys {
			if out[i].digest() != md5.Sum(k) {
				t.Fatalf("key %d %x: %x, want %x", i, k, out[i].digest(), md5.Sum(k))
			}
		}
	})
}

// digest is the MD5 digest a keyHash stands for.
func (h keyHash) digest() (d [md5.Size]byte) {
	for i := range 8 {
		d[i] = byte(h.lo >> (8 * i))
		d[8+i] = byte(h.hi >> (8 * i))
	}
	return d
}

func BenchmarkHashKeys(b *testing.B) {
	keys := make([][]byte, 64)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "user-%010d", i)
	}
	out := make([]keyHash, len(keys))
	var keyBytes int64
	for _, k := range keys {
		keyBytes += int64(len(k))
	}
	b.Run("hashKeys", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(keyBytes)
		for b.Loop() {
			hashKeys(out, keys)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
	})
	b.Run("md5.Sum", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(keyBytes)
		for b.Loop() {
			for i, k := range keys {
				out[i] = hashKey(k)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
	})
}
