package kafkalog

import (
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// TruncateTo removes every record at or above offset (a follower
// truncating to the leader's log, UnifiedLog.truncateTo). Segments wholly
// above offset go (through .deleted); the segment holding it is cut at the
// entry that holds it. The log end offset becomes the end of the last
// entry kept. An offset at or above the log end does nothing; one below
// the first segment empties the log and restarts it at offset.
func (l *Log) TruncateTo(offset int64) error { return l.TruncateToFor(offset, TruncateRequested) }

// TruncateToFor is TruncateTo, with reason as the truncate instant's
// Reason on the timeline (Options.Timeline): "divergence" for a follower
// cutting its log to its leader's, or the caller's words.
func (l *Log) TruncateToFor(offset int64, reason string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return err
	}
	if offset < 0 {
		return fmt.Errorf("log: cannot truncate to a negative offset %d", offset)
	}
	if offset >= l.nextOffset {
		return nil
	}
	done, err := l.truncateTxn(reason, offset)
	if err != nil {
		return err
	}
	return done(l.truncateTo(offset))
}

// TruncateRequested is the Reason of a truncate instant for a TruncateTo.
const TruncateRequested = "requested"

// truncateTo is TruncateTo below the log end offset. Caller holds l.mu.
func (l *Log) truncateTo(offset int64) error {
	if offset < l.segs[0].BaseOffset() {
		return l.truncateFullyAndStartAt(offset)
	}
	i := l.floorSegment(offset)
	doomed := append([]*segment.Segment(nil), l.segs[i+1:]...)
	// A segment whose base equals the offset goes whole.
	if l.segs[i].BaseOffset() == offset && i > 0 {
		doomed = append([]*segment.Segment{l.segs[i]}, doomed...)
		i--
	}
	l.segs = l.segs[:i+1]
	if err := l.deleteSegmentsLocked(doomed, true); err != nil {
		return err
	}
	active := l.segs[i]
	if _, err := active.TruncateTo(offset); err != nil {
		return l.fail(err)
	}
	next, err := active.ReadNextOffset()
	if err != nil {
		return l.fail(err)
	}
	if len(doomed) > 0 {
		if err := active.ResizeIndexes(int(l.cfg.SegmentIndexBytes)); err != nil {
			return l.fail(err)
		}
	}
	// The truncation is made durable before anything that depends on it
	// (the leader epochs, the log start offset): a crash must not bring
	// the removed batches back under a checkpoint that no longer
	// describes them. (Kafka does not flush here; its followers
	// re-truncate from the leader.)
	if err := active.Flush(); err != nil {
		return l.fail(err)
	}
	l.nextOffset = next
	l.recoveryPoint = min(l.recoveryPoint, next)
	l.highWatermark = min(l.highWatermark, next)
	if next < l.logStartOffset {
		l.logStartOffset = next
		if err := l.writeOffsetCheckpoint(checkpoint.LogStartOffsetFile, next); err != nil {
			return l.fail(err)
		}
	}
	return l.afterTruncation()
}

// afterTruncation trims the leader epochs and rebuilds producer state to
// the new log end, dropping snapshots beyond it.
func (l *Log) afterTruncation() error {
	l.epochs.TruncateFromEnd(l.nextOffset)
	if err := l.epochs.Flush(l.fsys, path.Join(l.dir, checkpoint.LeaderEpochFile)); err != nil {
		return l.fail(err)
	}
	if err := l.rebuildProducerState(); err != nil {
		return l.fail(err)
	}
	return nil
}

// truncateFullyAndStartAt deletes every segment and starts an empty log
// at offset (LocalLog.truncateFullyAndStartAt).
func (l *Log) truncateFullyAndStartAt(offset int64) error {
	doomed := l.segs
	l.segs = nil
	if err := l.deleteSegmentsLocked(doomed, true); err != nil {
		return err
	}
	s, err := segment.Create(l.fsys, l.dir, offset, l.segConfig(), l.clock)
	if err != nil {
		return l.fail(err)
	}
	l.segs = []*segment.Segment{s}
	if err := vfs.SyncDir(l.fsys, l.dir); err != nil {
		return l.fail(err)
	}
	l.nextOffset, l.logStartOffset, l.recoveryPoint, l.highWatermark = offset, offset, offset, offset
	// The new start offset is durable with the new segment: a reopen must
	// not take an older, higher one from the checkpoint.
	if err := l.writeOffsetCheckpoint(checkpoint.LogStartOffsetFile, offset); err != nil {
		return l.fail(err)
	}
	l.epochs.Clear()
	snaps, err := producer.ListSnapshots(l.fsys, l.dir)
	if err != nil {
		return l.fail(err)
	}
	for _, off := range snaps {
		if err := l.fsys.Remove(segment.Path(l.dir, off, segment.SnapshotSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return l.fail(err)
		}
	}
	if len(snaps) > 0 {
		if err := vfs.SyncDir(l.fsys, l.dir); err != nil {
			return l.fail(err)
		}
	}
	l.producers = producer.NewState()
	return l.epochs.Flush(l.fsys, path.Join(l.dir, checkpoint.LeaderEpochFile))
}

// deleteSegmentsLocked renames segs to .deleted and schedules their
// removal after file.delete.delay.ms (immediately when now is set, as
// recovery does). Caller holds l.mu and has already unlinked segs from
// l.segs.
func (l *Log) deleteSegmentsLocked(segs []*segment.Segment, now bool) error {
	if len(segs) == 0 {
		return nil
	}
	due := l.nowMs() + l.cfg.FileDeleteDelayMs
	for _, s := range segs {
		if err := s.ChangeFileSuffixes("", segment.DeletedSuffix); err != nil {
			return l.fail(err)
		}
		l.pendingDeletes = append(l.pendingDeletes, pendingDelete{seg: s, due: due})
	}
	if err := vfs.SyncDir(l.fsys, l.dir); err != nil {
		return l.fail(err)
	}
	if now {
		return l.removePending(true)
	}
	return nil
}

// removePending removes the .deleted segments that are due (all of them
// with all).
func (l *Log) removePending(all bool) error {
	now := l.nowMs()
	keep := l.pendingDeletes[:0]
	var errs []error
	for _, p := range l.pendingDeletes {
		if !all && p.due > now {
			keep = append(keep, p)
			continue
		}
		if err := p.seg.DeleteIfExists(); err != nil {
			errs = append(errs, err)
			keep = append(keep, p)
		}
	}
	l.pendingDeletes = keep
	return errors.Join(errs...)
}

// DeleteSegments removes the oldest segments, as retention does
// (UnifiedLog.deleteSegments): n must name a prefix of the log that leaves
// at least one segment. The log start offset moves to the base of the
// first segment kept — and that move is made durable (the log start
// offset checkpoint) before any file goes. The segments' files are
// renamed to .deleted and removed once file.delete.delay.ms has passed
// (see DeletePendingSegments); producer snapshots below the new start
// offset go with them. It returns the new log start offset.
func (l *Log) DeleteSegments(n int) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return 0, err
	}
	if n <= 0 {
		return l.logStartOffset, nil
	}
	if n >= len(l.segs) {
		return 0, fmt.Errorf("log: cannot delete %d of %d segments: the active segment stays (roll first)", n, len(l.segs))
	}
	newStart := max(l.logStartOffset, l.segs[n].BaseOffset())
	if err := l.setLogStartOffset(newStart); err != nil {
		return 0, err
	}
	doomed := append([]*segment.Segment(nil), l.segs[:n]...)
	l.segs = append([]*segment.Segment(nil), l.segs[n:]...)
	if err := l.deleteSegmentsLocked(doomed, false); err != nil {
		return newStart, err
	}
	if err := l.deleteSnapshotsBelow(newStart); err != nil {
		return newStart, err
	}
	return newStart, l.removePending(false)
}

// IncrementLogStartOffset moves the log start offset forward (a
// DeleteRecords request, or retention), durably, without deleting files.
func (l *Log) IncrementLogStartOffset(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return err
	}
	if offset > l.highWatermark {
		return fmt.Errorf("%w: cannot move the log start offset to %d beyond the high watermark %d", ErrOffsetOutOfRange, offset, l.highWatermark)
	}
	if offset <= l.logStartOffset {
		return nil
	}
	return l.setLogStartOffset(offset)
}

// setLogStartOffset records a new log start offset and checkpoints it.
func (l *Log) setLogStartOffset(offset int64) error {
	l.logStartOffset = offset
	l.recoveryPoint = max(l.recoveryPoint, offset)
	// The start offset is checkpointed before the epochs lose the entries
	// below it: a crash in between then leaves the new start offset with
	// spare epoch entries below it, never the old one without them.
	if err := l.writeOffsetCheckpoint(checkpoint.LogStartOffsetFile, offset); err != nil {
		return l.fail(err)
	}
	l.epochs.TruncateFromStart(offset)
	if err := l.epochs.Flush(l.fsys, path.Join(l.dir, checkpoint.LeaderEpochFile)); err != nil {
		return l.fail(err)
	}
	return nil
}

// deleteSnapshotsBelow removes producer snapshots at offsets below offset.
func (l *Log) deleteSnapshotsBelow(offset int64) error {
	snaps, err := producer.ListSnapshots(l.fsys, l.dir)
	if err != nil {
		return err
	}
	removed := false
	for _, off := range snaps {
		if off >= offset {
			break
		}
		if err := l.fsys.Remove(segment.Path(l.dir, off, segment.SnapshotSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		removed = true
	}
	if removed {
		return vfs.SyncDir(l.fsys, l.dir)
	}
	return nil
}

// DeletePendingSegments removes the .deleted segments whose
// file.delete.delay.ms has passed. It returns how many remain pending.
func (l *Log) DeletePendingSegments() (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.removePending(false)
	return len(l.pendingDeletes), err
}

// writeOffsetCheckpoint updates this partition's entry in a per-log-dir
// offset checkpoint file, keeping the other partitions' entries.
func (l *Log) writeOffsetCheckpoint(name string, offset int64) error {
	p := path.Join(l.parentDir(), name)
	m, err := checkpoint.ReadOffsets(l.fsys, p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// A corrupt checkpoint is rewritten with what we know (C8).
		m = nil
	}
	if m == nil {
		m = map[checkpoint.TopicPartition]int64{}
	}
	m[l.tp] = offset
	return checkpoint.WriteOffsets(l.fsys, p, m)
}

// Close flushes the log, writes the producer snapshot, the recovery point
// and log start offset checkpoints, closes (and so trims) every segment,
// removes the pending .deleted files, and — last, after everything is
// durable — writes the log directory's clean-shutdown marker, when it was
// there at open or this partition is the only one in the directory (so
// that no other partition's unclean shutdown is hidden). A read-only or
// failed log just closes its files. Then it releases the log directory's
// lock, if Open took it.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.closeLocked()
	// The lock goes last, once nothing more will be written.
	return errors.Join(err, l.unlockDir())
}

// closeLocked flushes and closes the segments and writes the checkpoints
// and, when due, the clean-shutdown marker. Caller holds l.mu.
func (l *Log) closeLocked() error {
	if l.opt.ReadOnly || l.failed != nil {
		var errs []error
		for _, s := range l.segs {
			errs = append(errs, s.CloseHandlers())
		}
		return errors.Join(errs...)
	}
	var errs []error
	if err := l.flushLocked(l.nextOffset); err != nil {
		errs = append(errs, err)
	}
	// The noted rolls are durable before the clean-shutdown marker says
	// the directory needs no recovery.
	if err := l.syncTimeline(); err != nil {
		errs = append(errs, err)
	}
	if err := producer.WriteSnapshot(l.fsys, l.dir, l.nextOffset, l.producers.Snapshot()); err != nil {
		errs = append(errs, err)
	}
	for _, s := range l.segs {
		errs = append(errs, s.Close())
	}
	errs = append(errs, l.removePending(true))
	errs = append(errs, l.writeOffsetCheckpoint(checkpoint.RecoveryPointFile, l.recoveryPoint))
	errs = append(errs, l.writeOffsetCheckpoint(checkpoint.LogStartOffsetFile, l.logStartOffset))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := vfs.SyncDir(l.fsys, l.dir); err != nil {
		return err
	}
	if l.load.CleanShutdown || l.onlyPartition() {
		return checkpoint.WriteCleanShutdown(l.fsys, l.parentDir(), l.opt.BrokerEpoch)
	}
	return nil
}

// onlyPartition reports whether the log directory holds no other
// partition directory.
func (l *Log) onlyPartition() bool {
	infos, err := vfs.ReadDir(l.fsys, l.parentDir())
	if err != nil {
		return false
	}
	for _, fi := range infos {
		if fi.IsDir() && fi.Name() != path.Base(l.dir) {
			return false
		}
	}
	return true
}
