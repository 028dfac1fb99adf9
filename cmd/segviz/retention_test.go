package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

type testClock struct{ ms int64 }

func (c *testClock) Now() time.Time { return time.UnixMilli(c.ms) }

var (
	t0       = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixMilli() // 0:00 of the payments timeline
	recTime  = func(k int) int64 { return t0 + int64(k-37)*5003 }
	minute   = int64(60_000)
	at601    = t0 + 6*minute + 1000
	startBrk = t0 - (4*60+29)*1000 // the broker's start: checks at 1:01, 6:01
)

// buildPayments writes the payments partition as it is at 3:00.108, just
// after offset 73 rolled segment 37: segments 0 (offsets 0..36), 37
// (37..72, newest 2:55.105) and 73 (offset 73). It returns the directory.
func buildPayments(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "kafka-logs", "payments-0")
	cfg, err := kafkalog.ParseConfig(map[string]string{"retention.ms": "60000", "segment.ms": "180000"})
	if err != nil {
		t.Fatal(err)
	}
	clk := &testClock{ms: recTime(1) - 4000}
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	for k := 0; k <= 73; k++ {
		ts := recTime(k)
		if k == 0 {
			ts = recTime(1) - 4000
		}
		clk.ms = ts
		spec := record.NewBatchSpec(0, compress.None)
		b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: ts, Value: []byte(fmt.Sprintf("payment-%d", k))}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// The files' modification times are those of their last writes, as
	// on the broker (the OS stamped them with the wall clock).
	for base, last := range map[int64]int{0: 36, 37: 72, 73: 73} {
		for _, ext := range []string{".log", ".index", ".timeindex"} {
			mt := time.UnixMilli(recTime(last))
			if err := os.Chtimes(filepath.Join(dir, fmt.Sprintf("%020d%s", base, ext)), mt, mt); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// snapshot describes every entry under root: name, size, mode, mtime and,
// for a regular file, its content hash (special files are not opened).
func snapshot(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h := ""
		if d.Type().IsRegular() { // never open a FIFO or device: it would block
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h = fmt.Sprintf("%x", sha256.Sum256(data))
		}
		fmt.Fprintf(&b, "%s %d %v %d %s\n", p, fi.Size(), fi.Mode(), fi.ModTime().UnixNano(), h)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func runSegviz(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

type jsonOut struct {
	Now               int64 `json:"now"`
	LogStartOffset    int64 `json:"logStartOffset"`
	NewLogStartOffset int64 `json:"newLogStartOffset"`
	Deletions         []struct {
		BaseOffset       int64  `json:"baseOffset"`
		Reason           string `json:"reason"`
		LargestTimestamp int64  `json:"largestTimestamp"`
	} `json:"deletions"`
	Segments []struct {
		BaseOffset        int64            `json:"baseOffset"`
		Size              int64            `json:"size"`
		LargestTimestamp  int64            `json:"largestTimestamp"`
		ReadableUntil     *int64           `json:"readableUntil"`
		IfAppendsContinue *int64           `json:"ifAppendsContinue"`
		HeldBy            *json.RawMessage `json:"heldBy"`
		IfReleased        *int64           `json:"ifReleased"`
	} `json:"segments"`
	Holds []struct {
		Savepoint   string `json:"savepoint"`
		TakenAt     int64  `json:"takenAt"`
		Label       string `json:"label"`
		FirstOffset int64  `json:"firstOffset"`
		LastOffset  int64  `json:"lastOffset"`
	} `json:"holds"`
	Held []struct {
		BaseOffset  int64   `json:"baseOffset"`
		Savepoint   string  `json:"savepoint"`
		Label       string  `json:"label"`
		Pinned      bool    `json:"pinned"`
		Blocked     *string `json:"blocked"`
		Explanation string  `json:"explanation"`
	} `json:"held"`
}

func TestRetentionCommandJSON(t *testing.T) {
	dir := buildPayments(t)
	root := filepath.Dir(filepath.Dir(dir))
	before := snapshot(t, root)
	// At 3:00.108, with the broker's phase: segment 0 is already due (it
	// went at 1:01 on the broker; nothing ran here), segment 37 goes at
	// 6:01.
	code, out, errs := runSegviz("retention", "--retention.ms", "60000", "--segment.ms", "180000",
		"--now", fmt.Sprint(t0+180_108), "--broker-start", time.UnixMilli(startBrk).UTC().Format(time.RFC3339Nano), "--json", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var j jsonOut
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if j.Now != t0+180_108 || j.LogStartOffset != 0 || j.NewLogStartOffset != 37 || len(j.Deletions) != 1 ||
		j.Deletions[0].BaseOffset != 0 || j.Deletions[0].Reason != "time" || j.Deletions[0].LargestTimestamp != recTime(36) {
		t.Fatalf("plan: %s", out)
	}
	if len(j.Segments) != 3 || j.Segments[1].BaseOffset != 37 || j.Segments[1].LargestTimestamp != recTime(72) ||
		j.Segments[1].ReadableUntil == nil || *j.Segments[1].ReadableUntil != at601 {
		t.Fatalf("segments: %s", out)
	}
	// Segment 0 is overdue: the next check, 6:01, takes it too.
	if *j.Segments[0].ReadableUntil != at601 {
		t.Fatalf("segment 0 until %d: %s", *j.Segments[0].ReadableUntil, out)
	}
	// At 6:01 itself, the plan deletes segments 0 and 37, and 73 too: in
	// this copy nothing was written after offset 73 (3:00.108), so every
	// segment qualifies and the log would roll first.
	code, out, _ = runSegviz("retention", "--config", "retention.ms=60000", "--config", "segment.ms=180000", "--now", fmt.Sprint(at601), "--json", dir)
	j = jsonOut{}
	if err := json.Unmarshal([]byte(out), &j); err != nil || code != exitOK {
		t.Fatalf("exit %d, %v", code, err)
	}
	if len(j.Deletions) != 3 || j.Deletions[1].BaseOffset != 37 || j.Deletions[1].LargestTimestamp != recTime(72) || j.NewLogStartOffset != 74 {
		t.Fatalf("at 6:01: %s", out)
	}
	if after := snapshot(t, root); after != before {
		t.Fatalf("the command wrote to the partition:\nbefore\n%s\nafter\n%s", before, after)
	}
}

func TestRetentionCommandTable(t *testing.T) {
	dir := buildPayments(t)
	props := filepath.Join(t.TempDir(), "payments.properties")
	if err := os.WriteFile(props, []byte("# payments\nretention.ms=60000\nsegment.ms: 180000\nlog.retention.check.interval.ms=300000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runSegviz("retention", "--config-file", props, "--now", time.UnixMilli(t0+235_106).UTC().Format(time.RFC3339Nano),
		"--broker-start", fmt.Sprint(startBrk), dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"log start offset 0, log end offset 74",
		"retention.ms=60000",
		"checks every 5 m from 2026-03-02T08:56:01.000Z",
		"plan: a check now deletes 2 segment(s)",
		"37 (time): newest record 2026-03-02T09:02:55.105Z is 1 m 0.001 s old, more than retention.ms 60000",
		"SEGMENT  OFFSETS",
		"37       37-72",
		"2026-03-02T09:02:55.105Z  2026-03-02T09:06:01.000Z  2026-03-02T09:07:01.000Z  time",
		"qualifies from 2026-03-02T09:03:55.106Z; deleted by the check at 2026-03-02T09:06:01.000Z",
		"73: active segment",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestRetentionCommandRealPartition(t *testing.T) {
	root := realdata.Dir(t)
	dir := filepath.Join(root, "dipendrasaini__kafka-learnning-series", "tmp", "kafka-logs-1", "invoice-0")
	before := snapshot(t, filepath.Dir(dir))
	// Just after the broker wrote it (records from 2024-06-15T10:20:25Z).
	code, out, errs := runSegviz("retention", "--now", "2024-06-15T12:00:00Z", "--json", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var j jsonOut
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Segments) != 4 || len(j.Deletions) != 0 || j.NewLogStartOffset != 0 {
		t.Fatalf("%s", out)
	}
	wantBases := []int64{0, 30626, 60611, 90867}
	for i, s := range j.Segments {
		if s.BaseOffset != wantBases[i] || s.Size == 0 || s.ReadableUntil == nil {
			t.Fatalf("segment %d: %+v", i, s)
		}
		// retention.ms 7 days after the newest record, within a check
		// interval (the phase is unknown).
		lo := s.LargestTimestamp + 604_800_000
		hi := lo + 300_000
		if i == 3 { // the active segment can take appends for segment.ms
			lo, hi = lo+1, lo+604_800_000+300_000
		}
		if *s.ReadableUntil <= lo || *s.ReadableUntil > hi {
			t.Fatalf("segment %d: readable until %d, want in (%d, %d]", s.BaseOffset, *s.ReadableUntil, lo, hi)
		}
	}
	// Ten days later every segment qualifies: the log would roll and all
	// four go.
	code, out, _ = runSegviz("retention", "--now", "2024-06-25T12:00:00Z", "--json", dir)
	j = jsonOut{}
	if err := json.Unmarshal([]byte(out), &j); err != nil || len(j.Deletions) != 4 || j.NewLogStartOffset != 100294 {
		t.Fatalf("exit %d: %s", code, out)
	}
	// The table names the rule and the bound for each segment.
	code, out, _ = runSegviz("retention", "--now", "2024-06-15T12:00:00Z", dir)
	if code != exitOK || !strings.Contains(out, "90867    90867-100293") || !strings.Contains(out, "(active)") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if after := snapshot(t, filepath.Dir(dir)); after != before {
		t.Fatal("the command changed the real partition")
	}
}

// TestRetentionCommandWarnings: records written already older than
// retention.ms are flagged, and, the plan being computed, the command
// succeeds (warnings do not fail, as in verify).
func TestRetentionCommandWarnings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs", "old-0")
	clk := &testClock{ms: t0}
	cfg := kafkalog.DefaultConfig()
	cfg.MessageTimestampAfterMaxMs = 1 << 62
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	for i, ts := range []int64{1000, t0 + 365*24*3_600_000} { // 1970, and a year ahead
		spec := record.NewBatchSpec(0, compress.None)
		b, _ := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: ts, Value: []byte("v")}})
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
	}
	l.Close()
	// The file's mtime is the wall clock's; take now just after it.
	fi, err := os.Stat(filepath.Join(dir, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	now := fi.ModTime().UnixMilli() + 1000
	code, out, _ := runSegviz("retention", "--now", fmt.Sprint(now), dir)
	if code != exitOK || !strings.Contains(out, "far-past-timestamp") || !strings.Contains(out, "plan: a check now deletes 1 segment(s)") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, _, errs := runSegviz("retention", "--now", fmt.Sprint(now), "--json", dir)
	if code != exitOK || !strings.Contains(errs, "retention: warning 00000000000000000000.log: far-past-timestamp") {
		t.Fatalf("json: exit %d, %s", code, errs)
	}
}

// TestRetentionCommandActiveDeletedNow is the safety issue's reproduction:
// one active segment of records stamped 10 days ago, Kafka's defaults. The
// plan says a check now deletes it, rolling first; the table and the JSON
// must say it is readable until that check, not days later.
func TestRetentionCommandActiveDeletedNow(t *testing.T) {
	const day = 24 * 3_600_000
	now := time.Now().UnixMilli()
	dir := filepath.Join(t.TempDir(), "logs", "t-0")
	clk := &testClock{ms: now}
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	spec := record.NewBatchSpec(0, compress.None)
	old := now - 10*day
	b, _ := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: old, Value: []byte("hi")}, {Timestamp: old, Value: []byte("hi")}, {Timestamp: old, Value: []byte("hi")}})
	if _, err := l.Append(b, 0); err != nil {
		t.Fatal(err)
	}
	l.Close()
	const interval = 300_000 // log.retention.check.interval.ms, phase unknown
	code, out, errs := runSegviz("retention", "--now", fmt.Sprint(now), "--json", dir)
	var j jsonOut
	if err := json.Unmarshal([]byte(out), &j); err != nil || code != exitOK {
		t.Fatalf("exit %d, %v: %s", code, err, errs)
	}
	if len(j.Deletions) != 1 || j.Deletions[0].BaseOffset != 0 || len(j.Segments) != 1 {
		t.Fatalf("plan: %s", out)
	}
	if s := j.Segments[0]; s.ReadableUntil == nil || *s.ReadableUntil <= now || *s.ReadableUntil > now+interval ||
		s.IfAppendsContinue == nil || *s.IfAppendsContinue != *s.ReadableUntil {
		t.Fatalf("a check now deletes segment 0, but: %s", out)
	}
	code, out, _ = runSegviz("retention", "--now", fmt.Sprint(now), dir)
	until := time.UnixMilli(now + interval).UTC().Format("2006-01-02T15:04:05.000Z")
	if code != exitOK || !strings.Contains(out, "plan: a check now deletes 1 segment(s)") || !strings.Contains(out, "  "+until+"  ") ||
		!strings.Contains(out, "appends cannot keep it") || strings.Contains(out, "if appends continue") {
		t.Fatalf("exit %d, want readable until %s:\n%s", code, until, out)
	}
	// With segment.ms longer than its age, appends could still reach it:
	// the table still shows the plan's answer, the worst case is labelled.
	code, out, _ = runSegviz("retention", "--now", fmt.Sprint(now), "--segment.ms", fmt.Sprint(20*day), dir)
	if code != exitOK || !strings.Contains(out, "  "+until+"  ") || !strings.Contains(out, "active segment, deleted by a check now") ||
		!strings.Contains(out, "0: if appends continue (not what the plan above assumes): readable until ") {
		t.Fatalf("exit %d, want readable until %s:\n%s", code, until, out)
	}
}

func TestRetentionCommandUsage(t *testing.T) {
	dir := buildPayments(t)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"retention", "--help"}, exitOK, "Examples:"},
		{[]string{"help", "retention"}, exitOK, "readable until"},
		{[]string{"retention"}, exitUsage, "want one partition directory"},
		{[]string{"retention", dir, dir}, exitUsage, "want one partition directory"},
		{[]string{"retention", "--now", "yesterday", dir}, exitUsage, "neither epoch milliseconds nor an RFC 3339 time"},
		{[]string{"retention", "--segment.bytes", "10", dir}, exitUsage, "Invalid value 10 for configuration segment.bytes"},
		{[]string{"retention", "--retention.ms", "x", dir}, exitUsage, "Invalid value x for configuration retention.ms: Not a number of type LONG"},
		{[]string{"retention", "--config", "nonsense", dir}, exitUsage, "want key=value"},
		{[]string{"retention", "--config", "colour=blue", dir}, exitUsage, "Unknown topic config name: colour"},
		{[]string{"retention", "--log.retention.check.interval.ms", "0", dir}, exitUsage, "log.retention.check.interval.ms"},
		{[]string{"retention", "--config-file", filepath.Join(dir, "missing.properties"), dir}, exitFailure, "no such file"},
		{[]string{"retention", filepath.Join(dir, "missing")}, exitFailure, "no such file"},
		{[]string{"retention", "--what-if", dir}, exitUsage, "--what-if takes no DIR"},
		{[]string{"retention", "--what-if", "--duration", "soon"}, exitUsage, "not a positive duration"},
		{[]string{"retention", "--what-if", "--rate", "-1"}, exitUsage, "invalid traffic"},
		{[]string{"retention", "--what-if", "--engine", "--rate", "1000", "--duration", "7d"}, exitUsage, "simulation too large"},
	} {
		code, out, errs := runSegviz(tt.args...)
		if code != tt.code || !strings.Contains(out+errs, tt.want) {
			t.Errorf("%q: exit %d, want %d with %q\nstdout: %s\nstderr: %s", tt.args, code, tt.code, tt.want, out, errs)
		}
	}
}

func TestRetentionWhatIf(t *testing.T) {
	// The payments config: records live at most segment.ms + retention.ms
	// + one check interval (9 min).
	args := []string{"retention", "--what-if", "--retention.ms", "60000", "--segment.ms", "180000", "--rate", "0.2", "--record-size", "100",
		"--duration", "30m", "--now", fmt.Sprint(t0)}
	code, out, errs := runSegviz(args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"TIME", "+0:03:05.000  roll    37", "delete  0", "remove  0", "worst case (formula): readable ≤ 9 m", "summary:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The engine gives the same timeline.
	code, eout, errs := runSegviz(append(args, "--engine")...)
	if code != exitOK {
		t.Fatalf("engine: exit %d: %s", code, errs)
	}
	strip := func(s string) string {
		i := strings.Index(s, "\n\n")
		return s[i:]
	}
	if strip(out) != strip(eout) {
		t.Fatalf("model and engine differ:\n%s\n----\n%s", out, eout)
	}
	// JSON: the events and the worst case.
	code, out, _ = runSegviz(append(args, "--json")...)
	var j struct {
		Events []struct {
			At   int64  `json:"at"`
			Kind string `json:"kind"`
		} `json:"events"`
		MaxReadableMs int64 `json:"maxReadableMs"`
		WorstCase     struct {
			ReadableMs *int64 `json:"readableMs"`
		} `json:"worstCase"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil || code != exitOK {
		t.Fatalf("exit %d, %v", code, err)
	}
	if len(j.Events) == 0 || j.WorstCase.ReadableMs == nil || *j.WorstCase.ReadableMs != 540_000 || j.MaxReadableMs > 540_000 {
		t.Fatalf("%s", out)
	}
	// The orders config: the partition peaks near 3 MiB + an interval.
	code, out, _ = runSegviz("retention", "--what-if", "--segment.bytes", "1048576", "--retention.bytes", "2097152",
		"--rate", "1.5", "--record-size", "1024", "--batch", "15", "--duration", "3h")
	if code != exitOK || !strings.Contains(out, "peak log size 3593436 bytes") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
