package lake

import (
	"time"
)

// Trigger says what closed an offset range.
type Trigger string

// The triggers that close a range. A range ends at the first of the
// first four (the rules of the specification); the last two are the
// indexer's own boundaries.
const (
	// TriggerBytes: the range's key, value and header bytes reached
	// Options.FileBytes (the record that reached it is the range's last).
	TriggerBytes Trigger = "file_bytes"
	// TriggerWindow: the next record's timestamp would make the range's
	// timestamps span Options.FileWindow or more.
	TriggerWindow Trigger = "file_window"
	// TriggerAge: the range's first record was read Options.FileWindow
	// ago (by the indexer's clock).
	TriggerAge Trigger = "age"
	// TriggerBucket: the next record falls in a later time bucket of
	// Options.Granularity.
	TriggerBucket Trigger = "bucket"
	// TriggerChunk: a backfill chunk ends (chunks are indexed as units,
	// backwards, so a range never crosses a chunk boundary).
	TriggerChunk Trigger = "chunk"
	// TriggerCaughtUp: a run-once indexer reached the last stable offset
	// it set out to reach.
	TriggerCaughtUp Trigger = "caught_up"
	// TriggerRetention: the offsets after the range were deleted by
	// Kafka's retention before the indexer read them.
	TriggerRetention Trigger = "retention"
)

// Range is a closed offset range: [Start, End] inclusive, tiling the
// offset space with the ranges before and after it. Records are its
// committed records; every other offset of the range has none.
type Range struct {
	Start, End int64
	Records    []Record
	Trigger    Trigger
}

// tiler groups records into ranges by the rules. It is a pure state
// machine: the clock comes in through Tick's argument.
type tiler struct {
	o Options

	open     bool
	start    int64 // the range's first offset
	next     int64 // the offset after everything read into the range
	recs     []Record
	bytes    int64
	minTs    int64
	maxTs    int64
	bucket   int64 // the latest bucket among the range's records
	openedAt time.Time
}

// pending reports whether the open range holds records.
func (t *tiler) pending() bool { return len(t.recs) > 0 }

func newTiler(o Options, start int64) *tiler {
	return &tiler{o: o, start: start, next: start}
}

// bucketOf is the start (epoch ms) of the time bucket of ts.
func bucketOf(ts int64, g time.Duration) int64 {
	gm := g.Milliseconds()
	b := ts / gm
	if ts%gm < 0 {
		b-- // floor, for timestamps before 1970 (and -1: none)
	}
	return b * gm
}

// add takes the next committed record (offsets increase) read at now
// and returns the range it closed, if any. A range closes before the
// record that would break a rule, so the offsets with no committed record
// just before that record (aborted records, markers, compaction gaps)
// end the closed range: they belong to the file before them. That is
// also why a range that reached FileBytes closes only at the next record
// (or at a tick or a boundary), not at once.
func (t *tiler) add(r Record, now time.Time) (Range, bool) {
	var closed Range
	var did bool
	if len(t.recs) > 0 {
		b := bucketOf(r.Timestamp, t.o.Granularity)
		switch {
		case t.bytes >= t.o.FileBytes:
			closed, did = t.close(r.Offset, TriggerBytes), true
		case b > t.bucket:
			closed, did = t.close(r.Offset, TriggerBucket), true
		case max(t.maxTs, r.Timestamp)-min(t.minTs, r.Timestamp) >= t.o.FileWindow.Milliseconds():
			closed, did = t.close(r.Offset, TriggerWindow), true
		}
	}
	if len(t.recs) == 0 {
		t.openedAt = now
		t.minTs, t.maxTs = r.Timestamp, r.Timestamp
		t.bucket = bucketOf(r.Timestamp, t.o.Granularity)
	}
	t.recs = append(t.recs, r)
	t.bytes += r.size()
	t.minTs, t.maxTs = min(t.minTs, r.Timestamp), max(t.maxTs, r.Timestamp)
	t.bucket = max(t.bucket, bucketOf(r.Timestamp, t.o.Granularity))
	t.next = max(t.next, r.Offset+1)
	return closed, did
}

// advance records that the read went through next (offsets below it with
// no committed record belong to the open range, or start the next one).
func (t *tiler) advance(next int64) { t.next = max(t.next, next) }

// tick closes the open range if its first record was read FileWindow
// ago: the range ends at everything read so far.
func (t *tiler) tick(now time.Time) (Range, bool) {
	if len(t.recs) == 0 || now.Sub(t.openedAt) < t.o.FileWindow {
		return Range{}, false
	}
	return t.close(t.next, TriggerAge), true
}

// closeAt closes the range at end (exclusive; end ≥ everything read), for
// a chunk end or a run-once end. A range with no records is returned too:
// offsets with no committed record still have to be tiled, and they join
// the range before them only while one is open.
func (t *tiler) closeAt(end int64, why Trigger) (Range, bool) {
	if end <= t.start {
		return Range{}, false
	}
	return t.close(end, why), true
}

// close ends the open range before offset end.
func (t *tiler) close(end int64, why Trigger) Range {
	r := Range{Start: t.start, End: end - 1, Records: t.recs, Trigger: why}
	t.recs = nil
	t.bytes = 0
	t.start = end
	t.next = max(t.next, end)
	return r
}
