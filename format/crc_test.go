package format

import (
	"bytes"
	"hash/crc32"
	"math/rand/v2"
	"strconv"
	"testing"
)

// stdCastagnoli is the reference: the Castagnoli table of hash/crc32,
// used only through crc32.Update and crc32.Checksum (hash/crc32's own
// code), never through updateCastagnoli. Where updateCastagnoli is
// hash/crc32 itself (wasm, purego), bitwiseCRC32C is the independent
// check.
var stdCastagnoli = crc32.MakeTable(crc32.Castagnoli)

// bitwiseCRC32C is CRC-32C one bit at a time, the definition (reflected
// polynomial 0x82f63b78): a second reference that shares no table or code
// with hash/crc32.
func bitwiseCRC32C(crc uint32, p []byte) uint32 {
	crc = ^crc
	for _, b := range p {
		crc ^= uint32(b)
		for range 8 {
			crc = crc>>1 ^ 0x82f63b78&-(crc&1)
		}
	}
	return ^crc
}

// TestCRC32CMatchesStdlib: whichever path updateCastagnoli takes on this
// platform (AVX-512 folding, hash/crc32's SSE4.2 or slicing-by-8 under
// GOOS=js), CRC32C and UpdateCRC32C agree with hash/crc32 for every length
// to 1100 bytes, at every alignment to 16, from random initial values,
// with lengths to 64 KiB sampled, and split in two at random; and with the
// bitwise definition for every length to 300.
func TestCRC32CMatchesStdlib(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 70000)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	check := func(off, n int, init uint32) {
		t.Helper()
		p := buf[off : off+n]
		want := crc32.Update(init, stdCastagnoli, p)
		if got := UpdateCRC32C(init, p); got != want {
			t.Fatalf("UpdateCRC32C(%#x, %d bytes at %d) = %#x, want %#x", init, n, off, got, want)
		}
		if got, want := CRC32C(p), crc32.Checksum(p, stdCastagnoli); got != want {
			t.Fatalf("CRC32C(%d bytes at %d) = %#x, want %#x", n, off, got, want)
		}
		if k := rng.IntN(n + 1); UpdateCRC32C(UpdateCRC32C(init, p[:k]), p[k:]) != want {
			t.Fatalf("UpdateCRC32C of %d bytes at %d in two at %d differs", n, off, k)
		}
	}
	for off := range 16 {
		for n := 0; n <= 1100; n++ {
			check(off, n, rng.Uint32())
		}
	}
	for range 500 {
		check(rng.IntN(64), rng.IntN(65536), rng.Uint32())
	}
	check(0, len(buf), 0)
	for n := 0; n <= 300; n++ {
		init := rng.Uint32()
		if got, want := UpdateCRC32C(init, buf[n:2*n]), bitwiseCRC32C(init, buf[n:2*n]); got != want {
			t.Fatalf("UpdateCRC32C(%#x, %d bytes) = %#x, bitwise %#x", init, n, got, want)
		}
	}
	// Known answers: the check value of the CRC-32C catalogue, and 32
	// zeros and 32 0xff bytes (RFC 3720, B.4).
	ones := bytes.Repeat([]byte{0xff}, 32)
	for _, tt := range []struct {
		in   []byte
		want uint32
	}{{[]byte("123456789"), 0xe3069283}, {make([]byte, 32), 0x8a9136aa}, {ones, 0x62a8ab43}} {
		if got := CRC32C(tt.in); got != tt.want {
			t.Errorf("CRC32C(%x) = %#x, want %#x", tt.in, got, tt.want)
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
				sinkCRC2 += crc32.Checksum(p, stdCastagnoli)
			}
		})
	}
}

var sinkCRC2 uint32
