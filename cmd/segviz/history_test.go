package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/retentionapply"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// segRange is one segment of a live log: [base, next).
type segRange struct{ base, next int64 }

func segRanges(l *kafkalog.Log) []segRange {
	segs := l.Segments()
	out := make([]segRange, len(segs))
	for i, s := range segs {
		out[i].base = s.BaseOffset()
		if i+1 < len(segs) {
			out[i].next = segs[i+1].BaseOffset()
		} else {
			out[i].next = l.LogEndOffset()
		}
	}
	return out
}

// TestHistoryPaymentsScenario runs the payments scenario of the retention
// docs (retention.ms=60000, segment.ms=180000, a record every 5 s, the
// broker's checks at 1:01, 6:01, ...) with the engine over a fake clock,
// applying each check through the code path of "segviz retention
// --apply", and checks that "segviz history --offset N" names, for every
// offset, what the engine actually did: the check whose deletion of a
// segment took the offset (read from the engine's segments before and
// after each check, not from the timeline), its rule and time; and, for
// the segment the last check rolled before deleting it, that roll.
func TestHistoryPaymentsScenario(t *testing.T) {
	dir := filepath.ToSlash(filepath.Join(t.TempDir(), "kafka-logs", "payments-0"))
	cfg, err := kafkalog.ParseConfig(map[string]string{"retention.ms": "60000", "segment.ms": "180000"})
	if err != nil {
		t.Fatal(err)
	}
	clk := &testClock{ms: startBrk}
	l, err := kafkalog.Open(vfs.OS(), dir, cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tl, err := timeline.Open(vfs.OS(), dir, timeline.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	p := retention.PolicyFrom(cfg, config.DefaultBroker())
	sched := p.NewSchedule(startBrk)
	if sched.NextAtOrAfter(t0) != t0+61_000 {
		t.Fatalf("checks at %s, want 1:01", sched)
	}

	const records = 200 // offsets 0..199, the last at 13:30
	// What the engine did, offset by offset.
	removedAt := map[int64]int64{}
	removedRule := map[int64]string{}
	rolledAt := map[int64]int64{} // the check whose roll closed the offset's segment
	checks, deleting := 0, 0
	var w record.Builder
	next, check := 0, sched.First
	runUntil := func(until int64) {
		for {
			ta := int64(1<<63 - 1)
			if next < records {
				ta = recTime(next)
				if next == 0 {
					ta = recTime(1) - 4000
				}
			}
			if min(ta, check) > until {
				return
			}
			if check <= ta {
				clk.ms = check
				before, start := segRanges(l), l.LogStartOffset()
				rep, err := retentionapply.Check(l, tl, p, check)
				if err != nil {
					t.Fatalf("check at %d: %v", check, err)
				}
				checks++
				after := segRanges(l)
				kept := map[int64]bool{}
				for _, s := range after {
					kept[s.base] = true
				}
				var gone []int64
				for _, s := range before {
					if kept[s.base] {
						continue
					}
					gone = append(gone, s.base)
					i := slices.IndexFunc(rep.Plan.Deletions, func(d retention.Deletion) bool { return d.BaseOffset == s.base })
					if i < 0 {
						t.Fatalf("check at %d: the engine deleted segment %d, which the plan did not", check, s.base)
					}
					for off := max(s.base, start); off < s.next; off++ {
						removedAt[off], removedRule[off] = check, string(rep.Plan.Deletions[i].Reason)
					}
				}
				if len(gone) != len(rep.Plan.Deletions) {
					t.Fatalf("check at %d: the engine deleted %v, the plan %s", check, gone, rep.Plan)
				}
				if len(gone) > 0 {
					deleting++
				}
				if last := before[len(before)-1]; !kept[last.base] && len(after) == 1 && after[0].base == last.next {
					for off := last.base; off < last.next; off++ { // rolled, then deleted
						rolledAt[off] = check
					}
				}
				if l.LogStartOffset() != after[0].base && len(gone) > 0 {
					t.Fatalf("check at %d: log start offset %d, first segment %d", check, l.LogStartOffset(), after[0].base)
				}
				check += sched.Interval
				continue
			}
			clk.ms = ta
			spec := record.NewBatchSpec(0, compress.None)
			b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: ta, Value: fmt.Appendf(nil, "payment-%d", next)}})
			if err != nil {
				t.Fatal(err)
			}
			if res, err := l.Append(b, 0); err != nil || res.FirstOffset != int64(next) {
				t.Fatalf("append %d: %+v, %v", next, res, err)
			}
			next++
		}
	}
	// offsetsAgree runs history --offset for every offset up to the log
	// end (and one past) and compares it with what the engine did.
	offsetsAgree := func(when string) {
		t.Helper()
		insts, _ := timelineInstants(t, dir)
		completed := map[int64]int64{}
		for _, inst := range insts {
			completed[inst.Time.Millis] = inst.Completed.Millis
		}
		start, end := l.LogStartOffset(), l.LogEndOffset()
		for off := int64(0); off <= end; off++ {
			m := historyOffsetJSON(t, dir, off)
			readable := off >= start && off < end
			if _, gone := removedAt[off]; off < end && gone == readable {
				t.Fatalf("%s: offset %d: the engine removed it %v, yet the log has %d..%d", when, off, gone, start, end-1)
			}
			want := map[string]any{"offset": off, "readable": readable, "writtenBy": nil, "removedBy": nil, "rule": nil, "at": nil}
			if at, ok := removedAt[off]; ok {
				want["removedBy"], want["rule"], want["at"] = at, removedRule[off], completed[at]
			}
			if at, ok := rolledAt[off]; ok {
				want["writtenBy"] = at
			}
			for k, v := range m {
				if num(v) != want[k] {
					t.Fatalf("%s: history --offset %d: %v, want %v", when, off, m, want)
				}
			}
		}
	}

	// Through the check at 11:01: offsets 0..36 went at 1:01 and 37..72
	// at 6:01, as on the broker.
	runUntil(t0 + 11*minute + 1000)
	if removedAt[36] != t0+61_000 || removedAt[37] != at601 || removedAt[72] != at601 || removedRule[72] != "time" {
		t.Fatalf("offset 36 went at %d, 37 at %d, 72 at %d (%s): want 1:01, 6:01, 6:01 (time)", removedAt[36], removedAt[37], removedAt[72], removedRule[72])
	}
	// Segment 73 (from 3:00) rolled at 6:00 and went at 11:01; the
	// segment after it is still there.
	if removedAt[73] != t0+11*minute+1000 || l.LogStartOffset() <= 73 || l.LogStartOffset() >= l.LogEndOffset() {
		t.Fatalf("offset 73 went at %d; log start offset %d, log end offset %d", removedAt[73], l.LogStartOffset(), l.LogEndOffset())
	}
	offsetsAgree("at 11:01")
	// Through 21:01: the last record was written at 13:30, so the check
	// at 16:01 finds every segment older than retention.ms, rolls and
	// deletes them all.
	runUntil(t0 + 21*minute + 1000)
	if next != records || l.LogStartOffset() != records || len(rolledAt) == 0 || rolledAt[records-1] != t0+16*minute+1000 {
		t.Fatalf("at 21:01: %d appended, log start offset %d, rolled %v", next, l.LogStartOffset(), rolledAt)
	}
	offsetsAgree("at 21:01")

	// The timeline holds one instant per deleting check (one rule each
	// here), plus the roll.
	insts, pending := timelineInstants(t, dir)
	if len(insts) != deleting+1 || pending != 0 || checks != 6 {
		t.Fatalf("%d instants, %d pending, for %d checks of which %d deleted", len(insts), pending, checks, deleting)
	}
	code, out, _ := runSegviz("history", "--offset", "72", dir)
	if code != exitOK || !strings.Contains(out, "removed by instant "+timeline.InstantTime{Millis: at601}.String()+" (clean") ||
		!strings.Contains(out, "rule time") || !strings.Contains(out, "segment 37 (offsets 37-72") {
		t.Fatalf("history --offset 72:\n%s", out)
	}
}

// TestHistoryLookupOffset covers the answers the CLI cannot produce yet
// (truncations, compactions, a start offset moved outside the timeline)
// on hand-made instants.
func TestHistoryLookupOffset(t *testing.T) {
	at := func(ms int64) timeline.InstantTime { return timeline.InstantTime{Millis: ms} }
	inst := func(ms int64, p timeline.Payload) timeline.Instant {
		return timeline.Instant{Time: at(ms), Action: p.Action(), State: timeline.Completed, Completed: at(ms + 1), Plan: p, Result: p}
	}
	insts := []timeline.Instant{
		inst(1000, &timeline.Roll{Reason: "segment.bytes", Closed: &timeline.SegmentRef{BaseOffset: 0, NextOffset: 10}, NewBaseOffset: 10}),
		inst(2000, &timeline.Clean{Rule: "time", Segments: []timeline.SegmentRef{{BaseOffset: 0, NextOffset: 10}}, OldLogStartOffset: 0, NewLogStartOffset: 10}),
		// A DeleteRecords request (not recorded) moved the start to 15;
		// the next check deleted segment 10 by the start offset rule.
		inst(3000, &timeline.Clean{Rule: "logStartOffset", Segments: []timeline.SegmentRef{{BaseOffset: 10, NextOffset: 20}}, OldLogStartOffset: 15, NewLogStartOffset: 15}),
		inst(4000, &timeline.Truncate{Reason: "divergence", OldLogEndOffset: 50, NewLogEndOffset: 45, OldLogStartOffset: 20, NewLogStartOffset: 20}),
		inst(5000, &timeline.Compaction{Sources: []timeline.SegmentRef{{BaseOffset: 20, NextOffset: 40}}}),
	}
	facts := logFacts{logStartOffset: 20, logEndOffset: 45, activeBase: 40}
	ptr := func(v int64) *int64 { return &v }
	str := func(s string) *string { return &s }
	for _, tt := range []struct {
		name    string
		offset  int64
		facts   logFacts
		want    offsetJSON
		wantWhy string
	}{
		{"removed_by_time", 5, facts, offsetJSON{5, false, ptr(1000), ptr(2000), str("time"), ptr(2001)}, "log start offset 0 -> 10"},
		{"start_moved_outside_the_timeline", 12, facts, offsetJSON{12, false, nil, ptr(3000), str("logStartOffset"), ptr(3001)}, "a DeleteRecords request"},
		{"unrecorded", 21, logFacts{logStartOffset: 22, logEndOffset: 45, activeBase: 40}, offsetJSON{21, false, nil, nil, nil, nil}, "something segkit did not record"},
		{"truncated", 47, facts, offsetJSON{47, false, nil, ptr(4000), str("truncate"), ptr(4001)}, "log end offset 50 -> 45"},
		{"not_written", 60, facts, offsetJSON{60, false, nil, nil, nil, nil}, "not written yet"},
		{"compacted", 30, facts, offsetJSON{30, false, nil, nil, nil, nil}, "compaction removed it; the compaction instants that covered it: 00000000050000000"},
		{"readable", 30, logFacts{logStartOffset: 20, logEndOffset: 45, activeBase: 40, present: true}, offsetJSON{30, true, nil, nil, nil, nil}, "readable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := lookupOffset(tt.offset, insts, tt.facts)
			got, _ := json.Marshal(a.json())
			want, _ := json.Marshal(tt.want)
			if string(got) != string(want) || !strings.Contains(a.why, tt.wantWhy) {
				t.Fatalf("got %s (%s), want %s (%q)", got, a.why, want, tt.wantWhy)
			}
		})
	}
}

// TestHistoryReadOnly: history on a partition without a timeline lists
// nothing and writes nothing, not even the timeline's directory.
func TestHistoryReadOnly(t *testing.T) {
	dir := buildPayments(t)
	root := filepath.Dir(filepath.Dir(dir))
	before := snapshot(t, root)
	code, out, errs := runSegviz("history", dir)
	if code != exitOK || !strings.Contains(out, "0 instants") || !strings.Contains(out, "segkit has recorded no change") {
		t.Fatalf("history: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := runSegviz("history", "--json", dir); code != exitOK || out != "" {
		t.Fatalf("history --json: exit %d, %q", code, out)
	}
	m := historyOffsetJSON(t, dir, 40)
	if m["readable"] != true || m["removedBy"] != nil || m["writtenBy"] != nil {
		t.Fatalf("offset 40: %v", m)
	}
	_, out, _ = runSegviz("history", "--offset", "40", dir)
	if !strings.Contains(out, "readable (log start offset 0, log end offset 74); its record's timestamp is 2026-03-02T09:00:15.009Z") {
		t.Fatalf("history --offset 40:\n%s", out)
	}
	if after := snapshot(t, root); after != before {
		t.Fatalf("history wrote:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// TestHistoryPending: an instant left inflight (a crash mid --apply) is
// not listed; history says so; the next --apply resolves it.
func TestHistoryPending(t *testing.T) {
	dir := buildPayments(t)
	tl, err := timeline.Open(vfs.OS(), filepath.ToSlash(dir), timeline.Options{Clock: &testClock{ms: t0 + 200_000}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := tl.Begin(timeline.ActionClean, &timeline.Clean{Rule: "time", Now: t0 + 200_000,
		Segments: []timeline.SegmentRef{{BaseOffset: 0, NextOffset: 37}}, NewLogStartOffset: 37})
	if err == nil {
		err = x.Inflight()
	}
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := runSegviz("history", dir)
	if code != exitOK || !strings.Contains(out, "0 instants") || !strings.Contains(out, "1 instant left requested or inflight") {
		t.Fatalf("history: exit %d\n%s", code, out)
	}
	code, out, errs := runSegviz("retention", "--apply", "--retention.ms", "60000", "--now", fmt.Sprint(t0+235_106), dir)
	if code != exitProblem || !strings.Contains(errs, "rolled back the clean instant "+x.Instant().Time.String()+" an interrupted run left inflight") {
		t.Fatalf("--apply: exit %d\n%s%s", code, out, errs)
	}
	insts, pending := timelineInstants(t, dir)
	if len(insts) != 2 || pending != 0 || insts[0].Action != timeline.ActionRollback || insts[1].Action != timeline.ActionClean {
		t.Fatalf("instants %v, %d pending", insts, pending)
	}
	_, out, _ = runSegviz("history", dir)
	if !strings.Contains(out, "rolled back the clean instant "+x.Instant().Time.String()+" (inflight)") {
		t.Fatalf("history:\n%s", out)
	}
}

// TestHistoryDamagedTimeline: a damaged instant file is reported, exit 1.
func TestHistoryDamagedTimeline(t *testing.T) {
	dir := buildPayments(t)
	if code, _, errs := runSegviz("retention", "--apply", "--retention.ms", "60000", "--now", fmt.Sprint(t0+235_106), dir); code != exitProblem {
		t.Fatalf("--apply: exit %d: %s", code, errs)
	}
	files, _ := filepath.Glob(filepath.Join(timeline.Dir(dir), "*_*.clean"))
	if len(files) != 1 {
		t.Fatalf("instant files %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	b[20] ^= 1
	if err := os.WriteFile(files[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"history", dir}, {"history", "--offset", "40", dir}} {
		if code, _, errs := runSegviz(args...); code != exitProblem || !strings.Contains(errs, files[0]) {
			t.Errorf("%q: exit %d, want 1 naming %s: %s", args, code, files[0], errs)
		}
	}
	// --apply will not write beside a timeline it cannot read.
	if code, _, errs := runSegviz("retention", "--apply", "--now", fmt.Sprint(at601), dir); code != exitFailure || !strings.Contains(errs, "nothing was deleted") {
		t.Errorf("--apply on a damaged timeline: exit %d: %s", code, errs)
	}
}

func TestHistoryUsage(t *testing.T) {
	dir := buildPayments(t)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"history", "--help"}, exitOK, "Examples:"},
		{[]string{"help", "history"}, exitOK, `{"offset", "readable", "writtenBy", "removedBy", "rule", "at"}`},
		{[]string{"history"}, exitUsage, "want one partition directory"},
		{[]string{"history", "--since", "1", "--offset", "3", dir}, exitUsage, "at most one of"},
		{[]string{"history", "--time", "1", "--since", "1", dir}, exitUsage, "at most one of"},
		{[]string{"history", "--offset", "-1", dir}, exitUsage, "want an offset"},
		{[]string{"history", "--since", "yesterday", dir}, exitUsage, "neither epoch milliseconds nor an RFC 3339 time"},
		{[]string{"history", "--time", "99999999999999", dir}, exitUsage, "outside the times"},
		{[]string{"history", filepath.Dir(dir)}, exitUsage, "partition directory"},
		{[]string{"history", filepath.Join(dir, "missing")}, exitFailure, "no such file"},
	} {
		code, out, errs := runSegviz(tt.args...)
		if code != tt.code || !strings.Contains(out+errs, tt.want) {
			t.Errorf("%q: exit %d, want %d with %q\nstdout: %s\nstderr: %s", tt.args, code, tt.code, tt.want, out, errs)
		}
	}
	if code, out, _ := runSegviz("help"); code != exitOK || !strings.Contains(out, "  history ") {
		t.Errorf("segviz help lacks history:\n%s", out)
	}
}
