package record

import (
	"errors"
	"io"
	"runtime/debug"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/maprange"
)

// DefaultChunkSize is how much a ReaderScanner reads at a time.
const DefaultChunkSize = 1 << 20

// DefaultMapSize is how much of the file a ReaderScanner with a Map views
// at a time.
const DefaultMapSize = 64 << 20

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
	// NoCRC skips the CRC-32C of v2 batches, as Scanner.NoCRC.
	NoCRC bool
	// ChunkSize is the read size; 0 means DefaultChunkSize, or
	// DefaultMapSize with a Map.
	ChunkSize int
	// Map, if set, returns n bytes of the file at off without copying them
	// (a read-only memory mapping) and a function that releases them: the
	// scanner then views the file a chunk at a time instead of reading it
	// into its buffer. An Entry's slices alias the view until the next call
	// to Next. If Map fails, the scanner reads with ReadAt from there on. If
	// the file shrinks under a view, reading past its new end faults: Next
	// recovers the fault and reads on with ReadAt, which sees the new size,
	// but a caller that reads an Entry's bytes outside Next must itself run
	// with debug.SetPanicOnFault and recover, or know that the file does
	// not shrink.
	Map func(off int64, n int) (b []byte, release func(), err error)

	r      io.ReaderAt
	size   int64
	path   string
	buf    []byte
	bufPos int64 // file position of buf[0]
	s      Scanner
	err    error
	atEOF  bool // buf reaches the end of the file

	own     []byte // the read buffer, while buf is a view (Map)
	release func() // releases the current view, or nil
	noMap   bool   // Map failed or faulted: read with ReadAt
}

// Reset starts scanning r, of size bytes and named path, at position
// start. It keeps the buffer.
func (rs *ReaderScanner) Reset(r io.ReaderAt, size int64, path string, start int64) {
	rs.unview()
	rs.noMap = false
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
	if rs.Map != nil && !rs.noMap {
		if ok, mapped := rs.fillView(need); mapped {
			return ok
		}
	}
	keep := rs.buf[rs.s.ValidBytes():]
	rs.bufPos += int64(rs.s.ValidBytes())
	want := rs.want(need, DefaultChunkSize)
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
	rs.rescan()
	return true
}

// want is how many bytes the next chunk holds from bufPos: the chunk size
// (def unless ChunkSize is set), at least need, at most the rest of the
// file.
func (rs *ReaderScanner) want(need, def int) int {
	chunk := rs.ChunkSize
	if chunk <= 0 {
		chunk = def
	}
	want := max(chunk, need)
	if rem := rs.size - rs.bufPos; int64(want) > rem {
		want = int(rem)
	}
	return want
}

// rescan points the Scanner at buf.
func (rs *ReaderScanner) rescan() {
	rs.atEOF = rs.bufPos+int64(len(rs.buf)) >= rs.size
	rs.s.Reset(rs.buf, rs.path, rs.bufPos)
	rs.s.Validate, rs.s.MaxDecompressed, rs.s.NoCRC = rs.Validate, rs.MaxDecompressed, rs.NoCRC
}

// fillView views the next chunk through Map, from the first byte not
// consumed (so an entry cut by the last view's end is viewed again,
// whole). mapped is false if Map failed: the caller reads instead, and
// the scanner does from then on.
func (rs *ReaderScanner) fillView(need int) (ok, mapped bool) {
	from := rs.bufPos + int64(rs.s.ValidBytes())
	if rs.release == nil && len(rs.buf) > 0 {
		return false, false // buf holds read bytes (Reset keeps them): read on
	}
	rs.bufPos = from
	want := rs.want(need, DefaultMapSize)
	if want <= 0 {
		rs.unview()
		rs.buf = rs.own[:0]
		rs.rescan()
		return true, true
	}
	b, release, err := rs.Map(from, want)
	if err != nil || len(b) != want {
		if release != nil {
			release()
		}
		rs.unview()
		rs.noMap = true
		rs.buf = rs.own[:0]
		rs.s.Reset(nil, rs.path, from)
		return false, false
	}
	rs.unview()
	if rs.own == nil {
		rs.own = rs.buf[:0]
	}
	rs.buf, rs.release = b, release
	rs.rescan()
	return true, true
}

// unview releases the current view, if any, and points buf at the read
// buffer.
func (rs *ReaderScanner) unview() {
	if rs.release != nil {
		rs.release()
		rs.release = nil
		rs.buf = rs.own[:0]
	}
}

// Close releases the view a ReaderScanner with a Map holds (Reset does
// too); call it when done. The current Entry is no longer valid; ValidEnd
// stays as it was, and the scanner can be Reset again.
func (rs *ReaderScanner) Close() {
	if rs.release == nil {
		return
	}
	end := rs.ValidEnd()
	rs.unview()
	rs.bufPos = end
	rs.s.Reset(nil, rs.path, end)
}

// Next advances to the next entry.
func (rs *ReaderScanner) Next() bool {
	if rs.release != nil || rs.Map != nil && !rs.noMap {
		return rs.nextViewed()
	}
	return rs.next()
}

// nextViewed is Next while the file may be viewed through Map: a fault
// (the file shrank under the view) is recovered, and the scan goes on
// with ReadAt from the entry it was in.
func (rs *ReaderScanner) nextViewed() (ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if !maprange.Faulted(recover()) {
			return
		}
		from := rs.bufPos + int64(rs.s.ValidBytes())
		rs.unview()
		rs.noMap = true
		rs.bufPos = from
		rs.buf = rs.own[:0]
		rs.s.Reset(nil, rs.path, from)
		rs.atEOF = from >= rs.size
		ok = rs.next()
	}()
	return rs.next()
}

func (rs *ReaderScanner) next() bool {
	if rs.err != nil {
		return false
	}
	rs.s.Validate, rs.s.MaxDecompressed, rs.s.NoCRC = rs.Validate, rs.MaxDecompressed, rs.NoCRC
	for {
		if rs.s.Next() {
			return true
		}
		if rs.s.Err() != nil || rs.atEOF {
			return false
		}
		// The chunk ended inside an entry: read on, with room for the
		// whole entry when its header says how long it is, and at least
		// a header's worth (with a ChunkSize smaller than that, refilling
		// would not grow the buffer).
		need := HeaderSizeUpToMagic
		rest := rs.buf[rs.s.ValidBytes():]
		if len(rest) >= LogOverhead {
			size := int64(format.Int32(rest[LengthOffset:]))
			if size >= 0 && size <= int64(MaxBatchSize) {
				need = max(need, int(min(int64(LogOverhead)+size, rs.size-rs.bufPos-int64(rs.s.ValidBytes()))))
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
