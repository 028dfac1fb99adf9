package recordinput_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/internal/recordinput"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

func TestParseRecords(t *testing.T) {
	in := `{"key":"azE=","value":"djE=","headers":[{"key":"h","value":"eA=="},{"key":"n","value":null}],"timestamp":1700000000000}

{"value":null}
{"key":null,"value":""}
`
	recs, err := recordinput.ParseRecords(strings.NewReader(in), 42)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Line != 1 || recs[1].Line != 3 || recs[2].Line != 4 {
		t.Fatalf("records %+v", recs)
	}
	r := recs[0]
	if string(r.Key) != "k1" || string(r.Value) != "v1" || r.Timestamp != 1700000000000 || len(r.Headers) != 2 ||
		string(r.Headers[0].Key) != "h" || string(r.Headers[0].Value) != "x" || r.Headers[1].Value != nil {
		t.Errorf("record 0 %+v", r)
	}
	if recs[1].Key != nil || recs[1].Value != nil || recs[1].Timestamp != 42 {
		t.Errorf("record 1 %+v", recs[1])
	}
	if recs[2].Value == nil || len(recs[2].Value) != 0 {
		t.Errorf("record 2: an empty value must not be null: %+v", recs[2])
	}
}

func TestParseRecordsErrors(t *testing.T) {
	in := strings.Join([]string{
		`{"value":"aGk="}`,
		`not json`,
		`{"value":"***"}`,
		`{"value":"aGk=","timestamp":-5}`,
		`{"valeu":"aGk="}`,
		`{"headers":[{"value":"aGk="}]}`,
		`{"value":"aGk="} {"value":"aGk="}`,
		`{"value":"aGk="}`,
	}, "\n")
	lines, err := badLines(t, in)
	if want := []int{2, 3, 4, 5, 6, 7}; !equalInts(lines, want) {
		t.Errorf("bad lines %v, want %v:\n%v", lines, want, err)
	}
}

// badLines parses in and returns the numbers of the lines ParseRecords
// refused, and its error; it fails the test unless that is an *InputError.
func badLines(t *testing.T, in string) ([]int, error) {
	t.Helper()
	_, err := recordinput.ParseRecords(strings.NewReader(in), 0)
	var ie *recordinput.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("err %v, want an *InputError", err)
	}
	var lines []int
	for _, l := range ie.Lines {
		lines = append(lines, l.Line)
	}
	return lines, err
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAppend(t *testing.T) {
	m := vfs.NewMem()
	c := &clock{t: t0}
	var recs []recordinput.InputRecord
	for i := 0; i < 25; i++ {
		recs = append(recs, recordinput.InputRecord{Line: i + 1, Record: record.Record{Timestamp: t0.UnixMilli(), Value: []byte("hello")}})
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{"segment.bytes": "200"})
	if err != nil {
		t.Fatal(err)
	}
	var seen int
	res, err := recordinput.Append(m, "/logs/f-0", recs, recordinput.AppendOptions{Codec: compress.LZ4, BatchRecords: 10, Config: &cfg, Clock: c,
		OnBatch: func(kafkalog.AppendResult) { seen++ }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || seen != 3 || res[0].FirstOffset != 0 || res[0].LastOffset != 9 || res[2].FirstOffset != 20 || res[2].LastOffset != 24 {
		t.Errorf("results %+v", res)
	}
	rep, err := inspect.Verify(m, "/logs/f-0", inspect.Options{Now: t0.UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Records != 25 || rep.Segments != 3 {
		t.Errorf("verify: OK %v, %d records, %d segments:\n%s", rep.OK, rep.Records, rep.Segments, rep.Problems)
	}

	// A second append continues the offsets.
	res, err = recordinput.Append(m, "/logs/f-0", recs[:1], recordinput.AppendOptions{Config: &cfg, Clock: c})
	if err != nil || res[0].FirstOffset != 25 {
		t.Errorf("second append: %+v, %v", res, err)
	}
}

func TestAppendRefusesBeforeWriting(t *testing.T) {
	m := vfs.NewMem()
	c := &clock{t: t0}
	big := make([]byte, 2<<20)
	recs := []recordinput.InputRecord{
		{Line: 1, Record: record.Record{Timestamp: t0.UnixMilli(), Value: []byte("ok")}},
		{Line: 2, Record: record.Record{Timestamp: t0.UnixMilli() + 2*3600*1000, Value: []byte("future")}},
		{Line: 3, Record: record.Record{Timestamp: t0.UnixMilli(), Value: big}},
	}
	_, err := recordinput.Append(m, "/logs/f-0", recs, recordinput.AppendOptions{BatchRecords: 1, Clock: c})
	var ie *recordinput.InputError
	if !errors.As(err, &ie) || len(ie.Lines) != 2 || ie.Lines[0].Line != 2 || ie.Lines[1].Line != 3 {
		t.Fatalf("err %v", err)
	}
	if _, err := m.Stat("/logs/f-0"); err == nil {
		t.Errorf("the partition was created although the input was refused")
	}
}

// TestParseRecordsRefusesNullAndDuplicateKeys: a line that is not an object
// (a bare null used to decode into an empty record) and an object with a
// key twice (the last one won silently) are bad lines, named by number;
// the same header key in two headers is fine (Kafka allows it).
func TestParseRecordsRefusesNullAndDuplicateKeys(t *testing.T) {
	in := strings.Join([]string{
		`null`,
		`{"value":"aGk=","value":"aGk="}`,
		`{"headers":[{"key":"a","key":"b","value":null}]}`,
		`[]`,
		`"x"`,
		`{"headers":[{"key":"a","value":null},{"key":"a","value":"aGk="}],"timestamp":5}`,
	}, "\n")
	lines, err := badLines(t, in)
	if want := []int{1, 2, 3, 4, 5}; !equalInts(lines, want) {
		t.Errorf("bad lines %v, want %v:\n%v", lines, want, err)
	}
	recs, err := recordinput.ParseRecords(strings.NewReader(`{"headers":[{"key":"a","value":null},{"key":"a","value":"aGk="}],"timestamp":5}`), 0)
	if err != nil || len(recs) != 1 || len(recs[0].Record.Headers) != 2 {
		t.Fatalf("repeated header keys in two headers: %v, %+v", err, recs)
	}
}

// FuzzParseRecords: any input is either parsed or refused line by line,
// never a panic; every non-blank line is accounted for exactly once.
func FuzzParseRecords(f *testing.F) {
	f.Add([]byte(`{"key":null,"value":"aGk=","headers":[{"key":"a","value":null}],"timestamp":5}`))
	f.Add([]byte("null\n{\"value\":\"aGk=\",\"value\":\"aGk=\"}\n\n[]"))
	f.Add([]byte(`{"headers":[{"key":"a","key":"b"}]} {"value":"x"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		recs, err := recordinput.ParseRecords(bytes.NewReader(in), 0)
		nonBlank := 0
		for _, l := range bytes.Split(in, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				nonBlank++
			}
		}
		var ie *recordinput.InputError
		switch {
		case err == nil:
			if len(recs) != nonBlank {
				t.Fatalf("%d records from %d non-blank lines", len(recs), nonBlank)
			}
		case errors.As(err, &ie):
			if len(ie.Lines) == 0 {
				t.Fatal("an InputError with no line")
			}
		}
	})
}

// BenchmarkAppendFrom measures the streaming append of small JSON-lines
// records into a vfs.Mem partition: the parsing and batching costs that
// bound segviz append's throughput.
func BenchmarkAppendFrom(b *testing.B) {
	var in bytes.Buffer
	for i := 0; in.Len() < 4<<20; i++ {
		fmt.Fprintf(&in, `{"key":"%s","value":"%s"}`+"\n",
			base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "key-%d", i)),
			base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "value-%d-0123456789abcdefghijklmnop", i)))
	}
	b.SetBytes(int64(in.Len()))
	b.ReportAllocs()
	for b.Loop() {
		m := vfs.NewMem()
		if _, err := recordinput.AppendFrom(m, "/logs/b-0", bytes.NewReader(in.Bytes()), recordinput.AppendOptions{BatchRecords: 100, Clock: &clock{t: t0}}); err != nil {
			b.Fatal(err)
		}
	}
}

// jsonLines returns JSON lines of the records from to to-1, whose values
// are v<i>; bad maps a line number (from 1, counted from from) to the text
// that replaces it.
func jsonLines(from, to int, bad map[int]string) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		if s, ok := bad[i-from+1]; ok {
			b.WriteString(s + "\n")
			continue
		}
		fmt.Fprintf(&b, `{"key":"a2V5","value":"%s"}`+"\n", base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "v%d", i)))
	}
	return b.String()
}

// readValues reads the values of every record of the partition dir of
// fsys, in offset order, opening it read-only, and checks that the offsets
// are contiguous from 0.
func readValues(t testing.TB, fsys vfs.FS, dir string) []string {
	t.Helper()
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("opening %s: %v", dir, err)
	}
	defer l.Close()
	var out []string
	var it record.Iterator
	var r record.Record
	for off := int64(0); off < l.LogEndOffset(); {
		rr, err := l.Read(off, 1<<20, nil, kafkalog.ReadOptions{})
		if err != nil || len(rr.Records) == 0 {
			t.Fatalf("reading offset %d: %v", off, err)
		}
		for rest := rr.Records; len(rest) > 0; {
			b, next, err := record.ReadBatch(rest)
			if err != nil {
				t.Fatal(err)
			}
			it.Reset(&b)
			for it.Next(&r) {
				if r.Offset < off {
					continue
				}
				if r.Offset != off {
					t.Fatalf("offset %d after %d", r.Offset, off-1)
				}
				out = append(out, string(r.Value))
				off++
			}
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
			rest = next
		}
	}
	return out
}

func values(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("v%d", i))
	}
	return out
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestAppendFromAcksDurable: AppendFrom streams — batches are appended and
// acknowledged while the input is still being read — and every batch it
// acknowledges survives a crash at that very moment: a crash clone of the
// filesystem that keeps only what was synced holds it.
func TestAppendFromAcksDurable(t *testing.T) {
	const n = 300
	in := jsonLines(0, n, nil)
	for _, tt := range []struct {
		name      string
		batch     int
		syncBytes int
		segBytes  string
	}{
		{"sync_every_batch", 7, 1, "1073741824"},
		{"sync_every_few_batches", 5, 600, "1073741824"},
		{"rolls", 9, 4096, "700"},
		{"default_sync", 10, 0, "1073741824"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := vfs.NewMem()
			cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{"segment.bytes": tt.segBytes})
			if err != nil {
				t.Fatal(err)
			}
			// One byte a read, so that the reader's position says how far
			// the input has been consumed.
			r := &countingReader{r: iotest.OneByteReader(strings.NewReader(in))}
			var acks []kafkalog.AppendResult
			earlyAcks := 0
			sum, err := recordinput.AppendFrom(m, "/logs/a-0", r, recordinput.AppendOptions{
				BatchRecords: tt.batch, SyncBytes: tt.syncBytes, Config: &cfg, Clock: &clock{t: t0},
				OnBatch: func(res kafkalog.AppendResult) {
					acks = append(acks, res)
					if r.n < len(in) {
						earlyAcks++
					}
					got := readValues(t, m.CrashClone(vfs.CrashConfig{}), "/logs/a-0")
					if int64(len(got)) <= res.LastOffset {
						t.Fatalf("batch %d-%d acknowledged, but a crash now keeps offsets up to %d only", res.FirstOffset, res.LastOffset, len(got)-1)
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			want := recordinput.AppendSummary{Records: n, Batches: (n + tt.batch - 1) / tt.batch, FirstOffset: 0, LastOffset: n - 1, ResumeLine: n + 1}
			if diff := cmp.Diff(want, sum); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if len(acks) != want.Batches {
				t.Fatalf("%d batches acknowledged, want %d", len(acks), want.Batches)
			}
			for i, a := range acks {
				if a.FirstOffset != int64(i*tt.batch) || a.LastOffset != min(int64((i+1)*tt.batch), n)-1 {
					t.Errorf("ack %d: offsets %d-%d", i, a.FirstOffset, a.LastOffset)
				}
			}
			// With a sync size below the input's, batches are acknowledged
			// before the input is read to its end: memory holds a batch, not
			// the input.
			if tt.syncBytes > 0 && earlyAcks == 0 {
				t.Errorf("no batch acknowledged before the end of the input")
			}
			if diff := cmp.Diff(values(0, n), readValues(t, m, "/logs/a-0")); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAppendFromStopsAtBadLine: lines are checked as they are read. The
// first bad one stops the appending: the batches before the one that
// holds it stay, durable; nothing from that batch on is written; every
// bad line is still reported; and appending the corrected input from
// ResumeLine gives the partition a clean run gives.
func TestAppendFromStopsAtBadLine(t *testing.T) {
	future := fmt.Sprintf(`{"value":null,"timestamp":%d}`, t0.Add(3*time.Hour).UnixMilli())
	big := fmt.Sprintf(`{"value":"%s"}`, base64.StdEncoding.EncodeToString(make([]byte, 3000)))
	const n, batch = 40, 4
	for _, tt := range []struct {
		name      string
		bad       map[int]string
		wantLines []int // the bad lines reported
		written   int64 // records appended before the first
	}{
		{"first_batch", map[int]string{3: "null", 30: "not json"}, []int{3, 30}, 0},
		{"third_batch", map[int]string{10: `{"value":"aGk=","value":"aGk="}`, 15: "[]", 39: "{"}, []int{10, 15, 39}, 8},
		{"at_a_batch_start", map[int]string{13: `{"value":"***"}`}, []int{13}, 12},
		{"timestamp_ahead", map[int]string{22: future}, []int{22}, 20},
		{"batch_too_large", map[int]string{18: big}, []int{17}, 16},
		{"last_line", map[int]string{40: "null"}, []int{40}, 36},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := vfs.NewMem()
			cfg, err := kafkalog.ParseConfig(map[string]string{"max.message.bytes": "2048"})
			if err != nil {
				t.Fatal(err)
			}
			opt := recordinput.AppendOptions{BatchRecords: batch, SyncBytes: 1 << 20, Config: &cfg, Clock: &clock{t: t0}}
			var acked int64
			opt.OnBatch = func(res kafkalog.AppendResult) { acked = res.LastOffset + 1 }
			sum, err := recordinput.AppendFrom(m, "/logs/a-0", strings.NewReader(jsonLines(0, n, tt.bad)), opt)
			var ie *recordinput.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err %v, want an *InputError", err)
			}
			var lines []int
			for _, l := range ie.Lines {
				lines = append(lines, l.Line)
			}
			if diff := cmp.Diff(tt.wantLines, lines); diff != "" {
				t.Errorf("bad lines (-want +got):\n%s\n%v", diff, err)
			}
			if sum.Records != tt.written || acked != tt.written || sum.ResumeLine != int(tt.written)+1 {
				t.Errorf("summary %+v, %d acknowledged; want %d records, resume at line %d", sum, acked, tt.written, tt.written+1)
			}
			if tt.written == 0 {
				if _, err := m.Stat("/logs/a-0"); err == nil {
					t.Errorf("the partition was created although nothing was appended")
				}
				return
			}
			// What was appended is durable, and nothing more is there.
			if diff := cmp.Diff(values(0, int(tt.written)), readValues(t, m.CrashClone(vfs.CrashConfig{}), "/logs/a-0")); diff != "" {
				t.Errorf("records after a crash (-want +got):\n%s", diff)
			}
			// Resuming from ResumeLine gives the batches of a clean run.
			opt.OnBatch = nil
			if _, err := recordinput.AppendFrom(m, "/logs/a-0", strings.NewReader(jsonLines(sum.ResumeLine-1, n, nil)), opt); err != nil {
				t.Fatal(err)
			}
			clean := vfs.NewMem()
			if _, err := recordinput.AppendFrom(clean, "/logs/a-0", strings.NewReader(jsonLines(0, n, nil)), opt); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(batchRanges(t, clean), batchRanges(t, m)); diff != "" {
				t.Errorf("batches after resuming (-clean run +resumed):\n%s", diff)
			}
		})
	}
}

// batchRanges lists the offsets of each batch of /logs/a-0.
func batchRanges(t testing.TB, fsys vfs.FS) [][2]int64 {
	t.Helper()
	l, err := kafkalog.Open(fsys, "/logs/a-0", kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out [][2]int64
	for off := int64(0); off < l.LogEndOffset(); {
		rr, err := l.Read(off, 1<<20, nil, kafkalog.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for rest := rr.Records; len(rest) > 0; {
			b, next, err := record.ReadBatch(rest)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, [2]int64{b.BaseOffset, b.LastOffset()})
			off = b.LastOffset() + 1
			rest = next
		}
	}
	return out
}

// TestAppendFromEmptyInput: an input without records still opens (and
// creates) the partition, as Append of nothing does; a locked or corrupt
// partition is then refused.
func TestAppendFromEmptyInput(t *testing.T) {
	m := vfs.NewMem()
	sum, err := recordinput.AppendFrom(m, "/logs/a-0", strings.NewReader("\n  \n"), recordinput.AppendOptions{Clock: &clock{t: t0}})
	if err != nil || sum.Records != 0 || sum.FirstOffset != -1 || sum.ResumeLine != 1 {
		t.Fatalf("%+v, %v", sum, err)
	}
	if st, err := m.Stat("/logs/a-0"); err != nil || !st.IsDir() {
		t.Fatalf("the partition was not created: %v", err)
	}
	l, err := kafkalog.Open(m, "/logs/a-0", kafkalog.DefaultConfig(), kafkalog.Options{Clock: &clock{t: t0}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = recordinput.AppendFrom(m, "/logs/a-0", strings.NewReader(""), recordinput.AppendOptions{Clock: &clock{t: t0}})
	var le *kafkalog.LockError
	if !errors.As(err, &le) {
		t.Errorf("appending to a locked partition: %v, want a *kafkalog.LockError", err)
	}
}

// errReader returns its data, then err.
type errReader struct {
	data string
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestAppendFromReadError: an error reading the input stops the append;
// the batches appended before are made durable and acknowledged.
func TestAppendFromReadError(t *testing.T) {
	m := vfs.NewMem()
	boom := errors.New("boom")
	acks := 0
	sum, err := recordinput.AppendFrom(m, "/logs/a-0", &errReader{data: jsonLines(0, 10, nil) + `{"value":`, err: boom},
		recordinput.AppendOptions{BatchRecords: 4, Clock: &clock{t: t0}, OnBatch: func(kafkalog.AppendResult) { acks++ }})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want the read error", err)
	}
	if sum.Records != 8 || acks != 2 || sum.ResumeLine != 9 {
		t.Errorf("summary %+v, %d acknowledged", sum, acks)
	}
	if diff := cmp.Diff(values(0, 8), readValues(t, m.CrashClone(vfs.CrashConfig{}), "/logs/a-0")); diff != "" {
		t.Errorf("records after a crash (-want +got):\n%s", diff)
	}
}

// TestRecordReader: line numbers count every line; blank lines and
// CRLF endings are fine, as is a last line without a newline; a line
// longer than MaxLineBytes is a bad line that reading goes on past,
// without gathering it, and one longer than the read buffer but within
// the bound is read whole; a read error ends the reading and sticks.
func TestRecordReader(t *testing.T) {
	long := fmt.Sprintf(`{"value":"%s"}`, base64.StdEncoding.EncodeToString(make([]byte, 100<<10)))    // over the 64 KiB buffer
	tooLong := fmt.Sprintf(`{"value":"%s"}`, base64.StdEncoding.EncodeToString(make([]byte, 300<<10))) // over the bound
	type got struct {
		Line  int
		Value int // the value's length, or -1 for a bad line
	}
	for _, tt := range []struct {
		name string
		in   string
		want []got
	}{
		{"crlf_and_blank", "{\"value\":\"aGk=\"}\r\n\r\n  \n{\"value\":\"aA==\"}", []got{{1, 2}, {4, 1}}},
		{"long_line", long + "\n" + `{"value":"aGk="}` + "\n", []got{{1, 100 << 10}, {2, 2}}},
		{"too_long", `{"value":"aGk="}` + "\n" + tooLong + "\n" + `{"value":"aGk="}`, []got{{1, 2}, {2, -1}, {3, 2}}},
		{"too_long_last", tooLong, []got{{1, -1}}},
		{"empty", "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rr := recordinput.NewRecordReader(strings.NewReader(tt.in), 0)
			rr.MaxLineBytes = 200 << 10
			var gots []got
			for {
				rec, err := rr.Next()
				if err == io.EOF {
					break
				}
				var le recordinput.LineError
				switch {
				case errors.As(err, &le):
					if le.Line != rec.Line || !strings.Contains(le.Error(), "longer than") {
						t.Errorf("line %d: %v", rec.Line, err)
					}
					gots = append(gots, got{rec.Line, -1})
				case err != nil:
					t.Fatal(err)
				default:
					gots = append(gots, got{rec.Line, len(rec.Value)})
				}
			}
			if diff := cmp.Diff(tt.want, gots); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
	boom := errors.New("boom")
	rr := recordinput.NewRecordReader(&errReader{data: `{"value":"aGk="}` + "\n" + `{"val`, err: boom}, 0)
	if rec, err := rr.Next(); err != nil || rec.Line != 1 {
		t.Fatalf("first line: %+v, %v", rec, err)
	}
	for range 2 {
		if _, err := rr.Next(); !errors.Is(err, boom) {
			t.Errorf("after the read error: %v, want it", err)
		}
	}
}

// TestAppendFromFaults fails each mutating filesystem operation of an
// AppendFrom in turn (EIO), until the workload passes without reaching the
// fault: every fault reaches the caller, the summary counts exactly the
// batches acknowledged, and every one of them survives a crash at that
// point (the synced state holds it).
func TestAppendFromFaults(t *testing.T) {
	const n = 24
	in := jsonLines(0, n, nil)
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{"segment.bytes": "300"})
	if err != nil {
		t.Fatal(err)
	}
	faults := 0
	for k := 0; ; k++ {
		mem := vfs.NewMem()
		ops, hit := 0, false
		fsys := vfs.WithFaults(mem, vfs.InjectorFunc(func(op vfs.Op) error {
			if !op.Kind.Mutating() {
				return nil
			}
			ops++
			if ops-1 == k {
				hit = true
				return &vfs.Fault{Err: syscall.EIO}
			}
			return nil
		}))
		var acked int64
		sum, err := recordinput.AppendFrom(fsys, "/logs/a-0", strings.NewReader(in), recordinput.AppendOptions{
			BatchRecords: 4, SyncBytes: 150, Config: &cfg, Clock: &clock{t: t0},
			OnBatch: func(res kafkalog.AppendResult) { acked = res.LastOffset + 1 },
		})
		if !hit {
			if err != nil {
				t.Fatalf("no fault: %v", err)
			}
			if sum.Records != n {
				t.Fatalf("no fault: %+v", sum)
			}
			break
		}
		faults++
		if err == nil {
			t.Errorf("fault at mutating op %d: no error", k)
		}
		if sum.Records != acked {
			t.Errorf("fault at mutating op %d: summary %+v, but %d records acknowledged", k, sum, acked)
		}
		if acked > 0 {
			got := readValues(t, mem.CrashClone(vfs.CrashConfig{}), "/logs/a-0")
			if int64(len(got)) < acked || !slices.Equal(got[:acked], values(0, int(acked))) {
				t.Errorf("fault at mutating op %d (%v): %d records acknowledged, a crash keeps %d", k, err, acked, len(got))
			}
		}
	}
	if faults < 20 {
		t.Errorf("only %d faults injected", faults)
	}
	t.Logf("%d faults injected", faults)
}

// t0 is the time of the test partitions.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// clock is a settable segment.Clock.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }
