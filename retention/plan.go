package retention

import (
	"fmt"
	"strings"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/timeline"
)

// Reason says which rule deletes a segment. The values are those of
// segviz's JSON output.
type Reason string

// The rules, in the order Kafka runs them (UnifiedLog.deleteOldSegments).
const (
	// ReasonLogStartOffset: the log start offset has passed the segment
	// (a DeleteRecords request, or an earlier deletion interrupted by a
	// crash). Kafka's LogStartOffsetBreach.
	ReasonLogStartOffset Reason = "logStartOffset"
	// ReasonSize: the log is larger than retention.bytes by at least the
	// segment's size. Kafka's RetentionSizeBreach.
	ReasonSize Reason = "size"
	// ReasonTime: the segment's newest record is older than retention.ms.
	// Kafka's RetentionMsBreach.
	ReasonTime Reason = "time"
)

// Deletion is one segment a Plan deletes.
type Deletion struct {
	BaseOffset int64
	// NextOffset is the offset after the segment: the next segment's base,
	// or the log end offset for the active segment.
	NextOffset int64
	Size       int64
	Reason     Reason
	// LargestTimestamp is what the time rule compared: the largest record
	// timestamp, or the file's modification time when there is none
	// (MtimeFallback).
	LargestTimestamp int64
	MtimeFallback    bool
	// Explanation says in words why the rule deletes the segment.
	Explanation string
}

// Plan is what one retention check does to a log: the segments it
// deletes, oldest first, and the log start offset it leaves.
type Plan struct {
	// Now is the time the plan was made for (ms since the epoch).
	Now int64
	// LogStartOffset and LogEndOffset are those of the state planned
	// from; Apply checks them.
	LogStartOffset int64
	LogEndOffset   int64
	// Deletions is a prefix of the log's segments, oldest first.
	Deletions []Deletion
	// NewLogStartOffset is the log start offset once the deletions are
	// done: the base of the first segment kept (never lower than before).
	NewLogStartOffset int64
	// RollFirst is set when every segment, the active one included, is
	// deleted: the log rolls a new empty active segment first.
	RollFirst bool
	// Warnings flags timestamps that make retention surprising (see
	// TimestampWarnings).
	Warnings []finding.Problem
	// Holds are the savepoints in force the plan was made with (the
	// state's Holds); Apply refuses a deletion of an offset they pin.
	Holds []timeline.Hold
	// Held are the segments the holds keep, oldest first: the first
	// segment a hold pins an offset of, and every later one (Kafka
	// deletes only a prefix). Empty when no hold pins a segment.
	Held []HeldSegment
}

// HeldSegment is a segment a savepoint keeps: one holding an offset the
// savepoint pins, or one after such a segment, which prefix deletion
// keeps with it.
type HeldSegment struct {
	BaseOffset int64
	// NextOffset is the offset after the segment, as in Deletion.
	NextOffset int64
	Size       int64
	// Hold is the savepoint that keeps the segment: the one pinning an
	// offset of it when there is one (Pinned), else the one pinning the
	// segment at HeldBase.
	Hold timeline.Hold
	// Pinned says the segment itself holds an offset of a hold; HeldBase
	// is the base offset of the first pinned segment, at or before this
	// one.
	Pinned   bool
	HeldBase int64
	// Blocked is the rule that would delete the segment in this check
	// without the holds ("" when none would): what the hold stops.
	Blocked Reason
	// Explanation names the hold that keeps the segment: `held by
	// savepoint "L" (T)` or `kept: segment B before it is held by
	// savepoint "L" (T)`.
	Explanation string
}

// Bytes returns the bytes the plan frees.
func (p Plan) Bytes() int64 {
	var n int64
	for _, d := range p.Deletions {
		n += d.Size
	}
	return n
}

// String summarises the plan in one line.
func (p Plan) String() string {
	if len(p.Deletions) == 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "at %s: nothing to delete (log start offset %d)", FormatTime(p.Now), p.LogStartOffset)
		p.heldSummary(&b)
		return b.String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "at %s: delete %d segment(s), %d bytes", FormatTime(p.Now), len(p.Deletions), p.Bytes())
	for _, d := range p.Deletions {
		fmt.Fprintf(&b, " [%d %s]", d.BaseOffset, d.Reason)
	}
	if p.RollFirst {
		b.WriteString(", rolling first")
	}
	fmt.Fprintf(&b, "; log start offset %d -> %d", p.LogStartOffset, p.NewLogStartOffset)
	p.heldSummary(&b)
	return b.String()
}

// heldSummary appends what the holds keep to a plan's summary.
func (p Plan) heldSummary(b *strings.Builder) {
	if len(p.Held) == 0 {
		return
	}
	h := p.Held[0]
	fmt.Fprintf(b, "; segment %d and %d later segment(s) kept: held by %s", h.BaseOffset, len(p.Held)-1, h.Hold)
}

// Plan returns what a retention check at now (ms) does to a log in state st,
// following Kafka's UnifiedLog.deleteOldSegments. It is a pure function.
//
// The rules run in Kafka's order, each on the state the previous one left:
//
//  1. log start offset: a segment goes when the next segment's base is at
//     or below the log start offset;
//  2. size (when cleanup.policy has delete and retention.bytes ≥ 0): if the
//     log is at least retention.bytes, segments go from the oldest while
//     the log minus the bytes already chosen minus the segment is still at
//     least retention.bytes;
//  3. time (when cleanup.policy has delete and retention.ms ≥ 0): a segment
//     goes when now − its largest timestamp > retention.ms.
//
// Each rule deletes only a prefix of the log: it walks from the oldest
// segment and stops at the first that fails the rule, whose upper bound
// (the next segment's base, or the log end offset for the active segment)
// is above the high watermark, or that is the empty active segment. When a
// rule would delete every segment, the log rolls first (RollFirst) and
// the new empty active segment stays. Plan returns ErrInvalidState for a
// state that fails Validate.
//
// Savepoints (st.Holds) stop every rule at the first segment holding an
// offset a hold pins: that segment and every later one stay, and Held
// lists them, each naming its hold and the rule the hold stops, if any.
// The held segments' bytes still count toward retention.bytes: the size
// rule deletes what it would before the held segment and nothing from it
// on, so the log may stay above retention.bytes while the hold is in
// force.
func (p Policy) Plan(st LogState, now int64) (Plan, error) {
	pl, err := p.plan(st, now)
	if err == nil {
		pl.Warnings = TimestampWarnings(st, p, now)
	}
	return pl, err
}

// plan is Plan without the warnings, for the simulations that call it at
// every check.
func (p Policy) plan(st LogState, now int64) (Plan, error) {
	if err := st.Validate(); err != nil {
		return Plan{}, err
	}
	stop, _, held := st.FirstHeld()
	w := planner{st: st, now: now, lso: st.LogStartOffset, stop: stop}
	w.rules(p)
	pl := Plan{
		Now:               now,
		LogStartOffset:    st.LogStartOffset,
		LogEndOffset:      st.LogEndOffset,
		Deletions:         w.dels,
		NewLogStartOffset: w.lso,
		RollFirst:         w.rolled,
		Holds:             st.Holds,
	}
	if held {
		pl.Held = heldSegments(p, st, now, stop)
	}
	return pl, nil
}

// heldSegments describes the segments from stop, the first pinned one,
// on, with the rule each hold stops: the rule a plan without the holds
// deletes it by. Before stop the two plans agree (a hold only ends a
// rule's walk early, and every rule after it then starts at stop).
func heldSegments(p Policy, st LogState, now int64, stop int) []HeldSegment {
	free := planner{st: st, now: now, lso: st.LogStartOffset, stop: len(st.Segments)}
	free.rules(p)
	first, _ := st.HoldOn(stop)
	out := make([]HeldSegment, 0, len(st.Segments)-stop)
	for i := stop; i < len(st.Segments); i++ {
		s := st.Segments[i]
		h := HeldSegment{BaseOffset: s.BaseOffset, NextOffset: st.NextOffset(i), Size: s.Size, Hold: first, HeldBase: st.Segments[stop].BaseOffset}
		if own, ok := st.HoldOn(i); ok {
			h.Hold, h.Pinned = own, true
			h.Explanation = fmt.Sprintf("held by %s, which pins offsets %d to %d", own, own.FirstOffset, own.LastOffset)
		} else {
			h.Explanation = fmt.Sprintf("kept: segment %d before it is held by %s, and Kafka deletes only a prefix of the log", h.HeldBase, first)
		}
		if i < len(free.dels) {
			h.Blocked = free.dels[i].Reason
			h.Explanation += fmt.Sprintf("; without the hold the %s rule would delete it now: %s", h.Blocked, free.dels[i].Explanation)
		}
		out = append(out, h)
	}
	return out
}

// rules runs Kafka's three rules, in its order, as p enables them.
func (w *planner) rules(p Policy) {
	now := w.now
	w.run(ReasonLogStartOffset, w.logStartOffsetBreached)
	if p.Delete() {
		if p.RetentionBytes >= 0 {
			w.runSize(p.RetentionBytes)
		}
		if p.RetentionMs >= 0 {
			ret := p.RetentionMs
			w.run(ReasonTime, func(s SegmentInfo, _ int) (bool, string) {
				ts := s.LargestTimestamp()
				if !olderThan(now, ts, ret) {
					return false, ""
				}
				return true, fmt.Sprintf("%s %s is %s old, more than retention.ms %d",
					tsWhat(s), FormatTime(ts), formatAge(now, ts), ret)
			})
		}
	}
}

// tsWhat names what a segment's LargestTimestamp is.
func tsWhat(s SegmentInfo) string {
	if s.LargestRecordTimestamp >= 0 {
		return "newest record"
	}
	return "file mtime (no record timestamps)"
}

// planner walks the rules over the segments still left (st.Segments[next:],
// plus the empty segment a roll added).
type planner struct {
	st     LogState
	now    int64
	next   int   // index in st.Segments of the oldest segment left
	lso    int64 // log start offset so far
	rolled bool  // the log rolled: only the new empty active segment is left
	stop   int   // index of the first segment a hold pins (len: none); no rule passes it
	dels   []Deletion
}

// pred decides one segment (index i in st.Segments); it returns whether
// the rule deletes it and why.
type pred func(s SegmentInfo, i int) (bool, string)

// run applies one rule: deletableSegments then deleteSegments.
func (w *planner) run(reason Reason, ok pred) {
	if w.rolled {
		return // only the new, empty active segment is left
	}
	n := len(w.st.Segments)
	var chosen []Deletion
	for i := w.next; i < n; i++ {
		s := w.st.Segments[i]
		upper := w.st.NextOffset(i)
		lastAndEmpty := i == n-1 && s.Size == 0
		if i >= w.stop {
			break // held: this segment and, deletion being a prefix, every later one stay
		}
		// Kafka evaluates the predicate only when the high watermark
		// reaches the upper bound (the size rule counts bytes in it).
		if w.st.HighWatermark < upper {
			break
		}
		del, why := ok(s, i)
		if !del || lastAndEmpty {
			break
		}
		chosen = append(chosen, Deletion{
			BaseOffset:       s.BaseOffset,
			NextOffset:       upper,
			Size:             s.Size,
			Reason:           reason,
			LargestTimestamp: s.LargestTimestamp(),
			MtimeFallback:    s.LargestRecordTimestamp < 0,
			Explanation:      why,
		})
	}
	if len(chosen) == 0 {
		return
	}
	w.next += len(chosen)
	if w.next == n {
		// Every segment goes: roll first (UnifiedLog.deleteSegments). The
		// active segment is not empty (an empty one is never chosen), so
		// the new segment starts at the log end offset, above it.
		w.rolled = true
		chosen[len(chosen)-1].Explanation += "; every segment qualified, so the log rolls first"
		w.lso = max(w.lso, w.st.LogEndOffset)
	} else {
		w.lso = max(w.lso, w.st.Segments[w.next].BaseOffset)
	}
	w.dels = append(w.dels, chosen...)
}

func (w *planner) logStartOffsetBreached(s SegmentInfo, i int) (bool, string) {
	if i+1 >= len(w.st.Segments) {
		return false, "" // the active segment has no next segment
	}
	nb := w.st.Segments[i+1].BaseOffset
	if nb > w.lso {
		return false, ""
	}
	return true, fmt.Sprintf("the log start offset %d is at or past the next segment's base %d", w.lso, nb)
}

// runSize is deleteRetentionSizeBreachedSegments: the log size is taken
// once, before the walk, on what the start offset rule left.
func (w *planner) runSize(limit int64) {
	if w.rolled {
		return
	}
	var size int64
	for _, s := range w.st.Segments[w.next:] {
		size = satAdd(size, s.Size)
	}
	if size < limit {
		return
	}
	diff := size - limit
	w.run(ReasonSize, func(s SegmentInfo, _ int) (bool, string) {
		if diff-s.Size < 0 {
			return false, ""
		}
		diff -= s.Size
		return true, fmt.Sprintf("the log is %d bytes, over retention.bytes %d by %d; without this %d-byte segment it keeps %d",
			size, limit, diff+s.Size, s.Size, limit+diff)
	})
}
