package segment

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"sync"
	"time"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/vfs"
)

// Clock tells the time. Engine code takes one wherever time matters, so
// that tests and simulations control it.
type Clock interface{ Now() time.Time }

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Config holds the settings a segment needs, with Kafka's names.
type Config struct {
	// IndexIntervalBytes is index.interval.bytes: an offset index entry is
	// added once more than this many bytes were appended since the last.
	IndexIntervalBytes int
	// MaxIndexSize is segment.index.bytes: the preallocated size of the
	// active segment's indexes.
	MaxIndexSize int
	// Preallocate is preallocate: the .log file of a new segment is
	// extended to InitFileSize up front (and trimmed when the segment
	// becomes inactive).
	Preallocate  bool
	InitFileSize int64
	// RollJitterMs is the jitter subtracted from segment.ms for this
	// segment (Kafka draws it at random below segment.jitter.ms).
	RollJitterMs int64
}

// Defaults of the settings above (LogConfig.java).
const (
	DefaultIndexIntervalBytes = 4096
	DefaultMaxIndexSize       = 10 << 20
)

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{IndexIntervalBytes: DefaultIndexIntervalBytes, MaxIndexSize: DefaultMaxIndexSize}
}

// Errors.
var (
	// ErrOffsetOverflow is returned when an offset does not fit in a
	// segment's 32-bit relative offsets (LogSegmentOffsetOverflowException).
	ErrOffsetOverflow = errors.New("segment: offset overflows the segment's relative offsets")
	// ErrReadOnly is returned by mutating calls on a read-only segment.
	ErrReadOnly = errors.New("segment: opened read-only")
	// ErrTooLarge is returned when an append would take a .log file past
	// Kafka's limit of MaxInt32 bytes.
	ErrTooLarge = errors.New("segment: log file would exceed 2 GiB")
	// ErrFailed is returned after a write error left the segment's
	// in-memory state uncertain; reopen the log to recover.
	ErrFailed = errors.New("segment: failed by an earlier I/O error")
)

// Segment is one log segment: a .log file of record batches and its
// .index, .timeindex and (when there were aborted transactions) .txnindex,
// all named by the segment's base offset.
//
// A Segment takes one writer and any number of concurrent readers: Append,
// TruncateTo, Recover and the other mutating methods must not run
// concurrently with each other, while Read, ReadAt, Lookup and
// FindOffsetByTimestamp may run at any time.
type Segment struct {
	fsys     vfs.FS
	dir      string
	base     int64
	suffix   string // "" or a temporary suffix such as ".swap"
	cfg      Config
	clock    Clock
	readOnly bool

	mu      sync.RWMutex // guards everything below
	log     vfs.File
	size    int64 // valid bytes in .log
	failed  error
	offIdx  *index.OffsetIndex      // nil until first use (LazyIndex)
	timeIdx *timeindex.TimeIndex    // nil until first use
	txnIdx  *index.TransactionIndex // nil until first use

	// rollingBasedTimestamp is the first batch's max timestamp, the basis
	// of time-based rolling; hasRollingTs says whether it is known.
	rollingTs    int64
	hasRollingTs bool
	// maxTs and offsetOfMaxTs are the largest timestamp seen so far and the
	// offset of the batch that holds it; tsKnown says they were read from
	// the time index or set by appends.
	maxTs, offsetOfMaxTs int64
	tsKnown              bool
	created              int64 // ms
	bytesSinceLastIndex  int
}

// Create creates a new, empty segment at base in dir. Stale files with the
// same names are replaced. With cfg.Preallocate the .log is extended to
// cfg.InitFileSize.
func Create(fsys vfs.FS, dir string, base int64, cfg Config, clock Clock) (*Segment, error) {
	if clock == nil {
		clock = SystemClock{}
	}
	for _, ext := range []string{IndexSuffix, TimeIndexSuffix, TxnIndexSuffix} {
		if err := fsys.Remove(Path(dir, base, ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	f, err := fsys.OpenFile(Path(dir, base, LogSuffix), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	if cfg.Preallocate && cfg.InitFileSize > 0 {
		if err := f.Truncate(cfg.InitFileSize); err != nil {
			f.Close()
			return nil, err
		}
	}
	s := newSegment(fsys, dir, base, "", cfg, clock, false)
	s.log = f
	s.tsKnown = true
	s.maxTs, s.offsetOfMaxTs = record.NoTimestamp, base
	return s, nil
}

func newSegment(fsys vfs.FS, dir string, base int64, suffix string, cfg Config, clock Clock, ro bool) *Segment {
	if cfg.IndexIntervalBytes <= 0 {
		cfg.IndexIntervalBytes = DefaultIndexIntervalBytes
	}
	if cfg.MaxIndexSize <= 0 {
		cfg.MaxIndexSize = DefaultMaxIndexSize
	}
	return &Segment{fsys: fsys, dir: dir, base: base, suffix: suffix, cfg: cfg, clock: clock, readOnly: ro,
		created: clock.Now().UnixMilli()}
}

// OpenOptions are how Open opens a segment. The zero value opens a normal
// segment, writable, on the system clock.
type OpenOptions struct {
	// Suffix is the temporary suffix the segment's files carry (SwapSuffix,
	// CleanedSuffix, ...); "" for a normal segment.
	Suffix string
	// Clock gives the segment's time (its roll deadline, LogAppendTime);
	// nil means SystemClock.
	Clock Clock
	// ReadOnly opens a segment that never writes to any file, and never
	// creates one.
	ReadOnly bool
}

// Open opens the existing segment at base in dir. The .log must exist;
// its size is taken as valid (recovery decides otherwise). The indexes are
// opened when first needed, as Kafka's LazyIndex does.
func Open(fsys vfs.FS, dir string, base int64, cfg Config, o OpenOptions) (*Segment, error) {
	suffix, clock, readOnly := o.Suffix, o.Clock, o.ReadOnly
	if clock == nil {
		clock = SystemClock{}
	}
	flag := os.O_RDWR
	if readOnly {
		flag = os.O_RDONLY
	}
	f, err := fsys.OpenFile(Path(dir, base, LogSuffix+suffix), flag, 0o644)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Size() > math.MaxInt32 {
		f.Close()
		return nil, fmt.Errorf("segment: %s: %d bytes exceeds Kafka's limit of %d: %w", f.Name(), st.Size(), math.MaxInt32, ErrTooLarge)
	}
	s := newSegment(fsys, dir, base, suffix, cfg, clock, readOnly)
	s.log = f
	s.size = st.Size()
	s.created = st.ModTime().UnixMilli()
	return s, nil
}

// BaseOffset is the segment's base offset: no offset in it is smaller.
func (s *Segment) BaseOffset() int64 { return s.base }

// Dir is the partition directory that holds the segment.
func (s *Segment) Dir() string { return s.dir }

// Suffix is the temporary suffix of the segment's files, or "".
func (s *Segment) Suffix() string { return s.suffix }

// LogPath is the path of the .log file.
func (s *Segment) LogPath() string { return Path(s.dir, s.base, LogSuffix+s.suffix) }

// IndexPath, TimeIndexPath and TxnIndexPath are the index files' paths.
func (s *Segment) IndexPath() string     { return Path(s.dir, s.base, IndexSuffix+s.suffix) }
func (s *Segment) TimeIndexPath() string { return Path(s.dir, s.base, TimeIndexSuffix+s.suffix) }
func (s *Segment) TxnIndexPath() string  { return Path(s.dir, s.base, TxnIndexSuffix+s.suffix) }

// Size is the number of bytes of the .log file in use.
func (s *Segment) Size() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.size
}

// ReadOnly reports whether the segment was opened read-only.
func (s *Segment) ReadOnly() bool { return s.readOnly }

// offsetIndex returns the offset index, opening it on first use. The
// caller holds s.mu (either way); opening is serialised by upgrading.
func (s *Segment) offsetIndex() (*index.OffsetIndex, error) {
	if x := s.offIdx; x != nil {
		return x, nil
	}
	if s.readOnly && s.missing(s.IndexPath()) {
		if err := s.buildScratchIndexes(); err != nil {
			return nil, err
		}
		return s.offIdx, nil
	}
	x, err := index.OpenOffsetIndex(s.fsys, s.IndexPath(), s.base, index.OpenOptions{MaxIndexSize: s.cfg.MaxIndexSize, Writable: !s.readOnly})
	if err != nil {
		return nil, err
	}
	// An untrimmed index (a crash, or a running broker's active segment
	// copied) ends in zero entries that Kafka would trust (KAFKA-10207,
	// -12734, -19200). They are dropped from memory; the file is not
	// changed, and verification reports the padding.
	if _, err := x.DiscardPadding(); err != nil {
		x.Close()
		return nil, err
	}
	s.offIdx = x
	return x, nil
}

func (s *Segment) timeIndex() (*timeindex.TimeIndex, error) {
	if x := s.timeIdx; x != nil {
		return x, nil
	}
	if s.readOnly && s.missing(s.TimeIndexPath()) {
		if err := s.buildScratchIndexes(); err != nil {
			return nil, err
		}
		return s.timeIdx, nil
	}
	x, err := timeindex.OpenTimeIndex(s.fsys, s.TimeIndexPath(), s.base, index.OpenOptions{MaxIndexSize: s.cfg.MaxIndexSize, Writable: !s.readOnly})
	if err != nil {
		return nil, err
	}
	if _, err := x.DiscardPadding(); err != nil {
		x.Close()
		return nil, err
	}
	s.timeIdx = x
	return x, nil
}

func (s *Segment) missing(p string) bool {
	_, err := s.fsys.Stat(p)
	return errors.Is(err, fs.ErrNotExist)
}

// buildScratchIndexes serves a read-only segment whose index files are
// missing (a broker's active segment copied without its preallocated
// indexes, say): the indexes are built in memory from the .log by Kafka's
// recovery rules, and never written to the segment's directory. An index
// that does exist on disk is still used.
func (s *Segment) buildScratchIndexes() error {
	type offPos struct {
		off int64
		pos int32
	}
	type tsOff struct{ ts, off int64 }
	var offs []offPos
	var tss []tsOff
	maxTs, maxOff := record.NoTimestamp, s.base
	var valid, lastEntry int64
	lastTs := record.NoTimestamp
	err := s.scanHeaders(0, s.size, func(h EntryHeader) bool {
		if h.MaxTimestamp > maxTs {
			maxTs, maxOff = h.MaxTimestamp, h.LastOffset
		}
		if valid-lastEntry > int64(s.cfg.IndexIntervalBytes) && s.canConvert(h.LastOffset) {
			offs = append(offs, offPos{h.LastOffset, int32(valid)})
			if maxTs > lastTs {
				tss = append(tss, tsOff{maxTs, maxOff})
				lastTs = maxTs
			}
			lastEntry = valid
		}
		valid += int64(h.Size)
		return true
	})
	if err != nil {
		// A corrupt entry ends the scratch index there; reads past it
		// report the corruption themselves.
		var ce *format.CorruptionError
		if !errors.As(err, &ce) {
			return err
		}
	}
	if maxTs > lastTs {
		tss = append(tss, tsOff{maxTs, maxOff})
	}
	scratch := vfs.NewMem()
	if s.offIdx == nil {
		x, err := index.OpenOffsetIndex(scratch, "scratch.index", s.base, index.OpenOptions{Writable: true, MaxIndexSize: (len(offs) + 1) * index.EntrySize})
		if err != nil {
			return err
		}
		for _, e := range offs {
			if err := x.Append(e.off, e.pos); err != nil {
				return err
			}
		}
		s.offIdx = x
	}
	if s.timeIdx == nil {
		if !s.missing(s.TimeIndexPath()) {
			x, err := timeindex.OpenTimeIndex(s.fsys, s.TimeIndexPath(), s.base, index.OpenOptions{})
			if err != nil {
				return err
			}
			if _, err := x.DiscardPadding(); err != nil {
				x.Close()
				return err
			}
			s.timeIdx = x
			return nil
		}
		x, err := timeindex.OpenTimeIndex(scratch, "scratch.timeindex", s.base, index.OpenOptions{Writable: true, MaxIndexSize: (len(tss) + 2) * timeindex.EntrySize})
		if err != nil {
			return err
		}
		for _, e := range tss {
			if err := x.MaybeAppend(e.ts, e.off, true); err != nil {
				return err
			}
		}
		s.timeIdx = x
	}
	return nil
}

func (s *Segment) txnIndex() (*index.TransactionIndex, error) {
	if x := s.txnIdx; x != nil {
		return x, nil
	}
	x, err := index.OpenTransactionIndex(s.fsys, s.TxnIndexPath(), s.base, index.OpenOptions{Writable: !s.readOnly})
	if err != nil {
		return nil, err
	}
	s.txnIdx = x
	return x, nil
}

// withIndexes runs f holding the lock for reading, after making sure the
// lazy indexes are open (which takes the lock for writing once).
func (s *Segment) loadIndexes() error {
	s.mu.RLock()
	ok := s.offIdx != nil && s.timeIdx != nil
	s.mu.RUnlock()
	if ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.offsetIndex(); err != nil {
		return err
	}
	_, err := s.timeIndex()
	return err
}

// OffsetIndex returns the segment's offset index, opening it if needed.
func (s *Segment) OffsetIndex() (*index.OffsetIndex, error) {
	if err := s.loadIndexes(); err != nil {
		return nil, err
	}
	return s.offIdx, nil
}

// TimeIndex returns the segment's time index, opening it if needed.
func (s *Segment) TimeIndex() (*timeindex.TimeIndex, error) {
	if err := s.loadIndexes(); err != nil {
		return nil, err
	}
	return s.timeIdx, nil
}

// TransactionIndex returns the segment's aborted-transaction index.
func (s *Segment) TransactionIndex() (*index.TransactionIndex, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.txnIndex()
}

// readMaxTimestamp loads maxTimestampSoFar from the time index's last
// entry the first time it is needed. Caller holds s.mu for writing.
func (s *Segment) readMaxTimestamp() error {
	if s.tsKnown {
		return nil
	}
	ti, err := s.timeIndex()
	if err != nil {
		return err
	}
	e := ti.LastEntry()
	s.maxTs, s.offsetOfMaxTs, s.tsKnown = e.Timestamp, e.Offset, true
	return nil
}

// MaxTimestampSoFar is the largest timestamp appended to the segment (or
// recorded in its time index), or -1 when there is none.
func (s *Segment) MaxTimestampSoFar() (ts, offset int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.readMaxTimestamp(); err != nil {
		return 0, 0, err
	}
	return s.maxTs, s.offsetOfMaxTs, nil
}

// LargestTimestamp is what time-based retention compares with: the
// largest record timestamp, or the .log file's modification time when the
// segment has no timestamps (UnifiedLog's segment.largestTimestamp).
func (s *Segment) LargestTimestamp() (int64, error) {
	ts, _, err := s.MaxTimestampSoFar()
	if err != nil {
		return 0, err
	}
	if ts >= 0 {
		return ts, nil
	}
	return s.LastModified()
}

// LastModified is the .log file's modification time in ms.
func (s *Segment) LastModified() (int64, error) {
	st, err := s.fsys.Stat(s.LogPath())
	if err != nil {
		return 0, err
	}
	return st.ModTime().UnixMilli(), nil
}

// AppendInfo describes the batches of one append.
type AppendInfo struct {
	FirstOffset          int64 // base offset of the first batch
	LastOffset           int64 // last offset of the last batch
	MaxTimestamp         int64 // largest batch max timestamp, or -1
	OffsetOfMaxTimestamp int64 // last offset of the batch holding it
	FirstTimestamp       int64 // max timestamp of the first batch
	Batches              int
	Bytes                int
}

// Describe scans the batch headers of records (a run of whole entries, as
// produced by record.Builder or read from a log) and summarises them. It
// checks only that the entries are complete; validation is the caller's.
func Describe(records []byte) (AppendInfo, error) {
	info := AppendInfo{FirstOffset: -1, LastOffset: -1, MaxTimestamp: record.NoTimestamp, OffsetOfMaxTimestamp: -1}
	s := record.NewScanner(records, "", 0)
	for s.Next() {
		e := s.Entry()
		if info.Batches == 0 {
			info.FirstOffset = e.BaseOffset()
			info.FirstTimestamp = e.MaxTimestamp()
		}
		info.Batches++
		info.LastOffset = e.LastOffset()
		if ts := e.MaxTimestamp(); ts > info.MaxTimestamp {
			info.MaxTimestamp, info.OffsetOfMaxTimestamp = ts, e.LastOffset()
		}
	}
	if err := s.Err(); err != nil {
		return info, err
	}
	if k, at, n := s.Tail(); k != record.TailNone {
		return info, format.Corruptf("", at, format.ErrTruncated, "%d bytes of %v after the last entry", n, k)
	}
	info.Bytes = len(records)
	return info, nil
}

// Append writes records (whole entries) at the end of the .log and updates
// the indexes by Kafka's rules (LogSegment.append): the append's offset
// range and max timestamp are taken from info (see Describe); an offset
// index entry (info.LastOffset, position of the append) is added when more
// than index.interval.bytes were written since the last entry, with a time
// index entry for the max timestamp so far — at most one of each per
// append.
//
// A write error marks the segment failed: its size and indexes do not
// advance, and the bytes that may have reached the file are cut by the
// next recovery.
func (s *Segment) Append(records []byte, info AppendInfo) error {
	if len(records) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readOnly {
		return ErrReadOnly
	}
	if s.failed != nil {
		return fmt.Errorf("%w: %v", ErrFailed, s.failed)
	}
	if s.size+int64(len(records)) > math.MaxInt32 {
		return fmt.Errorf("%s: %w", s.LogPath(), ErrTooLarge)
	}
	if !s.canConvert(info.LastOffset) || info.FirstOffset < s.base {
		return fmt.Errorf("%s: offsets %d..%d in a segment at %d: %w", s.LogPath(), info.FirstOffset, info.LastOffset, s.base, ErrOffsetOverflow)
	}
	oi, err := s.offsetIndex()
	if err != nil {
		return err
	}
	ti, err := s.timeIndex()
	if err != nil {
		return err
	}
	if err := s.readMaxTimestamp(); err != nil {
		return err
	}
	pos := s.size
	if pos == 0 {
		s.rollingTs, s.hasRollingTs = info.MaxTimestamp, true
	}
	n, err := s.log.WriteAt(records, pos)
	if err == nil && n != len(records) {
		err = io.ErrShortWrite
	}
	if err != nil {
		s.failed = err
		return fmt.Errorf("%s: append at %d: %w", s.LogPath(), pos, err)
	}
	s.size += int64(len(records))
	if info.MaxTimestamp > s.maxTs {
		s.maxTs, s.offsetOfMaxTs = info.MaxTimestamp, info.OffsetOfMaxTimestamp
	}
	if s.bytesSinceLastIndex > s.cfg.IndexIntervalBytes {
		if err := oi.Append(info.LastOffset, int32(pos)); err != nil {
			s.failed = err
			return err
		}
		if err := ti.MaybeAppend(s.maxTs, s.offsetOfMaxTs, false); err != nil {
			s.failed = err
			return err
		}
		s.bytesSinceLastIndex = 0
	}
	s.bytesSinceLastIndex += len(records)
	return nil
}

// canConvert reports whether offset fits the segment's relative offsets.
func (s *Segment) canConvert(offset int64) bool {
	rel := offset - s.base
	return rel >= 0 && rel <= math.MaxInt32
}

// RollParams are the inputs of ShouldRoll (Kafka's RollParams).
type RollParams struct {
	MaxSegmentBytes        int64 // segment.bytes
	MaxSegmentMs           int64 // segment.ms
	MaxTimestampInMessages int64 // the incoming batches' max timestamp
	MaxOffsetInMessages    int64 // the incoming batches' last offset
	MessagesSize           int64 // the incoming batches' size
	Now                    int64 // ms
}

// ShouldRoll reports whether the incoming batches must go to a new
// segment (LogSegment.shouldRoll): the segment would exceed segment.bytes,
// it is non-empty and has waited segment.ms minus its jitter (measured
// from its first batch's timestamp when that is set, else from its
// creation), an index is full, or the last offset does not fit the
// relative offsets.
func (s *Segment) ShouldRoll(p RollParams) (bool, error) {
	r, err := s.RollReason(p)
	return r != "", err
}

// Roll reasons, as RollReason returns them: the condition of
// LogSegment.shouldRoll that holds, checked in this order.
const (
	RollSegmentBytes   = "segment.bytes"
	RollSegmentMs      = "segment.ms"
	RollIndexFull      = "index full"
	RollTimeIndexFull  = "time index full"
	RollOffsetOverflow = "offset overflow"
)

// RollReason is ShouldRoll saying why: the first of RollSegmentBytes,
// RollSegmentMs, RollIndexFull, RollTimeIndexFull and RollOffsetOverflow
// that holds, or "" when the segment takes the batches.
func (s *Segment) RollReason(p RollParams) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	oi, err := s.offsetIndex()
	if err != nil {
		return "", err
	}
	ti, err := s.timeIndex()
	if err != nil {
		return "", err
	}
	waited, err := s.timeWaitedForRoll(p.Now, p.MaxTimestampInMessages)
	if err != nil {
		return "", err
	}
	reachedMs := waited > p.MaxSegmentMs-s.cfg.RollJitterMs
	switch {
	case s.size > p.MaxSegmentBytes-p.MessagesSize:
		return RollSegmentBytes, nil
	case s.size > 0 && reachedMs:
		return RollSegmentMs, nil
	case oi.IsFull():
		return RollIndexFull, nil
	case ti.IsFull():
		return RollTimeIndexFull, nil
	case !s.canConvert(p.MaxOffsetInMessages):
		return RollOffsetOverflow, nil
	}
	return "", nil
}

// timeWaitedForRoll: the new batch's timestamp minus the first batch's,
// when the first batch has one; else the wall-clock age.
func (s *Segment) timeWaitedForRoll(now, messageTimestamp int64) (int64, error) {
	if err := s.loadFirstBatchTimestamp(); err != nil {
		return 0, err
	}
	if s.hasRollingTs && s.rollingTs >= 0 {
		return messageTimestamp - s.rollingTs, nil
	}
	return now - s.created, nil
}

// FirstBatchTimestamp is the first batch's max timestamp, or MaxInt64 if
// it has none (LogSegment.getFirstBatchTimestamp).
func (s *Segment) FirstBatchTimestamp() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadFirstBatchTimestamp(); err != nil {
		return 0, err
	}
	if s.hasRollingTs && s.rollingTs >= 0 {
		return s.rollingTs, nil
	}
	return math.MaxInt64, nil
}

func (s *Segment) loadFirstBatchTimestamp() error {
	if s.hasRollingTs || s.size == 0 {
		return nil
	}
	var hdr [record.RecordBatchOverhead]byte
	n, err := s.log.ReadAt(hdr[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if n < record.HeaderSizeUpToMagic {
		return nil
	}
	switch int8(hdr[record.MagicOffset]) {
	case record.MagicV2:
		if n >= record.RecordBatchOverhead {
			s.rollingTs, s.hasRollingTs = format.Int64(hdr[record.MaxTimestampOffset:]), true
		}
	case record.MagicV1:
		if n >= record.LegacyTimestampOffset+record.LegacyTimestampSize {
			s.rollingTs, s.hasRollingTs = format.Int64(hdr[record.LegacyTimestampOffset:]), true
		}
	default:
		s.rollingTs, s.hasRollingTs = record.NoTimestamp, true
	}
	return nil
}

// ResizeIndexes sets both indexes' preallocated size (the active segment
// gets segment.index.bytes back after loading), never below the room their
// entries take.
func (s *Segment) ResizeIndexes(size int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readOnly {
		return ErrReadOnly
	}
	oi, err := s.offsetIndex()
	if err != nil {
		return err
	}
	ti, err := s.timeIndex()
	if err != nil {
		return err
	}
	if _, err := oi.Resize(keepEntries(size, oi.Entries(), index.EntrySize)); err != nil {
		return err
	}
	_, err = ti.Resize(keepEntries(size, ti.Entries(), timeindex.EntrySize))
	return err
}

// keepEntries is the size an index is resized to: size, or the room its
// entries take when size is smaller. segment.index.bytes may have been
// lowered since the active segment's index was written; Kafka then fails
// to load the log (the mapping's position lies past its new limit), but
// an index that is simply full is harmless: the next append rolls.
func keepEntries(size, entries, entrySize int) int {
	return max(size, entries*entrySize)
}

// OnBecomeInactive is called when the segment stops being the active one:
// it writes the final time index entry (the max timestamp so far, which
// retention reads), and trims the indexes and a preallocated .log.
func (s *Segment) OnBecomeInactive() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readOnly {
		return ErrReadOnly
	}
	if err := s.finalTimeIndexEntry(); err != nil {
		return err
	}
	if err := s.offIdx.TrimToValidSize(); err != nil {
		return err
	}
	if err := s.timeIdx.TrimToValidSize(); err != nil {
		return err
	}
	return s.trimLog()
}

// finalTimeIndexEntry appends (maxTimestampSoFar, offsetOfMax) to the time
// index even when it is full, as roll and close do.
func (s *Segment) finalTimeIndexEntry() error {
	if _, err := s.offsetIndex(); err != nil {
		return err
	}
	ti, err := s.timeIndex()
	if err != nil {
		return err
	}
	if err := s.readMaxTimestamp(); err != nil {
		return err
	}
	return ti.MaybeAppend(s.maxTs, s.offsetOfMaxTs, true)
}

func (s *Segment) trimLog() error {
	st, err := s.log.Stat()
	if err != nil {
		return err
	}
	if st.Size() != s.size {
		return s.log.Truncate(s.size)
	}
	return nil
}

// Flush makes the segment durable: the .log, then the indexes.
func (s *Segment) Flush() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.readOnly {
		return nil
	}
	if s.log == nil {
		return errClosed
	}
	return s.syncFiles()
}

// Close writes the final time index entry if timestamps were loaded,
// trims the indexes and closes every file. The segment is unusable after.
func (s *Segment) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if !s.readOnly && s.failed == nil && s.log != nil {
		if s.tsKnown && s.timeIdx != nil {
			errs = append(errs, s.timeIdx.MaybeAppend(s.maxTs, s.offsetOfMaxTs, true))
		}
		if s.offIdx != nil {
			errs = append(errs, s.offIdx.TrimToValidSize())
		}
		if s.timeIdx != nil {
			errs = append(errs, s.timeIdx.TrimToValidSize())
		}
		// A preallocated .log is cut to its data, as Kafka's
		// FileRecords.close trims it: a zero tail left behind a clean
		// shutdown would be read as data.
		errs = append(errs, s.trimLog())
		// What Close changed is made durable before the caller (Log.Close)
		// writes the clean-shutdown marker that tells the next Open to
		// trust these files.
		errs = append(errs, s.syncFiles())
	}
	errs = append(errs, s.closeFiles())
	return errors.Join(errs...)
}

// syncFiles syncs the .log, then the open indexes. Caller holds s.mu.
func (s *Segment) syncFiles() error {
	if err := s.log.Sync(); err != nil {
		return fmt.Errorf("%s: sync: %w", s.LogPath(), err)
	}
	if s.offIdx != nil {
		if err := s.offIdx.Flush(); err != nil {
			return err
		}
	}
	if s.timeIdx != nil {
		if err := s.timeIdx.Flush(); err != nil {
			return err
		}
	}
	if s.txnIdx != nil {
		if err := s.txnIdx.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// CloseHandlers closes the files without writing anything, for a segment
// whose disk may have failed.
func (s *Segment) CloseHandlers() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeFiles()
}

func (s *Segment) closeFiles() error {
	var errs []error
	if s.offIdx != nil {
		errs = append(errs, s.offIdx.Close())
		s.offIdx = nil
	}
	if s.timeIdx != nil {
		errs = append(errs, s.timeIdx.Close())
		s.timeIdx = nil
	}
	if s.txnIdx != nil {
		errs = append(errs, s.txnIdx.Close())
		s.txnIdx = nil
	}
	if s.log != nil {
		errs = append(errs, s.log.Close())
		s.log = nil
	}
	return errors.Join(errs...)
}

// ChangeFileSuffixes renames every file of the segment from suffix oldS to
// newS ("" to ".deleted", ".swap" to "", ...). Missing index files are
// skipped: they are created lazily.
func (s *Segment) ChangeFileSuffixes(oldS, newS string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readOnly {
		return ErrReadOnly
	}
	if oldS != s.suffix {
		return fmt.Errorf("segment: %s has suffix %q, not %q", s.LogPath(), s.suffix, oldS)
	}
	rename := func(ext string) error {
		err := s.fsys.Rename(Path(s.dir, s.base, ext+oldS), Path(s.dir, s.base, ext+newS))
		if errors.Is(err, fs.ErrNotExist) && ext != LogSuffix {
			return nil
		}
		return err
	}
	// The log goes last: a crash half-way leaves the .log under its old
	// name, and loading finds the renamed indexes orphaned or rebuilds
	// them.
	for _, ext := range []string{IndexSuffix, TimeIndexSuffix, TxnIndexSuffix, LogSuffix} {
		if err := rename(ext); err != nil {
			return err
		}
	}
	// Reopen the index objects lazily under their new names.
	var errs []error
	if s.offIdx != nil {
		errs = append(errs, s.offIdx.Close())
		s.offIdx = nil
	}
	if s.timeIdx != nil {
		errs = append(errs, s.timeIdx.Close())
		s.timeIdx = nil
	}
	if s.txnIdx != nil {
		errs = append(errs, s.txnIdx.Close())
		s.txnIdx = nil
	}
	s.suffix = newS
	return errors.Join(errs...)
}

// DeleteIfExists closes the segment and removes its files.
func (s *Segment) DeleteIfExists() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readOnly {
		return ErrReadOnly
	}
	errs := []error{s.closeFiles()}
	for _, ext := range []string{IndexSuffix, TimeIndexSuffix, TxnIndexSuffix, LogSuffix} {
		if err := s.fsys.Remove(Path(s.dir, s.base, ext+s.suffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// SetLastModified sets the modification time of the .log and indexes.
func (s *Segment) SetLastModified(t time.Time) error {
	var errs []error
	for _, p := range []string{s.LogPath(), s.IndexPath(), s.TimeIndexPath()} {
		if err := s.fsys.Chtimes(p, t, t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
