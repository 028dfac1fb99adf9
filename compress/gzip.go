package compress

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
)

// These constants are part of the wire format and should not be changed.
const (
	gzipHeaderLen  = 10                    // ID1 ID2 CM FLG MTIME(4) XFL OS
	gzipTrailerLen = 8                     // CRC32 ISIZE
	gzipMinLen     = gzipHeaderLen + 2 + 8 // header, empty final block, trailer
	gzipXFLOffset  = 8                     // the XFL byte of the header
	gzipMaxRatio   = 1032                  // deflate's largest expansion
)

// gzipDefaultLevel is the level Java's GZIPOutputStream uses
// (Deflater.DEFAULT_COMPRESSION).
const gzipDefaultLevel = 6

// GzipCompressor writes a single gzip member, as Java's GZIPOutputStream
// does: no file name, no modification time, XFL 0, OS 255 (unknown, as JDK
// 16 and later write). The zero value uses the default level. Not safe for
// concurrent use.
type GzipCompressor struct {
	level int // as given: 0 means default
	zw    *gzip.Writer
	w     appendWriter
}

// NewGzipCompressor returns a gzip Compressor at level 1 (fastest) to 9
// (smallest); 0 selects the default, 6.
func NewGzipCompressor(level int) (*GzipCompressor, error) {
	if level < 0 || level > 9 {
		return nil, fmt.Errorf("compress: invalid gzip level %d (want 1 to 9, or 0 for the default)", level)
	}
	return &GzipCompressor{level: level}, nil
}

// AppendCompressed appends one gzip member holding src to dst.
func (c *GzipCompressor) AppendCompressed(dst, src []byte) ([]byte, error) {
	if c.zw == nil {
		lvl := c.level
		if lvl == 0 {
			lvl = gzipDefaultLevel
		}
		zw, err := gzip.NewWriterLevel(&c.w, lvl)
		if err != nil {
			return dst, fmt.Errorf("compress: %w", err)
		}
		c.zw = zw
	}
	start := len(dst)
	c.w.b = dst
	c.zw.Reset(&c.w)
	_, err := c.zw.Write(src)
	if err == nil {
		err = c.zw.Close()
	}
	out := c.w.b
	c.w.b = nil // never retain dst
	c.zw.Reset(&c.w)
	if err != nil {
		return dst, fmt.Errorf("compress: gzip: %w", err)
	}
	// klauspost writes XFL 2 or 4 at levels 9 and 1; Java always writes 0.
	out[start+gzipXFLOffset] = 0
	return out, nil
}

// appendWriter is an io.Writer that appends to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// GzipDecompressor reads gzip data: one member or several concatenated
// (RFC 1952 multi-member), each with its CRC-32 and size checked. Bytes
// after the last member that are not another member are an error. The zero
// value is ready to use. Not safe for concurrent use.
type GzipDecompressor struct {
	zr    gzip.Reader
	br    bytes.Reader
	probe [1]byte
}

// NewGzipDecompressor returns a gzip Decompressor.
func NewGzipDecompressor() *GzipDecompressor { return new(GzipDecompressor) }

// AppendDecompressed appends the decompressed form of src to dst, at most
// limit bytes. The output is read straight into dst's spare capacity; dst
// grows only when it is too small, first to the size the last member's
// trailer announces (a hint, bounded by limit and by deflate's largest
// ratio), then geometrically, never beyond limit.
func (d *GzipDecompressor) AppendDecompressed(dst, src []byte, limit int) ([]byte, error) {
	limit = max(limit, 0)
	orig := dst
	d.br.Reset(src)
	defer d.br.Reset(nil)
	if err := d.zr.Reset(&d.br); err != nil {
		return orig, d.error(src, err)
	}
	start := len(dst)
	if len(src) >= gzipMinLen {
		hint := int(binary.LittleEndian.Uint32(src[len(src)-4:]))
		hint = min(hint, limit, gzipMaxRatio*len(src))
		dst = grow(dst, hint)
	}
	for {
		room := limit - (len(dst) - start)
		if room == 0 {
			// Full: the stream must end here.
			n, err := d.zr.Read(d.probe[:])
			if n > 0 {
				return orig, errTooLarge("gzip", d.pos(src), limit)
			}
			if err == io.EOF {
				return dst, nil
			}
			if err != nil {
				return orig, d.error(src, err)
			}
			continue
		}
		if len(dst) == cap(dst) {
			dst = grow(dst, min(room, max(len(dst)-start, 32<<10)))
		}
		buf := dst[len(dst):cap(dst)]
		if len(buf) > room {
			buf = buf[:room]
		}
		n, err := d.zr.Read(buf)
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return orig, d.error(src, err)
		}
	}
}

// pos is how far into src the reader has consumed.
func (d *GzipDecompressor) pos(src []byte) int { return len(src) - d.br.Len() }

func (d *GzipDecompressor) error(src []byte, err error) error {
	return errLibrary("gzip", d.pos(src), err)
}
