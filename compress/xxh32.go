package compress

import (
	"encoding/binary"
	"math/bits"
)

// xxHash32, as the LZ4 frame format uses it for its header, block and
// content checksums (always with seed 0). pierrec/lz4 keeps its copy in an
// internal package, so we carry this small one.

// These constants are part of the wire format and should not be changed.
const (
	xxhPrime1 uint32 = 2654435761
	xxhPrime2 uint32 = 2246822519
	xxhPrime3 uint32 = 3266489917
	xxhPrime4 uint32 = 668265263
	xxhPrime5 uint32 = 374761393
)

func xxhRound(acc, input uint32) uint32 {
	acc += input * xxhPrime2
	acc = bits.RotateLeft32(acc, 13)
	return acc * xxhPrime1
}

// xxh32 returns the 32-bit xxHash of b with seed 0.
func xxh32(b []byte) uint32 {
	n := len(b)
	var h uint32
	if n >= 16 {
		p1, p2 := xxhPrime1, xxhPrime2 // variables: the sums wrap
		v1 := p1 + p2
		v2 := p2
		v3 := uint32(0)
		v4 := 0 - p1
		for len(b) >= 16 {
			v1 = xxhRound(v1, binary.LittleEndian.Uint32(b[0:4]))
			v2 = xxhRound(v2, binary.LittleEndian.Uint32(b[4:8]))
			v3 = xxhRound(v3, binary.LittleEndian.Uint32(b[8:12]))
			v4 = xxhRound(v4, binary.LittleEndian.Uint32(b[12:16]))
			b = b[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = xxhPrime5
	}
	h += uint32(n)
	for len(b) >= 4 {
		h += binary.LittleEndian.Uint32(b) * xxhPrime3
		h = bits.RotateLeft32(h, 17) * xxhPrime4
		b = b[4:]
	}
	for _, c := range b {
		h += uint32(c) * xxhPrime5
		h = bits.RotateLeft32(h, 11) * xxhPrime1
	}
	h ^= h >> 15
	h *= xxhPrime2
	h ^= h >> 13
	h *= xxhPrime3
	h ^= h >> 16
	return h
}
