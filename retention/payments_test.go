package retention_test

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"
	"time"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// The payments scenario, as measured on a Kafka 4.3 broker: topic payments,
// retention.ms=60000, segment.ms=180000, one record every 5 s.
//
//	0:00  offset 37 is written and opens a new segment
//	2:55  offset 72 is written: the segment's newest record
//	3:00  offset 73 arrives past segment.ms, and the segment rolls
//	3:55  offset 72 is one minute old: the segment qualifies
//	6:01  the next retention check deletes the segment
//
// Times are relative to 0:00 = payT0. The producer's records are 5 s apart
// plus 3 ms of skew each (a real producer's loop is never exactly on
// time), which is what makes offset 73 "past segment.ms": the segment rolls
// only when a record is strictly more than segment.ms newer than its first
// batch (LogSegment.shouldRoll's `>`), and with exact 5 s steps offset 73
// would be exactly 180000 ms after offset 37 and join its segment.
//
// The check phase: the broker checks every 5 minutes
// (log.retention.check.interval.ms) from log.initial.task.delay.ms (30 s)
// after it starts. Checks at 1:01 and 6:01 — and none between 3:55 and 6:01
// — put the broker's start at -4:29 (first check at -3:59, then 1:01,
// 6:01, 11:01, ...): a start at -0:29 would check at 5:01 instead.
var (
	payT0      = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixMilli()
	payStart   = payT0 - (4*60+29)*1000 // broker start, -4:29
	payGone    = payT0 + (6*60+1)*1000  // 6:01
	paySkew    = int64(3)               // ms added to each 5 s step
	payRecords = 200                    // offsets 0..199, to 13:36
)

// payTime is when offset k is written: offsets 1.. every 5003 ms, offset
// 37 at 0:00; offset 0, the first the producer sent, 4 s before offset 1
// (so that offsets 0..36 share the first segment, as on the broker).
func payTime(k int) int64 {
	if k == 0 {
		return payTime(1) - 4000
	}
	return payT0 + int64(k-37)*(5000+paySkew)
}

func paymentsConfig(t testing.TB) kafkalog.Config {
	return mustConfig(t, map[string]string{
		config.RetentionMs: "60000",
		config.SegmentMs:   "180000",
	})
}

// payments drives a log and a Cleaner through the scenario, one event at
// a time, in time order: appends and the Cleaner's checks (and removals
// of .deleted files), checks first when they coincide.
type payments struct {
	t       *testing.T
	clk     *clock
	mem     *vfs.Mem
	l       *kafkalog.Log
	cl      *retention.Cleaner
	w       record.Builder
	next    int // next offset to append
	lastRes kafkalog.AppendResult
	checks  []checkResult
}

type checkResult struct {
	at   int64
	plan retention.Plan
}

const payDir = "kafka-logs/payments-0"

func newPayments(t *testing.T) *payments {
	clk := &clock{ms: payStart}
	mem := vfs.MemOptions{Clock: clk.Now}.New()
	l, err := kafkalog.Open(mem, payDir, paymentsConfig(t), kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	h := &payments{t: t, clk: clk, mem: mem, l: l}
	h.cl = retention.NewCleaner(func() []*kafkalog.Log { return []*kafkalog.Log{l} }, config.DefaultBroker(), clk)
	return h
}

// runUntil processes every event at or before until, and leaves the clock
// at until.
func (h *payments) runUntil(until int64) {
	h.t.Helper()
	for {
		ta := int64(1<<63 - 1)
		if h.next < payRecords {
			ta = payTime(h.next)
		}
		tc := h.cl.NextRun().UnixMilli()
		tm := min(ta, tc)
		if tm > until {
			break
		}
		h.clk.ms = tm
		if tc <= ta {
			res, err := h.cl.RunDue(time.UnixMilli(tm))
			if err != nil {
				h.t.Fatalf("check at %s: %v", at(tm, payT0), err)
			}
			for _, r := range res {
				h.checks = append(h.checks, checkResult{tm, r.Plan})
			}
			continue
		}
		h.lastRes = appendRecord(h.t, h.l, &h.w, ta, fmt.Sprintf("payment-%d", h.next))
		if h.lastRes.FirstOffset != int64(h.next) {
			h.t.Fatalf("offset %d appended as %d", h.next, h.lastRes.FirstOffset)
		}
		h.next++
	}
	h.clk.ms = until
}

func (h *payments) state() retention.LogState {
	h.t.Helper()
	st, err := retention.StateOf(h.l)
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

func (h *payments) exists(base int64, suffix string) bool {
	_, err := h.mem.Stat(segment.Path(payDir, base, suffix))
	return !errors.Is(err, fs.ErrNotExist)
}

func TestPaymentsScenario(t *testing.T) {
	cfg := paymentsConfig(t)
	policy := retention.PolicyFrom(cfg, config.DefaultBroker())
	sched := policy.NewSchedule(payStart)
	if want := payT0 + 61_000 - 5*60_000; sched.First != want {
		t.Fatalf("first check at %s, want -3:59", at(sched.First, payT0))
	}

	// Before the simulation runs: the log as it is at 0:00, once offset 37
	// has opened segment 37 (offsets 0..36 in segment 0, newest at
	// -0:05.003). Segment 37 is active: records can join it until
	// segment.ms after its first batch, 3:00; the newest can be stamped
	// 3:00, which is more than retention.ms old from 4:00.001, and the
	// first check after that is 6:01.
	predicted := retention.LogState{
		Segments: []retention.SegmentInfo{
			{BaseOffset: 0, Size: 37 * 80, LargestRecordTimestamp: payTime(36), FirstBatchTimestamp: payTime(0), LastModified: payTime(36)},
			{BaseOffset: 37, Size: 80, LargestRecordTimestamp: payT0, FirstBatchTimestamp: payT0, LastModified: payT0},
		},
		LogStartOffset: 0, LogEndOffset: 38, HighWatermark: 38,
	}
	f, err := retention.ReadableUntil(predicted, policy, sched, payT0)
	if err != nil {
		t.Fatal(err)
	}
	b37, ok := f.ForOffset(72)
	if ok {
		t.Fatalf("offset 72 is not written yet at 0:00, but ForOffset found %+v", b37)
	}
	b37, _ = f.ForOffset(37)
	if b37.BaseOffset != 37 || b37.ReadableUntil != payGone {
		t.Fatalf("predicted segment 37 readable until %s, want 6:01: %s", at(b37.ReadableUntil, payT0), b37.Explanation)
	}
	// If nothing more were written, everything would qualify at the 1:01
	// check, and the log would roll to delete segment 37 too.
	if b37.IfIdle != payT0+61_000 {
		t.Fatalf("segment 37 if idle: %s, want 1:01", at(b37.IfIdle, payT0))
	}
	if b0, _ := f.ForOffset(0); b0.ReadableUntil != payT0+61_000 || b0.Reason != retention.ReasonTime {
		t.Fatalf("segment 0 readable until %s (%s), want 1:01", at(b0.ReadableUntil, payT0), b0.Reason)
	}
	t.Logf("prediction at 0:00: %s", b37.Explanation)

	h := newPayments(t)
	if got := h.cl.Schedule(); got != sched {
		t.Fatalf("Cleaner schedule %+v, want %+v", got, sched)
	}

	// 0:00: offset 37 is written and opens a new segment.
	h.runUntil(payT0)
	if h.lastRes.FirstOffset != 37 || !h.lastRes.Rolled {
		t.Fatalf("0:00: offset %d appended, rolled %v", h.lastRes.FirstOffset, h.lastRes.Rolled)
	}
	if got := bases(h.l); !slices.Equal(got, []int64{0, 37}) {
		t.Fatalf("0:00: segments %v, want [0 37]", got)
	}
	if len(h.checks) != 1 || len(h.checks[0].plan.Deletions) != 0 {
		t.Fatalf("0:00: checks so far %+v, want one at -3:59 that deleted nothing", h.checks)
	}
	// The engine's state gives the same forecast as the description.
	f2, err := retention.ReadableUntil(h.state(), policy, h.cl.Schedule(), payT0)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := f2.ForOffset(37); b.ReadableUntil != payGone || b.IfIdle != payT0+61_000 {
		t.Fatalf("0:00, from the engine: segment 37 until %s, if idle %s", at(b.ReadableUntil, payT0), at(b.IfIdle, payT0))
	}

	// 1:01: the check deletes segment 0 (newest record -0:05.003, more than
	// a minute old).
	h.runUntil(payT0 + 61_000)
	if c := h.checks[len(h.checks)-1]; c.at != payT0+61_000 || len(c.plan.Deletions) != 1 || c.plan.Deletions[0].BaseOffset != 0 || c.plan.Deletions[0].Reason != retention.ReasonTime {
		t.Fatalf("1:01: %+v", c)
	}
	if h.l.LogStartOffset() != 37 {
		t.Fatalf("1:01: log start offset %d, want 37", h.l.LogStartOffset())
	}

	// 2:55: offset 72 is written, the segment's newest record.
	h.runUntil(payT0 + 175_105)
	if h.lastRes.FirstOffset != 72 || h.lastRes.Rolled {
		t.Fatalf("2:55: offset %d, rolled %v", h.lastRes.FirstOffset, h.lastRes.Rolled)
	}
	if ts, _, _ := h.l.ActiveSegment().MaxTimestampSoFar(); ts != payTime(72) || ts != payT0+175_105 {
		t.Fatalf("2:55: segment 37's newest timestamp %s", at(ts, payT0))
	}

	// 3:00: offset 73 arrives past segment.ms (180108 ms after the first
	// batch), and the segment rolls.
	h.runUntil(payT0 + 180_108)
	if h.lastRes.FirstOffset != 73 || !h.lastRes.Rolled {
		t.Fatalf("3:00: offset %d, rolled %v", h.lastRes.FirstOffset, h.lastRes.Rolled)
	}
	if got := bases(h.l); !slices.Equal(got, []int64{37, 73}) {
		t.Fatalf("3:00: segments %v", got)
	}
	st := h.state()
	if s := st.Segments[0]; s.LargestRecordTimestamp != payTime(72) || s.LargestTimestamp() != payTime(72) {
		t.Fatalf("3:00: segment 37's largest timestamp %s, want offset 72's", at(s.LargestTimestamp(), payT0))
	}
	// Its largest timestamp is final now: the forecast is exact.
	f3, err := retention.ReadableUntil(st, policy, h.cl.Schedule(), h.clk.ms)
	if err != nil {
		t.Fatal(err)
	}
	if b := f3.Segments[0]; b.ReadableUntil != payGone || b.IfIdle != payGone || b.OnDiskUntil != payGone+60_000 {
		t.Fatalf("3:00: segment 37 until %s (idle %s, disk %s)", at(b.ReadableUntil, payT0), at(b.IfIdle, payT0), at(b.OnDiskUntil, payT0))
	}

	// 3:55: offset 72 is one minute old, so the segment qualifies: from
	// 3:55.106 (now - 2:55.105 > 60000).
	h.runUntil(payT0 + 235_105)
	if p, _ := policy.Plan(h.state(), h.clk.ms); len(p.Deletions) != 0 {
		t.Fatalf("3:55.105: segment 37 qualifies already: %v", p)
	}
	p, _ := policy.Plan(h.state(), payT0+235_106)
	if len(p.Deletions) != 1 || p.Deletions[0].BaseOffset != 37 || p.Deletions[0].Reason != retention.ReasonTime ||
		p.Deletions[0].LargestTimestamp != payTime(72) || p.NewLogStartOffset != 73 {
		t.Fatalf("3:55.106: %v", p)
	}
	t.Logf("3:55.106: %s", p.Deletions[0].Explanation)

	// Until 6:01 it stays readable: no check runs between 1:01 and 6:01.
	h.runUntil(payGone - 1)
	if r, err := readOne(h.l, 72); err != nil || r.Value != "payment-72" {
		t.Fatalf("6:00.999: offset 72: %+v, %v", r, err)
	}
	if h.l.LogStartOffset() != 37 {
		t.Fatalf("6:00.999: log start offset %d", h.l.LogStartOffset())
	}

	// 6:01: the next retention check deletes the segment.
	h.runUntil(payGone)
	c := h.checks[len(h.checks)-1]
	if c.at != payGone || len(c.plan.Deletions) != 1 || c.plan.Deletions[0].BaseOffset != 37 || c.plan.Deletions[0].Reason != retention.ReasonTime {
		t.Fatalf("6:01: %+v", c)
	}
	if h.l.LogStartOffset() != 73 {
		t.Fatalf("6:01: log start offset %d, want 73", h.l.LogStartOffset())
	}
	for _, off := range []int64{37, 72} {
		if _, err := readOne(h.l, off); !errors.Is(err, kafkalog.ErrOffsetOutOfRange) {
			t.Fatalf("6:01: offset %d: %v, want out of range", off, err)
		}
	}
	if r, err := readOne(h.l, 73); err != nil || r.Value != "payment-73" {
		t.Fatalf("6:01: offset 73: %+v, %v", r, err)
	}
	if !h.exists(37, segment.LogSuffix+segment.DeletedSuffix) || h.exists(37, segment.LogSuffix) {
		t.Fatal("6:01: segment 37 is not renamed to .deleted")
	}
	if h.exists(37, segment.SnapshotSuffix) {
		t.Fatal("6:01: the producer snapshot at 37 is still there")
	}
	if !h.exists(73, segment.SnapshotSuffix) {
		t.Fatal("6:01: the producer snapshot at 73 went too")
	}

	// 7:01: file.delete.delay.ms later, the files are removed.
	h.runUntil(payGone + 59_999)
	if !h.exists(37, segment.LogSuffix+segment.DeletedSuffix) {
		t.Fatal("7:00.999: the .deleted files are gone early")
	}
	h.runUntil(payGone + 60_000)
	for _, suf := range []string{segment.LogSuffix, segment.IndexSuffix, segment.TimeIndexSuffix} {
		if h.exists(37, suf+segment.DeletedSuffix) {
			t.Fatalf("7:01: %s%s is still there", segment.FileName(37, suf), segment.DeletedSuffix)
		}
	}

	// The rest of the log follows the same rule: at 11:01 segments 73
	// (newest record 5:55.213) and 109 (8:55.321) go; segment 145, active
	// since 9:00.324, stays.
	h.runUntil(payT0 + 11*60_000 + 1000)
	if got := bases(h.l); !slices.Equal(got, []int64{145}) || h.l.LogStartOffset() != 145 {
		t.Fatalf("11:01: segments %v, log start offset %d, want [145] and 145", got, h.l.LogStartOffset())
	}
	got := readAll(t, h.l)
	if len(got) == 0 || got[0].Offset != 145 {
		t.Fatalf("11:01: first record read %+v", got[:min(1, len(got))])
	}
}
