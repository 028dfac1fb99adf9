//go:build amd64 && !purego

#include "textflag.h"

// func cpuid(leaf uint32) (eax, ebx, ecx, edx uint32)
// Subleaf 0.
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL   leaf+0(FP), AX
	XORL   CX, CX
	CPUID
	MOVL   AX, eax+8(FP)
	MOVL   BX, ebx+12(FP)
	MOVL   CX, ecx+16(FP)
	MOVL   DX, edx+20(FP)
	RET

// func xgetbv0() (eax uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-4
	XORL   CX, CX
	XGETBV
	MOVL   AX, eax+0(FP)
	RET
