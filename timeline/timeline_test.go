package timeline

import (
	"errors"
	"path"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

func TestInstantTimeText(t *testing.T) {
	tests := []struct {
		name string
		t    InstantTime
		text string
	}{
		{"zero", InstantTime{}, "00000000000000000"},
		{"seq", InstantTime{Seq: 7}, "00000000000000007"},
		{"june_2024", InstantTime{Millis: 1717243200000, Seq: 12}, "17172432000000012"},
		{"max", InstantTime{Millis: MaxMillis, Seq: MaxSeq}, "99999999999999999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.t.String(); got != tt.text {
				t.Errorf("String() = %q, want %q", got, tt.text)
			}
			back, err := ParseInstantTime(tt.text)
			if err != nil || back != tt.t {
				t.Errorf("ParseInstantTime(%q) = %v, %v; want %v", tt.text, back, err, tt.t)
			}
		})
	}
	// The text forms sort as the times do.
	for i := range tests {
		for j := range tests {
			if c := tests[i].t.Compare(tests[j].t); c != strings.Compare(tests[i].text, tests[j].text) {
				t.Errorf("%v.Compare(%v) = %d, the texts compare %d", tests[i].t, tests[j].t, c, strings.Compare(tests[i].text, tests[j].text))
			}
		}
	}
	for _, bad := range []string{"", "1", "1717243200000001", "171724320000000123", "1717243200000001x", "-1717243200000001", " 7172432000000012"} {
		if _, err := ParseInstantTime(bad); err == nil {
			t.Errorf("ParseInstantTime(%q) accepted", bad)
		}
	}
}

func TestNextTime(t *testing.T) {
	at := func(ms int64) time.Time { return time.UnixMilli(ms) }
	tests := []struct {
		name    string
		last    InstantTime
		now     time.Time
		want    InstantTime
		wantErr error
	}{
		{"clock_ahead", InstantTime{Millis: 100, Seq: 5}, at(200), InstantTime{Millis: 200}, nil},
		{"same_millisecond", InstantTime{Millis: 200, Seq: 5}, at(200), InstantTime{Millis: 200, Seq: 6}, nil},
		{"clock_behind", InstantTime{Millis: 300, Seq: 0}, at(200), InstantTime{Millis: 300, Seq: 1}, nil},
		{"sequence_exhausted", InstantTime{Millis: 300, Seq: MaxSeq}, at(200), InstantTime{Millis: 301}, nil},
		{"before_1970", InstantTime{}, at(-5000), InstantTime{Seq: 1}, nil},
		{"first_ever", InstantTime{}, at(1717243200000), InstantTime{Millis: 1717243200000}, nil},
		{"past_2286", InstantTime{}, at(MaxMillis + 1), InstantTime{}, ErrTimeRange},
		{"last_possible", InstantTime{Millis: MaxMillis, Seq: MaxSeq}, at(0), InstantTime{}, ErrTimeRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := nextTime(tt.last, tt.now)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("nextTime: error %v, want %v", err, tt.wantErr)
			}
			if err == nil && (got != tt.want || got.Compare(tt.last) <= 0) {
				t.Errorf("nextTime(%v, %v) = %v, want %v (after last)", tt.last, tt.now.UnixMilli(), got, tt.want)
			}
		})
	}
}

func TestFileNames(t *testing.T) {
	tm := InstantTime{Millis: 1717243200000, Seq: 3}
	c := InstantTime{Millis: 1717243200050}
	for _, a := range Actions() {
		for _, n := range []fileName{
			{time: tm, action: a, state: Requested},
			{time: tm, action: a, state: Inflight},
			{time: tm, completed: c, action: a, state: Completed},
		} {
			s := n.String()
			back, err := parseFileName(s)
			if err != nil || back != n {
				t.Errorf("parseFileName(%q) = %+v, %v; want %+v", s, back, err, n)
			}
			// Never a name Kafka's loader or segkit's take for a
			// partition file, were it beside the segments.
			if _, _, err := segment.ParseFileName(s); err == nil {
				t.Errorf("%q parses as a segment file name", s)
			}
			for _, suffix := range []string{".log", ".index", ".timeindex", ".txnindex", ".snapshot", ".deleted", ".cleaned", ".swap", ".tmp", ".checkpoint"} {
				if strings.HasSuffix(s, suffix) {
					t.Errorf("%q ends in Kafka's %s", s, suffix)
				}
			}
		}
	}
	// A listing orders an instant's files requested, inflight, completed,
	// and instants by time.
	names := []string{
		fileName{time: c, action: ActionClean, state: Requested}.String(),
		fileName{time: tm, completed: c, action: ActionRoll, state: Completed}.String(),
		fileName{time: tm, action: ActionRoll, state: Requested}.String(),
		fileName{time: tm, action: ActionRoll, state: Inflight}.String(),
	}
	slices.Sort(names)
	want := []string{"17172432000000003.roll.inflight", "17172432000000003.roll.requested", "17172432000000003_17172432000500000.roll", "17172432000500000.clean.requested"}
	if !slices.Equal(names, want) {
		t.Errorf("sorted names %q, want %q", names, want)
	}

	bad := []struct {
		name    string
		unknown bool // ErrUnknownAction
	}{
		{"17172432000000003", false},
		{"17172432000000003.roll", false}, // completed without a completion time
		{"17172432000000003.roll.done", false},
		{"17172432000000003_17172432000000003.roll", false}, // completed at its own time
		{"17172432000000003_17172432000000002.roll", false},
		{"17172432000000003_1717243200000005.roll", false},
		{"1717243200000003.roll.requested", false},
		{"17172432000000003-roll.requested", false},
		{"17172432000000003.frob.requested", true},
		{"17172432000000003_17172432000500000.frob", true},
		{"17172432000000003..requested", true},
	}
	for _, b := range bad {
		_, err := parseFileName(b.name)
		if err == nil || errors.Is(err, ErrUnknownAction) != b.unknown {
			t.Errorf("parseFileName(%q): error %v, want one (unknown action: %v)", b.name, err, b.unknown)
		}
	}

	an := archiveName{min: tm, max: c, layer: 3}
	if s := an.String(); s != "17172432000000003_17172432000500000_3.archive" {
		t.Errorf("archive name %q", s)
	} else if back, err := parseArchiveName(s); err != nil || back != an {
		t.Errorf("parseArchiveName(%q) = %+v, %v", s, back, err)
	}
	for _, s := range []string{"17172432000000003_17172432000500000_3.archiv", "17172432000000003_17172432000500000_x.archive", "17172432000500000_17172432000000003_0.archive", "17172432000000003_17172432000500000_10.archive", "17172432000000003-17172432000500000_1.archive"} {
		if _, err := parseArchiveName(s); err == nil {
			t.Errorf("parseArchiveName(%q) accepted", s)
		}
	}
}

func TestPayloadsRoundTrip(t *testing.T) {
	seg := SegmentRef{BaseOffset: 100, NextOffset: 250, Size: 4096, LargestTimestamp: -1}
	rb := &Rollback{Instant: InstantTime{Millis: 5, Seq: 1}, InstantAction: ActionCompaction, InstantState: Inflight, Reason: "swap not found", Plan: &Compaction{Now: 9, Sources: []SegmentRef{seg}}}
	payloads := []Payload{
		&Roll{Reason: "segment.ms", Closed: &seg, NewBaseOffset: 250},
		&Clean{Rule: "size", Config: RetentionConfig{RetentionMs: -1, RetentionBytes: 1 << 30, FileDeleteDelayMs: 60000}, Now: 1717243200000, Segments: []SegmentRef{seg, seg}, OldLogStartOffset: 100, NewLogStartOffset: 250},
		&Compaction{Now: 1717243200000, FirstDirtyOffset: 7, EndOffset: 250, DeleteRetentionMs: 86400000, Sources: []SegmentRef{seg}, Cleaned: []SegmentRef{seg}, RecordsRemoved: map[string]int64{"superseded": 40, "tombstone": 2}},
		&Truncate{Reason: "divergence", OldLogEndOffset: 300, NewLogEndOffset: 250, OldLogStartOffset: 0, NewLogStartOffset: 0, Deleted: []SegmentRef{seg}, BytesTruncated: 77},
		&Recovery{CleanShutdown: false, RecoveryPoint: 100, LogStartOffset: 0, LogEndOffset: 250, Recovered: []int64{100, 200}, BytesTruncated: 12, Leftovers: []string{"00000000000000000100.log.swap"}, IndexesRebuilt: []string{"00000000000000000200.index"}},
		&Tier{},
		&Savepoint{Label: "legal-hold-17", By: "ops", Comment: "case 17", LogStartOffset: 0, LogEndOffset: 250, Segments: []SegmentRef{seg}},
		&Restore{Savepoint: InstantTime{Millis: 1717243200000, Seq: 2}, OldLogEndOffset: 400, NewLogEndOffset: 250, Segments: []SegmentRef{seg}},
		rb,
	}
	if len(payloads) != len(Actions()) {
		t.Fatalf("%d payloads for %d actions", len(payloads), len(Actions()))
	}
	for _, p := range payloads {
		t.Run(string(p.Action()), func(t *testing.T) {
			inst := Instant{Time: InstantTime{Millis: 10}, Action: p.Action(), State: Completed, Completed: InstantTime{Millis: 11}, Plan: p, Result: p}
			if p.Action() == ActionRollback {
				inst.Result = nil
			}
			line, err := encodeInstant(&inst)
			if err != nil {
				t.Fatal(err)
			}
			back, err := decodeInstantFile("f", line)
			if err != nil {
				t.Fatalf("decode %s: %v", line, err)
			}
			if d := cmp.Diff(inst, back); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		})
	}
	// Payloads of the wrong type are refused; nil pointers are no payload.
	if _, err := checkPayload(ActionRoll, &Clean{}); !errors.Is(err, ErrPayload) {
		t.Errorf("a Clean for a roll: %v", err)
	}
	if p, err := checkPayload(ActionRoll, (*Roll)(nil)); p != nil || err != nil {
		t.Errorf("a nil *Roll: %v, %v", p, err)
	}
	if p, err := checkPayload(ActionRoll, Roll{Reason: "x"}); p == nil || err != nil {
		t.Errorf("a Roll value: %v, %v", p, err)
	}
}

func TestLifecycle(t *testing.T) {
	m := newPartition(t)
	clock := newClock()
	tl := mustOpen(t, m, Options{Clock: clock})
	tdir := Dir(partDir)
	if fs := files(t, m, tdir); len(fs) != 0 {
		t.Fatalf("Open created %v", fs)
	}
	x, err := tl.Begin(ActionRoll, rollPlan(1))
	if err != nil {
		t.Fatal(err)
	}
	in := x.Instant()
	req := fileName{time: in.Time, action: ActionRoll, state: Requested}.String()
	if got := files(t, m, tdir); !slices.Equal(got, []string{req}) {
		t.Fatalf("after Begin: %v, want %v", got, []string{req})
	}
	if in.State != Requested || !cmp.Equal(in.Plan, rollPlan(1)) {
		t.Errorf("after Begin: %+v", in)
	}
	if got := mustInstants(t, tl, Filter{}); len(got) != 0 {
		t.Errorf("a requested instant is visible: %v", got)
	}
	if err := x.Inflight(); err != nil {
		t.Fatal(err)
	}
	infl := fileName{time: in.Time, action: ActionRoll, state: Inflight}.String()
	if got := files(t, m, tdir); !slices.Equal(got, []string{infl, req}) {
		t.Fatalf("after Inflight: %v", got)
	}
	if p := tl.Pending(); len(p) != 1 || p[0] != x || p[0].Instant().State != Inflight {
		t.Errorf("Pending = %v", p)
	}
	if got := mustInstants(t, tl, Filter{}); len(got) != 0 {
		t.Errorf("an inflight instant is visible: %v", got)
	}
	result := &Roll{Reason: "segment.bytes", NewBaseOffset: 200}
	if err := x.Complete(result); err != nil {
		t.Fatal(err)
	}
	done := x.Instant()
	if done.State != Completed || done.Completed.Compare(done.Time) <= 0 || !cmp.Equal(done.Result, result) {
		t.Errorf("after Complete: %+v", done)
	}
	comp := fileName{time: in.Time, completed: done.Completed, action: ActionRoll, state: Completed}.String()
	if got := files(t, m, tdir); !slices.Equal(got, []string{comp}) {
		t.Fatalf("after Complete: %v, want only %s", got, comp)
	}
	if len(tl.Pending()) != 0 {
		t.Errorf("still pending: %v", tl.Pending())
	}
	got := mustInstants(t, tl, Filter{})
	if d := sameInstants(t, got, []Instant{done}); d != "" {
		t.Error(d)
	}
	// The payloads returned are copies.
	got[0].Plan.(*Roll).Reason = "changed"
	if again := mustInstants(t, tl, Filter{}); again[0].Plan.(*Roll).Reason != "segment.bytes" {
		t.Errorf("Instants returned the timeline's own payload")
	}
	// Another Open sees the same.
	ro := mustOpen(t, m, Options{ReadOnly: true})
	if d := sameInstants(t, mustInstants(t, ro, Filter{}), []Instant{done}); d != "" {
		t.Errorf("reopened: %s", d)
	}
	// The file is the record line the doc describes.
	b, _ := vfs.ReadFile(m, path.Join(tdir, comp))
	if want := `{"v":1,"time":"` + in.Time.String() + `","action":"roll","state":"completed","completed":"` + done.Completed.String() + `","plan":{`; !strings.HasPrefix(string(b[jsonStart:]), want) || b[len(b)-1] != '\n' || b[crcLen] != ' ' {
		t.Errorf("file content %s", b)
	}
}

func TestPendingAcrossOpen(t *testing.T) {
	m := newPartition(t)
	tl := mustOpen(t, m, Options{Clock: newClock()})
	a, _ := tl.Begin(ActionCompaction, &Compaction{FirstDirtyOffset: 5, Sources: []SegmentRef{{BaseOffset: 0}}})
	b, _ := tl.Begin(ActionClean, &Clean{Rule: "time"})
	c, _ := tl.Begin(ActionSavepoint, &Savepoint{Label: "x"})
	if err := a.Inflight(); err != nil {
		t.Fatal(err)
	}
	if err := c.Complete(&Savepoint{Label: "x", LogEndOffset: 9}); err != nil {
		t.Fatal(err)
	}
	wantA, wantB := a.Instant(), b.Instant()

	// A new process: a is inflight, b requested, c completed.
	tl = mustOpen(t, m, Options{Clock: newClock()})
	p := tl.Pending()
	if len(p) != 2 {
		t.Fatalf("Pending: %d instants, want 2", len(p))
	}
	if d := sameInstants(t, []Instant{p[0].Instant(), p[1].Instant()}, []Instant{wantA, wantB}); d != "" {
		t.Fatalf("Pending: %s", d)
	}
	// The recovery finishes a and rolls back b.
	if err := p[0].Complete(&Compaction{FirstDirtyOffset: 5, EndOffset: 40}); err != nil {
		t.Fatal(err)
	}
	if err := p[1].Rollback("nothing was deleted"); err != nil {
		t.Fatal(err)
	}
	if err := p[1].Complete(nil); !errors.Is(err, ErrState) {
		t.Errorf("Complete after Rollback: %v", err)
	}
	tl = mustOpen(t, m, Options{ReadOnly: true})
	if len(tl.Pending()) != 0 {
		t.Errorf("still pending after the recovery: %d", len(tl.Pending()))
	}
	got := mustInstants(t, tl, Filter{})
	var acts []Action
	for _, in := range got {
		acts = append(acts, in.Action)
	}
	if !slices.Equal(acts, []Action{ActionCompaction, ActionSavepoint, ActionRollback}) {
		t.Fatalf("instants %v", acts)
	}
	rb := got[2].Plan.(*Rollback)
	if rb.Instant != wantB.Time || rb.InstantAction != ActionClean || rb.InstantState != Requested || rb.Reason != "nothing was deleted" || !cmp.Equal(rb.Plan, wantB.Plan) {
		t.Errorf("rollback plan %+v, want one of %v", rb, wantB)
	}
	// Times stay increasing though the new process's clock is behind.
	clock := newClock()
	clock.set(time.Unix(0, 0))
	tl = mustOpen(t, m, Options{Clock: clock})
	x, err := tl.Begin(ActionRoll, nil)
	if err != nil {
		t.Fatal(err)
	}
	if last := got[len(got)-1]; x.Instant().Time.Compare(last.Completed) <= 0 {
		t.Errorf("new instant %s not after %s", x.Instant().Time, last.Completed)
	}
}

func TestTransitionErrors(t *testing.T) {
	m := newPartition(t)
	tl := mustOpen(t, m, Options{Clock: newClock()})
	if _, err := tl.Begin("frob", nil); !errors.Is(err, ErrUnknownAction) {
		t.Errorf("Begin(frob): %v", err)
	}
	if _, err := tl.Begin(ActionRollback, nil); !errors.Is(err, ErrState) {
		t.Errorf("Begin(rollback): %v", err)
	}
	if _, err := tl.Begin(ActionRoll, &Clean{}); !errors.Is(err, ErrPayload) {
		t.Errorf("Begin(roll, Clean): %v", err)
	}
	if _, err := tl.Begin(ActionRestore, &Restore{Savepoint: InstantTime{Millis: MaxMillis + 1}}); !errors.Is(err, ErrPayload) {
		t.Errorf("a payload that does not decode back: %v", err)
	}
	saved := maxInstantFile
	maxInstantFile = 300
	_, err := tl.Begin(ActionSavepoint, &Savepoint{Comment: strings.Repeat("x", 300)})
	maxInstantFile = saved
	if !errors.Is(err, ErrPayload) {
		t.Errorf("an oversized plan: %v", err)
	}
	x, _ := tl.Begin(ActionRoll, nil)
	if err := x.Complete(&Clean{}); !errors.Is(err, ErrPayload) {
		t.Errorf("Complete(Clean) of a roll: %v", err)
	}
	if err := x.Inflight(); err != nil {
		t.Fatal(err)
	}
	if err := x.Inflight(); !errors.Is(err, ErrState) {
		t.Errorf("Inflight twice: %v", err)
	}
	if err := x.Complete(nil); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func() error{"Inflight": x.Inflight, "Complete": func() error { return x.Complete(nil) }, "Rollback": func() error { return x.Rollback("") }} {
		if err := f(); !errors.Is(err, ErrState) {
			t.Errorf("%s after Complete: %v", name, err)
		}
	}
	if got := files(t, m, Dir(partDir)); len(got) != 1 {
		t.Errorf("refused calls left files: %v", got)
	}

	ro := mustOpen(t, m, Options{ReadOnly: true})
	if _, err := ro.Begin(ActionRoll, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Begin on a read-only timeline: %v", err)
	}

	// A failed sync fails the timeline: every later write says so.
	faulty := vfs.WithFaults(m, vfs.EIO(vfs.KindIs(vfs.OpSync)))
	ft := mustOpen(t, faulty, Options{Clock: newClock()})
	if _, err := ft.Begin(ActionRoll, nil); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Begin with failing syncs: %v", err)
	}
	if _, err := ft.Begin(ActionRoll, nil); !errors.Is(err, ErrFailed) || !errors.Is(err, syscall.EIO) {
		t.Errorf("Begin after a failed sync: %v", err)
	}
	if ft.Err() == nil {
		t.Errorf("Err() = nil after a failed sync")
	}
	if got := mustInstants(t, ft, Filter{}); len(got) != 1 {
		t.Errorf("a failed timeline still reads: %d instants", len(got))
	}
	if _, err := Open(m, "/kafka/missing-0", Options{}); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("Open of a missing partition: %v", err)
	}
}

func TestArchival(t *testing.T) {
	m := newPartition(t)
	opt := Options{Clock: newClock(), ArchiveAfter: 4, MergeAfter: 3}
	tl := mustOpen(t, m, opt)
	var want []Instant
	maxActive, maxHistory := 0, 0
	for i := range 100 {
		want = append(want, runInstant(t, tl, i))
		fs := files(t, m, Dir(partDir))
		var active, history int
		for _, f := range fs {
			if strings.HasPrefix(f, HistoryDirName+"/") {
				history++
			} else {
				active++
			}
		}
		maxActive, maxHistory = max(maxActive, active), max(maxHistory, history)
		if active > opt.ArchiveAfter {
			t.Fatalf("after %d instants: %d active files, over ArchiveAfter %d: %v", i+1, active, opt.ArchiveAfter, fs)
		}
	}
	// 100 instants, 2 archived at a time: 49 archivals of two, layers of 3.
	if maxHistory > 2*4 || maxHistory < 3 {
		t.Errorf("the history held up to %d files", maxHistory)
	}
	got := mustInstants(t, tl, Filter{})
	if d := sameInstants(t, got, want); d != "" {
		t.Fatalf("Instants after archival:\n%s", d)
	}
	var layers []int
	for _, a := range tl.archives {
		layers = append(layers, a.name.layer)
	}
	if !slices.IsSortedFunc(layers, func(a, b int) int { return b - a }) || layers[0] < 2 {
		t.Errorf("archive layers %v: want merged layers, oldest highest", layers)
	}
	for _, ro := range []bool{false, true} {
		again := mustOpen(t, m, Options{ReadOnly: ro, ArchiveAfter: 4, MergeAfter: 3})
		if d := sameInstants(t, mustInstants(t, again, Filter{}), want); d != "" {
			t.Errorf("reopened (read-only %v):\n%s", ro, d)
		}
	}

	// A pending instant holds archival back: nothing at or after it moves.
	x, _ := tl.Begin(ActionCompaction, nil)
	for i := range 10 {
		want = append(want, runInstant(t, tl, 100+i))
	}
	for _, a := range tl.archives {
		if a.name.max.Compare(x.Instant().Time) >= 0 {
			t.Errorf("archive %s passes the pending instant %s", a.file, x.Instant().Time)
		}
	}
	if n := len(tl.done); n != 10 {
		t.Errorf("%d active completed instants behind a pending one, want 10", n)
	}
	if err := x.Complete(nil); err != nil {
		t.Fatal(err)
	}
	want = append(want, x.Instant())
	slices.SortFunc(want, func(a, b Instant) int { return a.Time.Compare(b.Time) })
	if d := sameInstants(t, mustInstants(t, tl, Filter{}), want); d != "" {
		t.Fatalf("after the pending instant completed:\n%s", d)
	}
	if n := len(tl.done); n > opt.ArchiveAfter {
		t.Errorf("%d active completed instants once it completed", n)
	}
	t.Logf("%d instants: at most %d active files and %d archive files; layers %v", len(want), maxActive, maxHistory, layers)
}

func TestMergeLimit(t *testing.T) {
	m := newPartition(t)
	tl := mustOpen(t, m, Options{Clock: newClock(), ArchiveAfter: 2, MergeAfter: 2, MergeLimitBytes: 3000})
	var want []Instant
	for i := range 40 {
		want = append(want, runInstant(t, tl, i))
	}
	for _, a := range tl.archives {
		if a.size > 3000 && a.name.layer > 0 {
			t.Errorf("merged archive %s of %d bytes, over MergeLimitBytes", a.file, a.size)
		}
	}
	if d := sameInstants(t, mustInstants(t, tl, Filter{}), want); d != "" {
		t.Fatal(d)
	}
}

func TestFilter(t *testing.T) {
	m := newPartition(t)
	tl := mustOpen(t, m, Options{Clock: newClock(), ArchiveAfter: 4, MergeAfter: 100})
	var all []Instant
	for i := range 30 {
		if i%3 == 0 {
			x, _ := tl.Begin(ActionClean, &Clean{Rule: "time", Now: int64(i)})
			if err := x.Complete(nil); err != nil {
				t.Fatal(err)
			}
			all = append(all, x.Instant())
			continue
		}
		all = append(all, runInstant(t, tl, i))
	}
	if len(tl.archives) < 5 {
		t.Fatalf("%d archive files, want several", len(tl.archives))
	}
	pick := func(keep func(Instant) bool) []Instant {
		var out []Instant
		for _, in := range all {
			if keep(in) {
				out = append(out, in)
			}
		}
		return out
	}
	mid, late := all[10].Time, all[20].Time
	tests := []struct {
		name string
		f    Filter
		want []Instant
	}{
		{"all", Filter{}, all},
		{"cleans", Filter{Actions: []Action{ActionClean}}, pick(func(i Instant) bool { return i.Action == ActionClean })},
		{"since", Filter{Since: mid}, all[10:]},
		{"until", Filter{Until: mid}, all[:10]},
		{"range", Filter{Since: mid, Until: late}, all[10:20]},
		{"range_rolls", Filter{Since: mid, Until: late, Actions: []Action{ActionRoll}}, pick(func(i Instant) bool {
			return i.Action == ActionRoll && i.Time.Compare(mid) >= 0 && i.Time.Compare(late) < 0
		})},
		{"none", Filter{Actions: []Action{ActionTier}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := sameInstants(t, mustInstants(t, tl, tt.f), tt.want); d != "" {
				t.Error(d)
			}
		})
	}
	// A range read opens only the archive files it overlaps.
	faults := vfs.WithFaults(m, nil)
	ft := mustOpen(t, faults, Options{ReadOnly: true})
	before := faults.Count(vfs.OpOpen)
	mustInstants(t, ft, Filter{Since: late})
	opened := faults.Count(vfs.OpOpen) - before
	overlap := 0
	for _, a := range ft.archives {
		if a.name.max.Compare(late) >= 0 {
			overlap++
		}
	}
	if opened != int64(overlap) {
		t.Errorf("Instants(Since: late) opened %d files, %d archive files overlap", opened, overlap)
	}
}

func TestForeignFilesLeftAlone(t *testing.T) {
	m := newPartition(t)
	tl := mustOpen(t, m, Options{Clock: newClock()})
	want := runInstant(t, tl, 1)
	tdir := Dir(partDir)
	for _, f := range []string{"README", ".DS_Store", HistoryDirName + "/notes.txt"} {
		if err := vfs.WriteFile(m, path.Join(tdir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.MkdirAll(path.Join(tdir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tl = mustOpen(t, m, Options{})
	if d := sameInstants(t, mustInstants(t, tl, Filter{}), []Instant{want}); d != "" {
		t.Error(d)
	}
	for _, f := range []string{"README", ".DS_Store", HistoryDirName + "/notes.txt"} {
		if _, err := m.Stat(path.Join(tdir, f)); err != nil {
			t.Errorf("Open removed %s: %v", f, err)
		}
	}
}

// TestLeftovers builds by hand the states interrupted writes leave and
// checks that Open sees through them (read-only) and removes them
// (writable), with the same view either way.
func TestLeftovers(t *testing.T) {
	tdir := Dir(partDir)
	hdir := path.Join(tdir, HistoryDirName)
	tests := []struct {
		name string
		// make builds the state from a timeline of 8 completed instants
		// (ArchiveAfter 4, MergeAfter 2) and returns the files Open must
		// remove.
		make func(t *testing.T, m *vfs.Mem, tl *Timeline) []string
	}{
		{"tmp_files", func(t *testing.T, m *vfs.Mem, tl *Timeline) []string {
			vfs.WriteFile(m, path.Join(tdir, "17172432000000003.roll.requested.tmp"), []byte("{"), 0o644)
			vfs.WriteFile(m, path.Join(hdir, "x.archive.tmp"), nil, 0o644)
			return []string{"17172432000000003.roll.requested.tmp", HistoryDirName + "/x.archive.tmp"}
		}},
		{"requested_of_completed", func(t *testing.T, m *vfs.Mem, tl *Timeline) []string {
			d := tl.done[len(tl.done)-1]
			in, _ := decodeInstantFile("", d.line)
			in.State, in.Completed, in.Result = Requested, InstantTime{}, nil
			for _, st := range []State{Requested, Inflight} {
				in.State = st
				line, _ := encodeInstant(&in)
				vfs.WriteFile(m, path.Join(tdir, fileName{time: in.Time, action: in.Action, state: st}.String()), line, 0o644)
			}
			return []string{fileName{time: in.Time, action: in.Action, state: Requested}.String(), fileName{time: in.Time, action: in.Action, state: Inflight}.String()}
		}},
		{"archived_still_active", func(t *testing.T, m *vfs.Mem, tl *Timeline) []string {
			// The instants of the newest archive file, back in the
			// active timeline: archival wrote the file, the removals
			// were lost.
			a := tl.archives[len(tl.archives)-1]
			insts, lines, err := tl.readArchive(a)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for i, in := range insts {
				n := fileName{time: in.Time, completed: in.Completed, action: in.Action, state: Completed}.String()
				vfs.WriteFile(m, path.Join(tdir, n), lines[i], 0o644)
				out = append(out, n)
			}
			return out
		}},
		{"merged_still_there", func(t *testing.T, m *vfs.Mem, tl *Timeline) []string {
			// Split the oldest merged file back into two layer-0
			// files: what a merge leaves before its removals.
			a := tl.archives[0]
			if a.name.layer == 0 {
				t.Fatal("no merged file")
			}
			insts, lines, _ := tl.readArchive(a)
			var out []string
			for _, half := range [][2]int{{0, len(insts) / 2}, {len(insts) / 2, len(insts)}} {
				h := archiveHeader{Count: half[1] - half[0], Min: insts[half[0]].Time, Max: insts[half[1]-1].Time, Layer: 0}
				for _, in := range insts[half[0]:half[1]] {
					h.MaxTime = maxTime(h.MaxTime, in.Completed)
				}
				data, _ := encodeArchive(h, lines[half[0]:half[1]])
				n := archiveName{min: h.Min, max: h.Max}.String()
				vfs.WriteFile(m, path.Join(hdir, n), data, 0o644)
				out = append(out, HistoryDirName+"/"+n)
			}
			return out
		}},
		{"rolled_back_still_pending", func(t *testing.T, m *vfs.Mem, tl *Timeline) []string {
			x, _ := tl.Begin(ActionClean, &Clean{Rule: "size"})
			if err := x.Inflight(); err != nil {
				t.Fatal(err)
			}
			snap := snapshot(t, m, tdir)
			if err := x.Rollback("test"); err != nil {
				t.Fatal(err)
			}
			var out []string
			for n, b := range snap {
				if strings.HasPrefix(n, x.Instant().Time.String()) {
					vfs.WriteFile(m, path.Join(tdir, n), b, 0o644)
					out = append(out, n)
				}
			}
			return out
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newPartition(t)
			tl := mustOpen(t, m, Options{Clock: newClock(), ArchiveAfter: 4, MergeAfter: 2})
			for i := range 8 {
				runInstant(t, tl, i)
			}
			removed := tt.make(t, m, tl)
			want := mustInstants(t, tl, Filter{})
			wantPending := len(tl.Pending())
			with := snapshot(t, m, tdir)
			ro := mustOpen(t, m, Options{ReadOnly: true})
			if d := sameInstants(t, mustInstants(t, ro, Filter{}), want); d != "" || len(ro.Pending()) != wantPending {
				t.Errorf("read-only Open: %s; %d pending, want %d", d, len(ro.Pending()), wantPending)
			}
			if !sameSnapshot(with, snapshot(t, m, tdir)) {
				t.Errorf("a read-only Open changed files")
			}
			rw := mustOpen(t, m, Options{ArchiveAfter: 4, MergeAfter: 2})
			if d := sameInstants(t, mustInstants(t, rw, Filter{}), want); d != "" || len(rw.Pending()) != wantPending {
				t.Errorf("writable Open: %s; %d pending, want %d", d, len(rw.Pending()), wantPending)
			}
			after := files(t, m, tdir)
			for _, f := range removed {
				if slices.Contains(after, f) {
					t.Errorf("Open left %s", f)
				}
			}
			if len(after) != len(with)-len(removed) {
				t.Errorf("Open removed %d files, want %d: %v", len(with)-len(after), len(removed), after)
			}
		})
	}
}

// TestDecodeErrors damages timeline files one way each and checks the
// error: a *format.CorruptionError naming the file and the byte, with
// the sentinel of the damage.
func TestDecodeErrors(t *testing.T) {
	tdir := Dir(partDir)
	build := func(t *testing.T) (*vfs.Mem, string, []byte, string, []byte) {
		m := newPartition(t)
		tl := mustOpen(t, m, Options{Clock: newClock(), ArchiveAfter: 2, MergeAfter: 100})
		for i := range 4 {
			runInstant(t, tl, i)
		}
		d := tl.done[0]
		a := tl.archives[0]
		ab, _ := vfs.ReadFile(m, path.Join(tdir, HistoryDirName, a.file))
		return m, d.name, d.line, HistoryDirName + "/" + a.file, ab
	}
	type damage struct {
		name     string
		archive  bool
		edit     func(b []byte) []byte
		rename   func(name string) string // a new name for the file, if set
		sentinel error
		offset   int64 // -1: any; -2: that of "frob" in the damaged file
	}
	set := func(at int, c byte) func([]byte) []byte {
		return func(b []byte) []byte { b = slices.Clone(b); b[at] = c; return b }
	}
	// rewrite replaces old by new in the JSON and fixes the CRC: damage
	// the CRC does not catch.
	rewrite := func(old, new string) func([]byte) []byte {
		return func(b []byte) []byte {
			js := strings.Replace(string(b[jsonStart:len(b)-1]), old, new, 1)
			line, _ := appendLineRaw([]byte(js))
			return line
		}
	}
	tests := []damage{
		{"crc_flip", false, set(0, 'f'), nil, format.ErrCRC, 0},
		{"body_flip", false, set(40, 'X'), nil, format.ErrCRC, 0},
		{"crc_not_hex", false, set(3, 'z'), nil, format.ErrInvalid, 0},
		{"no_space", false, set(8, ':'), nil, format.ErrInvalid, 8},
		{"trailing_bytes", false, func(b []byte) []byte { return append(slices.Clone(b), "junk"...) }, nil, format.ErrInvalid, -1},
		{"two_lines", false, func(b []byte) []byte { return append(slices.Clone(b), b...) }, nil, format.ErrInvalid, -1},
		{"bad_json", false, rewrite(`"v":1`, `"v":1,,`), nil, format.ErrInvalid, jsonStart + 7},
		{"unknown_field", false, rewrite(`"v":1`, `"v":1,"x":2`), nil, format.ErrInvalid, -1},
		{"version", false, rewrite(`"v":1`, `"v":2`), nil, format.ErrInvalid, jsonStart + 5},
		{"unknown_action", false, rewrite(`"action":"roll"`, `"action":"frob"`), nil, ErrUnknownAction, -2},
		{"state", false, rewrite(`"state":"completed"`, `"state":"done"`), nil, format.ErrInvalid, -1},
		{"plan_type", false, rewrite(`"reason":"segment.bytes"`, `"reason":7`), nil, format.ErrInvalid, -1},
		{"name_disagrees", false, rewrite(`"action":"roll"`, `"action":"clean"`), nil, format.ErrInvalid, jsonStart},
		{"bad_name", false, nil, func(n string) string { return n[:timeDigits] + ".roll" }, format.ErrInvalid, 0},
		{"unknown_action_name", false, nil, func(n string) string { return n[:timeDigits] + ".frob.requested" }, ErrUnknownAction, 0},
		{"archive_crc", true, set(100, 'Z'), nil, format.ErrCRC, -1},
		{"archive_header_crc", true, set(2, 'Z'), nil, format.ErrInvalid, 0},
		{"archive_cut", true, func(b []byte) []byte { return b[:len(b)-1] }, nil, format.ErrTruncated, -1},
		{"archive_lost_record", true, func(b []byte) []byte {
			i := strings.IndexByte(string(b), '\n')
			j := strings.IndexByte(string(b[i+1:]), '\n')
			return append(slices.Clone(b[:i+1]), b[i+1+j+1:]...)
		}, nil, format.ErrInvalid, -1},
		{"archive_renamed", true, nil, func(n string) string { return strings.Replace(n, "_0.archive", "_5.archive", 1) }, format.ErrInvalid, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, name, line, aname, abytes := build(t)
			target, b := name, line
			if tt.archive {
				target, b = aname, abytes
			}
			p := path.Join(tdir, target)
			want := tt.offset
			if tt.edit != nil {
				b = tt.edit(b)
				if err := vfs.WriteFile(m, p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want == -2 {
				want = int64(strings.Index(string(b), `"frob"`))
			}
			if tt.rename != nil {
				np := path.Join(path.Dir(p), tt.rename(path.Base(p)))
				if err := m.Rename(p, np); err != nil {
					t.Fatal(err)
				}
				p = np
			}
			for _, ro := range []bool{true, false} {
				tl, err := Open(m, partDir, Options{ReadOnly: ro})
				if err == nil {
					_, err = tl.Instants(Filter{})
				}
				var ce *format.CorruptionError
				if !errors.As(err, &ce) || !errors.Is(err, tt.sentinel) {
					t.Fatalf("read-only %v: error %v, want a CorruptionError matching %v", ro, err, tt.sentinel)
				}
				if ce.Path != p || (want >= 0 && ce.Offset != want) {
					t.Errorf("read-only %v: error at %s byte %d, want %s byte %d (%v)", ro, ce.Path, ce.Offset, p, want, err)
				}
			}
		})
	}

	// An absurd size is not read.
	m, name, _, _, _ := build(t)
	p := path.Join(tdir, name)
	f, _ := m.OpenFile(p, 1, 0)
	if err := f.Truncate(maxInstantFile + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err := Open(m, partDir, Options{ReadOnly: true})
	var ce *format.CorruptionError
	if !errors.As(err, &ce) || !errors.Is(err, format.ErrTooLarge) || ce.Path != p {
		t.Errorf("a %d-byte instant file: %v", maxInstantFile+1, err)
	}
}

// appendLineRaw is appendLine for JSON already encoded.
func appendLineRaw(js []byte) ([]byte, error) {
	b := []byte(strings.Repeat("0", crcLen) + " ")
	crc := format.CRC32C(js)
	const hexdigits = "0123456789abcdef"
	for i := range crcLen {
		b[i] = hexdigits[crc>>(28-4*i)&0xf]
	}
	return append(append(b, js...), '\n'), nil
}
