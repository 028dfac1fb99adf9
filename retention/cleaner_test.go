package retention_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

func TestCleanerSchedule(t *testing.T) {
	clk := &clock{ms: 1_000_000}
	mem := vfs.MemOptions{Clock: clk.Now}.New()
	cfg := mustConfig(t, map[string]string{config.RetentionMs: "1000", config.FileDeleteDelayMs: "60000"})
	compact := mustConfig(t, map[string]string{config.RetentionMs: "1000", config.CleanupPolicy: "compact"})
	a, err := kafkalog.Open(mem, "logs/a-0", cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	c, err := kafkalog.Open(mem, "logs/c-0", compact, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var w record.Builder
	for _, l := range []*kafkalog.Log{a, c} {
		appendRecord(t, l, &w, clk.ms, "x")
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
		appendRecord(t, l, &w, clk.ms+30_000, "y") // too new to go at the first check
	}
	cl := retention.NewCleaner(func() []*kafkalog.Log { return []*kafkalog.Log{a, c} }, config.DefaultBroker(), clk)
	first := clk.ms + 30_000
	if got := cl.NextRun().UnixMilli(); got != first {
		t.Fatalf("first run at %d, want start + 30 s", got-clk.ms)
	}
	// Not due yet: nothing runs.
	if res, err := cl.RunDue(time.UnixMilli(first - 1)); res != nil || err != nil || cl.Checks() != 0 {
		t.Fatalf("early RunDue: %v, %v", res, err)
	}
	clk.ms = first
	res, err := cl.RunDue(clk.Now())
	if err != nil || len(res) != 2 || cl.Checks() != 1 {
		t.Fatalf("first check: %+v, %v", res, err)
	}
	if len(res[0].Plan.Deletions) != 1 || a.LogStartOffset() != 1 {
		t.Fatalf("log a: %v", res[0].Plan)
	}
	// cleanup.policy=compact: only the log start offset rule.
	if len(res[1].Plan.Deletions) != 0 || c.LogStartOffset() != 0 {
		t.Fatalf("compacted log: %v", res[1].Plan)
	}
	// The .deleted files are due 60 s later: NextRun says so.
	if got := cl.NextRun().UnixMilli(); got != first+60_000 {
		t.Fatalf("next run at +%d, want the removal at +60000", got-first)
	}
	deleted := segment.Path("logs/a-0", 0, segment.LogSuffix+segment.DeletedSuffix)
	clk.ms = first + 59_999
	if res, _ := cl.RunDue(clk.Now()); res != nil {
		t.Fatal("a check ran early")
	}
	if _, err := mem.Stat(deleted); err != nil {
		t.Fatalf(".deleted file gone early: %v", err)
	}
	clk.ms = first + 60_000
	if res, err := cl.RunDue(clk.Now()); res != nil || err != nil {
		t.Fatalf("removal run: %v, %v", res, err)
	}
	if _, err := mem.Stat(deleted); err == nil {
		t.Fatal(".deleted file not removed")
	}
	if got := cl.NextRun().UnixMilli(); got != first+300_000 {
		t.Fatalf("next check at +%d, want +300000", got-first)
	}
	// A DeleteRecords moves the compacted log's start offset: the next
	// check deletes the segment below it.
	if err := c.IncrementLogStartOffset(2); err != nil {
		t.Fatal(err)
	}
	// Missed checks collapse into one, and the schedule keeps its phase.
	clk.ms = first + 3*300_000 + 5
	res, err = cl.RunDue(clk.Now())
	if err != nil || len(res) != 2 || cl.Checks() != 2 {
		t.Fatalf("late check: %v, %v (checks %d)", res, err, cl.Checks())
	}
	if len(res[1].Plan.Deletions) != 1 || res[1].Plan.Deletions[0].Reason != retention.ReasonLogStartOffset {
		t.Fatalf("compacted log after DeleteRecords: %v", res[1].Plan)
	}
	if got := cl.NextRun().UnixMilli(); got != clk.ms+60_000 {
		t.Fatalf("next run at +%d, want the removal 60 s after the late check", got-first)
	}
	clk.ms += 60_000
	if res, err := cl.RunDue(clk.Now()); res != nil || err != nil {
		t.Fatalf("removal: %v %v", res, err)
	}
	if got := cl.NextRun().UnixMilli(); got != first+4*300_000 {
		t.Fatalf("next check at +%d, want +1200000", got-first)
	}
	if s := cl.Schedule(); s.First != first || s.Interval != 300_000 || s.Unknown {
		t.Fatalf("schedule %+v", s)
	}
	// Check runs out of schedule.
	if _, err := cl.Check(clk.Now()); err != nil || cl.Checks() != 3 {
		t.Fatal(err)
	}
	if got := cl.NextRun().UnixMilli(); got != first+4*300_000 {
		t.Fatalf("after Check, next run +%d", got-first)
	}
}

// TestCleanerRun runs the real-time loop briefly.
func TestCleanerRun(t *testing.T) {
	mem := vfs.NewMem()
	l, err := kafkalog.Open(mem, "logs/r-0", mustConfig(t, map[string]string{config.RetentionMs: "0"}), kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var w record.Builder
	appendRecord(t, l, &w, time.Now().UnixMilli()-10_000, "old")
	b := config.Broker{RetentionCheckIntervalMs: 2, InitialTaskDelayMs: 0}
	cl := retention.NewCleaner(func() []*kafkalog.Log { return []*kafkalog.Log{l} }, b, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var runs atomic.Int32
	done := make(chan error)
	go func() {
		done <- cl.Run(ctx, func(res []retention.Result, err error) {
			if err != nil {
				t.Error(err)
			}
			if runs.Add(1) == 3 {
				cancel()
			}
		})
	}()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("Run did not stop")
	}
	if l.LogStartOffset() != 1 {
		t.Fatalf("log start offset %d: the old record was not deleted", l.LogStartOffset())
	}
}
