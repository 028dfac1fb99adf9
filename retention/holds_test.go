package retention_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// hold is a savepoint "label" taken at ms on offsets [first, last].
func hold(label string, ms, first, last int64) timeline.Hold {
	return timeline.Hold{Savepoint: timeline.InstantTime{Millis: ms}, Label: label, FirstOffset: first, LastOffset: last}
}

// withHolds returns st with holds.
func withHolds(st retention.LogState, holds ...timeline.Hold) retention.LogState {
	st.Holds = holds
	return st
}

// heldView is what a test compares of a plan's held segment.
type heldView struct {
	Base     int64
	Label    string
	Pinned   bool
	HeldBase int64
	Blocked  retention.Reason
}

func deletedBases(p retention.Plan) []int64 {
	var out []int64
	for _, d := range p.Deletions {
		out = append(out, d.BaseOffset)
	}
	return out
}

func heldViews(p retention.Plan) []heldView {
	var out []heldView
	for _, h := range p.Held {
		out = append(out, heldView{h.BaseOffset, h.Hold.Label, h.Pinned, h.HeldBase, h.Blocked})
	}
	return out
}

func TestPlanHolds(t *testing.T) {
	const now = 10_000_000
	old := int64(now - 100_000) // older than retention.ms 60000
	// Five closed segments of 100 bytes, every one past retention.ms, and
	// an active one that is not.
	five := state(60, seg(0, 100, old), seg(10, 100, old), seg(20, 100, old), seg(30, 100, old), seg(40, 100, old), seg(50, 100, now))
	lsoPast := five
	lsoPast.LogStartOffset = 40 // DeleteRecords moved it: the start offset rule deletes 0..30
	tests := []struct {
		name string
		st   retention.LogState
		p    retention.Policy
		del  []int64
		held []heldView
	}{
		{
			name: "no_hold",
			st:   five, p: policy(60_000, -1),
			del: []int64{0, 10, 20, 30, 40},
		},
		{
			// The hold on segment 20 stops the time rule there; 30, 40 and the
			// active 50 stay with it, and say which hold keeps them.
			name: "time_hold_on_third",
			st:   withHolds(five, hold("audit", 5, 25, 27)), p: policy(60_000, -1),
			del: []int64{0, 10},
			held: []heldView{
				{20, "audit", true, 20, retention.ReasonTime},
				{30, "audit", false, 20, retention.ReasonTime},
				{40, "audit", false, 20, retention.ReasonTime},
				{50, "audit", false, 20, ""},
			},
		},
		{
			name: "hold_on_first",
			st:   withHolds(five, hold("audit", 5, 0, 0)), p: policy(60_000, -1),
			del: nil,
			held: []heldView{
				{0, "audit", true, 0, retention.ReasonTime}, {10, "audit", false, 0, retention.ReasonTime},
				{20, "audit", false, 0, retention.ReasonTime}, {30, "audit", false, 0, retention.ReasonTime},
				{40, "audit", false, 0, retention.ReasonTime}, {50, "audit", false, 0, ""},
			},
		},
		{
			// A range over two segments pins both; a second, later hold names
			// its own segment.
			name: "two_holds",
			st:   withHolds(five, hold("a", 5, 35, 41), hold("b", 6, 55, 55)), p: policy(60_000, -1),
			del: []int64{0, 10, 20},
			held: []heldView{
				{30, "a", true, 30, retention.ReasonTime}, {40, "a", true, 30, retention.ReasonTime}, {50, "b", true, 30, ""},
			},
		},
		{
			// The hold is only on the active segment: everything before it
			// goes, and without the hold the log would not roll and go whole.
			name: "hold_on_active",
			st:   withHolds(state(30, seg(0, 100, old), seg(10, 100, old), seg(20, 100, old)), hold("a", 5, 29, 29)), p: policy(60_000, -1),
			del:  []int64{0, 10},
			held: []heldView{{20, "a", true, 20, retention.ReasonTime}},
		},
		{
			// Offsets already gone (below every segment): nothing is held.
			name: "hold_below_log",
			st:   withHolds(state(120, seg(100, 100, old), seg(110, 100, now)), hold("a", 5, 0, 99)),
			p:    policy(60_000, -1), del: []int64{100},
		},
		{
			name: "log_start_offset_rule",
			st:   withHolds(lsoPast, hold("a", 5, 12, 12)), p: policy(-1, -1),
			del: []int64{0},
			held: []heldView{
				{10, "a", true, 10, retention.ReasonLogStartOffset}, {20, "a", false, 10, retention.ReasonLogStartOffset},
				{30, "a", false, 10, retention.ReasonLogStartOffset}, {40, "a", false, 10, ""}, {50, "a", false, 10, ""},
			},
		},
		{
			// retention.bytes 150 of 600: without the hold, 0..30 go (the log
			// keeps 200). The held segment's bytes still count, so the size
			// rule wants the same, but nothing from the hold on goes: the log
			// stays at 500 while the hold is in force.
			name: "size_rule_counts_held_bytes",
			st:   withHolds(five, hold("a", 5, 10, 10)), p: policy(-1, 150),
			del: []int64{0},
			held: []heldView{
				{10, "a", true, 10, retention.ReasonSize}, {20, "a", false, 10, retention.ReasonSize},
				{30, "a", false, 10, retention.ReasonSize}, {40, "a", false, 10, ""}, {50, "a", false, 10, ""},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := tt.p.Plan(tt.st, now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.del, deletedBases(pl)); diff != "" {
				t.Errorf("deletions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.held, heldViews(pl)); diff != "" {
				t.Errorf("held (-want +got):\n%s", diff)
			}
			if pl.RollFirst && len(tt.held) > 0 {
				t.Errorf("a plan with held segments rolls first")
			}
			// Every held segment's explanation names its hold, in the words
			// plans and bounds use.
			for _, h := range pl.Held {
				want := "held by " + h.Hold.String()
				if !h.Pinned {
					want = "kept: segment " + strconv.FormatInt(h.HeldBase, 10) + " before it is held by " + h.Hold.String()
				}
				if !strings.HasPrefix(h.Explanation, want) {
					t.Errorf("segment %d: explanation %q, want it to start with %q", h.BaseOffset, h.Explanation, want)
				}
			}
			if len(pl.Held) > 0 && !strings.Contains(pl.String(), "held by "+pl.Held[0].Hold.String()) {
				t.Errorf("String() = %q does not name the hold", pl.String())
			}
			// The state after the plan keeps every held segment.
			after := tt.st.After(pl)
			for _, h := range pl.Held {
				found := false
				for _, s := range after.Segments {
					found = found || s.BaseOffset == h.BaseOffset
				}
				if !found {
					t.Errorf("segment %d is held but gone after the plan", h.BaseOffset)
				}
			}
		})
	}
}

func TestValidateHolds(t *testing.T) {
	st := state(20, seg(0, 100, 1), seg(10, 100, 2))
	for _, h := range []timeline.Hold{hold("backwards", 1, 5, 4), hold("negative", 1, -1, 3)} {
		if err := withHolds(st, h).Validate(); !errors.Is(err, retention.ErrInvalidState) {
			t.Errorf("%s: Validate = %v, want ErrInvalidState", h.Label, err)
		}
	}
	if err := withHolds(st, hold("ok", 1, 5, 5)).Validate(); err != nil {
		t.Errorf("a good hold: %v", err)
	}
}

func TestReadableUntilHolds(t *testing.T) {
	const now = 10_000_000
	p := policy(60_000, -1)
	st := state(40, seg(0, 100, now-100_000), seg(10, 100, now-30_000), seg(20, 100, now-10_000), seg(30, 100, now))
	h := hold("case-7", 1234, 15, 15)
	sched := p.NewSchedule(now - 1000)
	free, err := retention.ReadableUntil(st, p, sched, now)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := retention.ReadableUntil(withHolds(st, h), p, sched, now)
	if err != nil {
		t.Fatal(err)
	}
	// Before the hold: as without it.
	b0 := fc.Segments[0]
	if b0.HeldBy != nil || b0.ReadableUntil != free.Segments[0].ReadableUntil || b0.IfReleased != b0.ReadableUntil {
		t.Errorf("segment 0: %+v, want it as without the hold (%d)", b0, free.Segments[0].ReadableUntil)
	}
	for i := 1; i < len(fc.Segments); i++ {
		b := fc.Segments[i]
		if b.ReadableUntil != retention.Never || b.IfIdle != retention.Never || b.IfAppendsContinue != retention.Never || b.OnDiskUntil != retention.Never {
			t.Errorf("segment %d: readable until %d, %d, %d, on disk %d; want never while held", b.BaseOffset, b.ReadableUntil, b.IfIdle, b.IfAppendsContinue, b.OnDiskUntil)
		}
		if b.HeldBy == nil || *b.HeldBy != h {
			t.Errorf("segment %d: HeldBy %v, want %v", b.BaseOffset, b.HeldBy, h)
		}
		want := "kept: segment 10 before it is held by " + h.String()
		if i == 1 {
			want = "held by " + h.String()
		}
		if !strings.HasPrefix(b.Explanation, want) {
			t.Errorf("segment %d: explanation %q, want it to start with %q", b.BaseOffset, b.Explanation, want)
		}
		if b.IfReleased != free.Segments[i].ReadableUntil {
			t.Errorf("segment %d: IfReleased %d, want the forecast without holds, %d", b.BaseOffset, b.IfReleased, free.Segments[i].ReadableUntil)
		}
		if b.IfReleased == retention.Never || !strings.Contains(b.Explanation, "If the holds were released now: readable until "+retention.FormatTime(b.IfReleased)) {
			t.Errorf("segment %d: explanation %q does not say when it goes once released", b.BaseOffset, b.Explanation)
		}
	}
	// ForOffset answers for an offset in and after the held segment.
	for _, off := range []int64{15, 25, 39} {
		b, ok := fc.ForOffset(off)
		if !ok || b.HeldBy == nil || !strings.Contains(b.Explanation, "held by savepoint \"case-7\"") {
			t.Errorf("ForOffset(%d) = %+v, %v: want it held by savepoint \"case-7\"", off, b, ok)
		}
	}
}

func TestApplyRefusesHeld(t *testing.T) {
	clk := &clock{ms: 1_000_000}
	mem := vfs.MemOptions{Clock: clk.Now}.New()
	l, err := kafkalog.Open(mem, "logs/t-0", mustConfig(t, map[string]string{config.RetentionMs: "1000"}), kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var w record.Builder
	appendRecord(t, l, &w, clk.ms, "a")
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendRecord(t, l, &w, clk.ms+100_000, "b")
	st, err := retention.StateOf(l)
	if err != nil {
		t.Fatal(err)
	}
	p := retention.PolicyFrom(l.Config(), config.DefaultBroker())
	pl, err := p.Plan(st, clk.ms+10_000)
	if err != nil || len(pl.Deletions) != 1 {
		t.Fatalf("plan %v, %v: want segment 0 deleted", pl, err)
	}
	// A plan made without the hold, carried out once the hold exists.
	pl.Holds = []timeline.Hold{hold("late", 1, 0, 0)}
	if err := retention.Apply(l, pl); !errors.Is(err, retention.ErrHeld) {
		t.Fatalf("Apply = %v, want ErrHeld", err)
	}
	if l.LogStartOffset() != 0 || len(l.Segments()) != 2 {
		t.Fatalf("Apply changed the log: start %d, %d segments", l.LogStartOffset(), len(l.Segments()))
	}
}

// TestCleanerHoldsRelease runs the Cleaner over a partition whose
// timeline holds segment 2 of 4: the check deletes 0 and 1 only; once
// released, the next check deletes exactly what a plan without holds of
// the same state deletes.
func TestCleanerHoldsRelease(t *testing.T) {
	clk := &clock{ms: 1_000_000}
	mem := vfs.MemOptions{Clock: clk.Now}.New()
	dir := "logs/t-0"
	l, err := kafkalog.Open(mem, dir, mustConfig(t, map[string]string{config.RetentionMs: "60000"}), kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var w record.Builder
	for i := range 4 { // segments 0, 2, 4, 6 of two records each, then the active 8
		appendRecord(t, l, &w, clk.ms+int64(i), "x")
		appendRecord(t, l, &w, clk.ms+int64(i), "y")
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	appendRecord(t, l, &w, clk.ms+600_000, "new")
	tl, err := timeline.Open(mem, dir, timeline.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	sp := &timeline.Savepoint{Label: "case-7", FirstOffset: 4, LastOffset: 5}
	x, err := tl.Begin(timeline.ActionSavepoint, sp)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Complete(sp); err != nil {
		t.Fatal(err)
	}
	taken := x.Instant().Time

	cl := retention.NewCleaner(func() []*kafkalog.Log { return []*kafkalog.Log{l} }, config.DefaultBroker(), clk)
	cl.SetHolds(retention.HoldsFromTimeline(mem))
	clk.ms += 120_000
	res, err := cl.Check(clk.Now())
	if err != nil || len(res) != 1 {
		t.Fatalf("check: %v, %v", res, err)
	}
	if diff := cmp.Diff([]int64{0, 2}, deletedBases(res[0].Plan)); diff != "" {
		t.Errorf("held check deletions (-want +got):\n%s", diff)
	}
	if len(res[0].Plan.Held) == 0 || res[0].Plan.Held[0].BaseOffset != 4 || res[0].Plan.Held[0].Hold.Savepoint != taken {
		t.Errorf("held check: Held = %+v, want segment 4 held by the savepoint %s", res[0].Plan.Held, taken)
	}
	if got := bases(l); !cmp.Equal(got, []int64{4, 6, 8}) {
		t.Fatalf("segments after the held check: %v", got)
	}

	rel := &timeline.Savepoint{Label: "case-7", Release: &taken, FirstOffset: 4, LastOffset: 5}
	x, err = tl.Begin(timeline.ActionSavepoint, rel)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Complete(rel); err != nil {
		t.Fatal(err)
	}
	clk.ms += 1000
	st, err := retention.StateOf(l)
	if err != nil {
		t.Fatal(err)
	}
	want, err := retention.PolicyFrom(l.Config(), config.DefaultBroker()).Plan(st, clk.ms)
	if err != nil {
		t.Fatal(err)
	}
	res, err = cl.Check(clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(deletedBases(want), deletedBases(res[0].Plan)); diff != "" || len(res[0].Plan.Held) != 0 {
		t.Errorf("released check deletions (-without holds +got):\n%s\nheld %v", diff, res[0].Plan.Held)
	}
	if got := bases(l); !cmp.Equal(got, []int64{8}) {
		t.Errorf("segments after the released check: %v, want [8]", got)
	}
}

// TestCleanerHoldsError checks that a hold that cannot be read stops the
// check before anything is deleted.
func TestCleanerHoldsError(t *testing.T) {
	clk := &clock{ms: 1_000_000}
	mem := vfs.MemOptions{Clock: clk.Now}.New()
	l, err := kafkalog.Open(mem, "logs/t-0", mustConfig(t, map[string]string{config.RetentionMs: "1000"}), kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var w record.Builder
	appendRecord(t, l, &w, clk.ms, "a")
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendRecord(t, l, &w, clk.ms+100_000, "b")
	cl := retention.NewCleaner(func() []*kafkalog.Log { return []*kafkalog.Log{l} }, config.DefaultBroker(), clk)
	boom := errors.New("boom")
	cl.SetHolds(func(*kafkalog.Log) ([]timeline.Hold, error) { return nil, boom })
	if _, err := cl.Check(time.UnixMilli(clk.ms + 10_000)); !errors.Is(err, boom) {
		t.Fatalf("check = %v, want the holds' error", err)
	}
	if l.LogStartOffset() != 0 || len(l.Segments()) != 2 {
		t.Fatalf("the check deleted with unreadable holds: start %d, %v", l.LogStartOffset(), bases(l))
	}
}

// TestStateOfReadsLogTimeline: a log opened with its timeline gives its
// holds to StateOf, so a plan from it keeps the held segment.
func TestStateOfReadsLogTimeline(t *testing.T) {
	clk := &clock{ms: 1_000_000}
	mem := vfs.MemOptions{Clock: clk.Now}.New()
	l, err := kafkalog.Open(mem, "logs/t-0", mustConfig(t, map[string]string{config.RetentionMs: "1000"}), kafkalog.Options{Clock: clk, Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var w record.Builder
	appendRecord(t, l, &w, clk.ms, "a")
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendRecord(t, l, &w, clk.ms, "b")
	sp := &timeline.Savepoint{Label: "engine", FirstOffset: 0, LastOffset: 0}
	x, err := l.Timeline().Begin(timeline.ActionSavepoint, sp)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Complete(sp); err != nil {
		t.Fatal(err)
	}
	st, err := retention.StateOf(l)
	if err != nil {
		t.Fatal(err)
	}
	want := []timeline.Hold{{Savepoint: x.Instant().Time, Label: "engine", FirstOffset: 0, LastOffset: 0}}
	if diff := cmp.Diff(want, st.Holds); diff != "" {
		t.Fatalf("StateOf holds (-want +got):\n%s", diff)
	}
	pl, err := retention.PolicyFrom(l.Config(), config.DefaultBroker()).Plan(st, clk.ms+100_000)
	if err != nil || len(pl.Deletions) != 0 || len(pl.Held) != 2 {
		t.Fatalf("plan %v, %v: want nothing deleted, both segments held", pl, err)
	}
}
