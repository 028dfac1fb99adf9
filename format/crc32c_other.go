//go:build !amd64 || purego

package format

import "hash/crc32"

// Elsewhere hash/crc32 is the fastest CRC-32C at hand: the ARMv8, ppc64le,
// s390x and loong64 instructions, slicing-by-8 on the rest. On wasm (under
// node, 16 KiB buffers, best of 300 interleaved rounds, two runs) its
// slicing-by-8 ran at 2.65 to 2.81 GB/s, slicing-by-16 in Go at 2.52 to
// 2.68 and slicing-by-8 in wasm assembly (32-bit index arithmetic, the
// tables' offsets folded into the loads) at 1.84 to 1.95, so neither of
// those is here. (Wasm has SIMD but no carry-less multiply, and Go's wasm
// assembler cannot encode i8x16.shuffle.)
func updateCastagnoli(crc uint32, p []byte) uint32 { return crc32.Update(crc, castagnoli, p) }
