package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/record"
)

// TestDumpFlags: Kafka's flag names and segviz's aliases give the same
// dump, files may come from --files (comma-separated) and as arguments,
// between flags, and a file of an unknown kind is ignored as Kafka's tool
// does, on stderr.
func TestDumpFlags(t *testing.T) {
	dir := t.TempDir()
	var w record.Builder
	spec := record.NewBatchSpec(0, compress.None)
	log, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: 5, Key: []byte("k"), Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "00000000000000000000.log"), filepath.Join(dir, "partition.metadata")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, log, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, kafka, errs := runSegviz("dump", "--print-data-log", "--files", a+","+b)
	if code != exitUsage || errs != "Ignoring unknown file "+b+"\n" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if !strings.Contains(kafka, "| offset: 0 CreateTime: 5 keySize: 1 valueSize: 1 sequence: -1 headerKeys: [] key: k payload: v\n") ||
		!strings.HasSuffix(kafka, "Dumping "+b+"\n") {
		t.Fatalf("dump:\n%s", kafka)
	}
	for _, args := range [][]string{
		{"dump", a, "--print-data", b},
		{"dump", "--deep", "--print-data-log", "--files", a, b},
	} {
		if code, out, _ := runSegviz(args...); code != exitUsage || out != kafka {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
	code, out, _ := runSegviz("dump", "--skip-record-metadata", "--print-data-log", a)
	if code != exitOK || !strings.HasSuffix(out, "\n| key: k payload: v\n") {
		t.Errorf("--skip-record-metadata: exit %d\n%s", code, out)
	}
	if code, _, _ := runSegviz("dump", "--max-bytes", "x", a); code != exitUsage {
		t.Errorf("a bad --max-bytes: exit %d", code)
	}
}

// TestDumpLeftoverFiles: a leftover of a deletion or compaction (.deleted,
// .cleaned, .swap) is ignored by the text dump, as Kafka's tool ignores it,
// and dumped by --json, for tools that inspect leftovers.
func TestDumpLeftoverFiles(t *testing.T) {
	dir := t.TempDir()
	var w record.Builder
	spec := record.NewBatchSpec(0, compress.None)
	log, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: 5, Key: []byte("k"), Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{".deleted", ".cleaned", ".swap"} {
		p := filepath.Join(dir, "00000000000000000000.log"+suffix)
		if err := os.WriteFile(p, log, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runSegviz("dump", p)
		if code != exitUsage || out != "Dumping "+p+"\n" || errs != "Ignoring unknown file "+p+"\n" {
			t.Errorf("%s: text dump: exit %d, stdout %q, stderr %q", suffix, code, out, errs)
		}
		code, out, _ = runSegviz("dump", "--json", p)
		if code != exitOK || !strings.Contains(out, `"type":"batch"`) {
			t.Errorf("%s: --json: exit %d\n%s", suffix, code, out)
		}
	}
}

// TestDumpDecoderFlagsRefused: Kafka's decoder flags (for internal topics'
// keys and values) are not implemented; they are refused as a bad command
// line rather than ignored.
func TestDumpDecoderFlagsRefused(t *testing.T) {
	for _, flag := range []string{"--offsets-decoder", "--transaction-log-decoder", "--cluster-metadata-decoder"} {
		if code, _, errs := runSegviz("dump", flag, "x.log"); code != exitUsage || errs == "" {
			t.Errorf("%s: exit %d, stderr %q", flag, code, errs)
		}
	}
}
