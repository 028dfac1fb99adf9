//go:build amd64 && !purego

package format

import (
	"hash/crc32"
	"sync"

	"github.com/segkit/segkit/internal/cpu"
)

// castagnoliAVX512 folds p into crc 256 bytes at a time with VPCLMULQDQ on
// ZMM registers; see crc32c_amd64.s.
//
//go:noescape
func castagnoliAVX512(crc uint32, p []byte) uint32

// castagnoliHybrid folds all but the last 72*m bytes of p like
// castagnoliAVX512 and, in the loop over its first 256*m, runs the CRC32
// instruction over those last 72*m as three streams; k holds the shifts
// that join them (row m of hybridZMM's shifts). See crc32c_amd64.s.
//
//go:noescape
func castagnoliHybrid(crc uint32, p []byte, m int, k *[3]uint64) uint32

// castagnoliAVX2 is castagnoliAVX512 on eight YMM registers, for CPUs with
// VPCLMULQDQ but not AVX-512; see crc32c_amd64.s.
//
//go:noescape
func castagnoliAVX2(crc uint32, p []byte) uint32

// castagnoliHybridAVX2 is castagnoliHybrid on YMM registers, with streams
// of 64 bytes an iteration (row m of hybridYMM's shifts).
//
//go:noescape
func castagnoliHybridAVX2(crc uint32, p []byte, m int, k *[3]uint64) uint32

// useAVX512 reports whether the CPU has AVX-512F and VPCLMULQDQ, and the
// OS saves the ZMM state (package cpu).
var useAVX512 = useCLMUL && cpu.VPCLMULQDQ() && cpu.AVX512F()

// useAVX2 reports whether the CPU has AVX2 and VPCLMULQDQ, and the OS
// saves the YMM state.
var useAVX2 = useCLMUL && cpu.VPCLMULQDQ() && cpu.AVX2()

// useCLMUL reports whether the CPU has PCLMULQDQ and SSE4.1 (for PEXTRD),
// which the final reduction uses.
var useCLMUL = cpu.PCLMULQDQ()

// foldThreshold is the length from which folding beats hash/crc32's
// SSE4.2 three-way loop (at 256 bytes: 6 ns against 9 ns with AVX-512 on
// Zen 4; 16 against 33 with AVX2 on Zen 3).
const foldThreshold = 256

func updateCastagnoli(crc uint32, p []byte) uint32 {
	if !useAVX512 && !useAVX2 || len(p) < foldThreshold {
		return crc32.Update(crc, castagnoli, p)
	}
	if h := hybrid; h != nil && len(p) >= h.min*h.block() {
		return h.update(crc, p)
	}
	n := len(p) &^ 15
	if useAVX512 {
		crc = ^castagnoliAVX512(^crc, p[:n])
	} else {
		crc = ^castagnoliAVX2(^crc, p[:n])
	}
	return updateTail(crc, p[n:])
}

// updateTail checksums the last 0 to 15 bytes. Without them it returns at
// once: hash/crc32's Update costs 4 to 5 ns even for nothing, a third of a
// 256-byte fold.
func updateTail(crc uint32, p []byte) uint32 {
	if len(p) == 0 {
		return crc
	}
	return crc32.Update(crc, castagnoli, p)
}

// The hybrid loops: each iteration folds 256 bytes with VPCLMULQDQ and
// checksums three streams with CRC32. On AMD's Zen 3 (YMM) and Zen 4 (ZMM)
// a carry-less multiply of the full register issues every other cycle, so
// the CRC32 unit has room beside it. Measured (go test -bench 'CRC32C$'
// -count 5 ./format/, one session each), 16 KiB:
//
//   - Zen 4: 288-297 ns folding alone, 249-256 hybrid (3 x 24 bytes an
//     iteration; 3 x 16 gave 64 GB/s against 69, 3 x 32 gave 58); 110 KiB
//     in 1.96-1.99 us and 1.56-1.71 us.
//   - Zen 3: 645-653 ns folding alone, 444-448 hybrid (3 x 64 bytes; 3 x 48
//     and 3 x 80 were slower), hash/crc32 703-718 (-count 4).
//
// On an Intel Xeon with AVX-512 (family 6, 2026-12-07), where a ZMM
// multiply issues every cycle, the ZMM hybrid gained nothing (-count 4):
// 16 KiB in 145-149 ns against 147-150 folding alone, 110 KiB in
// 1.11-1.16 us against 1.01-1.03 (the YMM hybrid there: 244-256 ns against
// 286-291 for the YMM fold, both behind the ZMM fold; hash/crc32 601-607).
// So the hybrids are used on AMD family 19h only; BenchmarkCRC32C runs
// every loop the CPU can run, to choose on a new kind of machine.

// hybridMaxM is the most iterations of one call, and the last row of the
// shift tables. The calls of a long input take this many (the last
// fewer); on Zen 3, 251 iterations in one call and in calls of 128 and 123
// ran the same (3.0 and 3.04 us on 110 KiB of written bytes).
const hybridMaxM = 128

// A hybridLoop is one of the hybrid routines and its geometry.
type hybridLoop struct {
	fn     func(crc uint32, p []byte, m int, k *[3]uint64) uint32
	stream int // bytes of each of the three CRC32 streams an iteration
	// min is the fewest iterations that pay for the join: on Zen 3 two
	// were 0-3 ns slower than folding alone, three 5-8 ns faster.
	min    int
	shifts func() *shiftTable
}

var (
	hybridZMM = &hybridLoop{fn: castagnoliHybrid, stream: 24, min: 4,
		shifts: sync.OnceValue(func() *shiftTable { return computeHybridShifts(24) })}
	hybridYMM = &hybridLoop{fn: castagnoliHybridAVX2, stream: 64, min: 3,
		shifts: sync.OnceValue(func() *shiftTable { return computeHybridShifts(64) })}
)

// block is the bytes of an iteration: 256 folded and three streams.
func (h *hybridLoop) block() int { return 256 + 3*h.stream }

// update continues crc over p, at least one block, in calls of at most
// hybridMaxM iterations.
func (h *hybridLoop) update(crc uint32, p []byte) uint32 {
	shifts, block := h.shifts(), h.block()
	for {
		m := len(p) / block
		if m > hybridMaxM {
			n := hybridMaxM * block
			crc = ^h.fn(^crc, p[:n], hybridMaxM, &shifts[hybridMaxM])
			p = p[n:]
			continue
		}
		// The last call, of 1 to hybridMaxM iterations, also folds the
		// 16-byte blocks past them, leaving fewer than 16 bytes to
		// hash/crc32.
		n := m*block + (len(p)-m*block)&^15
		crc = ^h.fn(^crc, p[:n], m, &shifts[m])
		return updateTail(crc, p[n:])
	}
}

// hybrid is the hybrid loop this CPU runs, or nil: the ZMM one on Zen 4
// and the YMM one on Zen 3, AMD family 19h with and without AVX-512.
var hybrid = func() *hybridLoop {
	switch {
	case cpu.AMDFamily() != 0x19:
		return nil
	case useAVX512:
		return hybridZMM
	case useAVX2:
		return hybridYMM
	}
	return nil
}()

// A shiftTable holds a hybrid loop's multipliers by iteration count.
type shiftTable [hybridMaxM + 1][3]uint64

// computeHybridShifts returns the table whose row m holds x^(8L-33) mod P,
// bit-reflected, for L = 3sm, 2sm and sm bytes, s the stream's bytes an
// iteration: the multipliers that shift a CRC register past L bytes (see
// castagnoliHybrid). Each table is computed on first use (27 us), not when
// the package starts.
func computeHybridShifts(s int) (k *shiftTable) {
	k = new(shiftTable)
	// x^(8L-33) for L = s*j: start at j = 1 and step by x^(8s).
	step := xPowMod(8 * s)
	x := xPowMod(8*s - 33)
	var byM [3*hybridMaxM + 1]uint32 // byM[j] = x^(8sj-33) mod P
	for j := 1; j < len(byM); j++ {
		byM[j] = x
		x = mulMod(x, step)
	}
	for m := 1; m < len(k); m++ {
		k[m] = [3]uint64{uint64(byM[3*m]), uint64(byM[2*m]), uint64(byM[m])}
	}
	return k
}

// mulMod returns a*b mod P for bit-reflected a and b (bit 31 is x^0).
func mulMod(a, b uint32) uint32 {
	var p uint32
	for range 32 {
		if a&(1<<31) != 0 {
			p ^= b
		}
		a <<= 1
		b = b>>1 ^ (b&1)*0x82f63b78 // b *= x
	}
	return p
}

// xPowMod returns x^n mod P, bit-reflected.
func xPowMod(n int) uint32 {
	r, sq := uint32(1)<<31, uint32(1)<<30 // x^0, x^1
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			r = mulMod(r, sq)
		}
		sq = mulMod(sq, sq)
	}
	return r
}
