package index

import (
	"fmt"
	"math"

	"github.com/segkit/segkit/internal/indexfile"
)

// RebuildOffsetIndex appends to dst the bytes of the .index that Kafka's
// recovery (LogSegment.recover) builds from a segment's log: the entry
// (batch last offset, batch position) of each batch that has more than
// intervalBytes bytes of log between the start of the batch last indexed
// (the log's start, at first) and its own start. The time index
// (timeindex.Rebuild) is written at the same batches. The result is a
// trimmed file. It fails with ErrOffsetOverflow for an offset the index
// cannot hold relative to baseOffset or a position above MaxInt32, and with
// ErrOffsetOrder when the indexed offsets do not increase (recovery fails
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
