package compress

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/pierrec/lz4/v4"
)

// Kafka compresses with the LZ4 frame format (KafkaLZ4BlockOutputStream,
// now Lz4BlockOutputStream): magic, FLG, BD, header checksum, blocks of at
// most 64 KiB of input, each compressed independently, an end mark, and no
// checksums besides the header's.
//
// These constants are part of the wire format and should not be changed.
const (
	lz4Magic          = 0x184D2204
	lz4SkippableMagic = 0x184D2A50 // low 4 bits are free
	lz4SkippableMask  = 0xFFFFFFF0
	lz4MagicLen       = 4

	// FLG byte.
	lz4FlagVersionMask       = 0xC0
	lz4FlagVersion1          = 0x40
	lz4FlagBlockIndependence = 0x20
	lz4FlagBlockChecksum     = 0x10
	lz4FlagContentSize       = 0x08
	lz4FlagContentChecksum   = 0x04
	lz4FlagReserved          = 0x03 // reserved and dictionary ID: Kafka rejects both
	// BD byte.
	lz4BDBlockSizeMask = 0x70
	lz4BDReserved      = 0x8F
	lz4BDBlock64K      = 4 << 4 // block maximum size 4 (64 KiB)

	lz4DescriptorLen  = 2 // FLG, BD
	lz4ContentSizeLen = 8
	lz4HeaderMinLen   = lz4MagicLen + lz4DescriptorLen + 1
	lz4BlockHeaderLen = 4
	lz4ChecksumLen    = 4
	lz4Uncompressed   = 0x80000000 // high bit of a block size: stored as is

	// kafkaFLG and kafkaBD are what Kafka's Java client writes: version 1,
	// independent blocks, no checksums, no content size; 64 KiB blocks.
	kafkaFLG          = lz4FlagVersion1 | lz4FlagBlockIndependence
	kafkaBD           = lz4BDBlock64K
	kafkaLZ4BlockSize = 64 << 10

	// lz4MaxRatio bounds how much one compressed block can expand: a match
	// of length 19+255k costs at least 3+k bytes.
	lz4MaxRatio = 255
)

// lz4GuessRatio is the compression ratio assumed, to size dst, for the last
// block of a frame that does not declare its size.
const lz4GuessRatio = 4

// lz4DefaultLevel is Kafka's default compression.lz4.level; at it, Kafka
// uses lz4-java's fast compressor.
const lz4DefaultLevel = 9

// LZ4Compressor writes LZ4 frames exactly as Kafka's Java client does for
// magic 1 and 2: FLG 0x60, BD 0x40, the header checksum, independent 64
// KiB blocks (stored uncompressed when compressing does not shrink them),
// the end mark, no block or content checksums. At the default level the
// blocks come from pierrec/lz4's CompressorCCompat, whose output is that of
// the C library lz4-java calls, so frames match Kafka's byte for byte. Not
// safe for concurrent use.
type LZ4Compressor struct {
	// LegacyHeaderChecksum writes the header checksum Kafka writes for
	// magic 0 (KAFKA-3160): xxHash32 over the magic number and descriptor
	// rather than the descriptor alone. Only needed to reproduce magic-0
	// message sets as old Kafka wrote them.
	LegacyHeaderChecksum bool

	level int // as given: 0 means default
	fast  lz4.CompressorCCompat
	hc    *lz4.CompressorHC
}

// NewLZ4Compressor returns an LZ4 Compressor. level is Kafka's
// compression.lz4.level: 0 or 9 (the default) give the fast compressor
// that reproduces Kafka's output; 1 to 17 otherwise give pierrec/lz4's
// high-compression compressor with search depth 2^(level-1).
func NewLZ4Compressor(level int) (*LZ4Compressor, error) {
	if level < 0 || level > 17 {
		return nil, fmt.Errorf("compress: invalid lz4 level %d (want 1 to 17, or 0 for the default)", level)
	}
	c := &LZ4Compressor{level: level}
	if level != 0 && level != lz4DefaultLevel {
		c.hc = &lz4.CompressorHC{Level: lz4.CompressionLevel(1 << (level - 1))}
	}
	return c, nil
}

// AppendCompressed appends one LZ4 frame holding src to dst.
func (c *LZ4Compressor) AppendCompressed(dst, src []byte) ([]byte, error) {
	dst = slices.Grow(dst, lz4FrameBound(len(src)))
	dst = appendLZ4Header(dst, c.LegacyHeaderChecksum)
	for len(src) > 0 {
		n := min(len(src), kafkaLZ4BlockSize)
		chunk := src[:n]
		at := len(dst)
		dst = dst[:at+lz4BlockHeaderLen+lz4.CompressBlockBound(n)] // within the capacity grown above
		out := dst[at+lz4BlockHeaderLen:]
		var k int
		var err error
		if c.hc != nil {
			k, err = c.hc.CompressBlock(chunk, out)
		} else {
			k, err = c.fast.CompressBlock(chunk, out)
		}
		if err != nil || k == 0 || k >= n {
			// As Java: store the block when compressing does not shrink it.
			binary.LittleEndian.PutUint32(dst[at:], uint32(n)|lz4Uncompressed)
			copy(out, chunk)
			k = n
		} else {
			binary.LittleEndian.PutUint32(dst[at:], uint32(k))
		}
		dst = dst[:at+lz4BlockHeaderLen+k]
		src = src[n:]
	}
	return binary.LittleEndian.AppendUint32(dst, 0), nil // end mark
}

// lz4FrameBound is the largest frame AppendCompressed writes for n bytes.
func lz4FrameBound(n int) int {
	full, rest := n/kafkaLZ4BlockSize, n%kafkaLZ4BlockSize
	bound := lz4HeaderMinLen + full*(lz4BlockHeaderLen+lz4.CompressBlockBound(kafkaLZ4BlockSize)) + lz4BlockHeaderLen
	if rest > 0 {
		bound += lz4BlockHeaderLen + lz4.CompressBlockBound(rest)
	}
	return bound
}

// appendLZ4Header appends Kafka's frame header: magic, FLG, BD and the
// header checksum, the second byte of xxHash32 over the descriptor (or,
// legacy, over the magic number and the descriptor).
func appendLZ4Header(dst []byte, legacy bool) []byte {
	at := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, lz4Magic)
	dst = append(dst, kafkaFLG, kafkaBD)
	covered := dst[at+lz4MagicLen:]
	if legacy {
		covered = dst[at:]
	}
	return append(dst, byte(xxh32(covered)>>8))
}

var lz4Pool = sync.Pool{New: func() any { return new(LZ4Compressor) }}

// AppendLZ4FrameKafkaLegacy appends src as the LZ4 frame Kafka writes for
// magic-0 message sets: the frame of LZ4Compressor with the KAFKA-3160 header
// checksum (xxHash32 over magic and descriptor). Old Kafka wrote every LZ4
// frame this way; every other Go LZ4 reader rejects it, LZ4Decompressor
// accepts it. Use it to produce magic-0 data as old brokers stored it.
func AppendLZ4FrameKafkaLegacy(dst, src []byte) []byte {
	c := lz4Pool.Get().(*LZ4Compressor)
	c.LegacyHeaderChecksum = true
	dst, _ = c.AppendCompressed(dst, src) // the fast compressor cannot fail
	lz4Pool.Put(c)
	return dst
}

// LZ4Decompressor reads LZ4 frames (and skippable frames) as the LZ4 frame
// format defines them, with Kafka's restrictions: version 1, independent
// blocks, no dictionary. It accepts the header checksum in both its correct
// form and the KAFKA-3160 form old Kafka wrote (over the magic number too),
// checks block and content checksums when the frame has them, and checks
// every block size against the frame's maximum, the remaining input and the
// limit before decompressing. Frames may be concatenated; nothing else may
// follow. The zero value is ready to use. Not safe for concurrent use.
type LZ4Decompressor struct {
	scratch []byte // a block whose size is not known in advance
}

// NewLZ4Decompressor returns an LZ4 Decompressor.
func NewLZ4Decompressor() *LZ4Decompressor { return new(LZ4Decompressor) }

// lz4Frame describes one frame header.
type lz4Frame struct {
	flg         byte
	blockMax    int
	contentSize int64 // -1 when the header does not declare it
}

// readLZ4Header parses the frame header at src[pos:], whose magic has been
// checked, and returns the frame and the position of its first block.
func readLZ4Header(src []byte, pos int) (lz4Frame, int, error) {
	start := pos
	pos += lz4MagicLen
	if len(src)-pos < lz4DescriptorLen+1 {
		return lz4Frame{}, 0, errTruncated(pos, "lz4: frame header")
	}
	flg, bd := src[pos], src[pos+1]
	switch {
	case flg&lz4FlagVersionMask != lz4FlagVersion1:
		return lz4Frame{}, 0, errCorrupt(pos, "lz4: unsupported frame version %d", flg>>6)
	case flg&lz4FlagReserved != 0:
		return lz4Frame{}, 0, errCorrupt(pos, "lz4: reserved or dictionary bits set in FLG %#02x", flg)
	case flg&lz4FlagBlockIndependence == 0:
		return lz4Frame{}, 0, errCorrupt(pos, "lz4: dependent blocks are not supported (Kafka writes independent blocks)")
	case bd&lz4BDReserved != 0:
		return lz4Frame{}, 0, errCorrupt(pos+1, "lz4: reserved bits set in BD %#02x", bd)
	case bd>>4 < 4:
		return lz4Frame{}, 0, errCorrupt(pos+1, "lz4: invalid block maximum size %d", bd>>4)
	}
	f := lz4Frame{flg: flg, blockMax: 1 << (2*int(bd>>4) + 8), contentSize: -1}
	pos += lz4DescriptorLen
	if flg&lz4FlagContentSize != 0 {
		if len(src)-pos < lz4ContentSizeLen+1 {
			return lz4Frame{}, 0, errTruncated(pos, "lz4: frame header")
		}
		cs := binary.LittleEndian.Uint64(src[pos:])
		if cs > 1<<62 {
			cs = 1 << 62 // larger than any limit; keeps the sum from overflowing
		}
		f.contentSize = int64(cs)
		pos += lz4ContentSizeLen
	}
	hc := src[pos]
	if hc != byte(xxh32(src[start+lz4MagicLen:pos])>>8) && hc != byte(xxh32(src[start:pos])>>8) {
		return lz4Frame{}, 0, errCorrupt(pos, "lz4: header checksum mismatch")
	}
	return f, pos + 1, nil
}

// lz4Scan is what a first pass over the input learns.
type lz4Scan struct {
	known int // output that is certain: stored blocks and declared sizes
	hint  int // a guess of the total, for growing dst once
}

// scan walks every frame and block header, checking the structure and
// sizes, without decompressing anything. It fails with ErrTooLarge as soon
// as the output is certain to exceed limit.
func (d *LZ4Decompressor) scan(src []byte, limit int) (lz4Scan, error) {
	var s lz4Scan
	if len(src) == 0 {
		return s, errTruncated(0, "lz4: frame magic")
	}
	for pos := 0; pos < len(src); {
		if len(src)-pos < lz4MagicLen {
			return s, errTruncated(pos, "lz4: frame magic")
		}
		magic := binary.LittleEndian.Uint32(src[pos:])
		if magic&lz4SkippableMask == lz4SkippableMagic {
			if len(src)-pos < lz4MagicLen+4 {
				return s, errTruncated(pos, "lz4: skippable frame")
			}
			size := binary.LittleEndian.Uint32(src[pos+lz4MagicLen:])
			pos += lz4MagicLen + 4
			if uint64(size) > uint64(len(src)-pos) {
				return s, errTruncated(pos, "lz4: skippable frame")
			}
			pos += int(size)
			continue
		}
		if magic != lz4Magic {
			return s, errCorrupt(pos, "lz4: bad frame magic %#08x", magic)
		}
		f, p, err := readLZ4Header(src, pos)
		if err != nil {
			return s, err
		}
		pos = p
		if f.contentSize >= 0 {
			if f.contentSize > int64(limit-s.known) {
				return s, errTooLarge("lz4", pos-1-lz4ContentSizeLen, limit)
			}
			s.known += int(f.contentSize)
			s.hint += int(f.contentSize)
		}
		// This frame's estimated output, when it does not declare it.
		guess, last, lastSize := 0, 0, 0
		for {
			if len(src)-pos < lz4BlockHeaderLen {
				return s, errTruncated(pos, "lz4: block header")
			}
			h := binary.LittleEndian.Uint32(src[pos:])
			size := int(h &^ lz4Uncompressed)
			if size == 0 { // end mark (Kafka also takes the flagged form)
				pos += lz4BlockHeaderLen
				break
			}
			if size > f.blockMax {
				return s, errCorrupt(pos, "lz4: block size %d exceeds the frame's maximum %d", size, f.blockMax)
			}
			pos += lz4BlockHeaderLen
			end := size
			if f.flg&lz4FlagBlockChecksum != 0 {
				end += lz4ChecksumLen
			}
			if end > len(src)-pos {
				return s, errTruncated(pos-lz4BlockHeaderLen, "lz4: block")
			}
			if f.contentSize < 0 {
				if h&lz4Uncompressed != 0 {
					if size > limit-s.known {
						return s, errTooLarge("lz4", pos-lz4BlockHeaderLen, limit)
					}
					s.known += size
					guess += size
				} else {
					// Writers fill every block but the last: count full
					// blocks, and a typical ratio for the last one.
					guess += last
					last, lastSize = min(f.blockMax, lz4MaxRatio*size), size
				}
			}
			pos += end
		}
		if f.contentSize < 0 {
			s.hint += guess + min(last, lz4GuessRatio*lastSize)
		}
		s.hint = min(s.hint, limit) // and no overflow
		if f.flg&lz4FlagContentChecksum != 0 {
			if len(src)-pos < lz4ChecksumLen {
				return s, errTruncated(pos, "lz4: content checksum")
			}
			pos += lz4ChecksumLen
		}
	}
	s.hint = min(s.hint, limit)
	return s, nil
}

// AppendDecompressed appends the decompressed form of src to dst, at most
// limit bytes. A first pass checks the structure and the declared sizes;
// dst then grows once (to the exact size when every frame declares it), and
// blocks decompress straight into it. A block whose size cannot be bounded
// within dst's capacity and the limit decompresses into a scratch buffer
// (at most the frame's block size, and 255 times the block's compressed
// size) and is then appended.
func (d *LZ4Decompressor) AppendDecompressed(dst, src []byte, limit int) ([]byte, error) {
	limit = max(limit, 0)
	s, err := d.scan(src, limit)
	if err != nil {
		return dst, err
	}
	orig := dst
	start := len(dst)
	dst = grow(dst, s.hint)
	for pos := 0; pos < len(src); {
		magic := binary.LittleEndian.Uint32(src[pos:])
		if magic&lz4SkippableMask == lz4SkippableMagic {
			pos += lz4MagicLen + 4 + int(binary.LittleEndian.Uint32(src[pos+lz4MagicLen:]))
			continue
		}
		f, p, _ := readLZ4Header(src, pos) // checked by scan
		pos = p
		frameStart := len(dst)
		for {
			h := binary.LittleEndian.Uint32(src[pos:])
			size := int(h &^ lz4Uncompressed)
			hdr := pos
			pos += lz4BlockHeaderLen
			if size == 0 {
				break
			}
			block := src[pos : pos+size]
			if f.flg&lz4FlagBlockChecksum != 0 {
				if binary.LittleEndian.Uint32(src[pos+size:]) != xxh32(block) {
					return orig, errCorrupt(pos+size, "lz4: block checksum mismatch")
				}
			}
			room := limit - (len(dst) - start)
			if h&lz4Uncompressed != 0 {
				if size > room {
					return orig, errTooLarge("lz4", hdr, limit)
				}
				dst = append(dst, block...)
			} else if dst, err = d.block(dst, block, f.blockMax, room); err != nil {
				if err == errLZ4TooLarge {
					return orig, errTooLarge("lz4", hdr, limit)
				}
				return orig, errCorrupt(pos, "lz4: %v", err)
			}
			pos += size
			if f.flg&lz4FlagBlockChecksum != 0 {
				pos += lz4ChecksumLen
			}
		}
		if f.contentSize >= 0 && int64(len(dst)-frameStart) != f.contentSize {
			return orig, errCorrupt(pos, "lz4: frame holds %d bytes, its header declares %d", len(dst)-frameStart, f.contentSize)
		}
		if f.flg&lz4FlagContentChecksum != 0 {
			if binary.LittleEndian.Uint32(src[pos:]) != xxh32(dst[frameStart:]) {
				return orig, errCorrupt(pos, "lz4: content checksum mismatch")
			}
			pos += lz4ChecksumLen
		}
	}
	return dst, nil
}

var errLZ4TooLarge = errors.New("block exceeds the limit")

// block decompresses one compressed block onto dst, room bytes at most. It
// tries dst's spare capacity first; when that might be too small (the
// block's size is only known once decompressed), a failure is retried in a
// scratch buffer that fits any valid block, which tells a short buffer from
// a corrupt block.
func (d *LZ4Decompressor) block(dst, block []byte, blockMax, room int) ([]byte, error) {
	bound := min(blockMax, lz4MaxRatio*len(block))
	avail := min(cap(dst)-len(dst), room)
	if avail >= len(block) || avail >= bound {
		n, err := lz4.UncompressBlock(block, dst[len(dst):len(dst)+avail])
		if err == nil {
			return dst[:len(dst)+n], nil
		}
		if avail >= bound {
			return dst, err
		}
	}
	if cap(d.scratch) < bound {
		d.scratch = make([]byte, bound)
	}
	n, err := lz4.UncompressBlock(block, d.scratch[:bound])
	if err != nil {
		return dst, err
	}
	if n > room {
		return dst, errLZ4TooLarge
	}
	return append(dst, d.scratch[:n]...), nil
}
