package retention

import (
	"errors"
	"fmt"

	"github.com/segkit/segkit/kafkalog"
)

// ErrStalePlan is returned by Apply for a plan that no longer matches the
// log: its segments, its log end offset (for a plan that rolls first) or
// its high watermark changed since the plan was made.
var ErrStalePlan = errors.New("retention: stale plan")

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
// returns ErrStalePlan, doing nothing, if it does not.
//
// Apply must not run concurrently with appends to the same log: like
// Kafka, which plans and deletes under the log's lock, it relies on the
// active segment not changing between the check and the deletion.
func Apply(l *kafkalog.Log, p Plan) error {
	n := len(p.Deletions)
	if n == 0 {
		return nil
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
