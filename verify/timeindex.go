package verify

import (
	"fmt"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/timeindex"
)

// TimeIndex cross-checks the time index x against the entries of its .log
// (from SummarizeLog) and returns what it finds, in index order. Only
// the entries before any zero padding are checked; the padding itself is
// reported by Padding.
//
// An entry (t, o) is correct when a batch holds o, t is that batch's max
// timestamp, and no earlier batch has a larger one: t is then the largest
// timestamp up to o, which is what a lookup by time relies on. The offset
// may be the batch's last offset (recovery, followers, leaders from Kafka
// 3.8) or the offset of the batch's first record with that timestamp
// (leaders before 3.8, for uncompressed batches); any other offset inside
// the batch is still correct (info, finding.KindTimeOffsetInBatch).
//
// Errors: finding.KindTimeOutOfOrder (timestamps must strictly increase and
// offsets not decrease, as Kafka's maybeAppend ensures),
// finding.KindTimeOffsetMissing, finding.KindTimeMismatch,
// finding.KindTimeBehindMax.
func TimeIndex(x *timeindex.TimeIndex, entries []LogEntrySummary) []finding.Problem {
	var out []finding.Problem
	file := x.Path()
	add := func(i int, kind string, level finding.Level, msg string, args ...any) {
		out = append(out, finding.Problem{File: file, Position: int64(i) * timeindex.EntrySize, Kind: kind, Level: level, Detail: fmt.Sprintf(msg, args...)})
	}
	loc := NewLocator(entries)
	n := x.Padding().ValidEntries
	var prev timeindex.Entry
	for i := 0; i < n; i++ {
		e := x.Entry(i)
		if i > 0 && (e.Timestamp <= prev.Timestamp || e.Offset < prev.Offset) {
			add(i, finding.KindTimeOutOfOrder, finding.Error, "entry (timestamp %s, offset %d) follows (timestamp %s, offset %d)", finding.Timestamp(e.Timestamp), e.Offset, finding.Timestamp(prev.Timestamp), prev.Offset)
		}
		prev = e
		b, ok := loc.Holding(e.Offset)
		if !ok {
			add(i, finding.KindTimeOffsetMissing, finding.Error, "timestamp %s: no batch of the log holds offset %d", finding.Timestamp(e.Timestamp), e.Offset)
			continue
		}
		be := loc.Entry(b)
		if e.Timestamp != be.MaxTimestamp {
			add(i, finding.KindTimeMismatch, finding.Error, "offset %d: timestamp %s, but the batch holding it (%d..%d at position %d) has max timestamp %s", e.Offset, finding.Timestamp(e.Timestamp), be.BaseOffset, be.LastOffset, be.Position, finding.Timestamp(be.MaxTimestamp))
			continue
		}
		if m := loc.MaxTimestampThrough(b); m > e.Timestamp {
			add(i, finding.KindTimeBehindMax, finding.Error, "offset %d: timestamp %s, but an earlier batch has timestamp %s", e.Offset, finding.Timestamp(e.Timestamp), finding.Timestamp(m))
			continue
		}
		if e.Offset != be.LastOffset && e.Offset != be.OffsetOfMaxTimestamp {
			add(i, finding.KindTimeOffsetInBatch, finding.Info, "timestamp %s: offset %d is inside its batch (%d..%d), neither its last offset nor its max-timestamp record's (%d)", finding.Timestamp(e.Timestamp), e.Offset, be.BaseOffset, be.LastOffset, be.OffsetOfMaxTimestamp)
		}
	}
	return out
}
