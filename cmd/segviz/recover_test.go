package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/internal/realdata"
)

// TestRecoverCommandCopy recovers a copy of a corrupted real partition:
// the segment is cut at the bad batch, the report says where and why and
// how many valid batches the cut dropped, and DIR is untouched.
func TestRecoverCommandCopy(t *testing.T) {
	dir, at := corruptedRealCopy(t)
	before := snapshot(t, dir)
	out := filepath.Join(t.TempDir(), "recovered", "test-0")
	code, stdout, errs := runSegviz("recover", "--out", out, dir)
	if code != exitProblem {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, errs)
	}
	for _, want := range []string{
		fmt.Sprintf("231498 -> %d bytes: %d bytes cut at position %d, keeping 50 batches", at, 231498-at, at),
		"checksum mismatch",
		"the cut bytes held 58 valid batches past the damage (58 records, offsets 51-108)",
		"log end offset: 109 before (counting batches past damage), 50 after",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(errs, "recovering the copy") {
		t.Errorf("stderr: %s", errs)
	}
	if after := snapshot(t, dir); after != before {
		t.Fatalf("recover --out wrote to DIR")
	}
	// The recovered copy verifies clean.
	if code, out, _ := runSegviz("verify", out); code != exitOK {
		t.Errorf("verify of the recovered copy: exit %d\n%s", code, out)
	}
	// Recovering it again changes nothing.
	code, stdout, _ = runSegviz("recover", "--json", "--out", filepath.Join(t.TempDir(), "again", "test-0"), out)
	var rep struct {
		Changed      bool  `json:"changed"`
		LogEndBefore int64 `json:"logEndBefore"`
		LogEndAfter  int64 `json:"logEndAfter"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitOK || rep.Changed || rep.LogEndAfter != 50 {
		t.Errorf("second recovery: exit %d %v %+v", code, err, rep)
	}
}

func TestRecoverCommandInPlace(t *testing.T) {
	dir, at := corruptedRealCopy(t)
	code, stdout, errs := runSegviz("recover", "--in-place", dir)
	if code != exitProblem || !strings.Contains(errs, "in place") || !strings.Contains(stdout, fmt.Sprintf("cut at position %d", at)) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
	}
	st, err := os.Stat(filepath.Join(dir, "00000000000000000000.log"))
	if err != nil || st.Size() != at {
		t.Fatalf("segment size %v, %v; want %d", st, err, at)
	}
	if code, out, _ := runSegviz("verify", dir); code != exitOK {
		t.Errorf("verify after recovery: exit %d\n%s", code, out)
	}
}

func TestRecoverCommandCleanReal(t *testing.T) {
	src := filepath.Join(realdata.Dir(t), realTestPartition)
	code, out, errs := runSegviz("recover", "--out", filepath.Join(t.TempDir(), "test-0"), src)
	if code != exitOK || !strings.Contains(out, "result: the log was clean") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
}

func TestRecoverCommandUsage(t *testing.T) {
	src := filepath.Join(realdata.Dir(t), realTestPartition)
	nonEmpty := t.TempDir()
	if err := os.WriteFile(filepath.Join(nonEmpty, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"recover", src},
		{"recover", "--in-place", "--out", "x", src},
		{"recover", "--out", src, src},
		{"recover", "--out", nonEmpty, src},
		{"recover", "--out", "x"},
	} {
		if code, out, errs := runSegviz(args...); code != exitUsage {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	code, out, _ := runSegviz("recover", "--help")
	if code != exitOK || !strings.Contains(out, "Examples:") || !strings.Contains(out, "--in-place") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}
