package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/timeline"
)

// The real broker's log excerpts of internal/serverlog/testdata (see its
// README.md): partition hi-payments-0, the broker's JVM in Asia/Kolkata.
var (
	importServerLog  = filepath.Join("..", "..", "internal", "serverlog", "testdata", "server.log")
	importCleanerLog = filepath.Join("..", "..", "internal", "serverlog", "testdata", "log-cleaner.log")
)

// tdLogDir is the broker's log directory in the excerpts.
const tdLogDir = "/tmp/TestHistoryImportMatchesSegkit768952151/001/kafka"

// brokerPartition returns a partition directory named hi-payments-0 (the
// payments partition, renamed), in a log directory of its own.
func brokerPartition(t *testing.T) string {
	t.Helper()
	src := buildPayments(t)
	dir := filepath.Join(filepath.Dir(src), "hi-payments-0")
	if err := os.Rename(src, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func importArgs(dir string, extra ...string) []string {
	return slices.Concat([]string{"history", "--import", importServerLog, "--import", importCleanerLog, "--tz", "Asia/Kolkata"}, extra, []string{dir})
}

// decodeInstants parses history --json lines.
func decodeInstants(t *testing.T, out string) []instantJSON {
	t.Helper()
	var insts []instantJSON
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var in instantJSON
		if err := json.Unmarshal([]byte(l), &in); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		insts = append(insts, in)
	}
	return insts
}

// TestHistoryImport imports the real broker's log: the instants it
// prints are on the timeline, marked imported, with the broker's times
// read in the broker's zone; a second import imports nothing; history
// and --offset answer from them.
func TestHistoryImport(t *testing.T) {
	dir := brokerPartition(t)
	code, out, errs := runSegviz(importArgs(dir, "--json")...)
	if code != exitOK {
		t.Fatalf("import: exit %d\n%s", code, errs)
	}
	got := decodeInstants(t, out)
	var actions []string
	for _, in := range got {
		if !in.Imported || in.State != "completed" {
			t.Errorf("instant %d %s: imported %v, state %s", in.Instant, in.Action, in.Imported, in.State)
		}
		actions = append(actions, in.Action)
	}
	want := slices.Concat(slices.Repeat([]string{"roll"}, 9), []string{"recovery", "clean", "clean"})
	if !slices.Equal(actions, want) {
		t.Fatalf("imported %v, want %v", actions, want)
	}
	// The size deletion: [2026-12-02 11:04:46,089] IST, segments 0 and 12.
	size := got[10]
	at := time.Date(2026, 12, 2, 5, 34, 46, 89e6, time.UTC).UnixMilli()
	wantDetail := fmt.Sprintf(`{"rule":"size","config":{"retention.ms":0,"retention.bytes":15770,"file.delete.delay.ms":0},"now":%d,`+
		`"segments":[{"baseOffset":0,"nextOffset":12,"size":1960,"largestTimestamp":1796182480603},{"baseOffset":12,"nextOffset":24,"size":1960,"largestTimestamp":1796182484603}],`+
		`"oldLogStartOffset":0,"newLogStartOffset":24}`, at)
	if size.Instant != at || string(size.Detail) != wantDetail {
		t.Errorf("size clean at %d: %s\nwant at %d: %s", size.Instant, size.Detail, at, wantDetail)
	}
	if !strings.Contains(errs, "read 215 lines (86 log lines about hi-payments-0, 27 of them used)") {
		t.Errorf("stderr:\n%s", errs)
	}

	// On the timeline, as printed.
	code, listed, _ := runSegviz("history", "--json", dir)
	if code != exitOK || strings.TrimSpace(listed) != strings.TrimSpace(out) {
		t.Errorf("history --json after the import: exit %d\n%s\nwant\n%s", code, listed, out)
	}
	// Again: nothing new.
	code, out2, errs2 := runSegviz(importArgs(dir, "--json")...)
	if code != exitOK || out2 != "" || !strings.Contains(errs2, "skipped 12 events: already on the timeline (imported before)") {
		t.Errorf("second import: exit %d, stdout %q\n%s", code, out2, errs2)
	}
	// --offset answers from the imported time clean, once the log's
	// start offset is past 30 (this directory is not the broker's: move
	// it as the broker's deletions did).
	deleteRecords(t, dir, 60)
	m := historyOffsetJSON(t, dir, 30)
	if m["readable"] != false || num(m["removedBy"]) != got[11].Instant || m["rule"] != "time" {
		t.Errorf("--offset 30: %v, want removed by %d, rule time", m, got[11].Instant)
	}

	// The text output, on another copy.
	dir2 := brokerPartition(t)
	code, text, _ := runSegviz(importArgs(dir2)...)
	for _, w := range []string{"imported 12 instants into hi-payments-0/.segkit/timeline from server.log, log-cleaner.log (partition hi-payments-0, times read in Asia/Kolkata)",
		"2026-12-02T05:34:46.089Z", "size rule (retention.bytes=15770): deleted segment(s) 0 (offsets 0-11), 12 (offsets 12-23); log start offset 0 -> 24",
		"not logged: new active segment at 12, closing segment 0 (offsets 0-11)", "read 215 lines"} {
		if code != exitOK || !strings.Contains(text, w) {
			t.Errorf("text import: exit %d, no %q in\n%s", code, w, text)
		}
	}
	// Read as UTC, the same lines are 5:30 later.
	dir3 := brokerPartition(t)
	_, utc, _ := runSegviz("history", "--json", "--import", importServerLog, dir3)
	if u := decodeInstants(t, utc); len(u) != 12 || u[10].Instant-at != (5*time.Hour+30*time.Minute).Milliseconds() {
		t.Errorf("import read as UTC: %d instants, size clean at %d", len(u), u[10].Instant)
	}
}

// TestHistoryImportRecordedBySegkit: a broker log line of a deletion
// segkit recorded itself (segviz retention --apply) is not imported
// again; what segkit did not record is, and a time the timeline cannot
// take is skipped and counted.
func TestHistoryImportRecordedBySegkit(t *testing.T) {
	dir := buildPayments(t)
	if code, _, errs := runSegviz("retention", "--apply", "--retention.ms", "60000", "--now", fmt.Sprint(t0+235_106), dir); code != exitProblem {
		t.Fatalf("--apply: exit %d: %s", code, errs)
	}
	ident := "[UnifiedLog partition=payments-0, dir=/var/kafka-logs] "
	line := func(ts, msg, logger string) string {
		return fmt.Sprintf("[%s] INFO %s (org.apache.kafka.storage.internals.log.%s)\n", ts, msg, logger)
	}
	seg := func(base, size int64) string {
		return fmt.Sprintf("LogSegment(baseOffset=%d, size=%d, lastModifiedTime=1772442000000, largestRecordTimestamp=1772441994997)", base, size)
	}
	log := "not a log line\n" + line("2026-03-02 09:03:57,000", ident+"Incremented log start offset to 73 due to segment deletion", "UnifiedLog") +
		line("2026-03-02 09:03:57,001", ident+"Deleting segment "+seg(0, 2876)+" due to log retention time 60000ms breach based on the largest record timestamp in the segment", "UnifiedLog") +
		line("2026-03-02 09:03:57,001", ident+"Deleting segment "+seg(37, 2808)+" due to log retention time 60000ms breach based on the largest record timestamp in the segment", "UnifiedLog") +
		line("2026-03-02 09:06:00,000", "[LocalLog partition=payments-0, dir=/var/kafka-logs/payments-0] Rolled new log segment at offset 74 in 1 ms.", "LocalLog") +
		line("1965-03-02 09:06:00,000", "[LocalLog partition=payments-0, dir=/var/kafka-logs/payments-0] Rolled new log segment at offset 75 in 1 ms.", "LocalLog")
	f := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(f, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runSegviz("history", "--json", "--import", f, dir)
	if code != exitOK {
		t.Fatalf("import: exit %d\n%s", code, errs)
	}
	got := decodeInstants(t, out)
	if len(got) != 1 || got[0].Action != "roll" || !strings.Contains(string(got[0].Detail), `"newBaseOffset":74`) {
		t.Errorf("imported %+v, want the roll at 74 only", got)
	}
	for _, w := range []string{"skipped 1 event: already on the timeline (recorded by segkit)", "skipped 1 event: at a time the timeline cannot take", "skipped 1 line that did not parse"} {
		if !strings.Contains(errs, w) {
			t.Errorf("no %q in\n%s", w, errs)
		}
	}
	insts, _ := timelineInstants(t, dir)
	var imported []bool
	for _, in := range insts {
		imported = append(imported, in.Imported)
	}
	if !slices.Equal(imported, []bool{false, true}) {
		t.Errorf("timeline instants imported %v, want segkit's clean then the imported roll", imported)
	}
}

// TestHistoryImportLocked: under a held lock the import exits 3 and
// writes nothing, not even the timeline's directory.
func TestHistoryImportLocked(t *testing.T) {
	dir := brokerPartition(t)
	logDir := filepath.Dir(dir)
	holdLock(t, filepath.Join(logDir, ".lock"), "vfs")
	before := snapshot(t, logDir)
	code, _, errs := runSegviz(importArgs(dir)...)
	wantLocked(t, "history --import", code, errs, logDir)
	if after := snapshot(t, logDir); after != before {
		t.Fatalf("a refused import changed the log directory:\nbefore\n%s\nafter\n%s", before, after)
	}
	if _, err := os.Stat(timeline.Dir(filepath.ToSlash(dir))); !os.IsNotExist(err) {
		t.Fatalf("timeline directory: %v", err)
	}
}

func TestHistoryImportUsage(t *testing.T) {
	dir := brokerPartition(t)
	logDir := filepath.Dir(dir)
	before := snapshot(t, logDir)
	missing := filepath.Join(t.TempDir(), "server.log")
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"history", "--tz", "UTC", dir}, exitUsage, "--tz and --broker-dir go with --import"},
		{[]string{"history", "--import", importServerLog, "--offset", "3", dir}, exitUsage, "list them"},
		{[]string{"history", "--import", importServerLog, "--tz", "Mars/Olympus", dir}, exitUsage, "neither a time zone"},
		{[]string{"history", "--import", importServerLog, "--tz", "+25:00", dir}, exitUsage, "not a UTC offset"},
		{[]string{"history", "--import", importServerLog, "--broker-dir", "kafka", dir}, exitUsage, "absolute path"},
		{[]string{"history", "--import", importServerLog, logDir}, exitUsage, "partition directory"},
		{[]string{"history", "--import", missing, dir}, exitFailure, "nothing was imported"},
		{[]string{"history", "--help"}, exitOK, "--import FILE reads a Kafka broker's log files"},
	} {
		code, out, errs := runSegviz(tt.args...)
		if code != tt.code || !strings.Contains(out+errs, tt.want) {
			t.Errorf("%q: exit %d, want %d with %q\nstdout: %s\nstderr: %s", tt.args, code, tt.code, tt.want, out, errs)
		}
	}
	if after := snapshot(t, logDir); after != before {
		t.Fatalf("a refused import wrote:\nbefore\n%s\nafter\n%s", before, after)
	}
	// A fixed offset reads like the zone.
	code, out, _ := runSegviz(importArgs(dir, "--json", "--tz", "+05:30")...)
	if code != exitOK || len(decodeInstants(t, out)) != 12 {
		t.Errorf("--tz +05:30 (after Asia/Kolkata, the last wins): exit %d\n%s", code, out)
	}
	// --broker-dir naming another log directory: nothing is about it.
	dir2 := brokerPartition(t)
	code, out, errs := runSegviz(importArgs(dir2, "--broker-dir", "/var/kafka-logs")...)
	if code != exitOK || !strings.Contains(out, "imported 0 instants") || !strings.Contains(out+errs, "no line about hi-payments-0 names the log directory /var/kafka-logs (--broker-dir); they name "+tdLogDir) {
		t.Errorf("--broker-dir elsewhere: exit %d\n%s%s", code, out, errs)
	}
}

// TestHistoryImportDamagedTimeline: the import does not write beside a
// timeline it cannot read: exit 1, naming the file.
func TestHistoryImportDamagedTimeline(t *testing.T) {
	dir := brokerPartition(t)
	if code, _, errs := runSegviz(importArgs(dir)...); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	files, _ := filepath.Glob(filepath.Join(timeline.Dir(filepath.ToSlash(dir)), "*_*.clean"))
	if len(files) != 2 {
		t.Fatalf("instant files %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	b[20] ^= 1
	if err := os.WriteFile(files[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runSegviz(importArgs(dir)...); code != exitProblem || !strings.Contains(errs, "nothing was imported") || !strings.Contains(errs, filepath.Base(files[0])) {
		t.Errorf("import beside a damaged timeline: exit %d: %s", code, errs)
	}
}
