package indexfile

import "math"

// Relative returns offset - baseOffset as an int32, and whether it fits in
// [0, MaxInt32] (AbstractIndex.toRelative). Both kinds of index store
// offsets this way.
func Relative(offset, baseOffset int64) (int32, bool) {
	rel := offset - baseOffset
	if rel < 0 || rel > math.MaxInt32 || offset < baseOffset {
		return 0, false
	}
	return int32(rel), true
}

// IndexPoints calls f with each slot in [0, n) of a segment's log entries
// that Kafka's recovery (LogSegment.recover) indexes, position(i) being
// the byte position of entry i in the .log: an entry gets an index entry
// when more than intervalBytes bytes of the log lie between the start of
// the entry last indexed (the log's start, at first) and its own start.
// The offset index and the time index are both written at these points. It
// stops at, and returns, the first error of f.
func IndexPoints(n, intervalBytes int, position func(i int) int64, f func(i int) error) error {
	lastIndexed := int64(0)
	for i := range n {
		pos := position(i)
		if pos-lastIndexed > int64(intervalBytes) {
			if err := f(i); err != nil {
				return err
			}
			lastIndexed = pos
		}
	}
	return nil
}

// DefaultMaxIndexSize is Kafka's default segment.index.bytes, 10 MiB: the
// size an index is opened with when its options give none.
const DefaultMaxIndexSize = 10 << 20
