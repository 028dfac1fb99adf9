package record

import (
	"errors"
	"io"

	"github.com/segkit/segkit/format"
)

// DefaultChunkSize is how much a ReaderScanner reads at a time.
const DefaultChunkSize = 1 << 20

// ReaderScanner is a Scanner over a file (any io.ReaderAt of known size)
// that reads it in chunks, so that a segment of any size is scanned in
// bounded memory: the chunk size, or the largest entry when that is
// bigger. An Entry's slices alias the ReaderScanner's buffer and are valid
// until the next call to Next.
//
// At the end of the file a partial entry or zero bytes are a tail (see
// Tail), not an error. Read errors are returned by Err as they are; bad
// bytes as *format.CorruptionError with the file's path and position.
type ReaderScanner struct {
	// Validate checks every record, as Scanner.Validate.
	Validate bool
	// MaxDecompressed bounds the decompressed size of an entry's records
	// while Validate checks them; 0 means DefaultMaxDecompressed.
	MaxDecompressed int
	// ChunkSize is the read size; 0 means DefaultChunkSize.
	ChunkSize int

	r      io.ReaderAt
	size   int64
	path   string
	buf    []byte
	bufPos int64 // file position of buf[0]
	s      Scanner
	err    error
	atEOF  bool // buf reaches the end of the file
}

// Reset starts scanning r, of size bytes and named path, at position
// start. It keeps the buffer.
func (rs *ReaderScanner) Reset(r io.ReaderAt, size int64, path string, start int64) {
	rs.r, rs.size, rs.path = r, size, path
	rs.buf = rs.buf[:0]
	rs.bufPos = start
	rs.err = nil
	rs.atEOF = start >= size
	rs.s.Reset(nil, path, start)
}

// fill reads the next chunk, keeping the unconsumed bytes of the current
// one, and at least need bytes if the file has them.
func (rs *ReaderScanner) fill(need int) bool {
	keep := rs.buf[rs.s.ValidBytes():]
	rs.bufPos += int64(rs.s.ValidBytes())
	chunk := rs.ChunkSize
	if chunk <= 0 {
		chunk = DefaultChunkSize
	}
	want := max(chunk, need)
	if rem := rs.size - rs.bufPos; int64(want) > rem {
		want = int(rem)
	}
	if cap(rs.buf) < want {
		nb := make([]byte, len(keep), want)
		copy(nb, keep)
		rs.buf = nb
	} else {
		rs.buf = rs.buf[:copy(rs.buf[:cap(rs.buf)], keep)]
	}
	if len(rs.buf) < want {
		at := rs.bufPos + int64(len(rs.buf))
		n, err := rs.r.ReadAt(rs.buf[len(rs.buf):want], at)
		rs.buf = rs.buf[:len(rs.buf)+n]
		if err != nil && !(errors.Is(err, io.EOF) && len(rs.buf) == want) {
			if errors.Is(err, io.EOF) {
				// The file shrank under us: scan what there is.
				rs.size = rs.bufPos + int64(len(rs.buf))
			} else {
				rs.err = err
				return false
			}
		}
	}
	rs.atEOF = rs.bufPos+int64(len(rs.buf)) >= rs.size
	v := rs.s.Validate
	rs.s.Reset(rs.buf, rs.path, rs.bufPos)
	rs.s.Validate, rs.s.MaxDecompressed = v, rs.MaxDecompressed
	return true
}

// Next advances to the next entry.
func (rs *ReaderScanner) Next() bool {
	if rs.err != nil {
		return false
	}
	rs.s.Validate, rs.s.MaxDecompressed = rs.Validate, rs.MaxDecompressed
	for {
		if rs.s.Next() {
			return true
		}
		if rs.s.Err() != nil || rs.atEOF {
			return false
		}
		// The chunk ended inside an entry: read on, with room for the
		// whole entry when its header says how long it is.
		need := 0
		rest := rs.buf[rs.s.ValidBytes():]
		if len(rest) >= LogOverhead {
			size := int64(format.Int32(rest[LengthOffset:]))
			if size >= 0 && size <= int64(MaxBatchSize) {
				need = int(min(int64(LogOverhead)+size, rs.size-rs.bufPos-int64(rs.s.ValidBytes())))
			}
		}
		if len(rest) >= HeaderSizeUpToMagic && need <= len(rest) {
			// The Scanner stopped at a header it had whole, with the bytes
			// its length needs: a zero header, the start of zeros that run
			// past the buffer. More bytes cannot change that; refilling
			// would not grow the buffer and would loop for ever.
			return false
		}
		if !rs.fill(need) {
			return false
		}
	}
}

// Entry returns the current entry.
func (rs *ReaderScanner) Entry() *Entry { return rs.s.Entry() }

// Err returns the read error or corruption that stopped the scan.
func (rs *ReaderScanner) Err() error {
	if rs.err != nil {
		return rs.err
	}
	return rs.s.Err()
}

// ValidEnd is the file position just after the last valid entry: where
// recovery truncates.
func (rs *ReaderScanner) ValidEnd() int64 { return rs.bufPos + int64(rs.s.ValidBytes()) }

// Tail reports a clean stop before the end of the file: the kind, its
// position and length. Only meaningful once Next returned false with a nil
// Err.
func (rs *ReaderScanner) Tail() (kind TailKind, at int64, n int64) {
	end := rs.ValidEnd()
	if rs.Err() != nil || end >= rs.size {
		return TailNone, end, 0
	}
	k, _, _ := rs.s.Tail()
	if k == TailNone {
		k = TailPartial
	}
	if k == TailZeros && int64(len(rs.buf))+rs.bufPos < rs.size {
		k = TailPartial // only the buffered part was seen to be zero
	}
	return k, end, rs.size - end
}
