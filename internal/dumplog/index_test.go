package dumplog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/dumplog"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/verify"
	"github.com/segkit/segkit/vfs"
)

// segmentFS builds a partition directory p/ holding segment 100 (five
// ~2 KiB batches, then an ABORT marker of producer 9) with its rebuilt
// .index and .timeindex and a .txnindex, and an empty later segment 106.
func segmentFS(t *testing.T) (vfs.FS, *verify.LogSummary) {
	t.Helper()
	var log []byte
	var w record.Builder
	for i := range 5 {
		spec := record.NewBatchSpec(int64(100+i), compress.None)
		var err error
		log, err = w.AppendBatch(log, &spec, []record.Record{{Timestamp: 1_700_000_000_000 + int64(i), Value: make([]byte, 2000)}})
		if err != nil {
			t.Fatal(err)
		}
	}
	spec := record.NewBatchSpec(105, compress.None)
	spec.ProducerID, spec.ProducerEpoch = 9, 0
	log, err := w.AppendEndTxnMarker(log, &spec, record.EndTxnMarker{Type: record.ControlAbort}, 1_700_000_000_010)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := verify.SummarizeLog(bytes.NewReader(log), int64(len(log)), "p/00000000000000000100.log")
	if err != nil || sum.Err != nil {
		t.Fatal(err, sum.Err)
	}
	idx, err := verify.RebuildOffsetIndex(nil, 100, sum.Entries, segment.DefaultIndexIntervalBytes)
	if err != nil {
		t.Fatal(err)
	}
	tix, err := verify.RebuildTimeIndex(nil, 100, sum.Entries, segment.DefaultIndexIntervalBytes, verify.ShallowOffsets)
	if err != nil {
		t.Fatal(err)
	}
	txn := index.AppendAbortedTxn(nil, index.AbortedTxn{ProducerID: 9, FirstOffset: 101, LastOffset: 105, LastStableOffset: 101})
	fsys := vfs.NewMem()
	if err := fsys.MkdirAll("p", 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"00000000000000000100.log": log, "00000000000000000100.index": idx,
		"00000000000000000100.timeindex": tix, "00000000000000000100.txnindex": txn,
		"00000000000000000106.log": nil,
	} {
		if err := vfs.WriteFile(fsys, "p/"+name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return fsys, sum
}

func dump(t *testing.T, fsys vfs.FS, path string, opt dumplog.IndexOptions) (string, dumplog.IndexResult) {
	t.Helper()
	var out bytes.Buffer
	res, err := dumplog.Index(&out, fsys, path, opt)
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), res
}

func TestIndexDumpText(t *testing.T) {
	fsys, sum := segmentFS(t)
	p := sum.Entries // ~2070-byte batches: indexed at batches 2 and 4
	got, res := dump(t, fsys, "p/00000000000000000100.index", dumplog.IndexOptions{Verify: true})
	want := "Dumping p/00000000000000000100.index\n" +
		"offset: 102 position: " + strconv.FormatInt(p[2].Position, 10) + "\n" +
		"offset: 104 position: " + strconv.FormatInt(p[4].Position, 10) + "\n" +
		"Verified 2 entries against p/00000000000000000100.log (6 batches): 0 errors, 0 warnings, 0 notes\n"
	if got != want || res.Entries != 2 || res.Errors+res.Warnings+res.Infos != 0 || len(res.Mismatches) != 0 {
		t.Fatalf("got\n%s\nwant\n%s\n%+v", got, want, res)
	}
	got, _ = dump(t, fsys, "p/00000000000000000100.timeindex", dumplog.IndexOptions{})
	want = "Dumping p/00000000000000000100.timeindex\n" +
		"timestamp: 1700000000002 offset: 102\n" +
		"timestamp: 1700000000004 offset: 104\n" +
		"timestamp: 1700000000010 offset: 105\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	got, res = dump(t, fsys, "p/00000000000000000100.timeindex", dumplog.IndexOptions{VerifyOnly: true})
	if got != "Dumping p/00000000000000000100.timeindex\n" || len(res.TimestampMismatches)+len(res.OutOfOrder)+len(res.NotFound) != 0 {
		t.Fatalf("verify-only:\n%s\n%+v", got, res)
	}
	got, res = dump(t, fsys, "p/00000000000000000100.txnindex", dumplog.IndexOptions{Verify: true})
	if !strings.Contains(got, "version: 0 producerId: 9 firstOffset: 101 lastOffset: 105 lastStableOffset: 101\n") || res.Errors != 0 {
		t.Fatalf("txnindex dump:\n%s", got)
	}
	got, res = dump(t, fsys, "p/00000000000000000100.index", dumplog.IndexOptions{SanityOnly: true})
	if got != "Dumping p/00000000000000000100.index\np/00000000000000000100.index passed sanity check.\n" || res.Errors != 0 {
		t.Fatalf("sanity:\n%s", got)
	}
}

// TestIndexDumpProblems damages the index and checks the problems, their
// levels and the result counts; --verify-index-only prints no entries,
// and Kafka's check stops at the entry that points at no batch.
func TestIndexDumpProblems(t *testing.T) {
	fsys, sum := segmentFS(t)
	p := sum.Entries
	var bad []byte
	for _, e := range []index.Entry{
		{Offset: 102, Position: int32(p[2].Position)},     // exact
		{Offset: 103, Position: int32(p[3].Position) + 1}, // not a batch start
		{Offset: 105, Position: int32(p[4].Position)},     // multi-batch: the marker is the next batch
	} {
		bad, _ = index.AppendEntry(bad, 100, e)
	}
	if err := vfs.WriteFile(fsys, "p/00000000000000000100.index", bad, 0o644); err != nil {
		t.Fatal(err)
	}
	var kafkaErrs bytes.Buffer
	got, res := dump(t, fsys, "p/00000000000000000100.index", dumplog.IndexOptions{VerifyOnly: true, Verify: true, Errors: &kafkaErrs})
	if res.Errors != 2 || res.Infos != 1 || res.Warnings != 0 {
		t.Fatalf("result %+v\n%s", res, got)
	}
	if !strings.HasPrefix(kafkaErrs.String(), "Error: p/00000000000000000100.index: entry 1 (offset 103 position ") {
		t.Fatalf("Kafka's check: %q", kafkaErrs.String())
	}
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "Error: p/00000000000000000100.index: position 8: index-not-batch-boundary: ") ||
		!strings.HasPrefix(lines[2], "Info: p/00000000000000000100.index: position 16: index-multi-batch-append: ") {
		t.Fatalf("output:\n%s", got)
	}
	// JSON: every line parses; entries and problems have their fields.
	js, _ := dump(t, fsys, "p/00000000000000000100.index", dumplog.IndexOptions{JSON: true, Verify: true})
	var types []string
	for _, l := range strings.Split(strings.TrimSpace(js), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		types = append(types, m["type"].(string))
		switch m["type"] {
		case "index":
			for _, k := range []string{"file", "position", "offset", "logPosition"} {
				if _, ok := m[k]; !ok {
					t.Fatalf("index line without %s: %s", k, l)
				}
			}
		case "problem":
			for _, k := range []string{"file", "position", "kind", "level", "detail"} {
				if _, ok := m[k]; !ok {
					t.Fatalf("problem line without %s: %s", k, l)
				}
			}
		}
	}
	if strings.Join(types, ",") != "index,index,index,problem,problem" {
		t.Fatalf("JSON line types %v", types)
	}
	// Without the damaged entry, Kafka's check reports the multi-batch
	// entry as a mismatch: entry offset 105, batch's last offset 104.
	bad = append(bad[:8:8], bad[16:]...)
	vfs.WriteFile(fsys, "p/00000000000000000100.index", bad, 0o644)
	got, res = dump(t, fsys, "p/00000000000000000100.index", dumplog.IndexOptions{VerifyOnly: true})
	if got != "Dumping p/00000000000000000100.index\n" || len(res.Mismatches) != 1 || res.Mismatches[0] != (dumplog.OffsetPair{First: 105, Second: 104}) {
		t.Fatalf("mismatches %+v\n%s", res, got)
	}
}

// TestIndexDumpPadding: an untrimmed index is a warning, worded for the
// active segment or not, and never an error.
func TestIndexDumpPadding(t *testing.T) {
	fsys, _ := segmentFS(t)
	idx, _ := vfs.ReadFile(fsys, "p/00000000000000000100.index")
	padded := append(bytes.Clone(idx), make([]byte, 4096)...)
	for _, tt := range []struct {
		name, dir string
		active    bool
	}{{"rolled", "p", false}, {"active", "q", true}} {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.dir + "/00000000000000000100.index"
			if tt.dir == "q" {
				fsys.MkdirAll("q", 0o755)
				log, _ := vfs.ReadFile(fsys, "p/00000000000000000100.log")
				vfs.WriteFile(fsys, "q/00000000000000000100.log", log, 0o644)
			}
			vfs.WriteFile(fsys, path, padded, 0o644)
			got, res := dump(t, fsys, path, dumplog.IndexOptions{Verify: true})
			if res.Errors != 0 || res.Warnings != 1 || res.Entries != 2 {
				t.Fatalf("result %+v\n%s", res, got)
			}
			if !strings.Contains(got, "Warning: "+path+": position 16: zero-padding: 4096 zero bytes (512 zero entries after 2 valid ones)") {
				t.Fatalf("output:\n%s", got)
			}
			if strings.Contains(got, "active segment") != tt.active {
				t.Fatalf("active %v:\n%s", tt.active, got)
			}
		})
	}
}

func TestIndexDumpErrors(t *testing.T) {
	fsys, _ := segmentFS(t)
	if _, err := dumplog.Index(&bytes.Buffer{}, fsys, "p/missing.index", dumplog.IndexOptions{}); err == nil {
		t.Fatal("a file name without a base offset was accepted")
	}
	if _, err := dumplog.Index(&bytes.Buffer{}, fsys, "p/00000000000000000999.index", dumplog.IndexOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing index: %v", err)
	}
	vfs.WriteFile(fsys, "p/00000000000000000200.index", nil, 0o644)
	if _, err := dumplog.Index(&bytes.Buffer{}, fsys, "p/00000000000000000200.index", dumplog.IndexOptions{Verify: true}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("verify without a log: %v", err)
	}
	// A failed sanity check is an error of the file, not of the dump.
	// (One entry and three bytes: an index Kafka checks, its length not a
	// multiple of 8.)
	vfs.WriteFile(fsys, "p/00000000000000000300.log", nil, 0o644)
	vfs.WriteFile(fsys, "p/00000000000000000300.index", []byte{0, 0, 0, 5, 0, 0, 0, 0, 1, 2, 3}, 0o644)
	got, res := dump(t, fsys, "p/00000000000000000300.index", dumplog.IndexOptions{SanityOnly: true})
	if res.Errors != 1 || !strings.Contains(got, "failed sanity check") {
		t.Fatalf("%+v\n%s", res, got)
	}
	if !dumplog.IsIndexFile("a/b.TIMEINDEX") || dumplog.IsIndexFile("x.log") || dumplog.IsIndexFile("x.snapshot") {
		t.Fatal("IsIndexFile")
	}
}

// TestRealIndexDumps dumps every real index with --verify-index: no
// errors, no warnings; the only notes are invoice-0's 13 multi-batch
// appends.
func TestRealIndexDumps(t *testing.T) {
	root := realdata.Dir(t)
	infos := 0
	for _, pattern := range []string{"*.index", "*.timeindex"} {
		for _, p := range realdata.Glob(t, pattern) {
			var out bytes.Buffer
			res, err := dumplog.Index(&out, vfs.OS(), p, dumplog.IndexOptions{Verify: true, JSON: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Errors != 0 || res.Warnings != 0 {
				t.Errorf("%s: %+v\n%s", realdata.Rel(t, p), res, out.String())
			}
			infos += res.Infos
		}
	}
	if infos != 13 {
		t.Errorf("%d notes, want invoice-0's 13 multi-batch append entries", infos)
	}
	t.Logf("real indexes under %s: %d notes", root, infos)
}
