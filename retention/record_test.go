package retention_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// TestCleanerRecordsOnTheLogsTimeline: a Cleaner's check of a log opened
// with its timeline records one clean instant per rule that deleted,
// naming the segments the check actually removed, and the roll it made
// before deleting every segment.
func TestCleanerRecordsOnTheLogsTimeline(t *testing.T) {
	// The timeline writes its notes from a goroutine of its own, which
	// reads the clock (the Mem file's modification time) while the test
	// moves it: an atomic clock.
	clk := &atomicClock{}
	clk.ms.Store(1_000_000)
	mem := vfs.MemOptions{Clock: clk.Now}.New()
	dir := "logs/t-0"
	l, err := kafkalog.Open(mem, dir, mustConfig(t, map[string]string{config.RetentionMs: "60000"}), kafkalog.Options{Clock: clk, Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var w record.Builder
	for i := range 3 { // segments 0, 2, 4 of two records each, then the active 6
		appendRecord(t, l, &w, clk.ms.Load()+int64(i), "x")
		appendRecord(t, l, &w, clk.ms.Load()+int64(i), "y")
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	appendRecord(t, l, &w, clk.ms.Load()+3, "z")
	cl := retention.NewCleaner(func() []*kafkalog.Log { return []*kafkalog.Log{l} }, config.DefaultBroker(), clk)
	clk.ms.Add(120_000) // every record is past retention.ms: roll, delete all
	res, err := cl.Check(clk.Now())
	if err != nil || len(res) != 1 {
		t.Fatalf("check: %v, %v", res, err)
	}
	if got := bases(l); !cmp.Equal(got, []int64{7}) {
		t.Fatalf("segments after the check: %v", got)
	}
	insts, err := l.Timeline().Instants(timeline.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var cleans []*timeline.Clean
	var lastRoll *timeline.Roll
	for _, in := range insts {
		switch p := in.Result.(type) {
		case *timeline.Clean:
			cleans = append(cleans, p)
		case *timeline.Roll:
			lastRoll = p
		}
	}
	if lastRoll == nil || lastRoll.Reason != retention.RollReason || lastRoll.NewBaseOffset != 7 {
		t.Fatalf("the roll before deleting every segment: %+v", lastRoll)
	}
	if len(cleans) != 1 {
		t.Fatalf("%d clean instants, want 1: %v", len(cleans), insts)
	}
	var deleted []int64
	for _, s := range cleans[0].Segments {
		deleted = append(deleted, s.BaseOffset)
	}
	if c := cleans[0]; c.Rule != string(retention.ReasonTime) || c.OldLogStartOffset != 0 || c.NewLogStartOffset != 7 ||
		!cmp.Equal(deleted, []int64{0, 2, 4, 6}) || c.Config.RetentionMs != 60000 {
		t.Fatalf("clean instant %+v (segments %v)", c, deleted)
	}
}
