package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/retentionapply"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// TestHistoryOrdersScenario runs the orders scenario of the retention
// docs (1 KiB records in batches of 15, segment.bytes=1 MiB,
// retention.bytes=2 MiB: the size rule) for a simulated week through the
// engine with its timeline (kafkalog Options.Timeline: the engine records
// its rolls), a batch every 10 minutes and the broker's retention check
// every 5 minutes applied through the code path of "segviz retention
// --apply". For a sample of offsets — both sides of every segment
// boundary, and every 41st — "segviz history --offset N" must name what
// the engine did, read from the engine itself rather than the timeline:
// the check whose deletion took the offset's segment (the segments before
// and after each check), by rule size, and the roll that closed it (the
// append that reported a roll).
func TestHistoryOrdersScenario(t *testing.T) {
	const (
		perBatch = 15
		every    = 10 * 60 * 1000 // ms between batches
		week     = 7 * 24 * 60 * 60 * 1000
	)
	dir := filepath.ToSlash(filepath.Join(t.TempDir(), "kafka-logs", "orders-0"))
	cfg, err := kafkalog.ParseConfig(map[string]string{config.SegmentBytes: "1048576", config.RetentionBytes: "2097152"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixMilli()
	clk := &testClock{ms: start}
	l, err := kafkalog.Open(vfs.OS(), dir, cfg, kafkalog.Options{Clock: clk, Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := retention.PolicyFrom(cfg, config.DefaultBroker())
	sched := p.NewSchedule(start)

	removedAt := map[int64]int64{} // segment base -> the check that deleted it
	removedRule := map[int64]string{}
	closedAt := map[int64]int64{} // segment base -> the append that rolled it
	var everSeg []segRange        // every segment the log ever had, once closed
	value := make([]byte, 1000)
	var w record.Builder
	recs := make([]record.Record, perBatch)
	checks, deleting := 0, 0
	next, check := start, sched.First
	for min(next, check) <= start+week {
		if check <= next {
			clk.ms = check
			before := segRanges(l)
			rep, err := retentionapply.Check(l, l.Timeline(), p, check)
			if err != nil {
				t.Fatalf("check at %d: %v", check, err)
			}
			checks++
			after := segRanges(l)
			kept := map[int64]bool{}
			for _, s := range after {
				kept[s.base] = true
			}
			gone := 0
			for _, s := range before {
				if kept[s.base] {
					continue
				}
				gone++
				i := slices.IndexFunc(rep.Plan.Deletions, func(d retention.Deletion) bool { return d.BaseOffset == s.base })
				if i < 0 {
					t.Fatalf("check at %d: the engine deleted segment %d, which the plan did not", check, s.base)
				}
				removedAt[s.base], removedRule[s.base] = check, string(rep.Plan.Deletions[i].Reason)
			}
			if gone > 0 {
				deleting++
			}
			check += sched.Interval
			continue
		}
		clk.ms = next
		for i := range recs {
			recs[i] = record.Record{Timestamp: next, Key: fmt.Appendf(nil, "order-%d", i), Value: value}
		}
		spec := record.NewBatchSpec(0, compress.None)
		b, err := w.AppendBatch(nil, &spec, recs)
		if err != nil {
			t.Fatal(err)
		}
		before := segRanges(l)
		res, err := l.Append(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Rolled {
			closed := before[len(before)-1]
			closedAt[closed.base] = next
			everSeg = append(everSeg, closed)
		}
		next += every
	}
	if len(everSeg) < 12 || deleting < 10 || len(removedAt) < 10 {
		t.Fatalf("a week of %d checks closed %d segments and %d checks deleted %d: the scenario does not exercise the size rule", checks, len(everSeg), deleting, len(removedAt))
	}
	for base, rule := range removedRule {
		if rule != string(retention.ReasonSize) {
			t.Fatalf("segment %d went by rule %s, not size", base, rule)
		}
	}

	insts, pending := timelineInstants(t, dir)
	completed := map[int64]int64{}
	for _, inst := range insts {
		completed[inst.Time.Millis] = inst.Completed.Millis
	}
	if pending != 0 {
		t.Fatalf("%d instants pending", pending)
	}
	segOf := func(off int64) (segRange, bool) {
		for _, s := range everSeg {
			if s.base <= off && off < s.next {
				return s, true
			}
		}
		return segRange{}, false
	}
	sample := map[int64]bool{l.LogEndOffset(): true}
	for _, s := range everSeg {
		for _, off := range []int64{s.base - 1, s.base, s.next - 1} {
			if off >= 0 {
				sample[off] = true
			}
		}
	}
	for off := int64(0); off < l.LogEndOffset(); off += 41 {
		sample[off] = true
	}
	startOff, end := l.LogStartOffset(), l.LogEndOffset()
	for off := range sample {
		m := historyOffsetJSON(t, dir, off)
		want := map[string]any{"offset": off, "readable": off >= startOff && off < end, "writtenBy": nil, "removedBy": nil, "rule": nil, "at": nil}
		if s, ok := segOf(off); ok {
			want["writtenBy"] = closedAt[s.base]
			if at, ok := removedAt[s.base]; ok {
				want["removedBy"], want["rule"], want["at"] = at, removedRule[s.base], completed[at]
			}
		}
		if _, gone := want["removedBy"].(int64); gone == want["readable"].(bool) && off < end {
			t.Fatalf("offset %d: removed %v, yet the log holds %d..%d", off, gone, startOff, end-1)
		}
		for k, v := range m {
			if num(v) != want[k] {
				t.Fatalf("history --offset %d: %v, want %v", off, m, want)
			}
		}
	}
	// One roll instant per roll, one clean instant per deleting check.
	var rolls, cleans int
	for _, inst := range insts {
		switch inst.Action {
		case timeline.ActionRoll:
			rolls++
		case timeline.ActionClean:
			cleans++
		}
	}
	if rolls != len(everSeg) || cleans != deleting {
		t.Fatalf("%d roll and %d clean instants for %d rolls and %d deleting checks", rolls, cleans, len(everSeg), deleting)
	}
	t.Logf("a week: %d checks, %d rolls, %d deleting checks, %d offsets asked, timeline of %d instants", checks, len(everSeg), deleting, len(sample), len(insts))
}
