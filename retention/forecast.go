package retention

import (
	"fmt"
	"sort"
	"strings"

	"github.com/segkit/segkit/timeline"
)

// SegmentBound is how long one segment's records stay readable.
type SegmentBound struct {
	// BaseOffset and NextOffset delimit the segment's offsets:
	// [BaseOffset, NextOffset).
	BaseOffset, NextOffset int64
	Size                   int64
	// LargestTimestamp is what the time rule compares (record timestamp,
	// or file mtime when the segment has none).
	LargestTimestamp int64
	// Active marks the log's last segment, which still takes appends.
	Active bool
	// ReadableUntil is the time of the check that deletes the segment: its
	// records can be read before that instant and not from it on. Never
	// when no rule will delete it.
	//
	// It agrees with Plan: when a check at the forecast's Now deletes the
	// segment (Plan(st, now) lists it), ReadableUntil is the first check
	// after Now, the one that deletes it (IfIdle), the active segment
	// included. Otherwise, for the active segment, it allows for further
	// appends (records stamped when they are appended), which can only go
	// into it until segment.ms after its first batch (IfAppendsContinue).
	ReadableUntil int64
	// IfIdle is the same if nothing more is appended to the log; it equals
	// ReadableUntil except for the active segment. With a known schedule
	// it is exact.
	IfIdle int64
	// IfAppendsContinue is the same if records keep being appended,
	// stamped when appended: an upper bound whatever the traffic. It
	// equals ReadableUntil except for an active segment that a check at
	// Now deletes: appends before that check would keep it, up to this
	// time. IfIdle ≤ ReadableUntil ≤ IfAppendsContinue.
	IfAppendsContinue int64
	// OnDiskUntil is when the segment's files are removed:
	// ReadableUntil + file.delete.delay.ms.
	OnDiskUntil int64
	// Reason is the rule that deletes the segment if nothing more is
	// appended ("" for never).
	Reason Reason
	// Explanation says in words how the bound was reached.
	Explanation string
	// HeldBy is the savepoint that keeps the segment (nil when none
	// does): the one pinning an offset of it, or of the first pinned
	// segment before it. While it is in force no rule deletes the
	// segment: ReadableUntil, IfIdle, IfAppendsContinue and OnDiskUntil
	// are Never, and the explanation names the hold.
	HeldBy *timeline.Hold
	// IfReleased is ReadableUntil should every hold be released now (the
	// forecast of the same state without Holds); it equals ReadableUntil
	// for a segment no hold keeps.
	IfReleased int64
}

// Forecast is the readable-until time of each segment of a log, and so of
// each offset.
type Forecast struct {
	// Now is the time the forecast was made at; the log's state is taken
	// to reflect every check up to and including it.
	Now      int64
	Schedule Schedule
	// LogStartOffset and LogEndOffset delimit the readable offsets.
	LogStartOffset, LogEndOffset int64
	Segments                     []SegmentBound
}

// ForOffset returns the bound of the segment holding offset, and false
// when the offset is not readable now (below the log start offset, at or
// past the log end offset).
func (f Forecast) ForOffset(offset int64) (SegmentBound, bool) {
	if offset < f.LogStartOffset || offset >= f.LogEndOffset {
		return SegmentBound{}, false
	}
	i := sort.Search(len(f.Segments), func(i int) bool { return f.Segments[i].BaseOffset > offset }) - 1
	if i < 0 {
		return SegmentBound{}, false
	}
	return f.Segments[i], true
}

// ReadableUntil forecasts, for a log in state st under policy p with checks
// on schedule sched, the time each segment stops being readable: the
// earliest check at which Plan, applied check after check, deletes it.
//
// Nothing can make a segment other than the active one live longer than
// if nothing more were appended: its largest timestamp is final, more data
// only makes the size rule delete more, and deletion is a prefix. So its
// bound is exact for an idle log and an upper bound otherwise. The active
// segment can take appends until a new record is more than segment.ms
// newer than its first batch, so (with records stamped when appended) its
// newest record can be as late as that; its bound allows for it
// (IfAppendsContinue). When everything before the active segment is gone
// and it qualifies too, the log rolls and it goes (IfIdle). When it
// qualifies already, so that a check at now deletes it (Plan(st, now)
// does), its ReadableUntil is the next check, as the plan says, and the
// explanation gives the later bound should appends come first.
//
// With an unknown phase (sched.Unknown) each time is the latest the check
// can be: the instant the segment becomes deletable plus the interval
// less 1 ms. Segments that no rule will delete (retention.ms disabled,
// compact-only policy, a high watermark below them, the empty active
// segment) get Never, with the reason in the explanation.
//
// A savepoint (st.Holds) keeps the first segment holding an offset it
// pins and every later one: they get Never while it is in force, HeldBy
// names the hold, the explanation says "held by savepoint ..." (or
// "kept: segment B before it is held by savepoint ..."), and IfReleased
// gives the bound should the holds be released now.
func ReadableUntil(st LogState, p Policy, sched Schedule, now int64) (Forecast, error) {
	if err := st.Validate(); err != nil {
		return Forecast{}, err
	}
	stop, _, held := st.FirstHeld()
	if !held {
		f, err := readableUntil(st, p, sched, now, len(st.Segments))
		for i := range f.Segments {
			f.Segments[i].IfReleased = f.Segments[i].ReadableUntil
		}
		return f, err
	}
	free := st.Clone()
	free.Holds = nil
	ff, err := readableUntil(free, p, sched, now, len(st.Segments))
	if err != nil {
		return Forecast{}, err
	}
	f, err := readableUntil(st, p, sched, now, stop)
	if err != nil {
		return Forecast{}, err
	}
	for i := range f.Segments {
		b, fb := &f.Segments[i], ff.Segments[i]
		b.IfReleased = fb.ReadableUntil
		if i < stop {
			continue
		}
		b.Explanation += fmt.Sprintf(". If the holds were released now: readable until %s: %s", FormatTime(fb.ReadableUntil), fb.Explanation)
	}
	return f, nil
}

// readableUntil is ReadableUntil for a valid st whose first pinned
// segment is stop (len(st.Segments): none).
func readableUntil(st LogState, p Policy, sched Schedule, now int64, stop int) (Forecast, error) {
	if sched.Interval < 1 {
		sched.Interval = max(p.RetentionCheckIntervalMs, 1)
	}
	n := len(st.Segments)
	f := Forecast{Now: now, Schedule: sched, LogStartOffset: st.LogStartOffset, LogEndOffset: st.LogEndOffset}
	f.Segments = make([]SegmentBound, n)
	for i, s := range st.Segments {
		f.Segments[i] = SegmentBound{
			BaseOffset: s.BaseOffset, NextOffset: st.NextOffset(i), Size: s.Size,
			LargestTimestamp: s.LargestTimestamp(), Active: i == n-1,
			ReadableUntil: Never, IfIdle: Never, IfAppendsContinue: Never, OnDiskUntil: Never,
		}
	}
	// What a check at now deletes: the table must agree with it.
	planNow, err := p.plan(st, now)
	if err != nil {
		return Forecast{}, err
	}
	deletedNow := len(planNow.Deletions)

	// With an unknown phase, simulate a check at every instant (each
	// segment goes the moment it is deletable) and add the interval after.
	at := func(t int64) int64 {
		if sched.Unknown {
			return t
		}
		return sched.NextAtOrAfter(t)
	}
	// gone[i] is the time segment i goes if nothing is appended (with a
	// check at every instant, for an unknown phase).
	gone := make([]int64, n)
	for i := range gone {
		gone[i] = Never
	}
	whys := make([]string, n)
	state := st.Clone()
	deleted := 0
	t := at(satAdd(now, 1))
	for iter := 0; t != Never && deleted < n && iter <= n+1; iter++ {
		pl, err := p.plan(state, t)
		if err != nil {
			return Forecast{}, err
		}
		for _, d := range pl.Deletions {
			if deleted < n {
				gone[deleted] = t
				f.Segments[deleted].Reason = d.Reason
				whys[deleted] = d.Explanation
				deleted++
			}
		}
		state = state.After(pl)
		if deleted == n || !p.timeRule() {
			break
		}
		// Only the time rule can delete more later, and only from the
		// oldest segment left, once it qualifies: with nothing appended
		// the start offset rule has stopped on a base, and the size rule
		// stopped with less than a segment to spare, in a log that only
		// shrinks. (FuzzReadableUntil checks this against a check-by-check
		// simulation.)
		s := state.Segments[0]
		if (len(state.Segments) == 1 && s.Size == 0) || state.HighWatermark < state.NextOffset(0) {
			break
		}
		q := satAdd(satAdd(s.LargestTimestamp(), p.RetentionMs), 1)
		if q <= t || q == Never {
			break
		}
		t = at(q)
	}

	late := func(t int64) int64 { // the latest real check for instant t
		if sched.Unknown && t != Never {
			return satAdd(t, sched.Interval-1)
		}
		return t
	}
	checkAt := func(t int64) string {
		if sched.Unknown {
			return fmt.Sprintf("a check by %s (%s)", FormatTime(late(t)), sched)
		}
		return fmt.Sprintf("the check at %s (%s)", FormatTime(t), sched)
	}
	maxQ := int64(-1 << 63) // the latest qualifying instant so far, for waits
	maxQBase := int64(-1)
	for i := range f.Segments {
		b := &f.Segments[i]
		s := st.Segments[i]
		b.IfIdle = late(gone[i])
		b.ReadableUntil = b.IfIdle
		b.IfAppendsContinue = b.IfIdle
		q := satAdd(satAdd(s.LargestTimestamp(), p.RetentionMs), 1)
		var why strings.Builder
		switch {
		case gone[i] == Never && i >= stop:
			h, pinned := st.HoldOn(i)
			if !pinned {
				h, _ = st.HoldOn(stop)
			}
			b.HeldBy = &h
			why.WriteString(heldWhy(st, i, stop, h, pinned))
		case gone[i] == Never:
			why.WriteString(neverWhy(st, p, i, deleted))
		case b.Reason == ReasonTime:
			fmt.Fprintf(&why, "%s %s + retention.ms %d: qualifies from %s", tsWhat(s), FormatTime(s.LargestTimestamp()), p.RetentionMs, FormatTime(q))
			if maxQ > q && maxQBase >= 0 {
				fmt.Fprintf(&why, ", but waits for segment %d ahead of it (qualifies from %s)", maxQBase, FormatTime(maxQ))
			}
			fmt.Fprintf(&why, "; deleted by %s", checkAt(gone[i]))
			if strings.Contains(whys[i], "rolls first") {
				why.WriteString("; every segment qualified, so the log rolls first")
			}
		default:
			fmt.Fprintf(&why, "%s; deleted by %s", whys[i], checkAt(gone[i]))
		}
		if p.timeRule() && q > maxQ {
			maxQ, maxQBase = q, s.BaseOffset
		}
		if b.Active && s.Size > 0 && gone[i] != Never && b.Reason == ReasonTime {
			// More records can join the active segment until segment.ms
			// after its first batch (or after its creation, at most now,
			// when it has no timestamps).
			var horizon int64
			var from string
			if s.FirstBatchTimestamp >= 0 {
				horizon = satAdd(s.FirstBatchTimestamp, p.SegmentMs)
				from = fmt.Sprintf("its first batch %s", FormatTime(s.FirstBatchTimestamp))
			} else {
				horizon = satAdd(now, p.SegmentMs)
				from = "now (it has no first batch timestamp; it was created by now)"
			}
			idle := why.String()
			why.Reset()
			if horizon <= now {
				// Records are appended after now, more than segment.ms
				// after its first batch: the next one rolls a new segment
				// and this one's newest record is final, as for any other.
				fmt.Fprintf(&why, "active segment, closed to appends (%s + segment.ms %d = %s is past: the next record rolls a new segment), so appends cannot keep it: %s",
					from, p.SegmentMs, FormatTime(horizon), idle)
			} else {
				activeBound(b, &why, st, p, i, now, deletedNow, horizon, from, idle, gone, at, late, checkAt)
			}
		}
		b.OnDiskUntil = satAdd(b.ReadableUntil, max(p.FileDeleteDelayMs, 0))
		b.Explanation = why.String()
	}
	return f, nil
}

// activeBound sets the bounds of the active segment i, which can still
// take appends until horizon (after now), and explains them after idle,
// the explanation if nothing more is appended.
func activeBound(b *SegmentBound, why *strings.Builder, st LogState, p Policy, i int, now int64, deletedNow int, horizon int64, from, idle string,
	gone []int64, at, late func(int64) int64, checkAt func(int64) string) {
	newest := max(st.Segments[i].LargestTimestamp(), horizon)
	wq := satAdd(satAdd(newest, p.RetentionMs), 1)
	prev := satAdd(now, 1)
	if i > 0 {
		prev = gone[i-1]
	}
	w := at(max(wq, prev))
	b.IfAppendsContinue = max(b.IfIdle, late(w))
	if i < deletedNow {
		// A check now deletes it, and so does the next check unless
		// records are appended first: the plan's answer is the
		// readable-until, the worst case an extra figure.
		fmt.Fprintf(why, "active segment, deleted by a check now: %s. If appends continue (records reach it before that check): it takes appends until %s + segment.ms %d = %s, so its newest record can be as late as %s; + retention.ms %d: qualifies from %s; deleted by %s",
			idle, from, p.SegmentMs, FormatTime(horizon), FormatTime(newest), p.RetentionMs, FormatTime(wq), checkAt(w))
		return
	}
	b.ReadableUntil = b.IfAppendsContinue
	fmt.Fprintf(why, "active segment: takes appends until %s + segment.ms %d = %s, so its newest record can be as late as %s; + retention.ms %d: qualifies from %s; deleted by %s. If nothing more is appended: %s",
		from, p.SegmentMs, FormatTime(horizon), FormatTime(newest), p.RetentionMs, FormatTime(wq), checkAt(w), idle)
}

// heldWhy explains why segment i, at or after stop, the first pinned
// segment, is kept by hold h (which pins an offset of i itself when
// pinned).
func heldWhy(st LogState, i, stop int, h timeline.Hold, pinned bool) string {
	if pinned {
		return fmt.Sprintf("held by %s, which pins offsets %d to %d: no rule deletes the segment, nor any later one, while the hold is in force", h, h.FirstOffset, h.LastOffset)
	}
	return fmt.Sprintf("kept: segment %d before it is held by %s, and Kafka deletes only a prefix of the log: not deleted while the hold is in force", st.Segments[stop].BaseOffset, h)
}

// neverWhy explains why segment i (not deleted) never goes; firstKept is
// the index of the first segment kept.
func neverWhy(st LogState, p Policy, i, firstKept int) string {
	s := st.Segments[i]
	if i == len(st.Segments)-1 && s.Size == 0 {
		return "the empty active segment: it holds no records and is never deleted"
	}
	if i > firstKept {
		return fmt.Sprintf("waits behind segment %d, which no rule deletes", st.Segments[firstKept].BaseOffset)
	}
	if up := st.NextOffset(i); st.HighWatermark < up {
		return fmt.Sprintf("the high watermark %d is below its end %d: retention waits for replication to reach it", st.HighWatermark, up)
	}
	if !p.Delete() {
		return fmt.Sprintf("cleanup.policy is %q: only the log start offset rule deletes segments", strings.Join(p.CleanupPolicy, ","))
	}
	if p.RetentionMs < 0 {
		if p.RetentionBytes < 0 {
			return "retention.ms and retention.bytes are disabled: kept forever"
		}
		return fmt.Sprintf("retention.ms is disabled and the log is within retention.bytes %d: goes only once enough newer data is written", p.RetentionBytes)
	}
	return fmt.Sprintf("%s %s: qualifies only after the end of time", tsWhat(s), FormatTime(s.LargestTimestamp()))
}
