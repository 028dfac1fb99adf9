package format

import "math/bits"

// Kafka's variable-length integers (ByteUtils.writeVarint/readVarint): the
// value is zigzag-encoded, then written 7 bits at a time, least significant
// group first, with the high bit of each byte set when more bytes follow.
//
// These constants are part of the wire format and should not be changed.
const (
	// MaxVarintLen is the longest valid encoding of a 32-bit varint.
	MaxVarintLen = 5
	// MaxVarlongLen is the longest valid encoding of a 64-bit varlong.
	MaxVarlongLen = 10
)

// Error codes returned as n by Varint, Varlong and the fixed-width readers.
// ParseError maps them to errors.
const (
	codeTruncated = 0  // the buffer ended inside the value
	codeVarint    = -1 // too long, or the value overflows its type
)

// ParseError returns the error for a non-positive n returned by a primitive
// decoder of this package, or nil for n > 0.
func ParseError(n int) error {
	switch {
	case n > 0:
		return nil
	case n == codeTruncated:
		return ErrTruncated
	default:
		return ErrVarint
	}
}

// SizeVarint returns the number of bytes AppendVarint writes for v.
func SizeVarint(v int32) int {
	u := uint32(v<<1) ^ uint32(v>>31)
	// 1 + floor(bitlen/7) where bitlen(0) counts as 1 bit.
	return int(9*uint32(bits.Len32(u|1))+64) / 64
}

// SizeVarlong returns the number of bytes AppendVarlong writes for v.
func SizeVarlong(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	return int(9*uint32(bits.Len64(u|1))+64) / 64
}

// AppendVarint appends the zigzag varint encoding of v to dst.
func AppendVarint(dst []byte, v int32) []byte {
	u := uint32(v<<1) ^ uint32(v>>31)
	if u < 0x80 {
		return append(dst, byte(u))
	}
	if u < 0x4000 {
		return append(dst, byte(u)|0x80, byte(u>>7))
	}
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// AppendVarlong appends the zigzag varlong encoding of v to dst.
func AppendVarlong(dst []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	if u < 0x80 {
		return append(dst, byte(u))
	}
	if u < 0x4000 {
		return append(dst, byte(u)|0x80, byte(u>>7))
	}
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// PutVarint writes the encoding of v into b, which must have room for
// SizeVarint(v) bytes, and returns the number of bytes written.
func PutVarint(b []byte, v int32) int {
	u := uint32(v<<1) ^ uint32(v>>31)
	i := 0
	for u >= 0x80 {
		b[i] = byte(u) | 0x80
		u >>= 7
		i++
	}
	b[i] = byte(u)
	return i + 1
}

// PutVarlong writes the encoding of v into b, which must have room for
// SizeVarlong(v) bytes, and returns the number of bytes written.
func PutVarlong(b []byte, v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	i := 0
	for u >= 0x80 {
		b[i] = byte(u) | 0x80
		u >>= 7
		i++
	}
	b[i] = byte(u)
	return i + 1
}

// Varint decodes a zigzag varint from the start of b and returns the value
// and the number of bytes read. n == 0 means b ended inside the value;
// n < 0 means the encoding is longer than 5 bytes or overflows 32 bits
// (Kafka rejects the former; a conforming encoder never produces the
// latter, so it is rejected too rather than silently wrapped).
func Varint(b []byte) (v int32, n int) {
	if len(b) > 0 && b[0] < 0x80 {
		u := uint32(b[0])
		return int32(u>>1) ^ -int32(u&1), 1
	}
	var u uint32
	for i := 0; i < MaxVarintLen; i++ {
		if i >= len(b) {
			return 0, codeTruncated
		}
		c := b[i]
		if c < 0x80 {
			if i == MaxVarintLen-1 && c > 0x0f {
				return 0, codeVarint
			}
			u |= uint32(c) << (7 * i)
			return int32(u>>1) ^ -int32(u&1), i + 1
		}
		u |= uint32(c&0x7f) << (7 * i)
	}
	return 0, codeVarint
}

// Varlong decodes a zigzag varlong from the start of b; see Varint for the
// meaning of n. The limit is 10 bytes, the last of which may hold only the
// top bit of the value.
func Varlong(b []byte) (v int64, n int) {
	if len(b) > 0 && b[0] < 0x80 {
		u := uint64(b[0])
		return int64(u>>1) ^ -int64(u&1), 1
	}
	var u uint64
	for i := 0; i < MaxVarlongLen; i++ {
		if i >= len(b) {
			return 0, codeTruncated
		}
		c := b[i]
		if c < 0x80 {
			if i == MaxVarlongLen-1 && c > 1 {
				return 0, codeVarint
			}
			u |= uint64(c) << (7 * i)
			return int64(u>>1) ^ -int64(u&1), i + 1
		}
		u |= uint64(c&0x7f) << (7 * i)
	}
	return 0, codeVarint
}

// Uvarint decodes an unsigned (non-zigzag) varint of at most 5 bytes, as
// used by Kafka's flexible-version compact lengths. See Varint for n.
func Uvarint(b []byte) (v uint32, n int) {
	var u uint32
	for i := 0; i < MaxVarintLen; i++ {
		if i >= len(b) {
			return 0, codeTruncated
		}
		c := b[i]
		if c < 0x80 {
			if i == MaxVarintLen-1 && c > 0x0f {
				return 0, codeVarint
			}
			return u | uint32(c)<<(7*i), i + 1
		}
		u |= uint32(c&0x7f) << (7 * i)
	}
	return 0, codeVarint
}

// AppendUvarint appends the unsigned varint encoding of v to dst.
func AppendUvarint(dst []byte, v uint32) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}
