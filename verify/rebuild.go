package verify

import (
	"fmt"
	"math"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/indexfile"
	"github.com/segkit/segkit/timeindex"
)

// RebuildOffsetIndex appends to dst the bytes of the .index that Kafka's
// recovery (LogSegment.recover) builds from a segment's log: the entry
// (batch last offset, batch position) of each batch that has more than
// intervalBytes bytes of log between the start of the batch last indexed
// (the log's start, at first) and its own start. The time index
// (RebuildTimeIndex) is written at the same batches. The result is a
// trimmed file. It fails with index.ErrOffsetOverflow for an offset the index
// cannot hold relative to baseOffset or a position above MaxInt32, and with
// index.ErrOffsetOrder when the indexed offsets do not increase (recovery fails
// the same way, with InvalidOffsetException).
//
// A broker's append path uses the same rule per append rather than per
// batch, and restarts the count when it reopens a segment, so files it
// wrote differ from a rebuild where a follower appended several batches at
// once or the broker restarted (see the package documentation).
func RebuildOffsetIndex(dst []byte, baseOffset int64, entries []LogEntrySummary, intervalBytes int) ([]byte, error) {
	last := int64(math.MinInt64)
	position := func(i int) int64 { return entries[i].Position }
	err := indexfile.IndexPoints(len(entries), intervalBytes, position, func(i int) error {
		e := &entries[i]
		if e.Position > math.MaxInt32 {
			return fmt.Errorf("%w: position %d", index.ErrOffsetOverflow, e.Position)
		}
		if e.LastOffset <= last {
			return fmt.Errorf("%w: offset %d after %d", index.ErrOffsetOrder, e.LastOffset, last)
		}
		last = e.LastOffset
		var err error
		dst, err = index.AppendEntry(dst, baseOffset, index.Entry{Offset: e.LastOffset, Position: int32(e.Position)})
		return err
	})
	return dst, err
}

// OffsetRule says which offset a time-index entry stores for the batch
// holding the max timestamp so far.
type OffsetRule int8

const (
	// ShallowOffsets stores the batch's last offset: Kafka's recovery
	// (LogSegment.recover), followers, and leaders from Kafka 3.8 on.
	ShallowOffsets OffsetRule = iota
	// RecordOffsets stores, for an uncompressed CreateTime batch, the
	// offset of its first record with the max timestamp, and otherwise the
	// last offset: what leaders before Kafka 3.8 wrote
	// (LogValidator.assignOffsetsNonCompressed; KAFKA-16310 changed it).
	RecordOffsets
)

// RebuildTimeIndex appends to dst the bytes of the .timeindex that Kafka's recovery
// builds from a segment's log (LogSegment.recover), with the given offset
// rule: at each batch RebuildOffsetIndex indexes, maybeAppend of the
// max timestamp so far and its offset, then once more at the end (the entry a segment writes
// when it is closed or rolled). The result is a trimmed file. It fails with
// timeindex.ErrOffsetOverflow for an offset the index cannot hold relative to
// baseOffset.
func RebuildTimeIndex(dst []byte, baseOffset int64, entries []LogEntrySummary, intervalBytes int, rule OffsetRule) ([]byte, error) {
	maxTs, maxOff := format.NoTimestamp, int64(-1) // TimestampOffset.UNKNOWN
	lastTs := format.NoTimestamp
	through := 0 // entries[:through] are folded into maxTs
	fold := func(n int) {
		for ; through < n; through++ {
			e := &entries[through]
			if e.MaxTimestamp > maxTs {
				maxTs, maxOff = e.MaxTimestamp, e.LastOffset
				if rule == RecordOffsets && !e.Compressed && !e.LogAppendTime {
					maxOff = e.OffsetOfMaxTimestamp
				}
			}
		}
	}
	maybeAppend := func() error {
		if maxTs <= lastTs {
			return nil
		}
		var err error
		if dst, err = timeindex.AppendEntry(dst, baseOffset, timeindex.Entry{Timestamp: maxTs, Offset: maxOff}); err != nil {
			return fmt.Errorf("timeindex: %w", err)
		}
		lastTs = maxTs
		return nil
	}
	position := func(i int) int64 { return entries[i].Position }
	err := indexfile.IndexPoints(len(entries), intervalBytes, position, func(i int) error {
		fold(i + 1) // recovery folds the batch in before the index check
		return maybeAppend()
	})
	if err != nil {
		return dst, err
	}
	fold(len(entries))
	return dst, maybeAppend()
}
