package historyjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

func at(ms int64) timeline.InstantTime { return timeline.InstantTime{Millis: ms} }

func TestInstantOf(t *testing.T) {
	plan := &timeline.Clean{Rule: "time", NewLogStartOffset: 3}
	result := &timeline.Clean{Rule: "time", NewLogStartOffset: 4}
	for _, tt := range []struct {
		name string
		inst timeline.Instant
		want string
	}{
		{"result_over_plan", timeline.Instant{Time: at(10), Completed: at(11), Action: timeline.ActionClean, State: timeline.Completed, Plan: plan, Result: result},
			`{"instant":10,"completed":11,"action":"clean","state":"completed","imported":false,"detail":{"rule":"time","config":{"retention.ms":0,"retention.bytes":0,"file.delete.delay.ms":0},"now":0,"segments":null,"oldLogStartOffset":0,"newLogStartOffset":4}}`},
		{"plan_without_result", timeline.Instant{Time: at(10), Completed: at(11), Action: timeline.ActionSavepoint, State: timeline.Completed, Plan: &timeline.Savepoint{Label: "x", FirstOffset: 1, LastOffset: 2}},
			`{"instant":10,"completed":11,"action":"savepoint","state":"completed","imported":false,"detail":{"label":"x","firstOffset":1,"lastOffset":2,"logStartOffset":0,"logEndOffset":0}}`},
		{"imported_no_payload", timeline.Instant{Time: at(5), Completed: at(6), Action: timeline.ActionTier, State: timeline.Completed, Imported: true},
			`{"instant":5,"completed":6,"action":"tier","state":"completed","imported":true,"detail":{}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(InstantOf(tt.inst))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}

func TestAffects(t *testing.T) {
	rel := at(1)
	for _, tt := range []struct {
		name string
		p    timeline.Payload
		want []Range
	}{
		{"clean_moves_start", &timeline.Clean{OldLogStartOffset: 5, NewLogStartOffset: 9, Segments: []timeline.SegmentRef{{BaseOffset: 0, NextOffset: 9}}}, []Range{{5, 9, "removed"}}},
		{"clean_by_start_offset_rule", &timeline.Clean{OldLogStartOffset: 9, NewLogStartOffset: 9, Segments: []timeline.SegmentRef{{BaseOffset: 3, NextOffset: 6}, {BaseOffset: 6, NextOffset: 9}}}, []Range{{3, 9, "removed"}}},
		{"roll", &timeline.Roll{Closed: &timeline.SegmentRef{BaseOffset: 4, NextOffset: 8}, NewBaseOffset: 8}, []Range{{4, 8, "closed"}}},
		{"roll_without_next", &timeline.Roll{Closed: &timeline.SegmentRef{BaseOffset: 4}, NewBaseOffset: 8}, []Range{{4, 8, "closed"}}},
		{"roll_of_nothing", &timeline.Roll{NewBaseOffset: 8}, nil},
		{"truncate_both_ends", &timeline.Truncate{OldLogStartOffset: 0, NewLogStartOffset: 2, OldLogEndOffset: 10, NewLogEndOffset: 7}, []Range{{0, 2, "removed"}, {7, 10, "removed"}}},
		{"compaction", &timeline.Compaction{Sources: []timeline.SegmentRef{{BaseOffset: 10, NextOffset: 20}, {BaseOffset: 20, NextOffset: 25}}}, []Range{{10, 25, "compacted"}}},
		{"savepoint", &timeline.Savepoint{FirstOffset: 3, LastOffset: 3}, []Range{{3, 4, "held"}}},
		{"release", &timeline.Savepoint{FirstOffset: 3, LastOffset: 5, Release: &rel}, []Range{{3, 6, "released"}}},
		{"savepoint_to_the_end_of_time", &timeline.Savepoint{FirstOffset: 3, LastOffset: 1<<63 - 1}, nil},
		{"savepoint_backwards", &timeline.Savepoint{FirstOffset: 5, LastOffset: 3}, nil},
		{"rollback", &timeline.Rollback{Instant: at(1), InstantAction: timeline.ActionClean, InstantState: timeline.Inflight}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Affects(timeline.Instant{Action: tt.p.Action(), State: timeline.Completed, Result: tt.p})
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSummary: one sentence per action, not the payload's JSON (a
// savepoint's lists every segment of the log).
func TestSummary(t *testing.T) {
	roll := timeline.Instant{Action: timeline.ActionRoll, Result: &timeline.Roll{Reason: "segment.ms", NewBaseOffset: 3}}
	if Summary(roll) != "segment.ms: new active segment at 3" {
		t.Errorf("roll: %q", Summary(roll))
	}
	sp := timeline.Instant{Action: timeline.ActionSavepoint, Result: &timeline.Savepoint{Label: "q1", FirstOffset: 1, LastOffset: 9,
		Segments: []timeline.SegmentRef{{BaseOffset: 0, NextOffset: 10}}}}
	if got := Summary(sp); got != `savepoint "q1": a hold on offsets 1-9 (and every later segment)` {
		t.Errorf("savepoint: %q", got)
	}
}

type clock struct{ ms int64 }

func (c *clock) Now() time.Time { return time.UnixMilli(c.ms) }

// buildLog writes offsets 0-2 (one batch, zstd, a 64 KiB value each),
// then a batch with no records covering offsets 3-6 (what the cleaner
// leaves of a batch it emptied), then 7, into a new segment from 3 on.
func buildLog(t *testing.T) *kafkalog.Log {
	t.Helper()
	clk := &clock{ms: 1_772_442_000_000}
	fsys := vfs.MemOptions{Clock: clk.Now}.New()
	l, err := kafkalog.Open(fsys, "kafka-logs/t-0", config.Default(), kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var w record.Builder
	spec := record.NewBatchSpec(0, compress.Zstd)
	big := bytes.Repeat([]byte("x"), 64<<10)
	b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: clk.ms, Value: big}, {Timestamp: clk.ms + 1, Value: big}, {Timestamp: clk.ms + 2, Value: big}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(b, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	empty := record.NewBatchSpec(3, compress.None)
	empty.LastOffsetDelta, empty.MaxTimestamp = 3, clk.ms+3
	b, err = w.AppendBatch(nil, &empty, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsFollower(b); err != nil {
		t.Fatal(err)
	}
	spec = record.NewBatchSpec(0, compress.None)
	b, err = w.AppendBatch(nil, &spec, []record.Record{{Timestamp: clk.ms + 7, Value: []byte("seven")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(b, 0); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 8 {
		t.Fatalf("log end offset %d", l.LogEndOffset())
	}
	return l
}

func TestReadFacts(t *testing.T) {
	l := buildLog(t)
	t0 := int64(1_772_442_000_000)
	for _, tt := range []struct {
		n       int64
		present bool
		ts      int64
	}{
		{0, true, t0}, {2, true, t0 + 2},
		{3, false, t0 + 7}, {6, false, t0 + 7}, // in the emptied batch: the next record is 7
		{7, true, t0 + 7},
		{8, false, -1}, {100, false, -1}, // past the end: nothing read
	} {
		f, err := ReadFacts(l, tt.n, 0)
		if err != nil {
			t.Fatalf("offset %d: %v", tt.n, err)
		}
		if f.Present != tt.present || f.Timestamp != tt.ts || f.LogStartOffset != 0 || f.LogEndOffset != 8 || f.ActiveBase != 3 {
			t.Errorf("offset %d: %+v, want present %v, timestamp %d", tt.n, f, tt.present, tt.ts)
		}
		// The answer for the emptied offsets is compaction's.
		if a := Lookup(tt.n, nil, f); tt.n >= 3 && tt.n <= 6 && !strings.Contains(a.Why, "compaction removed it, a compaction the timeline does not hold") {
			t.Errorf("offset %d: %q", tt.n, a.Why)
		}
	}
	// The bound: the first batch decompresses to 192 KiB.
	if _, err := ReadFacts(l, 1, 64<<10); !errors.Is(err, format.ErrTooLarge) {
		t.Errorf("a 64 KiB bound on a 192 KiB batch: %v", err)
	}
	if f, err := ReadFacts(l, 1, 256<<10); err != nil || !f.Present {
		t.Errorf("a 256 KiB bound: %+v, %v", f, err)
	}
}

// TestText: the lines `segviz history --offset N` prints.
func TestText(t *testing.T) {
	roll := timeline.Instant{Time: at(1000), Completed: at(1001), Action: timeline.ActionRoll, State: timeline.Completed,
		Result: &timeline.Roll{Reason: "requested", Closed: &timeline.SegmentRef{BaseOffset: 0, NextOffset: 10}, NewBaseOffset: 10}}
	clean := timeline.Instant{Time: at(2000), Completed: at(2001), Action: timeline.ActionClean, State: timeline.Completed,
		Result: &timeline.Clean{Rule: "time", Config: timeline.RetentionConfig{RetentionMs: 60000}, Now: 2000,
			Segments: []timeline.SegmentRef{{BaseOffset: 0, NextOffset: 10, Size: 100, LargestTimestamp: 500}}, OldLogStartOffset: 0, NewLogStartOffset: 10}}
	insts := []timeline.Instant{roll, clean}
	a := Lookup(4, insts, Facts{LogStartOffset: 10, LogEndOffset: 20, ActiveBase: 10, Timestamp: -1})
	want := "offset 4 of d: not readable: removed by instant 00000000020000000 (clean, completed 00000000020010000 at 1970-01-01T00:00:02.001Z), rule time\n" +
		"  the retention check at 1970-01-01T00:00:02.000Z (rule time: retention.ms=60000; config in force: retention.ms=60000 retention.bytes=0 file.delete.delay.ms=0) deleted segment 0 (offsets 0-9, 100 bytes, largest timestamp 1970-01-01T00:00:00.500Z); log start offset 0 -> 10\n" +
		"  written before 1970-01-01T00:00:01.000Z: the roll of instant 00000000010000000 (requested) closed its segment 0\n"
	if got := a.Text("d"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if a.Removed != &insts[1] || a.Written != &insts[0] {
		t.Error("the answer does not point into insts")
	}
	r := Lookup(12, insts, Facts{LogStartOffset: 10, LogEndOffset: 20, ActiveBase: 10, Present: true, Timestamp: 3000})
	if got := r.Text("d"); got != "offset 12 of d: readable (log start offset 10, log end offset 20); its record's timestamp is 1970-01-01T00:00:03.000Z\n  written into the active segment 10, which still takes appends\n" {
		t.Errorf("readable:\n%s", got)
	}
	// A Written that is not a roll (a caller's hand-made answer) does not
	// panic.
	bad := Answer{Offset: 1, Readable: true, Written: &clean, Facts: Facts{ActiveBase: 5, LogEndOffset: 9}}
	if got := bad.Text("d"); !strings.Contains(got, "is not recorded") {
		t.Errorf("hand-made answer:\n%s", got)
	}
}

// TestLookupTierDelete: below the log start offset, a remote deletion by
// total retention is what removed an offset a tiered partition served
// from its remote — not the local retention that deleted its local copy
// before.
func TestLookupTierDelete(t *testing.T) {
	at := func(ms int64) timeline.InstantTime { return timeline.InstantTime{Millis: ms} }
	inst := func(ms int64, p timeline.Payload) timeline.Instant {
		return timeline.Instant{Time: at(ms), Action: p.Action(), State: timeline.Completed, Completed: at(ms + 1), Result: p}
	}
	insts := []timeline.Instant{
		inst(1000, &timeline.Tier{Op: timeline.TierCopy, Segment: timeline.SegmentRef{BaseOffset: 0, NextOffset: 10}, Remote: "file:///r"}),
		inst(1500, &timeline.Clean{Rule: "time", Local: true, Segments: []timeline.SegmentRef{{BaseOffset: 0, NextOffset: 10}}, OldLogStartOffset: 0, NewLogStartOffset: 10}),
		inst(2000, &timeline.Tier{Op: timeline.TierDelete, Segment: timeline.SegmentRef{BaseOffset: 0, NextOffset: 10}, Remote: "file:///r", Rule: "time"}),
	}
	a := Lookup(5, insts, Facts{LogStartOffset: 10, LogEndOffset: 20, ActiveBase: 10})
	if a.Removed == nil || a.Removed.Time != at(2000) || a.Rule != "time" || !strings.Contains(a.Why, "remote segment 0") {
		t.Fatalf("lookup 5: %+v", a)
	}
	if got := Summary(insts[0]); got != "copied segment 0 (offsets 0-9, 0 bytes) to the remote file:///r" {
		t.Fatalf("summary: %q", got)
	}
	if got := Affects(insts[1]); len(got) != 1 || got[0].What != "remote-only" {
		t.Fatalf("a local deletion affects %+v", got)
	}
}
