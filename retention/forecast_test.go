package retention_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/vfs"
)

func TestReadableUntil(t *testing.T) {
	const now = 10_000_000
	known := retention.Schedule{First: 1_000, Interval: 300_000} // checks at ...,9_901_000, 10_201_000, ...
	unknown := retention.Schedule{Interval: 300_000, Unknown: true}
	withHW := func(st retention.LogState, hw int64) retention.LogState { st.HighWatermark = hw; return st }
	policy := func(retMs, retBytes int64, cleanup ...string) retention.Policy {
		p := policy(retMs, retBytes, cleanup...)
		p.SegmentMs = 180_000
		return p
	}
	tests := []struct {
		name  string
		st    retention.LogState
		p     retention.Policy
		sched retention.Schedule
		until []int64 // ReadableUntil per segment (-1: Never)
		idle  []int64
		why   []string // substrings of the explanations
	}{
		{"time", state(30, seg(0, 10, now-100_000), seg(10, 10, now-50_000), seg(20, 10, now)), policy(60_000, -1), known,
			[]int64{10_201_000, 10_201_000, 10_501_000}, []int64{10_201_000, 10_201_000, 10_201_000},
			[]string{"qualifies from", "deleted by the check at", "active segment"}},
		{"unknown_phase", state(30, seg(0, 10, now-100_000), seg(10, 10, now)), policy(60_000, -1), unknown,
			[]int64{now + 1 + 299_999, now + 240_001 + 299_999}, []int64{now + 300_000, now + 60_001 + 299_999},
			[]string{"a check by", "phase unknown"}},
		// A segment newer than the next makes the next wait.
		{"waits", state(30, seg(0, 10, now+1_000_000), seg(10, 10, now-500_000), seg(20, 10, now)), policy(60_000, -1), known,
			[]int64{11_101_000, 11_101_000, 11_101_000}, []int64{11_101_000, 11_101_000, 11_101_000},
			[]string{"", "waits for segment 0"}},
		{"disabled", state(30, seg(0, 10, 0), seg(10, 10, now)), policy(-1, -1), known,
			[]int64{-1, -1}, []int64{-1, -1}, []string{"disabled: kept forever", "waits behind segment 0"}},
		{"compact", state(30, seg(0, 10, 0), seg(10, 10, now)), policy(0, 0, "compact"), known,
			[]int64{-1, -1}, []int64{-1, -1}, []string{`cleanup.policy is "compact"`}},
		{"hw", withHW(state(30, seg(0, 10, 0), seg(10, 10, 0), seg(20, 10, 0)), 15), policy(60_000, -1), known,
			[]int64{10_201_000, -1, -1}, []int64{10_201_000, -1, -1},
			[]string{"", "high watermark 15 is below its end 20", "waits behind segment 10"}},
		{"size_then_time", state(30, seg(0, 100, now), seg(10, 100, now-200_000), seg(20, 10, now)), policy(60_000, 100), known,
			[]int64{10_201_000, 10_201_000, 10_501_000}, []int64{10_201_000, 10_201_000, 10_201_000},
			[]string{"retention.bytes 100", "qualifies from"}},
		{"empty_active", state(20, seg(0, 10, 0), seg(10, 10, 0), seg(20, 0, -1)), policy(60_000, -1), known,
			[]int64{10_201_000, 10_201_000, -1}, []int64{10_201_000, 10_201_000, -1},
			[]string{"", "", "empty active segment"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := retention.ReadableUntil(tt.st, tt.p, tt.sched, now)
			if err != nil {
				t.Fatal(err)
			}
			conv := func(v int64) int64 {
				if v == -1 {
					return retention.Never
				}
				return v
			}
			for i, b := range f.Segments {
				if b.ReadableUntil != conv(tt.until[i]) || b.IfIdle != conv(tt.idle[i]) {
					t.Errorf("segment %d: until %d idle %d, want %d %d: %s", b.BaseOffset, b.ReadableUntil, b.IfIdle, tt.until[i], tt.idle[i], b.Explanation)
				}
				if i < len(tt.why) && !strings.Contains(b.Explanation, tt.why[i]) {
					t.Errorf("segment %d: %q lacks %q", b.BaseOffset, b.Explanation, tt.why[i])
				}
				if b.ReadableUntil != retention.Never && b.OnDiskUntil != b.ReadableUntil+tt.p.FileDeleteDelayMs {
					t.Errorf("segment %d: on disk until %d", b.BaseOffset, b.OnDiskUntil)
				}
			}
		})
	}
}

func TestForOffset(t *testing.T) {
	st := state(30, seg(0, 10, 0), seg(10, 10, 0), seg(20, 10, 0))
	st.LogStartOffset = 5
	f, err := retention.ReadableUntil(st, policy(60_000, -1), retention.Schedule{Interval: 1000}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for off, want := range map[int64]int64{5: 0, 9: 0, 10: 10, 29: 20} {
		if b, ok := f.ForOffset(off); !ok || b.BaseOffset != want {
			t.Errorf("ForOffset(%d) = %d, %v", off, b.BaseOffset, ok)
		}
	}
	for _, off := range []int64{-1, 4, 30, 31} {
		if _, ok := f.ForOffset(off); ok {
			t.Errorf("ForOffset(%d) found a segment", off)
		}
	}
}

// TestRealPartitions plans retention for every partition a real broker
// wrote, opened read-only: a day after its newest record everything is
// due, and the plan and forecast agree.
func TestRealPartitions(t *testing.T) {
	for _, dir := range realdata.PartitionDirs(t) {
		l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
		if err != nil {
			t.Logf("%s: not opened read-only: %v", realdata.Rel(t, dir), err)
			continue
		}
		st, err := retention.StateOf(l)
		l.Close()
		if err != nil {
			t.Errorf("%s: %v", realdata.Rel(t, dir), err)
			continue
		}
		p := retention.DefaultPolicy()
		var newest int64
		for _, s := range st.Segments {
			if s.Size > 0 {
				newest = max(newest, s.LargestTimestamp())
			}
		}
		now := newest + p.RetentionMs + 86_400_000
		pl, err := p.Plan(st, now)
		if err != nil {
			t.Fatalf("%s: %v", realdata.Rel(t, dir), err)
		}
		f, err := retention.ReadableUntil(st, p, p.UnknownSchedule(), newest)
		if err != nil {
			t.Fatal(err)
		}
		nonEmpty := 0
		for i, s := range st.Segments {
			if s.Size > 0 || i < len(st.Segments)-1 {
				nonEmpty++
				if b := f.Segments[i]; b.ReadableUntil == retention.Never || b.ReadableUntil > now+p.SegmentMs {
					t.Errorf("%s: segment %d: %s", realdata.Rel(t, dir), s.BaseOffset, b.Explanation)
				}
			}
		}
		if len(pl.Deletions) != nonEmpty {
			t.Errorf("%s: a day after retention.ms the plan deletes %d of %d segments: %v", realdata.Rel(t, dir), len(pl.Deletions), nonEmpty, pl)
		}
		t.Logf("%s: %d segments, %d bytes; %v", realdata.Rel(t, dir), len(st.Segments), st.Size(), pl.String())
	}
}

// TestReadableUntilAgreesWithPlan is the safety issue's case: an active
// segment whose records are already older than retention.ms. A check now
// deletes it (rolling first), so ReadableUntil must be that check, not the
// worst case should appends continue, which only IfAppendsContinue and the
// explanation give.
func TestReadableUntilAgreesWithPlan(t *testing.T) {
	const day = 24 * 3600 * 1000
	const now = 1_780_000_000_123
	known := retention.Schedule{First: now + 1_000 - 300_000, Interval: 300_000} // the next check is 1 s after now
	unknown := retention.Schedule{Interval: 300_000, Unknown: true}
	oneMin := retention.DefaultPolicy()
	oneMin.RetentionMs, oneMin.SegmentMs = 60_000, 180_000
	active := func(first, newest int64) retention.SegmentInfo {
		return retention.SegmentInfo{BaseOffset: 0, Size: 300, FirstBatchTimestamp: first, LargestRecordTimestamp: newest, LastModified: now - 1}
	}
	tests := []struct {
		name string
		st   retention.LogState
		p    retention.Policy
		// whether appends could still keep the segment (segment.ms after
		// its first batch is not past)
		appendsKeep bool
	}{
		// The reproduction: 3 records stamped 10 days ago, Kafka's
		// defaults (retention.ms = segment.ms = 7 days).
		{"ten_days_old", state(3, active(now-10*day, now-10*day)), retention.DefaultPolicy(), false},
		// retention.ms < segment.ms: qualifies now, yet still takes appends.
		{"still_open", state(3, active(now-100_000, now-70_000)), oneMin, true},
		{"behind_older", state(6, seg(0, 100, now-200_000), retention.SegmentInfo{BaseOffset: 3, Size: 300, FirstBatchTimestamp: now - 100_000, LargestRecordTimestamp: now - 70_000, LastModified: now - 1}), oneMin, true},
	}
	for _, tt := range tests {
		for _, sched := range []retention.Schedule{known, unknown} {
			t.Run(tt.name+"/"+sched.String(), func(t *testing.T) {
				pl, err := tt.p.Plan(tt.st, now)
				if err != nil {
					t.Fatal(err)
				}
				n := len(tt.st.Segments)
				if len(pl.Deletions) != n || !pl.RollFirst {
					t.Fatalf("plan at now: %v, want every segment deleted, rolling first", pl)
				}
				// C: the check that deletes them, the first after now.
				c := now + sched.Interval
				if !sched.Unknown {
					c = sched.NextAtOrAfter(now + 1)
					if plC, _ := tt.p.Plan(tt.st, c); len(plC.Deletions) != n {
						t.Fatalf("plan at the next check %d: %v", c, plC)
					}
				}
				f, err := retention.ReadableUntil(tt.st, tt.p, sched, now)
				if err != nil {
					t.Fatal(err)
				}
				for i, d := range pl.Deletions {
					b := f.Segments[i]
					if b.BaseOffset != d.BaseOffset || b.ReadableUntil > c || b.ReadableUntil <= now {
						t.Fatalf("a check now deletes segment %d, the check at %d at the latest, but it is readable until %s: %s",
							d.BaseOffset, c, retention.FormatTime(b.ReadableUntil), b.Explanation)
					}
					if b.ReadableUntil != b.IfIdle || b.OnDiskUntil != b.ReadableUntil+tt.p.FileDeleteDelayMs {
						t.Fatalf("segment %d: until %d, if idle %d, on disk %d", b.BaseOffset, b.ReadableUntil, b.IfIdle, b.OnDiskUntil)
					}
				}
				a := f.Segments[n-1]
				if !strings.Contains(a.Explanation, "deleted by a check now") && !strings.Contains(a.Explanation, "appends cannot keep it") {
					t.Errorf("active segment: %q does not say a check now deletes it", a.Explanation)
				}
				checkAppendsContinue(t, a, tt.appendsKeep)
			})
		}
	}
}

// checkAppendsContinue checks the worst case should appends continue of an
// active segment a check now deletes: later than ReadableUntil and
// explained when appends can still reach it, equal otherwise.
func checkAppendsContinue(t *testing.T, a retention.SegmentBound, appendsKeep bool) {
	t.Helper()
	if appendsKeep {
		if a.IfAppendsContinue <= a.ReadableUntil || !strings.Contains(a.Explanation, "If appends continue") {
			t.Errorf("active segment: if appends continue %d, readable until %d: %s", a.IfAppendsContinue, a.ReadableUntil, a.Explanation)
		}
	} else if a.IfAppendsContinue != a.ReadableUntil || !strings.Contains(a.Explanation, "appends cannot keep it") {
		t.Errorf("active segment closed to appends: if appends continue %d, readable until %d: %s", a.IfAppendsContinue, a.ReadableUntil, a.Explanation)
	}
}
