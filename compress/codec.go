package compress

import (
	"fmt"

	"github.com/segkit/segkit/format"
)

// Codec is a compression codec id, as stored in bits 0-2 of a record
// batch's attributes (and of a legacy message's attributes).
type Codec int8

// These constants are part of the wire format and should not be changed.
const (
	None   Codec = 0
	Gzip   Codec = 1
	Snappy Codec = 2
	LZ4    Codec = 3
	Zstd   Codec = 4

	// CodecMask selects the codec bits of an attributes field.
	CodecMask = 0x07
)

var codecNames = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

// String returns Kafka's name for the codec ("none", "gzip", "snappy",
// "lz4", "zstd"), or "codec(N)" for an unknown id.
func (c Codec) String() string {
	if c >= 0 && int(c) < len(codecNames) {
		return codecNames[c]
	}
	return fmt.Sprintf("codec(%d)", int8(c))
}

// Valid reports whether c is one of the five codecs Kafka defines.
func (c Codec) Valid() bool { return c >= None && c <= Zstd }

// ParseCodec returns the codec named s (Kafka's compression.type names;
// "uncompressed" is accepted as a synonym of "none").
func ParseCodec(s string) (Codec, error) {
	for i, n := range codecNames {
		if s == n {
			return Codec(i), nil
		}
	}
	if s == "uncompressed" {
		return None, nil
	}
	return 0, fmt.Errorf("compress: unknown codec %q (want none, gzip, snappy, lz4 or zstd): %w", s, format.ErrCodec)
}
