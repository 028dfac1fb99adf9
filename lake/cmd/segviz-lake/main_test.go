package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/lake"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// t0 is an hour boundary: 2025-11-14T22:00:00Z.
const t0 = int64(1_763_157_600_000)

// writer appends batches to a partition directory as a follower does.
type writer struct {
	t    *testing.T
	l    *kafkalog.Log
	b    record.Builder
	next int64
	seq  map[int64]int32
	// committed counts the committed records.
	committed int
}

func newWriter(t *testing.T, dir string) *writer {
	t.Helper()
	l, err := kafkalog.Open(vfs.OS(), dir, kafkalog.DefaultConfig(), kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &writer{t: t, l: l, seq: map[int64]int32{}}
}

func (w *writer) batch(pid int64, ts int64, vals ...string) {
	w.t.Helper()
	var rs []record.Record
	for i, v := range vals {
		rs = append(rs, record.Record{Timestamp: ts + int64(i), Key: []byte(fmt.Sprintf("k%d", w.next+int64(i))), Value: []byte(v)})
	}
	spec := record.NewBatchSpec(w.next, compress.None)
	if pid >= 0 {
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence, spec.Transactional = pid, 0, w.seq[pid], true
		w.seq[pid] += int32(len(rs))
	}
	b, err := w.b.AppendBatch(nil, &spec, rs)
	if err != nil {
		w.t.Fatal(err)
	}
	res, err := w.l.AppendAsFollower(b)
	if err != nil {
		w.t.Fatal(err)
	}
	w.next = res.LastOffset + 1
}

func (w *writer) put(ts int64, vals ...string) {
	w.batch(-1, ts, vals...)
	w.committed += len(vals)
}

func (w *writer) end(pid, ts int64, commit bool) {
	w.t.Helper()
	spec := record.NewBatchSpec(w.next, compress.None)
	spec.ProducerID, spec.ProducerEpoch = pid, 0
	typ := record.ControlAbort
	if commit {
		typ = record.ControlCommit
	}
	b, err := w.b.AppendEndTxnMarker(nil, &spec, record.EndTxnMarker{Type: typ}, ts)
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.l.AppendAsFollower(b); err != nil {
		w.t.Fatal(err)
	}
	w.next++
}

// logDir writes a log directory with orders-0, orders-1 and events-0:
// JSON values with an amount, an aborted transaction, several hours.
func logDir(t *testing.T) (string, map[string]partCount) {
	dir := t.TempDir()
	counts := map[string]partCount{}
	for _, p := range []string{"orders-0", "orders-1", "events-0"} {
		w := newWriter(t, filepath.Join(dir, p))
		w.put(t0, `{"amount":5,"name":"a"}`, `{"amount":150}`, "raw")
		w.batch(7, t0+10, `{"amount":1000000}`)
		w.end(7, t0+20, false)
		w.put(t0+3600_000, `{"amount":20.5}`, `{"amount":101}`)
		w.put(t0+2*3600_000, `{"amount":-3}`)
		counts[p] = partCount{w.committed, w.next}
		if err := w.l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir, counts
}

// partCount is what logDir wrote to a partition: its committed records
// and its log end offset.
type partCount struct {
	committed int
	end       int64
}

// result is one in-process run.
type result struct {
	code           int
	stdout, stderr string
}

func runIn(t *testing.T, stdoutTTY bool, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(env{stdout: &out, stderr: &errb, stdoutTTY: stdoutTTY, ctx: context.Background()}, args)
	return result{code, out.String(), errb.String()}
}

func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	r := runIn(t, false, args...)
	if r.code != 0 {
		t.Fatalf("segviz-lake %q: exit %d\nstdout %s\nstderr %s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

func decodeFiles(t *testing.T, out string) []jsonFile {
	t.Helper()
	var files []jsonFile
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var f jsonFile
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		files = append(files, f)
	}
	return files
}

// TestIndexOnceAndFiles: "index --once" of a log directory indexes each
// partition (one table per topic) to its last stable offset; "files
// --json" lists files with exactly the stable names, whose offsets tile
// each partition from 0 and whose rows are the committed records; a
// second --once run adds nothing; the text listing has one line per
// file.
func TestIndexOnceAndFiles(t *testing.T) {
	dir, counts := logDir(t)
	catSpec := "sqlite:" + filepath.Join(t.TempDir(), "cat.db")
	r := mustRun(t, "index", "--catalog", catSpec, "--once", dir)
	if r.stdout != "" || r.stderr != "" {
		t.Fatalf("index wrote %q / %q with no terminal", r.stdout, r.stderr)
	}
	r = mustRun(t, "files", "--catalog", catSpec, "--json")
	files := decodeFiles(t, r.stdout)
	// Exactly the stable names, in every object.
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		want := []string{"bucket", "bytes", "checksum", "columns", "endOffset", "expired", "id", "partition", "rows", "startOffset", "topic"}
		if !slices.Equal(keys, want) {
			t.Fatalf("keys %q, want %q", keys, want)
		}
		for _, c := range m["columns"].([]any) {
			var ck []string
			for k := range c.(map[string]any) {
				ck = append(ck, k)
			}
			sort.Strings(ck)
			if want := []string{"max", "min", "name", "nans", "nulls", "type"}; !slices.Equal(ck, want) {
				t.Fatalf("column keys %q, want %q", ck, want)
			}
		}
	}
	// The files of each partition tile [0, its log end): a file starts
	// where the one before ended, or shares the range of the one before
	// (one file per time bucket).
	rows := map[string]int{}
	type rng struct{ s, e int64 }
	last := map[string]rng{}
	for _, f := range files {
		p := fmt.Sprintf("%s-%d", f.Topic, f.Partition)
		rows[p] += int(f.Rows)
		prev, seen := last[p]
		switch {
		case !seen && f.StartOffset == 0:
		case seen && f.StartOffset == prev.e+1:
		case seen && f.StartOffset == prev.s && f.EndOffset == prev.e:
		default:
			t.Fatalf("%s: file %d [%d, %d] after [%d, %d]: gap or overlap", p, f.ID, f.StartOffset, f.EndOffset, prev.s, prev.e)
		}
		last[p] = rng{f.StartOffset, f.EndOffset}
		if !strings.HasPrefix(f.Checksum, "sha256:") || f.Bytes <= 0 || f.Expired || f.Bucket == "" {
			t.Fatalf("file %+v", f)
		}
	}
	for p, n := range counts {
		if rows[p] != n.committed {
			t.Errorf("%s: %d rows in files, %d committed records", p, rows[p], n.committed)
		}
		if last[p].e != n.end-1 {
			t.Errorf("%s: files end at %d, the log at %d", p, last[p].e, n.end)
		}
	}
	// The min/max of value.amount are JSON numbers; offset's too.
	var sawAmount bool
	for _, f := range files {
		for _, c := range f.Columns {
			if c.Name == "value.amount" && c.Min != nil {
				if _, ok := c.Min.(float64); !ok {
					t.Fatalf("value.amount min %#v is not a JSON number", c.Min)
				}
				sawAmount = true
			}
			if c.Name == "timestamp" {
				if s, ok := c.Min.(string); !ok || !strings.HasSuffix(s, "Z") {
					t.Fatalf("timestamp min %#v", c.Min)
				}
			}
		}
	}
	if !sawAmount {
		t.Fatal("no value.amount bounds")
	}
	// Again: nothing new.
	mustRun(t, "index", "--catalog", catSpec, "--once", dir)
	r2 := mustRun(t, "files", "--catalog", catSpec, "--json")
	if r2.stdout != r.stdout {
		t.Fatalf("a second --once changed the files:\n%s\n%s", r.stdout, r2.stdout)
	}
	// --table.
	ro := mustRun(t, "files", "--catalog", catSpec, "--json", "--table", "orders")
	for _, f := range decodeFiles(t, ro.stdout) {
		if f.Topic != "orders" {
			t.Fatalf("--table orders lists %s", f.Topic)
		}
	}
	// Text.
	rt := mustRun(t, "files", "--catalog", catSpec)
	if n := strings.Count(rt.stdout, "\n"); n != len(files)+1 {
		t.Fatalf("text listing of %d lines for %d files:\n%s", n, len(files), rt.stdout)
	}
}

// TestIndexPartitionDir: a partition directory with --table names the
// table; --history none indexes nothing before the last stable offset.
func TestIndexPartitionDir(t *testing.T) {
	dir, _ := logDir(t)
	catSpec := "sqlite:" + filepath.Join(t.TempDir(), "cat.db")
	mustRun(t, "index", "--catalog", catSpec, "--once", "--table", "o1", filepath.Join(dir, "orders-1"))
	files := decodeFiles(t, mustRun(t, "files", "--catalog", catSpec, "--json").stdout)
	if len(files) == 0 {
		t.Fatal("no files")
	}
	for _, f := range files {
		if f.Topic != "o1" || f.Partition != 1 {
			t.Fatalf("file %+v", f)
		}
	}
	cat2 := "sqlite:" + filepath.Join(t.TempDir(), "cat.db")
	mustRun(t, "index", "--catalog", cat2, "--once", "--history", "none", filepath.Join(dir, "orders-1"))
	if out := mustRun(t, "files", "--catalog", cat2, "--json").stdout; out != "" {
		t.Fatalf("history none indexed %s", out)
	}
}

// TestWhere: --where keeps exactly the files whose statistics may
// satisfy the expression (checked against each file's bounds here),
// says on stderr how many it skipped, and refuses a bad expression
// (exit 2).
func TestWhere(t *testing.T) {
	dir, _ := logDir(t)
	catSpec := "sqlite:" + filepath.Join(t.TempDir(), "cat.db")
	mustRun(t, "index", "--catalog", catSpec, "--once", dir)
	all := decodeFiles(t, mustRun(t, "files", "--catalog", catSpec, "--json").stdout)
	bounds := func(f jsonFile, name string) (float64, float64, bool) {
		for _, c := range f.Columns {
			if c.Name == name && c.Min != nil {
				return c.Min.(float64), c.Max.(float64), true
			}
		}
		return 0, 0, false
	}
	tests := []struct {
		expr string
		keep func(f jsonFile) bool
	}{
		{"value.amount > 100", func(f jsonFile) bool { _, mx, ok := bounds(f, "value.amount"); return ok && mx > 100 }},
		{"value.amount <= 5", func(f jsonFile) bool { mn, _, ok := bounds(f, "value.amount"); return ok && mn <= 5 }},
		{"value.amount = 20.5", func(f jsonFile) bool { mn, mx, ok := bounds(f, "value.amount"); return ok && mn <= 20.5 && mx >= 20.5 }},
		{"offset >= 5", func(f jsonFile) bool { return f.EndOffset >= 5 }},
		{"offset < 3 AND value.amount > 100", func(f jsonFile) bool {
			_, mx, ok := bounds(f, "value.amount")
			return f.StartOffset < 3 && ok && mx > 100
		}},
		{"partition == 1", func(f jsonFile) bool { return f.Partition == 1 }},
		{"value.name = 'a'", func(f jsonFile) bool {
			for _, c := range f.Columns {
				if c.Name == "value.name" && c.Min != nil {
					return c.Min.(string) <= "a" && c.Max.(string) >= "a"
				}
			}
			return false
		}},
		{"timestamp >= '2025-11-14T23:00:00Z'", func(f jsonFile) bool { return f.Bucket >= "2025-11-14T23:00:00Z" }},
		{"value.amount > 'x'", func(jsonFile) bool { return true }}, // does not fit: kept
		{"value.missing = 1", func(jsonFile) bool { return false }},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			r := mustRun(t, "files", "--catalog", catSpec, "--json", "--where", tt.expr)
			got := decodeFiles(t, r.stdout)
			var want []int64
			for _, f := range all {
				if tt.keep(f) {
					want = append(want, f.ID)
				}
			}
			var ids []int64
			for _, f := range got {
				ids = append(ids, f.ID)
			}
			if !slices.Equal(ids, want) {
				t.Fatalf("kept %v, want %v", ids, want)
			}
			msg := fmt.Sprintf("--where skipped %d of %d files", len(all)-len(want), len(all))
			if !strings.Contains(r.stderr, msg) {
				t.Fatalf("stderr %q, want %q", r.stderr, msg)
			}
		})
	}
	if len(decodeFiles(t, mustRun(t, "files", "--catalog", catSpec, "--json", "--where", "value.amount > 100").stdout)) == len(all) {
		t.Fatal("value.amount > 100 skipped nothing: the partition does not exercise pruning")
	}
	for _, bad := range []string{"value.amount >", "> 3", "a ! 3", "a = 'x", "a = 1 or b = 2", "a = b"} {
		if r := runIn(t, false, "files", "--catalog", catSpec, "--where", bad); r.code != exitUsage {
			t.Errorf("--where %q: exit %d, want 2 (%s)", bad, r.code, r.stderr)
		}
	}
}

// TestRebuild: rebuild writes bytes whose SHA-256 is the catalog's
// checksum and that parquet-go reads with the file's row count (stdout
// and -o), from the partition or the log directory; refuses a terminal
// (exit 2); reports a checksum mismatch with exit 1 and writes nothing;
// an unknown id is a failure (3).
func TestRebuild(t *testing.T) {
	dir, _ := logDir(t)
	dbPath := filepath.Join(t.TempDir(), "cat.db")
	catSpec := "sqlite:" + dbPath
	mustRun(t, "index", "--catalog", catSpec, "--once", dir)
	files := decodeFiles(t, mustRun(t, "files", "--catalog", catSpec, "--json").stdout)
	for _, f := range files {
		for _, d := range []string{dir, filepath.Join(dir, fmt.Sprintf("%s-%d", f.Topic, f.Partition))} {
			r := mustRun(t, "rebuild", "--catalog", catSpec, "--dir", d, fmt.Sprint(f.ID))
			sum := sha256.Sum256([]byte(r.stdout))
			if got := "sha256:" + hex.EncodeToString(sum[:]); got != f.Checksum || int64(len(r.stdout)) != f.Bytes {
				t.Fatalf("file %d: %s (%d bytes), catalog %s (%d)", f.ID, got, len(r.stdout), f.Checksum, f.Bytes)
			}
			pf, err := parquet.OpenFile(bytes.NewReader([]byte(r.stdout)), int64(len(r.stdout)))
			if err != nil {
				t.Fatal(err)
			}
			if pf.NumRows() != f.Rows {
				t.Fatalf("file %d: %d rows, catalog %d", f.ID, pf.NumRows(), f.Rows)
			}
		}
	}
	f := files[0]
	out := filepath.Join(t.TempDir(), "f.parquet")
	mustRun(t, "rebuild", "--catalog", catSpec, "--dir", dir, "-o", out, fmt.Sprint(f.ID))
	if b, err := os.ReadFile(out); err != nil || int64(len(b)) != f.Bytes {
		t.Fatalf("-o: %d bytes, %v", len(b), err)
	}
	if r := runIn(t, true, "rebuild", "--catalog", catSpec, "--dir", dir, fmt.Sprint(f.ID)); r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, "terminal") {
		t.Fatalf("to a terminal: %+v", r)
	}
	if r := runIn(t, false, "rebuild", "--catalog", catSpec, "--dir", dir, "99999"); r.code != exitFailure {
		t.Fatalf("unknown id: %+v", r)
	}
	if r := runIn(t, false, "rebuild", "--catalog", catSpec, "--dir", filepath.Join(dir, "orders-1"), fmt.Sprint(files[0].ID)); files[0].Partition != 1 && r.code != exitFailure {
		t.Fatalf("wrong partition directory: %+v", r)
	}
	// A catalog whose checksum no longer matches.
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE ducklake_data_file SET checksum = 'sha256:00' WHERE data_file_id = ?`, f.ID); err != nil {
		t.Fatal(err)
	}
	db.Close()
	r := runIn(t, false, "rebuild", "--catalog", catSpec, "--dir", dir, fmt.Sprint(f.ID))
	if r.code != exitProblem || r.stdout != "" || !strings.Contains(r.stderr, "checksum") {
		t.Fatalf("checksum mismatch: %+v", r)
	}
}

// TestUsage: --help of the tool and of each command prints its usage on
// stdout with exit 0; bad usage exits 2 with a message on stderr; a
// missing directory is a failure (3).
func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"index", "--help"}, {"files", "--help"}, {"rebuild", "-h"}} {
		r := runIn(t, false, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Usage") || !strings.Contains(r.stdout, "Exit codes") || r.stderr != "" {
			t.Errorf("%q: %+v", args, r)
		}
	}
	cat := "sqlite:" + filepath.Join(t.TempDir(), "cat.db")
	for _, args := range [][]string{
		{},
		{"nope"},
		{"index", "/tmp"},
		{"index", "--catalog", "mysql://x", "/tmp"},
		{"index", "--catalog", cat},
		{"index", "--catalog", cat, "--history", "yesterday", "/tmp"},
		{"index", "--bogus"},
		{"files", "--catalog", cat, "extra"},
		{"rebuild", "--catalog", cat, "1"},
		{"rebuild", "--catalog", cat, "--dir", "/tmp", "x"},
	} {
		r := runIn(t, false, args...)
		if r.code != exitUsage || r.stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2", args, r.code, r.stderr)
		}
	}
	if r := runIn(t, false, "index", "--catalog", cat, "--once", filepath.Join(t.TempDir(), "none")); r.code != exitFailure {
		t.Errorf("missing dir: %+v", r)
	}
}

// TestBinary builds segviz-lake and runs it as a process: index --once,
// files --json, rebuild to a pipe (the checksum's bytes), and exit 2 for
// a usage error.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "segviz-lake")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir, _ := logDir(t)
	catSpec := "sqlite:" + filepath.Join(t.TempDir(), "cat.db")
	cmd := exec.Command(bin, "index", "--catalog", catSpec, "--once", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "files", "--catalog", catSpec, "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	files := decodeFiles(t, string(out))
	var stdout bytes.Buffer
	cmd = exec.Command(bin, "rebuild", "--catalog", catSpec, "--dir", dir, fmt.Sprint(files[0].ID))
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(stdout.Bytes())
	if "sha256:"+hex.EncodeToString(sum[:]) != files[0].Checksum {
		t.Fatal("rebuilt bytes differ from the checksum")
	}
	err = exec.Command(bin, "files").Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitUsage {
		t.Fatalf("files without --catalog: %v", err)
	}
}

// TestIndexRunUntilStopped: without --once, index follows the partitions
// until its context ends (SIGINT or SIGTERM in the binary), then exits 0
// with every committed record indexed; with stderr a terminal it prints
// each partition's indexed range at the end.
func TestIndexRunUntilStopped(t *testing.T) {
	dir, counts := logDir(t)
	catSpec := "sqlite:" + filepath.Join(t.TempDir(), "cat.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(env{stdout: &stdout, stderr: &stderr, stderrTTY: true, ctx: ctx}, []string{"index", "--catalog", catSpec, dir})
	}()
	total := 0
	for _, n := range counts {
		total += n.committed
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		rows := 0
		for _, f := range decodeFiles(t, mustRun(t, "files", "--catalog", catSpec, "--json").stdout) {
			rows += int(f.Rows)
		}
		if rows == total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d rows indexed after 20 s", rows, total)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("index did not stop")
	}
	for p, n := range counts {
		if want := fmt.Sprintf("%s: indexed [0, %d)", p, n.end); !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q", stdout.String())
	}
}

// TestIndexLeaseHeld: with another indexer holding a partition's lease,
// index --once fails (exit 3) naming the partition and the lease.
func TestIndexLeaseHeld(t *testing.T) {
	dir, _ := logDir(t)
	dbPath := filepath.Join(t.TempDir(), "cat.db")
	ctx := context.Background()
	cat, err := lake.OpenSQLite(ctx, dbPath, lake.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id, err := cat.Table(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.AcquireLease(ctx, id, 1, "someone-else", time.Hour); err != nil {
		t.Fatal(err)
	}
	cat.Close()
	r := runIn(t, false, "index", "--catalog", "sqlite:"+dbPath, "--once", dir)
	if r.code != exitFailure || !strings.Contains(r.stderr, "orders-1") || !strings.Contains(r.stderr, "lease") {
		t.Fatalf("exit %d, stderr %q; want 3 naming orders-1's lease", r.code, r.stderr)
	}
}

// TestJSONBound: catalog bounds become JSON values of their type, int64's
// extremes exactly.
func TestJSONBound(t *testing.T) {
	tests := []struct{ typ, in, want string }{
		{"int64", "9223372036854775807", `9223372036854775807`},
		{"int64", "-9223372036854775808", `-9223372036854775808`},
		{"int32", "-1", `-1`},
		{"double", "-1e+300", `-1e+300`},
		{"double", "2.5", `2.5`},
		{"double", "+Inf", `"Infinity"`},
		{"double", "-Inf", `"-Infinity"`},
		{"boolean", "true", `true`},
		{"timestamp_ms", "2025-11-14 22:00:00.001+00", `"2025-11-14T22:00:00.001Z"`},
		{"string", `a"b`, `"a\"b"`},
		{"json", `{"x":1}`, `"{\"x\":1}"`},
		{"binary", `\xFFab`, `"\\xFFab"`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(jsonBound(tt.typ, tt.in))
		if err != nil || string(b) != tt.want {
			t.Errorf("%s %q: %s %v, want %s", tt.typ, tt.in, b, err, tt.want)
		}
	}
}
