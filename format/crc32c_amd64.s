//go:build amd64 && !purego

#include "textflag.h"

// CRC-32C folding with carry-less multiplication, after Intel's "Fast CRC
// Computation for Generic Polynomials Using PCLMULQDQ Instruction" (2009),
// in the bit-reflected form, widened to AVX-512: VPCLMULQDQ folds four
// 128-bit lanes per instruction, sixteen lanes (256 bytes) per iteration.
// The final 128-to-32-bit reduction is that of the Go standard library's
// IEEE routine (hash/crc32, crc32_amd64.s, BSD licence) with Castagnoli
// constants. The same loop runs on YMM registers (eight accumulators of
// two lanes) where the CPU has VPCLMULQDQ and AVX2 but not AVX-512.
// format/crc_amd64_test.go checks every result against hash/crc32. (A
// 128-bit PCLMULQDQ version was no faster than hash/crc32's
// SSE4.2 loop on the machines measured, so there is none.) Constants, for
// P = 0x1EDC6F41 (TestFoldConstants derives them and checks each DATA
// line):
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

// LOAD256 loads the first 256 bytes at SI into the accumulators Z1-Z4,
// the CRC register in AX added to the first, and moves SI past them.
#define LOAD256 \
	VMOVDQU64 (SI), Z1; \
	VMOVDQU64 64(SI), Z2; \
	VMOVDQU64 128(SI), Z3; \
	VMOVDQU64 192(SI), Z4; \
	VMOVD  AX, X0; \
	VPXORQ Z0, Z1, Z1; \
	ADDQ   $256, SI

// FOLD256 folds each accumulator Z1-Z4 by 2048 bits (the k2048 constants
// in Z0) and adds the next 256 bytes at SI, then moves SI past them.
#define FOLD256 \
	VPCLMULQDQ $0x00, Z0, Z1, Z5; \
	VPCLMULQDQ $0x11, Z0, Z1, Z1; \
	VPCLMULQDQ $0x00, Z0, Z2, Z6; \
	VPCLMULQDQ $0x11, Z0, Z2, Z2; \
	VPCLMULQDQ $0x00, Z0, Z3, Z7; \
	VPCLMULQDQ $0x11, Z0, Z3, Z3; \
	VPCLMULQDQ $0x00, Z0, Z4, Z8; \
	VPCLMULQDQ $0x11, Z0, Z4, Z4; \
	VPTERNLOGD $0x96, (SI), Z5, Z1; \
	VPTERNLOGD $0x96, 64(SI), Z6, Z2; \
	VPTERNLOGD $0x96, 128(SI), Z7, Z3; \
	VPTERNLOGD $0x96, 192(SI), Z8, Z4; \
	ADDQ   $256, SI

// FOLD4Z folds Z1..Z4 into Z1, each by 512 bits into the next, with the
// k2k1 constants in Z0.
#define FOLD4Z \
	VPCLMULQDQ $0x00, Z0, Z1, Z5; \
	VPCLMULQDQ $0x11, Z0, Z1, Z1; \
	VPTERNLOGD $0x96, Z2, Z5, Z1; \
	VPCLMULQDQ $0x00, Z0, Z1, Z5; \
	VPCLMULQDQ $0x11, Z0, Z1, Z1; \
	VPTERNLOGD $0x96, Z3, Z5, Z1; \
	VPCLMULQDQ $0x00, Z0, Z1, Z5; \
	VPCLMULQDQ $0x11, Z0, Z1, Z1; \
	VPTERNLOGD $0x96, Z4, Z5, Z1

// LANES folds the four 128-bit lanes of Z1 into X1: lane i by (3-i)*128
// bits; lane 3 is multiplied by zero (klanes' fourth pair) and put back as
// it is. It ends with VZEROUPPER: what follows is SSE.
#define LANES \
	VMOVDQU64 klanes<>+0(SB), Z0; \
	VPCLMULQDQ $0x00, Z0, Z1, Z5; \
	VPCLMULQDQ $0x11, Z0, Z1, Z6; \
	VPXORQ Z6, Z5, Z5; \
	VEXTRACTI32X4 $3, Z1, X7; \
	VEXTRACTI32X4 $1, Z5, X8; \
	VEXTRACTI32X4 $2, Z5, X9; \
	VEXTRACTI32X4 $3, Z5, X10; \
	VPXOR  X8, X5, X1; \
	VPTERNLOGD $0x96, X10, X9, X1; \
	VPXOR  X7, X1, X1; \
	VZEROUPPER

// REDUCE reduces the 128 bits of X1 to the 32-bit CRC register in AX, with
// the k4k3 constants in X0 (Barrett reduction with k5 and pmu).
#define REDUCE \
	PCMPEQB X3, X3; \
	PCLMULQDQ $0x01, X1, X0; \
	PSRLDQ $8, X1; \
	PXOR   X0, X1; \
	MOVOA  X1, X2; \
	MOVQ   k5<>+0(SB), X0; \
	PSRLQ  $32, X3; \
	PSRLDQ $4, X2; \
	PAND   X3, X1; \
	PCLMULQDQ $0x00, X0, X1; \
	PXOR   X2, X1; \
	MOVOU  pmu<>+0(SB), X0; \
	MOVOA  X1, X2; \
	PAND   X3, X1; \
	PCLMULQDQ $0x10, X0, X1; \
	PAND   X3, X1; \
	PCLMULQDQ $0x00, X0, X1; \
	PXOR   X2, X1; \
	PEXTRD $1, X1, AX

// FOLD16 folds X1 by 128 bits (the k4k3 constants in X0) and adds the 16
// bytes at SI.
#define FOLD16 \
	MOVOU  (SI), X10; \
	MOVOA  X1, X5; \
	PCLMULQDQ $0x00, X0, X1; \
	PCLMULQDQ $0x11, X0, X5; \
	PXOR   X5, X1; \
	PXOR   X10, X1

// TAIL folds what CX counts of SI (a multiple of 16 bytes, any number)
// into the four ZMM accumulators Z1-Z4 and reduces them to the CRC
// register in AX: the four into one by 512 bits each, 64 bytes at a time
// into that one, its lanes into one XMM, 16 bytes at a time into that,
// then REDUCE.
#define TAIL \
	VBROADCASTI32X4 k2k1<>+0(SB), Z0; \
	FOLD4Z; \
	CMPQ   CX, $64; \
	JB     lanes; \
loop64z: \
	VPCLMULQDQ $0x00, Z0, Z1, Z5; \
	VPCLMULQDQ $0x11, Z0, Z1, Z1; \
	VPTERNLOGD $0x96, (SI), Z5, Z1; \
	ADDQ   $64, SI; \
	SUBQ   $64, CX; \
	CMPQ   CX, $64; \
	JGE    loop64z; \
lanes: \
	LANES; \
	MOVOU  k4k3<>+0(SB), X0; \
	CMPQ   CX, $16; \
	JB     reducez; \
loop16z: \
	FOLD16; \
	ADDQ   $16, SI; \
	SUBQ   $16, CX; \
	CMPQ   CX, $16; \
	JGE    loop16z; \
reducez: \
	REDUCE

// func castagnoliAVX512(crc uint32, p []byte) uint32
// len(p) must be at least 256 and a multiple of 16. crc is the raw
// register (not inverted).
TEXT ·castagnoliAVX512(SB), NOSPLIT, $0
	MOVL   crc+0(FP), AX
	MOVQ   p_base+8(FP), SI
	MOVQ   p_len+16(FP), CX

	LOAD256
	SUBQ   $256, CX
	CMPQ   CX, $256
	JB     fold4z

	VBROADCASTI32X4 k2048<>+0(SB), Z0

loop256:
	FOLD256
	SUBQ   $256, CX
	CMPQ   CX, $256
	JGE    loop256

fold4z:
	TAIL
	MOVL   AX, ret+32(FP)
	RET

// SCALAR runs the CRC32 instruction over 8 bytes at off in each of the
// three scalar streams, DI, DI+BX and DI+2*BX, into R8, R9 and R10;
// SCALAR3 over 24 bytes of each.
#define SCALAR(off) \
	CRC32Q off(DI), R8; \
	CRC32Q off(DI)(BX*1), R9; \
	CRC32Q off(DI)(BX*2), R10

#define SCALAR3 \
	SCALAR(0); \
	SCALAR(8); \
	SCALAR(16)

// HYBRIDSETUP sets the registers of castagnoliHybrid (and
// castagnoliHybridAVX2) for streams of s bytes an iteration, from p's
// base in SI, its length in DI and m in CX: BX s*m (a stream's length),
// DI the first scalar stream (3*BX from the end), R11 the bytes folded
// after the m iterations, R8-R10 the scalar streams' registers, zero.
#define HYBRIDSETUP(s) \
	IMUL3Q $s, CX, BX; \
	LEAQ   (BX)(BX*2), R11; \
	SUBQ   R11, DI; \
	MOVQ   DI, R11; \
	ADDQ   SI, DI; \
	MOVQ   CX, R12; \
	SHLQ   $8, R12; \
	SUBQ   R12, R11; \
	XORL   R8, R8; \
	XORL   R9, R9; \
	XORL   R10, R10

// JOIN sets R11 to shift(AX, 3L) + shift(R8, 2L) + shift(R9, L) + R10,
// for L a stream's length, with the multipliers at DX (see
// castagnoliHybrid).
#define JOIN \
	MOVQ   AX, X1; \
	MOVQ   R8, X2; \
	MOVQ   R9, X3; \
	MOVQ   0(DX), X4; \
	MOVQ   8(DX), X5; \
	MOVQ   16(DX), X6; \
	PCLMULQDQ $0x00, X4, X1; \
	PCLMULQDQ $0x00, X5, X2; \
	PCLMULQDQ $0x00, X6, X3; \
	PXOR   X2, X1; \
	PXOR   X3, X1; \
	MOVQ   X1, AX; \
	XORL   R11, R11; \
	CRC32Q AX, R11; \
	XORL   R10, R11

// func castagnoliHybrid(crc uint32, p []byte, m int, k *[3]uint64) uint32
// len(p) is 328*m plus a multiple of 16 (m >= 1); crc is the raw register.
// All but the last 72*m bytes are folded with VPCLMULQDQ as in
// castagnoliAVX512, and in the loop over their first 256*m the CRC32
// instruction checksums the last 72*m bytes as three streams of 24*m bytes,
// each from zero: on Zen 4, where a ZMM carry-less multiply issues every
// other cycle, the scalar unit would otherwise idle through the fold.
// (Nine CRC32s to an iteration ran fastest there: 69
// GB/s on 15 KiB against 55 folding alone; six gave 64, twelve 58 and
// eighteen, in six streams, 66.) The four results are joined by shifting
// each by the bytes after it: shift(c, L) = c*x^(8L) mod P =
// CRC32(0, clmul(c, x^(8L-33) mod P)), as the reflected 32x32-bit product
// is the 64-bit polynomial x*c*K and CRC32 of 8 bytes d from zero is
// d*x^32 mod P. k holds x^(8L-33) mod P for L = 72m, 48m and 24m,
// reflected; since CRC32 is linear, the three products are added before
// the one CRC32 that reduces them.
TEXT ·castagnoliHybrid(SB), NOSPLIT, $0
	MOVL   crc+0(FP), AX
	MOVQ   p_base+8(FP), SI
	MOVQ   p_len+16(FP), DI
	MOVQ   m+32(FP), CX
	MOVQ   k+40(FP), DX
	HYBRIDSETUP(24)
	LOAD256
	VBROADCASTI32X4 k2048<>+0(SB), Z0
	DECQ   CX
	JZ     last

loop:
	SCALAR3
	FOLD256
	ADDQ   $24, DI
	DECQ   CX
	JNZ    loop

last:
	SCALAR3
	MOVQ   R11, CX
	TAIL
	JOIN
	MOVL   R11, ret+48(FP)
	RET

// The AVX2 path: the same 256-byte step on eight YMM accumulators (two
// lanes each), for CPUs with VPCLMULQDQ but no AVX-512 (Zen 3, Alder
// Lake and later client cores). k1024 folds Y1-Y4 into Y5-Y8; k2k1 (512
// bits) and klanes+16 (256) finish the tree.
DATA k1024<>+0(SB)/8, $0x06992cea2
DATA k1024<>+8(SB)/8, $0x00d3b6092
GLOBL k1024<>(SB), RODATA, $16

// LOAD256Y loads the first 256 bytes at SI into the accumulators Y1-Y8,
// the CRC register in AX added to the first, and moves SI past them.
#define LOAD256Y \
	VMOVDQU (SI), Y1; \
	VMOVDQU 32(SI), Y2; \
	VMOVDQU 64(SI), Y3; \
	VMOVDQU 96(SI), Y4; \
	VMOVDQU 128(SI), Y5; \
	VMOVDQU 160(SI), Y6; \
	VMOVDQU 192(SI), Y7; \
	VMOVDQU 224(SI), Y8; \
	VMOVD  AX, X0; \
	VPXOR  Y0, Y1, Y1; \
	ADDQ   $256, SI

// FOLDY folds accumulator a by the constants in Y0 and adds the 32 bytes
// at off(SI), with t as scratch.
#define FOLDY(a, t, off) \
	VPCLMULQDQ $0x00, Y0, a, t; \
	VPCLMULQDQ $0x11, Y0, a, a; \
	VPXOR  off(SI), t, t; \
	VPXOR  t, a, a

// INTOY folds accumulator a by the constants in Y0 into b, with t as
// scratch.
#define INTOY(a, b, t) \
	VPCLMULQDQ $0x00, Y0, a, t; \
	VPCLMULQDQ $0x11, Y0, a, a; \
	VPXOR  t, b, b; \
	VPXOR  a, b, b

// FOLD256Y folds each accumulator Y1-Y8 by 2048 bits (the k2048 constants
// in Y0) and adds the next 256 bytes at SI, then moves SI past them.
#define FOLD256Y \
	FOLDY(Y1, Y9, 0); \
	FOLDY(Y2, Y10, 32); \
	FOLDY(Y3, Y11, 64); \
	FOLDY(Y4, Y12, 96); \
	FOLDY(Y5, Y13, 128); \
	FOLDY(Y6, Y14, 160); \
	FOLDY(Y7, Y15, 192); \
	FOLDY(Y8, Y9, 224); \
	ADDQ   $256, SI

// TAILY folds what CX counts of SI (a multiple of 16 bytes, any number)
// into the eight YMM accumulators and reduces them to the CRC register in
// AX: Y1-Y4 into Y5-Y8 by 1024 bits, those into Y7-Y8 by 512, Y7 into Y8
// by 256, 32 bytes at a time into Y8, its low lane into its high one by
// 128 bits, 16 bytes at a time into that, then REDUCE.
#define TAILY \
	VBROADCASTI128 k1024<>+0(SB), Y0; \
	INTOY(Y1, Y5, Y9); \
	INTOY(Y2, Y6, Y10); \
	INTOY(Y3, Y7, Y11); \
	INTOY(Y4, Y8, Y12); \
	VBROADCASTI128 k2k1<>+0(SB), Y0; \
	INTOY(Y5, Y7, Y9); \
	INTOY(Y6, Y8, Y10); \
	VBROADCASTI128 klanes<>+16(SB), Y0; \
	INTOY(Y7, Y8, Y9); \
	CMPQ   CX, $32; \
	JB     lanesy; \
loop32y: \
	FOLDY(Y8, Y9, 0); \
	ADDQ   $32, SI; \
	SUBQ   $32, CX; \
	CMPQ   CX, $32; \
	JGE    loop32y; \
lanesy: \
	VMOVDQU k4k3<>+0(SB), X0; \
	VEXTRACTI128 $1, Y8, X9; \
	VPCLMULQDQ $0x00, X0, X8, X10; \
	VPCLMULQDQ $0x11, X0, X8, X11; \
	VPXOR  X10, X11, X1; \
	VPXOR  X9, X1, X1; \
	VZEROUPPER; \
	CMPQ   CX, $16; \
	JB     reducey; \
	FOLD16; \
reducey: \
	REDUCE

// func castagnoliAVX2(crc uint32, p []byte) uint32
// len(p) must be at least 256 and a multiple of 16. crc is the raw
// register (not inverted).
TEXT ·castagnoliAVX2(SB), NOSPLIT, $0
	MOVL   crc+0(FP), AX
	MOVQ   p_base+8(FP), SI
	MOVQ   p_len+16(FP), CX

	LOAD256Y
	SUBQ   $256, CX
	CMPQ   CX, $256
	JB     tail

	VBROADCASTI128 k2048<>+0(SB), Y0

loop256:
	FOLD256Y
	SUBQ   $256, CX
	CMPQ   CX, $256
	JGE    loop256

tail:
	TAILY
	MOVL   AX, ret+32(FP)
	RET

// SCALAR8 runs the CRC32 instruction over 64 bytes of each scalar stream.
#define SCALAR8 \
	SCALAR(0); \
	SCALAR(8); \
	SCALAR(16); \
	SCALAR(24); \
	SCALAR(32); \
	SCALAR(40); \
	SCALAR(48); \
	SCALAR(56)

// func castagnoliHybridAVX2(crc uint32, p []byte, m int, k *[3]uint64) uint32
// castagnoliHybrid on YMM registers, with 3 x 64 bytes of CRC32 an
// iteration: len(p) is 448*m plus a multiple of 16 (m >= 1), and k holds
// x^(8L-33) mod P for L = 192m, 128m and 64m, reflected. On Zen 3 a YMM
// carry-less multiply issues every other cycle (folding alone: 16 KiB in
// 705-760 ns, against hash/crc32's 790-880), and 24 CRC32s fit in an
// iteration's sixteen (455-500 ns); 18 and 30 ran slower.
TEXT ·castagnoliHybridAVX2(SB), NOSPLIT, $0
	MOVL   crc+0(FP), AX
	MOVQ   p_base+8(FP), SI
	MOVQ   p_len+16(FP), DI
	MOVQ   m+32(FP), CX
	MOVQ   k+40(FP), DX
	HYBRIDSETUP(64)
	LOAD256Y
	VBROADCASTI128 k2048<>+0(SB), Y0
	DECQ   CX
	JZ     lasty

loopy:
	SCALAR8
	FOLD256Y
	ADDQ   $64, DI
	DECQ   CX
	JNZ    loopy

lasty:
	SCALAR8
	MOVQ   R11, CX
	TAILY
	JOIN
	MOVL   R11, ret+48(FP)
	RET
