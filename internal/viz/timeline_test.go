package viz

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/demo"
	"github.com/segkit/segkit/internal/historyjson"
	"github.com/segkit/segkit/internal/retentionapply"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

const (
	payDir = "kafka-logs/payments-0"
	payT0  = int64(1_772_442_000_000) // 2026-03-02T09:00:00Z
)

// removal is what the engine did to one offset, as the test saw it.
type removal struct {
	by, at int64 // the instant's time and completion (ms)
	rule   string
}

// payments is a partition run through retention checks for real, with
// what each check removed, read from the engine's segments before and
// after it (not from the timeline).
type payments struct {
	fsys    *vfs.Mem
	l       *kafkalog.Log
	removed map[int64]removal
	written map[int64]int64 // offset -> the roll instant that closed its segment
	pending int
}

// buildPayments writes ten records, one a second (segment.ms 2500:
// segments 0, 3, 6, 9), and runs three checks with retention.ms 5000
// through retentionapply.Check, the code of `segviz retention --apply`:
//
//	t0+8.5 s   time: deletes segment 0 (offsets 0-2)
//	           then a DeleteRecords request (not recorded) moves the log
//	           start offset to 4
//	t0+11.5 s  time: deletes segment 3 (3 was already unreadable)
//	t0+20 s    rolls (a roll instant closing segment 9), then deletes 6 and 9
//
// then appends offsets 10-12, takes a savepoint on them and leaves one
// clean instant requested (pending).
func buildPayments(t *testing.T) *payments {
	t.Helper()
	ms := payT0
	clk := msClock{&ms}
	fsys := vfs.MemOptions{Clock: clk.Now}.New()
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{config.SegmentMs: "2500", config.RetentionMs: "5000"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := kafkalog.Open(fsys, payDir, cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	tl, err := timeline.Open(fsys, payDir, timeline.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	appendAt := func(at int64, i int) {
		t.Helper()
		ms = at
		spec := record.NewBatchSpec(0, compress.None)
		b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: ms, Value: fmt.Appendf(nil, "payment-%d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		appendAt(payT0+int64(i)*1000, i)
	}
	pay := &payments{fsys: fsys, l: l, removed: map[int64]removal{}, written: map[int64]int64{}}
	p := retention.PolicyFrom(cfg, config.DefaultBroker())
	check := func(now int64) {
		t.Helper()
		ms = now
		before := segRanges(l)
		rep, err := retentionapply.Check(l, tl, p, now)
		if err != nil {
			t.Fatal(err)
		}
		kept := map[int64]bool{}
		for _, s := range segRanges(l) {
			kept[s[0]] = true
		}
		for _, s := range before {
			if kept[s[0]] {
				continue
			}
			// The clean instant that names the segment.
			var by *timeline.Instant
			for i, inst := range rep.Instants {
				if c, ok := inst.Result.(*timeline.Clean); ok && slices.ContainsFunc(c.Segments, func(r timeline.SegmentRef) bool { return r.BaseOffset == s[0] }) {
					by = &rep.Instants[i]
				}
			}
			if by == nil {
				t.Fatalf("check at %d deleted segment %d, which no instant names: %v", now, s[0], rep.Instants)
			}
			for off := s[0]; off < s[1]; off++ {
				if _, done := pay.removed[off]; !done {
					pay.removed[off] = removal{by.Time.Millis, by.Completed.Millis, by.Result.(*timeline.Clean).Rule}
				}
			}
		}
		for _, inst := range rep.Instants {
			if r, ok := inst.Result.(*timeline.Roll); ok {
				for off := r.Closed.BaseOffset; off < r.NewBaseOffset; off++ {
					pay.written[off] = inst.Time.Millis
				}
			}
		}
	}
	check(payT0 + 8500)
	if err := l.IncrementLogStartOffset(4); err != nil {
		t.Fatal(err)
	}
	check(payT0 + 11500)
	check(payT0 + 20000)
	for i := 10; i < 13; i++ {
		appendAt(payT0+21000+int64(i), i)
	}
	x, err := tl.Begin(timeline.ActionSavepoint, &timeline.Savepoint{Label: "dispute-7", FirstOffset: 10, LastOffset: 12})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Complete(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tl.Begin(timeline.ActionClean, &timeline.Clean{Rule: "time", Now: ms}); err != nil {
		t.Fatal(err)
	}
	pay.pending = 1
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	return pay
}

// segRanges lists the live segments as [base, next).
func segRanges(l *kafkalog.Log) [][2]int64 {
	segs := l.Segments()
	out := make([][2]int64, len(segs))
	for i, s := range segs {
		out[i] = [2]int64{s.BaseOffset(), l.LogEndOffset()}
		if i+1 < len(segs) {
			out[i][1] = segs[i+1].BaseOffset()
		}
	}
	return out
}

// roundTrip marshals v and decodes it into a T, as the page's paths do.
func roundTrip[T any](t *testing.T, v any) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTimelineMatchesInstants: the view's instants are timeline.Instants',
// each as `segviz history --json` prints it (historyjson.InstantOf) with
// its summary and offsets, and the pending instant is counted, not shown.
func TestTimelineMatchesInstants(t *testing.T) {
	pay := buildPayments(t)
	s := NewSession(pay.fsys, Options{})
	defer s.Close()
	got := call[TimelineJSON](t, s, "timeline", Params{"dir": payDir})

	tl, err := timeline.Open(pay.fsys, payDir, timeline.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	insts, err := tl.Instants(timeline.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, inst := range insts {
		actions = append(actions, string(inst.Action))
	}
	// Three cleans, the roll before the last, the savepoint.
	if want := []string{"clean", "clean", "roll", "clean", "savepoint"}; !slices.Equal(actions, want) {
		t.Fatalf("timeline.Instants: %v, want %v", actions, want)
	}
	if len(got.Instants) != len(insts) || got.Total != len(insts) || got.Truncated || got.Pending != pay.pending || !got.Exists {
		t.Fatalf("%d instants (total %d, truncated %v), %d pending, exists %v; the timeline has %d and %d pending",
			len(got.Instants), got.Total, got.Truncated, got.Pending, got.Exists, len(insts), pay.pending)
	}
	for i, inst := range insts {
		want := roundTrip[TimelineInstantJSON](t, TimelineInstantJSON{
			Instant: historyjson.InstantOf(inst), InstantTime: inst.Time.String(), CompletedTime: inst.Completed.String(),
			Summary: historyjson.Summary(inst), Offsets: historyjson.Affects(inst),
		})
		if want.Offsets == nil {
			want.Offsets = []historyjson.Range{}
		}
		if diff := cmp.Diff(want, got.Instants[i]); diff != "" {
			t.Errorf("instant %d (%s) (-timeline +view):\n%s", i, inst, diff)
		}
	}
	// What the lane draws, spelled out: the second clean removed 4-5
	// (the log start offset's move), the roll closed 9, the savepoint
	// holds 10-12.
	for i, want := range map[int][]historyjson.Range{
		0: {{From: 0, To: 3, What: "removed"}},
		1: {{From: 4, To: 6, What: "removed"}},
		2: {{From: 9, To: 10, What: "closed"}},
		3: {{From: 6, To: 10, What: "removed"}},
		4: {{From: 10, To: 13, What: "held"}},
	} {
		if !slices.Equal(got.Instants[i].Offsets, want) {
			t.Errorf("instant %d (%s) offsets %v, want %v", i, got.Instants[i].Action, got.Instants[i].Offsets, want)
		}
	}
	if c := got.Instants[0]; c.Imported || c.State != "completed" || !strings.Contains(c.Summary, "time rule (retention.ms=5000)") {
		t.Errorf("the first clean: %+v", c)
	}
	if sp := got.Instants[4]; sp.Summary != `savepoint "dispute-7": a hold on offsets 10-12 (and every later segment)` {
		t.Errorf("savepoint summary %q", sp.Summary)
	}
	if !slices.Contains(got.Actions, "tier") || len(got.Actions) != len(timeline.Actions()) {
		t.Errorf("legend %v", got.Actions)
	}
}

// TestWhyGoneEveryOffset asks about every offset of the scenario, and one
// past its end: the answer is historyjson's (the one `segviz history
// --offset` gives), and it names what the engine actually did.
func TestWhyGoneEveryOffset(t *testing.T) {
	pay := buildPayments(t)
	s := NewSession(pay.fsys, Options{})
	defer s.Close()
	tl, err := timeline.Open(pay.fsys, payDir, timeline.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	insts, err := tl.Instants(timeline.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	start, end := pay.l.LogStartOffset(), pay.l.LogEndOffset()
	if start != 10 || end != 13 {
		t.Fatalf("log %d..%d, want 10..13", start, end)
	}
	for n := int64(0); n <= end; n++ {
		got := call[WhyGoneJSON](t, s, "whygone", Params{"dir": payDir, "offset": fmt.Sprint(n)})
		// historyjson's answer over the same log and instants.
		f, err := historyjson.ReadFacts(pay.l, n, 0)
		if err != nil {
			t.Fatal(err)
		}
		a := historyjson.Lookup(n, insts, f)
		if diff := cmp.Diff(a.JSON(), got.Offset); diff != "" {
			t.Errorf("offset %d (-historyjson +view):\n%s", n, diff)
		}
		if got.Why != a.Why || got.Text != a.Text(payDir) || got.Pending != pay.pending {
			t.Errorf("offset %d: why %q text %q pending %d; historyjson: %q %q", n, got.Why, got.Text, got.Pending, a.Why, a.Text(payDir))
		}
		// And the engine's own record of the offset.
		want := historyjson.Offset{Offset: n, Readable: start <= n && n < end}
		if r, ok := pay.removed[n]; ok {
			by, at, rule := r.by, r.at, r.rule
			want.RemovedBy, want.At, want.Rule = &by, &at, &rule
		}
		if w, ok := pay.written[n]; ok {
			want.WrittenBy = &w
		}
		if diff := cmp.Diff(want, got.Offset); diff != "" {
			t.Errorf("offset %d: the view differs from what the engine did (-engine +view):\n%s\n%s", n, diff, got.Text)
		}
		if (got.RemovedBy == nil) != (got.RemovedInstant == nil) || got.RemovedInstant != nil && got.RemovedInstant.Instant.Instant != *got.RemovedBy {
			t.Errorf("offset %d: removedBy %v, removedInstant %+v", n, got.RemovedBy, got.RemovedInstant)
		}
		if (got.WrittenBy == nil) != (got.WrittenInstant == nil) || got.WrittenInstant != nil && got.WrittenInstant.Action != "roll" {
			t.Errorf("offset %d: writtenBy %v, writtenInstant %+v", n, got.WrittenBy, got.WrittenInstant)
		}
	}
	// Offset 3 went below the log start offset by an unrecorded
	// DeleteRecords; the check that deleted its segment says so.
	if got := call[WhyGoneJSON](t, s, "whygone", Params{"dir": payDir, "offset": "3"}); !strings.Contains(got.Why, "the log start offset was already 4, past offset 3") {
		t.Errorf("offset 3: %q", got.Why)
	}
	if got := call[WhyGoneJSON](t, s, "whygone", Params{"dir": payDir, "offset": "11"}); !got.Readable || !strings.Contains(got.Text, "readable (log start offset 10, log end offset 13)") ||
		!strings.Contains(got.Text, "written into the active segment") {
		t.Errorf("offset 11:\n%s", got.Text)
	}
}

// TestTimelineReadOnly reads the lane and asks why on a filesystem that
// fails every change, for a partition with a timeline and one without,
// and checks that nothing tried one (the timeline's directory is not
// created).
func TestTimelineReadOnly(t *testing.T) {
	pay := buildPayments(t)
	ffs := vfs.WithFaults(pay.fsys, vfs.Inject(errors.New("read-only"), vfs.Mutating()))
	s := NewSession(ffs, Options{})
	defer s.Close()
	if j := call[TimelineJSON](t, s, "timeline", Params{"dir": payDir}); len(j.Instants) != 5 {
		t.Errorf("%d instants", len(j.Instants))
	}
	if j := call[WhyGoneJSON](t, s, "whygone", Params{"dir": payDir, "offset": "5"}); j.RemovedBy == nil {
		t.Errorf("offset 5: %+v", j)
	}
	// The compaction test's partition has no timeline.
	mem := buildUsers(t, -1)
	ufs := vfs.WithFaults(mem, vfs.Inject(errors.New("read-only"), vfs.Mutating()))
	us := NewSession(ufs, Options{})
	defer us.Close()
	j := call[TimelineJSON](t, us, "timeline", Params{"dir": usersDir})
	if j.Exists || len(j.Instants) != 0 || j.Total != 0 || j.Pending != 0 {
		t.Errorf("users-0: %+v", j)
	}
	if w := call[WhyGoneJSON](t, us, "whygone", Params{"dir": usersDir, "offset": "0"}); !w.Readable || w.RemovedBy != nil || w.WrittenBy != nil {
		t.Errorf("users-0 offset 0: %+v", w)
	}
	if _, err := mem.Stat(timeline.Dir(usersDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the timeline's directory: %v", err)
	}
	for _, f := range []*vfs.FaultFS{ffs, ufs} {
		for _, op := range f.Log() {
			if op.Kind.Mutating() {
				t.Errorf("the view tried %v", op)
			}
		}
		if len(f.Log()) == 0 {
			t.Error("no operation logged: the test does not see the view's reads")
		}
	}
}

func TestTimelineBadRequests(t *testing.T) {
	pay := buildPayments(t)
	s := NewSession(pay.fsys, Options{})
	defer s.Close()
	for _, tt := range []struct {
		name   string
		method string
		q      Params
		want   error
	}{
		{"no_dir", "timeline", Params{}, ErrBadRequest},
		{"missing_dir", "timeline", Params{"dir": "kafka-logs/nope-0"}, ErrNotFound},
		{"escape", "timeline", Params{"dir": "../x"}, ErrBadRequest},
		{"why_no_offset", "whygone", Params{"dir": payDir}, ErrBadRequest},
		{"why_negative", "whygone", Params{"dir": payDir, "offset": "-1"}, ErrBadRequest},
		{"why_not_a_number", "whygone", Params{"dir": payDir, "offset": "x"}, ErrBadRequest},
		{"why_missing_dir", "whygone", Params{"dir": "kafka-logs/nope-0", "offset": "1"}, ErrNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Dispatch(tt.method, tt.q); !errors.Is(err, tt.want) {
				t.Errorf("%s %v: error %v, want %v", tt.method, tt.q, err, tt.want)
			}
		})
	}
	// A damaged instant file: both calls say which file, as a
	// corruption error (the page shows it; `segviz history` exits 1).
	infos, err := vfs.ReadDir(pay.fsys, timeline.Dir(payDir))
	if err != nil {
		t.Fatal(err)
	}
	var name string
	for _, fi := range infos {
		if strings.HasSuffix(fi.Name(), ".savepoint") {
			name = path.Join(timeline.Dir(payDir), fi.Name())
		}
	}
	f, err := pay.fsys.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{'x'}, 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, m := range []string{"timeline", "whygone"} {
		_, err := s.Dispatch(m, Params{"dir": payDir, "offset": "1"})
		var ce *format.CorruptionError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s on a damaged timeline: %v", m, err)
		}
	}
}

// TestTimelineBounded: past MaxTimelineInstants the view keeps the latest
// and says how many there are.
func TestTimelineBounded(t *testing.T) {
	pay := buildPayments(t)
	s := NewSession(pay.fsys, Options{})
	defer s.Close()
	defer func(n int) { MaxTimelineInstants = n }(MaxTimelineInstants)
	MaxTimelineInstants = 2
	j := call[TimelineJSON](t, s, "timeline", Params{"dir": payDir})
	if !j.Truncated || j.Total != 5 || len(j.Instants) != 2 || j.Instants[0].Action != "clean" || j.Instants[1].Action != "savepoint" {
		t.Errorf("truncated %v, total %d, %d instants (%+v)", j.Truncated, j.Total, len(j.Instants), j.Instants)
	}
}

// TestTimelineDemo: the demo's orders-0 carries a timeline made by the
// engine's code paths, which the lane shows on first run: its rolls, a
// savepoint taken and released, and the retention check that deleted
// segment 0 twenty seconds before Now.
func TestTimelineDemo(t *testing.T) {
	s := demoSession(t)
	j := call[TimelineJSON](t, s, "timeline", Params{"dir": demo.Partition})
	var actions []string
	for _, inst := range j.Instants {
		actions = append(actions, inst.Action)
	}
	want := []string{"roll", "roll", "roll", "roll", "roll", "roll", "savepoint", "roll", "savepoint", "clean"}
	if !slices.Equal(actions, want) || j.Pending != 0 {
		t.Fatalf("orders-0's lane: %v (%d pending), want %v", actions, j.Pending, want)
	}
	last := j.Instants[len(j.Instants)-1]
	if last.Completed != demo.Now.Add(-20*time.Second).UnixMilli() {
		t.Errorf("the clean completed at %d, want 20 s before now", last.Completed)
	}
	why := call[WhyGoneJSON](t, s, "whygone", Params{"dir": demo.Partition, "offset": "0"})
	if why.RemovedBy == nil || *why.RemovedBy != last.Instant.Instant || *why.Rule != "time" || why.WrittenBy == nil ||
		!strings.Contains(why.Why, "retention.ms=820800000") {
		t.Errorf("offset 0: %+v", why)
	}
	// The DeleteRecords request 10 s before now is not in the timeline.
	if why := call[WhyGoneJSON](t, s, "whygone", Params{"dir": demo.Partition, "offset": "380"}); why.Readable || why.RemovedBy != nil ||
		!strings.Contains(why.Why, "something segkit did not record") {
		t.Errorf("offset 380: %+v", why)
	}
	// orders-1 has none.
	if j := call[TimelineJSON](t, s, "timeline", Params{"dir": demo.Damaged}); j.Exists || len(j.Instants) != 0 {
		t.Errorf("orders-1: %+v", j)
	}
}
