package inspect

import (
	"fmt"
	"math"
)

// Bounds on the size of an index file, beyond which it is a finding and not
// data: segkit neither reads it nor copies it (Recover rebuilds it, as
// Kafka would). A sparse 1 TiB .timeindex costs nothing on disk and must
// not cost a dense copy or a full read.
const (
	// minLogEntryBytes is the smallest entry a .log can hold: a magic 0
	// message with no key and no value (12 bytes of offset and size, 14 of
	// message header). A v2 batch is at least 61 bytes.
	minLogEntryBytes = 26
	// defaultSegmentIndexBytes is segment.index.bytes' default (10 MiB):
	// what a broker preallocates for the active segment's indexes, and may
	// leave behind in a segment that was rolled just before a crash.
	defaultSegmentIndexBytes = 10 << 20
)

// indexSizeLimit returns the largest size an index file with entries of
// entrySize bytes can have beside a .log of logSize bytes, and why.
// segment.index.bytes is an int, so no index Kafka writes passes
// math.MaxInt32 bytes. An index has at most one entry per log entry, so
// the index of a segment that is not the active one holds no more than
// logSize/minLogEntryBytes+1 entries, or a broker's preallocation of
// segment.index.bytes (default) if the roll that should have trimmed it was
// cut by a crash; the active segment's may be preallocated up to the int
// limit.
func indexSizeLimit(logSize int64, entrySize int, active bool) (int64, string) {
	const intLimit = math.MaxInt32
	if active {
		return intLimit, "segment.index.bytes is an int: Kafka writes no index over 2 GiB"
	}
	need := (logSize/minLogEntryBytes + 1) * int64(entrySize)
	limit := max(need, defaultSegmentIndexBytes)
	if limit > intLimit {
		return intLimit, "segment.index.bytes is an int: Kafka writes no index over 2 GiB"
	}
	return limit, fmt.Sprintf("a .log of %d bytes has at most %d entries, and a broker preallocates %d bytes", logSize, logSize/minLogEntryBytes+1, defaultSegmentIndexBytes)
}

// indexTooLarge returns a description of why an index of size bytes is
// larger than Kafka could have written beside a .log of logSize bytes, or
// "" when it is not.
func indexTooLarge(size, logSize int64, entrySize int, active bool) string {
	limit, why := indexSizeLimit(logSize, entrySize, active)
	if size <= limit {
		return ""
	}
	return fmt.Sprintf("%d bytes, over the %d bytes Kafka could have written (%s)", size, limit, why)
}
