package kafkalog

import (
	"fmt"
	"io"
	"math"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
)

// Isolation says how far a read may go.
type Isolation int8

// Isolation levels, as Kafka's FetchIsolation.
const (
	// IsolationLogEnd reads up to the log end offset (a follower fetch).
	IsolationLogEnd Isolation = iota
	// IsolationHighWatermark reads up to the high watermark
	// (read_uncommitted consumers).
	IsolationHighWatermark
	// IsolationCommitted reads up to the last stable offset
	// (read_committed consumers) and returns the aborted transactions.
	IsolationCommitted
)

// ReadOptions tune Read. The zero value reads up to the log end, with
// minOneMessage.
type ReadOptions struct {
	Isolation Isolation
	// NoMinOneMessage makes a batch larger than maxBytes give an empty
	// result instead of being returned whole.
	NoMinOneMessage bool
}

// ReadResult is what a read returns.
type ReadResult struct {
	// Records holds whole entries (batches or legacy messages). The first
	// may begin below the requested offset: readers skip those records.
	Records []byte
	// StartOffset is the requested offset.
	StartOffset int64
	// HighWatermark, LogStartOffset and LogEndOffset at the time of the
	// read.
	HighWatermark, LogStartOffset, LogEndOffset int64
	// AbortedTxns, for IsolationCommitted, lists the aborted transactions
	// overlapping the returned range.
	AbortedTxns []index.AbortedTxn
}

// OffsetOutOfRangeError carries the offsets of an out-of-range request.
type OffsetOutOfRangeError struct {
	Offset, LogStartOffset, LogEndOffset int64
}

func (e *OffsetOutOfRangeError) Error() string {
	return fmt.Sprintf("log: offset %d is out of range for a log with start offset %d and end offset %d", e.Offset, e.LogStartOffset, e.LogEndOffset)
}

// Unwrap makes errors.Is(err, ErrOffsetOutOfRange) true.
func (e *OffsetOutOfRangeError) Unwrap() error { return ErrOffsetOutOfRange }

// Read returns up to maxBytes of whole entries from the first one holding
// an offset ≥ offset (LocalLog.read). Every entry returned has passed its
// checksum: corruption is reported as a *format.CorruptionError naming the
// file and byte position, never returned as data. An offset below the log start
// offset or above the log end offset is an *OffsetOutOfRangeError; at the
// log end the result is empty. Unless opt.NoMinOneMessage, one entry is
// returned whole even when it is larger than maxBytes. dst, if it has the
// capacity, receives the bytes (Records aliases it).
func (l *Log) Read(offset int64, maxBytes int, dst []byte, opt ReadOptions) (ReadResult, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return ReadResult{}, ErrClosed
	}
	res := ReadResult{StartOffset: offset, HighWatermark: l.highWatermark, LogStartOffset: l.logStartOffset, LogEndOffset: l.nextOffset}
	if offset < l.logStartOffset || offset > l.nextOffset {
		return res, &OffsetOutOfRangeError{offset, l.logStartOffset, l.nextOffset}
	}
	maxOffset := l.nextOffset
	switch opt.Isolation {
	case IsolationHighWatermark:
		maxOffset = l.highWatermark
	case IsolationCommitted:
		maxOffset = min(l.highWatermark, l.lastStableOffset())
	}
	if offset >= maxOffset {
		res.Records = dst[:0]
		return res, nil
	}
	i := l.floorSegment(offset)
	if i < 0 {
		i = 0
	}
	for ; i < len(l.segs); i++ {
		s := l.segs[i]
		// maxPosition: the byte position where maxOffset begins, when it
		// lies in this segment.
		maxPos := int64(math.MaxInt64)
		if i+1 >= len(l.segs) || l.segs[i+1].BaseOffset() > maxOffset {
			if op, ok, err := s.TranslateOffset(maxOffset); err != nil {
				return res, err
			} else if ok {
				maxPos = op.Position
			}
		}
		info, found, err := s.Read(offset, maxBytes, maxPos, !opt.NoMinOneMessage)
		if err != nil {
			return res, err
		}
		if !found {
			continue // offset is past this segment's data: try the next
		}
		if cap(dst) < info.Size {
			dst = make([]byte, info.Size)
		}
		buf := dst[:info.Size]
		n, err := s.ReadAt(buf, info.Position)
		if err != nil && !(err == io.EOF && n == info.Size) {
			return res, err
		}
		end := l.nextOffset
		if i+1 < len(l.segs) {
			end = l.segs[i+1].BaseOffset()
		}
		recs, err := validPrefix(buf[:n], s.LogPath(), info.Position, s.BaseOffset(), end)
		if err != nil {
			return res, err
		}
		res.Records = recs
		if opt.Isolation == IsolationCommitted && len(res.Records) > 0 {
			res.AbortedTxns, _, err = l.collectAborted(offset, record.LastOffset(res.Records)+1)
			if err != nil {
				return res, err
			}
		}
		return res, nil
	}
	res.Records = dst[:0]
	return res, nil
}

// validPrefix checks the entries read — size, magic, header fields and
// checksum of each, and offsets that increase within [segBase, segEnd) —
// so that a byte damaged on disk or on the way is caught here, never
// passed on as data. It returns the run of valid entries. A trailing
// partial entry (a read cut inside an entry by maxPosition) is dropped.
// When the very first entry is bad the error names the file and position;
// otherwise the good entries before it are returned, and the next read,
// starting at the bad one, reports it.
func validPrefix(b []byte, path string, pos, segBase, segEnd int64) ([]byte, error) {
	s := record.NewScanner(b, path, pos)
	prev := segBase - 1
	valid := 0
	for s.Next() {
		e := s.Entry()
		if e.BaseOffset() <= prev || e.LastOffset() >= segEnd {
			err := format.Corruptf(path, e.Position, format.ErrInvalid, "offsets %d..%d out of order or outside the segment's range [%d, %d)", e.BaseOffset(), e.LastOffset(), segBase, segEnd)
			if valid == 0 {
				return nil, err
			}
			return b[:valid], nil
		}
		prev = e.LastOffset()
		valid = s.ValidBytes()
	}
	if err := s.Err(); err != nil && valid == 0 {
		return nil, err
	}
	return b[:valid], nil
}

// lastStableOffset is the first offset of the earliest ongoing
// transaction, or the high watermark. Caller holds l.mu.
func (l *Log) lastStableOffset() int64 {
	if fu, ok := l.producers.FirstUnstableOffset(); ok && fu < l.highWatermark {
		return fu
	}
	return l.highWatermark
}

// collectAborted gathers the aborted transactions overlapping [from,
// upTo) from the segments' transaction indexes, as
// LocalLog.collectAbortedTransactions does: from the segment holding from
// on, until a search is complete (index.TransactionIndex.Collect). The
// search goes past upTo: an aborted transaction's entry is in the
// segment of its ABORT marker, which may come after the fetch's records.
// complete is false when the last segment was searched and the search
// was not complete.
func (l *Log) collectAborted(from, upTo int64) (out []index.AbortedTxn, complete bool, err error) {
	for i := max(l.floorSegment(from), 0); i < len(l.segs); i++ {
		tx, err := l.segs[i].TransactionIndex()
		if err != nil {
			return nil, false, err
		}
		if out, complete = tx.Collect(out, from, upTo); complete {
			return out, true, nil
		}
	}
	return out, false, nil
}

// AbortedTxns returns the aborted transactions of the local segments
// that overlap [from, upTo) (UnifiedLog.collectAbortedTransactions),
// searched from the segment holding from (the first segment when from is
// below the log start offset). A read of a remote segment finishes its
// search here when the remote segments' indexes do not complete it.
func (l *Log) AbortedTxns(from, upTo int64) ([]index.AbortedTxn, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrClosed
	}
	out, _, err := l.collectAborted(from, upTo)
	return out, err
}

// Special timestamps of ListOffsets.
const (
	LatestTimestamp        int64 = -1
	EarliestTimestamp      int64 = -2
	MaxTimestamp           int64 = -3
	EarliestLocalTimestamp int64 = -4
	LatestTieredTimestamp  int64 = -5
)

// OffsetForTimestamp answers a ListOffsets request
// (UnifiedLog.fetchOffsetByTimestamp): for ts ≥ 0, the first record with
// timestamp ≥ ts (found false if none); for -1 (latest) the log end
// offset; -2 (earliest) and -4 (earliest local) the log start offset; -3
// (max timestamp) the first record carrying the largest timestamp; -5
// (latest tiered) is not found, as nothing is tiered.
func (l *Log) OffsetForTimestamp(ts int64) (segment.TimestampOffset, bool, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return segment.TimestampOffset{}, false, ErrClosed
	}
	epochAt := func(offset int64) int32 {
		if e, ok := l.epochs.EpochForOffset(offset); ok {
			return e
		}
		return -1
	}
	switch ts {
	case LatestTimestamp:
		latest, _ := l.epochs.LatestEpoch()
		if len(l.epochs.Entries()) == 0 {
			latest = -1
		}
		return segment.TimestampOffset{Timestamp: record.NoTimestamp, Offset: l.nextOffset, LeaderEpoch: latest}, true, nil
	case EarliestTimestamp, EarliestLocalTimestamp:
		return segment.TimestampOffset{Timestamp: record.NoTimestamp, Offset: l.logStartOffset, LeaderEpoch: epochAt(l.logStartOffset)}, true, nil
	case LatestTieredTimestamp:
		return segment.TimestampOffset{Timestamp: record.NoTimestamp, Offset: -1, LeaderEpoch: -1}, false, nil
	case MaxTimestamp:
		return l.maxTimestampOffset()
	}
	if ts < 0 {
		return segment.TimestampOffset{}, false, fmt.Errorf("log: invalid timestamp %d", ts)
	}
	// The first segment whose largest timestamp reaches ts.
	for _, s := range l.segs {
		largest, err := s.LargestTimestamp()
		if err != nil {
			return segment.TimestampOffset{}, false, err
		}
		if largest < ts {
			continue
		}
		to, found, err := s.FindOffsetByTimestamp(ts, l.logStartOffset)
		if err != nil || found {
			return to, found, err
		}
	}
	return segment.TimestampOffset{}, false, nil
}

// maxTimestampOffset finds the first record with the largest timestamp in
// the log.
func (l *Log) maxTimestampOffset() (segment.TimestampOffset, bool, error) {
	var best *segment.Segment
	bestTs := int64(math.MinInt64)
	for _, s := range l.segs {
		ts, _, err := s.MaxTimestampSoFar()
		if err != nil {
			return segment.TimestampOffset{}, false, err
		}
		if best == nil || ts > bestTs {
			best, bestTs = s, ts
		}
	}
	if best == nil || bestTs < 0 {
		return segment.TimestampOffset{Timestamp: record.NoTimestamp, Offset: -1, LeaderEpoch: -1}, false, nil
	}
	return best.FindOffsetByTimestamp(bestTs, l.logStartOffset)
}
