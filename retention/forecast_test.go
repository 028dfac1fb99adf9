package retention_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/internal/realdata"
	kafkalog "github.com/segkit/segkit/log"
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
