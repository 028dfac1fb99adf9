package compress

import (
	"fmt"
	"io"

	"github.com/segkit/segkit/format"
)

// Compressor compresses one record-batch payload. AppendCompressed appends
// the compressed form of src to dst and returns the extended slice; it never
// modifies dst[:len(dst)] and does not retain dst or src. On error it
// returns dst unchanged.
type Compressor interface {
	AppendCompressed(dst, src []byte) ([]byte, error)
}

// Decompressor decompresses one record-batch payload. AppendDecompressed
// appends the decompressed form of src to dst and returns the extended
// slice. At most limit bytes are appended (a negative limit counts as 0):
// more is an error wrapping format.ErrTooLarge, found while decompressing or
// from a size the input declares, before the output is allocated. Every
// error is a *format.CorruptionError whose Offset is the position in src
// where the problem was found (0 when it cannot be told) and which wraps
// format.ErrCompressed or format.ErrTooLarge. On error the returned slice is
// dst unchanged (its spare capacity may have been written to).
type Decompressor interface {
	AppendDecompressed(dst, src []byte, limit int) ([]byte, error)
}

// Encoder compresses record-batch payloads with any codec. The zero value is
// ready to use and uses each codec's default level. It keeps per-codec state
// (created lazily on first use) so that steady-state calls allocate nothing
// once dst has enough capacity. An Encoder is not safe for concurrent use.
type Encoder struct {
	// GzipLevel is the gzip level, 1 (fastest) to 9 (smallest), as Kafka's
	// compression.gzip.level. 0 selects the default (6, as Java's
	// Deflater.DEFAULT_COMPRESSION).
	GzipLevel int

	// LZ4Level is Kafka's compression.lz4.level. 0 or 9 (Kafka's default)
	// select the fast compressor whose blocks match Kafka's Java client
	// byte for byte; 1 to 17 otherwise select the high-compression one.
	LZ4Level int

	// ZstdLevel is Kafka's compression.zstd.level (-131072 to 22). 0
	// selects the default (3).
	ZstdLevel int

	// LZ4LegacyHeaderChecksum makes LZ4 frames carry the header checksum
	// that Kafka writes for magic-0 messages (KAFKA-3160): xxHash32 over the
	// magic number and the descriptor instead of the descriptor only.
	LZ4LegacyHeaderChecksum bool

	gzip   *GzipCompressor
	lz4    *LZ4Compressor
	zstd   *ZstdCompressor
	snappy SnappyCompressor
}

// AppendCompressed appends src compressed with codec c to dst. None appends
// src unchanged. An unknown codec gives an error wrapping format.ErrCodec,
// an invalid level field an error naming it; on error dst is returned
// unchanged.
func (e *Encoder) AppendCompressed(dst []byte, c Codec, src []byte) ([]byte, error) {
	switch c {
	case None:
		return append(dst, src...), nil
	case Gzip:
		if e.gzip == nil || e.gzip.level != e.GzipLevel {
			g, err := NewGzipCompressor(e.GzipLevel)
			if err != nil {
				return dst, err
			}
			e.gzip = g
		}
		return e.gzip.AppendCompressed(dst, src)
	case Snappy:
		return e.snappy.AppendCompressed(dst, src)
	case LZ4:
		if e.lz4 == nil || e.lz4.level != e.LZ4Level {
			l, err := NewLZ4Compressor(e.LZ4Level)
			if err != nil {
				return dst, err
			}
			e.lz4 = l
		}
		e.lz4.LegacyHeaderChecksum = e.LZ4LegacyHeaderChecksum
		return e.lz4.AppendCompressed(dst, src)
	case Zstd:
		if e.zstd == nil || e.zstd.level != e.ZstdLevel {
			z, err := NewZstdCompressor(e.ZstdLevel)
			if err != nil {
				return dst, err
			}
			e.zstd = z
		}
		return e.zstd.AppendCompressed(dst, src)
	}
	return dst, fmt.Errorf("compress: cannot compress with %v: %w", c, format.ErrCodec)
}

// Decoder decompresses record-batch payloads with any codec. The zero value
// is ready to use. It keeps per-codec state (created lazily on first use) so
// that steady-state calls allocate nothing once dst has enough capacity. A
// Decoder is not safe for concurrent use.
type Decoder struct {
	// StrictSnappy decodes snappy blocks with the standard decoder, which
	// rejects S2's extensions as snappy-java does; see SnappyDecompressor.
	StrictSnappy bool

	gzip   *GzipDecompressor
	lz4    *LZ4Decompressor
	zstd   *ZstdDecompressor
	snappy SnappyDecompressor
}

// AppendDecompressed appends the decompressed form of src, compressed with
// codec c, to dst. At most limit bytes are appended; see Decompressor for
// the limit and error contract. None appends src itself (if it fits the
// limit). An unknown codec gives a *format.CorruptionError at offset 0
// wrapping format.ErrCodec.
func (d *Decoder) AppendDecompressed(dst []byte, c Codec, src []byte, limit int) ([]byte, error) {
	switch c {
	case None:
		return appendLimited(dst, src, limit)
	case Gzip:
		if d.gzip == nil {
			d.gzip = new(GzipDecompressor)
		}
		return d.gzip.AppendDecompressed(dst, src, limit)
	case Snappy:
		d.snappy.Strict = d.StrictSnappy
		return d.snappy.AppendDecompressed(dst, src, limit)
	case LZ4:
		if d.lz4 == nil {
			d.lz4 = new(LZ4Decompressor)
		}
		return d.lz4.AppendDecompressed(dst, src, limit)
	case Zstd:
		if d.zstd == nil {
			d.zstd = new(ZstdDecompressor)
		}
		return d.zstd.AppendDecompressed(dst, src, limit)
	}
	return dst, format.Corruptf("", 0, format.ErrCodec, "compress: cannot decompress %v", c)
}

// NewCompressor returns the Compressor for codec c at the given level (0
// selects the codec's default; snappy and none ignore it).
func NewCompressor(c Codec, level int) (Compressor, error) {
	switch c {
	case None:
		return NoneCompressor{}, nil
	case Gzip:
		return NewGzipCompressor(level)
	case Snappy:
		return NewSnappyCompressor(), nil
	case LZ4:
		return NewLZ4Compressor(level)
	case Zstd:
		return NewZstdCompressor(level)
	}
	return nil, fmt.Errorf("compress: no compressor for %v: %w", c, format.ErrCodec)
}

// NewDecompressor returns a Decompressor for codec c.
func NewDecompressor(c Codec) (Decompressor, error) {
	switch c {
	case None:
		return NoneDecompressor{}, nil
	case Gzip:
		return new(GzipDecompressor), nil
	case Snappy:
		return new(SnappyDecompressor), nil
	case LZ4:
		return new(LZ4Decompressor), nil
	case Zstd:
		return new(ZstdDecompressor), nil
	}
	return nil, fmt.Errorf("compress: no decompressor for %v: %w", c, format.ErrCodec)
}

// NoneCompressor is the Compressor of codec None: it copies.
type NoneCompressor struct{}

// AppendCompressed appends src to dst.
func (NoneCompressor) AppendCompressed(dst, src []byte) ([]byte, error) {
	return append(dst, src...), nil
}

// NoneDecompressor is the Decompressor of codec None: it copies, within the
// limit.
type NoneDecompressor struct{}

// AppendDecompressed appends src to dst if len(src) <= limit.
func (NoneDecompressor) AppendDecompressed(dst, src []byte, limit int) ([]byte, error) {
	return appendLimited(dst, src, limit)
}

func appendLimited(dst, src []byte, limit int) ([]byte, error) {
	limit = max(limit, 0)
	if len(src) > limit {
		return dst, errTooLarge("none", limit, limit)
	}
	return append(dst, src...), nil
}

// Error constructors. Every decode error is a *format.CorruptionError at an
// offset within the compressed input.

// errCorrupt reports bad compressed data at off.
func errCorrupt(off int, msg string, args ...any) error {
	return format.Corruptf("", int64(off), format.ErrCompressed, msg, args...)
}

// errTruncated reports compressed data that ends early at off; it wraps both
// format.ErrCompressed and format.ErrTruncated.
func errTruncated(off int, what string) error {
	return format.Corruptf("", int64(off), format.ErrCompressed, "%s: %w", what, format.ErrTruncated)
}

// errTooLarge reports output beyond limit, found at off.
func errTooLarge(codec string, off, limit int) error {
	return format.Corruptf("", int64(off), format.ErrTooLarge, "%s: decompressed size exceeds limit of %d bytes", codec, limit)
}

// errLibrary wraps an error returned by a compression library at off; an
// unexpected end of input maps to a truncation.
func errLibrary(codec string, off int, err error) error {
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return errTruncated(off, codec)
	}
	return errCorrupt(off, "%s: %v", codec, err)
}

// grow returns dst with room for at least n more bytes beyond len(dst),
// allocating exactly len(dst)+n when it must, so that a size computed from
// the input is not rounded up by append's growth policy.
func grow(dst []byte, n int) []byte {
	if n <= cap(dst)-len(dst) {
		return dst
	}
	nd := make([]byte, len(dst), len(dst)+n)
	copy(nd, dst)
	return nd
}
