package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// applyOut is the --apply --json object.
type applyOut struct {
	jsonOut
	Applied  bool `json:"applied"`
	Instants []struct {
		Instant   int64           `json:"instant"`
		Completed int64           `json:"completed"`
		Action    string          `json:"action"`
		State     string          `json:"state"`
		Imported  bool            `json:"imported"`
		Detail    json.RawMessage `json:"detail"`
	} `json:"instants"`
	Resolved     []json.RawMessage `json:"resolved"`
	RemovedFiles []string          `json:"removedFiles"`
	KeptDeleted  []string          `json:"keptDeleted"`
}

func retentionJSONOfRun(t *testing.T, wantCode int, args ...string) (applyOut, string) {
	t.Helper()
	code, out, errs := runSegviz(append([]string{"retention", "--json"}, args...)...)
	if code != wantCode {
		t.Fatalf("retention %q: exit %d, want %d\n%s%s", args, code, wantCode, out, errs)
	}
	var j applyOut
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return j, errs
}

// historyOffsetJSON runs history --offset N --json and checks that its
// object has exactly the documented fields.
func historyOffsetJSON(t *testing.T, dir string, n int64) map[string]any {
	t.Helper()
	code, out, errs := runSegviz("history", "--offset", fmt.Sprint(n), "--json", dir)
	if code != exitOK || strings.Count(out, "\n") != 1 {
		t.Fatalf("history --offset %d: exit %d, want 0 and one line\n%s%s", n, code, out, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if got, want := sorted(keys(m)), []string{"at", "offset", "readable", "removedBy", "rule", "writtenBy"}; !slices.Equal(got, want) {
		t.Fatalf("history --offset fields %v, want %v", got, want)
	}
	return m
}

// num is a JSON number as an int64 (JSON numbers decode as float64; the
// times here are below 2^53).
func num(v any) any {
	if f, ok := v.(float64); ok {
		return int64(f)
	}
	return v
}

func timelineInstants(t *testing.T, dir string) ([]timeline.Instant, int) {
	t.Helper()
	tl, err := timeline.Open(vfs.OS(), filepath.ToSlash(dir), timeline.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	insts, err := tl.Instants(timeline.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return insts, len(tl.Pending())
}

// TestRetentionApply runs, for each rule, the dry run and then --apply on
// the payments partition, and checks that --apply deleted what the dry
// run planned, recorded it as one completed clean instant whose payload
// is the plan, and that history names it for an offset it removed.
func TestRetentionApply(t *testing.T) {
	cfgArgs := []string{"--retention.ms", "60000", "--segment.ms", "180000"}
	for _, tt := range []struct {
		name string
		// args are the config flags; sized ones get retention.bytes
		// from the segments' sizes.
		args        []string
		retentionMs int64 // the retention.ms the args give
		sized       bool
		moveTo      int64 // a DeleteRecords request to this offset first
		now         int64
		rule        string
		deleted     []int64
		newLSO      int64
		removed     int64 // an offset the check removes
		// unrecorded is an offset below the log start offset that no
		// instant removed (-1: none).
		unrecorded int64
	}{
		{"time", cfgArgs, 60000, false, 0, t0 + 235_106, "time", []int64{0, 37}, 73, 40, -1},
		{"size", []string{"--retention.ms", "-1", "--segment.ms", "180000"}, -1, true, 0, t0 + 235_106, "size", []int64{0}, 37, 10, -1},
		{"log_start_offset", []string{"--segment.ms", "180000"}, 604800000, false, 50, t0 + 180_108, "logStartOffset", []int64{0}, 50, 10, 45},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := buildPayments(t)
			if tt.moveTo > 0 {
				deleteRecords(t, dir, tt.moveTo)
			}
			now := []string{"--now", fmt.Sprint(tt.now)}
			args := slices.Concat(tt.args, now)
			retentionBytes := int64(-1)
			if tt.sized {
				dry, _ := retentionJSONOfRun(t, exitOK, slices.Concat(args, []string{dir})...)
				// The log minus segment 0 is exactly retention.bytes: the
				// size rule deletes segment 0 and keeps 37.
				retentionBytes = dry.Segments[1].Size + dry.Segments[2].Size
				args = append(args, "--retention.bytes", fmt.Sprint(retentionBytes))
			}
			dry, _ := retentionJSONOfRun(t, exitOK, slices.Concat(args, []string{dir})...)
			var planned []int64
			for _, d := range dry.Deletions {
				planned = append(planned, d.BaseOffset)
				if d.Reason != tt.rule {
					t.Fatalf("dry run: segment %d by %s, want %s", d.BaseOffset, d.Reason, tt.rule)
				}
			}
			if !slices.Equal(planned, tt.deleted) || dry.NewLogStartOffset != tt.newLSO {
				t.Fatalf("dry run deletes %v to %d, want %v to %d", planned, dry.NewLogStartOffset, tt.deleted, tt.newLSO)
			}
			// A readable offset, before and after: 73 stays.
			if m := historyOffsetJSON(t, dir, 73); m["readable"] != true || m["removedBy"] != nil || m["rule"] != nil || m["at"] != nil {
				t.Fatalf("offset 73 before --apply: %v", m)
			}

			j, _ := retentionJSONOfRun(t, exitProblem, slices.Concat(args, []string{"--apply", dir})...)
			if !j.Applied || !slices.EqualFunc(j.Deletions, dry.Deletions, func(a, b struct {
				BaseOffset       int64  `json:"baseOffset"`
				Reason           string `json:"reason"`
				LargestTimestamp int64  `json:"largestTimestamp"`
			}) bool {
				return a == b
			}) || j.NewLogStartOffset != tt.newLSO || j.Now != tt.now {
				t.Fatalf("--apply carried out %+v, the dry run planned %+v", j, dry)
			}
			if len(j.Instants) != 1 || j.Instants[0].Action != "clean" || j.Instants[0].State != "completed" || j.Instants[0].Instant != tt.now {
				t.Fatalf("--apply instants %+v", j.Instants)
			}
			// The files: every file of each deleted segment is gone,
			// renamed .deleted and removed at the end.
			for _, base := range tt.deleted {
				for _, ext := range []string{".log", ".index", ".timeindex"} {
					name := fmt.Sprintf("%020d%s", base, ext)
					if !slices.Contains(j.RemovedFiles, name) {
						t.Errorf("removedFiles %v lacks %s", j.RemovedFiles, name)
					}
					for _, n := range []string{name, name + ".deleted"} {
						if _, err := os.Stat(filepath.Join(dir, n)); !os.IsNotExist(err) {
							t.Errorf("%s is still there (%v)", n, err)
						}
					}
				}
			}
			for _, f := range j.RemovedFiles {
				if strings.HasPrefix(f, "00000000000000000073.") {
					t.Errorf("removed %s, of the segment kept", f)
				}
			}
			if len(j.KeptDeleted) != 0 {
				t.Errorf("keptDeleted %v", j.KeptDeleted)
			}

			// The timeline: exactly one completed clean instant, whose
			// payload is the plan.
			insts, pending := timelineInstants(t, dir)
			if len(insts) != 1 || pending != 0 {
				t.Fatalf("timeline: %v, %d pending", insts, pending)
			}
			c, ok := insts[0].Result.(*timeline.Clean)
			if !ok || insts[0].Action != timeline.ActionClean || insts[0].State != timeline.Completed {
				t.Fatalf("instant %s: %T", insts[0], insts[0].Result)
			}
			if c.Rule != tt.rule || c.Now != tt.now || c.NewLogStartOffset != tt.newLSO || c.OldLogStartOffset != dry.LogStartOffset || len(c.Segments) != len(dry.Deletions) {
				t.Fatalf("clean payload %+v, plan %+v", c, dry)
			}
			for i, s := range c.Segments {
				d, seg := dry.Deletions[i], dry.Segments[i]
				if s.BaseOffset != d.BaseOffset || s.LargestTimestamp != d.LargestTimestamp || s.Size != seg.Size || s.BaseOffset != seg.BaseOffset {
					t.Fatalf("payload segment %+v, planned %+v (%+v)", s, d, seg)
				}
				next := tt.newLSO
				if i+1 < len(dry.Segments) {
					next = dry.Segments[i+1].BaseOffset
				}
				if s.NextOffset != next {
					t.Fatalf("payload segment %+v: next offset %d, want %d", s, s.NextOffset, next)
				}
			}
			wantCfg := timeline.RetentionConfig{RetentionMs: tt.retentionMs, RetentionBytes: retentionBytes, FileDeleteDelayMs: 60000}
			if c.Config != wantCfg {
				t.Fatalf("config %+v, want %+v", c.Config, wantCfg)
			}
			var detail timeline.Clean
			if err := json.Unmarshal(j.Instants[0].Detail, &detail); err != nil || detail.Rule != tt.rule || detail.NewLogStartOffset != tt.newLSO {
				t.Fatalf("--apply instant detail %s (%v)", j.Instants[0].Detail, err)
			}

			// history names the instant, the rule and the time.
			m := historyOffsetJSON(t, dir, tt.removed)
			if m["readable"] != false || num(m["removedBy"]) != tt.now || m["rule"] != tt.rule || num(m["at"]) != insts[0].Completed.Millis || m["writtenBy"] != nil || num(m["offset"]) != tt.removed {
				t.Fatalf("history --offset %d: %v, want removed by %d (%s)", tt.removed, m, tt.now, tt.rule)
			}
			code, out, _ := runSegviz("history", "--offset", fmt.Sprint(tt.removed), dir)
			if code != exitOK || !strings.Contains(out, "removed by instant "+insts[0].Time.String()) || !strings.Contains(out, "rule "+tt.rule) {
				t.Fatalf("history --offset %d: exit %d\n%s", tt.removed, code, out)
			}
			if m := historyOffsetJSON(t, dir, 73); m["readable"] != true || m["removedBy"] != nil {
				t.Fatalf("offset 73 after --apply: %v", m)
			}
			if tt.unrecorded >= 0 {
				m := historyOffsetJSON(t, dir, tt.unrecorded)
				if m["readable"] != false || m["removedBy"] != nil || m["rule"] != nil || m["at"] != nil {
					t.Fatalf("offset %d, removed by a DeleteRecords the timeline does not hold: %v", tt.unrecorded, m)
				}
				_, out, _ := runSegviz("history", "--offset", fmt.Sprint(tt.unrecorded), dir)
				if !strings.Contains(out, "no instant recorded its removal") || !strings.Contains(out, "something segkit did not record") {
					t.Fatalf("history --offset %d:\n%s", tt.unrecorded, out)
				}
			}
			// A second run at the same time finds nothing to do: exit 0,
			// nothing recorded.
			j2, _ := retentionJSONOfRun(t, exitOK, slices.Concat(args, []string{"--apply", dir})...)
			if len(j2.Deletions) != 0 || len(j2.Instants) != 0 || len(j2.RemovedFiles) != 0 {
				t.Fatalf("second --apply: %+v", j2)
			}
			if insts, _ := timelineInstants(t, dir); len(insts) != 1 {
				t.Fatalf("a check that deleted nothing recorded %v", insts)
			}
		})
	}
}

// deleteRecords moves the partition's log start offset to offset, as a
// DeleteRecords request does (no timeline instant: segkit records
// retention only).
func deleteRecords(t *testing.T, dir string, offset int64) {
	t.Helper()
	cfg, err := kafkalog.ParseConfig(map[string]string{"retention.ms": "60000", "segment.ms": "180000"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), cfg, kafkalog.Options{Clock: &testClock{ms: t0 + 180_108}})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.IncrementLogStartOffset(offset); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRetentionApplyTwice: a second --apply at a later time records its
// own instants after the first, which history lists in order.
func TestRetentionApplyTwice(t *testing.T) {
	dir := buildPayments(t)
	cfg := []string{"--retention.ms", "60000", "--segment.ms", "180000"}
	first := t0 + 235_106
	if code, out, errs := runSegviz(slices.Concat([]string{"retention", "--apply", "--now", fmt.Sprint(first)}, cfg, []string{dir})...); code != exitProblem ||
		!strings.Contains(out, "applied: the check deleted 2 segment(s)") || !strings.Contains(out, "removed 7 file(s)") || !strings.Contains(out, "00000000000000000037.snapshot (10 bytes)") ||
		!strings.Contains(out, "without waiting file.delete.delay.ms=60000 ms") {
		t.Fatalf("first --apply: exit %d\n%s%s", code, out, errs)
	}
	// At 6:01 nothing was appended after offset 73: every segment goes,
	// the log rolls first.
	j, _ := retentionJSONOfRun(t, exitProblem, slices.Concat([]string{"--apply", "--now", fmt.Sprint(at601)}, cfg, []string{dir})...)
	if len(j.Deletions) != 1 || j.Deletions[0].BaseOffset != 73 || j.NewLogStartOffset != 74 || len(j.Instants) != 2 ||
		j.Instants[0].Action != "roll" || j.Instants[1].Action != "clean" {
		t.Fatalf("second --apply: %+v", j)
	}

	// history --json: one object a line, exactly the documented fields.
	code, out, errs := runSegviz("history", "--json", dir)
	if code != exitOK {
		t.Fatalf("history: exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	type want struct {
		instant int64
		action  string
		rule    string
	}
	wants := []want{{first, "clean", "time"}, {at601, "roll", ""}, {at601, "clean", "time"}}
	if len(lines) != len(wants) {
		t.Fatalf("history --json: %d lines, want %d:\n%s", len(lines), len(wants), out)
	}
	insts, _ := timelineInstants(t, dir)
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if got, w := sorted(keys(m)), []string{"action", "completed", "detail", "imported", "instant", "state"}; !slices.Equal(got, w) {
			t.Fatalf("line %d fields %v, want %v", i, got, w)
		}
		detail, _ := m["detail"].(map[string]any)
		if num(m["instant"]) != wants[i].instant || m["action"] != wants[i].action || m["state"] != "completed" || m["imported"] != false ||
			num(m["completed"]) != insts[i].Completed.Millis || detail == nil {
			t.Fatalf("line %d: %s, want %+v", i, line, wants[i])
		}
		if wants[i].rule != "" && detail["rule"] != wants[i].rule {
			t.Fatalf("line %d: detail %v", i, detail)
		}
		if wants[i].action == "roll" && (detail["reason"] != "requested" || num(detail["newBaseOffset"]) != int64(74)) {
			t.Fatalf("line %d: roll detail %v", i, detail)
		}
	}
	if insts[1].Time.Compare(insts[2].Time) >= 0 || insts[0].Time.Compare(insts[1].Time) >= 0 {
		t.Fatalf("instants out of order: %v", insts)
	}
	// The text: one line per instant, in order.
	code, out, _ = runSegviz("history", dir)
	i0, i1, i2 := strings.Index(out, insts[0].Time.String()+"  clean"), strings.Index(out, insts[1].Time.String()+"  roll"), strings.Index(out, insts[2].Time.String()+"  clean")
	if code != exitOK || !strings.Contains(out, "3 instants") || i0 < 0 || i1 < i0 || i2 < i1 ||
		!strings.Contains(out, "time rule (retention.ms=60000): deleted segment(s) 0 (offsets 0-36), 37 (offsets 37-72); log start offset 0 -> 73") ||
		!strings.Contains(out, "requested: new active segment at 74, closing segment 73 (offsets 73-73)") {
		t.Fatalf("history: exit %d\n%s", code, out)
	}
	// --since and --time choose by the instant's time.
	code, out, _ = runSegviz("history", "--since", fmt.Sprint(first+1), "--json", dir)
	if code != exitOK || strings.Count(out, "\n") != 2 || strings.Contains(out, fmt.Sprintf(`"instant":%d`, first)) {
		t.Fatalf("--since: exit %d\n%s", code, out)
	}
	code, out, _ = runSegviz("history", "--time", "2026-03-02T09:03:55.106Z", "--json", dir)
	if code != exitOK || strings.Count(out, "\n") != 1 || !strings.Contains(out, fmt.Sprintf(`"instant":%d`, first)) {
		t.Fatalf("--time: exit %d\n%s", code, out)
	}

	// Offsets: 40 went at the first check; 73 at the second, in the
	// segment the second check's roll closed.
	if m := historyOffsetJSON(t, dir, 40); num(m["removedBy"]) != first || m["rule"] != "time" || m["writtenBy"] != nil {
		t.Fatalf("offset 40: %v", m)
	}
	if m := historyOffsetJSON(t, dir, 73); m["readable"] != false || num(m["removedBy"]) != at601 || m["rule"] != "time" ||
		num(m["writtenBy"]) != at601 || num(m["at"]) != insts[2].Completed.Millis {
		t.Fatalf("offset 73: %v", m)
	}
	_, out, _ = runSegviz("history", "--offset", "73", dir)
	if !strings.Contains(out, "removed by instant "+insts[2].Time.String()) || !strings.Contains(out, "the roll of instant "+insts[1].Time.String()+" (requested) closed its segment 73") {
		t.Fatalf("history --offset 73:\n%s", out)
	}
}

// TestRetentionApplyLocked: under a held lock --apply exits 3 and writes
// nothing, not even the timeline's directory.
func TestRetentionApplyLocked(t *testing.T) {
	dir := buildPayments(t)
	logDir := filepath.Dir(dir)
	holdLock(t, filepath.Join(logDir, ".lock"), "vfs")
	before := snapshot(t, logDir)
	code, out, errs := runSegviz("retention", "--apply", "--retention.ms", "60000", "--now", fmt.Sprint(at601), dir)
	wantLocked(t, "retention --apply", code, errs, logDir)
	if out != "" || !strings.Contains(errs, "nothing was written") {
		t.Fatalf("refused --apply: stdout %q, stderr %s", out, errs)
	}
	if after := snapshot(t, logDir); after != before {
		t.Fatalf("a refused --apply changed the log directory:\nbefore\n%s\nafter\n%s", before, after)
	}
	if _, err := os.Stat(filepath.Join(dir, ".segkit")); !os.IsNotExist(err) {
		t.Fatalf(".segkit: %v", err)
	}
	// The dry run takes no lock.
	if code, _, errs := runSegviz("retention", "--retention.ms", "60000", "--now", fmt.Sprint(at601), dir); code != exitOK {
		t.Fatalf("dry run under the lock: exit %d: %s", code, errs)
	}
}

func TestRetentionApplyUsage(t *testing.T) {
	dir := buildPayments(t)
	logDir := filepath.Dir(dir)
	before := snapshot(t, filepath.Dir(logDir))
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"retention", "--apply", "--what-if"}, exitUsage, "give one of them"},
		{[]string{"retention", "--apply"}, exitUsage, "want one partition directory"},
		{[]string{"retention", "--apply", logDir}, exitUsage, "partition directory"},
		{[]string{"retention", "--apply", filepath.Join(logDir, "missing-0")}, exitFailure, "no such file"},
		{[]string{"retention", "--apply", "--now", "soon", dir}, exitUsage, "neither epoch milliseconds nor an RFC 3339 time"},
		{[]string{"retention", "--help"}, exitOK, "--apply runs the check for real"},
	} {
		code, out, errs := runSegviz(tt.args...)
		if code != tt.code || !strings.Contains(out+errs, tt.want) {
			t.Errorf("%q: exit %d, want %d with %q\nstdout: %s\nstderr: %s", tt.args, code, tt.code, tt.want, out, errs)
		}
	}
	if after := snapshot(t, filepath.Dir(logDir)); after != before {
		t.Fatalf("a refused --apply wrote:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// sorted returns a sorted copy of s.
func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// keys returns the keys of m, sorted.
func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func ptr(v int64) *int64 { return &v }
