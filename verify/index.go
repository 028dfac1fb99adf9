package verify

import (
	"fmt"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/index"
)

// Padding returns the zero-padding warning for p, or nil. active
// says whether the index belongs to the partition's active (last) segment,
// where an untrimmed, preallocated index is what a running broker leaves.
func Padding(file string, entrySize int, p index.Padding, active bool) *finding.Problem {
	if !p.Untrimmed {
		return nil
	}
	var detail string
	if active {
		detail = fmt.Sprintf("%d zero bytes (%d zero entries after %d valid ones): the preallocated index of the active segment, untrimmed as a running broker leaves it; normal", p.ZeroBytes, p.Entries-p.ValidEntries, p.ValidEntries)
	} else {
		detail = fmt.Sprintf("%d zero bytes (%d zero entries after %d valid ones): an untrimmed index of a segment that is not the last; the broker stopped before trimming it (a crash), and Kafka trusts the zero entries unless it recovers the segment", p.ZeroBytes, p.Entries-p.ValidEntries, p.ValidEntries)
	}
	return &finding.Problem{File: file, Position: int64(p.ValidEntries) * int64(entrySize), Kind: finding.KindZeroPadding, Level: finding.Warning, Detail: detail}
}

// OffsetIndex cross-checks the offset index x against the entries of
// its .log (from SummarizeLog) and returns what it finds, in index order.
// Only the entries before any zero padding are checked; the padding itself
// is reported by Padding, not here.
//
// An entry (o, p) is correct when p is where a batch starts and every batch
// before p ends below o: a lookup of any offset from o up then starts at or
// before the batch holding it, and never after. That holds for the entries
// Kafka writes on every path, and is all a lookup needs:
//
//   - o is the last offset of the batch at p: a leader's append, or
//     recovery (no finding);
//   - o is above it: a follower appended several batches at once and
//     indexed the largest offset of the append at its first batch
//     (info, finding.KindIndexMultiBatchAppend; kafka-dump-log calls it a mismatch);
//   - o is below it: the log cleaner indexed the last offset it kept
//     (info, finding.KindIndexOffsetInBatch).
//
// Errors: finding.KindIndexOffsetOrder, finding.KindIndexPositionPastEnd,
// finding.KindIndexNotBatchBoundary, finding.KindIndexOffsetBeforeBatch,
// finding.KindIndexOffsetPastLogEnd.
func OffsetIndex(x *index.OffsetIndex, entries []LogEntrySummary) []finding.Problem {
	return offsetEntries(x, x.Padding().ValidEntries, NewLocator(entries))
}

func offsetEntries(x *index.OffsetIndex, n int, loc *Locator) []finding.Problem {
	file := x.Path()
	var out []finding.Problem
	add := func(i int, kind string, level finding.Level, msg string, args ...any) {
		out = append(out, finding.Problem{File: file, Position: int64(i) * index.EntrySize, Kind: kind, Level: level, Detail: fmt.Sprintf(msg, args...)})
	}
	prev := index.Entry{Offset: -1, Position: -1}
	for i := 0; i < n; i++ {
		e := x.Entry(i)
		if i > 0 && (e.Offset <= prev.Offset || e.Position < prev.Position) {
			add(i, finding.KindIndexOffsetOrder, finding.Error, "entry (offset %d, position %d) follows (offset %d, position %d)", e.Offset, e.Position, prev.Offset, prev.Position)
		}
		prev = e
		pos := int64(e.Position)
		if pos < 0 || pos >= loc.End() {
			add(i, finding.KindIndexPositionPastEnd, finding.Error, "offset %d: position %d is not below the end of the log's valid batches (%d)", e.Offset, pos, loc.End())
			continue
		}
		b := loc.AtPosition(pos)
		if b < 0 {
			add(i, finding.KindIndexNotBatchBoundary, finding.Error, "offset %d: no batch starts at position %d", e.Offset, pos)
			continue
		}
		if b > 0 {
			if before := loc.MaxLastOffsetThrough(b - 1); before >= e.Offset {
				add(i, finding.KindIndexOffsetBeforeBatch, finding.Error, "offset %d at position %d: a batch before that position ends at offset %d, so a lookup would skip it", e.Offset, pos, before)
				continue
			}
		}
		if e.Offset > loc.LastOffset() {
			add(i, finding.KindIndexOffsetPastLogEnd, finding.Error, "offset %d at position %d is above the log's last offset %d", e.Offset, pos, loc.LastOffset())
			continue
		}
		be := loc.Entry(b)
		switch {
		case e.Offset > be.LastOffset:
			end, _ := loc.Holding(e.Offset)
			add(i, finding.KindIndexMultiBatchAppend, finding.Info, "offset %d at position %d: the batch there holds %d..%d; the offset is the last of an append of %d batches starting there (a follower's fetch), so a lookup is still exact", e.Offset, pos, be.BaseOffset, be.LastOffset, end-b+1)
		case e.Offset < be.LastOffset:
			add(i, finding.KindIndexOffsetInBatch, finding.Info, "offset %d at position %d: inside the batch there (%d..%d), not its last offset", e.Offset, pos, be.BaseOffset, be.LastOffset)
		}
	}
	return out
}

// TxnIndex checks the transaction index x on its own (Kafka's sanity
// check, order, a partial entry) and, given the entries of its .log (nil to
// skip), that each aborted transaction ends at an ABORT marker of its
// producer.
func TxnIndex(x *index.TransactionIndex, entries []LogEntrySummary) []finding.Problem {
	var out []finding.Problem
	file := x.Path()
	add := func(i int, kind string, msg string, args ...any) {
		out = append(out, finding.Problem{File: file, Position: int64(i) * index.AbortedTxnSize, Kind: kind, Level: finding.Error, Detail: fmt.Sprintf(msg, args...)})
	}
	var loc *Locator
	if entries != nil {
		loc = NewLocator(entries)
	}
	txns := x.All()
	for i, t := range txns {
		if t.LastOffset < x.BaseOffset() {
			add(i, finding.KindTxnBeforeBase, "%v: last offset below the base offset %d", t, x.BaseOffset())
		}
		if t.FirstOffset > t.LastOffset || i > 0 && t.LastOffset <= txns[i-1].LastOffset {
			add(i, finding.KindTxnOrder, "%v: first offset above last offset, or last offset not above the previous entry's", t)
		}
		if loc != nil {
			b, ok := loc.Holding(t.LastOffset)
			if !ok || !loc.Entry(b).Abort || loc.Entry(b).ProducerID != t.ProducerID || loc.Entry(b).BaseOffset != t.LastOffset {
				add(i, finding.KindTxnNoAbort, "%v: no ABORT marker of producer %d at offset %d in the log", t, t.ProducerID, t.LastOffset)
			}
		}
	}
	if tail := x.TrailingBytes(); tail > 0 {
		add(len(txns), finding.KindTxnPartialEntry, "%d bytes after the last whole entry (a torn write)", tail)
	}
	return out
}
