package viz

import (
	"fmt"

	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/retention"
)

// SimulateJSON is a steady traffic run through retention's model
// (retention.Simulate, what `segviz retention --what-if` runs) under the
// what-if's settings, drawn as a picture of time.
type SimulateJSON struct {
	// RecordsPerSecond, RecordBytes and BatchRecords are the traffic;
	// Duration is how long it ran, from Start.
	RecordsPerSecond float64 `json:"recordsPerSecond"`
	RecordBytes      int     `json:"recordBytes"`
	BatchRecords     int     `json:"batchRecords"`
	Start            int64   `json:"start"`
	Duration         int64   `json:"duration"`
	// MaxReadableMs is the longest a record stayed readable in the run;
	// WorstReadableMs the formula's bound (retention.WorstCase).
	MaxReadableMs   int64     `json:"maxReadableMs"`
	WorstReadableMs int64     `json:"worstReadableMs"`
	Chart           ChartJSON `json:"chart"`
}

// Simulate runs p["rate"] records a second (default: the partition's own
// rate, its records over its time span) of p["recordBytes"] bytes
// (default: its bytes a record) in batches of p["batch"] (default 1)
// through retention's model for p["duration"] ms (default three times
// segment.ms + retention.ms + the check interval), under the partition's
// config with the what-if's settings, and draws it.
func (s *Session) Simulate(q Params) (*SimulateJSON, error) {
	_, cfg, now, st, err := s.retentionWhatIf(q)
	if err != nil {
		return nil, err
	}
	// The partition's own traffic.
	records := st.LogEndOffset - st.LogStartOffset
	var first, last int64 = -1, -1
	for _, sg := range st.Segments {
		if sg.FirstBatchTimestamp >= 0 && (first < 0 || sg.FirstBatchTimestamp < first) {
			first = sg.FirstBatchTimestamp
		}
		last = max(last, sg.LargestRecordTimestamp)
	}
	rate := 1.0
	if records > 1 && first >= 0 && last > first {
		rate = float64(records-1) / (float64(last-first) / 1000)
	}
	size := 100
	if records > 0 {
		size = max(1, min(int(st.Size()/records)-70, 1<<20)) // a record's overhead in a batch of one is about 70 bytes
	}
	out := &SimulateJSON{RecordsPerSecond: rate, RecordBytes: size, BatchRecords: 1, Start: now}
	if q["rate"] != "" {
		if _, err := fmt.Sscan(q["rate"], &out.RecordsPerSecond); err != nil || out.RecordsPerSecond <= 0 {
			return nil, fmt.Errorf("%w: rate %q: want records a second, more than 0", ErrBadRequest, q["rate"])
		}
	}
	rb, err := q.int64("recordBytes", int64(out.RecordBytes))
	if err != nil {
		return nil, err
	}
	batch, err := q.int64("batch", 1)
	if err != nil {
		return nil, err
	}
	out.RecordBytes, out.BatchRecords = int(rb), int(batch)
	pol := retention.PolicyFrom(cfg, config.DefaultBroker())
	bound := pol.SegmentMs + pol.RetentionMs + pol.RetentionCheckIntervalMs
	if pol.RetentionMs < 0 || bound <= 0 || bound > 90*86_400_000 {
		bound = 86_400_000
	}
	if out.Duration, err = q.int64("duration", 3*bound); err != nil {
		return nil, err
	}
	traffic := retention.Traffic{RecordsPerSecond: out.RecordsPerSecond, RecordBytes: out.RecordBytes, BatchRecords: out.BatchRecords}
	tl, err := retention.Simulate(retention.SimConfig{Config: cfg, Broker: config.DefaultBroker(), Traffic: traffic, Start: now, Duration: out.Duration})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	w, err := retention.WorstCase(pol, traffic)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	out.MaxReadableMs, out.WorstReadableMs = tl.MaxReadableMs, w.ReadableMs
	bb, _ := traffic.BatchBytes()
	out.Chart = simulatedChart(tl, pol, now, out.Duration, out.RecordsPerSecond/float64(max(out.BatchRecords, 1)), int64(bb))
	return out, nil
}

// simulatedChart draws a simulation: batchesPerSec batches of bb bytes
// from start for duration; the roll, delete and remove events of tl.
func simulatedChart(tl retention.Timeline, pol retention.Policy, start, duration int64, batchesPerSec float64, bb int64) ChartJSON {
	end := start + duration
	c := ChartJSON{Label: "simulated traffic", From: start, To: end, Now: start, Bytes: [][2]int64{{start, 0}}, Readable: [][2]int64{{start, 0}},
		OldestAge: [][2]int64{{start, 0}}, Rolls: []MarkJSON{}, Checks: []int64{}, Deletions: []MarkJSON{}, Removals: []MarkJSON{}, Bound: -1}
	if pol.RetentionMs >= 0 {
		c.Bound = pol.SegmentMs + pol.RetentionMs + pol.RetentionCheckIntervalMs
	}
	written := func(t int64) int64 { return int64(float64(t-start) / 1000 * batchesPerSec * float64(bb)) }
	firstAt := map[int64]int64{0: start} // when each segment got its first batch
	var bases []int64                    // live segments' bases, oldest first
	bases = append(bases, 0)
	var deleted, removed int64
	for _, e := range tl.Events {
		if e.At > end {
			break
		}
		switch e.Kind {
		case retention.EventRoll:
			c.Rolls = append(c.Rolls, MarkJSON{At: e.At, BaseOffset: e.BaseOffset})
			firstAt[e.BaseOffset] = e.At
			bases = append(bases, e.BaseOffset)
		case retention.EventDelete:
			c.Deletions = append(c.Deletions, MarkJSON{At: e.At, BaseOffset: e.BaseOffset, Reason: string(e.Reason)})
			c.Readable = append(c.Readable, [2]int64{e.At, written(e.At) - deleted})
			deleted += e.Size
			c.Readable = append(c.Readable, [2]int64{e.At, written(e.At) - deleted})
			if len(bases) > 0 && bases[0] == e.BaseOffset {
				c.OldestAge = append(c.OldestAge, [2]int64{e.At, e.At - firstAt[bases[0]]})
				bases = bases[1:]
				if len(bases) > 0 {
					c.OldestAge = append(c.OldestAge, [2]int64{e.At, e.At - firstAt[bases[0]]})
				}
			}
		case retention.EventRemove:
			c.Removals = append(c.Removals, MarkJSON{At: e.At, BaseOffset: e.BaseOffset})
			c.Bytes = append(c.Bytes, [2]int64{e.At, written(e.At) - removed})
			removed += e.Size
			c.Bytes = append(c.Bytes, [2]int64{e.At, written(e.At) - removed})
		}
	}
	c.Bytes = append(c.Bytes, [2]int64{end, written(end) - removed})
	c.Readable = append(c.Readable, [2]int64{end, written(end) - deleted})
	if len(bases) > 0 {
		c.OldestAge = append(c.OldestAge, [2]int64{end, end - firstAt[bases[0]]})
	}
	for _, p := range c.OldestAge {
		c.MaxAge = max(c.MaxAge, p[1])
	}
	sched := pol.NewSchedule(start)
	for at := sched.First; at <= end && len(c.Checks) < maxChecks; at += sched.Interval {
		c.Checks = append(c.Checks, at)
	}
	return c
}
