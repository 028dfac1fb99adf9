package retention_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/vfs"
)

// ---- Input codec -------------------------------------------------------
//
// A fuzz input is a byte string read as varints; reading past the end
// gives zeros, so every input decodes. The generator (gen_test.go) builds
// seeds from planCase values with encode.

// reader reads the fields of a fuzz input.
type reader struct{ b []byte }

func (r *reader) u8() byte {
	if len(r.b) == 0 {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) uvar() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) svar() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Flags of a planCase.
const (
	fDelete  = 1 << iota // cleanup.policy has delete
	fCompact             // cleanup.policy has compact
	fUnknown             // the schedule's phase is unknown
	fTraffic             // FuzzReadableUntil: records keep coming
)

// planSeg is one segment of a planCase, with times relative to now.
type planSeg struct {
	Gap      uint64 // base = previous base + 1 + Gap (the first: FirstBase + Gap)
	Size     uint64
	HasTs    bool
	Ts       int64  // LargestRecordTimestamp - now
	FirstLag uint64 // LargestRecordTimestamp - FirstBatchTimestamp
	Mtime    int64  // LastModified - now
}

// planCase is a log state, policy, time and schedule.
type planCase struct {
	Flags      byte
	RetMs      int64 // retention.ms (any value; negative disables)
	RetBytes   int64
	Now        int64
	Interval   uint64 // check interval - 1
	FirstCheck int64  // schedule.First - now
	SegMs      uint64 // segment.ms - 1
	FDD        uint64
	Segs       []planSeg
	LEOExtra   uint64 // records in the active segment beyond its first
	LSODelta   uint64 // log start offset - first base (clamped)
	HWBack     uint64 // log end offset - high watermark (clamped)
	TrafficDt  uint64 // FuzzReadableUntil: ms between batches - 1
	BatchBytes uint64 // FuzzReadableUntil: bytes a batch
	Phase      uint64 // FuzzReadableUntil, unknown phase: where the checks really are
}

func (c planCase) encode() []byte {
	b := []byte{c.Flags}
	b = binary.AppendVarint(b, c.RetMs)
	b = binary.AppendVarint(b, c.RetBytes)
	b = binary.AppendVarint(b, c.Now)
	b = binary.AppendUvarint(b, c.Interval)
	b = binary.AppendVarint(b, c.FirstCheck)
	b = binary.AppendUvarint(b, c.SegMs)
	b = binary.AppendUvarint(b, c.FDD)
	b = binary.AppendUvarint(b, c.LEOExtra)
	b = binary.AppendUvarint(b, c.LSODelta)
	b = binary.AppendUvarint(b, c.HWBack)
	b = binary.AppendUvarint(b, c.TrafficDt)
	b = binary.AppendUvarint(b, c.BatchBytes)
	b = binary.AppendUvarint(b, c.Phase)
	b = append(b, byte(len(c.Segs)-1))
	for _, s := range c.Segs {
		b = binary.AppendUvarint(b, s.Gap)
		b = binary.AppendUvarint(b, s.Size)
		if s.HasTs {
			b = append(b, 1)
			b = binary.AppendVarint(b, s.Ts)
			b = binary.AppendUvarint(b, s.FirstLag)
		} else {
			b = append(b, 0)
		}
		b = binary.AppendVarint(b, s.Mtime)
	}
	return b
}

func decodePlanCase(data []byte) planCase {
	r := &reader{b: data}
	c := planCase{Flags: r.u8(), RetMs: r.svar(), RetBytes: r.svar(), Now: r.svar(), Interval: r.uvar(), FirstCheck: r.svar(),
		SegMs: r.uvar(), FDD: r.uvar(), LEOExtra: r.uvar(), LSODelta: r.uvar(), HWBack: r.uvar(),
		TrafficDt: r.uvar(), BatchBytes: r.uvar(), Phase: r.uvar()}
	n := 1 + int(r.u8())%16
	for range n {
		s := planSeg{Gap: r.uvar() % (1 << 40), Size: r.uvar() % (1 << 40)}
		if r.u8()&1 == 1 {
			s.HasTs, s.Ts, s.FirstLag = true, r.svar(), r.uvar()
		}
		s.Mtime = r.svar()
		c.Segs = append(c.Segs, s)
	}
	return c
}

// build turns a case into a valid state, policy and schedule.
func (c planCase) build() (retention.LogState, retention.Policy, retention.Schedule) {
	p := retention.Policy{
		RetentionMs: c.RetMs, RetentionBytes: c.RetBytes, FileDeleteDelayMs: int64(c.FDD % (1 << 40)),
		RetentionCheckIntervalMs: 1 + int64(c.Interval%(1<<40)), SegmentMs: 1 + int64(c.SegMs%(1<<40)), SegmentBytes: 1 << 30,
	}
	if c.Flags&fDelete != 0 {
		p.CleanupPolicy = append(p.CleanupPolicy, config.CleanupPolicyDelete)
	}
	if c.Flags&fCompact != 0 {
		p.CleanupPolicy = append(p.CleanupPolicy, config.CleanupPolicyCompact)
	}
	sched := retention.Schedule{First: satAdd(c.Now, c.FirstCheck), Interval: p.RetentionCheckIntervalMs, Unknown: c.Flags&fUnknown != 0}
	var st retention.LogState
	base := int64(0)
	for i, s := range c.Segs {
		if i == 0 {
			base = int64(s.Gap)
		} else {
			base += 1 + int64(s.Gap)
		}
		si := retention.SegmentInfo{BaseOffset: base, Size: int64(s.Size), LargestRecordTimestamp: -1, FirstBatchTimestamp: -1, LastModified: satAdd(c.Now, s.Mtime)}
		if s.HasTs {
			ts := satAdd(c.Now, s.Ts)
			if ts < 0 {
				ts = -1 // a negative timestamp is "none"
			}
			si.LargestRecordTimestamp = ts
			if ts >= 0 {
				si.FirstBatchTimestamp = max(ts-int64(s.FirstLag%(1<<40)), 0)
			}
		}
		st.Segments = append(st.Segments, si)
	}
	last := st.Segments[len(st.Segments)-1]
	st.LogEndOffset = last.BaseOffset
	if last.Size > 0 {
		st.LogEndOffset += 1 + int64(c.LEOExtra%(1<<20))
	}
	st.HighWatermark = st.LogEndOffset - min(int64(c.HWBack%(1<<41)), st.LogEndOffset)
	first := st.Segments[0].BaseOffset
	st.LogStartOffset = min(first+int64(c.LSODelta%(1<<41)), st.HighWatermark)
	st.HighWatermark = max(st.HighWatermark, st.LogStartOffset)
	return st, p, sched
}

func satAdd(a, b int64) int64 {
	c := a + b
	if (b > 0 && c < a) || (b < 0 && c > a) {
		if b > 0 {
			return 1<<63 - 1
		}
		return -1 << 63
	}
	return c
}

// ---- FuzzRetentionPlan -------------------------------------------------

// checkPlan asserts Plan's invariants on one input.
func checkPlan(t *testing.T, st retention.LogState, p retention.Policy, now int64) retention.Plan {
	if err := st.Validate(); err != nil {
		t.Fatalf("the case built an invalid state: %v\n%+v", err, st)
	}
	pl, err := p.Plan(st, now)
	if err != nil {
		t.Fatal(err)
	}
	// 1. Only a prefix is deleted; RollFirst exactly when all are.
	for i, d := range pl.Deletions {
		if i >= len(st.Segments) || d.BaseOffset != st.Segments[i].BaseOffset {
			t.Fatalf("deletion %d (segment %d) is not the log's segment %d", i, d.BaseOffset, i)
		}
		if d.NextOffset > st.HighWatermark {
			t.Fatalf("segment %d ends at %d, above the high watermark %d", d.BaseOffset, d.NextOffset, st.HighWatermark)
		}
		switch d.Reason {
		case retention.ReasonTime:
			// 2. Time deletions are older than retention.ms.
			ts := st.Segments[i].LargestTimestamp()
			if !p.Delete() || p.RetentionMs < 0 || d.LargestTimestamp != ts || !(now > ts && uint64(now)-uint64(ts) > uint64(p.RetentionMs)) {
				t.Fatalf("segment %d deleted by time with largest timestamp %d at now %d, retention.ms %d", d.BaseOffset, ts, now, p.RetentionMs)
			}
		case retention.ReasonSize:
			if !p.Delete() || p.RetentionBytes < 0 {
				t.Fatalf("size deletion with policy %+v", p)
			}
		case retention.ReasonLogStartOffset:
		default:
			t.Fatalf("reason %q", d.Reason)
		}
	}
	if pl.RollFirst != (len(pl.Deletions) == len(st.Segments)) {
		t.Fatalf("RollFirst %v with %d of %d segments", pl.RollFirst, len(pl.Deletions), len(st.Segments))
	}
	if last := st.Segments[len(st.Segments)-1]; last.Size == 0 && pl.RollFirst {
		t.Fatal("the empty active segment was deleted")
	}
	// 3. The size rule leaves at least retention.bytes.
	lastSize := -1
	for i, d := range pl.Deletions {
		if d.Reason == retention.ReasonSize {
			lastSize = i
		}
	}
	if lastSize >= 0 {
		var left int64
		for _, s := range st.Segments[lastSize+1:] {
			left += s.Size
		}
		if left < p.RetentionBytes {
			t.Fatalf("the size rule left %d bytes, below retention.bytes %d", left, p.RetentionBytes)
		}
	}
	// 4. The log start offset never decreases, and lands on a segment.
	if pl.NewLogStartOffset < st.LogStartOffset {
		t.Fatalf("log start offset %d -> %d", st.LogStartOffset, pl.NewLogStartOffset)
	}
	if n := len(pl.Deletions); n > 0 && pl.NewLogStartOffset != max(st.LogStartOffset, st.NextOffset(n-1)) {
		t.Fatalf("new log start offset %d, want the first kept base %d", pl.NewLogStartOffset, st.NextOffset(n-1))
	}
	// The reference model agrees.
	rd, rlso, rroll := refPlan(st, p, now)
	if !slices.Equal(rd, planDels(pl)) || rlso != pl.NewLogStartOffset || rroll != pl.RollFirst {
		t.Fatalf("Plan %v\nreference %v lso %d roll %v", pl, rd, rlso, rroll)
	}
	// 5. Idempotent: after the plan, a second one at the same now deletes
	// nothing.
	after := st.After(pl)
	if err := after.Validate(); err != nil {
		t.Fatalf("After: %v", err)
	}
	if again, err := p.Plan(after, now); err != nil || len(again.Deletions) != 0 {
		t.Fatalf("second plan: %v, %v", again, err)
	}
	return pl
}

func FuzzRetentionPlan(f *testing.F) {
	for _, c := range planSeeds() {
		f.Add(c.encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := decodePlanCase(data)
		st, p, _ := c.build()
		checkPlan(t, st, p, c.Now)
	})
}

// ---- FuzzReadableUntil -------------------------------------------------

// FuzzReadableUntil simulates checks forward on the pure model, with or
// without further appends, and checks that ReadableUntil is a true bound:
// no segment is readable after its predicted time (IfAppendsContinue when
// records keep coming), the prediction is exact for an idle log on a
// known schedule, a segment a check at now deletes is readable until the
// next check at the latest, and none is deleted by the time rule earlier
// than retention.ms after its newest record.
func FuzzReadableUntil(f *testing.F) {
	for _, c := range forecastSeeds() {
		f.Add(c.encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := decodePlanCase(data)
		// Keep times within reach of a forward simulation.
		c.Interval %= 1 << 20
		c.Now %= 1 << 50
		c.FirstCheck %= 1 << 24
		c.RetMs %= 1 << 30
		for i := range c.Segs {
			c.Segs[i].Ts %= 1 << 30
			c.Segs[i].Mtime %= 1 << 30
			c.Segs[i].Size %= 1 << 24
		}
		st, p, sched := c.build()
		p.SegmentMs = 1 + int64(c.SegMs%(1<<30))
		checkForecast(t, c, st, p, sched)
	})
}

func checkForecast(t *testing.T, c planCase, st retention.LogState, p retention.Policy, sched retention.Schedule) {
	now := c.Now
	f, err := retention.ReadableUntil(st, p, sched, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Segments) != len(st.Segments) {
		t.Fatalf("%d bounds for %d segments", len(f.Segments), len(st.Segments))
	}
	for i, b := range f.Segments {
		if b.ReadableUntil < b.IfIdle || b.IfAppendsContinue < b.ReadableUntil || b.Explanation == "" || (b.ReadableUntil != retention.Never && b.ReadableUntil <= now) {
			t.Fatalf("segment %d: bound %+v at now %d", i, b, now)
		}
		if !b.Active && (b.ReadableUntil != b.IfIdle || b.IfAppendsContinue != b.IfIdle) {
			t.Fatalf("segment %d is not active but its bounds differ: %+v", i, b)
		}
	}
	// The forecast agrees with the plan: a segment a check at now deletes
	// is readable until the next check at the latest (which deletes it
	// too: the rules only delete more as time passes).
	pl, err := p.Plan(st, now)
	if err != nil {
		t.Fatal(err)
	}
	nextCheck := satAdd(now, sched.Interval)
	if !sched.Unknown {
		nextCheck = sched.NextAtOrAfter(satAdd(now, 1))
	}
	for i, d := range pl.Deletions {
		if b := f.Segments[i]; b.BaseOffset != d.BaseOffset || b.ReadableUntil > nextCheck || b.OnDiskUntil != satAdd(b.ReadableUntil, max(p.FileDeleteDelayMs, 0)) {
			t.Fatalf("a check at %d deletes segment %d (%s), but it is readable until %d, on disk until %d, after the next check %d: %s",
				now, d.BaseOffset, d.Explanation, b.ReadableUntil, b.OnDiskUntil, nextCheck, b.Explanation)
		}
	}
	// The real checks: the schedule's, or for an unknown phase, checks
	// at Phase within the interval.
	iv := sched.Interval
	real := sched
	if sched.Unknown {
		real = retention.Schedule{First: satAdd(now, 1+int64(c.Phase%uint64(iv))), Interval: iv}
	}
	traffic := c.Flags&fTraffic != 0
	dt := 1 + int64(c.TrafficDt%(1<<20))
	bb := 1 + int64(c.BatchBytes%(1<<16))
	maxChecks := 3000
	if traffic {
		maxChecks = 150
	}

	m := newModel(st, now)
	orig := len(st.Segments)
	gone := make([]int64, orig)
	for i := range gone {
		gone[i] = retention.Never
	}
	deleted := 0
	stable := false
	nextAppend := satAdd(now, 1)
	tc := real.NextAtOrAfter(satAdd(now, 1))
	for k := 0; k < maxChecks && tc != retention.Never; k++ {
		if traffic {
			for n := 0; nextAppend < tc && n < 8; n++ {
				m.append(nextAppend, bb, p.SegmentMs, p.SegmentBytes)
				nextAppend = satAdd(nextAppend, dt)
			}
			// Any traffic stamped when appended is valid: skip the rest of
			// a long gap, so that the work per check stays bounded.
			nextAppend = max(nextAppend, tc)
		}
		m.last = tc
		pl, err := p.Plan(m.st, tc)
		if err != nil {
			t.Fatalf("check at %d: %v", tc, err)
		}
		for _, d := range pl.Deletions {
			if d.Reason == retention.ReasonTime && !(tc > d.LargestTimestamp && uint64(tc)-uint64(d.LargestTimestamp) > uint64(p.RetentionMs)) {
				t.Fatalf("segment %d deleted by time at %d, newest %d", d.BaseOffset, tc, d.LargestTimestamp)
			}
			if deleted < orig && d.BaseOffset == st.Segments[deleted].BaseOffset {
				gone[deleted] = tc
				deleted++
			}
		}
		m.st = m.st.After(pl)
		if deleted == orig {
			break
		}
		next := real.NextAtOrAfter(satAdd(tc, 1))
		if !traffic {
			// Idle: Plan(state, t) changes only when t crosses a
			// segment's qualifying instant; skip the checks before the
			// next one.
			q := retention.Never
			for _, s := range m.st.Segments {
				if qi := satAdd(satAdd(s.LargestTimestamp(), max(p.RetentionMs, 0)), 1); qi > tc {
					q = min(q, qi)
				}
			}
			if q == retention.Never || p.RetentionMs < 0 || !p.Delete() {
				stable = true // nothing can change any more
				break
			}
			next = max(next, real.NextAtOrAfter(q))
		}
		tc = next
	}
	for i := range orig {
		b := f.Segments[i]
		// With traffic the bound is IfAppendsContinue: it differs from
		// ReadableUntil only for an active segment a check at now
		// deletes, which records appended before the check keep.
		bound := b.ReadableUntil
		if traffic {
			bound = b.IfAppendsContinue
		}
		if (gone[i] != retention.Never && gone[i] > bound) || (gone[i] == retention.Never && bound <= m.last) {
			t.Fatalf("segment %d went at %d, after its bound %d (traffic %v): %s", b.BaseOffset, gone[i], bound, traffic, b.Explanation)
		}
		if !traffic && !sched.Unknown && gone[i] != retention.Never && gone[i] != b.IfIdle {
			t.Fatalf("idle log: segment %d went at %d, predicted %d: %s", b.BaseOffset, gone[i], b.IfIdle, b.Explanation)
		}
		if !traffic && gone[i] == retention.Never && b.IfIdle != retention.Never && (stable || b.IfIdle <= m.last) {
			t.Fatalf("idle log: segment %d predicted to go at %d, still there at %d: %s", b.BaseOffset, b.IfIdle, m.last, b.Explanation)
		}
	}
}

// model is the pure model of a log under steady appends, with the
// engine's roll rule (segment.bytes, and segment.ms from the first batch
// or, for a segment without timestamps, from its creation).
type model struct {
	st      retention.LogState
	created map[int64]int64
	follow  bool  // the high watermark follows the log end offset
	last    int64 // time of the last step
}

func newModel(st retention.LogState, now int64) *model {
	m := &model{st: st.Clone(), created: map[int64]int64{}, follow: st.HighWatermark == st.LogEndOffset, last: now}
	a := st.Segments[len(st.Segments)-1]
	m.created[a.BaseOffset] = min(a.LastModified, now)
	return m
}

func (m *model) append(t, bytes, segMs, segBytes int64) {
	m.last = t
	a := &m.st.Segments[len(m.st.Segments)-1]
	waited := t - m.created[a.BaseOffset]
	if a.FirstBatchTimestamp >= 0 {
		waited = t - a.FirstBatchTimestamp
	}
	if a.Size > 0 && (a.Size > segBytes-bytes || waited > segMs) {
		m.st.Segments = append(m.st.Segments, retention.SegmentInfo{BaseOffset: m.st.LogEndOffset, LargestRecordTimestamp: -1, FirstBatchTimestamp: -1, LastModified: t})
		m.created[m.st.LogEndOffset] = t
		a = &m.st.Segments[len(m.st.Segments)-1]
	}
	if a.Size == 0 {
		a.FirstBatchTimestamp = t
	}
	a.Size += bytes
	a.LargestRecordTimestamp = max(a.LargestRecordTimestamp, t)
	a.LastModified = t
	m.st.LogEndOffset++
	if m.follow {
		m.st.HighWatermark = m.st.LogEndOffset
	}
}

// ---- FuzzRetentionApply ------------------------------------------------

// applyCase is a real log's layout, a policy and a time, and where to
// crash.
type applyCase struct {
	Flags    byte // 1: set the high watermark below the log end; 2: crash; 4: DeleteRecords first
	RetMs    int64
	RetBytes int64
	Now      int64     // relative to the last record's time
	Segs     [][]int64 // record timestamps per segment, relative; a value of -1<<40 means "no timestamp"
	HWBack   uint64
	LSOAt    uint64
	Crash    uint64
	Unsynced uint8
}

const noTs = -1 << 40

func (c applyCase) encode() []byte {
	b := []byte{c.Flags}
	b = binary.AppendVarint(b, c.RetMs)
	b = binary.AppendVarint(b, c.RetBytes)
	b = binary.AppendVarint(b, c.Now)
	b = binary.AppendUvarint(b, c.HWBack)
	b = binary.AppendUvarint(b, c.LSOAt)
	b = binary.AppendUvarint(b, c.Crash)
	b = append(b, c.Unsynced, byte(len(c.Segs)-1))
	for _, s := range c.Segs {
		b = append(b, byte(len(s)))
		for _, ts := range s {
			b = binary.AppendVarint(b, ts)
		}
	}
	return b
}

func decodeApplyCase(data []byte) applyCase {
	r := &reader{b: data}
	c := applyCase{Flags: r.u8(), RetMs: r.svar() % (1 << 40), RetBytes: r.svar() % (1 << 20), Now: r.svar() % (1 << 40),
		HWBack: r.uvar(), LSOAt: r.uvar(), Crash: r.uvar() % 200, Unsynced: r.u8()}
	n := 1 + int(r.u8())%6
	for i := range n {
		k := int(r.u8()) % 5
		if k == 0 && i < n-1 {
			k = 1 // only the active segment may be empty
		}
		var s []int64
		for range k {
			ts := r.svar()
			if ts != noTs {
				ts %= 1 << 40
			}
			s = append(s, ts)
		}
		c.Segs = append(c.Segs, s)
	}
	return c
}

// FuzzRetentionApply builds a real log on vfs.Mem from the input, plans
// and applies retention (crashing at a chosen operation if asked), and
// checks that the log opens and reads: the records read are exactly those
// at or above a log start offset between the old and the planned one, and
// a second check at the same time completes the plan and then deletes
// nothing more.
func FuzzRetentionApply(f *testing.F) {
	for _, c := range applySeeds() {
		f.Add(c.encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := decodeApplyCase(data)
		runApplyCase(t, c)
	})
}

func runApplyCase(t *testing.T, c applyCase) {
	const base = int64(1_700_000_000_000)
	clk := &clock{ms: base}
	mem := vfs.MemOptions{Clock: clk.Now}.New()
	inj := &armed{}
	cfg := applyConfig(t, "-1", "-1")
	cfg.RetentionMs = max(c.RetMs, -1)
	cfg.RetentionBytes = c.RetBytes
	lay := layout{}
	for _, s := range c.Segs {
		var tss []int64
		for _, ts := range s {
			if ts == noTs {
				tss = append(tss, -1)
			} else {
				tss = append(tss, max(base+ts, 0))
			}
		}
		lay.segs = append(lay.segs, tss)
	}
	l := lay.build(t, vfs.WithFaults(mem, inj), clk, cfg)
	if c.Flags&4 != 0 && c.LSOAt > 0 {
		if err := l.IncrementLogStartOffset(min(int64(c.LSOAt), l.HighWatermark())); err != nil {
			t.Fatal(err)
		}
	}
	if c.Flags&1 != 0 {
		l.SetHighWatermark(l.LogEndOffset() - int64(c.HWBack%uint64(l.LogEndOffset()+1)))
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	before := readAll(t, l)
	st, err := retention.StateOf(l)
	if err != nil {
		t.Fatal(err)
	}
	p := retention.PolicyFrom(cfg, config.DefaultBroker())
	now := satAdd(clk.ms, c.Now)
	clk.ms = max(now, clk.ms)
	pl := checkPlan(t, st, p, now)
	crash := vfs.CrashAfter(int(c.Crash))
	if c.Flags&2 != 0 {
		inj.arm(crash)
	}
	err = retention.Apply(l, pl)
	if !crash.Crashed() {
		inj.arm(nil) // the crash point is past Apply
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if l.LogStartOffset() != pl.NewLogStartOffset {
			t.Fatalf("log start offset %d, planned %d", l.LogStartOffset(), pl.NewLogStartOffset)
		}
		checkSuffix(t, readAll(t, l), before, pl.NewLogStartOffset)
		st2, err := retention.StateOf(l)
		if err != nil {
			t.Fatal(err)
		}
		if !sameLayout(st2, st.After(pl)) {
			t.Fatalf("engine %+v, model %+v", st2, st.After(pl))
		}
		if again, _ := p.Plan(st2, now); len(again.Deletions) != 0 {
			t.Fatalf("second plan: %v", again)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l2, err := kafkalog.Open(mem, applyDir, cfg, kafkalog.Options{Clock: clk})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer l2.Close()
		if l2.LogStartOffset() != pl.NewLogStartOffset {
			t.Fatalf("reopened: log start offset %d", l2.LogStartOffset())
		}
		checkSuffix(t, readAll(t, l2), before, pl.NewLogStartOffset)
		return
	}
	if err != nil && !errors.Is(err, vfs.ErrCrashed) {
		t.Fatalf("Apply failed with %v, not the crash", err)
	}
	disk := mem.CrashClone(vfs.CrashConfig{Seed: c.Crash, UnsyncedDataPercent: int(c.Unsynced % 101), TornWrites: c.Unsynced&1 == 1})
	checkCrashed(t, fmt.Sprintf("crash after %d ops", c.Crash), disk, clk, cfg, p, st, pl, before)
}
