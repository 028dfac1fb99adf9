package segment

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/timeindex"
)

// EntryHeader is what a shallow scan of a .log learns about one entry
// without decoding its records.
type EntryHeader struct {
	Position     int64
	Size         int
	Magic        int8
	BaseOffset   int64 // v2 baseOffset; a legacy entry's offset
	LastOffset   int64
	MaxTimestamp int64 // v2 maxTimestamp; v1 timestamp; v0 -1
	LeaderEpoch  int32 // v2 partitionLeaderEpoch; legacy -1
}

// headerScanner reads entry headers from a file in chunks.
type headerScanner struct {
	pooled *[]byte // buf's pool entry, returned by release
	r      io.ReaderAt
	end    int64 // no entry may extend past this position
	buf    []byte
	bufPos int64
	bufLen int
}

const scanChunk = 64 << 10

func (h *headerScanner) release() {
	if h.pooled != nil {
		scanBufs.Put(h.pooled)
		h.pooled, h.buf = nil, nil
	}
}

// header decodes the header of the entry at pos. ok is false at the end of
// the data: fewer than 17 bytes left, or an entry that runs past end (a
// partial entry, which Kafka's FileLogInputStream treats as the end). A
// size below 14 or an unknown magic is corruption.
func (h *headerScanner) header(pos int64) (EntryHeader, bool, error) {
	var e EntryHeader
	if h.end-pos < record.HeaderSizeUpToMagic {
		return e, false, nil
	}
	need := int64(record.RecordBatchOverhead)
	if h.end-pos < need {
		need = h.end - pos
	}
	if pos < h.bufPos || pos+need > h.bufPos+int64(h.bufLen) {
		if h.buf == nil {
			h.pooled = scanBufs.Get().(*[]byte)
			h.buf = *h.pooled
		}
		n := int64(len(h.buf))
		if rem := h.end - pos; rem < n {
			n = rem
		}
		m, err := h.r.ReadAt(h.buf[:n], pos)
		if err != nil && !(errors.Is(err, io.EOF) && int64(m) >= need) {
			if errors.Is(err, io.EOF) {
				return e, false, nil
			}
			return e, false, err
		}
		h.bufPos, h.bufLen = pos, m
	}
	b := h.buf[pos-h.bufPos : h.bufLen]
	size := format.Int32(b[record.LengthOffset:])
	if size < record.MinLegacyEntrySize {
		return e, false, format.Corruptf("", pos+record.LengthOffset, format.ErrInvalid, "record size %d is smaller than the minimum record overhead (%d)", size, record.MinLegacyEntrySize)
	}
	e.Position = pos
	e.Size = record.LogOverhead + int(size)
	if pos+int64(e.Size) > h.end {
		return e, false, nil
	}
	e.Magic = int8(b[record.MagicOffset])
	e.BaseOffset = format.Int64(b)
	e.LeaderEpoch = record.NoPartitionLeaderEpoch
	switch e.Magic {
	case record.MagicV2:
		if e.Size < record.RecordBatchOverhead {
			return e, false, format.Corruptf("", pos+record.LengthOffset, format.ErrInvalid, "batch size %d below the v2 header size", e.Size)
		}
		e.LastOffset = e.BaseOffset + int64(format.Int32(b[record.LastOffsetDeltaOffset:]))
		e.MaxTimestamp = format.Int64(b[record.MaxTimestampOffset:])
		e.LeaderEpoch = format.Int32(b[record.PartitionLeaderEpochOffset:])
	case record.MagicV1:
		if e.Size < record.LogOverhead+record.RecordOverheadV1 {
			return e, false, format.Corruptf("", pos+record.LengthOffset, format.ErrInvalid, "message size %d below the v1 minimum", size)
		}
		e.LastOffset = e.BaseOffset
		e.MaxTimestamp = format.Int64(b[18:])
	case record.MagicV0:
		e.LastOffset = e.BaseOffset
		e.MaxTimestamp = record.NoTimestamp
	default:
		return e, false, format.Corruptf("", pos+record.MagicOffset, format.ErrMagic, "unknown magic %d", e.Magic)
	}
	return e, true, nil
}

// ScanHeaders calls fn for each entry from position from to the end of the
// segment's valid bytes, until fn returns false. It reads headers only.
func (s *Segment) ScanHeaders(from int64, fn func(EntryHeader) bool) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.log == nil {
		return errClosed
	}
	return s.scanHeaders(from, s.size, fn)
}

var errClosed = errors.New("segment: closed")

// scanBufs holds the header scanners' chunk buffers: a read path scans
// from an index entry on every call, and would otherwise allocate 64 KiB
// each time.
var scanBufs = sync.Pool{New: func() any { b := make([]byte, scanChunk); return &b }}

func (s *Segment) scanHeaders(from, end int64, fn func(EntryHeader) bool) error {
	h := headerScanner{r: s.log, end: end}
	defer h.release()
	for pos := from; ; {
		e, ok, err := h.header(pos)
		if err != nil {
			return format.WithPath(err, s.LogPath(), 0)
		}
		if !ok || !fn(e) {
			return nil
		}
		pos += int64(e.Size)
	}
}

// rlockIndexes opens the lazy indexes if needed and returns holding s.mu
// for reading.
func (s *Segment) rlock() error {
	for {
		if err := s.loadIndexes(); err != nil {
			return err
		}
		s.mu.RLock()
		if s.log == nil {
			s.mu.RUnlock()
			return errClosed
		}
		if s.offIdx != nil && s.timeIdx != nil {
			return nil
		}
		s.mu.RUnlock()
	}
}

// OffsetPosition locates an entry: the target offset, the entry's
// position and size.
type OffsetPosition struct {
	Offset   int64
	Position int64
	Size     int
}

// translateOffset finds the first entry whose last offset is ≥ offset,
// starting the scan at the offset index's floor entry (or at
// startingPosition, if that is further on). Caller holds s.mu.
func (s *Segment) translateOffset(offset, startingPosition int64) (OffsetPosition, bool, error) {
	e := s.offIdx.Lookup(offset)
	from := max(int64(e.Position), startingPosition)
	if from > s.size || from < 0 {
		// An index entry past the end of the log, or a negative one (F4):
		// fall back to a scan from the start rather than trusting it.
		from = 0
	}
	var found OffsetPosition
	ok := false
	err := s.scanHeaders(from, s.size, func(h EntryHeader) bool {
		if h.LastOffset >= offset {
			found, ok = OffsetPosition{Offset: offset, Position: h.Position, Size: h.Size}, true
			return false
		}
		return true
	})
	return found, ok, err
}

// TranslateOffset returns the position of the first entry whose last
// offset is at least offset, and false if there is none.
func (s *Segment) TranslateOffset(offset int64) (OffsetPosition, bool, error) {
	if err := s.rlock(); err != nil {
		return OffsetPosition{}, false, err
	}
	defer s.mu.RUnlock()
	return s.translateOffset(offset, 0)
}

// ReadInfo is the answer to Read: a byte range of whole entries.
type ReadInfo struct {
	// StartOffset is the requested offset; the first entry may begin below
	// it (the reader skips those records, as consumers do).
	StartOffset int64
	// Position and Size delimit the bytes to read from the .log.
	Position int64
	Size     int
	// FirstEntrySize is the size of the first entry; Size < FirstEntrySize
	// means not even one entry fit in maxSize.
	FirstEntrySize int
}

// Read locates the entries from the first one holding an offset ≥
// startOffset (LogSegment.read): at most maxSize bytes, not past
// maxPosition, and — with minOneMessage — at least the first entry even if
// it is larger than maxSize. found is false when startOffset is past the
// last entry.
func (s *Segment) Read(startOffset int64, maxSize int, maxPosition int64, minOneMessage bool) (ReadInfo, bool, error) {
	if maxSize < 0 {
		return ReadInfo{}, false, fmt.Errorf("segment: invalid max size %d", maxSize)
	}
	if err := s.rlock(); err != nil {
		return ReadInfo{}, false, err
	}
	defer s.mu.RUnlock()
	op, ok, err := s.translateOffset(startOffset, 0)
	if err != nil || !ok {
		return ReadInfo{}, false, err
	}
	adjusted := maxSize
	if minOneMessage && op.Size > adjusted {
		adjusted = op.Size
	}
	info := ReadInfo{StartOffset: startOffset, Position: op.Position, FirstEntrySize: op.Size}
	if maxPosition > s.size {
		maxPosition = s.size
	}
	info.Size = int(min(maxPosition-op.Position, int64(adjusted)))
	if info.Size < 0 {
		info.Size = 0
	}
	return info, true, nil
}

// ReadAt reads the segment's .log bytes at off into p; it never reads past
// the valid size.
func (s *Segment) ReadAt(p []byte, off int64) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.log == nil {
		return 0, errClosed
	}
	if off >= s.size {
		return 0, io.EOF
	}
	if rem := s.size - off; int64(len(p)) > rem {
		n, err := s.log.ReadAt(p[:rem], off)
		if err == nil {
			err = io.EOF
		}
		return n, err
	}
	return s.log.ReadAt(p, off)
}

// TimestampOffset is a (timestamp, offset) pair.
type TimestampOffset struct {
	Timestamp   int64
	Offset      int64
	LeaderEpoch int32 // -1 when unknown
}

// FindOffsetByTimestamp returns the first record whose timestamp is ≥ ts
// and offset ≥ startingOffset (LogSegment.findOffsetByTimestamp): the
// time index gives a lower bound, the offset index a position, and the
// entries from there whose max timestamp reaches ts are decoded in turn.
// found is false if no record qualifies.
func (s *Segment) FindOffsetByTimestamp(ts, startingOffset int64) (TimestampOffset, bool, error) {
	if err := s.rlock(); err != nil {
		return TimestampOffset{}, false, err
	}
	defer s.mu.RUnlock()
	te := s.timeIdx.Lookup(ts)
	pos := int64(s.offIdx.Lookup(max(te.Offset, startingOffset)).Position)
	if pos > s.size || pos < 0 {
		pos = 0
	}
	var (
		out   TimestampOffset
		found bool
		ferr  error
		buf   []byte
		it    record.Iterator
		lit   record.LegacyIterator
		rec   record.Record
	)
	err := s.scanHeaders(pos, s.size, func(h EntryHeader) bool {
		if h.MaxTimestamp < ts {
			return true
		}
		if cap(buf) < h.Size {
			buf = make([]byte, h.Size)
		}
		buf = buf[:h.Size]
		if _, err := s.log.ReadAt(buf, h.Position); err != nil {
			ferr = err
			return false
		}
		e, err := decodeEntry(buf)
		if err != nil {
			ferr = format.WithPath(err, s.LogPath(), h.Position)
			return false
		}
		check := func() bool {
			if rec.Timestamp >= ts && rec.Offset >= startingOffset {
				out, found = TimestampOffset{Timestamp: rec.Timestamp, Offset: rec.Offset, LeaderEpoch: h.LeaderEpoch}, true
				return true
			}
			return false
		}
		if e.Magic == record.MagicV2 {
			it.Reset(&e.Batch)
			for it.Next(&rec) {
				if check() {
					return false
				}
			}
			ferr = it.Err()
		} else {
			lit.Reset(&e.Legacy)
			for lit.Next(&rec) {
				if check() {
					return false
				}
			}
			ferr = lit.Err()
		}
		if ferr != nil {
			ferr = format.WithPath(ferr, s.LogPath(), h.Position)
			return false
		}
		return true
	})
	if err == nil {
		err = ferr
	}
	return out, found, err
}

// decodeEntry decodes one whole entry (v2 batch or legacy message).
func decodeEntry(b []byte) (record.Entry, error) {
	var e record.Entry
	if len(b) < record.HeaderSizeUpToMagic {
		return e, format.Corruptf("", 0, format.ErrTruncated, "short entry")
	}
	e.Magic = int8(b[record.MagicOffset])
	var err error
	if e.Magic == record.MagicV2 {
		e.Batch, _, err = record.ReadBatch(b)
	} else {
		e.Legacy, _, err = record.ReadLegacyMessage(b)
	}
	return e, err
}

// ReadNextOffset returns the offset after the segment's last entry, or
// the base offset when it is empty (LogSegment.readNextOffset): a scan
// from the last offset index entry.
func (s *Segment) ReadNextOffset() (int64, error) {
	if err := s.rlock(); err != nil {
		return 0, err
	}
	defer s.mu.RUnlock()
	return s.readNextOffset()
}

func (s *Segment) readNextOffset() (int64, error) {
	next := s.base
	from := int64(s.offIdx.Lookup(s.offIdx.LastEntry().Offset).Position)
	if from > s.size || from < 0 {
		from = 0
	}
	err := s.scanHeaders(from, s.size, func(h EntryHeader) bool {
		next = h.LastOffset + 1
		return true
	})
	return next, err
}

// TruncateTo removes every entry holding offsets ≥ offset, and the index
// entries with offsets ≥ offset (LogSegment.truncateTo). The entry that
// holds offset goes whole. It returns the number of .log bytes removed.
func (s *Segment) TruncateTo(offset int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readOnly {
		return 0, ErrReadOnly
	}
	oi, err := s.offsetIndex()
	if err != nil {
		return 0, err
	}
	ti, err := s.timeIndex()
	if err != nil {
		return 0, err
	}
	mapping, ok, err := s.translateOffset(offset, 0)
	if err != nil {
		return 0, err
	}
	if err := oi.TruncateTo(offset); err != nil {
		return 0, err
	}
	if err := ti.TruncateTo(offset); err != nil {
		return 0, err
	}
	if tx, err := s.txnIndex(); err != nil {
		return 0, err
	} else if err := tx.TruncateTo(offset); err != nil {
		return 0, err
	}
	if _, err := oi.Resize(keepEntries(s.cfg.MaxIndexSize, oi.Entries(), index.EntrySize)); err != nil {
		return 0, err
	}
	if _, err := ti.Resize(keepEntries(s.cfg.MaxIndexSize, ti.Entries(), timeindex.EntrySize)); err != nil {
		return 0, err
	}
	var truncated int64
	if ok {
		truncated = s.size - mapping.Position
		if err := s.log.Truncate(mapping.Position); err != nil {
			s.failed = err
			return 0, err
		}
		s.size = mapping.Position
	}
	if s.size == 0 {
		s.created = s.clock.Now().UnixMilli()
		s.hasRollingTs = false
	}
	s.bytesSinceLastIndex = 0
	// The max timestamp is recomputed from what is left: the time index's
	// last entry and the batches after it. (Kafka does this only when the
	// max timestamp was already known to be set; read lazily from a time
	// index the truncation emptied, it would stay -1 while the batches
	// before the first entry carry timestamps.)
	if err := s.readLargestTimestamp(); err != nil {
		return truncated, err
	}
	return truncated, nil
}

// readLargestTimestamp recomputes the max timestamp after a truncation:
// the time index's last entry, or a larger one found by scanning the
// entries after it.
func (s *Segment) readLargestTimestamp() error {
	last := s.timeIdx.LastEntry()
	pos := int64(s.offIdx.Lookup(last.Offset).Position)
	if pos > s.size || pos < 0 {
		pos = 0
	}
	maxTs, maxOff := last.Timestamp, last.Offset
	err := s.scanHeaders(pos, s.size, func(h EntryHeader) bool {
		if h.MaxTimestamp > maxTs {
			maxTs, maxOff = h.MaxTimestamp, h.LastOffset
		}
		return true
	})
	s.maxTs, s.offsetOfMaxTs, s.tsKnown = maxTs, maxOff, true
	return err
}
