package viz

import (
	"testing"

	"github.com/segkit/segkit/retention"
)

// TestLifetimeChart: the payments partition at 3:00.108 (segments 0, 37
// and 73; retention.ms 60000, segment.ms 180000, checks at 1:01, 6:01,
// ...): the past fills to the partition's size, the check at 6:01
// deletes every segment if nothing more is written, the oldest readable
// record's age rises until then and ends, and the bytes go to 0.
func TestLifetimeChart(t *testing.T) {
	const t0 = int64(1_772_442_000_000) // 09:00
	sec := int64(1000)
	st := retention.LogState{
		Segments: []retention.SegmentInfo{
			{BaseOffset: 0, Size: 2900, FirstBatchTimestamp: t0 - 184_108, LargestRecordTimestamp: t0 - 5003},
			{BaseOffset: 37, Size: 2850, FirstBatchTimestamp: t0, LargestRecordTimestamp: t0 + 175_105},
			{BaseOffset: 73, Size: 79, FirstBatchTimestamp: t0 + 180_108, LargestRecordTimestamp: t0 + 180_108},
		},
		LogEndOffset: 74, HighWatermark: 74,
	}
	pol := retention.DefaultPolicy()
	pol.RetentionMs, pol.SegmentMs = 60_000, 180_000
	now := t0 + 180_108
	sched := pol.NewSchedule(t0 - (4*60+29)*sec)
	fc, err := retention.ReadableUntil(st, pol, sched, now)
	if err != nil {
		t.Fatal(err)
	}
	c := lifetimeChart("what-if", st, pol, sched, fc, now)
	if c.From != t0-184_108 || c.Bound != 540_000 || len(c.Rolls) != 2 || len(c.Checks) == 0 {
		t.Errorf("from %d, bound %d, rolls %v, %d checks", c.From, c.Bound, c.Rolls, len(c.Checks))
	}
	if last := c.Bytes[len(c.Bytes)-1]; last[1] != 0 {
		t.Errorf("bytes at the end %v, want 0: everything is removed", last)
	}
	var atNow int64 = -1
	for _, p := range c.Bytes {
		if p[0] == now {
			atNow = p[1]
		}
	}
	if atNow != 2900+2850+79 {
		t.Errorf("bytes at now %d, want the partition's %d", atNow, 2900+2850+79)
	}
	gone := map[int64]int64{}
	for _, d := range c.Deletions {
		gone[d.BaseOffset] = d.At
	}
	// If idle, the check at 6:01 deletes everything: 0 and 37 qualify, and
	// the active segment too (its newest record, 3:00.108, is a minute
	// old by 4:00.109): the log rolls first (Kafka's rule).
	six := t0 + (6*60+1)*sec
	if gone[0] != six || gone[37] != six || gone[73] != six {
		t.Errorf("deletions %v; want 0, 37 and 73 at 6:01", c.Deletions)
	}
	// The age: from 0 at segment 0's first batch up to 6:01 - its first
	// batch at 6:01, then nothing is readable.
	if first := c.OldestAge[0]; first != [2]int64{t0 - 184_108, 0} {
		t.Errorf("the age starts at %v", first)
	}
	if last := c.OldestAge[len(c.OldestAge)-1]; last != [2]int64{six, -1} {
		t.Errorf("the age ends at %v, want nothing readable from 6:01", last)
	}
	if c.MaxAge != six-(t0-184_108) {
		t.Errorf("max age %d, want %d", c.MaxAge, six-(t0-184_108))
	}
	if c.To <= six {
		t.Errorf("the chart ends at %d, before the removals after 6:01", c.To)
	}
}
