package kafkalog

import (
	"fmt"
	"math"
	"path"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// AppendResult describes an append.
type AppendResult struct {
	FirstOffset   int64 // offset of the first record appended
	LastOffset    int64 // offset of the last record appended
	LogAppendTime int64 // the broker time set on LogAppendTime batches, or -1
	Batches       int
	Bytes         int
	Rolled        bool // a new segment was started for this append
}

// Append appends batches as a partition leader does: records holds whole
// v2 batches (as record.Builder makes them), whose offsets are assigned
// here in place — each batch's baseOffset becomes the next offset of the
// log — and whose partitionLeaderEpoch is set to leaderEpoch (-1 keeps
// it). Under message.timestamp.type=LogAppendTime the batches get the
// broker's time as maxTimestamp. Every batch is validated (checksum,
// records, max.message.bytes, timestamp bounds of
// message.timestamp.before/after.max.ms); nothing is written if any
// batch is refused. The log rolls first when the active segment should.
//
// records is modified in place (offsets, epoch, LogAppendTime and CRC).
func (l *Log) Append(records []byte, leaderEpoch int32) (AppendResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return AppendResult{}, err
	}
	now := l.nowMs()
	res := AppendResult{FirstOffset: l.nextOffset, LogAppendTime: record.NoTimestamp}
	logAppendTime := l.cfg.MessageTimestampType == "LogAppendTime"
	if logAppendTime {
		res.LogAppendTime = now
	}
	// Validate and assign offsets in place (LogValidator): v2 only. The
	// append's summary is gathered on the way, so that nothing scans the
	// batches again.
	next := l.nextOffset
	it := &l.it
	info := segment.AppendInfo{FirstOffset: next, MaxTimestamp: record.NoTimestamp, OffsetOfMaxTimestamp: -1}
	for rest := records; len(rest) > 0; {
		b, r, err := record.ReadBatch(rest)
		if err != nil {
			return AppendResult{}, fmt.Errorf("%w: batch %d: %v", ErrInvalidRecords, res.Batches, err)
		}
		checkTs := !logAppendTime && b.Attributes.TimestampType() == record.CreateTime && !b.Attributes.IsControl()
		if err := l.validateRecords(&b, it, now, checkTs); err != nil {
			return AppendResult{}, fmt.Errorf("%w: batch %d: %v", ErrInvalidRecords, res.Batches, err)
		}
		if b.Size() > int(l.cfg.MaxMessageBytes) {
			return AppendResult{}, fmt.Errorf("%w: batch %d is %d bytes, max.message.bytes is %d (RecordTooLargeException)", ErrInvalidRecords, res.Batches, b.Size(), l.cfg.MaxMessageBytes)
		}
		if int64(b.RecordCount) != int64(b.LastOffsetDelta)+1 && b.RecordCount > 0 {
			return AppendResult{}, fmt.Errorf("%w: batch %d: inconsistent batch offset range: %d records, lastOffsetDelta %d", ErrInvalidRecords, res.Batches, b.RecordCount, b.LastOffsetDelta)
		}
		if next > math.MaxInt64-int64(b.LastOffsetDelta)-1 {
			return AppendResult{}, fmt.Errorf("%w: offsets overflow", ErrInvalidRecords)
		}
		raw := b.Raw
		format.PutInt64(raw[record.BaseOffsetOffset:], next)
		if leaderEpoch >= 0 {
			format.PutInt32(raw[record.PartitionLeaderEpochOffset:], leaderEpoch)
		}
		if logAppendTime {
			attrs := format.Int16(raw[record.AttributesOffset:]) | int16(record.AttrTimestampType)
			format.PutInt16(raw[record.AttributesOffset:], attrs)
			format.PutInt64(raw[record.MaxTimestampOffset:], now)
			format.PutUint32(raw[record.CRCOffset:], format.CRC32C(raw[record.AttributesOffset:]))
		}
		maxTs := format.Int64(raw[record.MaxTimestampOffset:])
		last := next + int64(b.LastOffsetDelta)
		if res.Batches == 0 {
			info.FirstTimestamp = maxTs
		}
		if maxTs > info.MaxTimestamp {
			info.MaxTimestamp, info.OffsetOfMaxTimestamp = maxTs, last
		}
		next = last + 1
		res.Batches++
		rest = r
	}
	if res.Batches == 0 {
		return res, nil
	}
	res.LastOffset = next - 1
	res.Bytes = len(records)
	info.LastOffset, info.Batches, info.Bytes = next-1, res.Batches, len(records)
	rolled, err := l.appendLocked(records, info, now)
	res.Rolled = rolled
	return res, err
}

// validateRecords decodes every record of b (checking what the record
// package checks: sizes, varints, offsets, count) and, with checkTs,
// enforces message.timestamp.before.max.ms and message.timestamp.after.max.ms
// (KIP-937) on each record's timestamp — one pass over the records.
func (l *Log) validateRecords(b *record.Batch, it *record.Iterator, now int64, checkTs bool) error {
	before, after := l.cfg.MessageTimestampBeforeMaxMs, l.cfg.MessageTimestampAfterMaxMs
	checkTs = checkTs && (before != math.MaxInt64 || after != math.MaxInt64)
	r := &l.rec
	it.Reset(b)
	for it.Next(r) {
		if !checkTs || r.Timestamp < 0 {
			continue
		}
		if now-r.Timestamp > before {
			return fmt.Errorf("timestamp %d of record %d is %d ms before the broker's time, more than message.timestamp.before.max.ms (%d)", r.Timestamp, r.OffsetDelta, now-r.Timestamp, before)
		}
		if r.Timestamp-now > after {
			return fmt.Errorf("timestamp %d of record %d is %d ms after the broker's time, more than message.timestamp.after.max.ms (%d)", r.Timestamp, r.OffsetDelta, r.Timestamp-now, after)
		}
	}
	return it.Err()
}

// AppendAsFollower appends entries that already carry their offsets, as
// a follower replica appends what it fetched from the leader: v2 batches
// or legacy messages, validated (checksums and headers), with offsets
// that must start at or after the log end offset and increase. The whole
// run goes to the active segment in one append (one offset index entry at
// most, as Kafka writes it), after a roll if needed.
func (l *Log) AppendAsFollower(records []byte) (AppendResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return AppendResult{}, err
	}
	res := AppendResult{FirstOffset: -1, LogAppendTime: record.NoTimestamp}
	prev := l.nextOffset - 1
	info := segment.AppendInfo{MaxTimestamp: record.NoTimestamp, OffsetOfMaxTimestamp: -1}
	s := record.NewScanner(records, "", 0)
	for s.Next() {
		e := s.Entry()
		if e.BaseOffset() <= prev {
			return AppendResult{}, fmt.Errorf("%w: entry %d at offset %d does not follow %d (out of order offsets)", ErrInvalidRecords, res.Batches, e.BaseOffset(), prev)
		}
		if res.FirstOffset < 0 {
			res.FirstOffset = e.BaseOffset()
			info.FirstTimestamp = e.MaxTimestamp()
		}
		if ts := e.MaxTimestamp(); ts > info.MaxTimestamp {
			info.MaxTimestamp, info.OffsetOfMaxTimestamp = ts, e.LastOffset()
		}
		prev = e.LastOffset()
		res.Batches++
	}
	if err := s.Err(); err != nil {
		return AppendResult{}, fmt.Errorf("%w: %v", ErrInvalidRecords, err)
	}
	if k, at, n := s.Tail(); k != record.TailNone {
		return AppendResult{}, fmt.Errorf("%w: %d bytes of %v at %d", ErrInvalidRecords, n, k, at)
	}
	if res.Batches == 0 {
		return res, nil
	}
	res.LastOffset = prev
	res.Bytes = len(records)
	info.FirstOffset, info.LastOffset, info.Batches, info.Bytes = res.FirstOffset, prev, res.Batches, len(records)
	rolled, err := l.appendLocked(records, info, l.nowMs())
	res.Rolled = rolled
	return res, err
}

// appendLocked writes validated entries with their final offsets: roll if
// needed, append to the active segment, update the leader epochs,
// producer state and transaction index, the log end offset, and flush by
// policy. Caller holds l.mu.
func (l *Log) appendLocked(records []byte, info segment.AppendInfo, now int64) (bool, error) {
	rolled, err := l.maybeRoll(info, now)
	if err != nil {
		return false, err
	}
	active := l.segs[len(l.segs)-1]
	if err := active.Append(records, info); err != nil {
		return rolled, l.fail(err)
	}
	// Producer state, epochs and aborted transactions follow the data. The
	// entries were validated by the caller: a header walk is enough.
	var count int64
	for rest := records; len(rest) >= record.HeaderSizeUpToMagic; {
		size := record.LogOverhead + int(format.Int32(rest[record.LengthOffset:]))
		if int8(rest[record.MagicOffset]) != record.MagicV2 {
			count++
			rest = rest[size:]
			continue
		}
		h, _ := record.PeekBatchHeader(rest)
		b := record.Batch{BatchHeader: h, Raw: rest[:size:size]}
		count += int64(h.RecordCount)
		aborted, err := l.observeBatch(l.producers, &b, active.LogPath(), -1)
		if err != nil {
			return rolled, l.fail(err)
		}
		if err := l.appendAborted(active, aborted); err != nil {
			return rolled, l.fail(err)
		}
		rest = rest[size:]
	}
	l.nextOffset = info.LastOffset + 1
	if l.epochsDirty {
		// A new leader epoch is checkpointed at once, as Kafka's
		// LeaderEpochFileCache.assign does.
		if err := l.epochs.Flush(l.fsys, path.Join(l.dir, checkpoint.LeaderEpochFile)); err != nil {
			return rolled, l.fail(err)
		}
		l.epochsDirty = false
	}
	if !l.hwManual {
		l.setHighWatermarkLocked(l.nextOffset)
	}
	l.unflushed += count
	if l.unflushed >= l.cfg.FlushMessages || now-l.lastFlushMs >= l.cfg.FlushMs {
		if err := l.flushLocked(l.nextOffset); err != nil {
			return rolled, err
		}
	}
	return rolled, nil
}

func (l *Log) appendAborted(s *segment.Segment, aborted []index.AbortedTxn) error {
	if len(aborted) == 0 {
		return nil
	}
	tx, err := s.TransactionIndex()
	if err != nil {
		return err
	}
	for _, a := range aborted {
		if err := tx.Append(a); err != nil {
			return err
		}
	}
	return nil
}

// maybeRoll rolls when the active segment should not take the append
// (UnifiedLog.maybeRoll). Caller holds l.mu.
func (l *Log) maybeRoll(info segment.AppendInfo, now int64) (bool, error) {
	active := l.segs[len(l.segs)-1]
	reason, err := active.RollReason(segment.RollParams{
		MaxSegmentBytes:        int64(l.cfg.SegmentSize()),
		MaxSegmentMs:           l.cfg.MaxSegmentMs(),
		MaxTimestampInMessages: info.MaxTimestamp,
		MaxOffsetInMessages:    info.LastOffset,
		MessagesSize:           int64(info.Bytes),
		Now:                    now,
	})
	if err != nil || reason == "" {
		return false, err
	}
	// For legacy data the first offset of the append may be unknown; Kafka
	// then uses lastOffset - Int.MAX. Our Describe always knows it.
	return true, l.rollLocked(info.FirstOffset, reason)
}

// Roll starts a new active segment at the log end offset, even if the
// active one is not full. An empty active segment is kept as it is.
func (l *Log) Roll() error { return l.RollFor(RollRequested) }

// RollFor is Roll, with reason as the roll instant's Reason on the
// timeline (Options.Timeline): for a caller that rolls for a rule of its
// own, as retention rolls before it deletes every segment.
func (l *Log) RollFor(reason string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return err
	}
	if l.segs[len(l.segs)-1].Size() == 0 {
		return nil
	}
	return l.rollLocked(l.nextOffset, reason)
}

// RollRequested is the Reason of a roll instant for an explicit Roll.
const RollRequested = "requested"

// rollLocked makes a new active segment at max(expectedNextOffset, LEO)
// (LocalLog.roll). In order: the old segment's final time index entry and
// trims, its flush (which moves the recovery point), a producer snapshot at
// the new base, then the new segment, made durable in the directory.
func (l *Log) rollLocked(expectedNextOffset int64, reason string) error {
	newBase := max(expectedNextOffset, l.nextOffset)
	active := l.segs[len(l.segs)-1]
	if newBase < active.BaseOffset() {
		return fmt.Errorf("log: trying to roll a new segment at %d below the active segment's base %d", newBase, active.BaseOffset())
	}
	var closed *timeline.SegmentRef
	if newBase == active.BaseOffset() {
		if active.Size() != 0 {
			return fmt.Errorf("log: trying to roll a new segment at %d, which already exists with %d bytes", newBase, active.Size())
		}
		// KAFKA-6388: the empty active segment is recreated.
		l.segs = l.segs[:len(l.segs)-1]
		if err := active.DeleteIfExists(); err != nil {
			return l.fail(err)
		}
	} else {
		if err := active.OnBecomeInactive(); err != nil {
			return l.fail(err)
		}
		// The old segment is flushed before the new one exists — whatever
		// the recovery point says, since OnBecomeInactive has just changed
		// its files: a new segment on disk then always follows complete
		// data, so a crash can never leave a hole between segments that
		// recovery would not see. (Kafka flushes it asynchronously just
		// after.)
		if err := active.Flush(); err != nil {
			return l.fail(err)
		}
		if err := l.flushLocked(newBase); err != nil {
			return err
		}
		if l.tl != nil {
			r := ref(active, newBase)
			closed = &r
		}
	}
	if err := producer.WriteSnapshot(l.fsys, l.dir, newBase, l.producers.Snapshot()); err != nil {
		return l.fail(err)
	}
	s, err := segment.Create(l.fsys, l.dir, newBase, l.segConfig(), l.clock)
	if err != nil {
		return l.fail(err)
	}
	l.segs = append(l.segs, s)
	if err := vfs.SyncDir(l.fsys, l.dir); err != nil {
		return l.fail(err)
	}
	return l.noteRoll(reason, closed, newBase)
}

// Flush makes everything appended so far durable and moves the recovery
// point to the log end offset.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return err
	}
	if err := l.flushLocked(l.nextOffset); err != nil {
		return err
	}
	return l.syncTimeline()
}

// MaybeFlush flushes if flush.ms has passed since the last flush; call it
// periodically, as Kafka's log flusher does (the library starts no
// goroutines of its own).
func (l *Log) MaybeFlush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return err
	}
	if l.nowMs()-l.lastFlushMs >= l.cfg.FlushMs && l.recoveryPoint < l.nextOffset {
		if err := l.flushLocked(l.nextOffset); err != nil {
			return err
		}
		return l.syncTimeline()
	}
	return nil
}

// flushLocked syncs the segments holding offsets in [recoveryPoint,
// offset) and advances the recovery point. A failed sync is fatal for the
// log: the recovery point stays, and the log refuses writes (E2).
func (l *Log) flushLocked(offset int64) error {
	if offset <= l.recoveryPoint {
		l.lastFlushMs = l.nowMs()
		return nil
	}
	newSegment := false
	for i, s := range l.segs {
		end := int64(math.MaxInt64)
		if i+1 < len(l.segs) {
			end = l.segs[i+1].BaseOffset()
		}
		if end <= l.recoveryPoint || s.BaseOffset() >= offset {
			continue
		}
		if err := s.Flush(); err != nil {
			return l.fail(err)
		}
		newSegment = newSegment || s.BaseOffset() >= l.recoveryPoint
	}
	// A segment created since the last flush is durable only once its
	// directory entry is (LocalLog.flush flushes the directory then).
	if newSegment {
		if err := vfs.SyncDir(l.fsys, l.dir); err != nil {
			return l.fail(err)
		}
	}
	l.recoveryPoint = offset
	l.unflushed = 0
	l.lastFlushMs = l.nowMs()
	return nil
}
