package retentionapply_test

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/retentionapply"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

type clock struct{ ms int64 }

func (c *clock) Now() time.Time { return time.UnixMilli(c.ms) }

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixMilli()

const dir = "kafka-logs/orders-0"

// newLog writes ten records, one a second from t0, with segment.ms 2500:
// segments 0 (offsets 0-2), 3 (3-5), 6 (6-8) and 9 (9, active).
func newLog(t *testing.T, props map[string]string) (*kafkalog.Log, *timeline.Timeline, *clock, *vfs.Mem) {
	t.Helper()
	props[config.SegmentMs] = "2500"
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(props)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MessageTimestampAfterMaxMs = math.MaxInt64
	clk := &clock{ms: t0}
	mem := vfs.MemOptions{Clock: clk.Now}.New()
	l, err := kafkalog.Open(mem, dir, cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var w record.Builder
	for i := range 10 {
		clk.ms = t0 + int64(i)*1000
		spec := record.NewBatchSpec(0, compress.None)
		b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: clk.ms, Value: fmt.Appendf(nil, "v%d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	if got := bases(l); !slices.Equal(got, []int64{0, 3, 6, 9}) {
		t.Fatalf("segments %v, want [0 3 6 9]", got)
	}
	tl, err := timeline.Open(mem, dir, timeline.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return l, tl, clk, mem
}

func bases(l *kafkalog.Log) []int64 {
	var out []int64
	for _, s := range l.Segments() {
		out = append(out, s.BaseOffset())
	}
	return out
}

// step is one instant a check should record.
type step struct {
	action   timeline.Action
	rule     string  // clean
	segments []int64 // clean: the deleted bases; roll: the closed base
	old, new int64   // clean: log start offsets; roll: new base offset
}

func describe(t *testing.T, insts []timeline.Instant) []step {
	t.Helper()
	var out []step
	for _, inst := range insts {
		if inst.State != timeline.Completed {
			t.Fatalf("instant %s not completed", inst)
		}
		switch p := inst.Result.(type) {
		case *timeline.Clean:
			s := step{action: inst.Action, rule: p.Rule, old: p.OldLogStartOffset, new: p.NewLogStartOffset}
			for _, r := range p.Segments {
				s.segments = append(s.segments, r.BaseOffset)
			}
			if diff := cmp.Diff(inst.Plan, inst.Result); diff != "" {
				t.Errorf("instant %s: the result differs from the plan: %s", inst, diff)
			}
			out = append(out, s)
		case *timeline.Roll:
			if p.Reason != retentionapply.RollReason || p.Closed == nil {
				t.Fatalf("roll %+v", p)
			}
			out = append(out, step{action: inst.Action, segments: []int64{p.Closed.BaseOffset}, new: p.NewBaseOffset})
		default:
			t.Fatalf("instant %s: result %T", inst, inst.Result)
		}
	}
	return out
}

func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		name      string
		props     map[string]string
		deleteTo  int64 // a DeleteRecords request before the check, if > 0
		now       int64
		want      []step
		wantBases []int64
	}{
		{"time", map[string]string{config.RetentionMs: "5000"}, 0, t0 + 8500,
			[]step{{timeline.ActionClean, "time", []int64{0}, 0, 3}}, []int64{3, 6, 9}},
		{"log_start_offset_then_time", map[string]string{config.RetentionMs: "5000"}, 5, t0 + 11500,
			[]step{{timeline.ActionClean, "logStartOffset", []int64{0}, 5, 5}, {timeline.ActionClean, "time", []int64{3}, 5, 6}}, []int64{6, 9}},
		{"size", map[string]string{config.RetentionMs: "-1", config.RetentionBytes: "size-of-6-and-9"}, 0, t0 + 8500,
			[]step{{timeline.ActionClean, "size", []int64{0, 3}, 0, 6}}, []int64{6, 9}},
		{"roll_first", map[string]string{config.RetentionMs: "5000"}, 0, t0 + 20000,
			[]step{{timeline.ActionRoll, "", []int64{9}, 0, 10}, {timeline.ActionClean, "time", []int64{0, 3, 6, 9}, 0, 10}}, []int64{10}},
		{"nothing", map[string]string{config.RetentionMs: "5000"}, 0, t0 + 6500, nil, []int64{0, 3, 6, 9}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sized := tt.props[config.RetentionBytes] == "size-of-6-and-9"
			if sized {
				tt.props[config.RetentionBytes] = "1"
			}
			l, tl, clk, mem := newLog(t, tt.props)
			p := retention.PolicyFrom(l.Config(), config.DefaultBroker())
			if sized {
				segs := l.Segments()
				p.RetentionBytes = segs[2].Size() + segs[3].Size()
			}
			if tt.deleteTo > 0 {
				if err := l.IncrementLogStartOffset(tt.deleteTo); err != nil {
					t.Fatal(err)
				}
			}
			clk.ms = tt.now
			rep, err := retentionapply.Check(l, tl, p, tt.now)
			if err != nil {
				t.Fatal(err)
			}
			got := describe(t, rep.Instants)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(step{})); diff != "" {
				t.Fatalf("instants (-want +got):\n%s", diff)
			}
			if b := bases(l); !slices.Equal(b, tt.wantBases) {
				t.Fatalf("segments after %v, want %v", b, tt.wantBases)
			}
			if n := len(tt.want); n > 0 && l.LogStartOffset() != tt.want[n-1].new {
				t.Fatalf("log start offset %d, want %d", l.LogStartOffset(), tt.want[n-1].new)
			}
			// The plan deleted what the instants say, segment for segment,
			// each with what the rule compared.
			var planned, recorded []timeline.SegmentRef
			for _, d := range rep.Plan.Deletions {
				planned = append(planned, timeline.SegmentRef{BaseOffset: d.BaseOffset, NextOffset: d.NextOffset, Size: d.Size, LargestTimestamp: d.LargestTimestamp})
			}
			for _, inst := range rep.Instants {
				if c, ok := inst.Result.(*timeline.Clean); ok {
					recorded = append(recorded, c.Segments...)
					if c.Now != tt.now || c.Config != (timeline.RetentionConfig{RetentionMs: p.RetentionMs, RetentionBytes: p.RetentionBytes, FileDeleteDelayMs: p.FileDeleteDelayMs}) {
						t.Fatalf("clean %+v", c)
					}
				}
				if inst.Time.Millis != tt.now {
					t.Fatalf("instant %s not stamped with the check's time %d", inst, tt.now)
				}
			}
			if diff := cmp.Diff(planned, recorded); diff != "" {
				t.Fatalf("segments (-plan +timeline):\n%s", diff)
			}
			// Another reader sees the same, and nothing pending.
			ro, err := timeline.Open(mem, dir, timeline.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			insts, err := ro.Instants(timeline.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(rep.Instants, insts); diff != "" || len(ro.Pending()) != 0 {
				t.Fatalf("read back (-recorded +read), %d pending:\n%s", len(ro.Pending()), diff)
			}
		})
	}
}

// TestResolvePending leaves instants as a crash would, at each point of
// the protocol, and checks what the next run makes of them: the engine's
// Open with its timeline (kafkalog Options.Timeline) resolves them.
func TestResolvePending(t *testing.T) {
	for _, tt := range []struct {
		name string
		// crash does part of a deletion of segment 0 and returns the
		// instant it leaves pending.
		crash         func(t *testing.T, l *kafkalog.Log, tl *timeline.Timeline) *timeline.Txn
		wantCompleted bool
		wantStart     int64 // after the next check at t0+8500
	}{
		{"clean_requested", func(t *testing.T, l *kafkalog.Log, tl *timeline.Timeline) *timeline.Txn {
			return begin(t, tl, timeline.ActionClean, cleanOf0(), false)
		}, false, 3},
		{"clean_inflight_before_the_start_offset_moved", func(t *testing.T, l *kafkalog.Log, tl *timeline.Timeline) *timeline.Txn {
			return begin(t, tl, timeline.ActionClean, cleanOf0(), true)
		}, false, 3},
		{"clean_inflight_after_the_start_offset_moved", func(t *testing.T, l *kafkalog.Log, tl *timeline.Timeline) *timeline.Txn {
			x := begin(t, tl, timeline.ActionClean, cleanOf0(), true)
			if err := l.IncrementLogStartOffset(3); err != nil { // DeleteSegments' first, durable step
				t.Fatal(err)
			}
			return x
		}, true, 3},
		{"roll_inflight_rolled", func(t *testing.T, l *kafkalog.Log, tl *timeline.Timeline) *timeline.Txn {
			x := begin(t, tl, timeline.ActionRoll, &timeline.Roll{Reason: retentionapply.RollReason, Closed: &timeline.SegmentRef{BaseOffset: 9, NextOffset: 10}, NewBaseOffset: 10}, true)
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
			return x
		}, true, 3},
		{"roll_inflight_not_rolled", func(t *testing.T, l *kafkalog.Log, tl *timeline.Timeline) *timeline.Txn {
			return begin(t, tl, timeline.ActionRoll, &timeline.Roll{Reason: retentionapply.RollReason, Closed: &timeline.SegmentRef{BaseOffset: 9, NextOffset: 10}, NewBaseOffset: 10}, true)
		}, false, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, tl, clk, mem := newLog(t, map[string]string{config.RetentionMs: "5000"})
			x := tt.crash(t, l, tl)
			pendingAt := x.Instant().Time
			if n := len(tl.Pending()); n != 1 {
				t.Fatalf("%d pending, want 1", n)
			}
			// The next run opens the log again with its timeline (the
			// crashed run's Timeline is gone), which resolves it.
			cfg := l.Config()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l, err := kafkalog.Open(mem, dir, cfg, kafkalog.Options{Clock: clk, Timeline: true})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			tl2 := l.Timeline()
			res := l.LoadReport().Resolved
			if len(res) != 1 || res[0].Instant.Time != pendingAt || res[0].Completed != tt.wantCompleted || res[0].Why == "" {
				t.Fatalf("resolutions %+v, want one, completed %v", res, tt.wantCompleted)
			}
			if n := len(tl2.Pending()); n != 0 {
				t.Fatalf("%d still pending", n)
			}
			insts, err := tl2.Instants(timeline.Filter{})
			if err != nil || len(insts) != 1 {
				t.Fatalf("instants %v, %v", insts, err)
			}
			if tt.wantCompleted {
				if insts[0].Time != pendingAt || insts[0].State != timeline.Completed {
					t.Fatalf("instant %s, want %s completed", insts[0], pendingAt)
				}
			} else if rb, ok := insts[0].Plan.(*timeline.Rollback); !ok || rb.Instant != pendingAt {
				t.Fatalf("instant %s (%+v), want the rollback of %s", insts[0], insts[0].Plan, pendingAt)
			}
			// The next check deletes what is due, whatever was resolved:
			// segment 0, by the log start offset rule once the start
			// offset had moved past it, by the time rule otherwise.
			clk.ms = t0 + 8500
			p := retention.PolicyFrom(l.Config(), config.DefaultBroker())
			rep, err := retentionapply.Check(l, tl2, p, clk.ms)
			if err != nil {
				t.Fatal(err)
			}
			if l.LogStartOffset() != tt.wantStart || len(rep.Plan.Deletions) == 0 || rep.Plan.Deletions[0].BaseOffset != 0 {
				t.Fatalf("next check: %s, log start offset %d", rep.Plan, l.LogStartOffset())
			}
			wantRule := retention.ReasonTime
			if tt.name == "clean_inflight_after_the_start_offset_moved" {
				wantRule = retention.ReasonLogStartOffset
			}
			if r := rep.Plan.Deletions[0].Reason; r != wantRule {
				t.Fatalf("segment 0 deleted by %s, want %s", r, wantRule)
			}
		})
	}
}

func cleanOf0() *timeline.Clean {
	return &timeline.Clean{Rule: "time", Config: timeline.RetentionConfig{RetentionMs: 5000, RetentionBytes: -1, FileDeleteDelayMs: 60000},
		Now: t0 + 8500, Segments: []timeline.SegmentRef{{BaseOffset: 0, NextOffset: 3}}, OldLogStartOffset: 0, NewLogStartOffset: 3}
}

func begin(t *testing.T, tl *timeline.Timeline, a timeline.Action, plan timeline.Payload, inflight bool) *timeline.Txn {
	t.Helper()
	x, err := tl.Begin(a, plan)
	if err != nil {
		t.Fatal(err)
	}
	if inflight {
		if err := x.Inflight(); err != nil {
			t.Fatal(err)
		}
	}
	return x
}
