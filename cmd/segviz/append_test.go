package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// setNow makes the append command's clock read t, and returns the undo.
func setNow(t time.Time) func() {
	old := now
	now = func() time.Time { return t }
	return func() { now = old }
}

// appendCmd runs the append command with in as standard input.
func appendCmd(t *testing.T, in string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := appendFrom(strings.NewReader(in), args, &out, &errb)
	return code, out.String(), errb.String()
}

// records returns n JSON lines with values v0, v1, ...
func records(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"key":"a2V5","value":"%s","headers":[{"key":"trace","value":"eA=="}]}`+"\n", b64(fmt.Sprintf("v%d", i)))
	}
	return b.String()
}

func b64(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.Encode([]byte(s))
	return strings.Trim(strings.TrimSpace(b.String()), `"`)
}

func TestAppendCommand(t *testing.T) {
	defer setNow(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))()
	dir := filepath.Join(t.TempDir(), "logs", "fixture-0")
	code, out, errs := appendCmd(t, records(25), "--batch-records", "10", "--compression", "zstd", dir)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := `{"firstOffset":0,"lastOffset":9}
{"firstOffset":10,"lastOffset":19}
{"firstOffset":20,"lastOffset":24}
`
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	// Appending again continues the offsets; the result verifies.
	code, out, _ = appendCmd(t, records(1), dir)
	if code != exitOK || out != `{"firstOffset":25,"lastOffset":25}`+"\n" {
		t.Errorf("second append: exit %d: %s", code, out)
	}
	code, out, _ = runSegviz("verify", "--now", fmt.Sprint(now().UnixMilli()), dir)
	if code != exitOK || !strings.Contains(out, "26 records") {
		t.Errorf("verify: exit %d\n%s", code, out)
	}
}

func TestAppendCommandSmallSegments(t *testing.T) {
	defer setNow(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))()
	dir := filepath.Join(t.TempDir(), "fixture-0")
	code, _, errs := appendCmd(t, records(6), "--batch-records", "1", "--segment.bytes", "14", dir)
	if code != exitOK || !strings.Contains(errs, "Kafka 4.x's minimum (KIP-1030)") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(logs) != 6 {
		t.Errorf("%d segments, want one per batch: %v", len(logs), logs)
	}
	if code, out, _ := runSegviz("verify", "--now", fmt.Sprint(now().UnixMilli()), dir); code != exitOK {
		t.Errorf("verify: exit %d\n%s", code, out)
	}
	// At 1 MiB no warning; below the format's floor, a usage error.
	if code, _, errs := appendCmd(t, records(1), "--segment.bytes", "1048576", filepath.Join(t.TempDir(), "a-0")); code != exitOK || errs != "" {
		t.Errorf("1 MiB: exit %d: %s", code, errs)
	}
	if code, _, errs := appendCmd(t, records(1), "--segment.bytes", "13", filepath.Join(t.TempDir(), "b-0")); code != exitUsage || !strings.Contains(errs, "at least 14") {
		t.Errorf("13 bytes: exit %d: %s", code, errs)
	}
}

// TestAppendCommandBadInput: bad lines are reported with their numbers,
// and nothing is written.
func TestAppendCommandBadInput(t *testing.T) {
	defer setNow(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))()
	dir := filepath.Join(t.TempDir(), "fixture-0")
	in := records(2) + "{\"value\":\"!!\"}\n" + records(1) + "not json\n" +
		fmt.Sprintf(`{"value":null,"timestamp":%d}`+"\n", now().Add(3*time.Hour).UnixMilli())
	code, out, errs := appendCmd(t, in, dir)
	if code != exitProblem || out != "" {
		t.Fatalf("exit %d, output %q", code, out)
	}
	for _, want := range []string{"line 3: value is not base64", "line 5: not a JSON object", "nothing was written"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s was created", dir)
	}
	// A timestamp more than an hour ahead is refused before writing.
	code, _, errs = appendCmd(t, fmt.Sprintf(`{"value":null,"timestamp":%d}`+"\n", now().Add(3*time.Hour).UnixMilli()), dir)
	if code != exitProblem || !strings.Contains(errs, "line 1: timestamp") || !strings.Contains(errs, "message.timestamp.after.max.ms") {
		t.Errorf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s was created", dir)
	}
}

func TestAppendCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--compression", "brotli", "d"},
		{"--batch-records", "0", "d"},
		{"--segment.bytes", "x", "d"},
	} {
		if code, _, errs := appendCmd(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
	}
	code, out, _ := runSegviz("append", "--help")
	if code != exitOK || !strings.Contains(out, "Examples:") || !strings.Contains(out, "KIP-1030") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}
