// Package format holds the wire primitives that every other segkit package
// shares: Kafka's big-endian fixed-width integers, its zigzag varint and
// varlong (with the strict length limits Kafka's ByteUtils enforces), the
// two checksums Kafka uses on disk (CRC-32C for v2 record batches and
// producer snapshots, CRC-32 IEEE for legacy v0/v1 messages), and the error
// vocabulary: a CorruptionError that names a file and a byte position, and
// the sentinel errors it wraps.
//
// Decoders of primitives return (v, n): n > 0 is the number of bytes
// consumed, n <= 0 is an error code that ParseError turns into an error off
// the hot path. Encoders append to dst and return the extended slice.
//
//	b := format.AppendVarint(nil, -3)   // zigzag: 0x05
//	v, n := format.Varint(b)            // v == -3, n == 1
//	if n <= 0 {
//		return format.ParseError(n)
//	}
//
// Structures built on these primitives report problems as
// *CorruptionError{Path, Offset, Err}, where Err is (or wraps) one of the
// sentinels below; callers test with errors.Is and errors.As:
//
//	var ce *format.CorruptionError
//	if errors.As(err, &ce) && errors.Is(err, format.ErrCRC) {
//		fmt.Println("bad checksum in", ce.Path, "at byte", ce.Offset)
//	}
//
// All functions are safe for concurrent use; none allocates except the
// error constructors.
package format
