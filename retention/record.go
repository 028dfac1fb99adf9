package retention

import (
	"errors"
	"fmt"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/timeline"
)

// RollReason is the timeline.Roll reason of the roll a check makes before
// it deletes every segment (Kafka's deleteSegments calls roll() itself):
// an explicit roll, not one of LogSegment.shouldRoll's conditions.
const RollReason = kafkalog.RollRequested

// ApplyRecorded is Apply, recorded on the timeline tl (the log's own,
// l.Timeline(), or another): per rule that deletes, in the plan's order,
// a clean instant begun with its timeline.Clean plan (the rule, p's
// config, the segments and the log start offsets), made inflight before
// the first file changes, carried out by Apply and completed with the log
// start offset it left; before the rule that deletes every segment, when
// the plan rolls first, the roll — noted by the engine (l.RollFor, reason
// RollReason) when tl is the log's own timeline, begun and completed
// around l.Roll otherwise. It returns the completed instants, in order.
// It refuses, recording and changing nothing, a plan that deletes an
// offset one of holds (or plan.Holds) pins (ErrHeld).
//
// On an error, the completed instants are returned; an instant the error
// interrupted is rolled back when nothing had changed yet, and otherwise
// left inflight, for the next writable kafkalog.Open with its timeline to
// resolve.
func ApplyRecorded(l *kafkalog.Log, tl *timeline.Timeline, p Policy, plan Plan, holds []timeline.Hold) ([]timeline.Instant, error) {
	holds = MergeHolds(plan.Holds, holds)
	var done []timeline.Instant
	if err := CheckHolds(plan, holds); err != nil {
		return nil, err
	}
	cfg := timeline.RetentionConfig{RetentionMs: p.RetentionMs, RetentionBytes: p.RetentionBytes, FileDeleteDelayMs: p.FileDeleteDelayMs}
	gs := groups(plan.Deletions)
	for gi, g := range gs {
		last := g[len(g)-1]
		// Only the last rule can reach the active segment: after a
		// deletion of every segment, the new active one is empty, and the
		// empty active segment is never deleted.
		if plan.RollFirst && gi == len(gs)-1 {
			inst, err := roll(l, tl, deletionRef(last))
			if err != nil {
				return done, err
			}
			done = append(done, inst)
		}
		oldStart := l.LogStartOffset()
		sub := Plan{
			Now: plan.Now, LogStartOffset: oldStart, LogEndOffset: l.LogEndOffset(),
			Deletions: g, NewLogStartOffset: max(oldStart, last.NextOffset), Holds: holds,
		}
		clean := &timeline.Clean{
			Rule: string(g[0].Reason), Config: cfg, Now: plan.Now,
			OldLogStartOffset: oldStart, NewLogStartOffset: sub.NewLogStartOffset,
		}
		for _, d := range g {
			clean.Segments = append(clean.Segments, deletionRef(d))
		}
		x, err := tl.Begin(timeline.ActionClean, clean)
		if err != nil {
			return done, fmt.Errorf("retention: record the %s deletion: %w", g[0].Reason, err)
		}
		if err := x.Inflight(); err != nil {
			return done, fmt.Errorf("retention: record the %s deletion: %w", g[0].Reason, err)
		}
		if err := Apply(l, sub); err != nil {
			return done, interrupted(x, err, errors.Is(err, ErrStalePlan))
		}
		result := *clean
		result.NewLogStartOffset = l.LogStartOffset()
		if err := x.Complete(&result); err != nil {
			return done, fmt.Errorf("retention: the %s deletion is done, but recording it failed (instant %s left inflight): %w", g[0].Reason, x.Instant().Time, err)
		}
		done = append(done, x.Instant())
	}
	return done, nil
}

// roll rolls the log before a deletion of every segment, as a roll
// instant; closed is the active segment it closes. When tl is the log's
// own timeline (kafkalog Options.Timeline), the engine records the roll
// (l.RollFor, with RollReason); otherwise roll records it around l.Roll.
func roll(l *kafkalog.Log, tl *timeline.Timeline, closed timeline.SegmentRef) (timeline.Instant, error) {
	if tl == l.Timeline() {
		base := l.LogEndOffset()
		if err := l.RollFor(RollReason); err != nil {
			return timeline.Instant{}, fmt.Errorf("retention: roll before deleting every segment: %w", err)
		}
		rolls, err := tl.Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionRoll}})
		if err != nil {
			return timeline.Instant{}, fmt.Errorf("retention: read the roll's instant: %w", err)
		}
		for i := len(rolls) - 1; i >= 0; i-- {
			if r, ok := rolls[i].Result.(*timeline.Roll); ok && r.NewBaseOffset == base && r.Reason == RollReason {
				return rolls[i], nil
			}
		}
		return timeline.Instant{}, fmt.Errorf("retention: the log rolled at %d, but its timeline has no roll instant for it", base)
	}
	r := &timeline.Roll{Reason: RollReason, Closed: &closed, NewBaseOffset: l.LogEndOffset()}
	x, err := tl.Begin(timeline.ActionRoll, r)
	if err != nil {
		return timeline.Instant{}, fmt.Errorf("retention: record the roll: %w", err)
	}
	if err := x.Inflight(); err != nil {
		return timeline.Instant{}, fmt.Errorf("retention: record the roll: %w", err)
	}
	before := len(l.Segments())
	if err := l.Roll(); err != nil {
		return timeline.Instant{}, interrupted(x, fmt.Errorf("retention: roll before deleting every segment: %w", err), len(l.Segments()) == before)
	}
	if err := x.Complete(r); err != nil {
		return timeline.Instant{}, fmt.Errorf("retention: the log rolled, but recording it failed (instant %s left inflight): %w", x.Instant().Time, err)
	}
	return x.Instant(), nil
}

// interrupted handles an instant whose action failed: rolled back when
// unchanged says that nothing had changed, left inflight otherwise.
func interrupted(x *timeline.Txn, err error, unchanged bool) error {
	t := x.Instant().Time
	if unchanged {
		if rerr := x.Rollback("failed before changing anything: " + err.Error()); rerr != nil {
			return errors.Join(err, fmt.Errorf("retention: roll back instant %s: %w", t, rerr))
		}
		return fmt.Errorf("%w (nothing was changed; instant %s rolled back)", err, t)
	}
	return fmt.Errorf("%w (instant %s left inflight: the next check resolves it)", err, t)
}

// groups splits deletions into the runs of one rule, in order: Plan's
// rules each delete a prefix of what the previous one left.
func groups(ds []Deletion) [][]Deletion {
	var out [][]Deletion
	for i := 0; i < len(ds); {
		j := i + 1
		for j < len(ds) && ds[j].Reason == ds[i].Reason {
			j++
		}
		out = append(out, ds[i:j:j])
		i = j
	}
	return out
}

// deletionRef describes a deleted segment for the timeline, with the largest
// timestamp the time rule compared.
func deletionRef(d Deletion) timeline.SegmentRef {
	return timeline.SegmentRef{BaseOffset: d.BaseOffset, NextOffset: d.NextOffset, Size: d.Size, LargestTimestamp: d.LargestTimestamp}
}
