package retentionapply_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/segkit/segkit/internal/retentionapply"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
)

// savepoint records a completed savepoint instant in tl and returns its time.
func savepoint(t *testing.T, tl *timeline.Timeline, sp *timeline.Savepoint) timeline.InstantTime {
	t.Helper()
	x, err := tl.Begin(timeline.ActionSavepoint, sp)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Inflight(); err != nil {
		t.Fatal(err)
	}
	if err := x.Complete(sp); err != nil {
		t.Fatal(err)
	}
	return x.Instant().Time
}

func deleted(p retention.Plan) []int64 {
	var out []int64
	for _, d := range p.Deletions {
		out = append(out, d.BaseOffset)
	}
	return out
}

// TestCheckHoldThenRelease: a hold on offset 4 (segment 3) stops the
// check at segment 3, recording only the deletion before it; once the
// hold is released, the next check deletes exactly what a plan without
// holds of the same state deletes, and records it.
func TestCheckHoldThenRelease(t *testing.T) {
	l, tl, clk, _ := newLog(t, map[string]string{config.RetentionMs: "1000"})
	p := retention.PolicyFrom(l.Config(), config.DefaultBroker())
	taken := savepoint(t, tl, &timeline.Savepoint{Label: "case-7", FirstOffset: 4, LastOffset: 4})

	clk.ms = t0 + 100_000
	rep, err := retentionapply.Check(l, tl, p, clk.ms)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{0}, deleted(rep.Plan)); diff != "" {
		t.Errorf("held check deletions (-want +got):\n%s", diff)
	}
	var held []int64
	for _, h := range rep.Plan.Held {
		held = append(held, h.BaseOffset)
		if h.Hold.Savepoint != taken || h.Blocked != retention.ReasonTime {
			t.Errorf("held segment %d: hold %v blocked %q, want the savepoint %s stopping the time rule", h.BaseOffset, h.Hold, h.Blocked, taken)
		}
	}
	if diff := cmp.Diff([]int64{3, 6, 9}, held); diff != "" {
		t.Errorf("held segments (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(rep.Plan.Held[0].Explanation, `held by savepoint "case-7" (`+taken.String()+`)`) {
		t.Errorf("explanation %q", rep.Plan.Held[0].Explanation)
	}
	if len(rep.Instants) != 1 || rep.LogStartOffset != 3 {
		t.Errorf("held check: %d instants, log start offset %d; want one clean, 3", len(rep.Instants), rep.LogStartOffset)
	}

	// A plan carried out by hand that deletes the held segment is refused,
	// before anything is recorded.
	st, err := retention.StateOf(l)
	if err != nil {
		t.Fatal(err)
	}
	free, err := p.Plan(st, clk.ms) // planned without the holds
	if err != nil || len(free.Deletions) == 0 {
		t.Fatalf("plan without holds: %v, %v", free, err)
	}
	before, _ := tl.Instants(timeline.Filter{})
	if _, err := retentionapply.Apply(l, tl, p, free); !errors.Is(err, retention.ErrHeld) {
		t.Fatalf("Apply of a plan deleting a held segment = %v, want ErrHeld", err)
	}
	after, _ := tl.Instants(timeline.Filter{})
	if len(after) != len(before) || len(tl.Pending()) != 0 || l.LogStartOffset() != 3 {
		t.Fatalf("the refused Apply recorded or changed something: %d -> %d instants, %d pending, start %d", len(before), len(after), len(tl.Pending()), l.LogStartOffset())
	}

	savepoint(t, tl, &timeline.Savepoint{Label: "case-7", Release: &taken, FirstOffset: 4, LastOffset: 4})
	clk.ms += 1000
	st, err = retention.StateOf(l)
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.Plan(st, clk.ms)
	if err != nil {
		t.Fatal(err)
	}
	rep, err = retentionapply.Check(l, tl, p, clk.ms)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(deleted(want), deleted(rep.Plan)); diff != "" {
		t.Errorf("released check (-without holds +got):\n%s", diff)
	}
	if len(rep.Plan.Held) != 0 || !rep.Plan.RollFirst || rep.LogStartOffset != 10 {
		t.Errorf("released check: held %v, roll %v, start %d; want every segment gone, rolling first", rep.Plan.Held, rep.Plan.RollFirst, rep.LogStartOffset)
	}
}

// TestCheckHoldOnEngineTimeline: with the log's own timeline (the log
// opened with kafkalog.Options.Timeline), Check keeps what a savepoint
// recorded there holds.
func TestCheckHoldOnEngineTimeline(t *testing.T) {
	l, _, clk, mem := newLog(t, map[string]string{config.RetentionMs: "1000"})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := kafkalog.Open(mem, dir, l.Config(), kafkalog.Options{Clock: clk, Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	savepoint(t, l.Timeline(), &timeline.Savepoint{Label: "engine", FirstOffset: 7, LastOffset: 7})
	clk.ms = t0 + 100_000
	rep, err := retentionapply.Check(l, l.Timeline(), retention.PolicyFrom(l.Config(), config.DefaultBroker()), clk.ms)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{0, 3}, deleted(rep.Plan)); diff != "" || len(rep.Plan.Held) != 2 || rep.Plan.Held[0].BaseOffset != 6 {
		t.Fatalf("deletions (-want +got):\n%s\nheld %+v", diff, rep.Plan.Held)
	}
}
