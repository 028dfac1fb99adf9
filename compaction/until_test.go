package compaction_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/vfs"
)

const (
	never   = retention.Never
	hour    = int64(3600_000)
	backoff = compaction.DefaultBackoffMs
)

// untilLog writes the partition the ReadableUntil tests share:
//
//	segment 0: 0 a=1 (t0), 1 b=1 (t0+1), 2 a=2 (t0+1000)
//	segment 3: 3 c=1 (t0+2000), 4 b tombstone (t0+2001), 5 unkeyed (t0+3000)
//	segment 6, active: 6 a=3 (t0+4000), 7 d=1 (t0+5000)
func untilLog(t *testing.T, props map[string]string) (vfs.FS, string) {
	t.Helper()
	fsys := vfs.NewMem()
	dir := "/kafka/users-0"
	p := newLog(t, fsys, dir, props)
	p.put(compress.None, kv{"a", "1"}, kv{"b", "1"})
	p.put(compress.None, kv{"a", "2"})
	p.roll()
	p.put(compress.None, kv{"c", "1"}, kv{"b", "-"})
	p.put(compress.None, kv{"", "x"})
	p.roll()
	p.put(compress.None, kv{"a", "3"})
	p.put(compress.None, kv{"d", "1"})
	p.close()
	return fsys, dir
}

func until(t *testing.T, fsys vfs.FS, dir string, props map[string]string, now, offset int64) compaction.RecordBound {
	t.Helper()
	b, err := compaction.ReadableUntil(fsys, dir, testConfig(t, props), compaction.Options{Clock: clock{now}}, offset)
	if err != nil {
		t.Fatal(err)
	}
	if b.Offset != offset || b.Now != now {
		t.Fatalf("offset %d at %d: bound for %d at %d", offset, now, b.Offset, b.Now)
	}
	return b
}

func TestReadableUntil(t *testing.T) {
	now := t0 + hour
	// The first batch of the active segment 6, and of segment 0.
	fb6, fb0 := t0+4000, t0+1
	type want struct {
		kind              compaction.Kind
		successor         int64
		removed, stamped  bool
		notBefore         int64
		until, ifAppends  int64
		depends           string // one of DependsOn contains it
		horizon           int64
		tombstone, active bool
	}
	for _, tt := range []struct {
		name   string
		props  map[string]string
		offset int64
		want   want
	}{
		// A clean now (range [0, 6), ratio 1) maps a→2, b→4, c→3.
		{"superseded_cleaned_now", nil, 0, want{kind: compaction.KindSuperseded, successor: 2, removed: true,
			notBefore: now, until: now + backoff, ifAppends: now + backoff, depends: "cleaner to pick the log", horizon: -1}},
		{"superseded_by_tombstone", nil, 1, want{kind: compaction.KindSuperseded, successor: 4, removed: true,
			notBefore: now, until: now + backoff, ifAppends: now + backoff, horizon: -1}},
		// Its successor, offset 6, is in the active segment: it waits for
		// the roll, which only an append brings; nothing forces a clean.
		{"successor_in_active_segment", nil, 2, want{kind: compaction.KindSuperseded, successor: 6,
			notBefore: now, until: never, ifAppends: never, depends: "segment 6, the active segment, to roll", horizon: -1}},
		{"latest", nil, 3, want{kind: compaction.KindLatest, successor: -1, notBefore: never, until: never, ifAppends: never,
			depends: `a later record of key "c"`, horizon: -1}},
		// A clean now stamps the tombstone's horizon, now + 1 day; the
		// clean after it needs new dirty data.
		{"tombstone_stamped_now", nil, 4, want{kind: compaction.KindTombstone, successor: -1, stamped: true, tombstone: true,
			notBefore: now + day, until: never, ifAppends: never, horizon: -1}},
		{"unkeyed", nil, 5, want{kind: compaction.KindUnkeyed, successor: -1, removed: true,
			notBefore: now, until: now + backoff, ifAppends: now + backoff, horizon: -1}},
		{"latest_in_active_segment", nil, 7, want{kind: compaction.KindLatest, successor: -1, active: true,
			notBefore: never, until: never, ifAppends: never, horizon: -1}},
		{"past_the_end", nil, 8, want{kind: compaction.KindAbsent, successor: -1, notBefore: now, until: now, ifAppends: now, horizon: -1}},

		// max.compaction.lag.ms 2h lowers the roll interval to segment.ms
		// 1h: if appends continue, segment 6 rolls at fb6+1h+1, and the lag
		// forces a clean of it at fb6+2h+1.
		{"max_lag_active_successor", map[string]string{"max.compaction.lag.ms": "7200000", "segment.ms": "3600000"}, 2,
			want{kind: compaction.KindSuperseded, successor: 6, notBefore: now, until: never,
				ifAppends: fb6 + 2*hour + 1 + backoff, depends: "max.compaction.lag.ms 7200000 past its first batch forces one", horizon: -1}},
		// The tombstone stamped now goes, if appends continue, at the
		// forced clean after its horizon: horizon + max lag + 1.
		{"max_lag_tombstone", map[string]string{"max.compaction.lag.ms": "7200000", "segment.ms": "3600000"}, 4,
			want{kind: compaction.KindTombstone, successor: -1, stamped: true, tombstone: true, notBefore: now + day, until: never,
				ifAppends: now + day + 2*hour + 1 + backoff, horizon: -1}},

		// min.compaction.lag.ms 2h: segment 0 (largest timestamp t0+1000)
		// is uncleanable until t0+1000+2h; nothing is cleanable now.
		{"min_lag", map[string]string{"min.compaction.lag.ms": "7200000"}, 0,
			want{kind: compaction.KindSuperseded, successor: 2, notBefore: t0 + 1000 + 2*hour, until: never, ifAppends: never,
				depends: "min.compaction.lag.ms 7200000 past the largest timestamp of segment 0", horizon: -1}},
		// With max.compaction.lag.ms 3h as well, the clean is forced once
		// segment 0's first batch is 3h old.
		{"min_and_max_lag", map[string]string{"min.compaction.lag.ms": "7200000", "max.compaction.lag.ms": "10800000"}, 0,
			want{kind: compaction.KindSuperseded, successor: 2, notBefore: t0 + 1000 + 2*hour,
				until: fb0 + 3*hour + 1 + backoff, ifAppends: fb0 + 3*hour + 1 + backoff, depends: "forces one by", horizon: -1}},
		// Not compacted: compaction never removes anything.
		{"not_compacted", map[string]string{"cleanup.policy": "delete", "retention.ms": "-1"}, 0,
			want{kind: compaction.KindSuperseded, successor: 2, notBefore: never, until: never, ifAppends: never,
				depends: "cleanup.policy delete to include compact", horizon: -1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys, dir := untilLog(t, tt.props)
			b := until(t, fsys, dir, tt.props, now, tt.offset)
			w := tt.want
			if b.Kind != w.kind || b.Successor != w.successor || b.RemovedByCleanNow != w.removed || b.StampedByCleanNow != w.stamped ||
				b.Tombstone != w.tombstone || b.ActiveSegment != w.active || b.DeleteHorizonMs != w.horizon {
				t.Errorf("kind %s successor %d removed %v stamped %v tombstone %v active %v horizon %d; want %+v",
					b.Kind, b.Successor, b.RemovedByCleanNow, b.StampedByCleanNow, b.Tombstone, b.ActiveSegment, b.DeleteHorizonMs, w)
			}
			if b.NotBefore != w.notBefore || b.ReadableUntil != w.until || b.IfAppendsContinue != w.ifAppends {
				t.Errorf("not before %s, until %s, if appends continue %s; want %s, %s, %s",
					ms(b.NotBefore), ms(b.ReadableUntil), ms(b.IfAppendsContinue), ms(w.notBefore), ms(w.until), ms(w.ifAppends))
			}
			if w.depends != "" && !slices.ContainsFunc(b.DependsOn, func(s string) bool { return strings.Contains(s, w.depends) }) {
				t.Errorf("depends on %q, want one with %q", b.DependsOn, w.depends)
			}
			if b.Explanation == "" {
				t.Error("no explanation")
			}
			if b.IfAppendsContinue > b.ReadableUntil {
				t.Errorf("if appends continue %d after readable until %d", b.IfAppendsContinue, b.ReadableUntil)
			}
		})
	}
}

// ms prints a time relative to t0, for failure messages.
func ms(v int64) string {
	if v == never {
		return "never"
	}
	return "t0+" + strconv.FormatInt(v-t0, 10)
}

// RemovedByCleanNow agrees with Clean: a clean at the same time removes
// exactly the records the bound says it removes, and keeps the others.
func TestReadableUntilAgreesWithClean(t *testing.T) {
	now := t0 + hour
	for _, tt := range []struct {
		name  string
		props map[string]string
		build func(p *plog)
	}{
		{"keys", nil, nil},
		{"transactions", map[string]string{"delete.retention.ms": "0"}, func(p *plog) {
			p.txn(7, kv{"k", "aborted"})        // 0
			p.put(compress.None, kv{"k", "1"})  // 1
			p.end(7, record.ControlAbort)       // 2
			p.txn(8, kv{"m", "committed"})      // 3
			p.end(8, record.ControlCommit)      // 4
			p.put(compress.None, kv{"m", "-"})  // 5: supersedes 3
			p.put(compress.None, kv{"", "nil"}) // 6
			p.roll()
			p.put(compress.None, kv{"k", "2"}) // 7, active
		}},
		{"map_fills", map[string]string{}, func(p *plog) {
			// Five keys four times over (0-19), then 30 new keys: the map
			// (18 keys) fills at offset 33.
			for i := range 20 {
				p.put(compress.None, kv{strconv.Itoa(i % 5), "v"})
			}
			for i := range 30 {
				p.put(compress.None, kv{strconv.Itoa(100 + i), "v"})
			}
			p.roll()
			p.put(compress.None, kv{"z", "1"})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var fsys vfs.FS
			dir := "/kafka/t-0"
			if tt.build == nil {
				fsys, dir = untilLog(t, tt.props)
			} else {
				fsys = vfs.NewMem()
				p := newLog(t, fsys, dir, tt.props)
				tt.build(p)
				p.close()
			}
			opt := compaction.Options{Clock: clock{now}}
			if tt.name == "map_fills" {
				opt.DedupeBufferSize = 20 * compaction.BytesPerEntry // 18 keys
			}
			cfg := testConfig(t, tt.props)
			plan, err := compaction.Plan(fsys, dir, cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !plan.Cleanable {
				t.Fatalf("not cleanable: %s", plan.Why)
			}
			removed := map[int64]bool{}
			for off := plan.LogStartOffset; off < plan.LogEndOffset; off++ {
				b, err := compaction.ReadableUntil(fsys, dir, cfg, opt, off)
				if err != nil {
					t.Fatal(err)
				}
				if b.Kind == compaction.KindAbsent {
					t.Fatalf("offset %d absent before the clean", off)
				}
				removed[off] = b.RemovedByCleanNow
			}
			if tt.name == "map_fills" && !plan.MapFull {
				t.Fatalf("the map did not fill: %s", plan)
			}
			if _, err := compaction.Clean(fsys, dir, cfg, opt); err != nil {
				t.Fatal(err)
			}
			present := map[int64]bool{}
			for _, c := range contents(t, fsys, dir) {
				off, rest, _ := strings.Cut(c, ":")
				if rest != "<empty>" {
					n, _ := strconv.ParseInt(off, 10, 64)
					present[n] = true
				}
			}
			n := 0
			for off, gone := range removed {
				if gone == present[off] {
					t.Errorf("offset %d: RemovedByCleanNow %v, but after the clean present %v", off, gone, present[off])
				}
				if gone {
					n++
				}
			}
			if n == 0 || n == len(removed) {
				t.Fatalf("%d of %d offsets removed: the case tests nothing", n, len(removed))
			}
		})
	}
}

// A tombstone a clean stamped stays until its horizon; after it, the
// first clean (once the log is cleanable again) removes it.
func TestReadableUntilStampedTombstone(t *testing.T) {
	fsys, dir := untilLog(t, nil)
	now := t0 + hour
	if rep := clean(t, fsys, dir, nil, now); len(rep.Horizons) != 1 || rep.Horizons[0].DeleteHorizonMs != now+day {
		t.Fatalf("horizons %+v", rep.Horizons)
	}
	h := now + day
	// Before the horizon: nothing is dirty, and no clean can remove it
	// before h.
	b := until(t, fsys, dir, nil, now+hour, 4)
	if b.Kind != compaction.KindTombstone || b.DeleteHorizonMs != h || b.NotBefore != h || b.ReadableUntil != never || b.RemovedByCleanNow || b.StampedByCleanNow {
		t.Fatalf("before the horizon: %+v", b)
	}
	// Past the horizon, still nothing dirty: the active segment must roll.
	b = until(t, fsys, dir, nil, h+1, 4)
	if b.NotBefore != h+1 || b.ReadableUntil != never || b.RemovedByCleanNow ||
		!slices.ContainsFunc(b.DependsOn, func(s string) bool { return strings.Contains(s, "the active segment, to roll") }) {
		t.Fatalf("past the horizon, nothing dirty: %+v", b)
	}
	// New data, rolled: the log is cleanable, and a clean now removes it.
	p := reopen(t, fsys, dir)
	p.put(compress.None, kv{"e", "1"})
	p.roll()
	p.put(compress.None, kv{"f", "1"})
	p.close()
	b = until(t, fsys, dir, nil, h+1, 4)
	if !b.RemovedByCleanNow || b.ReadableUntil != h+1+backoff {
		t.Fatalf("past the horizon, cleanable: %+v", b)
	}
	clean(t, fsys, dir, nil, h+1)
	if got := contents(t, fsys, dir); slices.Contains(got, "4:b=-") {
		t.Fatalf("the tombstone is still there: %v", got)
	}
}

// reopen opens an existing test partition for more appends.
func reopen(t *testing.T, fsys vfs.FS, dir string) *plog {
	t.Helper()
	p := newLog(t, fsys, dir, nil)
	p.ts = t0 + 10_000
	return p
}

func TestReadableUntilTransactions(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/kafka/txn-0"
	p := newLog(t, fsys, dir, nil)
	p.txn(7, kv{"k", "aborted"})  // 0
	p.end(7, record.ControlAbort) // 1
	p.txn(8, kv{"k", "open"})     // 2: no marker yet
	p.close()
	now := t0 + hour
	b := until(t, fsys, dir, nil, now, 0)
	if b.Kind != compaction.KindAborted || !b.Transactional || b.OpenTransaction {
		t.Fatalf("aborted: %+v", b)
	}
	// The active segment holds everything: nothing is cleaned yet.
	if b.RemovedByCleanNow || b.ReadableUntil != never {
		t.Fatalf("aborted, in the active segment: %+v", b)
	}
	m := until(t, fsys, dir, nil, now, 1)
	if m.Kind != compaction.KindMarker || m.Key != nil || m.NotBefore != now+day {
		t.Fatalf("marker: %+v", m)
	}
	o := until(t, fsys, dir, nil, now, 2)
	if o.Kind != compaction.KindLatest || !o.OpenTransaction || !strings.Contains(o.Explanation, "still open") {
		t.Fatalf("open transaction: %+v", o)
	}
}

// With cleanup.policy compact,delete the latest value of a key goes by
// retention, which the cleaner thread runs every log.cleaner.backoff.ms.
func TestReadableUntilCompactDelete(t *testing.T) {
	props := map[string]string{"cleanup.policy": "compact,delete", "retention.ms": "7200000"}
	fsys, dir := untilLog(t, props)
	now := t0 + hour
	b := until(t, fsys, dir, props, now, 3)
	if b.Kind != compaction.KindLatest || b.Retention == nil {
		t.Fatalf("bound %+v", b)
	}
	// Segment 3's newest record is t0+3000: it goes at the first check
	// after t0+3000+2h, at most one backoff later (phase unknown).
	want := t0 + 3000 + 2*hour + backoff
	if b.Retention.ReadableUntil != want || b.ReadableUntil != want || b.NotBefore != never {
		t.Fatalf("until %s (retention %s), not before %s; want %s", ms(b.ReadableUntil), ms(b.Retention.ReadableUntil), ms(b.NotBefore), ms(want))
	}
	// Compact-only: no retention bound.
	if b := until(t, fsys, dir, nil, now, 3); b.Retention != nil || b.ReadableUntil != never {
		t.Fatalf("compact only: %+v", b)
	}
}

// When the offset map fills before a record's successor, the clean now
// stops short of it: the record waits for a later clean, which the dirty
// ratio or max.compaction.lag.ms brings.
func TestReadableUntilMapFull(t *testing.T) {
	props := map[string]string{"max.compaction.lag.ms": "7200000"}
	fsys := vfs.NewMem()
	dir := "/kafka/full-0"
	p := newLog(t, fsys, dir, props)
	for i := range 30 {
		p.put(compress.None, kv{strconv.Itoa(i), "v"}) // 0-29, the first at t0
	}
	p.put(compress.None, kv{"0", "w"}) // 30 supersedes 0
	p.roll()
	p.put(compress.None, kv{"z", "1"})
	p.close()
	now := t0 + hour
	opt := compaction.Options{Clock: clock{now}, DedupeBufferSize: 20 * compaction.BytesPerEntry} // 18 keys
	b, err := compaction.ReadableUntil(fsys, dir, testConfig(t, props), opt, 0)
	if err != nil {
		t.Fatal(err)
	}
	// max.compaction.lag.ms past segment 0's first batch (t0) forces the
	// next clean: t0 + 2h + 1, and the cleaner picks it up within the
	// backoff.
	if b.Kind != compaction.KindSuperseded || b.Successor != 30 || b.RemovedByCleanNow || b.NotBefore != now ||
		b.ReadableUntil != t0+2*hour+1+backoff ||
		!slices.ContainsFunc(b.DependsOn, func(s string) bool { return strings.Contains(s, "stops at offset 18 where its offset map fills") }) {
		t.Fatalf("bound %+v", b)
	}
}
