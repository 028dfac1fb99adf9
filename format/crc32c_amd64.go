//go:build amd64 && !purego

package format

import (
	"hash/crc32"
	"sync"
)

func cpuid1() (eax, ecx uint32)

// castagnoliAVX512 folds p into crc 256 bytes at a time with VPCLMULQDQ on
// ZMM registers; see crc32c_amd64.s.
//
//go:noescape
func castagnoliAVX512(crc uint32, p []byte) uint32

// castagnoliHybrid folds all but the last 72*m bytes of p like
// castagnoliAVX512 and, in the loop over its first 256*m, runs the CRC32
// instruction over those last 72*m as three streams; k holds the shifts
// that join them (row m of hybridShifts). See crc32c_amd64.s.
//
//go:noescape
func castagnoliHybrid(crc uint32, p []byte, m int, k *[3]uint64) uint32

func cpuid0() (ebx, ecx, edx uint32)
func cpuid7() (ebx, ecx uint32)
func xgetbv0() (eax uint32)

// useAVX512 reports whether the CPU has AVX-512F (CPUID.7:EBX bit 16) and
// VPCLMULQDQ (CPUID.7:ECX bit 10), and the OS saves the ZMM state (XCR0
// bits 1, 2, 5, 6 and 7, after OSXSAVE: CPUID.1:ECX bit 27).
var useAVX512 = func() bool {
	if _, ecx := cpuid1(); !useCLMUL || ecx&(1<<27) == 0 || xgetbv0()&0xe6 != 0xe6 {
		return false
	}
	ebx, ecx := cpuid7()
	return ebx&(1<<16) != 0 && ecx&(1<<10) != 0
}()

// useCLMUL reports whether the CPU has PCLMULQDQ (CPUID.1:ECX bit 1) and
// SSE4.1 (bit 19, for PEXTRD), which the final reduction uses.
var useCLMUL = func() bool {
	_, ecx := cpuid1()
	return ecx&(1<<1) != 0 && ecx&(1<<19) != 0
}()

// avx512Threshold is the length from which folding beats hash/crc32's
// SSE4.2 three-way loop (at 256 bytes: 6 ns against 9 ns).
const avx512Threshold = 256

func updateCastagnoli(crc uint32, p []byte) uint32 {
	if !useAVX512 || len(p) < avx512Threshold {
		return crc32.Update(crc, castagnoli, p)
	}
	if useHybrid && len(p) >= hybridMin*hybridBlock {
		shifts := hybridShifts()
		for len(p) >= 2*hybridMaxM*hybridBlock {
			n := hybridMaxM * hybridBlock
			crc = ^castagnoliHybrid(^crc, p[:n], hybridMaxM, &shifts[hybridMaxM])
			p = p[n:]
		}
		// The last call, of hybridMin to 2*hybridMaxM-1 iterations, also
		// folds the 16-byte blocks past them (at most 20), leaving fewer
		// than 16 bytes to hash/crc32.
		m := len(p) / hybridBlock
		n := m*hybridBlock + (len(p)-m*hybridBlock)&^15
		crc = ^castagnoliHybrid(^crc, p[:n], m, &shifts[m])
		return updateTail(crc, p[n:])
	}
	n := len(p) &^ 15
	crc = ^castagnoliAVX512(^crc, p[:n])
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

// The hybrid loop: each iteration folds 256 bytes with VPCLMULQDQ and
// checksums 3 x 24 with CRC32. On Zen 4 a ZMM carry-less multiply issues
// every other cycle, so an iteration's eight take about 15 cycles, in which
// the CRC32 unit has room for nine more instructions. Measured there (go
// test -bench 'CRC32C$' -count 5 ./format/, one session): 16 KiB in
// 288-297 ns folding alone, 249-256 hybrid; 110 KiB in 1.96-1.99 us and
// 1.56-1.71 us. Elsewhere only folding was measured (Intel's AVX-512 cores
// multiply at full rate, so the nine would lengthen the iteration), so the
// hybrid is used on Zen 4 only.
const (
	hybridBlock = 328 // bytes per iteration: 256 folded, 3 x 24 by CRC32
	hybridMaxM  = 128 // iterations per call (41 KiB) while 82 KiB remain
	hybridMin   = 4   // fewer iterations do not pay for the join
)

// useHybrid reports whether this is an AMD family 19h CPU with AVX-512 (Zen
// 4: Zen 3, also family 19h, has no AVX-512).
var useHybrid = func() bool {
	if !useAVX512 {
		return false
	}
	ebx, ecx, edx := cpuid0()
	amd := ebx == 0x68747541 && edx == 0x69746e65 && ecx == 0x444d4163 // "AuthenticAMD"
	eax, _ := cpuid1()
	family := eax >> 8 & 0xf
	if family == 0xf {
		family += eax >> 20 & 0xff
	}
	return amd && family == 0x19
}()

// hybridShifts returns the table whose row m holds x^(8L-33) mod P,
// bit-reflected, for L = 72m, 48m and 24m bytes: the multipliers that shift
// a CRC register past L bytes (see castagnoliHybrid). It is computed on
// first use (27 us), not when the package starts: only Zen 4 needs it.
var hybridShifts = sync.OnceValue(computeHybridShifts)

func computeHybridShifts() (k *[2 * hybridMaxM][3]uint64) {
	k = new([2 * hybridMaxM][3]uint64)
	// x^(8L-33) for L = 24j: start at j = 1 (x^159) and step by x^192.
	step := xPowMod(8 * 24)
	s := xPowMod(8*24 - 33)
	var byM [3 * 2 * hybridMaxM]uint32 // byM[j] = x^(192j-33) mod P
	for j := 1; j < len(byM); j++ {
		byM[j] = s
		s = mulMod(s, step)
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
