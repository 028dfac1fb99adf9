//go:build amd64 && !purego

package format

import (
	"hash/crc32"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestCLMULMatchesStdlib checks the AVX-512 folding routine against hash/crc32 for
// every length up to 4 KiB and a sample beyond, at random alignments and
// initial values.
func TestCLMULMatchesStdlib(t *testing.T) {
	if !useAVX512 && !useAVX2 {
		t.Skip("no AVX-512 VPCLMULQDQ on this CPU: CRC32C is hash/crc32's")
	}
	t.Logf("PCLMULQDQ: %v, AVX2 VPCLMULQDQ: %v, AVX-512 VPCLMULQDQ: %v", useCLMUL, useAVX2, useAVX512)
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
		if n >= 256 && useAVX2 {
			m := n &^ 15
			if got, want := ^castagnoliAVX2(^init, p[:m]), crc32.Update(init, castagnoli, p[:m]); got != want {
				t.Fatalf("castagnoliAVX2(len %d) = %#x, want %#x", m, got, want)
			}
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
	for _, n := range []int{64, 256, 512, 1024, 2048, 16 * 1024, 110 * 1024} {
		// Written, not left as make returns it: pages never written can
		// all be the kernel's one zero page, and the hybrid's four streams
		// then read one physical page (110 KiB: 7.0-8.0 us against 4.0-5.0
		// on written bytes, folding alone 4.6-5.6 either way).
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(i * 7)
		}
		b.Run("segkit/"+itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				sinkCRC += CRC32C(p)
			}
		})
		// Every loop this CPU can run, chosen or not, so that one run
		// shows which to choose on a new kind of machine: folding alone
		// on ZMM and YMM registers, and the two hybrids.
		for _, l := range []struct {
			name string
			can  bool
			fn   func([]byte) uint32
		}{
			{"fold-zmm", useAVX512 && n >= 256, func(p []byte) uint32 { return castagnoliAVX512(0, p[:len(p)&^15]) }},
			{"fold-ymm", useAVX2 && n >= 256, func(p []byte) uint32 { return castagnoliAVX2(0, p[:len(p)&^15]) }},
			{"hybrid-zmm", useAVX512 && n >= hybridZMM.block(), func(p []byte) uint32 { return hybridZMM.update(0, p) }},
			{"hybrid-ymm", useAVX2 && n >= hybridYMM.block(), func(p []byte) uint32 { return hybridYMM.update(0, p) }},
		} {
			if !l.can {
				continue
			}
			b.Run(l.name+"/"+itoa(n), func(b *testing.B) {
				b.SetBytes(int64(n))
				b.ReportAllocs()
				for b.Loop() {
					sinkCRC += l.fn(p)
				}
			})
		}
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

// TestHybridMatchesStdlib checks each hybrid routine this CPU can run
// (the ZMM one needs AVX-512 VPCLMULQDQ, the YMM one AVX2 VPCLMULQDQ, both
// SSE4.2) directly for every iteration count it is called with, whether or
// not it is the one chosen here, and its shift table against x^n mod P
// computed one multiplication by x at a time.
func TestHybridMatchesStdlib(t *testing.T) {
	t.Logf("hybrid chosen on this CPU: ZMM %v, YMM %v", hybrid == hybridZMM, hybrid == hybridYMM)
	ran := 0
	for _, tc := range []struct {
		name string
		h    *hybridLoop
		can  bool
	}{{"ZMM", hybridZMM, useAVX512}, {"YMM", hybridYMM, useAVX2}} {
		if !tc.can {
			t.Logf("%s: not on this CPU", tc.name)
			continue
		}
		ran++
		t.Run(tc.name, func(t *testing.T) { testHybrid(t, tc.h) })
	}
	if ran == 0 {
		t.Skip("no VPCLMULQDQ on this CPU")
	}
}

func testHybrid(t *testing.T, h *hybridLoop) {
	shifts := h.shifts()
	// x^n by repeated multiplication by x, reflected.
	slow := func(n int) uint32 {
		r := uint32(1) << 31
		for range n {
			r = r>>1 ^ (r&1)*0x82f63b78
		}
		return r
	}
	for _, m := range []int{1, 2, 3, 46, hybridMaxM - 1, hybridMaxM} {
		for i, l := range []int{3 * h.stream * m, 2 * h.stream * m, h.stream * m} {
			if got, want := shifts[m][i], uint64(slow(8*l-33)); got != want {
				t.Fatalf("shifts[%d][%d] = %#x, want x^%d mod P = %#x", m, i, got, want, 8*l-33)
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, (hybridMaxM+1)*h.block()+64)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	// Every iteration count, with up to block-1 bytes folded after the
	// iterations, in 16-byte blocks (as the caller leaves them).
	for m := 1; m <= hybridMaxM; m++ {
		for _, extra := range []int{0, 16 * rng.IntN(h.block()/16+1)} {
			off := rng.IntN(64)
			p := buf[off : off+m*h.block()+extra]
			init := rng.Uint32()
			if got, want := ^h.fn(^init, p, m, &shifts[m]), crc32.Update(init, castagnoli, p); got != want {
				t.Fatalf("m %d, %d more, at %d: %#x, want %#x", m, extra, off, got, want)
			}
		}
	}
	// Inputs long enough for several calls, through update (whether or
	// not this hybrid is chosen) and through UpdateCRC32C (whichever loop
	// it chooses).
	long := make([]byte, 5*hybridMaxM*h.block()+333)
	for i := range long {
		long[i] = byte(rng.Uint32())
	}
	for _, n := range []int{h.block(), h.min*h.block() - 1, h.min * h.block(), (hybridMaxM+1)*h.block() - 1, (hybridMaxM + 1) * h.block(), 2*hybridMaxM*h.block() + 15, 3*hybridMaxM*h.block() + 16, len(long)} {
		want := crc32.Update(7, castagnoli, long[:n])
		if got := h.update(7, long[:n]); got != want {
			t.Fatalf("update(%d bytes) = %#x, want %#x", n, got, want)
		}
		if got := UpdateCRC32C(7, long[:n]); got != want {
			t.Fatalf("UpdateCRC32C(%d bytes) = %#x, want %#x", n, got, want)
		}
	}
}

// TestFoldConstants derives the folding constants of crc32c_amd64.s, as
// its header gives them, (x^n mod P)' << 1, and checks each DATA line
// against them (mu, the Barrett quotient, is left to the CRC tests).
func TestFoldConstants(t *testing.T) {
	src, err := os.ReadFile("crc32c_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	// The exponent n of each constant, by symbol and offset; -1: zero.
	want := map[string]int{
		"k2k1+0": 4*128 + 32, "k2k1+8": 4*128 - 32,
		"k4k3+0": 128 + 32, "k4k3+8": 128 - 32,
		"k5+0":    64,
		"k2048+0": 2048 + 32, "k2048+8": 2048 - 32,
		"k1024+0": 1024 + 32, "k1024+8": 1024 - 32,
		"klanes+0": 3*128 + 32, "klanes+8": 3*128 - 32,
		"klanes+16": 2*128 + 32, "klanes+24": 2*128 - 32,
		"klanes+32": 128 + 32, "klanes+40": 128 - 32,
		"klanes+48": -1, "klanes+56": -1,
	}
	re := regexp.MustCompile(`(?m)^DATA (\w+)<>\+(\d+)\(SB\)/8, \$(0x[0-9a-f]+|0)$`)
	seen := 0
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		key := m[1] + "+" + m[2]
		got, err := strconv.ParseUint(m[3], 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		if m[1] == "pmu" {
			if m[2] == "0" && got != uint64(0x82f63b78)<<1|1 {
				t.Errorf("pmu+0 = %#x, want P reflected, %#x", got, uint64(0x82f63b78)<<1|1)
			}
			continue
		}
		n, ok := want[key]
		if !ok {
			t.Errorf("DATA %s: no derivation in this test", key)
			continue
		}
		seen++
		w := uint64(0)
		if n >= 0 {
			w = uint64(xPowMod(n)) << 1
		}
		if got != w {
			t.Errorf("%s = %#x, want (x^%d mod P)' << 1 = %#x", key, got, n, w)
		}
	}
	if seen != len(want) {
		t.Errorf("checked %d constants of %d", seen, len(want))
	}
}
