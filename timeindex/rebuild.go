package timeindex

import (
	"fmt"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/indexfile"
)

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

// Rebuild appends to dst the bytes of the .timeindex that Kafka's recovery
// builds from a segment's log (LogSegment.recover), with the given offset
// rule: at each batch index.RebuildOffsetIndex indexes, maybeAppend of the
// max timestamp so far and its offset, then once more at the end (the entry a segment writes
// when it is closed or rolled). The result is a trimmed file. It fails with
// ErrOffsetOverflow for an offset the index cannot hold relative to
// baseOffset.
func Rebuild(dst []byte, baseOffset int64, entries []index.LogEntrySummary, intervalBytes int, rule OffsetRule) ([]byte, error) {
	maxTs, maxOff := NoTimestamp, int64(-1) // TimestampOffset.UNKNOWN
	lastTs := NoTimestamp
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
		if dst, err = AppendEntry(dst, baseOffset, Entry{Timestamp: maxTs, Offset: maxOff}); err != nil {
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
