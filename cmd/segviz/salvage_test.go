package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/record"
)

// TestSalvageCommand salvages a corrupted copy of a real partition: every
// batch but the damaged one is kept, unchanged, and the lost range is
// reported; recover, on the same input, keeps only the 50 batches before
// it.
func TestSalvageCommand(t *testing.T) {
	dir, at := corruptedRealCopy(t)
	before := snapshot(t, dir)
	out := filepath.Join(t.TempDir(), "salvaged", "test-0")
	code, stdout, errs := runSegviz("salvage", "--out", out, dir)
	if code != exitProblem {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, errs)
	}
	orig, err := os.ReadFile(filepath.Join(dir, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	_, size := entryAt(t, orig, at)
	for _, want := range []string{
		fmt.Sprintf("kept 108 batches (108 records, %d bytes); lost %d bytes in 1 range:", 231498-size, size),
		fmt.Sprintf("bytes %d..%d (%d bytes): byte %d: format: checksum mismatch", at, at+size, size, at+record.CRCOffset),
		"offsets lost with the damaged bytes: 50",
		"output: offsets 0..108",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	// The output holds the other batches byte for byte.
	got, err := os.ReadFile(filepath.Join(out, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte(nil), orig[:at]...), orig[at+size:]...)
	if string(got) != string(want) {
		t.Errorf("the salvaged segment differs from the original without the damaged batch (%d bytes, want %d)", len(got), len(want))
	}
	if code, out, _ := runSegviz("verify", out); code != exitOK {
		t.Errorf("verify of the salvaged partition: exit %d\n%s", code, out)
	}
	if after := snapshot(t, dir); after != before {
		t.Fatalf("salvage wrote to DIR")
	}
	// Into the same output again: refused.
	if code, _, errs := runSegviz("salvage", "--out", out, dir); code != exitUsage {
		t.Errorf("second salvage: exit %d: %s", code, errs)
	}
}

// entryAt returns the bytes and size of the entry at pos, whose checksum
// may fail.
func entryAt(t *testing.T, b []byte, pos int64) ([]byte, int64) {
	t.Helper()
	h, ok := record.PeekBatchHeader(b[pos:])
	if !ok {
		t.Fatalf("no header at %d", pos)
	}
	return b[pos : pos+int64(h.Size())], int64(h.Size())
}

func TestSalvageCommandCleanJSON(t *testing.T) {
	src := filepath.Join(realdata.Dir(t), realTestPartition)
	code, out, errs := runSegviz("salvage", "--json", "--out", filepath.Join(t.TempDir(), "test-0"), src)
	var rep struct {
		Batches   int64 `json:"batches"`
		BytesLost int64 `json:"bytesLost"`
		Files     []struct {
			Lost []any `json:"lost"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitOK || rep.Batches != 109 || rep.BytesLost != 0 || len(rep.Files) != 1 {
		t.Fatalf("exit %d, %v: %s %s", code, err, out, errs)
	}
}

func TestSalvageCommandUsage(t *testing.T) {
	src := filepath.Join(realdata.Dir(t), realTestPartition)
	for _, args := range [][]string{
		{"salvage", src},
		{"salvage", "--out", filepath.Join(src, "x"), src},
		{"salvage", "--out", "x"},
	} {
		if code, out, errs := runSegviz(args...); code != exitUsage {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	code, out, _ := runSegviz("salvage", "--help")
	if code != exitOK || !strings.Contains(out, "Examples:") || !strings.Contains(out, "beyond Kafka") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}
