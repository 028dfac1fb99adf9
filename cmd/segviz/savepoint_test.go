package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// savepointOut is the documented --json object of a take or a release.
type savepointOut struct {
	Savepoint   string `json:"savepoint"`
	TakenAt     int64  `json:"takenAt"`
	Label       string `json:"label"`
	By          string `json:"by"`
	Comment     string `json:"comment"`
	FirstOffset int64  `json:"firstOffset"`
	LastOffset  int64  `json:"lastOffset"`
	InForce     bool   `json:"inForce"`
	Release     *struct {
		Savepoint string `json:"savepoint"`
		At        int64  `json:"at"`
		By        string `json:"by"`
		Comment   string `json:"comment"`
	} `json:"release"`
}

// strictJSON decodes out into v, refusing fields v does not have.
func strictJSON(t *testing.T, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

func runSavepointJSON(t *testing.T, wantCode int, args ...string) savepointOut {
	t.Helper()
	code, out, errs := runSegviz(append([]string{"savepoint", "--json"}, args...)...)
	if code != wantCode {
		t.Fatalf("savepoint %q: exit %d, want %d\n%s%s", args, code, wantCode, out, errs)
	}
	var j savepointOut
	strictJSON(t, out, &j)
	return j
}

func listSavepoints(t *testing.T, dir string) []savepointOut {
	t.Helper()
	code, out, errs := runSegviz("savepoint", "--list", "--json", dir)
	if code != exitOK {
		t.Fatalf("--list: exit %d\n%s", code, errs)
	}
	var j struct {
		Savepoints []savepointOut `json:"savepoints"`
	}
	strictJSON(t, out, &j)
	return j.Savepoints
}

func deletionBases(j jsonOut) []int64 {
	out := []int64{}
	for _, d := range j.Deletions {
		out = append(out, d.BaseOffset)
	}
	return out
}

func retentionDry(t *testing.T, dir string, now int64) jsonOut {
	t.Helper()
	code, out, errs := runSegviz("retention", "--json", "--retention.ms", "60000", "--segment.ms", "180000", "--now", fmt.Sprint(now), dir)
	if code != exitOK {
		t.Fatalf("retention dry run: exit %d\n%s", code, errs)
	}
	var j jsonOut
	strictJSON(t, out, &j)
	return j
}

// TestSavepointTakeListRelease is the savepoint's whole life on the
// payments partition (segments 0, 37 and 73, all past retention.ms at
// 6:01): a hold on offsets 40-41 stops retention at segment 37, which
// both the plan and the readable-until table say, and --apply keeps 37
// and 73; once released,
// the next --apply deletes what a plan without holds deletes, leaving the
// same segments as on a twin partition that never had the hold.
func TestSavepointTakeListRelease(t *testing.T) {
	dir := buildPayments(t)
	twin := buildPayments(t)
	cfg := []string{"--retention.ms", "60000", "--segment.ms", "180000"}

	free := retentionDry(t, dir, at601)
	if got := deletionBases(free); !slices.Equal(got, []int64{0, 37, 73}) {
		t.Fatalf("without a hold the check deletes %v, want [0 37 73]", got)
	}

	sp := runSavepointJSON(t, exitOK, "--label", "case-7", "--from", "40", "--to", "41", "--by", "legal", "--comment", "litigation hold", "--now", fmt.Sprint(t0+200_000), dir)
	want := savepointOut{Savepoint: sp.Savepoint, TakenAt: t0 + 200_000, Label: "case-7", By: "legal", Comment: "litigation hold", FirstOffset: 40, LastOffset: 41, InForce: true}
	if diff := cmp.Diff(want, sp); diff != "" || len(sp.Savepoint) != 17 {
		t.Fatalf("take (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]savepointOut{want}, listSavepoints(t, dir)); diff != "" {
		t.Fatalf("--list (-want +got):\n%s", diff)
	}
	name := `savepoint "case-7" (` + sp.Savepoint + `)`

	// The dry run: 0 goes, 37 is held, 73 kept after it.
	held := retentionDry(t, dir, at601)
	if got := deletionBases(held); !slices.Equal(got, []int64{0}) {
		t.Errorf("held dry run deletes %v, want [0]", got)
	}
	if len(held.Holds) != 1 || held.Holds[0].Savepoint != sp.Savepoint || held.Holds[0].FirstOffset != 40 {
		t.Errorf("holds %+v", held.Holds)
	}
	if len(held.Held) != 2 || held.Held[0].BaseOffset != 37 || !held.Held[0].Pinned || held.Held[1].BaseOffset != 73 || held.Held[1].Pinned ||
		held.Held[0].Blocked == nil || *held.Held[0].Blocked != "time" || held.Held[1].Blocked == nil || *held.Held[1].Blocked != "time" {
		t.Errorf("held %+v", held.Held)
	}
	if !strings.HasPrefix(held.Held[0].Explanation, "held by "+name) || !strings.HasPrefix(held.Held[1].Explanation, "kept: segment 37 before it is held by "+name) {
		t.Errorf("explanations %q, %q", held.Held[0].Explanation, held.Held[1].Explanation)
	}
	for _, s := range held.Segments[1:] {
		if s.ReadableUntil != nil || s.HeldBy == nil || s.IfReleased == nil {
			t.Errorf("segment %d: readable until %v, held by %v, if released %v; want never, held, a time", s.BaseOffset, s.ReadableUntil, s.HeldBy, s.IfReleased)
		}
	}
	_, text, _ := runSegviz(slices.Concat([]string{"retention"}, cfg, []string{"--now", fmt.Sprint(at601), dir})...)
	for _, s := range []string{"37 (offsets 37-72): held by " + name, "73 (offsets 73-73): kept: segment 37 before it is held by " + name, "37: held by " + name} {
		if !strings.Contains(text, s) {
			t.Errorf("dry run text lacks %q:\n%s", s, text)
		}
	}

	// --apply honours it.
	j, _ := retentionJSONOfRun(t, exitProblem, slices.Concat(cfg, []string{"--now", fmt.Sprint(at601), "--apply", dir})...)
	if got := deletionBases(j.jsonOut); !slices.Equal(got, []int64{0}) || j.NewLogStartOffset != 37 || len(j.Held) != 2 {
		t.Fatalf("held --apply deleted %v to %d, held %v", got, j.NewLogStartOffset, j.Held)
	}
	for _, base := range []int64{37, 73} {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%020d.log", base))); err != nil {
			t.Errorf("held segment %d: %v", base, err)
		}
	}

	// Release, and the next check deletes as without holds.
	rel := runSavepointJSON(t, exitOK, "--release", sp.Savepoint, "--by", "legal", "--now", fmt.Sprint(at601+1000), dir)
	if rel.InForce || rel.Release == nil || rel.Release.By != "legal" || rel.Savepoint != sp.Savepoint {
		t.Fatalf("release: %+v", rel)
	}
	if l := listSavepoints(t, dir); len(l) != 1 || l[0].InForce || l[0].Release == nil || l[0].Release.Savepoint != rel.Release.Savepoint {
		t.Fatalf("--list after the release: %+v", l)
	}
	next := at601 + 2000
	dry := retentionDry(t, dir, next)
	if len(dry.Holds) != 0 || len(dry.Held) != 0 {
		t.Fatalf("released dry run: holds %v, held %v", dry.Holds, dry.Held)
	}
	j, _ = retentionJSONOfRun(t, exitProblem, slices.Concat(cfg, []string{"--now", fmt.Sprint(next), "--apply", dir})...)
	if diff := cmp.Diff(deletionBases(dry), deletionBases(j.jsonOut)); diff != "" || !slices.Equal(deletionBases(j.jsonOut), []int64{37, 73}) {
		t.Fatalf("released --apply deleted %v, the plan without holds %v (want [37 73])", deletionBases(j.jsonOut), deletionBases(dry))
	}
	// The twin, never held, after one check: the same segments are left.
	retentionJSONOfRun(t, exitProblem, slices.Concat(cfg, []string{"--now", fmt.Sprint(at601), "--apply", twin})...)
	if a, b := segmentFiles(t, dir), segmentFiles(t, twin); !slices.Equal(a, b) {
		t.Errorf("segments left %v, on the never-held twin %v", a, b)
	}
	// A second release is refused.
	code, _, errs := runSegviz("savepoint", "--release", sp.Savepoint, dir)
	if code != exitUsage || !strings.Contains(errs, "already released") {
		t.Errorf("second release: exit %d: %s", code, errs)
	}
}

// segmentFiles lists the .log files of dir.
func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

// TestSavepointRefusals: every refused command line exits 2 (3 for a
// missing DIR) with a message saying why, and writes nothing.
func TestSavepointRefusals(t *testing.T) {
	dir := buildPayments(t)
	moved := buildPayments(t)
	deleteRecords(t, moved, 50) // log start offset 50
	sp := runSavepointJSON(t, exitOK, "--now", fmt.Sprint(t0+200_000), dir)
	if sp.FirstOffset != 0 || sp.LastOffset != 73 || sp.Label != "hold" {
		t.Fatalf("default take: %+v, want the whole log 0-73 labelled hold", sp)
	}
	logDir := filepath.Dir(dir)
	before, beforeMoved := snapshot(t, filepath.Dir(logDir)), snapshot(t, filepath.Dir(filepath.Dir(moved)))
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--to", "74", dir}, exitUsage, "--to 74 is at or past the log end offset 74"},
		{[]string{"--from", "80", dir}, exitUsage, "the range 80-73 is empty"},
		{[]string{"--from", "50", "--to", "40", dir}, exitUsage, "--from 50 is after --to 40"},
		{[]string{"--from", "-1", dir}, exitUsage, "want an offset"},
		{[]string{"--from", "10", moved}, exitUsage, "--from 10 is below the log start offset 50"},
		{[]string{"--to", "10", moved}, exitUsage, "--to 10 is below the log start offset 50"},
		{[]string{"--release", "17000000000000000", dir}, exitUsage, "no savepoint"},
		{[]string{"--release", "soon", dir}, exitUsage, "want a savepoint's instant time"},
		{[]string{"--list", "--release", sp.Savepoint, dir}, exitUsage, "at most one of --list and --release"},
		{[]string{"--list", "--label", "x", dir}, exitUsage, "--label is for taking"},
		{[]string{"--release", sp.Savepoint, "--from", "3", dir}, exitUsage, "--from is for taking"},
		{[]string{"--list", "--by", "me", dir}, exitUsage, "--by is for taking or releasing"},
		{[]string{"--now", "soon", dir}, exitUsage, "--now"},
		{[]string{}, exitUsage, "want one partition directory"},
		{[]string{logDir}, exitUsage, "partition directory"},
		{[]string{filepath.Join(logDir, "missing-0")}, exitFailure, "no such file"},
	} {
		code, out, errs := runSegviz(append([]string{"savepoint"}, tt.args...)...)
		if code != tt.code || !strings.Contains(errs, tt.want) || out != "" {
			t.Errorf("%q: exit %d, want %d with %q\nstdout: %s\nstderr: %s", tt.args, code, tt.code, tt.want, out, errs)
		}
	}
	if after := snapshot(t, filepath.Dir(logDir)); after != before {
		t.Errorf("a refused savepoint wrote:\nbefore\n%s\nafter\n%s", before, after)
	}
	if after := snapshot(t, filepath.Dir(filepath.Dir(moved))); after != beforeMoved {
		t.Errorf("a refused savepoint wrote:\nbefore\n%s\nafter\n%s", beforeMoved, after)
	}
	// Its epoch milliseconds alone name a savepoint none other shares.
	if j := runSavepointJSON(t, exitOK, "--release", fmt.Sprint(sp.TakenAt), dir); j.InForce || j.Savepoint != sp.Savepoint {
		t.Errorf("release by milliseconds: %+v", j)
	}
}

// TestSavepointLocked: under a held lock, taking and releasing exit 3
// and write nothing; --list, which only reads, still runs.
func TestSavepointLocked(t *testing.T) {
	dir := buildPayments(t)
	logDir := filepath.Dir(dir)
	sp := runSavepointJSON(t, exitOK, "--now", fmt.Sprint(t0+200_000), dir)
	holdLock(t, filepath.Join(logDir, ".lock"), "vfs")
	before := snapshot(t, logDir)
	for _, args := range [][]string{{"savepoint", dir}, {"savepoint", "--release", sp.Savepoint, dir}} {
		code, out, errs := runSegviz(args...)
		wantLocked(t, strings.Join(args, " "), code, errs, logDir)
		if out != "" || !strings.Contains(errs, "nothing was written") {
			t.Errorf("%q under the lock: stdout %q, stderr %s", args, out, errs)
		}
	}
	if after := snapshot(t, logDir); after != before {
		t.Fatalf("a locked savepoint changed the log directory:\nbefore\n%s\nafter\n%s", before, after)
	}
	if l := listSavepoints(t, dir); len(l) != 1 || !l[0].InForce {
		t.Fatalf("--list under the lock: %+v", l)
	}
}

// TestSavepointListCreatesNothing: --list on a partition without a
// timeline prints none and creates no file or directory.
func TestSavepointListCreatesNothing(t *testing.T) {
	dir := buildPayments(t)
	before := snapshot(t, filepath.Dir(dir))
	code, out, errs := runSegviz("savepoint", "--list", dir)
	if code != exitOK || !strings.Contains(out, "0 in force, 0 released") {
		t.Fatalf("--list: exit %d\n%s%s", code, out, errs)
	}
	if l := listSavepoints(t, dir); len(l) != 0 {
		t.Fatalf("--list --json: %+v", l)
	}
	if after := snapshot(t, filepath.Dir(dir)); after != before {
		t.Fatalf("--list wrote:\nbefore\n%s\nafter\n%s", before, after)
	}
	if _, err := os.Stat(filepath.Join(dir, ".segkit")); !os.IsNotExist(err) {
		t.Fatalf(".segkit: %v", err)
	}
	code, out, _ = runSegviz("savepoint", "--help")
	if code != exitOK || !strings.Contains(out, "legal hold") || !strings.Contains(out, "Exit status:") {
		t.Fatalf("--help: exit %d\n%s", code, out)
	}
}

// TestCompactHonoursSavepoint: segviz compact's plan ends the cleanable
// range at the held segment, names the hold, and the clean leaves the
// held segment and every later one as they were.
func TestCompactHonoursSavepoint(t *testing.T) {
	dir := buildUsers(t)
	sp := runSavepointJSON(t, exitOK, "--label", "audit", "--from", "5", "--to", "5", "--now", fmt.Sprint(usersT0+10_000), dir)
	j := compactJSONOf(t, "--dry-run", "--now", nowArg, "--offset", "4", dir)
	if j.HeldBy == nil || j.HeldBy.Savepoint != sp.Savepoint || j.HeldBase == nil || *j.HeldBase != 4 || j.FirstUncleanableOffset != 4 ||
		!strings.Contains(j.UncleanableBy, `held by savepoint "audit" (`+sp.Savepoint+`)`) {
		t.Fatalf("dry run: held by %+v at %v, range ends at %d by %q", j.HeldBy, j.HeldBase, j.FirstUncleanableOffset, j.UncleanableBy)
	}
	if j.Until == nil || j.Until.HeldBy == nil || j.Until.ReadableUntil != nil || !strings.Contains(j.Until.Explanation, `held by savepoint "audit"`) {
		t.Fatalf("offset 4: %+v", j.Until)
	}
	before := map[string][]byte{}
	for _, name := range []string{"00000000000000000004.log", "00000000000000000008.log"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		before[name] = b
	}
	code, out, errs := runSegviz("compact", "--now", nowArg, dir)
	if code != exitOK || !strings.Contains(out, "held: segment 4 and every later one stay as they are while savepoint \"audit\"") {
		t.Fatalf("compact: exit %d\n%s%s", code, out, errs)
	}
	for name, b := range before {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != string(b) {
			t.Errorf("%s was rewritten (%v)", name, err)
		}
	}
}
