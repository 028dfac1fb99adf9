package retention

import (
	"errors"
	"fmt"
	"math"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/record"
)

// Traffic is a steady stream of records into one partition.
type Traffic struct {
	// RecordsPerSecond is the rate (records, not batches).
	RecordsPerSecond float64
	// RecordBytes is the size of each record's value (no key, no
	// headers).
	RecordBytes int
	// BatchRecords is how many records each batch holds (the producer's
	// batching); 0 means 1.
	BatchRecords int
}

func (t Traffic) batchRecords() int { return max(t.BatchRecords, 1) }

// ErrInvalidTraffic is returned for a Traffic with a negative or
// non-finite rate or size.
var ErrInvalidTraffic = errors.New("retention: invalid traffic")

func (t Traffic) validate() error {
	if math.IsNaN(t.RecordsPerSecond) || math.IsInf(t.RecordsPerSecond, 0) || t.RecordsPerSecond < 0 {
		return fmt.Errorf("%w: rate %v records/s", ErrInvalidTraffic, t.RecordsPerSecond)
	}
	if t.RecordBytes < 0 || t.RecordBytes > 64<<20 {
		return fmt.Errorf("%w: record size %d bytes", ErrInvalidTraffic, t.RecordBytes)
	}
	if t.BatchRecords < 0 || t.BatchRecords > 1<<16 {
		return fmt.Errorf("%w: %d records a batch", ErrInvalidTraffic, t.BatchRecords)
	}
	return nil
}

// Batch builds one batch of the traffic's records stamped ts, uncompressed,
// as the simulation appends it.
func (t Traffic) Batch(w *record.Builder, dst []byte, ts int64) ([]byte, error) {
	n := t.batchRecords()
	value := make([]byte, t.RecordBytes)
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Timestamp: ts, Value: value}
	}
	spec := record.NewBatchSpec(0, compress.None)
	return w.AppendBatch(dst, &spec, recs)
}

// BatchBytes is the size one batch takes in a .log.
func (t Traffic) BatchBytes() (int, error) {
	if err := t.validate(); err != nil {
		return 0, err
	}
	var w record.Builder
	b, err := t.Batch(&w, nil, 0)
	return len(b), err
}

// batchIntervalMs is the time between batches, in ms.
func (t Traffic) batchIntervalMs() float64 {
	if t.RecordsPerSecond <= 0 {
		return math.Inf(1)
	}
	return float64(t.batchRecords()) * 1000 / t.RecordsPerSecond
}

// Worst is the worst case of a topic config under a steady traffic: how
// long a record can stay readable and on disk, and how many bytes one
// partition can hold. Durations are ms; Never and -1 mean unbounded.
type Worst struct {
	Policy  Policy
	Traffic Traffic
	// BatchBytes is one batch's size in the .log; BytesPerSecond the rate
	// in .log bytes.
	BatchBytes     int64
	BytesPerSecond float64
	// RollMs is the longest time between a segment's first and newest
	// batch: segment.ms, or the time to fill segment.bytes if shorter.
	RollMs int64
	// SegmentMaxBytes is the largest a segment gets: the whole batches
	// that fit in segment.bytes (one, if a batch is larger).
	SegmentMaxBytes int64
	// ReadableMs bounds how long after it is written a record can still
	// be read: RollMs + retention.ms + the check interval under the time
	// rule; RollMs + the time to write retention.bytes more + the check
	// interval under the size rule; the smaller when both apply.
	ReadableMs int64
	// OnDiskMs adds file.delete.delay.ms: how long its bytes can stay on
	// disk.
	OnDiskMs int64
	// LogBytes bounds the bytes of the partition's segments (its .log
	// files, not counting .deleted ones): at most what is written in
	// ReadableMs; with the size rule also retention.bytes + one segment
	// + what is written in one check interval (right after a check the
	// log is below retention.bytes + its oldest segment). -1: unbounded.
	LogBytes int64
	// DiskBytes bounds the .log bytes on disk, .deleted files included:
	// the same with OnDiskMs, and with the check interval plus
	// file.delete.delay.ms. -1: unbounded. Index files come on top: the
	// active segment's .index and .timeindex are preallocated to
	// segment.index.bytes each (sparse on most filesystems).
	DiskBytes int64
	// Explanation gives each figure with its formula.
	Explanation []string
}

// WorstCase returns the worst case of policy p under traffic t. Records
// are taken to be stamped when appended, and the broker to be running (a
// stopped broker checks nothing). segment.jitter.ms only makes segments
// roll earlier, and is ignored.
func WorstCase(p Policy, t Traffic) (Worst, error) {
	if err := p.Validate(); err != nil {
		return Worst{}, err
	}
	bb, err := t.BatchBytes()
	if err != nil {
		return Worst{}, err
	}
	w := Worst{Policy: p, Traffic: t, BatchBytes: int64(bb), ReadableMs: Never, OnDiskMs: Never, LogBytes: -1, DiskBytes: -1}
	dt := t.batchIntervalMs()
	iv := p.RetentionCheckIntervalMs
	if !math.IsInf(dt, 1) {
		w.BytesPerSecond = float64(bb) * 1000 / dt
	}
	perSeg := max(p.SegmentBytes/int64(bb), 1)
	w.SegmentMaxBytes = perSeg * int64(bb)
	w.RollMs = p.SegmentMs
	fill := "no traffic: segments roll by time"
	if !math.IsInf(dt, 1) {
		fillMs := float64(perSeg-1) * dt
		fill = fmt.Sprintf("%d batches of %d bytes fill segment.bytes %d in %.0f ms", perSeg, bb, p.SegmentBytes, math.Ceil(fillMs))
		if fillMs < float64(p.SegmentMs) {
			w.RollMs = int64(math.Ceil(fillMs))
		}
	}
	w.Explanation = append(w.Explanation, fmt.Sprintf("roll: a segment's newest batch is at most %d ms after its first (segment.ms %d; %s)", w.RollMs, p.SegmentMs, fill))
	// batchesIn is the most batches written in any window of ms.
	batchesIn := func(ms int64) float64 {
		if math.IsInf(dt, 1) {
			return 1
		}
		return math.Floor(float64(ms)/dt) + 1
	}
	bytesIn := func(ms int64) int64 {
		if ms == Never {
			return -1
		}
		v := batchesIn(ms) * float64(bb)
		if v >= math.MaxInt64/2 {
			return -1
		}
		return int64(v)
	}
	if p.timeRule() {
		w.ReadableMs = satAdd(satAdd(w.RollMs, p.RetentionMs), iv)
		w.Explanation = append(w.Explanation, fmt.Sprintf("time: readable for at most roll %d + retention.ms %d + check interval %d = %d ms (%s)", w.RollMs, p.RetentionMs, iv, w.ReadableMs, finding.Duration(w.ReadableMs)))
		if p.RetentionMs == 0 {
			w.ReadableMs = iv
			w.Explanation = append(w.Explanation, fmt.Sprintf("time: retention.ms 0: each check deletes everything written before it, the active segment too (the log rolls first): readable for at most the check interval %d ms", iv))
		}
	}
	if p.sizeRule() && p.RetentionBytes == 0 {
		w.ReadableMs = min(w.ReadableMs, iv)
		w.Explanation = append(w.Explanation, fmt.Sprintf("size: retention.bytes 0: each check deletes every segment (the log rolls first): readable for at most the check interval %d ms", iv))
	} else if p.sizeRule() && !math.IsInf(dt, 1) {
		fillRb := math.Ceil(float64(p.RetentionBytes)/float64(bb)) * dt
		if fillRb < math.MaxInt64/4 {
			sz := satAdd(satAdd(w.RollMs, int64(math.Ceil(fillRb))), iv)
			w.Explanation = append(w.Explanation, fmt.Sprintf("size: readable for at most roll %d + %.0f ms to write retention.bytes %d after its segment + check interval %d = %d ms (%s)", w.RollMs, math.Ceil(fillRb), p.RetentionBytes, iv, sz, finding.Duration(sz)))
			w.ReadableMs = min(w.ReadableMs, sz)
		}
	}
	if w.ReadableMs != Never {
		w.OnDiskMs = satAdd(w.ReadableMs, p.FileDeleteDelayMs)
		w.LogBytes = bytesIn(w.ReadableMs)
		w.DiskBytes = bytesIn(w.OnDiskMs)
		w.Explanation = append(w.Explanation, fmt.Sprintf("lifetime: readable ≤ %s; on disk ≤ %s (+ file.delete.delay.ms %d); so at most %d bytes readable and %d on disk (what %s and %s of traffic write)",
			finding.Duration(w.ReadableMs), finding.Duration(w.OnDiskMs), p.FileDeleteDelayMs, w.LogBytes, w.DiskBytes, finding.Duration(w.ReadableMs), finding.Duration(w.OnDiskMs)))
	} else {
		w.Explanation = append(w.Explanation, "lifetime: unbounded (no rule deletes the records at this traffic)")
	}
	if p.sizeRule() {
		lb := satAdd(satAdd(p.RetentionBytes, w.SegmentMaxBytes), bytesIn(iv))
		db := satAdd(satAdd(p.RetentionBytes, w.SegmentMaxBytes), bytesIn(satAdd(iv, p.FileDeleteDelayMs)))
		w.Explanation = append(w.Explanation, fmt.Sprintf("size: after a check the log is below retention.bytes %d + its oldest segment (≤ %d); it then grows for up to one check interval: ≤ %d bytes, and ≤ %d on disk with the .deleted files kept file.delete.delay.ms %d",
			p.RetentionBytes, w.SegmentMaxBytes, lb, db, p.FileDeleteDelayMs))
		if w.LogBytes < 0 || lb < w.LogBytes {
			w.LogBytes = lb
		}
		if w.DiskBytes < 0 || db < w.DiskBytes {
			w.DiskBytes = db
		}
	}
	return w, nil
}
