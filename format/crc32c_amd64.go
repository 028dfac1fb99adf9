//go:build amd64 && !purego

package format

import "hash/crc32"

func cpuid1() (ecx uint32)

// castagnoliAVX512 folds p into crc 256 bytes at a time with VPCLMULQDQ on
// ZMM registers; see crc32c_amd64.s.
//
//go:noescape
func castagnoliAVX512(crc uint32, p []byte) uint32

func cpuid7() (ebx, ecx uint32)
func xgetbv0() (eax uint32)

// useAVX512 reports whether the CPU has AVX-512F (CPUID.7:EBX bit 16) and
// VPCLMULQDQ (CPUID.7:ECX bit 10), and the OS saves the ZMM state (XCR0
// bits 1, 2, 5, 6 and 7, after OSXSAVE: CPUID.1:ECX bit 27).
var useAVX512 = func() bool {
	if !useCLMUL || cpuid1()&(1<<27) == 0 || xgetbv0()&0xe6 != 0xe6 {
		return false
	}
	ebx, ecx := cpuid7()
	return ebx&(1<<16) != 0 && ecx&(1<<10) != 0
}()

// useCLMUL reports whether the CPU has PCLMULQDQ (CPUID.1:ECX bit 1) and
// SSE4.1 (bit 19, for PEXTRD), which the final reduction uses.
var useCLMUL = func() bool {
	ecx := cpuid1()
	return ecx&(1<<1) != 0 && ecx&(1<<19) != 0
}()

// avx512Threshold is the length from which folding beats hash/crc32's
// SSE4.2 three-way loop (at 256 bytes: 6 ns against 9 ns).
const avx512Threshold = 256

func updateCastagnoli(crc uint32, p []byte) uint32 {
	if !useAVX512 || len(p) < avx512Threshold {
		return crc32.Update(crc, castagnoli, p)
	}
	n := len(p) &^ 15
	crc = ^castagnoliAVX512(^crc, p[:n])
	return crc32.Update(crc, castagnoli, p[n:])
}
