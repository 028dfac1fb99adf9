package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestAppendCommandStreams: append streams its input. The input comes
// through a pipe that the test holds open: the first batches must be
// appended and printed (once durable) before the rest is written, which a
// command reading its whole input first never does.
func TestAppendCommandStreams(t *testing.T) {
	defer setNow(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))()
	dir := filepath.Join(t.TempDir(), "logs", "stream-0")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	// Closing the pipes' read ends unblocks both sides if the test fails.
	t.Cleanup(func() { inR.Close(); outR.Close() })
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := appendFrom(inR, []string{"--batch-records", "10", "--sync-bytes", "1", dir}, outW, &errb)
		outW.Close()
		done <- code
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// The writer sends 30 lines, then the rest once the test has seen
	// three batches printed.
	in := strings.SplitAfter(records(50), "\n")
	more := make(chan struct{})
	go func() {
		defer inW.Close()
		if _, err := io.WriteString(inW, strings.Join(in[:30], "")); err != nil {
			return
		}
		<-more
		io.WriteString(inW, strings.Join(in[30:], ""))
	}()
	var got []string
	for len(got) < 3 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("append exited (%d) before the end of its input: %s", <-done, errb.String())
			}
			got = append(got, l)
		case <-time.After(20 * time.Second):
			t.Fatalf("after 30 lines of input, %d batches printed, want 3: append does not stream (%s)", len(got), errb.String())
		}
	}
	close(more)
	for l := range lines {
		got = append(got, l)
	}
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var want []string
	for i := 0; i < 50; i += 10 {
		want = append(want, fmt.Sprintf(`{"firstOffset":%d,"lastOffset":%d}`, i, i+9))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestAppendCommandBadLineMidway: a bad line stops the appending. The
// batches before the one holding it were printed and stay; the command
// says how many records it appended and the line to go on from, exits 1,
// and still reports every bad line. Appending the corrected input from
// that line gives what a clean run gives.
func TestAppendCommandBadLineMidway(t *testing.T) {
	defer setNow(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))()
	lines := strings.SplitAfter(records(45), "\n")
	bad := slices.Clone(lines)
	bad[22] = "null\n"                                 // line 23
	bad[40] = `{"value":"aGk=","value":"aGk="}` + "\n" // line 41
	dir := filepath.Join(t.TempDir(), "logs", "fixture-0")
	code, out, errs := appendCmd(t, strings.Join(bad, ""), "--batch-records", "10", dir)
	if code != exitProblem {
		t.Fatalf("exit %d, want %d: %s", code, exitProblem, errs)
	}
	if want := "{\"firstOffset\":0,\"lastOffset\":9}\n{\"firstOffset\":10,\"lastOffset\":19}\n"; out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	for _, want := range []string{
		"line 23: not a JSON object",
		"line 41: the key \"value\" appears twice",
		"20 records in 2 batches (offsets 0-19, input lines before 21) were appended before the first bad line, and are durable; nothing from line 21 on was written",
		"tail -n +21",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "nothing was written") {
		t.Errorf("stderr says nothing was written:\n%s", errs)
	}
	// Resume from line 21 with the corrected input.
	code, out2, errs := appendCmd(t, strings.Join(lines[20:], ""), "--batch-records", "10", dir)
	if code != exitOK {
		t.Fatalf("resuming: exit %d: %s", code, errs)
	}
	cleanDir := filepath.Join(t.TempDir(), "logs", "fixture-0")
	code, clean, errs := appendCmd(t, strings.Join(lines, ""), "--batch-records", "10", cleanDir)
	if code != exitOK {
		t.Fatalf("clean run: exit %d: %s", code, errs)
	}
	if out+out2 != clean {
		t.Errorf("batches of the interrupted and resumed runs:\n%s%s\nof a clean run:\n%s", out, out2, clean)
	}
	if code, vout, _ := runSegviz("verify", "--now", fmt.Sprint(now().UnixMilli()), dir); code != exitOK || !strings.Contains(vout, "45 records") {
		t.Errorf("verify: exit %d\n%s", code, vout)
	}
}

func TestAppendCommandSyncBytesUsage(t *testing.T) {
	for _, v := range []string{"0", "-1", "x"} {
		if code, _, errs := appendCmd(t, "", "--sync-bytes", v, filepath.Join(t.TempDir(), "a-0")); code != exitUsage {
			t.Errorf("--sync-bytes %s: exit %d: %s", v, code, errs)
		}
	}
}
