package compress

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/klauspost/compress/zstd"
)

// Zstandard frames (RFC 8878), as far as the decompressor reads them itself
// to bound the output before decoding.
//
// These constants are part of the wire format and should not be changed.
const (
	zstdMagic          = 0xFD2FB528
	zstdSkippableMagic = 0x184D2A50 // low 4 bits are free
	zstdSkippableMask  = 0xFFFFFFF0
	zstdMagicLen       = 4

	// Frame_Header_Descriptor.
	zstdFHDContentSize   = 0xC0 // Frame_Content_Size_Flag, 2 bits
	zstdFHDSingleSegment = 0x20
	zstdFHDReserved      = 0x08
	zstdFHDChecksum      = 0x04
	zstdFHDDictID        = 0x03 // Dictionary_ID_Flag, 2 bits

	zstdBlockHeaderLen = 3
	zstdChecksumLen    = 4
	zstdMinWindow      = 1 << 10
	zstdMaxBlock       = 128 << 10 // Block_Maximum_Size is min(window, this)

	// Block_Type.
	zstdBlockRaw        = 0
	zstdBlockRLE        = 1
	zstdBlockCompressed = 2

	// zstdOverAlloc is the slack klauspost's decoder wants past a block.
	zstdOverAlloc = 32

	// zstdMaxWindow is the largest window the format allows (3.75 TiB).
	zstdMaxWindow = 1<<41 + 7<<38
)

// zstdKeepWindow is the largest stream buffer a ZstdDecompressor keeps
// between calls; Java's zstd-jni writes windows of 2 to 8 MiB at levels up
// to 19.
const zstdKeepWindow = 8 << 20

// zstdDefaultLevel is Kafka's default compression.zstd.level.
const zstdDefaultLevel = 3

// ZstdCompressor writes one zstd frame per call with klauspost/compress's
// encoder (concurrency 1, so no goroutines): the frame declares its content
// size and, as zstd-jni's default in Kafka's Java client, carries no
// checksum; empty input gives an empty frame. Not safe for concurrent use.
type ZstdCompressor struct {
	level int // as given: 0 means default
	enc   *zstd.Encoder
}

// NewZstdCompressor returns a zstd Compressor at Kafka's
// compression.zstd.level (-131072 to 22; 0 selects the default, 3). Levels
// map onto klauspost's four speeds as zstd.EncoderLevelFromZstd does.
func NewZstdCompressor(level int) (*ZstdCompressor, error) {
	if level < -131072 || level > 22 {
		return nil, fmt.Errorf("compress: invalid zstd level %d (want -131072 to 22, or 0 for the default)", level)
	}
	return &ZstdCompressor{level: level}, nil
}

// AppendCompressed appends one zstd frame holding src to dst.
func (c *ZstdCompressor) AppendCompressed(dst, src []byte) ([]byte, error) {
	if c.enc == nil {
		lvl := c.level
		if lvl == 0 {
			lvl = zstdDefaultLevel
		}
		enc, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(lvl)),
			zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(false),
			zstd.WithZeroFrames(true),
		)
		if err != nil {
			return dst, fmt.Errorf("compress: zstd: %w", err)
		}
		c.enc = enc
	}
	dst = slices.Grow(dst, c.enc.MaxEncodedSize(len(src)))
	return c.enc.EncodeAll(src, dst), nil
}

// ZstdDecompressor reads zstd frames, concatenated or not, with skippable
// frames, as Java's zstd-jni streams write them (with or without a declared
// content size, in many blocks). It walks the frame and block headers
// itself first: a declared size beyond the limit, or raw and RLE blocks that
// already add up to more, fail before anything is allocated, and the output
// is bounded by the declared sizes, or by the blocks' maximum sizes, so that
// dst grows once and klauspost's DecodeAll (concurrency 1, capped to dst's
// capacity) decodes in place. A frame without a declared size whose bound
// exceeds the limit is streamed instead, stopping one byte past the limit;
// the stream buffer (about the frame's window, lowered to about the limit
// if larger) is kept for the next call when it is at most 8 MiB. The zero
// value is ready to use. Not safe for concurrent use.
type ZstdDecompressor struct {
	dec     *zstd.Decoder
	frames  []zstdFrame
	br      bytes.Reader
	scratch []byte
	probe   [1]byte
}

// NewZstdDecompressor returns a zstd Decompressor.
func NewZstdDecompressor() *ZstdDecompressor { return new(ZstdDecompressor) }

// zstdFrame describes one frame found by scan.
type zstdFrame struct {
	start, end int
	wdPos      int    // position of the Window_Descriptor, -1 if none
	window     uint64 // Window_Size
	size       int64  // Frame_Content_Size, -1 when not declared
	bound      int64  // the most the blocks can decode to
}

func (d *ZstdDecompressor) decoder() (*zstd.Decoder, error) {
	if d.dec == nil {
		dec, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecodeAllCapLimit(true),
			// DecodeAll decodes into dst, so a large window costs nothing
			// there, and stream lowers it; accept what zstd allows.
			zstd.WithDecoderMaxWindow(zstdMaxWindow),
		)
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		d.dec = dec
	}
	return d.dec, nil
}

// scan walks every frame and block header. It fails with ErrTooLarge as soon
// as the output is certain to exceed limit, and returns the frames (skippable
// ones left out) and the sum of their bounds (capped at limit+1).
func (d *ZstdDecompressor) scan(src []byte, limit int) (int64, error) {
	d.frames = d.frames[:0]
	if len(src) == 0 {
		return 0, errTruncated(0, "zstd: frame magic")
	}
	var known, total int64 // certain output; bound on the output
	for pos := 0; pos < len(src); {
		if len(src)-pos < zstdMagicLen {
			return 0, errTruncated(pos, "zstd: frame magic")
		}
		magic := binary.LittleEndian.Uint32(src[pos:])
		if magic&zstdSkippableMask == zstdSkippableMagic {
			if len(src)-pos < zstdMagicLen+4 {
				return 0, errTruncated(pos, "zstd: skippable frame")
			}
			size := binary.LittleEndian.Uint32(src[pos+zstdMagicLen:])
			pos += zstdMagicLen + 4
			if uint64(size) > uint64(len(src)-pos) {
				return 0, errTruncated(pos, "zstd: skippable frame")
			}
			pos += int(size)
			continue
		}
		if magic != zstdMagic {
			return 0, errCorrupt(pos, "zstd: bad frame magic %#08x", magic)
		}
		f := zstdFrame{start: pos, wdPos: -1, size: -1}
		pos += zstdMagicLen
		if pos >= len(src) {
			return 0, errTruncated(pos, "zstd: frame header")
		}
		fhd := src[pos]
		if fhd&zstdFHDReserved != 0 {
			return 0, errCorrupt(pos, "zstd: reserved bit set in frame header")
		}
		single := fhd&zstdFHDSingleSegment != 0
		dictLen := [4]int{0, 1, 2, 4}[fhd&zstdFHDDictID]
		fcsLen := [4]int{0, 2, 4, 8}[fhd>>6]
		if fcsLen == 0 && single {
			fcsLen = 1
		}
		hdrLen := 1 + dictLen + fcsLen
		if !single {
			hdrLen++
		}
		if len(src)-pos < hdrLen {
			return 0, errTruncated(pos, "zstd: frame header")
		}
		p := pos + 1
		if !single {
			wd := src[p]
			f.wdPos = p
			f.window = zstdWindow(wd)
			p++
		}
		p += dictLen
		if fcsLen > 0 {
			var fcs uint64
			switch fcsLen {
			case 1:
				fcs = uint64(src[p])
			case 2:
				fcs = uint64(binary.LittleEndian.Uint16(src[p:])) + 256
			case 4:
				fcs = uint64(binary.LittleEndian.Uint32(src[p:]))
			case 8:
				fcs = binary.LittleEndian.Uint64(src[p:])
			}
			f.size = int64(min(fcs, 1<<62))
			if f.size > int64(limit)-known {
				return 0, errTooLarge("zstd", p, limit)
			}
			known += f.size
			if single {
				f.window = max(fcs, zstdMinWindow)
			}
		}
		pos += hdrLen
		blockMax := int64(min(f.window, zstdMaxBlock))
		for {
			if len(src)-pos < zstdBlockHeaderLen {
				return 0, errTruncated(pos, "zstd: block header")
			}
			h := uint32(src[pos]) | uint32(src[pos+1])<<8 | uint32(src[pos+2])<<16
			last, typ, size := h&1 != 0, (h>>1)&3, int64(h>>3)
			hdr := pos
			pos += zstdBlockHeaderLen
			var in int64
			switch typ {
			case zstdBlockRaw, zstdBlockRLE:
				if size > blockMax {
					return 0, errCorrupt(hdr, "zstd: block size %d exceeds the frame's maximum %d", size, blockMax)
				}
				in = size
				if typ == zstdBlockRLE {
					in = 1
				}
				if f.size < 0 {
					if size > int64(limit)-known {
						return 0, errTooLarge("zstd", hdr, limit)
					}
					known += size
				}
				f.bound += size
			case zstdBlockCompressed:
				if size > blockMax {
					return 0, errCorrupt(hdr, "zstd: block size %d exceeds the frame's maximum %d", size, blockMax)
				}
				in = size
				f.bound += blockMax
			default:
				return 0, errCorrupt(hdr, "zstd: reserved block type")
			}
			if in > int64(len(src)-pos) {
				return 0, errTruncated(hdr, "zstd: block")
			}
			pos += int(in)
			f.bound = min(f.bound, int64(limit)+1) // no overflow
			if last {
				break
			}
		}
		if fhd&zstdFHDChecksum != 0 {
			if len(src)-pos < zstdChecksumLen {
				return 0, errTruncated(pos, "zstd: content checksum")
			}
			pos += zstdChecksumLen
		}
		f.end = pos
		if f.size >= 0 {
			f.bound = f.size
		}
		total = min(total+f.bound, int64(limit)+1)
		d.frames = append(d.frames, f)
	}
	return total, nil
}

// zstdWindow decodes a Window_Descriptor.
func zstdWindow(wd byte) uint64 {
	base := uint64(1) << (10 + wd>>3)
	return base + base/8*uint64(wd&7)
}

// AppendDecompressed appends the decompressed form of src to dst, at most
// limit bytes.
func (d *ZstdDecompressor) AppendDecompressed(dst, src []byte, limit int) ([]byte, error) {
	limit = max(limit, 0)
	total, err := d.scan(src, limit)
	if err != nil {
		return dst, err
	}
	orig := dst
	start := len(dst)
	dst = grow(dst, int(min(total, int64(limit))))
	for _, f := range d.frames {
		room := limit - (len(dst) - start)
		if f.size > int64(room) {
			return orig, errTooLarge("zstd", f.start, limit)
		}
		if f.bound > int64(room) {
			// Only a frame without a declared size gets here: its blocks may
			// or may not hold more than the limit allows.
			dst, err = d.stream(dst, src, f, room, limit)
			if err != nil {
				return orig, err
			}
			continue
		}
		dec, err := d.decoder()
		if err != nil {
			return orig, errCorrupt(f.start, "%v", err)
		}
		need := int(f.bound)
		dst = grow(dst, need)
		out, err := dec.DecodeAll(src[f.start:f.end], dst[:len(dst):len(dst)+need])
		if err != nil {
			return orig, errLibrary("zstd", f.start, err)
		}
		if f.size >= 0 && int64(len(out)-len(dst)) != f.size {
			return orig, errCorrupt(f.start, "zstd: frame holds %d bytes, its header declares %d", len(out)-len(dst), f.size)
		}
		dst = out
	}
	return dst, nil
}

// stream decodes frame f with the streaming decoder, reading at most room
// bytes into dst and one more to detect excess. The window the frame
// declares sets the streaming decoder's buffer; when it is larger than the
// room (plus a block), the frame is decoded from a copy whose
// Window_Descriptor is lowered to that, which changes nothing while the
// output stays within the limit (no match can reach further back than the
// output so far), so the buffer stays near the limit whatever the header
// claims.
func (d *ZstdDecompressor) stream(dst, src []byte, f zstdFrame, room, limit int) ([]byte, error) {
	in := src[f.start:f.end]
	window := f.window
	if f.wdPos >= 0 {
		want := uint64(room) + zstdMaxBlock + zstdOverAlloc
		if wd, ok := zstdWindowFor(want); ok && window > zstdWindow(wd) {
			d.scratch = append(d.scratch[:0], in...)
			d.scratch[f.wdPos-f.start] = wd
			in = d.scratch
			window = zstdWindow(wd)
		}
	}
	if _, err := d.decoder(); err != nil {
		return dst, errCorrupt(f.start, "%v", err)
	}
	defer func() {
		// The decoder keeps its stream buffer (about the window) for the
		// next call; a large one is dropped rather than held.
		d.dec.Reset(nil)
		d.br.Reset(nil)
		if window > zstdKeepWindow {
			d.dec.Close()
			d.dec = nil
		}
		if cap(d.scratch) > zstdKeepWindow {
			d.scratch = nil
		}
	}()
	d.br.Reset(in)
	if err := d.dec.Reset(&d.br); err != nil {
		return dst, errLibrary("zstd", f.start, err)
	}
	start := len(dst)
	for {
		left := room - (len(dst) - start)
		if left == 0 {
			n, err := d.dec.Read(d.probe[:])
			if n > 0 {
				return dst, errTooLarge("zstd", f.start, limit)
			}
			if err == io.EOF {
				return dst, nil
			}
			if err != nil {
				return dst, errLibrary("zstd", f.start, err)
			}
			continue
		}
		if len(dst) == cap(dst) {
			dst = grow(dst, min(left, max(len(dst)-start, 64<<10)))
		}
		buf := dst[len(dst):cap(dst)]
		if len(buf) > left {
			buf = buf[:left]
		}
		n, err := d.dec.Read(buf)
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, errLibrary("zstd", f.start, err)
		}
	}
}

// zstdWindowFor returns the smallest Window_Descriptor whose window is at
// least n.
func zstdWindowFor(n uint64) (byte, bool) {
	for e := range 32 {
		for m := range 8 {
			wd := byte(e<<3 | m)
			if zstdWindow(wd) >= n {
				return wd, true
			}
		}
	}
	return 0, false
}
