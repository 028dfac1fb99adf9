package compaction_test

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// segRefs describes the segments of the log in dir as the timeline does,
// read from the log: base offset, next offset (the next segment's base,
// or the log end offset), .log size and largest timestamp.
func segRefs(t *testing.T, fsys vfs.FS, dir string) []timeline.SegmentRef {
	t.Helper()
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return refsOf(t, l)
}

func refsOf(t *testing.T, l *kafkalog.Log) []timeline.SegmentRef {
	t.Helper()
	segs := l.Segments()
	out := make([]timeline.SegmentRef, len(segs))
	for i, s := range segs {
		next := l.LogEndOffset()
		if i+1 < len(segs) {
			next = segs[i+1].BaseOffset()
		}
		ts, err := s.LargestTimestamp()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = timeline.SegmentRef{BaseOffset: s.BaseOffset(), NextOffset: next, Size: s.Size(), LargestTimestamp: ts}
	}
	return out
}

// compactions returns the partition's completed compaction instants and
// fails if any instant is pending.
func compactions(t *testing.T, fsys vfs.FS, dir string) []timeline.Instant {
	t.Helper()
	tl, err := timeline.Open(fsys, dir, timeline.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if p := tl.Pending(); len(p) > 0 {
		t.Fatalf("pending instants: %v", p[0].Instant())
	}
	insts, err := tl.Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionCompaction}})
	if err != nil {
		t.Fatal(err)
	}
	return insts
}

// keyedLog writes a keyed partition of several segments, each of which
// loses records to a clean, and an active segment.
func keyedLog(t *testing.T, fsys vfs.FS, dir string, props map[string]string) {
	t.Helper()
	p := newLog(t, fsys, dir, props)
	for i := range 40 {
		k := string(rune('a' + i%6))
		switch i % 5 {
		case 0:
			p.put(compress.None, kv{k, "-"}, kv{"", "unkeyed"})
		case 1:
			p.txn(7, kv{k, "t"})
		case 2:
			p.end(7, []record.ControlType{record.ControlCommit, record.ControlAbort}[i%4/2])
		default:
			p.put([]compress.Codec{compress.None, compress.Zstd}[i%2], kv{k, "value"}, kv{"z" + k, strings.Repeat("v", 20)})
		}
		if i%6 == 5 {
			p.roll()
		}
	}
	p.close()
}

// A clean records one completed compaction instant: its sources are the
// segments the log had below the clean's end, its cleaned segments those
// it has there after, both as the log describes them, and its records
// removed the report's. A clean with nothing to do records nothing.
func TestCleanRecordsInstant(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/kafka/keyed-0"
	props := map[string]string{"internal.segment.bytes": "1500", "delete.retention.ms": "0", "segment.index.bytes": "4096"}
	keyedLog(t, fsys, dir, props)
	before := segRefs(t, fsys, dir)
	if _, err := fsys.Stat(timeline.Dir(dir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a timeline before the clean: %v", err)
	}

	rep := clean(t, fsys, dir, props, t0+3*day)
	if !rep.Cleanable || len(rep.Groups) < 2 || rep.Removed.Records == 0 {
		t.Fatalf("the clean: %s (%d groups)", rep, len(rep.Groups))
	}
	after := segRefs(t, fsys, dir)
	insts := compactions(t, fsys, dir)
	if len(insts) != 1 {
		t.Fatalf("%d compaction instants, want 1: %v", len(insts), insts)
	}
	inst := insts[0]
	if rep.Instant == nil || rep.Instant.Time != inst.Time || rep.Instant.State != timeline.Completed {
		t.Fatalf("Report.Instant %v, the timeline's %v", rep.Instant, inst)
	}
	plan, _ := inst.Plan.(*timeline.Compaction)
	res, _ := inst.Result.(*timeline.Compaction)
	if plan == nil || res == nil {
		t.Fatalf("plan %v, result %v", inst.Plan, inst.Result)
	}
	// The segments below the end, before and after; the active one stays.
	below := func(refs []timeline.SegmentRef) []timeline.SegmentRef {
		return slices.DeleteFunc(slices.Clone(refs), func(r timeline.SegmentRef) bool { return r.BaseOffset >= res.EndOffset })
	}
	if res.EndOffset != before[len(before)-1].BaseOffset {
		t.Fatalf("end offset %d, want the active segment's base %d", res.EndOffset, before[len(before)-1].BaseOffset)
	}
	if d := cmp.Diff(below(before), res.Sources); d != "" {
		t.Errorf("result sources != the segments before the clean:\n%s", d)
	}
	if d := cmp.Diff(below(before), plan.Sources); d != "" {
		t.Errorf("planned sources != the segments before the clean:\n%s", d)
	}
	if d := cmp.Diff(below(after), res.Cleaned); d != "" {
		t.Errorf("cleaned != the segments after the clean:\n%s", d)
	}
	if before[len(before)-1] != after[len(after)-1] {
		t.Errorf("the active segment changed: %+v -> %+v", before[len(before)-1], after[len(after)-1])
	}
	want := &timeline.Compaction{
		Now: t0 + 3*day, FirstDirtyOffset: 0, EndOffset: rep.EndOffset, DeleteRetentionMs: 0,
		Sources: res.Sources, Cleaned: res.Cleaned,
		RecordsRemoved: map[string]int64{
			"superseded": rep.Removed.Superseded, "tombstone": rep.Removed.Tombstones, "aborted": rep.Removed.Aborted,
			"unkeyed": rep.Removed.Unkeyed, "marker": rep.Removed.Markers,
		},
	}
	if d := cmp.Diff(want, res); d != "" {
		t.Errorf("result:\n%s", d)
	}
	for _, k := range []string{"superseded", "aborted", "unkeyed"} {
		if res.RecordsRemoved[k] == 0 {
			t.Errorf("the workload removes no %s record: %v", k, res.RecordsRemoved)
		}
	}

	// Nothing to do: nothing recorded.
	if again := clean(t, fsys, dir, props, t0+3*day); again.Cleanable || again.Instant != nil {
		t.Fatalf("second clean: %s, instant %v", again, again.Instant)
	}
	if n := len(compactions(t, fsys, dir)); n != 1 {
		t.Fatalf("%d compaction instants after a clean with nothing to do", n)
	}

	// A second pass, past the delete horizon the first stamped, from the
	// checkpoint: the tombstones go, and it is a second instant.
	p := reopen(t, fsys, dir)
	p.put(compress.None, kv{"a", "again"})
	p.roll()
	p.put(compress.None, kv{"b", "active"})
	p.close()
	before = segRefs(t, fsys, dir)
	rep = clean(t, fsys, dir, props, t0+4*day)
	after = segRefs(t, fsys, dir)
	insts = compactions(t, fsys, dir)
	if len(insts) != 2 || rep.Instant == nil || insts[1].Time != rep.Instant.Time {
		t.Fatalf("compaction instants %v, Report.Instant %v", insts, rep.Instant)
	}
	res = insts[1].Result.(*timeline.Compaction)
	if res.FirstDirtyOffset != rep.FirstDirtyOffset || res.FirstDirtyOffset == 0 || res.EndOffset != before[len(before)-1].BaseOffset {
		t.Errorf("second pass: first dirty %d, end %d; report %d, %d", res.FirstDirtyOffset, res.EndOffset, rep.FirstDirtyOffset, rep.EndOffset)
	}
	if d := cmp.Diff(below(before), res.Sources); d != "" {
		t.Errorf("second pass: sources != the segments before:\n%s", d)
	}
	if d := cmp.Diff(below(after), res.Cleaned); d != "" {
		t.Errorf("second pass: cleaned != the segments after:\n%s", d)
	}
	if res.RecordsRemoved["tombstone"] != rep.Removed.Tombstones || res.RecordsRemoved["marker"] != rep.Removed.Markers ||
		res.RecordsRemoved["superseded"] != rep.Removed.Superseded || rep.Removed.Tombstones == 0 {
		t.Errorf("second pass: removed %v, report %+v", res.RecordsRemoved, rep.Removed)
	}
}

// A clean of a log that is not cleanable records nothing: it does not even
// create the timeline.
func TestCleanNothingRecordsNothing(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/kafka/idle-0"
	p := newLog(t, fsys, dir, nil)
	p.put(compress.None, kv{"a", "1"}, kv{"a", "2"}) // the active segment only
	p.close()
	rep := clean(t, fsys, dir, nil, t0+day)
	if rep.Cleanable || rep.Instant != nil {
		t.Fatalf("clean: %s, instant %v", rep, rep.Instant)
	}
	// Opening the log with its timeline may leave the timeline's empty
	// directories (timeline.Sync makes them), but no file.
	if _, err := fsys.Stat(path.Join(dir, ".segkit")); err == nil {
		if files := snapshotFS(t, fsys, path.Join(dir, ".segkit")); len(files) > 0 {
			t.Fatalf("the clean wrote %v", slices.Collect(maps.Keys(files)))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}

// A timeline that cannot be read stops Clean before it changes anything,
// with an error that says so.
func TestCleanUnreadableTimeline(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/kafka/bad-0"
	props := map[string]string{"segment.index.bytes": "4096"}
	keyedLog(t, fsys, dir, props)
	if err := fsys.MkdirAll(timeline.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vfs.WriteFile(fsys, path.Join(timeline.Dir(dir), "17630000000000000.compaction.requested"), []byte("00000000 {\"v\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshotFS(t, fsys, "/kafka")
	rep, err := compaction.Clean(fsys, dir, testConfig(t, props), compaction.Options{Clock: clock{t0 + 3*day}})
	if err == nil || !strings.Contains(err.Error(), "timeline") {
		t.Fatalf("Clean with an unreadable timeline: %v, %v", rep, err)
	}
	if d := cmp.Diff(before, snapshotFS(t, fsys, "/kafka")); d != "" {
		t.Fatalf("Clean changed the directory (%v):\n%s", err, d)
	}
}

// A clean that fails before its first rename rolls its instant back; one
// that fails after leaves it inflight, and the next Open with the
// timeline completes it with the groups swapped in.
func TestCleanFailureInstant(t *testing.T) {
	props := map[string]string{"internal.segment.bytes": "1500", "delete.retention.ms": "0", "segment.index.bytes": "4096"}
	cfg := testConfig(t, props)
	opt := compaction.Options{Clock: clock{t0 + 3*day}}
	for _, tt := range []struct {
		name     string
		fail     vfs.Predicate
		inflight bool
	}{
		{"create_cleaned", func(op vfs.Op) bool {
			return op.Kind == vfs.OpCreate && strings.HasSuffix(op.Path, ".log.cleaned")
		}, false},
		{"second_swap", func(op vfs.Op) bool {
			return op.Kind == vfs.OpRename && strings.HasSuffix(op.NewPath, ".log.deleted") && !strings.HasSuffix(op.Path, "/00000000000000000000.log")
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			dir := "/kafka/f-0"
			keyedLog(t, fsys, dir, props)
			before := segRefs(t, fsys, dir)
			_, err := compaction.Clean(vfs.WithFaults(fsys, vfs.EIO(tt.fail)), dir, cfg, opt)
			if !errors.Is(err, vfs.ErrInjected) {
				t.Fatalf("Clean: %v", err)
			}
			tl, err2 := timeline.Open(fsys, dir, timeline.Options{ReadOnly: true})
			if err2 != nil {
				t.Fatal(err2)
			}
			pending := tl.Pending()
			if tt.inflight {
				if len(pending) != 1 || pending[0].Instant().State != timeline.Inflight || !strings.Contains(err.Error(), "left inflight") {
					t.Fatalf("pending %v, error %v", pending, err)
				}
			} else {
				insts, err2 := tl.Instants(timeline.Filter{})
				if err2 != nil {
					t.Fatal(err2)
				}
				if len(pending) != 0 || len(insts) != 1 || insts[0].Action != timeline.ActionRollback || !strings.Contains(err.Error(), "rolled back") {
					t.Fatalf("pending %v, instants %v, error %v", pending, insts, err)
				}
				if d := cmp.Diff(before, segRefs(t, fsys, dir)); d != "" {
					t.Fatalf("the failed clean changed the log:\n%s", d)
				}
			}
			l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Timeline: true, Clock: clock{t0 + 3*day}})
			if err != nil {
				t.Fatal(err)
			}
			after := refsOf(t, l)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			insts := compactions(t, fsys, dir)
			if !tt.inflight {
				if len(insts) != 0 {
					t.Fatalf("compaction instants %v", insts)
				}
				return
			}
			if len(insts) != 1 {
				t.Fatalf("compaction instants %v", insts)
			}
			res := insts[0].Result.(*timeline.Compaction)
			// The first group was swapped in: its sources are replaced,
			// its cleaned segment is in the log.
			if len(res.Sources) == 0 || res.Sources[0] != before[0] || len(res.Cleaned) == 0 || res.Cleaned[0] != after[0] {
				t.Fatalf("result %+v\nbefore %+v\nafter %+v", res, before, after)
			}
		})
	}
}

// TestCleanTimelineCrash crashes a clean at every mutating filesystem
// operation (its timeline's writes included), takes the images a power
// cut could leave, opens each with the timeline as the engine does, and
// checks that the timeline and the files agree: nothing is pending, a
// completed compaction instant exists exactly when a source segment was
// replaced, it names the sources replaced, and its cleaned segments are
// in the log. A clean after the crash records one more instant.
func TestCleanTimelineCrash(t *testing.T) {
	base := vfs.NewMem()
	dir := "/kafka/tlcrash-0"
	props := map[string]string{"index.interval.bytes": "100", "internal.segment.bytes": "1200", "delete.retention.ms": "0", "segment.index.bytes": "4096"}
	keyedLog(t, base, dir, props)
	cfg := testConfig(t, props)
	opt := compaction.Options{Clock: clock{t0 + 3*day}}

	// The sources, with their bytes: a clean of a clone replaces every
	// one of them (each group loses records), in several groups.
	srcLog := map[int64][]byte{}
	ref := base.CrashClone(vfs.CrashConfig{})
	rep, err := compaction.Clean(ref, dir, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) < 2 {
		t.Fatalf("%d groups, want several", len(rep.Groups))
	}
	for _, s := range rep.Instant.Result.(*timeline.Compaction).Sources {
		b, err := vfs.ReadFile(base, path.Join(dir, segName(s.BaseOffset)))
		if err != nil {
			t.Fatal(err)
		}
		srcLog[s.BaseOffset] = b
	}
	replaced := func(fsys vfs.FS, l *kafkalog.Log) map[int64]bool {
		out := map[int64]bool{}
		for b, want := range srcLog {
			got, err := vfs.ReadFile(fsys, path.Join(dir, segName(b)))
			if err != nil || !bytes.Equal(got, want) || !slices.ContainsFunc(l.Segments(), func(s kafkalog.SegmentView) bool { return s.BaseOffset() == b }) {
				out[b] = true
			}
		}
		return out
	}
	if n := len(replaced(ref, openRO(t, ref, dir))); n != len(srcLog) {
		t.Fatalf("the clean replaced %d of %d sources", n, len(srcLog))
	}

	points, withInstant := 0, 0
	for k := 0; ; k++ {
		m := base.CrashClone(vfs.CrashConfig{})
		crash := vfs.CrashAfter(k)
		_, err := compaction.Clean(vfs.WithFaults(m, crash), dir, cfg, opt)
		if !crash.Crashed() {
			if err != nil {
				t.Fatalf("no crash, yet: %v", err)
			}
			break
		}
		if !errors.Is(err, vfs.ErrCrashed) && !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("crash after %d operations: Clean returned %v", k, err)
		}
		points++
		for seed := range uint64(2) {
			after := m.CrashClone(vfs.CrashConfig{Seed: seed + uint64(k)*7, UnsyncedDataPercent: []int{0, 100}[seed], TornWrites: seed == 1})
			l, err := kafkalog.Open(after, dir, cfg, kafkalog.Options{Timeline: true, TruncateCorrupt: true})
			if err != nil {
				t.Fatalf("crash after %d operations (seed %d): open: %v", k, seed, err)
			}
			tl := l.Timeline()
			if p := tl.Pending(); len(p) > 0 {
				t.Fatalf("crash after %d operations (seed %d): pending after open: %v", k, seed, p[0].Instant())
			}
			insts, err := tl.Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionCompaction}})
			if err != nil {
				t.Fatal(err)
			}
			gone := replaced(after, l)
			if len(insts) > 1 || (len(insts) == 1) != (len(gone) > 0) {
				t.Fatalf("crash after %d operations (seed %d): %d compaction instants, %d sources replaced (%v)", k, seed, len(insts), len(gone), gone)
			}
			if len(insts) == 1 {
				withInstant++
				res, _ := insts[0].Result.(*timeline.Compaction)
				if res == nil {
					t.Fatalf("crash after %d operations (seed %d): no result: %v", k, seed, insts[0])
				}
				named := map[int64]bool{}
				for _, s := range res.Sources {
					named[s.BaseOffset] = true
				}
				if !cmp.Equal(named, gone) {
					t.Fatalf("crash after %d operations (seed %d): the instant names sources %v, the files replaced %v", k, seed, named, gone)
				}
				now := refsOf(t, l)
				for _, c := range res.Cleaned {
					if !slices.ContainsFunc(now, func(r timeline.SegmentRef) bool { return r.BaseOffset == c.BaseOffset && r.Size == c.Size }) {
						t.Fatalf("crash after %d operations (seed %d): cleaned segment %+v not in the log %+v", k, seed, c, now)
					}
				}
				if len(res.Cleaned) == 0 {
					t.Fatalf("crash after %d operations (seed %d): no cleaned segment in %+v", k, seed, res)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			// A clean after the crash: one more instant when it rewrites
			// anything, nothing pending.
			rep, err := compaction.Clean(after, dir, cfg, opt)
			if err != nil {
				t.Fatalf("crash after %d operations (seed %d): clean after the crash: %v", k, seed, err)
			}
			want := len(insts)
			if rep.Instant != nil {
				want++
			}
			if got := len(compactions(t, after, dir)); got != want {
				t.Fatalf("crash after %d operations (seed %d): %d compaction instants after the next clean, want %d", k, seed, got, want)
			}
		}
	}
	if points < 20 || withInstant == 0 {
		t.Fatalf("%d crash points, %d images with a compaction instant", points, withInstant)
	}
	t.Logf("%d crash points, 2 power cuts each; %d images with a completed compaction instant", points, withInstant)
}

func segName(base int64) string { return segment.FileName(base, segment.LogSuffix) }

func openRO(t *testing.T, fsys vfs.FS, dir string) *kafkalog.Log {
	t.Helper()
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}
