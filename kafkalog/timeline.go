package kafkalog

import (
	"fmt"
	"slices"
	"time"

	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeline"
)

// Resolution is what Open did with one instant of the timeline that an
// earlier run left requested or inflight (Options.Timeline).
type Resolution struct {
	// Instant is the instant as it was pending.
	Instant timeline.Instant
	// Completed says it was completed, its change being in place;
	// otherwise it was rolled back, having changed nothing (or its change
	// having been undone by the load).
	Completed bool
	// Why says how that was decided.
	Why string
}

// Timeline returns the partition's timeline when the log was opened with
// Options.Timeline (read-only if the log is), and nil otherwise. The
// engine records its rolls, truncations and recoveries there; retention
// and compaction record theirs through it.
func (l *Log) Timeline() *timeline.Timeline { return l.tl }

// timelineClock adapts the log's clock to the timeline's.
type timelineClock struct{ c segment.Clock }

func (c timelineClock) Now() time.Time { return c.c.Now() }

// openTimeline opens the timeline before the load, so that a damaged
// one stops Open before anything is changed.
func (l *Log) openTimeline() error {
	if !l.opt.Timeline {
		return nil
	}
	tl, err := timeline.Open(l.fsys, l.dir, timeline.Options{ReadOnly: l.opt.ReadOnly, Clock: timelineClock{l.clock}})
	if err != nil {
		return fmt.Errorf("log: the timeline of %s: %w", l.dir, err)
	}
	l.tl = tl
	return nil
}

// ref describes a segment for the timeline.
func ref(s *segment.Segment, next int64) timeline.SegmentRef {
	ts, err := s.LargestTimestamp()
	if err != nil {
		ts = -1
	}
	return timeline.SegmentRef{BaseOffset: s.BaseOffset(), NextOffset: next, Size: s.Size(), LargestTimestamp: ts}
}

// afterLoad records what the load did and resolves the instants an
// earlier run left pending; it runs once the log is loaded, before the
// first append. A crash before it finishes repeats the load, which
// finds the same state, and so this.
func (l *Log) afterLoad() error {
	if l.tl == nil || l.opt.ReadOnly {
		return nil
	}
	if err := l.recordRecovery(); err != nil {
		return err
	}
	res, err := l.resolvePending()
	l.load.Resolved = res
	if err != nil {
		return err
	}
	return l.recordLostRolls()
}

// recordRecovery records a recovery instant when the load changed files
// or, after an unclean shutdown, rechecked segments. Rebuilding the
// indexes of a cleanly shut down segment cuts nothing (Kafka creates an
// empty active segment's indexes lazily, so every clean open after a roll
// rebuilds them) and is not recorded. The loader's changes are idempotent
// (a crash in the middle of them makes the next load redo them), so the
// instant is written after them, requested and completed at once.
func (l *Log) recordRecovery() error {
	r := l.load
	cut := false
	for _, s := range r.Recovered {
		cut = cut || s.Result.Truncated > 0
	}
	if !cut && len(r.Deleted) == 0 && len(r.Renamed) == 0 && len(r.Replaced) == 0 && (r.CleanShutdown || len(r.Recovered) == 0) {
		return nil
	}
	p := &timeline.Recovery{
		CleanShutdown: r.CleanShutdown, RecoveryPoint: r.RecoveryPoint,
		LogStartOffset: l.logStartOffset, LogEndOffset: l.nextOffset,
	}
	for _, s := range r.Recovered {
		p.Recovered = append(p.Recovered, s.BaseOffset)
		p.BytesTruncated += s.Result.Truncated
	}
	p.Leftovers = append(append(append(p.Leftovers, r.Deleted...), r.Renamed...), r.Replaced...)
	x, err := l.tl.Begin(timeline.ActionRecovery, p)
	if err != nil {
		return fmt.Errorf("log: record the recovery: %w", err)
	}
	if err := x.Complete(p); err != nil {
		return fmt.Errorf("log: record the recovery: %w", err)
	}
	return nil
}

// resolvePending completes or rolls back each pending instant, from what
// the loaded log shows of its change.
func (l *Log) resolvePending() ([]Resolution, error) {
	var out []Resolution
	for _, x := range l.tl.Pending() {
		inst := x.Instant()
		r := Resolution{Instant: inst}
		result, done, why := l.judge(inst)
		r.Completed, r.Why = done, why
		var err error
		if done {
			err = x.Complete(result)
		} else {
			err = x.Rollback("resolved when the log was next opened: " + why)
		}
		if err != nil {
			return out, fmt.Errorf("log: resolve instant %s: %w", inst.Time, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// judge decides whether a pending instant's change is in place: its
// result if so, and why.
func (l *Log) judge(inst timeline.Instant) (timeline.Payload, bool, string) {
	if inst.State == timeline.Requested {
		return nil, false, "it was requested, never inflight: nothing had changed"
	}
	switch p := inst.Plan.(type) {
	case *timeline.Clean:
		if l.logStartOffset >= p.NewLogStartOffset {
			return p, true, fmt.Sprintf("the log start offset is %d, at or past the planned %d: the deletion took effect (segments still on disk go at the next check, by the log start offset rule)", l.logStartOffset, p.NewLogStartOffset)
		}
		return nil, false, fmt.Sprintf("the log start offset is %d, below the planned %d: the deletion had not begun (its first change is that move)", l.logStartOffset, p.NewLogStartOffset)
	case *timeline.Roll:
		if l.hasSegmentAt(p.NewBaseOffset) {
			return p, true, fmt.Sprintf("the log has a segment at %d: the roll took effect", p.NewBaseOffset)
		}
		return nil, false, fmt.Sprintf("the log has no segment at %d: the roll had not taken effect", p.NewBaseOffset)
	case *timeline.Truncate:
		if l.nextOffset < p.OldLogEndOffset {
			res := *p
			res.NewLogEndOffset = l.nextOffset
			return &res, true, fmt.Sprintf("the log end offset is %d, below the %d it had: the truncation took effect", l.nextOffset, p.OldLogEndOffset)
		}
		return nil, false, fmt.Sprintf("the log end offset is still %d: the truncation had not taken effect", l.nextOffset)
	case *timeline.Restore:
		if l.nextOffset <= p.NewLogEndOffset {
			res := *p
			res.NewLogEndOffset = l.nextOffset
			return &res, true, fmt.Sprintf("the log end offset is %d, at or below the savepoint's %d: the restore took effect", l.nextOffset, p.NewLogEndOffset)
		}
		if l.nextOffset < p.OldLogEndOffset {
			return nil, false, fmt.Sprintf("the log end offset is %d, below the %d it had but past the savepoint's %d: the restore's truncation was cut short (its truncate instant says what it removed); restore again", l.nextOffset, p.OldLogEndOffset, p.NewLogEndOffset)
		}
		return nil, false, fmt.Sprintf("the log end offset is still %d, past the savepoint's %d: the restore had not taken effect", l.nextOffset, p.NewLogEndOffset)
	case *timeline.Compaction:
		// A clean swaps its groups in one after another; the loader has
		// finished or dropped the swap a crash interrupted. The sources
		// still in the log, as they were, were not replaced.
		var replaced []timeline.SegmentRef
		for _, src := range p.Sources {
			if !l.hasSegment(src) {
				replaced = append(replaced, src)
			}
		}
		if len(replaced) == 0 {
			return nil, false, "every source segment is in the log as it was: no cleaned segment was swapped in"
		}
		res := *p
		res.Sources, res.Cleaned = replaced, nil
		lo, hi := replaced[0].BaseOffset, replaced[len(replaced)-1].NextOffset
		for i, s := range l.segs {
			next := l.nextOffset
			if i+1 < len(l.segs) {
				next = l.segs[i+1].BaseOffset()
			}
			if s.BaseOffset() >= lo && s.BaseOffset() < hi && !slices.ContainsFunc(p.Sources, func(r timeline.SegmentRef) bool { return r.BaseOffset == s.BaseOffset() && r.Size == s.Size() }) {
				res.Cleaned = append(res.Cleaned, ref(s, next))
			}
		}
		return &res, true, fmt.Sprintf("%d of the %d source segments were replaced by cleaned ones: the clean took effect for them", len(replaced), len(p.Sources))
	}
	return nil, false, fmt.Sprintf("a %s instant interrupted: the load does not finish it", inst.Action)
}

// hasSegmentAt reports whether a segment starts at base, or the log
// start offset has passed it.
func (l *Log) hasSegmentAt(base int64) bool {
	if l.logStartOffset > base {
		return true
	}
	return slices.ContainsFunc(l.segs, func(s *segment.Segment) bool { return s.BaseOffset() == base })
}

// hasSegment reports whether the log holds the segment r describes: at
// its base offset, with its size.
func (l *Log) hasSegment(r timeline.SegmentRef) bool {
	return slices.ContainsFunc(l.segs, func(s *segment.Segment) bool { return s.BaseOffset() == r.BaseOffset && s.Size() == r.Size })
}

// recordLostRolls records, as "recovered" rolls, the segments after the
// first recorded roll that no roll instant names: rolls whose noted
// instant a crash lost (timeline.Note). Only an unclean load can have
// lost one: Close syncs the timeline before the clean-shutdown marker.
func (l *Log) recordLostRolls() error {
	if l.load.CleanShutdown && len(l.tl.Dropped()) == 0 {
		return nil
	}
	rolls, err := l.tl.Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionRoll}})
	if err != nil {
		return fmt.Errorf("log: read the timeline's rolls: %w", err)
	}
	if len(rolls) == 0 {
		return nil
	}
	named := map[int64]bool{}
	first := int64(-1)
	for _, inst := range rolls {
		p, _ := inst.Result.(*timeline.Roll)
		if p == nil {
			p, _ = inst.Plan.(*timeline.Roll)
		}
		if p == nil {
			continue
		}
		named[p.NewBaseOffset] = true
		if first < 0 || p.NewBaseOffset < first {
			first = p.NewBaseOffset
		}
	}
	for i, s := range l.segs {
		if i == 0 || first < 0 || s.BaseOffset() <= first || named[s.BaseOffset()] {
			continue
		}
		prev := l.segs[i-1]
		closed := ref(prev, s.BaseOffset())
		if _, err := l.tl.Note(timeline.ActionRoll, &timeline.Roll{Reason: RollRecovered, Closed: &closed, NewBaseOffset: s.BaseOffset()}); err != nil {
			return fmt.Errorf("log: record a roll a crash lost: %w", err)
		}
	}
	return l.tl.Sync()
}

// RollRecovered is the Reason of a roll instant recorded when the log was
// opened, for a segment whose roll was made but whose noted instant a
// crash lost: the roll's time and reason are not known, its segments
// are.
const RollRecovered = "recovered: the roll's record was lost in a crash"

// noteRoll records a roll of the active segment closed (nil if the roll
// replaced an empty one) to a new segment at newBase. Caller holds l.mu.
func (l *Log) noteRoll(reason string, closed *timeline.SegmentRef, newBase int64) error {
	if l.tl == nil {
		return nil
	}
	if _, err := l.tl.Note(timeline.ActionRoll, &timeline.Roll{Reason: reason, Closed: closed, NewBaseOffset: newBase}); err != nil {
		return l.fail(fmt.Errorf("log: record the roll at %d: %w", newBase, err))
	}
	return nil
}

// syncTimeline makes the noted instants durable.
func (l *Log) syncTimeline() error {
	if l.tl == nil {
		return nil
	}
	if err := l.tl.Sync(); err != nil {
		return l.fail(fmt.Errorf("log: sync the timeline: %w", err))
	}
	return nil
}

// truncateTxn begins a truncate instant for a truncation to offset, when
// the log has a timeline; the returned function completes it with the
// result, or, given an error, leaves it inflight for the next Open.
func (l *Log) truncateTxn(reason string, offset int64) (func(error) error, error) {
	if l.tl == nil {
		return func(err error) error { return err }, nil
	}
	plan := &timeline.Truncate{Reason: reason, OldLogEndOffset: l.nextOffset, NewLogEndOffset: offset, OldLogStartOffset: l.logStartOffset, NewLogStartOffset: l.logStartOffset}
	// The segments TruncateTo removes whole: those above offset, the one
	// starting at it unless it is the first, and all of them when offset
	// is below the first.
	for i, s := range l.segs {
		end := l.nextOffset
		if i+1 < len(l.segs) {
			end = l.segs[i+1].BaseOffset()
		}
		if s.BaseOffset() > offset || (s.BaseOffset() == offset && i > 0) || offset < l.segs[0].BaseOffset() {
			plan.Deleted = append(plan.Deleted, ref(s, end))
		}
	}
	if offset < l.segs[0].BaseOffset() {
		plan.NewLogStartOffset = offset
	}
	x, err := l.tl.Begin(timeline.ActionTruncate, plan)
	if err != nil {
		return nil, l.fail(fmt.Errorf("log: record the truncation: %w", err))
	}
	if err := x.Inflight(); err != nil {
		return nil, l.fail(fmt.Errorf("log: record the truncation: %w", err))
	}
	sizeBefore := map[int64]int64{}
	for _, s := range l.segs {
		sizeBefore[s.BaseOffset()] = s.Size()
	}
	return func(err error) error {
		if err != nil {
			return err // left inflight: the next Open resolves it
		}
		res := *plan
		res.NewLogEndOffset, res.NewLogStartOffset = l.nextOffset, l.logStartOffset
		res.Deleted = slices.DeleteFunc(res.Deleted, func(r timeline.SegmentRef) bool {
			return slices.ContainsFunc(l.segs, func(s *segment.Segment) bool { return s.BaseOffset() == r.BaseOffset })
		})
		for _, s := range l.segs {
			if b, ok := sizeBefore[s.BaseOffset()]; ok && b > s.Size() {
				res.BytesTruncated += b - s.Size()
			}
		}
		if cerr := x.Complete(&res); cerr != nil {
			return l.fail(fmt.Errorf("log: the truncation is done, but recording it failed: %w", cerr))
		}
		return nil
	}, nil
}
