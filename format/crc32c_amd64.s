//go:build amd64 && !purego

#include "textflag.h"

// CRC-32C folding with carry-less multiplication, after Intel's "Fast CRC
// Computation for Generic Polynomials Using PCLMULQDQ Instruction" (2009),
// in the bit-reflected form, widened to AVX-512: VPCLMULQDQ folds four
// 128-bit lanes per instruction, sixteen lanes (256 bytes) per iteration.
// The final 128-to-32-bit reduction is that of the Go standard library's
// IEEE routine (hash/crc32, crc32_amd64.s, BSD licence) with Castagnoli
// constants. format/crc_amd64_test.go checks every result against
// hash/crc32. (A 128-bit PCLMULQDQ version was no faster than hash/crc32's
// SSE4.2 loop on the machines measured, so there is none.) Constants, for P = 0x1EDC6F41 (gen_crc_test.go
// derives them):
//
//	k1 = (x^(4*128+32) mod P)' << 1    k2 = (x^(4*128-32) mod P)' << 1
//	k3 = (x^(128+32) mod P)' << 1      k4 = (x^(128-32) mod P)' << 1
//	k5 = (x^64 mod P)' << 1            mu = (x^64 div P)'   P' = P reflected
//
// where ' is bit reflection.

DATA k2k1<>+0(SB)/8, $0x0740eef02
DATA k2k1<>+8(SB)/8, $0x09e4addf8
GLOBL k2k1<>(SB), RODATA, $16

DATA k4k3<>+0(SB)/8, $0x0f20c0dfe
DATA k4k3<>+8(SB)/8, $0x14cd00bd6
GLOBL k4k3<>(SB), RODATA, $16

DATA pmu<>+0(SB)/8, $0x105ec76f1
DATA pmu<>+8(SB)/8, $0x0dea713f1
GLOBL pmu<>(SB), RODATA, $16

DATA k5<>+0(SB)/8, $0x0dd45aab8
GLOBL k5<>(SB), RODATA, $8

// Constants for the AVX-512 path: folding 16 lanes of 128 bits by 2048
// bits, 4 lanes by 512 bits, and one ZMM's lanes by 384, 256 and 128 bits
// into the last one (the fourth pair is zero: that lane is not moved).
DATA k2048<>+0(SB)/8, $0x0dcb17aa4
DATA k2048<>+8(SB)/8, $0x0b9e02b86
GLOBL k2048<>(SB), RODATA, $16

DATA klanes<>+0(SB)/8, $0x01c291d04
DATA klanes<>+8(SB)/8, $0x1d82c63da
DATA klanes<>+16(SB)/8, $0x1384aa63a
DATA klanes<>+24(SB)/8, $0x0ba4fc28e
DATA klanes<>+32(SB)/8, $0x0f20c0dfe
DATA klanes<>+40(SB)/8, $0x14cd00bd6
DATA klanes<>+48(SB)/8, $0
DATA klanes<>+56(SB)/8, $0
GLOBL klanes<>(SB), RODATA, $64

// func castagnoliAVX512(crc uint32, p []byte) uint32
// len(p) must be at least 256 and a multiple of 16. crc is the raw
// register (not inverted).
TEXT ·castagnoliAVX512(SB), NOSPLIT, $0
	MOVL   crc+0(FP), AX
	MOVQ   p_base+8(FP), SI
	MOVQ   p_len+16(FP), CX

	VMOVDQU64 (SI), Z1
	VMOVDQU64 64(SI), Z2
	VMOVDQU64 128(SI), Z3
	VMOVDQU64 192(SI), Z4
	VMOVD  AX, X0
	VPXORQ Z0, Z1, Z1
	ADDQ   $256, SI
	SUBQ   $256, CX
	CMPQ   CX, $256
	JB     fold4z

	VBROADCASTI32X4 k2048<>+0(SB), Z0

loop256:
	VPCLMULQDQ $0x00, Z0, Z1, Z5
	VPCLMULQDQ $0x11, Z0, Z1, Z1
	VPCLMULQDQ $0x00, Z0, Z2, Z6
	VPCLMULQDQ $0x11, Z0, Z2, Z2
	VPCLMULQDQ $0x00, Z0, Z3, Z7
	VPCLMULQDQ $0x11, Z0, Z3, Z3
	VPCLMULQDQ $0x00, Z0, Z4, Z8
	VPCLMULQDQ $0x11, Z0, Z4, Z4
	VPTERNLOGD $0x96, (SI), Z5, Z1
	VPTERNLOGD $0x96, 64(SI), Z6, Z2
	VPTERNLOGD $0x96, 128(SI), Z7, Z3
	VPTERNLOGD $0x96, 192(SI), Z8, Z4
	ADDQ   $256, SI
	SUBQ   $256, CX
	CMPQ   CX, $256
	JGE    loop256

fold4z:
	// Four ZMMs into one: each folds by 512 bits into the next.
	VBROADCASTI32X4 k2k1<>+0(SB), Z0
	VPCLMULQDQ $0x00, Z0, Z1, Z5
	VPCLMULQDQ $0x11, Z0, Z1, Z1
	VPTERNLOGD $0x96, Z2, Z5, Z1
	VPCLMULQDQ $0x00, Z0, Z1, Z5
	VPCLMULQDQ $0x11, Z0, Z1, Z1
	VPTERNLOGD $0x96, Z3, Z5, Z1
	VPCLMULQDQ $0x00, Z0, Z1, Z5
	VPCLMULQDQ $0x11, Z0, Z1, Z1
	VPTERNLOGD $0x96, Z4, Z5, Z1

	CMPQ   CX, $64
	JB     lanes

loop64z:
	VPCLMULQDQ $0x00, Z0, Z1, Z5
	VPCLMULQDQ $0x11, Z0, Z1, Z1
	VPTERNLOGD $0x96, (SI), Z5, Z1
	ADDQ   $64, SI
	SUBQ   $64, CX
	CMPQ   CX, $64
	JGE    loop64z

lanes:
	// The four lanes of Z1 into one XMM: lane i folds by (3-i)*128 bits.
	VMOVDQU64 klanes<>+0(SB), Z0
	VPCLMULQDQ $0x00, Z0, Z1, Z5
	VPCLMULQDQ $0x11, Z0, Z1, Z6
	VPXORQ Z6, Z5, Z5
	// Lane 3 was multiplied by zero: put it back as it is.
	VEXTRACTI32X4 $3, Z1, X7
	VEXTRACTI32X4 $1, Z5, X8
	VEXTRACTI32X4 $2, Z5, X9
	VEXTRACTI32X4 $3, Z5, X10
	VPXOR  X8, X5, X1
	VPTERNLOGD $0x96, X10, X9, X1
	VPXOR  X7, X1, X1
	VZEROUPPER

	MOVOU  k4k3<>+0(SB), X0
	CMPQ   CX, $16
	JB     reducez

loop16z:
	MOVOU  (SI), X10
	MOVOA  X1, X5
	PCLMULQDQ $0x00, X0, X1
	PCLMULQDQ $0x11, X0, X5
	PXOR   X5, X1
	PXOR   X10, X1
	ADDQ   $16, SI
	SUBQ   $16, CX
	CMPQ   CX, $16
	JGE    loop16z

reducez:
	PCMPEQB X3, X3
	PCLMULQDQ $0x01, X1, X0
	PSRLDQ $8, X1
	PXOR   X0, X1

	MOVOA  X1, X2
	MOVQ   k5<>+0(SB), X0
	PSRLQ  $32, X3

	PSRLDQ $4, X2
	PAND   X3, X1
	PCLMULQDQ $0x00, X0, X1
	PXOR   X2, X1

	MOVOU  pmu<>+0(SB), X0

	MOVOA  X1, X2
	PAND   X3, X1
	PCLMULQDQ $0x10, X0, X1
	PAND   X3, X1
	PCLMULQDQ $0x00, X0, X1
	PXOR   X2, X1

	PEXTRD $1, X1, AX
	MOVL   AX, ret+32(FP)
	RET

// func cpuid7() (ebx, ecx uint32)
TEXT ·cpuid7(SB), NOSPLIT, $0-8
	MOVL   $7, AX
	XORL   CX, CX
	CPUID
	MOVL   BX, ebx+0(FP)
	MOVL   CX, ecx+4(FP)
	RET

// func xgetbv0() (eax uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-4
	XORL   CX, CX
	XGETBV
	MOVL   AX, eax+0(FP)
	RET

// func cpuid1() (ecx uint32)
TEXT ·cpuid1(SB), NOSPLIT, $0-4
	MOVL   $1, AX
	XORL   CX, CX
	CPUID
	MOVL   CX, ecx+0(FP)
	RET
