package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// restoreOut is the documented --json object of segviz restore.
type restoreOut struct {
	Savepoint       string  `json:"savepoint"`
	Label           string  `json:"label"`
	Applied         bool    `json:"applied"`
	Restore         *string `json:"restore"`
	RestoredAt      *int64  `json:"restoredAt"`
	Truncate        *string `json:"truncate"`
	LogStartOffset  int64   `json:"logStartOffset"`
	OldLogEndOffset int64   `json:"oldLogEndOffset"`
	NewLogEndOffset int64   `json:"newLogEndOffset"`
	Removed         *struct {
		FirstOffset int64 `json:"firstOffset"`
		LastOffset  int64 `json:"lastOffset"`
	} `json:"removed"`
	DeletedSegments []struct {
		BaseOffset       int64 `json:"baseOffset"`
		NextOffset       int64 `json:"nextOffset"`
		Size             int64 `json:"size"`
		LargestTimestamp int64 `json:"largestTimestamp"`
	} `json:"deletedSegments"`
	TruncatedSegment *struct {
		BaseOffset int64 `json:"baseOffset"`
		OldSize    int64 `json:"oldSize"`
		NewSize    int64 `json:"newSize"`
		Bytes      int64 `json:"bytes"`
	} `json:"truncatedSegment"`
	Bytes       int64 `json:"bytes"`
	NotRestored *struct {
		FirstOffset int64 `json:"firstOffset"`
		LastOffset  int64 `json:"lastOffset"`
	} `json:"notRestored"`
	Resolved []struct {
		Instant   int64  `json:"instant"`
		Action    string `json:"action"`
		Completed bool   `json:"completed"`
		Why       string `json:"why"`
	} `json:"resolved"`
}

var restoreT0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// valued returns n JSON lines of one key, with values r<from>, r<from+1>, ...
func valued(from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, `{"key":"%s","value":"%s"}`+"\n", b64("k"), b64(fmt.Sprintf("r%d", i)))
	}
	return b.String()
}

// appendValued appends values r<from>... to dir in batches of two, in
// segments of 400 bytes (about four batches each).
func appendValued(t *testing.T, dir string, from, n int) {
	t.Helper()
	if code, _, errs := appendCmd(t, valued(from, n), "--batch-records", "2", "--segment.bytes", "400", dir); code != exitOK {
		t.Fatalf("append: exit %d: %s", code, errs)
	}
}

// buildRestorable writes kafka-logs/orders-0 with offsets 0-29 (values
// r0-r29), takes a savepoint of them, and appends offsets 30-59, rolling
// segments. It returns the directory and the savepoint.
func buildRestorable(t *testing.T) (string, savepointOut) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kafka-logs", "orders-0")
	appendValued(t, dir, 0, 30)
	sp := runSavepointJSON(t, exitOK, "--label", "before-deploy", "--by", "ops", "--now", fmt.Sprint(restoreT0.UnixMilli()+1000), dir)
	appendValued(t, dir, 30, 30)
	return dir, sp
}

func runRestoreJSON(t *testing.T, wantCode int, args ...string) restoreOut {
	t.Helper()
	code, out, errs := runSegviz(append([]string{"restore", "--json"}, args...)...)
	if code != wantCode {
		t.Fatalf("restore %q: exit %d, want %d\n%s%s", args, code, wantCode, out, errs)
	}
	var j restoreOut
	strictJSON(t, out, &j)
	return j
}

// segRef is a segment of the partition as the log reads it.
type segRef struct{ base, next, size int64 }

func segmentsOf(t *testing.T, dir string) []segRef {
	t.Helper()
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out []segRef
	segs := l.Segments()
	for i, s := range segs {
		next := l.LogEndOffset()
		if i+1 < len(segs) {
			next = segs[i+1].BaseOffset()
		}
		out = append(out, segRef{s.BaseOffset(), next, s.Size()})
	}
	return out
}

// valuesIn returns the partition's records as "offset=value".
func valuesIn(t *testing.T, dir string) []string {
	t.Helper()
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out []string
	for r, err := range l.Records(l.LogStartOffset()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d=%s", r.Offset, r.Value))
	}
	return out
}

// historyLines returns the instants of "segviz history --json".
func historyLines(t *testing.T, dir string) []instantJSON {
	t.Helper()
	code, out, errs := runSegviz("history", "--json", dir)
	if code != exitOK {
		t.Fatalf("history: exit %d: %s", code, errs)
	}
	var insts []instantJSON
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var j instantJSON
		if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		insts = append(insts, j)
	}
	return insts
}

func instantsOf(insts []instantJSON, action string) []instantJSON {
	var out []instantJSON
	for _, in := range insts {
		if in.Action == action {
			out = append(out, in)
		}
	}
	return out
}

// TestRestoreDryRunThenApply: the dry run lists exactly the offsets, the
// segments and the bytes appended after the savepoint, and writes
// nothing; --apply removes them and nothing else, records a restore and
// a truncate instant, and history names the truncate for a removed
// offset.
func TestRestoreDryRunThenApply(t *testing.T) {
	defer setNow(restoreT0)()
	dir, sp := buildRestorable(t)
	root := filepath.Dir(filepath.Dir(dir))
	segs := segmentsOf(t, dir)
	var wantDeleted []int64
	var floor segRef
	var total int64
	for _, s := range segs {
		total += s.size
		if s.base >= 30 {
			wantDeleted = append(wantDeleted, s.base)
		} else {
			floor = s
		}
	}
	if len(wantDeleted) < 2 || floor.next <= 30 {
		t.Fatalf("the fixture should have rolled past offset 30 in segment %d and after: %+v", floor.base, segs)
	}

	before := snapshot(t, root)
	dry := runRestoreJSON(t, exitProblem, "--savepoint", sp.Savepoint, dir)
	if after := snapshot(t, root); after != before {
		t.Fatalf("the dry run wrote:\nbefore\n%s\nafter\n%s", before, after)
	}
	var gotDeleted []int64
	var deletedBytes int64
	for _, s := range dry.DeletedSegments {
		gotDeleted = append(gotDeleted, s.BaseOffset)
		deletedBytes += s.Size
	}
	if dry.Applied || dry.Restore != nil || dry.Truncate != nil || dry.Savepoint != sp.Savepoint || dry.Label != "before-deploy" ||
		dry.OldLogEndOffset != 60 || dry.NewLogEndOffset != 30 || dry.Removed == nil || dry.Removed.FirstOffset != 30 || dry.Removed.LastOffset != 59 ||
		!slices.Equal(gotDeleted, wantDeleted) || dry.TruncatedSegment == nil || dry.TruncatedSegment.BaseOffset != floor.base ||
		dry.TruncatedSegment.OldSize != floor.size || dry.Bytes != deletedBytes+dry.TruncatedSegment.Bytes || dry.NotRestored != nil {
		t.Fatalf("dry run: %+v (truncated %+v); want offsets 30-59, segments %v deleted, %d truncated", dry, dry.TruncatedSegment, wantDeleted, floor.base)
	}
	code, text, _ := runSegviz("restore", "--savepoint", sp.Savepoint, dir)
	for _, want := range []string{"dry run, nothing written", "removing offsets 30-59 (30 offsets)", fmt.Sprintf("would delete segment %d", wantDeleted[0]),
		fmt.Sprintf("would cut %d bytes from segment %d", dry.TruncatedSegment.Bytes, floor.base), "--apply"} {
		if code != exitProblem || !strings.Contains(text, want) {
			t.Errorf("dry run text (exit %d) lacks %q:\n%s", code, want, text)
		}
	}

	app := runRestoreJSON(t, exitOK, "--savepoint", sp.Savepoint, "--apply", "--now", fmt.Sprint(restoreT0.UnixMilli()+60_000), dir)
	if !app.Applied || app.Restore == nil || app.RestoredAt == nil || app.Truncate == nil || app.NewLogEndOffset != 30 || app.Bytes != dry.Bytes ||
		app.Removed == nil || *app.Removed != *dry.Removed || len(app.DeletedSegments) != len(dry.DeletedSegments) || *app.TruncatedSegment != *dry.TruncatedSegment {
		t.Fatalf("--apply: %+v; the dry run said %+v", app, dry)
	}
	var want []string
	for i := range 30 {
		want = append(want, fmt.Sprintf("%d=r%d", i, i))
	}
	if got := valuesIn(t, dir); !slices.Equal(got, want) {
		t.Fatalf("records after the restore:\n%v\nwant\n%v", got, want)
	}
	var left int64
	for _, s := range segmentsOf(t, dir) {
		left += s.size
		if s.base >= 30 {
			t.Errorf("segment %d is left", s.base)
		}
	}
	if total-left != app.Bytes {
		t.Errorf("the .log files shrank by %d bytes; the report says %d", total-left, app.Bytes)
	}

	insts := historyLines(t, dir)
	restores, truncs := instantsOf(insts, "restore"), instantsOf(insts, "truncate")
	if len(restores) != 1 || len(truncs) != 1 {
		t.Fatalf("history: %d restore and %d truncate instants, want 1 each: %+v", len(restores), len(truncs), insts)
	}
	var rd timeline.Restore
	var td timeline.Truncate
	if err := json.Unmarshal(restores[0].Detail, &rd); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(truncs[0].Detail, &td); err != nil {
		t.Fatal(err)
	}
	if restores[0].State != "completed" || restores[0].Instant != *app.RestoredAt || rd.Savepoint.String() != sp.Savepoint ||
		rd.OldLogEndOffset != 60 || rd.NewLogEndOffset != 30 || len(rd.Segments) == 0 || rd.Segments[len(rd.Segments)-1].NextOffset != 30 {
		t.Errorf("restore instant %+v: %+v", restores[0], rd)
	}
	if td.Reason != "restore to savepoint "+sp.Savepoint || td.OldLogEndOffset != 60 || td.NewLogEndOffset != 30 || td.BytesTruncated != app.TruncatedSegment.Bytes {
		t.Errorf("truncate instant: %+v", td)
	}
	code, out, errs := runSegviz("history", "--offset", "45", "--json", dir)
	var o offsetJSON
	if code != exitOK || json.Unmarshal([]byte(out), &o) != nil {
		t.Fatalf("history --offset 45: exit %d: %s%s", code, out, errs)
	}
	if o.Readable || o.RemovedBy == nil || *o.RemovedBy != truncs[0].Instant || o.Rule == nil || *o.Rule != "truncate" {
		t.Errorf("history --offset 45: %s, want removed by the truncate %d", out, truncs[0].Instant)
	}
	if _, out, _ := runSegviz("history", "--offset", "45", dir); !strings.Contains(out, "restore to savepoint "+sp.Savepoint) {
		t.Errorf("history --offset 45 does not name the restore:\n%s", out)
	}

	// Again: nothing to restore, nothing written.
	before = snapshot(t, root)
	for _, args := range [][]string{{"--apply"}, {}} {
		code, out, errs = runSegviz(slices.Concat([]string{"restore", "--savepoint", sp.Savepoint}, args, []string{dir})...)
		if code != exitOK || !strings.Contains(out, "nothing to restore: the log end offset is 30, as when the savepoint was taken") {
			t.Errorf("restore %v after the restore: exit %d\n%s%s", args, code, out, errs)
		}
	}
	if after := snapshot(t, root); after != before {
		t.Errorf("restoring a restored log wrote:\nbefore\n%s\nafter\n%s", before, after)
	}
	if code, out, _ := runSegviz("verify", dir); code != exitOK {
		t.Errorf("verify after the restore: exit %d\n%s", code, out)
	}
}

// TestRestoreRefusals: a T that names no savepoint, a release or another
// action, and a restore through another savepoint's hold are refused,
// exit 2, writing nothing; a log truncated below the savepoint has
// nothing to restore.
func TestRestoreRefusals(t *testing.T) {
	defer setNow(restoreT0)()
	dir, sp := buildRestorable(t)
	root := filepath.Dir(filepath.Dir(dir))
	// A second savepoint, released: its release is an instant too.
	sp2 := runSavepointJSON(t, exitOK, "--label", "second", "--from", "40", "--to", "41", "--now", fmt.Sprint(restoreT0.UnixMilli()+2000), dir)
	rel := runSavepointJSON(t, exitOK, "--release", sp2.Savepoint, "--now", fmt.Sprint(restoreT0.UnixMilli()+3000), dir)
	// A third, in force, holding offset 55.
	sp3 := runSavepointJSON(t, exitOK, "--label", "third", "--from", "55", "--to", "55", "--now", fmt.Sprint(restoreT0.UnixMilli()+4000), dir)
	var roll string
	for _, in := range historyLines(t, dir) {
		if in.Action == "roll" {
			roll = fmt.Sprint(in.Instant)
			break
		}
	}
	before := snapshot(t, root)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--savepoint", "17000000000000000", dir}, exitUsage, "no savepoint of " + filepath.ToSlash(dir) + " was taken at 17000000000000000"},
		{[]string{"--savepoint", "17000000000000000", "--apply", dir}, exitUsage, "no savepoint"},
		{[]string{"--savepoint", rel.Release.Savepoint, "--apply", dir}, exitUsage, "is the release of the savepoint " + sp2.Savepoint + ", not a savepoint"},
		{[]string{"--savepoint", roll, dir}, exitUsage, "is a roll, not a savepoint"},
		{[]string{"--savepoint", sp.Savepoint, "--apply", dir}, exitUsage, `which savepoint "third" (` + sp3.Savepoint + `) holds (offsets 55-55): release it first`},
		{[]string{"--savepoint", "soon", dir}, exitUsage, "want a savepoint's instant time"},
		{[]string{dir}, exitUsage, "--savepoint T is required"},
		{[]string{"--savepoint", sp.Savepoint}, exitUsage, "want one partition directory"},
		{[]string{"--savepoint", sp.Savepoint, "--now", "soon", dir}, exitUsage, "--now"},
		{[]string{"--savepoint", sp.Savepoint, filepath.Dir(dir)}, exitUsage, "partition directory"},
	} {
		code, out, errs := runSegviz(append([]string{"restore"}, tt.args...)...)
		if code != tt.code || !strings.Contains(errs, tt.want) || out != "" {
			t.Errorf("%q: exit %d, want %d with %q\nstdout: %s\nstderr: %s", tt.args, code, tt.code, tt.want, out, errs)
		}
	}
	if after := snapshot(t, root); after != before {
		t.Fatalf("a refused restore wrote:\nbefore\n%s\nafter\n%s", before, after)
	}
	// Released, the third no longer stands in the way; restoring to the
	// second (offsets 0-59 then) first has nothing to restore.
	runSavepointJSON(t, exitOK, "--release", sp3.Savepoint, "--now", fmt.Sprint(restoreT0.UnixMilli()+5000), dir)
	if code, out, errs := runSegviz("restore", "--savepoint", sp2.Savepoint, "--apply", dir); code != exitOK || !strings.Contains(out, "nothing to restore") {
		t.Errorf("restore to the log's own end: exit %d\n%s%s", code, out, errs)
	}
	runRestoreJSON(t, exitOK, "--savepoint", sp.Savepoint, "--apply", dir)
	// Now below the second savepoint's log end: nothing to restore.
	code, out, errs := runSegviz("restore", "--savepoint", sp2.Savepoint, "--apply", dir)
	if code != exitOK || !strings.Contains(out, "nothing to restore: the log end offset is 30, below the savepoint's 60") || !strings.Contains(out, "cannot bring offsets 30-59 back") {
		t.Errorf("restore above the log end: exit %d\n%s%s", code, out, errs)
	}
}

// TestRestoreRefusesCompactedSegment: a clean that rewrote a segment
// holding the savepoint's records since it was taken makes the restore
// refuse, naming the segment, and write nothing.
func TestRestoreRefusesCompactedSegment(t *testing.T) {
	defer setNow(restoreT0)()
	dir := filepath.Join(t.TempDir(), "kafka-logs", "orders-0")
	appendValued(t, dir, 0, 30)
	// The hold pins only the active segment, so the cleaner may rewrite
	// the segments before it.
	sp := runSavepointJSON(t, exitOK, "--from", "29", "--to", "29", "--now", fmt.Sprint(restoreT0.UnixMilli()+1000), dir)
	appendValued(t, dir, 30, 30)
	before := segmentsOf(t, dir)
	if code, out, errs := runSegviz("compact", "--now", fmt.Sprint(restoreT0.UnixMilli()+3_600_000), dir); code != exitOK {
		t.Fatalf("compact: exit %d\n%s%s", code, out, errs)
	}
	after := segmentsOf(t, dir)
	if slices.Equal(before, after) || after[0].base != 0 {
		t.Fatalf("the clean changed no segment (or segment 0 is gone): %+v -> %+v", before, after)
	}
	root := filepath.Dir(filepath.Dir(dir))
	snap := snapshot(t, root)
	for _, args := range [][]string{{}, {"--apply"}} {
		code, out, errs := runSegviz(slices.Concat([]string{"restore", "--savepoint", sp.Savepoint}, args, []string{dir})...)
		if code != exitUsage || out != "" || !strings.Contains(errs, "segment 0 changed since savepoint \"hold\" ("+sp.Savepoint+") was taken") ||
			!strings.Contains(errs, "restoring would not give the savepoint's records back") {
			t.Errorf("restore %v after a clean: exit %d\n%s%s", args, code, out, errs)
		}
	}
	if got := snapshot(t, root); got != snap {
		t.Errorf("a refused restore wrote:\nbefore\n%s\nafter\n%s", snap, got)
	}
}

// TestRestoreRefusesRewrittenActiveSegment: the segment that was active
// when the savepoint was taken may have grown since, by appends only: not
// shrunk, and its batch holding the savepoint's last offset still ends
// where the savepoint's records ended.
func TestRestoreRefusesRewrittenActiveSegment(t *testing.T) {
	for _, tt := range []struct {
		name string
		// rewrite gets the segment's bytes, the position z of the batch at
		// offset 30 (where the savepoint's records ended) and that of the
		// batch before it, and returns the new bytes.
		rewrite func(b []byte, prev, z int) []byte
		want    string
	}{
		{"shrunk", func(b []byte, prev, z int) []byte { return b[:prev] }, "it was the active segment, of"},
		// Without the batch before offset 30, the segment has the size
		// the savepoint recorded, and lacks offsets 28 and 29.
		{"same_size", func(b []byte, prev, z int) []byte { return slices.Concat(b[:prev], b[z:]) }, "not at the savepoint's last offset 29"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer setNow(restoreT0)()
			dir, sp := buildRestorable(t)
			var last segRef
			for _, s := range segmentsOf(t, dir) {
				if s.base < 30 {
					last = s
				}
			}
			p := filepath.Join(dir, fmt.Sprintf("%020d.log", last.base))
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			prev, z := -1, -1
			for pos, before := 0, -1; pos+12 <= len(b); {
				if binary.BigEndian.Uint64(b[pos:]) == 30 {
					prev, z = before, pos
					break
				}
				before = pos
				pos += 12 + int(binary.BigEndian.Uint32(b[pos+8:]))
			}
			if prev < 0 || len(b)-z != z-prev {
				t.Fatalf("segment %d: want equal batches before and at offset 30 (at %d and %d of %d bytes)", last.base, prev, z, len(b))
			}
			if err := os.WriteFile(p, tt.rewrite(b, prev, z), 0o644); err != nil {
				t.Fatal(err)
			}
			root := filepath.Dir(filepath.Dir(dir))
			before := snapshot(t, root)
			for _, args := range [][]string{{}, {"--apply"}} {
				code, out, errs := runSegviz(slices.Concat([]string{"restore", "--savepoint", sp.Savepoint}, args, []string{dir})...)
				if code != exitUsage || out != "" || !strings.Contains(errs, fmt.Sprintf("segment %d changed since", last.base)) || !strings.Contains(errs, tt.want) {
					t.Errorf("restore %v after a rewrite: exit %d, want 2 with %q\n%s%s", args, code, tt.want, out, errs)
				}
			}
			if after := snapshot(t, root); after != before {
				t.Errorf("a refused restore wrote:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}
}

// TestRestoreLocked: under a held lock --apply exits 3 and writes
// nothing; the dry run, which only reads, still runs.
func TestRestoreLocked(t *testing.T) {
	defer setNow(restoreT0)()
	dir, sp := buildRestorable(t)
	logDir := filepath.Dir(dir)
	holdLock(t, filepath.Join(logDir, ".lock"), "vfs")
	before := snapshot(t, logDir)
	code, out, errs := runSegviz("restore", "--savepoint", sp.Savepoint, "--apply", dir)
	wantLocked(t, "restore --apply", code, errs, logDir)
	if out != "" || !strings.Contains(errs, "nothing was written") {
		t.Errorf("under the lock: stdout %q, stderr %s", out, errs)
	}
	if j := runRestoreJSON(t, exitProblem, "--savepoint", sp.Savepoint, dir); j.Removed == nil || j.Removed.FirstOffset != 30 {
		t.Errorf("dry run under the lock: %+v", j)
	}
	if after := snapshot(t, logDir); after != before {
		t.Fatalf("a locked restore changed the log directory:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// TestRestoreResolvesInflight: a restore instant a crash left inflight
// is completed by the next open when the log already ends at the
// savepoint's log end offset, and rolled back when it does not (and then
// the restore runs anew).
func TestRestoreResolvesInflight(t *testing.T) {
	for _, truncated := range []bool{false, true} {
		t.Run(fmt.Sprintf("truncated=%v", truncated), func(t *testing.T) {
			defer setNow(restoreT0)()
			dir, sp := buildRestorable(t)
			st, err := timeline.ParseInstantTime(sp.Savepoint)
			if err != nil {
				t.Fatal(err)
			}
			// The crash: a restore instant begun and inflight, the
			// truncation done or not, never completed.
			clk := &testClock{ms: restoreT0.UnixMilli() + 10_000}
			l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{Timeline: true, Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			x, err := l.Timeline().Begin(timeline.ActionRestore, &timeline.Restore{Savepoint: st, OldLogEndOffset: 60, NewLogEndOffset: 30})
			if err == nil {
				err = x.Inflight()
			}
			if err == nil && truncated {
				err = l.TruncateToFor(30, "restore to savepoint "+sp.Savepoint)
			}
			if err != nil {
				t.Fatal(err)
			}
			stuck := x.Instant().Time
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			code, out, errs := runSegviz("history", dir)
			if code != exitOK || !strings.Contains(out, "1 instant left requested or inflight") {
				t.Fatalf("history before the next open: exit %d\n%s%s", code, out, errs)
			}
			// The dry run reads: it says the instant is pending, resolves
			// nothing.
			code, _, errs = runSegviz("restore", "--savepoint", sp.Savepoint, dir)
			if want := map[bool]int{false: exitProblem, true: exitOK}[truncated]; code != want || !strings.Contains(errs, "the restore instant "+stuck.String()+" was left inflight") {
				t.Fatalf("dry run: exit %d, want %d: %s", code, want, errs)
			}

			j := runRestoreJSON(t, exitOK, "--savepoint", sp.Savepoint, "--apply", "--now", fmt.Sprint(restoreT0.UnixMilli()+20_000), dir)
			if len(j.Resolved) != 1 || j.Resolved[0].Instant != stuck.Millis || j.Resolved[0].Action != "restore" || j.Resolved[0].Completed != truncated {
				t.Fatalf("resolved %+v, want the restore %s completed=%v", j.Resolved, stuck, truncated)
			}
			if j.Applied == truncated {
				t.Errorf("applied %v: the restore should run again only if the interrupted one was rolled back", j.Applied)
			}
			if got := valuesIn(t, dir); len(got) != 30 || got[29] != "29=r29" {
				t.Errorf("records after: %v", got)
			}
			restores := instantsOf(historyLines(t, dir), "restore")
			// Either way one completed restore is listed: the interrupted
			// one, or (rolled back, which history does not list) the new.
			if len(restores) != 1 {
				t.Fatalf("%d completed restore instants, want 1", len(restores))
			}
			if truncated && restores[0].Instant != stuck.Millis {
				t.Errorf("the completed restore is %d, want the interrupted %d", restores[0].Instant, stuck.Millis)
			}
			if !truncated {
				var rb []instantJSON
				for _, in := range instantsOf(historyLines(t, dir), "rollback") {
					var d timeline.Rollback
					if json.Unmarshal(in.Detail, &d) == nil && d.Instant == stuck {
						rb = append(rb, in)
					}
				}
				if len(rb) != 1 || restores[0].Instant == stuck.Millis {
					t.Errorf("the interrupted restore %s: %d rollbacks, completed restore %d", stuck, len(rb), restores[0].Instant)
				}
			}
		})
	}
}

func TestRestoreHelp(t *testing.T) {
	code, out, _ := runSegviz("restore", "--help")
	for _, want := range []string{"Usage: segviz restore --savepoint T", "--apply", "Exit status:", "Examples:", `"deletedSegments"`, "-savepoint T"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("--help (exit %d) lacks %q", code, want)
		}
	}
	if _, out, _ := runSegviz("help"); !strings.Contains(out, "restore ") {
		t.Errorf("segviz help does not list restore:\n%s", out)
	}
}

// TestRestoreAfterRetention: segments retention deleted since the
// savepoint (released, so that it could) are not a change that stops the
// restore, but their offsets are not restored, and the report says so.
func TestRestoreAfterRetention(t *testing.T) {
	defer setNow(restoreT0)()
	dir, sp := buildRestorable(t)
	deleteRecords(t, dir, 20)
	// Released, the hold no longer keeps segments 0 and 8: the log start
	// offset rule deletes them. The savepoint still names the log as it was.
	runSavepointJSON(t, exitOK, "--release", sp.Savepoint, "--now", fmt.Sprint(restoreT0.UnixMilli()+20_000), dir)
	if code, out, errs := runSegviz("retention", "--apply", "--retention.ms", "-1", "--now", fmt.Sprint(restoreT0.UnixMilli()+30_000), dir); code != exitProblem {
		t.Fatalf("retention --apply: exit %d\n%s%s", code, out, errs)
	}
	if segs := segmentsOf(t, dir); segs[0].base == 0 || segs[0].base > 20 {
		t.Fatalf("retention should have deleted the segments below offset 20 only: %+v", segs)
	}
	dry := runRestoreJSON(t, exitProblem, "--savepoint", sp.Savepoint, dir)
	if dry.NotRestored == nil || dry.NotRestored.FirstOffset != 0 || dry.NotRestored.LastOffset != 19 || dry.LogStartOffset != 20 || dry.Removed == nil || dry.Removed.FirstOffset != 30 {
		t.Fatalf("dry run after retention: %+v (not restored %+v)", dry, dry.NotRestored)
	}
	code, out, errs := runSegviz("restore", "--savepoint", sp.Savepoint, "--apply", dir)
	if code != exitOK || !strings.Contains(out, "not restored: offsets 0-19 of the savepoint are gone (the log start offset moved 0 -> 20 since") {
		t.Fatalf("--apply after retention: exit %d\n%s%s", code, out, errs)
	}
	got := valuesIn(t, dir)
	if len(got) != 10 || got[0] != "20=r20" || got[9] != "29=r29" {
		t.Fatalf("records after the restore: %v, want offsets 20-29", got)
	}
}
