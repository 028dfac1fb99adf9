package format

import "hash/crc32"

// castagnoli is built once; crc32 uses the SSE4.2/ARMv8 instructions for it
// where the CPU has them, and slicing-by-8 elsewhere (including wasm).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C returns the CRC-32C (Castagnoli) checksum of b: the checksum of a
// v2 record batch (over bytes [21, end)) and of a producer snapshot. On
// amd64 with VPCLMULQDQ (on ZMM registers with AVX-512F, on YMM with
// AVX2), inputs of 256 bytes and more are folded 256 bytes at a time with
// carry-less multiplication (about twice hash/crc32's speed with AVX-512,
// 1.1-1.5 times with AVX2); on AMD Zen 4 and Zen 3, from 1312 and 1344
// bytes, the CRC32 instruction runs over a share of the input in the same
// loop (2.4 and 1.6 times). Everywhere else, and for the last bytes,
// hash/crc32 does the work (SSE4.2 or ARMv8 CRC instructions where the CPU
// has them).
func CRC32C(b []byte) uint32 { return updateCastagnoli(0, b) }

// UpdateCRC32C continues a CRC-32C checksum crc over b.
func UpdateCRC32C(crc uint32, b []byte) uint32 { return updateCastagnoli(crc, b) }

// CRC32IEEE returns the CRC-32 (IEEE, as zlib computes it) of b: the
// checksum of a legacy v0/v1 message (over [magic, end)).
func CRC32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
