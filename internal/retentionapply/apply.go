package retentionapply

import (
	"fmt"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
)

// RollReason is the timeline.Roll reason of the roll a check makes before
// it deletes every segment (retention.RollReason).
const RollReason = retention.RollReason

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
	return retention.ApplyRecorded(l, tl, p, plan, holds)
}
