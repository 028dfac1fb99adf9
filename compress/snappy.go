package compress

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
)

// Kafka's Java client frames snappy with xerial snappy-java's
// SnappyOutputStream: a 16-byte header, then for each block of at most 32
// KiB of input a big-endian int32 length and a raw snappy block.
//
// These constants are part of the wire format and should not be changed.
const (
	xerialMagic         = "\x82SNAPPY\x00"
	xerialVersion       = 1 // SnappyCodec.DEFAULT_VERSION
	xerialMinCompatible = 1 // SnappyCodec.MINIMUM_COMPATIBLE_VERSION
	xerialHeaderLen     = len(xerialMagic) + 4 + 4
	xerialBlockSize     = 32 << 10 // SnappyOutputStream.DEFAULT_BLOCK_SIZE
	xerialLenSize       = 4

	// snappyChunk is the most input one call of the snappy encoder sees.
	// klauspost's encoder recurses once per 60 bytes of a long match; in a
	// browser a 2 MiB run overflows the JavaScript engine's stack in a way
	// recover cannot catch. 64 KiB keeps the depth near a thousand.
	snappyChunk = 64 << 10
)

// encodeSnappy is the block encoder; a variable so that a test can check
// that no call sees more than snappyChunk bytes.
var encodeSnappy = s2.EncodeSnappy

var xerialHeader = [xerialHeaderLen]byte{
	0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0,
	0, 0, 0, xerialVersion,
	0, 0, 0, xerialMinCompatible,
}

// SnappyCompressor writes snappy in xerial framing exactly as Kafka's Java
// client does (snappy-java's SnappyOutputStream with its default 32 KiB
// blocks): header, then one length-prefixed raw block per 32 KiB of input;
// empty input gives the header alone. The block contents come from
// klauspost/compress's snappy encoder, so they are valid snappy but not
// byte-identical to snappy-java's. It has no state: the zero value is ready
// and is safe for concurrent use.
type SnappyCompressor struct{}

// NewSnappyCompressor returns a snappy (xerial framing) Compressor.
func NewSnappyCompressor() *SnappyCompressor { return new(SnappyCompressor) }

// AppendCompressed appends src in xerial framing to dst. It never fails.
func (SnappyCompressor) AppendCompressed(dst, src []byte) ([]byte, error) {
	return AppendXerial(dst, src), nil
}

// AppendXerial appends src as xerial-framed snappy to dst, as Kafka's Java
// client frames it.
func AppendXerial(dst, src []byte) []byte {
	dst = slices.Grow(dst, xerialHeaderLen+chunkedBound(len(src), xerialBlockSize, xerialLenSize))
	dst = append(dst, xerialHeader[:]...)
	for len(src) > 0 {
		n := min(len(src), xerialBlockSize)
		at := len(dst)
		dst = dst[:at+xerialLenSize]
		// EncodeSnappy writes in place when given room for MaxEncodedLen.
		block := encodeSnappy(dst[at+xerialLenSize:cap(dst)], src[:n])
		binary.BigEndian.PutUint32(dst[at:], uint32(len(block)))
		dst = dst[:at+xerialLenSize+len(block)]
		src = src[n:]
	}
	return dst
}

// AppendSnappyBlock appends src as one raw snappy block (the unframed
// format, as Snappy.compress writes it) to dst. Kafka's clients do not write
// it, but every Kafka reader accepts it. It encodes at most 64 KiB per call
// of the underlying encoder, so that long runs cannot exhaust a WASM stack:
// the block is the concatenation of the elements of each chunk, after one
// length header for the whole input.
func AppendSnappyBlock(dst, src []byte) []byte {
	dst = slices.Grow(dst, binary.MaxVarintLen64+chunkedBound(len(src), snappyChunk, 0))
	dst = binary.AppendUvarint(dst, uint64(len(src)))
	for len(src) > 0 {
		n := min(len(src), snappyChunk)
		at := len(dst)
		enc := encodeSnappy(dst[at:cap(dst)], src[:n])
		// Drop the chunk's own length header: its elements follow ours.
		_, hl := binary.Uvarint(enc)
		copy(dst[at:cap(dst)], enc[hl:])
		dst = dst[:at+len(enc)-hl]
		src = src[n:]
	}
	return dst
}

// chunkedBound is the most that encoding n bytes in chunks of size can
// write, with prefix bytes before each chunk.
func chunkedBound(n, size, prefix int) int {
	full, rest := n/size, n%size
	bound := full * (prefix + s2.MaxEncodedLen(size))
	if rest > 0 {
		bound += prefix + s2.MaxEncodedLen(rest)
	}
	return bound
}

// SnappyDecompressor reads both forms Kafka readers accept: xerial framing
// (recognised, as snappy-java does, by a 16-byte prefix starting with the
// xerial magic) and a raw snappy block. Every chunk length is checked
// against the remaining input and every block's declared size against the
// limit before anything is allocated; dst then grows once, to the exact
// total, and blocks decode straight into it.
//
// By default blocks are decoded with klauspost's S2 decoder, which also
// accepts S2's repeat-offset copies (offset 0), invalid in standard snappy
// and never written by any Kafka client; Strict uses the standard decoder,
// which rejects them as snappy-java does, at about half the speed. Either
// way the output is bounded and malformed input is an error; the batch's
// CRC-32C, checked before decompressing, is what guards integrity.
//
// The zero value is ready to use and is safe for concurrent use.
type SnappyDecompressor struct {
	// Strict rejects everything snappy-java rejects, S2 extensions
	// included.
	Strict bool
}

// NewSnappyDecompressor returns a snappy Decompressor.
func NewSnappyDecompressor() *SnappyDecompressor { return new(SnappyDecompressor) }

// AppendDecompressed appends the decompressed form of src to dst, at most
// limit bytes.
func (d SnappyDecompressor) AppendDecompressed(dst, src []byte, limit int) ([]byte, error) {
	limit = max(limit, 0)
	if len(src) >= xerialHeaderLen && bytes.HasPrefix(src, []byte(xerialMagic)) {
		return appendXerialDecoded(dst, src, limit, d.Strict)
	}
	n, err := s2.DecodedLen(src)
	if err != nil {
		return dst, errCorrupt(0, "snappy: bad block length header")
	}
	if n > limit {
		return dst, errTooLarge("snappy", 0, limit)
	}
	out, err := decodeSnappyInto(dst, src, n, d.Strict)
	if err != nil {
		return dst, errCorrupt(0, "snappy: %v", err)
	}
	return out, nil
}

func appendXerialDecoded(dst, src []byte, limit int, strict bool) ([]byte, error) {
	if v := int32(binary.BigEndian.Uint32(src[len(xerialMagic):])); v < xerialMinCompatible {
		// snappy-java refuses streams older than its minimum version.
		return dst, errCorrupt(len(xerialMagic), "snappy: xerial version %d is below %d", v, xerialMinCompatible)
	}
	// First pass: check every chunk header and sum the declared sizes.
	total := 0
	for pos := xerialHeaderLen; pos < len(src); {
		if len(src)-pos < xerialLenSize {
			return dst, errTruncated(pos, "snappy: xerial chunk length")
		}
		size := binary.BigEndian.Uint32(src[pos:])
		pos += xerialLenSize
		if uint64(size) > uint64(len(src)-pos) {
			return dst, errTruncated(pos-xerialLenSize, "snappy: xerial chunk")
		}
		n, err := s2.DecodedLen(src[pos : pos+int(size)])
		if err != nil {
			return dst, errCorrupt(pos, "snappy: bad block length header")
		}
		if n > limit-total {
			return dst, errTooLarge("snappy", pos, limit)
		}
		total += n
		pos += int(size)
	}
	orig := dst
	dst = grow(dst, total)
	for pos := xerialHeaderLen; pos < len(src); {
		size := int(binary.BigEndian.Uint32(src[pos:]))
		pos += xerialLenSize
		block := src[pos : pos+size]
		n, _ := s2.DecodedLen(block)
		var err error
		dst, err = decodeSnappyInto(dst, block, n, strict)
		if err != nil {
			return orig, errCorrupt(pos, "snappy: %v", err)
		}
		pos += size
	}
	return dst, nil
}

// decodeSnappyInto decodes the raw block src, whose declared length is n,
// into dst's spare capacity, growing dst if needed.
func decodeSnappyInto(dst, src []byte, n int, strict bool) ([]byte, error) {
	dst = grow(dst, n)
	at := len(dst)
	var err error
	if strict {
		_, err = snappy.DecodeStrict(dst[at:at+n], src)
	} else {
		_, err = s2.Decode(dst[at:at+n], src)
	}
	if err != nil {
		return dst[:at], err
	}
	return dst[:at+n], nil
}
