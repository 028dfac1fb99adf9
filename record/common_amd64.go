//go:build amd64 && !purego

package record

import (
	"slices"

	"github.com/segkit/segkit/internal/cpu"
)

// appendCommonAsm is appendCommonGo's loop in assembly (common_amd64.s)
// without the growth: it writes recs[i:] while they are common and fit in
// dst's spare capacity, and returns dst's new length, the index of the
// first record it did not write, and full if it stopped there only for
// want of room. It writes nothing past n but inside dst's capacity.
//
//go:noescape
func appendCommonAsm(dst []byte, limit int, baseTs int64, recs []Record, i int) (n, next int, full bool)

// appendCommon is appendCommonGo with its loop in assembly, where every
// value stays in a register, a varint's length goes from the carry
// straight into the positions after it, and a value is copied inline (64
// bytes a move where the CPU has AVX-512, 32 with AVX2), not by a call to
// memmove. On
// the Xeon (2026-12-07, test binaries alternated five times,
// -test.benchtime 200ms), BenchmarkEncode 1000 x 100 B took 8.4-8.7 us
// against 14.9-15.3 with appendCommonGo, 16 x 1 KiB 407-418 ns against
// 505-559, and the snappy encode of 1000 x 100 B 180-184 us against
// 189-192. TestAppendCommonMatchesGo and FuzzAppendCommon hold the two
// loops to the same bytes, with each of the copies the CPU can run.
//
// When a record does not fit, dst grows by at least what any record of its
// key and value can need, and the loop goes on; should it still not fit,
// appendRecords' loop is left to write it, rather than this one calling
// again for ever.
func appendCommon(dst []byte, start int, baseTs int64, recs []Record, i int) ([]byte, int) {
	grown := -1
	for {
		n, next, full := appendCommonAsm(dst, start+MaxBatchSize, baseTs, recs, i)
		dst, i = dst[:n], next
		if !full || i == grown {
			return dst, i
		}
		grown = i
		r := &recs[i]
		dst = slices.Grow(dst, len(r.Key)+len(r.Value)+commonRoom+len(dst)/4)
	}
}

// useZMMCopy and useYMMCopy choose how the assembly copies values over 64
// bytes: with 64-byte moves where the CPU has AVX-512, else 32-byte ones
// where it has AVX2 (as memmove does), else 16-byte ones. Building 16 x
// 1 KiB on the Xeon (one process, each way forced): 225-236 ns with
// 64-byte moves, 276-286 with 32-byte ones, 355-366 with 16-byte ones,
// which is slower than appendCommonGo with memmove (335-352). Only the
// tests change them (eachCopy).
var (
	useZMMCopy = cpu.AVX512F()
	useYMMCopy = cpu.AVX2()
)

// commonRoom is the most room appendCommonAsm wants past a record's key
// and value: the body's other 9 bytes at most (the attributes, the key's
// length and the header count, a byte each; the timestamp delta, the
// offset delta and the value's length, two each) and the 34 it wants
// beyond the body (2 for the body's length, 32 spare). A first version grew
// by one byte less, and a record whose growth landed exactly on a size
// class made the loop call again for ever; TestAppendCommonMatchesGo now
// grows dst from nothing for every key length and every value length to
// 300 bytes.
const commonRoom = 9 + 34
