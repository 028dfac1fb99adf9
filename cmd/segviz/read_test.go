package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// readCmd runs segviz read.
func readCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(append([]string{"read"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// readT0 is the timestamp of record 0 of readPartitionFixture; record i
// has readT0 + 1000*i.
const readT0 = 1_700_000_000_000

// readPartitionFixture appends n records (key k<i>, value v<i>, one
// header) with segviz append, 3 to a batch, in segments of 3 batches (9
// records: segments at 0, 9, 18 ...), and
// returns the partition directory.
func readPartitionFixture(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kafka-logs", "orders-0")
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, `{"key":%q,"value":%q,"headers":[{"key":"h","value":"eA=="}],"timestamp":%d}`+"\n",
			b64(fmt.Sprintf("k%d", i)), b64(fmt.Sprintf("v%d", i)), readT0+1000*int64(i))
	}
	if code, _, errs := appendCmd(t, in.String(), "--batch-records", "3", "--segment.bytes", "400", dir); code != exitOK {
		t.Fatalf("append: exit %d: %s", code, errs)
	}
	return dir
}

// textOffsets returns the offsets of segviz read's text lines.
func textOffsets(t *testing.T, out string) []int64 {
	t.Helper()
	var offs []int64
	for line := range strings.Lines(out) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(f) != 4 {
			t.Fatalf("line %q: %d fields, want 4", line, len(f))
		}
		o, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		offs = append(offs, o)
	}
	return offs
}

func span(a, b int64) []int64 {
	var s []int64
	for o := a; o < b; o++ {
		s = append(s, o)
	}
	return s
}

// TestReadFromAtLimit: where the read starts and how much it prints, on a
// partition of several segments.
func TestReadFromAtLimit(t *testing.T) {
	dir := readPartitionFixture(t, 20)
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.Segments()); n < 3 {
		t.Fatalf("%d segments, want several", n)
	}
	l.Close()
	tests := []struct {
		name string
		args []string
		want []int64
	}{
		{"default_all", nil, span(0, 20)},
		{"from_mid_batch", []string{"--from", "4"}, span(4, 20)},
		{"from_segment_boundary", []string{"--from", "9"}, span(9, 20)},
		{"earliest", []string{"--from", "earliest"}, span(0, 20)},
		{"beginning", []string{"--from", "beginning"}, span(0, 20)},
		{"latest", []string{"--from", "latest"}, nil},
		{"end", []string{"--from", "end"}, nil},
		{"from_end_relative", []string{"--from", "-3"}, span(17, 20)},
		{"from_end_relative_too_far", []string{"--from", "-100"}, span(0, 20)},
		{"from_log_end", []string{"--from", "20"}, nil},
		{"from_past_log_end", []string{"--from", "25"}, nil},
		{"limit", []string{"--limit", "5"}, span(0, 5)},
		{"limit_zero_is_all", []string{"--limit", "0"}, span(0, 20)},
		{"from_limit_across_segments", []string{"--from", "5", "--limit", "4"}, span(5, 9)},
		{"limit_past_end", []string{"--from", "18", "--limit", "10"}, span(18, 20)},
		{"at_exact", []string{"--at", strconv.Itoa(readT0 + 7000)}, span(7, 20)},
		{"at_between", []string{"--at", strconv.Itoa(readT0 + 7500)}, span(8, 20)},
		{"at_before_all", []string{"--at", "0"}, span(0, 20)},
		{"at_after_all", []string{"--at", strconv.Itoa(readT0 + 99000)}, nil},
		{"at_rfc3339", []string{"--at", "2023-11-14T22:13:31Z"}, span(11, 20)}, // readT0+11s
		{"at_rfc3339_fraction", []string{"--at", "2023-11-14T22:13:31.5+00:00"}, span(12, 20)},
		{"at_limit", []string{"--at", strconv.Itoa(readT0 + 3000), "--limit", "2"}, span(3, 5)},
		{"dir_between_flags", []string{"--from", "10"}, span(10, 20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(slices.Clone(tt.args), dir)
			if tt.name == "dir_between_flags" {
				args = []string{"--limit", "0", dir, "--from", "10"}
			}
			code, out, errs := readCmd(args...)
			if code != exitOK {
				t.Fatalf("exit %d, stderr %s", code, errs)
			}
			if got := textOffsets(t, out); !slices.Equal(got, tt.want) {
				t.Errorf("offsets %v, want %v", got, tt.want)
			}
			if tt.name != "from_past_log_end" && errs != "" {
				t.Errorf("stderr %q, want nothing", errs)
			}
		})
	}
	// The text fields: offset, timestamp, key, value.
	_, out, _ := readCmd("--from", "2", "--limit", "1", dir)
	if want := fmt.Sprintf("2\t%d\tk2\tv2\n", readT0+2000); out != want {
		t.Errorf("text line %q, want %q", out, want)
	}
}

// TestReadUsage: bad command lines exit 2, before reading anything;
// --remote takes file://DIR only.
func TestReadUsage(t *testing.T) {
	dir := readPartitionFixture(t, 3)
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no_dir", nil, "give one partition directory"},
		{"two_dirs", []string{dir, dir}, "give one partition directory"},
		{"from_and_at", []string{"--from", "1", "--at", "5", dir}, "give one"},
		{"bad_from", []string{"--from", "first", dir}, "--from"},
		{"bad_at", []string{"--at", "yesterday", dir}, "--at"},
		{"negative_at", []string{"--at", "-5", dir}, "--at"},
		{"negative_limit", []string{"--limit", "-1", dir}, "--limit"},
		{"bad_isolation", []string{"--isolation", "committed", dir}, "--isolation"},
		{"unknown_flag", []string{"--offset", "1", dir}, "-offset"},
		{"remote_s3", []string{"--remote", "s3://bucket/x", dir}, "not built into this segviz yet"},
		{"remote_http", []string{"--remote", "http://host/x", dir}, "want file://DIR"},
		{"remote_empty_dir", []string{"--remote", "file://", dir}, "no directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := readCmd(tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if !strings.Contains(errs, tt.want) {
				t.Errorf("stderr %q, want it to say %q", errs, tt.want)
			}
		})
	}
	code, out, _ := readCmd("--help")
	if code != exitOK || !strings.Contains(out, `"partition"`) || !strings.Contains(out, "read_committed") {
		t.Errorf("--help: exit %d, output %q", code, out)
	}
}

// TestReadBelowLogStart: the records below the log start offset are gone;
// without --remote, a read from there says so and exits 1.
func TestReadBelowLogStart(t *testing.T) {
	dir := readPartitionFixture(t, 12)
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.IncrementLogStartOffset(7); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errs := readCmd("--from", "3", dir)
	if code != exitProblem || out != "" || !strings.Contains(errs, "below the log start offset 7") {
		t.Errorf("--from 3: exit %d, stdout %q, stderr %q; want exit 1 naming the log start offset 7", code, out, errs)
	}
	code, out, errs = readCmd(dir)
	if code != exitOK || !slices.Equal(textOffsets(t, out), span(7, 12)) {
		t.Errorf("default: exit %d, offsets %v (stderr %q), want 7..11 from the log start offset", code, textOffsets(t, out), errs)
	}
	code, out, _ = readCmd("--at", "0", dir)
	if code != exitOK || !slices.Equal(textOffsets(t, out), span(7, 12)) {
		t.Errorf("--at 0: exit %d, offsets %v, want 7..11", code, textOffsets(t, out))
	}
}

// txnFixture builds, with the engine, a partition with a committed
// transaction, an aborted one interleaved with it, control markers, and a
// transaction still open at the end:
//
//	0-1  plain
//	2-3  producer 10, transactional (committed at 7)
//	4-5  producer 11, transactional (aborted at 8)
//	6    plain
//	7    COMMIT producer 10
//	8    ABORT producer 11
//	9    producer 11, transactional, a new transaction (committed at 11)
//	--- roll ---
//	10   producer 12, transactional (open: the last stable offset)
//	11   COMMIT producer 11
//	12-13 plain
//
// With roll, the segment rolls before offset 10, so that the producer
// snapshot at the roll is what read_committed starts from; otherwise there
// is one segment.
func txnFixture(t *testing.T, roll bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kafka-logs", "payments-3")
	x := newTxnWriter(t, dir)
	x.add(-1, 2)
	x.add(10, 2)
	x.add(11, 2)
	x.add(-1, 1)
	x.marker(10, record.ControlCommit)
	x.marker(11, record.ControlAbort)
	x.add(11, 1)
	if roll {
		x.roll()
	}
	x.add(12, 1)
	x.marker(11, record.ControlCommit)
	x.add(-1, 2)
	if got := x.l.LogEndOffset(); got != 14 {
		t.Fatalf("log end offset %d, want 14", got)
	}
	x.close()
	return dir
}

// txnWriter appends plain and transactional batches and transaction
// markers to a new partition with the engine, a second apart from readT0.
type txnWriter struct {
	t   *testing.T
	l   *kafkalog.Log
	w   record.Builder
	seq map[int64]int32
	ts  int64
}

func newTxnWriter(t *testing.T, dir string) *txnWriter {
	t.Helper()
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &txnWriter{t: t, l: l, seq: map[int64]int32{}, ts: readT0}
}

// add appends n records of producer pid, transactional; pid < 0: plain.
func (x *txnWriter) add(pid int64, n int) {
	x.t.Helper()
	spec := record.NewBatchSpec(0, compress.None)
	if pid >= 0 {
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence, spec.Transactional = pid, 0, x.seq[pid], true
		x.seq[pid] += int32(n)
	}
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Timestamp: x.ts, Key: fmt.Appendf(nil, "p%d", pid), Value: fmt.Appendf(nil, "%d-%d", pid, i)}
		x.ts += 1000
	}
	b, err := x.w.AppendBatch(nil, &spec, recs)
	if err != nil {
		x.t.Fatal(err)
	}
	if _, err := x.l.Append(b, 0); err != nil {
		x.t.Fatal(err)
	}
}

// marker appends producer pid's COMMIT or ABORT.
func (x *txnWriter) marker(pid int64, typ record.ControlType) {
	x.t.Helper()
	spec := record.NewBatchSpec(0, compress.None)
	spec.ProducerID, spec.ProducerEpoch = pid, 0
	b, err := x.w.AppendEndTxnMarker(nil, &spec, record.EndTxnMarker{Type: typ}, x.ts)
	if err != nil {
		x.t.Fatal(err)
	}
	x.ts += 1000
	if _, err := x.l.Append(b, 0); err != nil {
		x.t.Fatal(err)
	}
}

func (x *txnWriter) roll() {
	x.t.Helper()
	if err := x.l.Roll(); err != nil {
		x.t.Fatal(err)
	}
}

func (x *txnWriter) close() {
	x.t.Helper()
	if err := x.l.Close(); err != nil {
		x.t.Fatal(err)
	}
}

// TestReadIsolation: read_uncommitted gets every data record up to the
// high watermark; read_committed, as a consumer, gets the committed and
// non-transactional records below the last stable offset (10, where
// producer 12's transaction is open), without the aborted transaction's;
// neither gets a control record.
func TestReadIsolation(t *testing.T) {
	tests := []struct {
		name string
		roll bool
		args []string
		want []int64
	}{
		{"uncommitted", false, nil, []int64{0, 1, 2, 3, 4, 5, 6, 9, 10, 12, 13}},
		{"uncommitted_explicit", true, []string{"--isolation", "read_uncommitted"}, []int64{0, 1, 2, 3, 4, 5, 6, 9, 10, 12, 13}},
		{"committed", false, []string{"--isolation", "read_committed"}, []int64{0, 1, 2, 3, 6, 9}},
		{"committed_rolled", true, []string{"--isolation", "read_committed"}, []int64{0, 1, 2, 3, 6, 9}},
		{"committed_from_inside_aborted", false, []string{"--isolation", "read_committed", "--from", "5"}, []int64{6, 9}},
		{"committed_from_marker", true, []string{"--isolation", "read_committed", "--from", "7"}, []int64{9}},
		{"committed_limit", false, []string{"--isolation", "read_committed", "--limit", "5"}, []int64{0, 1, 2, 3, 6}},
		{"committed_latest", false, []string{"--isolation", "read_committed", "--from", "latest"}, nil},
		{"committed_from_end_relative", true, []string{"--isolation", "read_committed", "--from", "-2"}, []int64{9}},
		{"committed_from_above_lso", false, []string{"--isolation", "read_committed", "--from", "12"}, nil},
		{"uncommitted_from_marker", false, []string{"--from", "7"}, []int64{9, 10, 12, 13}},
		{"uncommitted_latest", false, []string{"--from", "latest"}, nil},
	}
	dirs := map[bool]string{false: txnFixture(t, false), true: txnFixture(t, true)}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := readCmd(append(slices.Clone(tt.args), dirs[tt.roll])...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if got := textOffsets(t, out); !slices.Equal(got, tt.want) {
				t.Errorf("offsets %v, want %v", got, tt.want)
			}
		})
	}
	// The high watermark of the log directory's replication-offset-checkpoint
	// bounds both: below it, producer 11's second transaction (9, marker at
	// 11) is not yet decided for read_committed.
	dir := txnFixture(t, true)
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "replication-offset-checkpoint"), []byte("0\n1\npayments 3 11\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		iso  string
		want []int64
	}{{"read_uncommitted", []int64{0, 1, 2, 3, 4, 5, 6, 9, 10}}, {"read_committed", []int64{0, 1, 2, 3, 6}}} {
		code, out, errs := readCmd("--isolation", c.iso, dir)
		if got := textOffsets(t, out); code != exitOK || !slices.Equal(got, c.want) {
			t.Errorf("high watermark 11, %s: exit %d, offsets %v, want %v (%s)", c.iso, code, got, c.want, errs)
		}
	}
}

// dumpRecords returns the record objects segviz dump --deep --print-data
// --json prints for the .log files of dir, without control batches'
// records, each with "partition": tp added.
func dumpRecords(t *testing.T, dir, tp string) []map[string]any {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no .log in %s: %v", dir, err)
	}
	var out, errb bytes.Buffer
	if code := run(append([]string{"dump", "--deep", "--print-data", "--json"}, logs...), &out, &errb); code != exitOK {
		t.Fatalf("dump: exit %d: %s", code, errb.String())
	}
	var recs []map[string]any
	control := false
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		switch m["type"] {
		case "batch":
			control = m["isControl"] == true
		case "record":
			if !control {
				m["partition"] = tp
				recs = append(recs, m)
			}
		}
	}
	return recs
}

// jsonLines parses JSON lines.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(s) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestReadRealData reads partitions Kafka brokers wrote — magic 1 message
// sets (Kafka 0.10), several v2 segments, transactions with COMMIT
// markers — and checks that --json prints dump's record objects, plus
// "partition", for the same records (without the control records), under
// both isolation levels, and that the text has one line per record.
func TestReadRealData(t *testing.T) {
	base := realdata.Dir(t)
	tests := []struct {
		name, dir, tp string
		magic1        bool
	}{
		{"magic1", "xpxwo100__bullShit/tmp/kafka-logs/TEST-TOPIC-0", "TEST-TOPIC-0", true},
		{"magic1_keyed", "xpxwo100__bullShit/tmp/kafka-logs/foo-0", "foo-0", true},
		{"magic1_null_keys", "xpxwo100__bullShit/tmp/kafka-logs/topic1-0", "topic1-0", true},
		{"v2_segments", "dipendrasaini__kafka-learnning-series/tmp/kafka-logs-1/invoice-1", "invoice-1", false},
		{"v2_transactions", "Danielowo2000__BigDataTechnologies-Version-2/kafka_data/_confluent-ksql-default__command_topic-0", "_confluent-ksql-default__command_topic-0", false},
		{"v2_lz4", "mscaldas2012__kafka-connect-spooldir/kafka-data/_confluent-command-0", "_confluent-command-0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(base, filepath.FromSlash(tt.dir))
			if _, err := os.Stat(dir); err != nil {
				t.Fatalf("%v (see ../shared/kafka-real/PROVENANCE.md)", err)
			}
			want := dumpRecords(t, dir, tt.tp)
			if len(want) == 0 {
				t.Fatal("dump found no records")
			}
			for _, iso := range []string{"read_uncommitted", "read_committed"} {
				code, out, errs := readCmd("--json", "--isolation", iso, dir)
				if code != exitOK {
					t.Fatalf("%s: exit %d: %s", iso, code, errs)
				}
				if got := jsonLines(t, out); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %d records, dump has %d; first got %v, want %v", iso, len(got), len(want), first(got), first(want))
				}
			}
			code, out, _ := readCmd(dir)
			if n := strings.Count(out, "\n"); code != exitOK || n != len(want) {
				t.Errorf("text: exit %d, %d lines, want %d", code, n, len(want))
			}
			// From the middle, with a limit: the records dump has there.
			mid := want[len(want)/2]["offset"].(float64)
			code, out, _ = readCmd("--json", "--from", strconv.FormatInt(int64(mid), 10), "--limit", "3", dir)
			if got := jsonLines(t, out); code != exitOK || !reflect.DeepEqual(got, want[len(want)/2:min(len(want), len(want)/2+3)]) {
				t.Errorf("--from %v --limit 3: exit %d, got %v", mid, code, got)
			}
			if tt.magic1 {
				for _, r := range want[:1] {
					if _, ok := r["key"]; !ok {
						t.Errorf("record %v has no key field", r)
					}
				}
			}
		})
	}
}

func first(ms []map[string]any) any {
	if len(ms) == 0 {
		return nil
	}
	return ms[0]
}

// TestReadJSONFields: a record object is dump's, field for field, plus
// partition; null keys and values are null, header values base64.
func TestReadJSONFields(t *testing.T) {
	dir := readPartitionFixture(t, 4)
	code, out, errs := readCmd("--json", "--from", "1", "--limit", "1", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := fmt.Sprintf(`{"type":"record","offset":1,"timestamp":%d,"keySize":2,"valueSize":2,"headers":[{"key":"h","value":"eA=="}],"key":"azE=","value":"djE=","partition":"orders-0"}`+"\n", readT0+1000)
	if out != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if got, want := jsonLines(t, out), dumpRecords(t, dir, "orders-0")[1:2]; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, dump has %v", got, want)
	}
}

// TestReadLeavesTreeUnchanged: reading creates, locks and changes
// nothing, whatever the flags.
func TestReadLeavesTreeUnchanged(t *testing.T) {
	for _, dir := range []string{readPartitionFixture(t, 10), txnFixture(t, true)} {
		root := filepath.Dir(dir)
		before := snapshot(t, root)
		for _, args := range [][]string{
			nil, {"--json"}, {"--isolation", "read_committed"}, {"--at", strconv.Itoa(readT0 + 2000)},
			{"--from", "latest"}, {"--from", "-2", "--limit", "1"}, {"--from", "99"},
		} {
			if code, _, errs := readCmd(append(args, dir)...); code != exitOK {
				t.Fatalf("%v: exit %d: %s", args, code, errs)
			}
		}
		if after := snapshot(t, root); after != before {
			t.Errorf("the tree changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	}
}

// TestReadDamaged: a damaged batch ends the read with exit 1 and a
// message naming the file; the records before it are printed.
func TestReadDamaged(t *testing.T) {
	dir := readPartitionFixture(t, 12)
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	slices.Sort(logs)
	victim := logs[1] // the second segment: offsets 9..11
	b, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/4] ^= 0xff // inside the first batch's records
	if err := os.WriteFile(victim, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := readCmd(dir)
	if code != exitProblem {
		t.Errorf("exit %d, want 1 (stderr %q)", code, errs)
	}
	if got := textOffsets(t, out); !slices.Equal(got, span(0, 9)) {
		t.Errorf("printed %v, want the records before the damage, 0..8", got)
	}
	if !strings.Contains(errs, filepath.Base(victim)) {
		t.Errorf("stderr %q does not name %s", errs, filepath.Base(victim))
	}
	// Missing directory: could not read.
	if code, _, errs := readCmd(filepath.Join(t.TempDir(), "nope-0")); code != exitFailure {
		t.Errorf("missing dir: exit %d, want 3 (%s)", code, errs)
	}
}

// TestReadPrintable: how keys and values are shown in the text.
func TestReadPrintable(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"null", nil, "NULL"},
		{"empty", []byte{}, ""},
		{"text", []byte("hello, wörld"), "hello, wörld"},
		{"json", []byte(`{"a":"b c"}`), `{"a":"b c"}`},
		{"tab_newline_cr", []byte("a\tb\nc\rd"), `a\tb\nc\rd`},
		{"backslash", []byte(`a\b`), `a\\b`},
		{"binary", []byte{0, 0, 0, 3}, `\x00\x00\x00\x03`},
		{"invalid_utf8", []byte{'v', 0xff, 0xc3}, `v\xff\xc3`},
		{"del", []byte{0x7f}, `\x7f`},
		{"nonprintable_rune", []byte("a\u2028b"), `a\u2028b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(appendPrintable(nil, tt.in)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestReadLastStableOffset: the last stable offset read computes
// read-only (from producer snapshots and the batches after them) is the
// engine's, whose writable open rebuilds producer state: read_committed
// stops where a broker's fetch would.
func TestReadLastStableOffset(t *testing.T) {
	for _, c := range []struct{ roll, noSnapshots bool }{{false, false}, {true, false}, {true, true}} {
		t.Run(fmt.Sprintf("roll=%v,noSnapshots=%v", c.roll, c.noSnapshots), func(t *testing.T) {
			dir := filepath.ToSlash(txnFixture(t, c.roll))
			if c.noSnapshots { // replay from the log start offset
				snaps, _ := filepath.Glob(filepath.Join(dir, "*.snapshot"))
				for _, p := range snaps {
					if err := os.Remove(p); err != nil {
						t.Fatal(err)
					}
				}
			}
			ro, err := kafkalog.Open(vfs.OS(), dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			got, err := ro.ReplayLastStableOffset(ro.HighWatermark())
			ro.Close()
			if err != nil {
				t.Fatal(err)
			}
			rw, err := kafkalog.Open(vfs.OS(), dir, kafkalog.DefaultConfig(), kafkalog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer rw.Close()
			res, err := rw.Read(0, 1<<20, nil, kafkalog.ReadOptions{Isolation: kafkalog.IsolationCommitted})
			if err != nil {
				t.Fatal(err)
			}
			// The engine's read ends at the segment's end or at its last
			// stable offset; read on until it returns nothing.
			engine := int64(0)
			for len(res.Records) > 0 {
				s := record.NewScanner(res.Records, "", 0)
				for s.Next() {
					engine = s.Entry().LastOffset() + 1
				}
				if res, err = rw.Read(engine, 1<<20, nil, kafkalog.ReadOptions{Isolation: kafkalog.IsolationCommitted}); err != nil {
					t.Fatal(err)
				}
			}
			if got != 10 || engine != got {
				t.Errorf("read's last stable offset %d, the engine's %d, want both 10", got, engine)
			}
		})
	}
}

// logRemote is a RemoteReader over another copy of the partition: what
// the tier package's reader will be, for the fall-through's test.
type logRemote struct {
	l     *kafkalog.Log
	reads int
}

func (r *logRemote) StartOffset() (int64, error) { return r.l.LogStartOffset(), nil }
func (r *logRemote) Close() error                { return r.l.Close() }
func (r *logRemote) OffsetForTimestamp(ts int64) (int64, bool, error) {
	to, found, err := r.l.OffsetForTimestamp(ts)
	return to.Offset, found, err
}
func (r *logRemote) ReadFrom(offset int64, _ bool) (RemoteBatches, error) {
	r.reads++
	res, err := r.l.Read(offset, 100, nil, kafkalog.ReadOptions{})
	return RemoteBatches{Records: res.Records, AbortedTxns: res.AbortedTxns}, err
}

// TestReadRemoteFallThrough: below the local log start offset the read
// falls through to the RemoteReader, then goes on with the local log, as
// it will once openRemote returns the tier package's reader.
func TestReadRemoteFallThrough(t *testing.T) {
	full := readPartitionFixture(t, 20)
	local := readPartitionFixture(t, 20)
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(local), kafkalog.DefaultConfig(), kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.IncrementLogStartOffset(11); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		start readStart
		limit int64
		want  []int64
	}{
		{"earliest", readStart{kind: startEarliest}, 0, span(0, 20)},
		{"from_remote", readStart{kind: startOffset, n: 4}, 0, span(4, 20)},
		{"from_local", readStart{kind: startOffset, n: 12}, 0, span(12, 20)},
		{"across_with_limit", readStart{kind: startOffset, n: 8}, 5, span(8, 13)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rl, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(full), kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			remote := &logRemote{l: rl}
			defer remote.Close()
			var out, errb bytes.Buffer
			code := readPartition(vfs.OS(), filepath.ToSlash(local), tt.start, tt.limit, false, remote, false, &out, &errb)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if got := textOffsets(t, out.String()); !slices.Equal(got, tt.want) {
				t.Errorf("offsets %v, want %v", got, tt.want)
			}
			if fromRemote := tt.want[0] < 11; fromRemote != (remote.reads > 0) {
				t.Errorf("%d reads from the remote", remote.reads)
			}
		})
	}
}
