package retention

import (
	"errors"
	"fmt"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/timeline"
)

// ErrStalePlan is returned by Apply for a plan that no longer matches the
// log: its segments, its log end offset (for a plan that rolls first) or
// its high watermark changed since the plan was made.
var ErrStalePlan = errors.New("retention: stale plan")

// ErrHeld is returned by Apply for a plan that deletes a segment holding
// an offset one of its holds (Plan.Holds) pins. Plan never makes one; a
// plan built or edited by hand can.
var ErrHeld = errors.New("retention: the plan deletes a segment a savepoint holds")

// CheckHolds returns an error matching ErrHeld when a deletion of p
// removes an offset one of holds pins, and nil otherwise.
func CheckHolds(p Plan, holds []timeline.Hold) error {
	for _, d := range p.Deletions {
		for _, h := range holds {
			if d.BaseOffset < d.NextOffset && h.FirstOffset < d.NextOffset && h.LastOffset >= d.BaseOffset {
				return fmt.Errorf("%w: segment %d (offsets %d to %d) is held by %s", ErrHeld, d.BaseOffset, d.BaseOffset, d.NextOffset-1, h)
			}
		}
	}
	return nil
}

// Apply carries out a plan on the log it was made for (UnifiedLog.
// deleteSegments). When the plan rolls first, the log rolls a new active
// segment; then the planned segments are removed with log.DeleteSegments,
// which
//
//  1. moves the log start offset to the first segment kept and makes that
//     durable (the log-start-offset checkpoint) before any file goes;
//  2. renames the segments' files to .deleted and syncs the directory;
//  3. deletes the producer snapshots below the new log start offset;
//  4. removes the .deleted files once file.delete.delay.ms has passed
//     (the log's DeletePendingSegments, which the Cleaner calls).
//
// A crash at any point leaves a log that opens: Open removes stray
// .deleted files, and a checkpointed log start offset above segments that
// are still there hides them until the next check deletes them (the start
// offset rule). Apply checks that the plan still matches the log and
// returns ErrStalePlan, doing nothing, if it does not; and that it
// deletes nothing its holds pin (ErrHeld, doing nothing). A plan made by
// Plan already keeps every held segment and every later one.
//
// Apply must not run concurrently with appends to the same log: like
// Kafka, which plans and deletes under the log's lock, it relies on the
// active segment not changing between the check and the deletion.
func Apply(l *kafkalog.Log, p Plan) error {
	n := len(p.Deletions)
	if n == 0 {
		return nil
	}
	if err := CheckHolds(p, p.Holds); err != nil {
		return err
	}
	segs := l.Segments()
	if n > len(segs) {
		return fmt.Errorf("%w: it deletes %d segments, the log has %d", ErrStalePlan, n, len(segs))
	}
	for i, d := range p.Deletions {
		if b := segs[i].BaseOffset(); b != d.BaseOffset {
			return fmt.Errorf("%w: deletion %d is segment %d, the log's segment %d is %d", ErrStalePlan, i, d.BaseOffset, i, b)
		}
	}
	if hw := l.HighWatermark(); hw < p.NewLogStartOffset {
		return fmt.Errorf("%w: the high watermark %d is below the new log start offset %d", ErrStalePlan, hw, p.NewLogStartOffset)
	}
	if p.RollFirst {
		if n != len(segs) {
			return fmt.Errorf("%w: it rolls first to delete all %d segments, the log has %d", ErrStalePlan, n, len(segs))
		}
		if leo := l.LogEndOffset(); leo != p.LogEndOffset {
			return fmt.Errorf("%w: it rolls first at log end offset %d, the log end offset is %d", ErrStalePlan, p.LogEndOffset, leo)
		}
		if err := l.Roll(); err != nil {
			return fmt.Errorf("retention: roll before deleting every segment: %w", err)
		}
		if got := len(l.Segments()); got != n+1 {
			return fmt.Errorf("retention: the log did not roll (%d segments, want %d)", got, n+1)
		}
	} else if n == len(segs) {
		return fmt.Errorf("%w: it deletes all %d segments without rolling first", ErrStalePlan, n)
	}
	if _, err := l.DeleteSegments(n); err != nil {
		return fmt.Errorf("retention: delete %d segments: %w", n, err)
	}
	return nil
}
