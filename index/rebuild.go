package index

import (
	"fmt"
	"math"
)

// IndexPoints calls f with the slot in entries of each batch that Kafka's
// recovery (LogSegment.recover) indexes: a batch gets an entry when more
// than intervalBytes bytes of the log lie between the start of the batch
// last indexed (the log's start, at first) and its own start. The offset
// index and the time index are both written at these points.
//
// A broker's append path uses the same rule per append rather than per
// batch, and restarts the count when it reopens a segment, so files it
// wrote differ from a rebuild where a follower appended several batches at
// once or the broker restarted (see the package documentation).
func IndexPoints(entries []LogEntrySummary, intervalBytes int, f func(i int) error) error {
	lastIndexed := int64(0)
	for i := range entries {
		pos := entries[i].Position
		if pos-lastIndexed > int64(intervalBytes) {
			if err := f(i); err != nil {
				return err
			}
			lastIndexed = pos
		}
	}
	return nil
}

// RebuildOffsetIndex appends to dst the bytes of the .index that Kafka's
// recovery builds from a segment's log: at each of IndexPoints, the entry
// (batch last offset, batch position). The result is a trimmed file. It
// fails with ErrOffsetOverflow for an offset the index cannot hold relative
// to baseOffset or a position above MaxInt32, and with ErrOffsetOrder when
// the indexed offsets do not increase (recovery fails the same way, with
// InvalidOffsetException).
func RebuildOffsetIndex(dst []byte, baseOffset int64, entries []LogEntrySummary, intervalBytes int) ([]byte, error) {
	last := int64(math.MinInt64)
	err := IndexPoints(entries, intervalBytes, func(i int) error {
		e := &entries[i]
		if e.Position > math.MaxInt32 {
			return fmt.Errorf("%w: position %d", ErrOffsetOverflow, e.Position)
		}
		if e.LastOffset <= last {
			return fmt.Errorf("%w: offset %d after %d", ErrOffsetOrder, e.LastOffset, last)
		}
		last = e.LastOffset
		var err error
		dst, err = AppendEntry(dst, baseOffset, Entry{Offset: e.LastOffset, Position: int32(e.Position)})
		return err
	})
	return dst, err
}
