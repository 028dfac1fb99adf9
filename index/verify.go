package index

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/record"
)

// LogEntrySummary is what index verification and reconstruction need to
// know about one entry of a .log: a v2 batch or a legacy (v0/v1) message.
type LogEntrySummary struct {
	Position   int64 // byte position of the entry in the .log
	Size       int64 // bytes, log overhead included
	Magic      int8
	BaseOffset int64 // for a legacy entry, its own offset (a compressed wrapper's last inner offset)
	LastOffset int64
	// MaxTimestamp is the batch's maxTimestamp (a legacy message's
	// timestamp), NoTimestamp (-1) for v0.
	MaxTimestamp int64
	// OffsetOfMaxTimestamp is the offset of the first record whose
	// timestamp is MaxTimestamp: what a Kafka leader before 3.8 stored in
	// the time index for an uncompressed CreateTime batch. It is LastOffset
	// when no record carries MaxTimestamp (an empty batch) or the records
	// could not be read.
	OffsetOfMaxTimestamp int64
	Compressed           bool
	LogAppendTime        bool
	Transactional        bool
	Control              bool
	ProducerID           int64
	// Abort is set on a control batch that holds an ABORT marker.
	Abort bool
}

// End returns the position just after the entry.
func (e *LogEntrySummary) End() int64 { return e.Position + e.Size }

// LogSummary is the result of SummarizeLog.
type LogSummary struct {
	Path    string
	Size    int64 // the file's size
	Entries []LogEntrySummary
	// ValidEnd is the position after the last valid entry: where recovery
	// would truncate the log.
	ValidEnd int64
	// Err is the corruption that stopped the walk (entries before it are
	// valid), nil when the walk reached the end or a torn or zero tail.
	Err error
}

// SummarizeLog walks the segment file r (size bytes, named path) with a
// record.ReaderScanner, in bounded memory, and summarises each entry. Each
// batch's records are decoded (and decompressed) to find the offset of its
// max timestamp and its control markers; a batch whose records cannot be
// read keeps LastOffset as that offset. Corruption stops the walk and is
// reported in LogSummary.Err; only read errors are returned.
func SummarizeLog(r io.ReaderAt, size int64, path string) (*LogSummary, error) {
	s := &LogSummary{Path: path, Size: size}
	var rs record.ReaderScanner
	var it record.Iterator
	var lit record.LegacyIterator
	var rec record.Record
	rs.Reset(r, size, path, 0)
	for rs.Next() {
		e := rs.Entry()
		sum := LogEntrySummary{
			Position: e.Position, Size: int64(e.Size()), Magic: e.Magic,
			BaseOffset: e.BaseOffset(), LastOffset: e.LastOffset(), MaxTimestamp: e.MaxTimestamp(),
			OffsetOfMaxTimestamp: e.LastOffset(), ProducerID: record.NoProducerID,
		}
		if e.Magic == record.MagicV2 {
			b := &e.Batch
			sum.Compressed = b.Attributes.Codec() != compress.None
			sum.LogAppendTime = b.Attributes.TimestampType() == record.LogAppendTime
			sum.Transactional = b.Attributes.IsTransactional()
			sum.Control = b.Attributes.IsControl()
			sum.ProducerID = b.ProducerID
			found := false
			it.Reset(b)
			for it.Next(&rec) {
				if !found && rec.Timestamp == b.MaxTimestamp {
					sum.OffsetOfMaxTimestamp, found = rec.Offset, true
				}
				if sum.Control {
					if t, err := record.ParseControlKey(rec.Key); err == nil && t == record.ControlAbort {
						sum.Abort = true
					}
				}
			}
		} else {
			sum.Compressed = e.Legacy.Codec() != compress.None
			sum.LogAppendTime = e.Legacy.TimestampType() == record.LogAppendTime
			if sum.Compressed {
				lit.Reset(&e.Legacy)
				first := true
				for lit.Next(&rec) {
					if first {
						sum.BaseOffset, first = rec.Offset, false
					}
				}
			}
		}
		s.Entries = append(s.Entries, sum)
	}
	s.ValidEnd = rs.ValidEnd()
	if err := rs.Err(); err != nil {
		var ce *format.CorruptionError
		if !errors.As(err, &ce) {
			return nil, err
		}
		s.Err = err
	}
	return s, nil
}

// Level says how serious a Problem is. It is part of the JSON output of
// segviz (as "info", "warning", "error").
type Level int8

// Levels.
const (
	// Info: a fact worth knowing that is not a defect, such as an index
	// entry written by a follower's multi-batch append.
	Info Level = iota
	// Warning: not a defect of the data, but a state to know about: the
	// zero padding of an untrimmed index (normal for the active segment of
	// a running broker; after a crash, Kafka would trust the zeros).
	Warning
	// Error: the index is wrong; a lookup through it can give a wrong
	// answer. Kafka would rebuild it if its recovery ran.
	Error
)

// String returns "info", "warning" or "error".
func (l Level) String() string {
	switch l {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return "level(" + strconv.Itoa(int(l)) + ")"
}

// MarshalText implements encoding.TextMarshaler.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// Problem kinds found by verification. They are a stable interface (segviz
// prints them, the README lists them): new kinds may be added, existing
// ones keep their names and meaning.
const (
	// Offset index (.index), errors:
	KindIndexOffsetOrder       = "index-offset-order"        // offset not above the previous entry's, or position below it
	KindIndexPositionPastEnd   = "index-position-past-end"   // position at or past the end of the log's valid entries
	KindIndexNotBatchBoundary  = "index-not-batch-boundary"  // position is not where a batch starts
	KindIndexOffsetBeforeBatch = "index-offset-before-batch" // a batch before the position holds the offset or a later one: a lookup would skip it
	KindIndexOffsetPastLogEnd  = "index-offset-past-log-end" // offset above the log's last offset
	// Offset index, info (valid entries, counted):
	KindIndexMultiBatchAppend = "index-multi-batch-append"  // offset is the last of a multi-batch (follower) append that starts at the position
	KindIndexOffsetInBatch    = "index-offset-inside-batch" // offset below the last offset of the batch at the position (a compacted segment)

	// Time index (.timeindex), errors:
	KindTimeOutOfOrder    = "timeindex-out-of-order"       // timestamp not above the previous entry's, or offset below it
	KindTimeOffsetMissing = "timeindex-offset-missing"     // no batch of the log holds the offset
	KindTimeMismatch      = "timeindex-timestamp-mismatch" // timestamp is not the max timestamp of the batch holding the offset
	KindTimeBehindMax     = "timeindex-timestamp-behind"   // an earlier batch has a larger timestamp: a lookup by time could skip it
	// Time index, info:
	KindTimeOffsetInBatch = "timeindex-offset-inside-batch" // offset inside its batch, neither its last offset nor its max-timestamp record's

	// Transaction index (.txnindex), errors:
	KindTxnOrder        = "txnindex-out-of-order"       // last offset not above the previous entry's, or first offset above last offset
	KindTxnBeforeBase   = "txnindex-offset-before-base" // last offset below the segment's base offset (Kafka's sanity check)
	KindTxnNoAbort      = "txnindex-no-abort-marker"    // no ABORT marker of the producer at the last offset
	KindTxnPartialEntry = "txnindex-partial-entry"      // bytes after the last whole entry

	// Any index, warning:
	KindZeroPadding = "zero-padding" // zero entries Kafka would trust: an untrimmed index

	// Any index, error: the file failed Kafka's sanity check.
	KindSanity = "sanity-check"
)

// Problem is one finding of a verification.
type Problem struct {
	File     string // the index file
	Position int64  // byte position in the index file
	Kind     string // one of the Kind constants
	Level    Level
	Detail   string
}

// Count returns how many of problems have the given level.
func Count(problems []Problem, level Level) int {
	n := 0
	for i := range problems {
		if problems[i].Level == level {
			n++
		}
	}
	return n
}

// Locator answers questions about a summarised log's entries by position
// and by offset; the verifiers of both kinds of index share it.
type Locator struct {
	entries []LogEntrySummary
	maxTs   []int64 // maxTs[i]: the largest MaxTimestamp of entries [0, i]
	maxLast []int64 // maxLast[i]: the largest LastOffset of entries [0, i]
}

// NewLocator indexes entries, which must be in file order.
func NewLocator(entries []LogEntrySummary) *Locator {
	l := &Locator{entries: entries, maxTs: make([]int64, len(entries)), maxLast: make([]int64, len(entries))}
	ts, last := int64(-1), int64(-1)
	for i, e := range entries {
		ts, last = max(ts, e.MaxTimestamp), max(last, e.LastOffset)
		l.maxTs[i], l.maxLast[i] = ts, last
	}
	return l
}

// End returns the position after the last entry.
func (l *Locator) End() int64 {
	if len(l.entries) == 0 {
		return 0
	}
	return l.entries[len(l.entries)-1].End()
}

// LastOffset returns the log's largest offset, or -1 for an empty log.
func (l *Locator) LastOffset() int64 {
	if len(l.entries) == 0 {
		return -1
	}
	return l.maxLast[len(l.maxLast)-1]
}

// AtPosition returns the index of the entry starting at pos, or -1.
func (l *Locator) AtPosition(pos int64) int {
	i := sort.Search(len(l.entries), func(i int) bool { return l.entries[i].Position >= pos })
	if i < len(l.entries) && l.entries[i].Position == pos {
		return i
	}
	return -1
}

// Holding returns the index of the first entry whose LastOffset is at
// least offset (where a scan for offset stops), and whether that entry
// holds offset (its BaseOffset is not above it).
func (l *Locator) Holding(offset int64) (int, bool) {
	i := sort.Search(len(l.entries), func(i int) bool { return l.maxLast[i] >= offset })
	if i == len(l.entries) {
		return -1, false
	}
	return i, l.entries[i].BaseOffset <= offset
}

// MaxTimestampThrough returns the largest MaxTimestamp of entries [0, i].
func (l *Locator) MaxTimestampThrough(i int) int64 { return l.maxTs[i] }

// MaxLastOffsetThrough returns the largest LastOffset of entries [0, i].
func (l *Locator) MaxLastOffsetThrough(i int) int64 { return l.maxLast[i] }

// Entry returns entry i.
func (l *Locator) Entry(i int) *LogEntrySummary { return &l.entries[i] }

// PaddingProblem returns the zero-padding warning for p, or nil. active
// says whether the index belongs to the partition's active (last) segment,
// where an untrimmed, preallocated index is what a running broker leaves.
func PaddingProblem(file string, entrySize int, p Padding, active bool) *Problem {
	if !p.Untrimmed {
		return nil
	}
	var detail string
	if active {
		detail = fmt.Sprintf("%d zero bytes (%d zero entries after %d valid ones): the preallocated index of the active segment, untrimmed as a running broker leaves it; normal", p.ZeroBytes, p.Entries-p.ValidEntries, p.ValidEntries)
	} else {
		detail = fmt.Sprintf("%d zero bytes (%d zero entries after %d valid ones): an untrimmed index of a segment that is not the last; the broker stopped before trimming it (a crash), and Kafka trusts the zero entries unless it recovers the segment", p.ZeroBytes, p.Entries-p.ValidEntries, p.ValidEntries)
	}
	return &Problem{File: file, Position: int64(p.ValidEntries) * int64(entrySize), Kind: KindZeroPadding, Level: Warning, Detail: detail}
}

// VerifyOffsetIndex cross-checks the offset index x against the entries of
// its .log (from SummarizeLog) and returns what it finds, in index order.
// Only the entries before any zero padding are checked; the padding itself
// is reported by PaddingProblem, not here.
//
// An entry (o, p) is correct when p is where a batch starts and every batch
// before p ends below o: a lookup of any offset from o up then starts at or
// before the batch holding it, and never after. That holds for the entries
// Kafka writes on every path, and is all a lookup needs:
//
//   - o is the last offset of the batch at p: a leader's append, or
//     recovery (no finding);
//   - o is above it: a follower appended several batches at once and
//     indexed the largest offset of the append at its first batch
//     (info, KindIndexMultiBatchAppend; kafka-dump-log calls it a mismatch);
//   - o is below it: the log cleaner indexed the last offset it kept
//     (info, KindIndexOffsetInBatch).
//
// Errors: KindIndexOffsetOrder, KindIndexPositionPastEnd,
// KindIndexNotBatchBoundary, KindIndexOffsetBeforeBatch,
// KindIndexOffsetPastLogEnd.
func VerifyOffsetIndex(x *OffsetIndex, entries []LogEntrySummary) []Problem {
	return verifyOffsetEntries(x.Path(), x.BaseOffset(), x.f.View(), x.Padding().ValidEntries, NewLocator(entries))
}

func verifyOffsetEntries(file string, base int64, v View, n int, loc *Locator) []Problem {
	var out []Problem
	add := func(i int, kind string, level Level, msg string, args ...any) {
		out = append(out, Problem{File: file, Position: int64(i) * EntrySize, Kind: kind, Level: level, Detail: fmt.Sprintf(msg, args...)})
	}
	prev := Entry{Offset: -1, Position: -1}
	for i := 0; i < n; i++ {
		e := DecodeEntry(v.Entry(i), base)
		if i > 0 && (e.Offset <= prev.Offset || e.Position < prev.Position) {
			add(i, KindIndexOffsetOrder, Error, "entry (offset %d, position %d) follows (offset %d, position %d)", e.Offset, e.Position, prev.Offset, prev.Position)
		}
		prev = e
		pos := int64(e.Position)
		if pos < 0 || pos >= loc.End() {
			add(i, KindIndexPositionPastEnd, Error, "offset %d: position %d is not below the end of the log's valid batches (%d)", e.Offset, pos, loc.End())
			continue
		}
		b := loc.AtPosition(pos)
		if b < 0 {
			add(i, KindIndexNotBatchBoundary, Error, "offset %d: no batch starts at position %d", e.Offset, pos)
			continue
		}
		if b > 0 {
			if before := loc.MaxLastOffsetThrough(b - 1); before >= e.Offset {
				add(i, KindIndexOffsetBeforeBatch, Error, "offset %d at position %d: a batch before that position ends at offset %d, so a lookup would skip it", e.Offset, pos, before)
				continue
			}
		}
		if e.Offset > loc.LastOffset() {
			add(i, KindIndexOffsetPastLogEnd, Error, "offset %d at position %d is above the log's last offset %d", e.Offset, pos, loc.LastOffset())
			continue
		}
		be := loc.Entry(b)
		switch {
		case e.Offset > be.LastOffset:
			end, _ := loc.Holding(e.Offset)
			add(i, KindIndexMultiBatchAppend, Info, "offset %d at position %d: the batch there holds %d..%d; the offset is the last of an append of %d batches starting there (a follower's fetch), so a lookup is still exact", e.Offset, pos, be.BaseOffset, be.LastOffset, end-b+1)
		case e.Offset < be.LastOffset:
			add(i, KindIndexOffsetInBatch, Info, "offset %d at position %d: inside the batch there (%d..%d), not its last offset", e.Offset, pos, be.BaseOffset, be.LastOffset)
		}
	}
	return out
}

// VerifyTxnIndex checks the transaction index x on its own (Kafka's sanity
// check, order, a partial entry) and, given the entries of its .log (nil to
// skip), that each aborted transaction ends at an ABORT marker of its
// producer.
func VerifyTxnIndex(x *TransactionIndex, entries []LogEntrySummary) []Problem {
	var out []Problem
	file := x.Path()
	add := func(i int, kind string, msg string, args ...any) {
		out = append(out, Problem{File: file, Position: int64(i) * AbortedTxnSize, Kind: kind, Level: Error, Detail: fmt.Sprintf(msg, args...)})
	}
	var loc *Locator
	if entries != nil {
		loc = NewLocator(entries)
	}
	txns := x.st.Load().txns
	for i, t := range txns {
		if t.LastOffset < x.base {
			add(i, KindTxnBeforeBase, "%v: last offset below the base offset %d", t, x.base)
		}
		if t.FirstOffset > t.LastOffset || i > 0 && t.LastOffset <= txns[i-1].LastOffset {
			add(i, KindTxnOrder, "%v: first offset above last offset, or last offset not above the previous entry's", t)
		}
		if loc != nil {
			b, ok := loc.Holding(t.LastOffset)
			if !ok || !loc.Entry(b).Abort || loc.Entry(b).ProducerID != t.ProducerID || loc.Entry(b).BaseOffset != t.LastOffset {
				add(i, KindTxnNoAbort, "%v: no ABORT marker of producer %d at offset %d in the log", t, t.ProducerID, t.LastOffset)
			}
		}
	}
	if tail := x.TrailingBytes(); tail > 0 {
		add(len(txns), KindTxnPartialEntry, "%d bytes after the last whole entry (a torn write)", tail)
	}
	return out
}
