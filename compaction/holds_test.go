package compaction_test

import (
	"bytes"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// holdLog writes a compacted partition whose every closed segment holds
// records a later one supersedes:
//
//	segment 0: 0 a=1, 1 b=1
//	segment 2: 2 a=2, 3 c=1
//	segment 4: 4 b=2, 5 c=2
//	segment 6: 6 a=3
//	segment 7, active: 7 d=1
func holdLog(t *testing.T) (vfs.FS, string) {
	t.Helper()
	fsys := vfs.NewMem()
	dir := "/kafka/users-0"
	p := newLog(t, fsys, dir, nil)
	p.put(compress.None, kv{"a", "1"}, kv{"b", "1"})
	p.roll()
	p.put(compress.None, kv{"a", "2"}, kv{"c", "1"})
	p.roll()
	p.put(compress.None, kv{"b", "2"}, kv{"c", "2"})
	p.roll()
	p.put(compress.None, kv{"a", "3"})
	p.roll()
	p.put(compress.None, kv{"d", "1"})
	p.close()
	return fsys, dir
}

// takeSavepoint records a savepoint on [first, last] in the partition's
// timeline, or releases the one at release, and returns its time.
func takeSavepoint(t *testing.T, fsys vfs.FS, dir string, first, last int64, release *timeline.InstantTime) timeline.InstantTime {
	t.Helper()
	tl, err := timeline.Open(fsys, dir, timeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp := &timeline.Savepoint{Label: "case-7", FirstOffset: first, LastOffset: last, Release: release}
	x, err := tl.Begin(timeline.ActionSavepoint, sp)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Complete(sp); err != nil {
		t.Fatal(err)
	}
	return x.Instant().Time
}

// logFiles returns the bytes of every .log file of dir, by name.
func logFiles(t *testing.T, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, fi := range infos {
		if !strings.HasSuffix(fi.Name(), ".log") {
			continue
		}
		b, err := vfs.ReadFile(fsys, path.Join(dir, fi.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[fi.Name()] = b
	}
	return out
}

func TestPlanCleanHolds(t *testing.T) {
	now := t0 + hour
	h := func(first, last int64) []timeline.Hold {
		return []timeline.Hold{{Savepoint: timeline.InstantTime{Millis: 77}, Label: "opt", FirstOffset: first, LastOffset: last}}
	}
	for _, tt := range []struct {
		name      string
		holds     []timeline.Hold
		cleanable bool
		end       int64 // FirstUncleanableOffset
		heldBase  int64 // -1: no hold pins a segment
		kept      []string
		removes   bool // the clean removes records (so the test can tell a held segment from one left alone)
	}{
		{"no_hold", nil, true, 7, -1, nil, true},
		// The hold on offset 4 ends the range at segment 4: 0 and 2 are
		// cleaned, 4, 6 and 7 are left byte for byte.
		{"hold_on_third", h(4, 4), true, 4, 4, []string{"00000000000000000004.log", "00000000000000000006.log", "00000000000000000007.log"}, true},
		// Only segment 0 is left to the clean: its map holds a and b of
		// segment 0 alone, so nothing goes.
		{"hold_spanning", h(3, 5), true, 2, 2, []string{"00000000000000000002.log", "00000000000000000004.log", "00000000000000000006.log"}, false},
		{"hold_on_first", h(0, 0), false, 0, 0, []string{"00000000000000000000.log", "00000000000000000002.log", "00000000000000000004.log"}, false},
		// Only the active segment, which no clean rewrites anyway.
		{"hold_on_active", h(7, 7), true, 7, 7, nil, true},
		{"hold_past_end", h(100, 200), true, 7, -1, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys, dir := holdLog(t)
			cfg := testConfig(t, nil)
			opt := compaction.Options{Clock: clock{now}, Holds: tt.holds}
			plan, err := compaction.Plan(fsys, dir, cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			if plan.Cleanable != tt.cleanable || plan.FirstUncleanableOffset != tt.end {
				t.Errorf("plan: cleanable %v, range ends at %d (%s); want %v, %d", plan.Cleanable, plan.FirstUncleanableOffset, plan.UncleanableBy, tt.cleanable, tt.end)
			}
			switch {
			case tt.heldBase < 0 && plan.HeldBy != nil:
				t.Errorf("plan: held by %v at %d, want no hold", plan.HeldBy, plan.HeldBase)
			case tt.heldBase >= 0 && (plan.HeldBy == nil || plan.HeldBase != tt.heldBase):
				t.Errorf("plan: held by %v at %d, want segment %d held", plan.HeldBy, plan.HeldBase, tt.heldBase)
			}
			// Where the hold is what ends the range, the plan names it.
			if tt.heldBase >= 0 && tt.heldBase < 7 {
				reason := plan.UncleanableBy
				if !plan.Cleanable {
					reason = plan.Why
				}
				if !strings.Contains(reason, `held by savepoint "opt"`) {
					t.Errorf("plan does not name the hold: range by %q, why %q", plan.UncleanableBy, plan.Why)
				}
			}
			before := logFiles(t, fsys, dir)
			rep, err := compaction.Clean(fsys, dir, cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			after := logFiles(t, fsys, dir)
			for _, name := range tt.kept {
				if !bytes.Equal(before[name], after[name]) {
					t.Errorf("%s was rewritten, but it is held or after a held segment", name)
				}
			}
			for _, g := range rep.Groups {
				for _, s := range g.Sources {
					if tt.heldBase >= 0 && s >= tt.heldBase {
						t.Errorf("the clean rewrote segment %d, at or after the held segment %d", s, tt.heldBase)
					}
				}
			}
			if tt.removes != (rep.Removed.Records > 0) {
				t.Errorf("the clean removed %d records; want some: %v", rep.Removed.Records, tt.removes)
			}
		})
	}
}

// TestCleanHoldInCleanSection: a hold on a segment below the first dirty
// offset stops every clean, since each rewrites the log from its start.
func TestCleanHoldInCleanSection(t *testing.T) {
	fsys, dir := holdLog(t)
	cfg := testConfig(t, nil)
	opt := compaction.Options{Clock: clock{t0 + hour}}
	if _, err := compaction.Clean(fsys, dir, cfg, opt); err != nil {
		t.Fatal(err)
	}
	p := newLog(t, fsys, dir, nil) // more dirty data: a=4, then roll
	p.ts = t0 + 10_000
	p.put(compress.None, kv{"a", "4"})
	p.roll()
	p.close()
	takeSavepoint(t, fsys, dir, 1, 1, nil)
	plan, err := compaction.Plan(fsys, dir, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Cleanable || plan.HeldBy == nil || plan.FirstDirtyOffset <= plan.HeldBase || !strings.Contains(plan.Why, "below the first dirty offset") {
		t.Fatalf("plan: cleanable %v, held by %v at %d, first dirty %d, why %q; want no clean, the hold named", plan.Cleanable, plan.HeldBy, plan.HeldBase, plan.FirstDirtyOffset, plan.Why)
	}
	before := logFiles(t, fsys, dir)
	if _, err := compaction.Clean(fsys, dir, cfg, opt); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, logFiles(t, fsys, dir)); diff != "" {
		t.Errorf("a held clean changed files:\n%s", diff)
	}
}

// TestReadableUntilHolds: the records a hold keeps say so, and those it
// does not are bound as without it.
func TestReadableUntilHolds(t *testing.T) {
	fsys, dir := holdLog(t)
	taken := takeSavepoint(t, fsys, dir, 4, 4, nil) // segment 4
	cfg := testConfig(t, nil)
	now := t0 + hour
	for _, tt := range []struct {
		offset int64
		held   bool
	}{
		{0, false}, // a=1, superseded by a=2 in segment 2: cleaned now
		{1, true},  // b=1, superseded by b=2 at 4, in the held segment
		{2, true},  // a=2, superseded by a=3 at 6, after it
		{4, true},  // b=2, latest, in the held segment
		{6, true},  // after it
	} {
		b, err := compaction.ReadableUntil(fsys, dir, cfg, compaction.Options{Clock: clock{now}}, tt.offset)
		if err != nil {
			t.Fatal(err)
		}
		if !tt.held {
			if b.HeldBy != nil || !b.RemovedByCleanNow {
				t.Errorf("offset %d: held by %v, removed now %v; want it cleaned now, unheld", tt.offset, b.HeldBy, b.RemovedByCleanNow)
			}
			continue
		}
		if b.HeldBy == nil || b.HeldBy.Savepoint != taken {
			t.Errorf("offset %d: held by %v, want the savepoint %s", tt.offset, b.HeldBy, taken)
		}
		if b.ReadableUntil != retention.Never || b.IfAppendsContinue != retention.Never || b.NotBefore != retention.Never || b.RemovedByCleanNow {
			t.Errorf("offset %d: until %d, appends %d, not before %d, removed now %v; want never while held", tt.offset, b.ReadableUntil, b.IfAppendsContinue, b.NotBefore, b.RemovedByCleanNow)
		}
		if !strings.Contains(b.Explanation, "held by savepoint \"case-7\" ("+taken.String()+")") {
			t.Errorf("offset %d: explanation %q does not name the hold", tt.offset, b.Explanation)
		}
	}
}

// TestCleanAfterRelease: once the hold is released, the next clean does
// what a clean of the same partition that never had the hold does.
func TestCleanAfterRelease(t *testing.T) {
	cfg := testConfig(t, nil)
	opt := compaction.Options{Clock: clock{t0 + hour}}
	held, dir := holdLog(t)
	taken := takeSavepoint(t, held, dir, 0, 1, nil)
	before := logFiles(t, held, dir)
	if rep, err := compaction.Clean(held, dir, cfg, opt); err != nil || rep.Cleanable {
		t.Fatalf("held clean: %v, %v; want not cleanable", rep, err)
	}
	if diff := cmp.Diff(before, logFiles(t, held, dir)); diff != "" {
		t.Fatalf("held clean changed files:\n%s", diff)
	}
	takeSavepoint(t, held, dir, 0, 1, &taken)
	got, err := compaction.Clean(held, dir, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	free, _ := holdLog(t)
	want, err := compaction.Clean(free, dir, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	if got.HeldBy != nil || got.Removed != want.Removed || got.EndOffset != want.EndOffset {
		t.Errorf("released clean: held %v, removed %+v, end %d; without a hold: %+v, %d", got.HeldBy, got.Removed, got.EndOffset, want.Removed, want.EndOffset)
	}
	if diff := cmp.Diff(logFiles(t, free, dir), logFiles(t, held, dir)); diff != "" {
		t.Errorf("released clean's files differ from a clean without the hold (-without +released):\n%s", diff)
	}
	if !slices.Equal(contents(t, held, dir), contents(t, free, dir)) {
		t.Errorf("contents differ")
	}
}
