package retention

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/timeline"
)

// SegmentInfo is what retention needs to know about one segment.
type SegmentInfo struct {
	// BaseOffset is the segment's base offset (its file name).
	BaseOffset int64
	// Size is the number of bytes of its .log in use.
	Size int64
	// LargestRecordTimestamp is the largest record timestamp in the
	// segment, or -1 when it has none (legacy v0 data, or no records).
	LargestRecordTimestamp int64
	// FirstBatchTimestamp is the max timestamp of the segment's first
	// batch, from which segment.ms is measured, or -1 when it has none.
	FirstBatchTimestamp int64
	// LastModified is the .log file's modification time (ms).
	LastModified int64
}

// LargestTimestamp is what the time rule compares with retention.ms: the
// largest record timestamp, or the file's modification time when the
// segment has no record timestamps (LogSegment.largestTimestamp).
func (s SegmentInfo) LargestTimestamp() int64 {
	if s.LargestRecordTimestamp >= 0 {
		return s.LargestRecordTimestamp
	}
	return s.LastModified
}

// LogState is a plain description of a log, all that Plan reads.
type LogState struct {
	// Segments in offset order, the active segment last.
	Segments []SegmentInfo
	// LogStartOffset is the first offset readers may see.
	LogStartOffset int64
	// LogEndOffset is the offset the next record gets.
	LogEndOffset int64
	// HighWatermark is the replication high watermark; without
	// replication, the log end offset. Segments are deleted only while it
	// reaches the next segment's base.
	HighWatermark int64
	// Holds are the savepoints in force (timeline.Timeline.Holds): no
	// rule deletes a segment holding an offset one of them pins, nor any
	// later segment, since Kafka deletes only a prefix of the log. StateOf
	// fills it from the log's timeline when the log was opened with one;
	// otherwise the caller does (timeline.Timeline.Holds).
	Holds []timeline.Hold
}

// ErrInvalidState is returned for a LogState that no log can be in.
var ErrInvalidState = errors.New("retention: invalid log state")

// Validate checks that st describes a possible log: at least one segment,
// base offsets increasing, sizes not negative, a log end offset at or past
// the active segment's base (past it when the active segment has data), and
// log start offset ≤ high watermark ≤ log end offset.
func (st LogState) Validate() error {
	if len(st.Segments) == 0 {
		return fmt.Errorf("%w: no segment", ErrInvalidState)
	}
	for i, s := range st.Segments {
		if s.Size < 0 {
			return fmt.Errorf("%w: segment %d has a negative size %d", ErrInvalidState, s.BaseOffset, s.Size)
		}
		if s.BaseOffset < 0 {
			return fmt.Errorf("%w: segment base offset %d is negative", ErrInvalidState, s.BaseOffset)
		}
		if i > 0 && s.BaseOffset <= st.Segments[i-1].BaseOffset {
			return fmt.Errorf("%w: segment %d follows segment %d", ErrInvalidState, s.BaseOffset, st.Segments[i-1].BaseOffset)
		}
	}
	last := st.Segments[len(st.Segments)-1]
	switch {
	case st.LogEndOffset < last.BaseOffset:
		return fmt.Errorf("%w: log end offset %d below the active segment's base %d", ErrInvalidState, st.LogEndOffset, last.BaseOffset)
	case last.Size > 0 && st.LogEndOffset == last.BaseOffset:
		return fmt.Errorf("%w: the active segment %d holds %d bytes but no offset", ErrInvalidState, last.BaseOffset, last.Size)
	case st.LogStartOffset < 0 || st.LogStartOffset > st.HighWatermark:
		return fmt.Errorf("%w: log start offset %d above the high watermark %d", ErrInvalidState, st.LogStartOffset, st.HighWatermark)
	case st.HighWatermark > st.LogEndOffset:
		return fmt.Errorf("%w: high watermark %d above the log end offset %d", ErrInvalidState, st.HighWatermark, st.LogEndOffset)
	}
	for _, h := range st.Holds {
		// A hold that pins nothing is a mistake upstream; planning as if
		// it were absent could delete what someone meant to keep.
		if h.FirstOffset < 0 || h.LastOffset < h.FirstOffset {
			return fmt.Errorf("%w: %s holds offsets %d to %d", ErrInvalidState, h, h.FirstOffset, h.LastOffset)
		}
	}
	return nil
}

// HoldOn returns the first of st.Holds that pins an offset of segment i
// (its offsets [BaseOffset, NextOffset(i))), and whether there is one.
func (st LogState) HoldOn(i int) (timeline.Hold, bool) {
	lo, hi := st.Segments[i].BaseOffset, st.NextOffset(i)
	for _, h := range st.Holds {
		if lo < hi && h.FirstOffset < hi && h.LastOffset >= lo {
			return h, true
		}
	}
	return timeline.Hold{}, false
}

// FirstHeld returns the index of the first segment a hold pins an offset
// of, and that hold; len(st.Segments) and false when no hold pins a
// segment of the log. Retention deletes only segments before it.
func (st LogState) FirstHeld() (int, timeline.Hold, bool) {
	if len(st.Holds) == 0 {
		return len(st.Segments), timeline.Hold{}, false
	}
	for i := range st.Segments {
		if h, ok := st.HoldOn(i); ok {
			return i, h, true
		}
	}
	return len(st.Segments), timeline.Hold{}, false
}

// Size is the log's size in bytes: the sum of its segments' sizes, as
// Kafka's UnifiedLog.size.
func (st LogState) Size() int64 {
	var n int64
	for _, s := range st.Segments {
		n = satAdd(n, s.Size)
	}
	return n
}

// NextOffset returns the offset after segment i: the next segment's base,
// or the log end offset for the active segment (Kafka's upper bound).
func (st LogState) NextOffset(i int) int64 {
	if i+1 < len(st.Segments) {
		return st.Segments[i+1].BaseOffset
	}
	return st.LogEndOffset
}

// Clone returns a copy of st that shares nothing with it.
func (st LogState) Clone() LogState {
	st.Segments = slices.Clone(st.Segments)
	st.Holds = slices.Clone(st.Holds)
	return st
}

// After returns the state the log is in once p, planned from st, has been
// applied: the deleted prefix gone, the log start offset moved, and, when
// p rolled first, a new empty active segment at the log end offset whose
// modification time is p.Now. st is not changed.
func (st LogState) After(p Plan) LogState {
	segs := st.Segments
	if p.RollFirst {
		segs = append(slices.Clone(segs), SegmentInfo{
			BaseOffset: st.LogEndOffset, LargestRecordTimestamp: -1, FirstBatchTimestamp: -1, LastModified: p.Now,
		})
	}
	n := min(len(p.Deletions), len(segs))
	out := st
	out.Segments = slices.Clone(segs[n:])
	out.LogStartOffset = max(st.LogStartOffset, p.NewLogStartOffset)
	return out
}

// StateOf reads the state of a live log. It reads each segment's largest
// timestamp (its time index's last entry, or what was appended since),
// its first batch's timestamp and its file's modification time.
//
// StateOf reads the log's segments and offsets one after the other: call
// it from the log's writer (retention is a writer's operation), not
// concurrently with appends.
//
// When the log carries its timeline (Log.Timeline), StateOf reads the
// holds in force there into Holds, so that every plan made from it keeps
// what a savepoint pins; a timeline it cannot read is an error, not an
// empty set of holds.
func StateOf(l *kafkalog.Log) (LogState, error) {
	segs := l.Segments()
	st := LogState{
		Segments:       make([]SegmentInfo, 0, len(segs)),
		LogStartOffset: l.LogStartOffset(),
		LogEndOffset:   l.LogEndOffset(),
		HighWatermark:  l.HighWatermark(),
	}
	for _, s := range segs {
		ts, _, err := s.MaxTimestampSoFar()
		if err != nil {
			return LogState{}, fmt.Errorf("retention: segment %d: %w", s.BaseOffset(), err)
		}
		first, err := s.FirstBatchTimestamp()
		if err != nil {
			return LogState{}, fmt.Errorf("retention: segment %d: %w", s.BaseOffset(), err)
		}
		mtime, err := s.LastModified()
		if err != nil {
			return LogState{}, fmt.Errorf("retention: segment %d: %w", s.BaseOffset(), err)
		}
		if ts < 0 {
			ts = -1
		}
		if first == math.MaxInt64 || first < 0 {
			first = -1
		}
		st.Segments = append(st.Segments, SegmentInfo{
			BaseOffset:             s.BaseOffset(),
			Size:                   s.Size(),
			LargestRecordTimestamp: ts,
			FirstBatchTimestamp:    first,
			LastModified:           mtime,
		})
	}
	if tl := l.Timeline(); tl != nil {
		holds, err := tl.Holds()
		if err != nil {
			return LogState{}, fmt.Errorf("retention: the holds of %s: %w", l.Dir(), err)
		}
		st.Holds = holds
	}
	return st, st.Validate()
}

// MergeHolds returns the holds of a and b, each savepoint once (by its
// instant time), in a's order then b's.
func MergeHolds(a, b []timeline.Hold) []timeline.Hold {
	if len(b) == 0 {
		return a
	}
	out := slices.Clone(a)
	for _, h := range b {
		if !slices.ContainsFunc(out, func(x timeline.Hold) bool { return x.Savepoint == h.Savepoint }) {
			out = append(out, h)
		}
	}
	return out
}
