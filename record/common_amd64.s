//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"

// VARINT2 turns u (a zigzagged value below 0x4000) into the two bytes of
// its varint, low byte first, and sets c to 1 if the varint takes both,
// 0 if one: u + (u &^ 0x7f) moves bits 7-13 up to 8-14, and 0x80 is the
// continuation bit. The second byte of a one-byte varint is 0, and the next
// field overwrites it. t is clobbered.
#define VARINT2(u, t, c) \
	XORL  c, c          \
	MOVL  u, t          \
	ANDL  $-128, t      \
	SETNE c             \
	LEAL  0x80(u)(t*1), t \
	CMOVLNE t, u

// func appendCommonAsm(dst []byte, limit int, baseTs int64, recs []Record, i int) (n, next int, full bool)
//
// appendCommonGo's loop (builder.go) in assembly, where it keeps every value
// in a register: it writes recs[i:] into dst's spare capacity while they
// are common records and returns dst's new length, the index of the first
// record it did not write, and whether it stopped there only for want of
// room (the caller grows dst and calls again). It stops, not full, at a
// record that is not common or that would end past limit; appendRecords'
// loop writes or refuses that one. It needs the record's body plus 34
// bytes of room, as appendCommonGo does, so every store below, including
// the moves that run past a value's end, lands inside dst's capacity.
//
// Registers: DI dst's base, R8 its length, SI the record, R12 its index;
// AX the write position once the record is known to be common. The rest
// are scratch.
TEXT ·appendCommonAsm(SB), NOSPLIT, $0-89
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), R8
	MOVQ recs_base+40(FP), SI
	MOVQ i+64(FP), R12
	MOVQ R12, AX
	IMULQ $Record__size, AX
	ADDQ AX, SI

loop:
	CMPQ R12, recs_len+48(FP)
	JGE  done
	MOVQ Record_Headers+8(SI), AX
	TESTQ AX, AX
	JNZ  done
	MOVQ Record_Key+8(SI), BX // klen
	CMPQ BX, $16
	JA   done
	MOVQ Record_Value+8(SI), CX // vlen
	CMPQ CX, $0x1fc0
	JA   done
	MOVQ Record_Timestamp(SI), DX
	SUBQ baseTs+32(FP), DX // td; overflow: the delta wraps
	JO   done
	MOVQ DX, AX
	SARQ $63, AX
	ADDQ DX, DX
	XORQ AX, DX                // DX: utd
	LEAQ (R12)(R12*1), R9      // R9: uod
	MOVQ DX, AX
	ORQ  R9, AX
	CMPQ AX, $0x4000
	JAE  done

	// uv: vlen<<1, or 1 (zigzag(-1)) for a null value.
	XORL  R11, R11
	CMPQ  Record_Value(SI), $0
	SETEQ R11B
	LEAQ  (R11)(CX*2), R11 // R11: uv

	// body: 6 + klen + vlen + a byte for each two-byte varint among the
	// timestamp delta, the offset delta and the value's length (the key's
	// length takes one).
	LEAQ  6(BX)(CX*1), R13
	XORL  AX, AX
	CMPQ  DX, $0x7f
	SETHI AL
	ADDQ  AX, R13
	XORL  AX, AX
	CMPQ  R9, $0x7f
	SETHI AL
	ADDQ  AX, R13
	XORL  AX, AX
	CMPQ  R11, $0x7f
	SETHI AL
	ADDQ  AX, R13 // R13: body

	LEAQ (R8)(R13*1), AX
	CMPQ AX, limit+24(FP)
	JG   done
	LEAQ 34(AX), AX
	CMPQ AX, dst_cap+16(FP)
	JA   full

	// The length, attributes and deltas.
	LEAQ (DI)(R8*1), AX
	ADDQ R13, R13 // zigzag(body)
	VARINT2(R13, BX, CX)
	MOVW R13, (AX)
	LEAQ 1(AX)(CX*1), AX
	MOVB Record_Attributes(SI), BX
	MOVB BX, (AX)
	INCQ AX
	VARINT2(DX, BX, CX)
	MOVW DX, (AX)
	LEAQ 1(AX)(CX*1), AX
	VARINT2(R9, BX, CX)
	MOVW R9, (AX)
	LEAQ 1(AX)(CX*1), AX

	// The key: its length (one byte), then at most 16 bytes.
	MOVQ  Record_Key(SI), R10
	MOVQ  Record_Key+8(SI), BX
	XORL  CX, CX
	TESTQ R10, R10
	SETEQ CX
	LEAL  (CX)(BX*2), CX
	MOVB  CX, (AX)
	INCQ  AX
	CMPQ  BX, $8
	JB    shortkey
	MOVQ  (R10), CX
	MOVQ  CX, (AX)
	MOVQ  -8(R10)(BX*1), CX
	MOVQ  CX, -8(AX)(BX*1)

key:
	ADDQ BX, AX
	VARINT2(R11, BX, CX)
	MOVW R11, (AX)
	LEAQ 1(AX)(CX*1), AX

	// The value.
	MOVQ Record_Value(SI), R10
	MOVQ Record_Value+8(SI), CX
	CMPQ CX, $16
	JB   shortvalue
	CMPQ CX, $32
	JBE  value32
	CMPQ CX, $64
	JBE  value64
	CMPQ CX, $256
	JB   value128s
	CMPB ·useZMMCopy(SB), $0
	JNE  valuezmm

	// More than 64 bytes: 64 at a time, then the last 64 (loaded first),
	// which may overlap the moves before them.
value128s:
	LEAQ   (R10)(CX*1), BX
	LEAQ   (AX)(CX*1), R9
	MOVOU  -64(BX), X4
	MOVOU  -48(BX), X5
	MOVOU  -32(BX), X6
	MOVOU  -16(BX), X7
	MOVQ   AX, DX
	SUBQ   $64, CX

loop64:
	MOVOU  (R10), X0
	MOVOU  16(R10), X1
	MOVOU  32(R10), X2
	MOVOU  48(R10), X3
	MOVOU  X0, (DX)
	MOVOU  X1, 16(DX)
	MOVOU  X2, 32(DX)
	MOVOU  X3, 48(DX)
	ADDQ   $64, R10
	ADDQ   $64, DX
	SUBQ   $64, CX
	JA     loop64
	MOVOU  X4, -64(R9)
	MOVOU  X5, -48(R9)
	MOVOU  X6, -32(R9)
	MOVOU  X7, -16(R9)
	MOVQ   R9, AX
	JMP    next

	// 256 bytes and more with AVX-512: the same, 64 bytes a move.
valuezmm:
	LEAQ      (AX)(CX*1), R9
	VMOVDQU64 -64(R10)(CX*1), Z1
	SUBQ      $64, CX

loopzmm:
	VMOVDQU64 (R10), Z0
	VMOVDQU64 Z0, (AX)
	ADDQ      $64, R10
	ADDQ      $64, AX
	SUBQ      $64, CX
	JA        loopzmm
	VMOVDQU64 Z1, -64(R9)
	VZEROUPPER
	MOVQ      R9, AX
	JMP       next

	// 33 to 64 bytes: the first 32 and the last 32.
value64:
	MOVOU (R10), X0
	MOVOU 16(R10), X1
	MOVOU -32(R10)(CX*1), X2
	MOVOU -16(R10)(CX*1), X3
	MOVOU X0, (AX)
	MOVOU X1, 16(AX)
	MOVOU X2, -32(AX)(CX*1)
	MOVOU X3, -16(AX)(CX*1)
	ADDQ  CX, AX
	JMP   next

	// 16 to 32 bytes: the first 16 and the last 16.
value32:
	MOVOU (R10), X0
	MOVOU -16(R10)(CX*1), X1
	MOVOU X0, (AX)
	MOVOU X1, -16(AX)(CX*1)
	ADDQ  CX, AX
	JMP   next

	// Fewer than 16 bytes: two moves of 8, of 4, or bytes.
shortvalue:
	CMPQ CX, $8
	JB   value7
	MOVQ (R10), BX
	MOVQ -8(R10)(CX*1), DX
	MOVQ BX, (AX)
	MOVQ DX, -8(AX)(CX*1)
	ADDQ CX, AX
	JMP  next

value7:
	CMPQ CX, $4
	JB   value3
	MOVL (R10), BX
	MOVL -4(R10)(CX*1), DX
	MOVL BX, (AX)
	MOVL DX, -4(AX)(CX*1)
	ADDQ CX, AX
	JMP  next

value3:
	TESTQ CX, CX
	JZ    next
	MOVB  (R10), BX
	MOVB  -1(R10)(CX*1), DX
	MOVQ  CX, R9
	SHRQ  $1, R9
	MOVB  (R10)(R9*1), R13
	MOVB  BX, (AX)
	MOVB  DX, -1(AX)(CX*1)
	MOVB  R13, (AX)(R9*1)
	ADDQ  CX, AX

next:
	MOVB $0, (AX) // no headers
	INCQ AX
	SUBQ DI, AX
	MOVQ AX, R8
	ADDQ $Record__size, SI
	INCQ R12
	JMP  loop

	// Keys of 0 to 7 bytes: two moves of 4, or bytes.
shortkey:
	CMPQ BX, $4
	JB   key3
	MOVL (R10), CX
	MOVL CX, (AX)
	MOVL -4(R10)(BX*1), CX
	MOVL CX, -4(AX)(BX*1)
	JMP  key

key3:
	TESTQ BX, BX
	JZ    key
	MOVB  (R10), CX
	MOVB  CX, (AX)
	MOVB  -1(R10)(BX*1), CX
	MOVB  CX, -1(AX)(BX*1)
	MOVQ  BX, R13
	SHRQ  $1, R13
	MOVB  (R10)(R13*1), CX
	MOVB  CX, (AX)(R13*1)
	JMP   key

full:
	MOVQ R8, n+72(FP)
	MOVQ R12, next+80(FP)
	MOVB $1, full+88(FP)
	RET

done:
	MOVQ R8, n+72(FP)
	MOVQ R12, next+80(FP)
	MOVB $0, full+88(FP)
	RET
