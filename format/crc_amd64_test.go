//go:build amd64 && !purego

package format

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestCLMULMatchesStdlib checks the AVX-512 folding routine against hash/crc32 for
// every length up to 4 KiB and a sample beyond, at random alignments and
// initial values.
func TestCLMULMatchesStdlib(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 VPCLMULQDQ on this CPU: CRC32C is hash/crc32's")
	}
	t.Logf("PCLMULQDQ: %v, AVX-512 VPCLMULQDQ: %v", useCLMUL, useAVX512)
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 70000)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	check := func(off, n int, init uint32) {
		p := buf[off : off+n]
		want := crc32.Update(init, castagnoli, p)
		if got := UpdateCRC32C(init, p); got != want {
			t.Fatalf("UpdateCRC32C(%#x, len %d at %d) = %#x, want %#x", init, n, off, got, want)
		}
		if n >= 256 && useAVX512 {
			m := n &^ 15
			if got, want := ^castagnoliAVX512(^init, p[:m]), crc32.Update(init, castagnoli, p[:m]); got != want {
				t.Fatalf("castagnoliAVX512(len %d) = %#x, want %#x", m, got, want)
			}
		}
	}
	for n := 0; n <= 4096; n++ {
		check(rng.IntN(16), n, rng.Uint32())
	}
	for i := 0; i < 300; i++ {
		check(rng.IntN(64), rng.IntN(65000), rng.Uint32())
	}
	check(0, 64, 0)
	check(0, 70000, 0)
	// Known answer over a long zero run.
	zeros := make([]byte, 1<<16)
	if got, want := CRC32C(zeros), crc32.Checksum(zeros, castagnoli); got != want {
		t.Fatalf("CRC32C(64 KiB of zeros) = %#x, want %#x", got, want)
	}
}

func BenchmarkCRC32C(b *testing.B) {
	for _, n := range []int{64, 256, 512, 1024, 16 * 1024, 110 * 1024} {
		p := make([]byte, n)
		b.Run("segkit/"+itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				sinkCRC += CRC32C(p)
			}
		})
		b.Run("hash-crc32/"+itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				sinkCRC += crc32.Checksum(p, castagnoli)
			}
		})
	}
}

var sinkCRC uint32

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
