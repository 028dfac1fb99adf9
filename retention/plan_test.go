package retention_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/retention"
)

// seg is a segment of size bytes whose newest record is ts (-1: none; the
// mtime is then 1000).
func seg(base, size, ts int64) retention.SegmentInfo {
	return retention.SegmentInfo{BaseOffset: base, Size: size, LargestRecordTimestamp: ts, FirstBatchTimestamp: ts, LastModified: 1000}
}

// state is a log with the given segments, log start offset at the first
// base, log end offset leo and a high watermark at the log end.
func state(leo int64, segs ...retention.SegmentInfo) retention.LogState {
	return retention.LogState{Segments: segs, LogStartOffset: segs[0].BaseOffset, LogEndOffset: leo, HighWatermark: leo}
}

func policy(retMs, retBytes int64, cleanup ...string) retention.Policy {
	p := retention.DefaultPolicy()
	p.RetentionMs, p.RetentionBytes = retMs, retBytes
	if len(cleanup) > 0 {
		p.CleanupPolicy = cleanup
		if cleanup[0] == "" {
			p.CleanupPolicy = nil
		}
	}
	return p
}

func TestPlan(t *testing.T) {
	const now = 1_000_000
	withLSO := func(st retention.LogState, lso int64) retention.LogState { st.LogStartOffset = lso; return st }
	withHW := func(st retention.LogState, hw int64) retention.LogState { st.HighWatermark = hw; return st }
	tests := []struct {
		name   string
		st     retention.LogState
		p      retention.Policy
		want   string // "base:reason ..." then "| lso" and "roll"
		roll   bool
		newLSO int64
	}{
		{"nothing", state(30, seg(0, 100, now-10), seg(10, 100, now-5), seg(20, 50, now)), policy(60_000, -1), "", false, 0},
		{"time_prefix", state(30, seg(0, 100, now-70_000), seg(10, 100, now-60_001), seg(20, 50, now)), policy(60_000, -1), "0:time 10:time", false, 20},
		// now - ts must be strictly more than retention.ms.
		{"time_exactly_retention", state(30, seg(0, 100, now-60_000), seg(20, 50, now)), policy(60_000, -1), "", false, 0},
		// A newer segment ahead stops the walk: deletion is a prefix.
		{"time_out_of_order", state(30, seg(0, 100, now-70_000), seg(10, 100, now), seg(20, 50, now-90_000)), policy(60_000, -1), "0:time", false, 10},
		{"time_future_blocks", state(30, seg(0, 100, now+1), seg(10, 100, now-90_000), seg(20, 50, now)), policy(60_000, -1), "", false, 0},
		{"time_mtime_fallback", state(30, seg(0, 100, -1), seg(10, 100, now), seg(20, 50, now)), policy(now-1000-1, -1), "0:time", false, 10},
		{"time_disabled", state(30, seg(0, 100, 0), seg(20, 50, 0)), policy(-1, -1), "", false, 0},
		// Every segment qualifies: the log rolls first and they all go.
		{"all_qualify_roll", state(30, seg(0, 100, 0), seg(10, 100, 0), seg(20, 50, 0)), policy(60_000, -1), "0:time 10:time 20:time", true, 30},
		// The empty active segment stays, without a roll.
		{"empty_active_stays", state(20, seg(0, 100, 0), seg(10, 100, 0), seg(20, 0, -1)), policy(60_000, -1), "0:time 10:time", false, 20},
		{"single_empty", state(5, seg(5, 0, -1)), policy(0, 0), "", false, 5},
		// The high watermark must reach the next segment's base.
		{"hw_blocks", withHW(state(30, seg(0, 100, 0), seg(10, 100, 0), seg(20, 50, 0)), 15), policy(60_000, -1), "0:time", false, 10},
		{"hw_blocks_all", withHW(state(30, seg(0, 100, 0), seg(10, 100, 0), seg(20, 50, 0)), 9), policy(60_000, -1), "", false, 0},
		// The active segment needs hw = leo.
		{"hw_below_leo", withHW(state(30, seg(0, 100, 0), seg(10, 100, 0), seg(20, 50, 0)), 29), policy(60_000, -1), "0:time 10:time", false, 20},
		// Size: delete while what is left stays ≥ retention.bytes.
		{"size", state(40, seg(0, 100, now), seg(10, 100, now), seg(20, 100, now), seg(30, 50, now)), policy(-1, 200), "0:size", false, 10},
		{"size_floor", state(40, seg(0, 100, now), seg(10, 100, now), seg(20, 100, now), seg(30, 100, now)), policy(-1, 200), "0:size 10:size", false, 20},
		// retention.bytes exactly the log size: only a 0-byte segment goes.
		{"size_exactly_equal", state(40, seg(0, 100, now), seg(10, 100, now), seg(20, 50, now)), policy(-1, 250), "", false, 0},
		{"size_exactly_equal_empty_first", state(40, seg(0, 0, now), seg(10, 100, now), seg(20, 50, now)), policy(-1, 150), "0:size", false, 10},
		{"size_below", state(40, seg(0, 100, now), seg(20, 50, now)), policy(-1, 151), "", false, 0},
		{"size_zero_rolls", state(40, seg(0, 100, now), seg(20, 50, now)), policy(-1, 0), "0:size 20:size", true, 40},
		// The log start offset rule runs first, and always.
		{"lso", withLSO(state(40, seg(0, 100, now), seg(10, 100, now), seg(20, 50, now)), 15), policy(-1, -1), "0:logStartOffset", false, 15},
		{"lso_at_base", withLSO(state(40, seg(0, 100, now), seg(10, 100, now), seg(20, 50, now)), 20), policy(-1, -1), "0:logStartOffset 10:logStartOffset", false, 20},
		{"lso_never_active", withLSO(state(40, seg(0, 100, now), seg(10, 100, now)), 40), policy(-1, -1), "0:logStartOffset", false, 40},
		{"lso_compact_only", withLSO(state(40, seg(0, 100, 0), seg(10, 100, 0), seg(20, 50, 0)), 12), policy(0, 0, "compact"), "0:logStartOffset", false, 12},
		{"empty_cleanup_policy", state(40, seg(0, 100, 0), seg(20, 50, 0)), policy(0, 0, ""), "", false, 0},
		{"compact_delete", state(40, seg(0, 100, 0), seg(20, 50, now)), policy(60_000, -1, "compact", "delete"), "0:time", false, 20},
		// Each rule runs on what the previous one left: the size rule
		// measures the log after the start offset rule (300 - 100 = 200,
		// within 200), then the time rule takes segment 10.
		{"order", withLSO(state(40, seg(0, 100, 0), seg(10, 100, 0), seg(20, 50, now), seg(30, 50, now)), 10), policy(60_000, 200), "0:logStartOffset 10:time", false, 20},
		{"order_size_then_time", state(40, seg(0, 100, now), seg(10, 100, 0), seg(20, 50, 0), seg(30, 50, now)), policy(60_000, 200), "0:size 10:time 20:time", false, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := tt.p.Plan(tt.st, now)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range pl.Deletions {
				got = append(got, fmt.Sprintf("%d:%s", d.BaseOffset, d.Reason))
				if d.Explanation == "" {
					t.Errorf("deletion %d has no explanation", d.BaseOffset)
				}
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Fatalf("deletions %q, want %q\n%v", g, tt.want, pl)
			}
			if pl.RollFirst != tt.roll {
				t.Fatalf("RollFirst %v", pl.RollFirst)
			}
			want := tt.newLSO
			if tt.want == "" {
				want = tt.st.LogStartOffset
			}
			if pl.NewLogStartOffset != want {
				t.Fatalf("new log start offset %d, want %d", pl.NewLogStartOffset, want)
			}
			rd, rlso, rroll := refPlan(tt.st, tt.p, now)
			if !slices.Equal(rd, planDels(pl)) || rlso != pl.NewLogStartOffset || rroll != pl.RollFirst {
				t.Fatalf("reference model: %v lso %d roll %v", rd, rlso, rroll)
			}
			// Idempotent: a second check at the same time does nothing.
			again, err := tt.p.Plan(tt.st.After(pl), now)
			if err != nil || len(again.Deletions) != 0 {
				t.Fatalf("second plan: %v, %v", again, err)
			}
		})
	}
}

func TestPlanInvalidState(t *testing.T) {
	p := retention.DefaultPolicy()
	for name, st := range map[string]retention.LogState{
		"no_segments":    {},
		"unsorted":       state(30, seg(10, 1, 0), seg(0, 1, 0)),
		"leo_below_base": state(5, seg(0, 1, 0), seg(10, 1, 0)),
		"data_no_offset": state(10, seg(0, 1, 0), seg(10, 1, 0)),
		"hw_above_leo":   {Segments: []retention.SegmentInfo{seg(0, 1, 0)}, LogEndOffset: 5, HighWatermark: 6},
		"lso_above_hw":   {Segments: []retention.SegmentInfo{seg(0, 1, 0)}, LogStartOffset: 4, LogEndOffset: 5, HighWatermark: 3},
		"negative_size":  state(5, seg(0, -1, 0)),
	} {
		if _, err := p.Plan(st, 0); !errors.Is(err, retention.ErrInvalidState) {
			t.Errorf("%s: %v, want ErrInvalidState", name, err)
		}
	}
}

func TestPolicyFrom(t *testing.T) {
	p := retention.DefaultPolicy()
	want := retention.Policy{
		RetentionMs: 604800000, RetentionBytes: -1, FileDeleteDelayMs: 60000, CleanupPolicy: []string{"delete"},
		RetentionCheckIntervalMs: 300000, InitialTaskDelayMs: 30000, SegmentMs: 604800000, SegmentBytes: 1 << 30,
	}
	if fmt.Sprint(p) != fmt.Sprint(want) {
		t.Fatalf("defaults %+v, want %+v", p, want)
	}
	cfg, err := config.Parse(map[string]string{"retention.ms": "-1", "retention.bytes": "5", "cleanup.policy": "compact", "file.delete.delay.ms": "0"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := config.ParseBroker(map[string]string{"log.retention.check.interval.ms": "1000", "log.initial.task.delay.ms": "0"})
	p = retention.PolicyFrom(cfg, b)
	if p.RetentionMs != -1 || p.RetentionBytes != 5 || p.Delete() || p.FileDeleteDelayMs != 0 || p.RetentionCheckIntervalMs != 1000 || p.InitialTaskDelayMs != 0 {
		t.Fatalf("%+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	p.RetentionCheckIntervalMs = 0
	if err := p.Validate(); !errors.Is(err, retention.ErrInvalidPolicy) {
		t.Fatal(err)
	}
}

func TestSchedule(t *testing.T) {
	s := retention.Schedule{First: 100, Interval: 10}
	for _, c := range [][2]int64{{-5, 100}, {100, 100}, {101, 110}, {110, 110}, {111, 120}, {1<<63 - 1, retention.Never}} {
		if got := s.NextAtOrAfter(c[0]); got != c[1] {
			t.Errorf("NextAtOrAfter(%d) = %d, want %d", c[0], got, c[1])
		}
	}
	u := retention.Schedule{Interval: 10, Unknown: true}
	if got := u.NextAtOrAfter(101); got != 110 {
		t.Errorf("unknown phase: %d", got)
	}
}

func TestTimestampWarnings(t *testing.T) {
	const now = 10_000_000
	p := policy(60_000, -1)
	st := state(50,
		retention.SegmentInfo{BaseOffset: 0, Size: 10, LargestRecordTimestamp: 5, LastModified: now - 1000},        // far past
		retention.SegmentInfo{BaseOffset: 10, Size: 10, LargestRecordTimestamp: -1, LastModified: now - 1000},      // mtime
		retention.SegmentInfo{BaseOffset: 20, Size: 10, LargestRecordTimestamp: now + 5000, LastModified: now},     // future
		retention.SegmentInfo{BaseOffset: 30, Size: 10, LargestRecordTimestamp: now - 100, LastModified: now - 99}, // older than 20: out of order
		retention.SegmentInfo{BaseOffset: 40, Size: 0, LargestRecordTimestamp: -1, LastModified: now},              // empty: skipped
	)
	var got []string
	for _, w := range retention.TimestampWarnings(st, p, now) {
		base, _ := retention.WarningBase(w)
		got = append(got, fmt.Sprintf("%d:%s", base, w.Kind))
		if w.Detail == "" {
			t.Error("no detail")
		}
	}
	want := "0:far-past-timestamp 10:mtime-fallback 20:future-timestamp 30:timestamp-out-of-order"
	if strings.Join(got, " ") != want {
		t.Fatalf("warnings %q, want %q", strings.Join(got, " "), want)
	}
	pl, _ := p.Plan(st, now)
	if len(pl.Warnings) != 4 {
		t.Fatalf("Plan carries %d warnings", len(pl.Warnings))
	}
	// Records written long after they expired: the next check takes them.
	if len(pl.Deletions) != 1 || pl.Deletions[0].BaseOffset != 0 {
		t.Fatalf("%v", pl)
	}
}
