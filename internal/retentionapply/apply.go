package retentionapply

import (
	"errors"
	"fmt"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
)

// RollReason is the timeline.Roll reason of the roll a check makes before
// it deletes every segment (Kafka's deleteSegments calls roll() itself):
// an explicit roll, not one of LogSegment.shouldRoll's conditions.
const RollReason = "requested"

// Report is what one check did.
type Report struct {
	// State is the log the check planned from, Plan what it planned and
	// carried out (Plan.Deletions, oldest first, each with its rule).
	State retention.LogState
	Plan  retention.Plan
	// Instants are the instants the check completed, in order: the roll
	// (when the plan rolled first) and one clean per rule that deleted.
	// Empty when the plan deleted nothing.
	Instants []timeline.Instant
	// LogStartOffset is the log start offset the check left.
	LogStartOffset int64
}

// Check runs one retention check on l at now (ms since the epoch) under
// policy p, for real: it plans (p.Plan over retention.StateOf(l), with
// the holds in force in tl), carries the plan out as Apply does and
// records it in tl. The high watermark is the log's: set it with
// l.SetHighWatermark first to plan as a replicated partition. A segment a
// savepoint holds, and every later one, stays (Plan.Held says which and
// why); once the savepoint is released, the next Check deletes them as
// Kafka would.
//
// On an error the report holds what was planned and the instants already
// completed; an instant the error interrupted is rolled back when nothing
// had changed yet, and otherwise left inflight, for the next open of the
// log with its timeline (kafkalog Options.Timeline) to resolve.
func Check(l *kafkalog.Log, tl *timeline.Timeline, p retention.Policy, now int64) (Report, error) {
	st, err := retention.StateOf(l)
	if err != nil {
		return Report{LogStartOffset: l.LogStartOffset()}, err
	}
	if tl != l.Timeline() { // StateOf read the log's own timeline's holds
		holds, err := tl.Holds()
		if err != nil {
			return Report{LogStartOffset: l.LogStartOffset()}, fmt.Errorf("retentionapply: read the savepoints, so nothing was deleted: %w", err)
		}
		st.Holds = retention.MergeHolds(st.Holds, holds)
	}
	plan, err := p.Plan(st, now)
	if err != nil {
		return Report{State: st, LogStartOffset: l.LogStartOffset()}, err
	}
	// The plan was made under the caller's lock with tl's holds: no
	// savepoint can have been taken since, so apply need not read them
	// again.
	insts, err := apply(l, tl, p, plan, plan.Holds)
	return Report{State: st, Plan: plan, Instants: insts, LogStartOffset: l.LogStartOffset()}, err
}

// Apply carries out plan, made by p.Plan from retention.StateOf(l) at
// plan.Now, and records it in tl: per rule that deletes, in the plan's
// order, a clean instant begun with its timeline.Clean plan, made
// inflight, applied with retention.Apply and completed with the log start
// offset it left; before the rule that deletes every segment, when the
// plan rolls first, a roll instant around l.Roll. It returns the completed
// instants, in order.
//
// Apply first reads the holds in force in tl and refuses, recording and
// changing nothing, a plan that deletes an offset one of them (or one of
// plan.Holds) pins: an error matching retention.ErrHeld.
func Apply(l *kafkalog.Log, tl *timeline.Timeline, p retention.Policy, plan retention.Plan) ([]timeline.Instant, error) {
	holds, err := tl.Holds()
	if err != nil {
		return nil, fmt.Errorf("retentionapply: read the savepoints, so nothing was deleted: %w", err)
	}
	return apply(l, tl, p, plan, retention.MergeHolds(plan.Holds, holds))
}

// apply is Apply with the holds in force already read.
func apply(l *kafkalog.Log, tl *timeline.Timeline, p retention.Policy, plan retention.Plan, holds []timeline.Hold) ([]timeline.Instant, error) {
	var done []timeline.Instant
	if err := retention.CheckHolds(plan, holds); err != nil {
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
			inst, err := roll(l, tl, ref(last))
			if err != nil {
				return done, err
			}
			done = append(done, inst)
		}
		oldStart := l.LogStartOffset()
		sub := retention.Plan{
			Now: plan.Now, LogStartOffset: oldStart, LogEndOffset: l.LogEndOffset(),
			Deletions: g, NewLogStartOffset: max(oldStart, last.NextOffset), Holds: holds,
		}
		clean := &timeline.Clean{
			Rule: string(g[0].Reason), Config: cfg, Now: plan.Now,
			OldLogStartOffset: oldStart, NewLogStartOffset: sub.NewLogStartOffset,
		}
		for _, d := range g {
			clean.Segments = append(clean.Segments, ref(d))
		}
		x, err := tl.Begin(timeline.ActionClean, clean)
		if err != nil {
			return done, fmt.Errorf("retentionapply: record the %s deletion: %w", g[0].Reason, err)
		}
		if err := x.Inflight(); err != nil {
			return done, fmt.Errorf("retentionapply: record the %s deletion: %w", g[0].Reason, err)
		}
		if err := retention.Apply(l, sub); err != nil {
			return done, interrupted(x, err, errors.Is(err, retention.ErrStalePlan))
		}
		result := *clean
		result.NewLogStartOffset = l.LogStartOffset()
		if err := x.Complete(&result); err != nil {
			return done, fmt.Errorf("retentionapply: the %s deletion is done, but recording it failed (instant %s left inflight): %w", g[0].Reason, x.Instant().Time, err)
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
			return timeline.Instant{}, fmt.Errorf("retentionapply: roll before deleting every segment: %w", err)
		}
		rolls, err := tl.Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionRoll}})
		if err != nil {
			return timeline.Instant{}, fmt.Errorf("retentionapply: read the roll's instant: %w", err)
		}
		for i := len(rolls) - 1; i >= 0; i-- {
			if r, ok := rolls[i].Result.(*timeline.Roll); ok && r.NewBaseOffset == base && r.Reason == RollReason {
				return rolls[i], nil
			}
		}
		return timeline.Instant{}, fmt.Errorf("retentionapply: the log rolled at %d, but its timeline has no roll instant for it", base)
	}
	r := &timeline.Roll{Reason: RollReason, Closed: &closed, NewBaseOffset: l.LogEndOffset()}
	x, err := tl.Begin(timeline.ActionRoll, r)
	if err != nil {
		return timeline.Instant{}, fmt.Errorf("retentionapply: record the roll: %w", err)
	}
	if err := x.Inflight(); err != nil {
		return timeline.Instant{}, fmt.Errorf("retentionapply: record the roll: %w", err)
	}
	before := len(l.Segments())
	if err := l.Roll(); err != nil {
		return timeline.Instant{}, interrupted(x, fmt.Errorf("retentionapply: roll before deleting every segment: %w", err), len(l.Segments()) == before)
	}
	if err := x.Complete(r); err != nil {
		return timeline.Instant{}, fmt.Errorf("retentionapply: the log rolled, but recording it failed (instant %s left inflight): %w", x.Instant().Time, err)
	}
	return x.Instant(), nil
}

// interrupted handles an instant whose action failed: rolled back when
// unchanged says that nothing had changed, left inflight otherwise.
func interrupted(x *timeline.Txn, err error, unchanged bool) error {
	t := x.Instant().Time
	if unchanged {
		if rerr := x.Rollback("failed before changing anything: " + err.Error()); rerr != nil {
			return errors.Join(err, fmt.Errorf("retentionapply: roll back instant %s: %w", t, rerr))
		}
		return fmt.Errorf("%w (nothing was changed; instant %s rolled back)", err, t)
	}
	return fmt.Errorf("%w (instant %s left inflight: the next check resolves it)", err, t)
}

// groups splits deletions into the runs of one rule, in order: Plan's
// rules each delete a prefix of what the previous one left.
func groups(ds []retention.Deletion) [][]retention.Deletion {
	var out [][]retention.Deletion
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

// ref describes a deleted segment for the timeline, with the largest
// timestamp the time rule compared.
func ref(d retention.Deletion) timeline.SegmentRef {
	return timeline.SegmentRef{BaseOffset: d.BaseOffset, NextOffset: d.NextOffset, Size: d.Size, LargestTimestamp: d.LargestTimestamp}
}
