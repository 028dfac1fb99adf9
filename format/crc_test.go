package format

import (
	"hash/crc32"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestCRC32CMatchesStdlib: whichever path updateCastagnoli takes on this
// platform, it agrees with hash/crc32 for every length to 300 bytes, at
// every alignment, from random initial values.
func TestCRC32CMatchesStdlib(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 400)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for off := range 8 {
		for n := 0; n <= 300; n++ {
			init := rng.Uint32()
			p := buf[off : off+n]
			if got, want := updateCastagnoli(init, p), crc32.Update(init, castagnoli, p); got != want {
				t.Fatalf("offset %d, %d bytes, from %#x: %#x, want %#x", off, n, init, got, want)
			}
		}
	}
}

// BenchmarkCRC32CPortable measures CRC32C on every platform (wasm under
// node included) against hash/crc32 in the same run.
func BenchmarkCRC32CPortable(b *testing.B) {
	for _, n := range []int{1024, 16 * 1024} {
		p := make([]byte, n)
		b.Run("segkit/"+strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				sinkCRC2 += CRC32C(p)
			}
		})
		b.Run("hash-crc32/"+strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				sinkCRC2 += crc32.Checksum(p, castagnoli)
			}
		})
	}
}

var sinkCRC2 uint32
