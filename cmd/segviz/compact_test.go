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

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/compactjson"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

var (
	usersT0  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	usersNow = usersT0 + 3600_000 // the clean's --now: an hour later
	nowArg   = fmt.Sprint(usersNow)
	dayMs    = int64(86_400_000)
)

// buildUsers writes a compacted partition, kafka-logs/users-0, of three
// segments:
//
//	0: 0 a=1, 1 b=1 | 2 a=2 | 3 (no key)
//	4: 4 c=1, 5 b tombstone | 6 k=aborted (producer 5, transactional) | 7 ABORT marker
//	8 (active): 8 a=3
//
// A clean at usersNow maps [0, 8): it removes 0 and 1 (superseded), 3
// (unkeyed) and 6 (aborted), and keeps the tombstone 5, stamping its
// batch's delete horizon.
func buildUsers(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kafka-logs", "users-0")
	cfg, err := kafkalog.ParseConfig(map[string]string{"cleanup.policy": "compact"})
	if err != nil {
		t.Fatal(err)
	}
	clk := &testClock{ms: usersT0}
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	ts := usersT0
	appendBatch := func(spec record.BatchSpec, kvs ...string) {
		t.Helper()
		var recs []record.Record
		for i := 0; i < len(kvs); i += 2 {
			r := record.Record{Timestamp: ts}
			if kvs[i] != "" {
				r.Key = []byte(kvs[i])
			}
			if kvs[i+1] != "-" {
				r.Value = []byte(kvs[i+1])
			}
			recs = append(recs, r)
		}
		b, err := w.AppendBatch(nil, &spec, recs)
		if err != nil {
			t.Fatal(err)
		}
		clk.ms = ts
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
		ts += 1000
	}
	plain := record.NewBatchSpec(0, compress.None)
	appendBatch(plain, "a", "1", "b", "1")
	appendBatch(plain, "a", "2")
	appendBatch(plain, "", "unkeyed")
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendBatch(plain, "c", "1", "b", "-")
	txn := record.NewBatchSpec(0, compress.None)
	txn.ProducerID, txn.ProducerEpoch, txn.BaseSequence, txn.Transactional = 5, 0, 0, true
	appendBatch(txn, "k", "aborted")
	marker := record.NewBatchSpec(0, compress.None)
	marker.ProducerID, marker.ProducerEpoch = 5, 0
	b, err := w.AppendEndTxnMarker(nil, &marker, record.EndTxnMarker{Type: record.ControlAbort}, ts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(b, 0); err != nil {
		t.Fatal(err)
	}
	ts += 1000
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendBatch(plain, "a", "3")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// compactJSONOf runs segviz compact with --json and decodes its object,
// refusing unknown fields.
func compactJSONOf(t *testing.T, args ...string) compactJSON {
	t.Helper()
	code, out, errs := runSegviz(append([]string{"compact", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("compact %q: exit %d: %s", args, code, errs)
	}
	if errs != "" {
		t.Errorf("compact %q: stderr when not a terminal: %q", args, errs)
	}
	var j compactJSON
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return j
}

// offsetsIn returns the offsets of the records of the partition.
func offsetsIn(t *testing.T, dir string) []int64 {
	t.Helper()
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out []int64
	for r, err := range l.Records(l.LogStartOffset()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.Offset)
	}
	return out
}

// sameClean compares two reports but for the fields that name the run.
func sameClean(t *testing.T, what string, a, b compactJSON) {
	t.Helper()
	b.Dir, b.Source, b.DryRun, b.Cleaned, b.Instant = a.Dir, a.Source, a.DryRun, a.Cleaned, a.Instant
	if d := cmp.Diff(a, b); d != "" {
		t.Fatalf("%s differs (-dry run +clean):\n%s", what, d)
	}
}

// The dry run says what the clean then does, number for number, and
// writes nothing; the clean in place does it.
func TestCompactDryRunThenClean(t *testing.T) {
	dir := buildUsers(t)
	logDir := filepath.Dir(dir)
	before := snapshot(t, logDir)
	dry := compactJSONOf(t, "--dry-run", "--now", nowArg, dir)
	if after := snapshot(t, logDir); after != before {
		t.Fatalf("the dry run wrote:\nbefore\n%s\nafter\n%s", before, after)
	}
	if !dry.DryRun || dry.Cleaned || !dry.Cleanable || dry.FirstDirtyOffset != 0 || dry.FirstUncleanableOffset != 8 ||
		dry.UncleanableBy != "the active segment" || dry.EndOffset == nil || *dry.EndOffset != 8 || dry.Checkpoint != nil {
		t.Fatalf("range: %+v", dry)
	}
	wantRemoved := compactjson.Removal{Records: 4, Superseded: 2, Unkeyed: 1, Aborted: 1}
	got := dry.Removed
	got.Bytes, got.Batches, got.BatchesEmptied, got.BatchesRewritten, got.BatchesCopied = 0, 0, 0, 0, 0
	if got != wantRemoved || dry.Removed.Bytes <= 0 {
		t.Fatalf("removed %+v, want %+v", dry.Removed, wantRemoved)
	}
	if len(dry.Kept) != 1 || dry.Kept[0].Tombstones != 1 || !dry.Kept[0].New || dry.Kept[0].DeleteHorizonMs != usersNow+dayMs || dry.DeleteHorizonMs != usersNow+dayMs {
		t.Fatalf("kept %+v", dry.Kept)
	}
	// Per segment: the sources of the one group, with what went from
	// each; their sizes add up to the group's.
	if len(dry.Groups) != 1 || !slices.Equal(dry.Groups[0].Sources, []int64{0, 4}) || len(dry.Segments) != 2 {
		t.Fatalf("groups %+v segments %+v", dry.Groups, dry.Segments)
	}
	s0, s4 := dry.Segments[0], dry.Segments[1]
	if s0.Removed.Superseded != 2 || s0.Removed.Unkeyed != 1 || s4.Removed.Aborted != 1 || s4.Removed.Records != 1 ||
		s0.SizeBefore+s4.SizeBefore != dry.Groups[0].SizeBefore || s0.SizeAfter+s4.SizeAfter != dry.Groups[0].SizeAfter ||
		s0.Removed.Bytes+s4.Removed.Bytes != dry.Removed.Bytes {
		t.Fatalf("segments %+v, group %+v, removed %+v", dry.Segments, dry.Groups[0], dry.Removed)
	}

	done := compactJSONOf(t, "--now", nowArg, dir)
	if done.DryRun || !done.Cleaned || done.Dir != dry.Dir {
		t.Fatalf("clean: %+v", done)
	}
	sameClean(t, "the clean in place", dry, done)
	// Offset 3 (unkeyed) and the round's last batch remain as empty
	// batches; 6's record went, its batch kept empty for producer 5.
	if got, want := offsetsIn(t, dir), []int64{2, 4, 5, 7, 8}; !slices.Equal(got, want) {
		t.Fatalf("records after the clean: %v, want %v", got, want)
	}
	cp, err := os.ReadFile(filepath.Join(logDir, "cleaner-offset-checkpoint"))
	if err != nil || !strings.Contains(string(cp), "users 0 8\n") {
		t.Fatalf("cleaner-offset-checkpoint %q, %v", cp, err)
	}
	// Nothing is dirty now: the next dry run says so.
	again := compactJSONOf(t, "--dry-run", "--now", nowArg, dir)
	if again.Cleanable || !strings.Contains(again.Why, "nothing is dirty") || again.Checkpoint == nil || *again.Checkpoint != 8 || again.EndOffset != nil {
		t.Fatalf("after the clean: %+v", again)
	}
}

// --out cleans a copy: the source's tree is untouched (byte for byte,
// mtimes included), and the copy is cleaned from the source's cleaner
// position.
func TestCompactOutLeavesSourceUntouched(t *testing.T) {
	dir := buildUsers(t)
	logDir := filepath.Dir(dir)
	// The source was cleaned up to 4 before: its next clean starts there.
	if err := os.WriteFile(filepath.Join(logDir, "cleaner-offset-checkpoint"), []byte("0\n1\nusers 0 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, logDir)
	dry := compactJSONOf(t, "--dry-run", "--now", nowArg, dir)
	out := filepath.Join(t.TempDir(), "copy", "users-0")
	done := compactJSONOf(t, "--now", nowArg, "--out", out, dir)
	if after := snapshot(t, logDir); after != before {
		t.Fatalf("--out changed the source:\nbefore\n%s\nafter\n%s", before, after)
	}
	if dry.FirstDirtyOffset != 4 || dry.Checkpoint == nil || *dry.Checkpoint != 4 {
		t.Fatalf("dry run range: %+v", dry)
	}
	if done.Dir != filepath.ToSlash(out) || done.Source != filepath.ToSlash(dir) || !done.Cleaned {
		t.Fatalf("copy: %+v", done)
	}
	sameClean(t, "the clean of the copy", dry, done)
	// From 4 on, the map holds b→5 (a is not in the dirty range): only 1
	// goes among the clean section's keyed records, with 3 and 6.
	if done.Removed.Superseded != 1 || done.Removed.Unkeyed != 1 || done.Removed.Aborted != 1 {
		t.Fatalf("removed %+v", done.Removed)
	}
	if got, want := offsetsIn(t, out), []int64{0, 2, 4, 5, 7, 8}; !slices.Equal(got, want) {
		t.Fatalf("the copy after the clean: %v, want %v", got, want)
	}
	if got := offsetsIn(t, dir); len(got) != 9 {
		t.Fatalf("the source: %v", got)
	}
	cp, err := os.ReadFile(filepath.Join(filepath.Dir(out), "cleaner-offset-checkpoint"))
	if err != nil || !strings.Contains(string(cp), "users 0 8\n") {
		t.Fatalf("the copy's cleaner-offset-checkpoint %q, %v", cp, err)
	}
	// A second --out to the same place is refused: it is not empty.
	code, _, errs := runSegviz("compact", "--now", nowArg, "--out", out, dir)
	if code != exitUsage || !strings.Contains(errs, "not empty") {
		t.Fatalf("second --out: exit %d: %s", code, errs)
	}
}

// A clean in place while a broker (or another segviz) holds the log
// directory's lock is refused with exit 3, and writes nothing; the dry
// run takes no lock.
func TestCompactLocked(t *testing.T) {
	dir := buildUsers(t)
	logDir := filepath.Dir(dir)
	holdLock(t, filepath.Join(logDir, ".lock"), "vfs")
	before := snapshot(t, logDir)
	code, out, errs := runSegviz("compact", "--now", nowArg, dir)
	wantLocked(t, "compact", code, errs, logDir)
	if out != "" {
		t.Errorf("output of a refused clean: %q", out)
	}
	if !strings.Contains(errs, "nothing was written") {
		t.Errorf("stderr does not say nothing was written: %s", errs)
	}
	if after := snapshot(t, logDir); after != before {
		t.Fatalf("a refused clean changed the log directory:\nbefore\n%s\nafter\n%s", before, after)
	}
	if j := compactJSONOf(t, "--dry-run", "--now", nowArg, dir); !j.Cleanable || j.Removed.Records != 4 {
		t.Fatalf("dry run under the lock: %+v", j)
	}
}

func TestCompactUsage(t *testing.T) {
	dir := buildUsers(t)
	notPartition := t.TempDir()
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compact", "--help"}, exitOK, "Examples:"},
		{[]string{"help", "compact"}, exitOK, "--dry-run writes nothing"},
		{[]string{"compact"}, exitUsage, "want one partition directory"},
		{[]string{"compact", dir, dir}, exitUsage, "want one partition directory"},
		{[]string{"compact", "--bogus", dir}, exitUsage, "flag provided but not defined"},
		{[]string{"compact", "--dry-run", "--out", filepath.Join(t.TempDir(), "users-0"), dir}, exitUsage, "takes no --out"},
		{[]string{"compact", "--now", "yesterday", dir}, exitUsage, "neither epoch milliseconds nor an RFC 3339 time"},
		{[]string{"compact", "--offset", "x", dir}, exitUsage, `--offset "x"`},
		{[]string{"compact", "--offset", "-1", dir}, exitUsage, "want an offset"},
		{[]string{"compact", "--config", "nonsense", dir}, exitUsage, "want key=value"},
		{[]string{"compact", "--config", "colour=blue", dir}, exitUsage, "Unknown topic config name: colour"},
		{[]string{"compact", "--config", "min.cleanable.dirty.ratio=2", dir}, exitUsage, "min.cleanable.dirty.ratio"},
		{[]string{"compact", "--config", "log.cleaner.threads=0", dir}, exitUsage, "log.cleaner.threads"},
		{[]string{"compact", "--config", "log.cleaner.io.buffer.load.factor=1.5", dir}, exitUsage, "load.factor"},
		{[]string{"compact", "--dry-run", "--config", "log.cleaner.dedupe.buffer.size=10", dir}, exitUsage, "offset map too small"},
		{[]string{"compact", "--config-file", filepath.Join(dir, "missing.properties"), dir}, exitFailure, "no such file"},
		{[]string{"compact", "--out", dir, dir}, exitUsage, "--out must differ from DIR"},
		{[]string{"compact", "--out", filepath.Join(dir, "inner-0"), dir}, exitUsage, "--out must be outside DIR"},
		{[]string{"compact", "--dry-run", notPartition}, exitUsage, "give a partition directory"},
		{[]string{"compact", "--dry-run", filepath.Join(dir, "missing")}, exitFailure, "no such file"},
	} {
		code, out, errs := runSegviz(tt.args...)
		if code != tt.code || !strings.Contains(out+errs, tt.want) {
			t.Errorf("%q: exit %d, want %d with %q\nstdout: %s\nstderr: %s", tt.args, code, tt.code, tt.want, out, errs)
		}
	}
}

// A partition the cleaner would not clean says why, in text and JSON,
// and a real run of it writes nothing.
func TestCompactNotCleanable(t *testing.T) {
	for _, tt := range []struct {
		name   string
		config []string
		why    string // in the report's why
		by     string // in uncleanableBy, when set
	}{
		{"not_compacted", []string{"cleanup.policy=delete"}, "cleanup.policy is [delete], without compact", ""},
		{"dirty_ratio", []string{"min.cleanable.dirty.ratio=1"}, "is not above min.cleanable.dirty.ratio 1", ""},
		{"min_lag", []string{"min.compaction.lag.ms=86400000"}, "no bytes below the first uncleanable offset 0", "min.compaction.lag.ms"},
		{"open_transaction", nil, "no bytes below the first uncleanable offset 0", "the last stable offset"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := buildUsers(t)
			if tt.name == "open_transaction" {
				dir = buildOpenTxn(t)
			}
			logDir := filepath.Dir(dir)
			var args []string
			for _, c := range tt.config {
				args = append(args, "--config", c)
			}
			j := compactJSONOf(t, append(append([]string{"--dry-run", "--now", nowArg}, args...), dir)...)
			if j.Cleanable || !strings.Contains(j.Why, tt.why) || !strings.Contains(j.UncleanableBy, tt.by) || j.EndOffset != nil || j.Removed.Records != 0 {
				t.Fatalf("why %q, uncleanable by %q; want %q, %q: %+v", j.Why, j.UncleanableBy, tt.why, tt.by, j)
			}
			code, out, errs := runSegviz(append(append([]string{"compact", "--dry-run", "--now", nowArg}, args...), dir)...)
			if code != exitOK || !strings.Contains(out, "not cleanable: "+j.Why) || !strings.Contains(out, "result: nothing to clean") {
				t.Fatalf("text: exit %d\n%s%s", code, out, errs)
			}
			before := snapshot(t, logDir)
			code, out, errs = runSegviz(append(append([]string{"compact", "--now", nowArg}, args...), dir)...)
			if code != exitOK || !strings.Contains(out, "it is not cleanable") {
				t.Fatalf("real run: exit %d\n%s%s", code, out, errs)
			}
			if tt.name == "not_compacted" {
				if after := snapshot(t, logDir); after != before {
					t.Fatalf("a run on a log that is not compacted wrote:\nbefore\n%s\nafter\n%s", before, after)
				}
			}
			if got := offsetsIn(t, dir); len(got) == 0 || got[0] != 0 {
				t.Fatalf("records after a run that cleans nothing: %v", got)
			}
		})
	}
}

// buildOpenTxn writes kafka-logs/txn-0: an open transaction at offset 0,
// then plain records over two closed segments and an active one: the
// last stable offset, 0, holds back everything.
func buildOpenTxn(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kafka-logs", "txn-0")
	cfg, _ := kafkalog.ParseConfig(map[string]string{"cleanup.policy": "compact"})
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), cfg, kafkalog.Options{Clock: &testClock{ms: usersT0}})
	if err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	add := func(spec record.BatchSpec, key string) {
		b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: usersT0, Key: []byte(key), Value: []byte("v")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	txn := record.NewBatchSpec(0, compress.None)
	txn.ProducerID, txn.ProducerEpoch, txn.BaseSequence, txn.Transactional = 9, 0, 0, true
	add(txn, "t")
	add(record.NewBatchSpec(0, compress.None), "a")
	l.Roll()
	add(record.NewBatchSpec(0, compress.None), "a")
	l.Roll()
	add(record.NewBatchSpec(0, compress.None), "a")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// --offset answers until when one record can be read, as
// compaction.ReadableUntil does, in text and JSON.
func TestCompactOffset(t *testing.T) {
	dir := buildUsers(t)
	for _, tt := range []struct {
		offset            int64
		kind              string
		removed, stamped  bool
		notBefore, until  *int64
		successor         *int64
		textHas           string
		retentionNotNil   bool
		extra             []string
		dependsOnContains string
	}{
		{offset: 0, kind: "superseded", removed: true, notBefore: ptr(usersNow), until: ptr(usersNow + 15_000), successor: ptr(2),
			textHas: "superseded by offset 2", dependsOnContains: "cleaner to pick the log"},
		{offset: 5, kind: "tombstone", stamped: true, notBefore: ptr(usersNow + dayMs), textHas: "readable until: never"},
		{offset: 8, kind: "latest", textHas: "compaction removes it no sooner than: never", dependsOnContains: `a later record of key "a"`},
		{offset: 6, kind: "aborted", removed: true, notBefore: ptr(usersNow), until: ptr(usersNow + 15_000)},
		{offset: 7, kind: "marker", notBefore: ptr(usersNow + dayMs)},
		{offset: 99, kind: "absent", notBefore: ptr(usersNow), until: ptr(usersNow), textHas: "not written yet"},
		// compact,delete: retention (retention.ms 2h, checks every backoff)
		// bounds even the latest value: segment 4's newest record, the
		// marker at t0+5s, makes it go by t0+5s+2h+15s at the latest.
		{offset: 4, kind: "latest", until: ptr(usersT0 + 5000 + 7_200_000 + 15_000), retentionNotNil: true,
			extra: []string{"--config", "cleanup.policy=compact,delete", "--config", "retention.ms=7200000"}, textHas: "retention deletes its segment by: 2026-01-01T02:00:20.000Z"},
	} {
		t.Run(fmt.Sprintf("%d_%s", tt.offset, tt.kind), func(t *testing.T) {
			args := append([]string{"--dry-run", "--now", nowArg, "--offset", fmt.Sprint(tt.offset)}, tt.extra...)
			j := compactJSONOf(t, append(args, dir)...)
			u := j.Until
			if u == nil {
				t.Fatal("no until")
			}
			if u.Offset != tt.offset || u.Kind != tt.kind || u.RemovedByCleanNow != tt.removed || u.StampedByCleanNow != tt.stamped ||
				!cmp.Equal(u.NotBefore, tt.notBefore) || !cmp.Equal(u.ReadableUntil, tt.until) || !cmp.Equal(u.Successor, tt.successor) ||
				(u.RetentionReadableUntil != nil) != tt.retentionNotNil || u.Explanation == "" || u.DependsOn == nil {
				t.Fatalf("until %s", mustJSON(t, u))
			}
			if tt.dependsOnContains != "" && !slices.ContainsFunc(u.DependsOn, func(s string) bool { return strings.Contains(s, tt.dependsOnContains) }) {
				t.Errorf("depends on %q, want %q", u.DependsOn, tt.dependsOnContains)
			}
			code, out, errs := runSegviz(append(append([]string{"compact"}, args...), dir)...)
			if code != exitOK || !strings.Contains(out, fmt.Sprintf("offset %d (%s", tt.offset, tt.kind)) || !strings.Contains(out, tt.textHas) {
				t.Fatalf("text: exit %d, want %q\n%s%s", code, tt.textHas, out, errs)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The JSON object's fields are an interface: exactly these, always
// present (null where documented), as docs/cli.md lists them.
func TestCompactJSONFields(t *testing.T) {
	dir := buildUsers(t)
	code, out, errs := runSegviz("compact", "--json", "--dry-run", "--now", nowArg, "--offset", "0", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	want := []string{"dir", "source", "dryRun", "cleaned", "now", "logStartOffset", "logEndOffset", "highWatermark", "lastStableOffset",
		"checkpoint", "checkpointReset", "firstDirtyOffset", "firstUncleanableDirtyOffset", "firstUncleanableOffset", "uncleanableBy",
		"cleanBytes", "cleanableBytes", "totalBytes", "dirtyRatio", "minCleanableDirtyRatio", "maxCompactionDelayMs", "needCompactionNow",
		"cleanable", "why", "endOffset", "mapFull", "mapEntries", "mapCapacity", "deleteHorizonMs",
		"removed", "stats", "segments", "groups", "kept", "until", "holds", "heldBy", "heldBase", "instant"}
	if got := keys(m); !slices.Equal(got, sorted(want)) {
		t.Fatalf("fields:\n got %v\nwant %v", got, sorted(want))
	}
	sub := map[string][]string{
		"removed": {"records", "bytes", "superseded", "tombstones", "unkeyed", "aborted", "markers", "batches", "batchesEmptied", "batchesRewritten", "batchesCopied"},
		"stats":   {"bytesRead", "messagesRead", "invalidMessagesRead", "bytesWritten", "messagesWritten", "mapBytesRead", "mapMessagesRead", "bufferUtilization"},
		"until": {"offset", "kind", "key", "tombstone", "timestamp", "segmentBase", "activeSegment", "successor", "deleteHorizonMs",
			"removedByCleanNow", "stampedByCleanNow", "notBefore", "readableUntil", "ifAppendsContinue", "retentionReadableUntil", "dependsOn", "explanation", "heldBy"},
	}
	for name, fields := range sub {
		obj, _ := m[name].(map[string]any)
		if got := keys(obj); !slices.Equal(got, sorted(fields)) {
			t.Errorf("%s fields:\n got %v\nwant %v", name, got, sorted(fields))
		}
	}
	item := map[string][]string{
		"segments": {"baseOffset", "into", "sizeBefore", "sizeAfter", "removed"},
		"groups":   {"baseOffset", "sources", "sizeBefore", "sizeAfter"},
		"kept":     {"deleteHorizonMs", "new", "batches", "tombstones", "markers"},
	}
	for name, fields := range item {
		list, _ := m[name].([]any)
		if len(list) == 0 {
			t.Fatalf("%s is empty", name)
		}
		obj, _ := list[0].(map[string]any)
		if got := keys(obj); !slices.Equal(got, sorted(fields)) {
			t.Errorf("%s fields:\n got %v\nwant %v", name, got, sorted(fields))
		}
	}
	// The key is base64, as segviz append takes it.
	if u := m["until"].(map[string]any); u["key"] != "YQ==" {
		t.Errorf("until.key %v", u["key"])
	}
	// Without --offset, "until" is null; lists are [] rather than null.
	code, out, _ = runSegviz("compact", "--json", "--dry-run", "--config", "cleanup.policy=delete", "--now", nowArg, dir)
	m = nil
	if err := json.Unmarshal([]byte(out), &m); err != nil || code != exitOK {
		t.Fatalf("exit %d, %v", code, err)
	}
	if m["until"] != nil || m["endOffset"] != nil || m["segments"] == nil || m["groups"] == nil || m["kept"] == nil {
		t.Fatalf("not cleanable, no --offset: %s", out)
	}
}

// Damage (a bad CRC followed by valid batches) stops both runs with exit
// 1, and the real run writes nothing to the partition.
func TestCompactDamaged(t *testing.T) {
	dir := buildUsers(t)
	seg := filepath.Join(dir, "00000000000000000000.log")
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	b[70] ^= 0xff // in the first batch's records: its CRC no longer matches
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	before := contentSnapshot(t, dir)
	for _, args := range [][]string{{"--dry-run"}, {}, {"--offset", "0", "--dry-run"}} {
		code, out, errs := runSegviz(append(append([]string{"compact", "--now", nowArg}, args...), dir)...)
		if code != exitProblem || !strings.Contains(errs, "checksum mismatch") || !strings.Contains(errs, "nothing was written") || out != "" {
			t.Errorf("%q: exit %d, want 1\nstdout: %s\nstderr: %s", args, code, out, errs)
		}
	}
	if after := contentSnapshot(t, dir); after != before {
		t.Fatalf("a refused clean changed the partition:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// contentSnapshot is snapshot without modification times: the names,
// sizes and content hashes of the files under root. (A writable open
// that meets damage rewrites the same bytes into the active segment's
// indexes, the producer snapshot and the leader-epoch-checkpoint before
// it refuses, as the engine's writers do.)
func contentSnapshot(t *testing.T, root string) string {
	t.Helper()
	var keep []string
	for _, line := range strings.Split(snapshot(t, root), "\n") {
		if f := strings.Fields(line); len(f) == 5 {
			keep = append(keep, f[0]+" "+f[1]+" "+f[4])
		}
	}
	return strings.Join(keep, "\n")
}

// timelineOf returns the completed instants of dir's timeline of the
// given actions (all, for none), failing if any instant is pending.
func timelineOf(t *testing.T, dir string, actions ...timeline.Action) []timeline.Instant {
	t.Helper()
	tl, err := timeline.Open(vfs.OS(), filepath.ToSlash(dir), timeline.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if p := tl.Pending(); len(p) > 0 {
		t.Fatalf("%s: pending %v", dir, p[0].Instant())
	}
	insts, err := tl.Instants(timeline.Filter{Actions: actions})
	if err != nil {
		t.Fatal(err)
	}
	return insts
}

// A clean records its compaction instant on the partition's timeline and
// names it: "instant" in --json (null for a dry run and for a clean with
// nothing to do), one line of text. With --out the instant is the copy's:
// the copy does not take DIR's timeline (nor its savepoints, which still
// hold the clean of the copy), and DIR's stays as it was.
func TestCompactRecordsInstant(t *testing.T) {
	dir := buildUsers(t)
	if dry := compactJSONOf(t, "--dry-run", "--now", nowArg, dir); dry.Instant != nil {
		t.Fatalf("dry run instant %+v", dry.Instant)
	}
	// A hold on the active segment's offset: DIR's timeline has a
	// savepoint; the cleanable range ends there anyway.
	if code, _, errs := runSegviz("savepoint", "--from", "8", "--to", "8", "--now", nowArg, dir); code != exitOK {
		t.Fatalf("savepoint: exit %d: %s", code, errs)
	}
	logDir := filepath.Dir(dir)
	before := snapshot(t, logDir)
	out := filepath.Join(t.TempDir(), "copy", "users-0")
	cp := compactJSONOf(t, "--now", nowArg, "--out", out, dir)
	if after := snapshot(t, logDir); after != before {
		t.Fatalf("--out changed the source:\nbefore\n%s\nafter\n%s", before, after)
	}
	if len(cp.Holds) != 1 {
		t.Fatalf("the copy was not cleaned under DIR's hold: %+v", cp.Holds)
	}
	copied := timelineOf(t, out)
	if len(copied) != 1 || copied[0].Action != timeline.ActionCompaction || cp.Instant == nil ||
		cp.Instant.Instant != copied[0].Time.Millis || cp.Instant.Action != "compaction" || cp.Instant.State != "completed" {
		t.Fatalf("the copy's timeline %v, --json instant %+v", copied, cp.Instant)
	}
	if n := len(timelineOf(t, dir, timeline.ActionCompaction)); n != 0 {
		t.Fatalf("DIR's timeline has %d compaction instants", n)
	}
	var detail timeline.Compaction
	if err := json.Unmarshal(cp.Instant.Detail, &detail); err != nil || len(detail.Sources) != 2 || len(detail.Cleaned) != 1 ||
		detail.RecordsRemoved["superseded"] != cp.Removed.Superseded || detail.EndOffset != 8 {
		t.Fatalf("instant detail %s (%v)", cp.Instant.Detail, err)
	}

	// In place, in text: one line names the instant.
	code, text, errs := runSegviz("compact", "--now", nowArg, dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	insts := timelineOf(t, dir, timeline.ActionCompaction)
	if len(insts) != 1 {
		t.Fatalf("DIR's compaction instants %v", insts)
	}
	want := fmt.Sprintf("timeline: recorded instant %s (", insts[0])
	if strings.Count(text, "timeline: recorded instant") != 1 || !strings.Contains(text, want) {
		t.Fatalf("text output lacks %q:\n%s", want, text)
	}
	// Nothing to clean now: nothing recorded, "instant" null.
	if again := compactJSONOf(t, "--now", nowArg, dir); again.Cleanable || again.Instant != nil {
		t.Fatalf("second clean: %+v", again)
	}
	if n := len(timelineOf(t, dir, timeline.ActionCompaction)); n != 1 {
		t.Fatalf("%d compaction instants after a clean with nothing to do", n)
	}
}
