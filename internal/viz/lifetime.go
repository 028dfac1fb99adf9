package viz

import (
	"cmp"
	"slices"

	"github.com/segkit/segkit/retention"
)

// ChartJSON is the retention what-if's picture of time for one set of
// settings: the bytes of the partition on disk and readable, and the age
// of its oldest readable record, from its first record to the last
// deletion the forecast predicts (if no more records come: ReadableUntil's
// "if idle"), with the rolls, checks, deletions and removals marked. The
// past is rebuilt from the segments' timestamps (each segment filling
// linearly from its first batch to its newest record); segments deleted
// before now are not in it.
type ChartJSON struct {
	// Label says which settings: "what-if" or "current settings".
	Label string `json:"label"`
	// From and To bound the chart; Now is the what-if's now.
	From int64 `json:"from"`
	To   int64 `json:"to"`
	Now  int64 `json:"now"`
	// Bytes are [time, bytes on disk] points (straight lines between
	// them), .deleted files included until their removal; Readable the
	// same for the bytes that can still be read.
	Bytes    [][2]int64 `json:"bytes"`
	Readable [][2]int64 `json:"readable"`
	// OldestAge are [time, age in ms of the oldest readable record]
	// points; a run ends where nothing is readable.
	OldestAge [][2]int64 `json:"oldestAge"`
	// MaxAge is the largest age the chart reaches: how long a record is
	// readable at most, here.
	MaxAge int64 `json:"maxAge"`
	// Bound is Kafka's rule of thumb for these settings: a record is
	// readable for at most segment.ms + retention.ms + the check interval;
	// -1 when no time rule applies.
	Bound int64 `json:"bound"`
	// Rolls are when each segment after the first began (its first
	// batch): the segment before rolled then.
	Rolls []MarkJSON `json:"rolls"`
	// Checks are the retention checks within the chart, when their phase
	// is known (brokerStart); none otherwise.
	Checks []int64 `json:"checks"`
	// Deletions are when each segment stops being readable, Removals
	// when its files leave the disk.
	Deletions []MarkJSON `json:"deletions"`
	Removals  []MarkJSON `json:"removals"`
}

// MarkJSON is an event on the chart.
type MarkJSON struct {
	At         int64  `json:"at"`
	BaseOffset int64  `json:"baseOffset"`
	Reason     string `json:"reason,omitempty"`
}

// maxChecks bounds the checks a chart marks.
const maxChecks = 400

// lifetimeChart draws the state st under forecast fc (made with pol and
// sched at now).
func lifetimeChart(label string, st retention.LogState, pol retention.Policy, sched retention.Schedule, fc retention.Forecast, now int64) ChartJSON {
	c := ChartJSON{Label: label, Now: now, From: now, To: now, Bytes: [][2]int64{}, Readable: [][2]int64{}, OldestAge: [][2]int64{},
		Rolls: []MarkJSON{}, Checks: []int64{}, Deletions: []MarkJSON{}, Removals: []MarkJSON{}, Bound: -1}
	if pol.RetentionMs >= 0 {
		c.Bound = pol.SegmentMs + pol.RetentionMs + pol.RetentionCheckIntervalMs
	}
	segs := st.Segments
	first := func(i int) int64 { // when segment i began
		if t := segs[i].FirstBatchTimestamp; t >= 0 {
			return min(t, now)
		}
		return -1
	}
	last := func(i int) int64 { // when it was last written
		return min(max(segs[i].LargestTimestamp(), first(i)), now)
	}
	for i := range segs {
		if t := first(i); t >= 0 && t < c.From {
			c.From = t
		}
		if i > 0 && first(i) >= 0 {
			c.Rolls = append(c.Rolls, MarkJSON{At: first(i), BaseOffset: segs[i].BaseOffset})
		}
	}
	// The past: each segment fills linearly from its first batch to its
	// newest record; the sum is exact at every breakpoint.
	points := []int64{c.From, now}
	for i := range segs {
		if first(i) >= 0 {
			points = append(points, first(i), last(i))
		}
	}
	slices.Sort(points)
	points = slices.Compact(points)
	written := func(t int64) int64 {
		var n int64
		for i, s := range segs {
			f, l := first(i), last(i)
			switch {
			case f < 0 || t >= l:
				n += s.Size
			case t > f:
				n += int64(float64(s.Size) * float64(t-f) / float64(l-f))
			}
		}
		return n
	}
	for _, t := range points {
		if t >= c.From && t <= now {
			b := written(t)
			c.Bytes = append(c.Bytes, [2]int64{t, b})
			c.Readable = append(c.Readable, [2]int64{t, b})
		}
	}
	// The future, if no record comes: deletions and removals, in time order.
	type ev struct {
		at, bytes int64
		readable  bool
		i         int
	}
	var evs []ev
	for i, b := range fc.Segments {
		if b.IfIdle != retention.Never {
			evs = append(evs, ev{at: max(b.IfIdle, now), bytes: b.Size, readable: true, i: i})
			c.Deletions = append(c.Deletions, MarkJSON{At: max(b.IfIdle, now), BaseOffset: b.BaseOffset, Reason: string(b.Reason)})
		}
		if b.OnDiskUntil != retention.Never {
			evs = append(evs, ev{at: max(b.OnDiskUntil, now), bytes: b.Size, i: i})
			c.Removals = append(c.Removals, MarkJSON{At: max(b.OnDiskUntil, now), BaseOffset: b.BaseOffset})
		}
	}
	slices.SortStableFunc(evs, func(a, b ev) int { return cmp.Compare(a.at, b.at) })
	onDisk, readable := written(now), written(now)
	for _, e := range evs {
		if e.readable {
			c.Readable = append(c.Readable, [2]int64{e.at, readable})
			readable -= e.bytes
			c.Readable = append(c.Readable, [2]int64{e.at, readable})
		} else {
			c.Bytes = append(c.Bytes, [2]int64{e.at, onDisk})
			onDisk -= e.bytes
			c.Bytes = append(c.Bytes, [2]int64{e.at, onDisk})
		}
		c.To = max(c.To, e.at)
	}
	if len(evs) == 0 || readable > 0 || onDisk > 0 {
		// Something stays: show as much of the future as of the past.
		c.To = max(c.To, now+max(now-c.From, 3_600_000))
	} else {
		c.To += max((c.To-c.From)/20, 1000)
	}
	c.Bytes = append(c.Bytes, [2]int64{c.To, onDisk})
	c.Readable = append(c.Readable, [2]int64{c.To, readable})

	// The age of the oldest readable record: since the first segment's
	// first batch until it is deleted, then since the next one's.
	k := 0
	for k < len(segs) && first(k) < 0 {
		k++
	}
	if k < len(segs) {
		c.OldestAge = append(c.OldestAge, [2]int64{first(k), 0}, [2]int64{now, now - first(k)})
	}
	t := now
	for k < len(fc.Segments) {
		d := fc.Segments[k].IfIdle
		if d == retention.Never || first(k) < 0 {
			end := c.To
			if first(k) >= 0 {
				c.OldestAge = append(c.OldestAge, [2]int64{end, end - first(k)})
			}
			break
		}
		d = max(d, t)
		c.OldestAge = append(c.OldestAge, [2]int64{d, d - first(k)})
		k++
		if k < len(segs) && first(k) >= 0 {
			c.OldestAge = append(c.OldestAge, [2]int64{d, d - first(k)})
		} else {
			c.OldestAge = append(c.OldestAge, [2]int64{d, -1}) // nothing left to read
		}
		t = d
	}
	for _, p := range c.OldestAge {
		c.MaxAge = max(c.MaxAge, p[1])
	}
	if !sched.Unknown {
		for at := sched.NextAtOrAfter(c.From); at <= c.To && at != retention.Never && len(c.Checks) < maxChecks; at += sched.Interval {
			c.Checks = append(c.Checks, at)
		}
	}
	return c
}
