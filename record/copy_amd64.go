//go:build amd64 && !purego

package record

import "github.com/segkit/segkit/internal/cpu"

// copyZMM copies src, at least 64 bytes, to dst, at least as long, with
// 64-byte moves and returns true; if the two overlap it copies nothing and
// returns false. See copy_amd64.s.
//
//go:noescape
func copyZMM(dst, src []byte) bool

// useZMMCopy: long values are copied with AVX-512 moves where the CPU has
// them. On an Intel Xeon (2026-12-07) that built 16 x 1 KiB batches in
// 489-521 ns against 504-548 with memmove's 32-byte moves (eight rounds
// of the two interleaved): half as many stores, which (my reading) the
// batch's CRC, reading them back, waits for less. On Zen 4 a 64-byte move
// is two 32-byte ones, and a 16 x 1 KiB copy took the same time either
// way (stop 31).
var useZMMCopy = cpu.AVX512F()

// zmmCopyMin is the shortest value copyValue copies with copyZMM; shorter
// ones (1000 x 100 B: 16.2-16.7 us with 64-byte moves against 15.4-15.9)
// go to memmove.
const zmmCopyMin = 256

// copyValue is copy(dst, src) for a record's value; dst must have room for
// it (dst[:len(src)] panics otherwise, as the builder's buffer always has).
func copyValue(dst, src []byte) int {
	if len(src) >= zmmCopyMin && useZMMCopy && copyZMM(dst[:len(src)], src) {
		return len(src)
	}
	return copy(dst, src)
}
