package inspect_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/inspect"
	kafkalog "github.com/segkit/segkit/log"
	"github.com/segkit/segkit/log/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

func TestParseRecords(t *testing.T) {
	in := `{"key":"azE=","value":"djE=","headers":[{"key":"h","value":"eA=="},{"key":"n","value":null}],"timestamp":1700000000000}

{"value":null}
{"key":null,"value":""}
`
	recs, err := inspect.ParseRecords(strings.NewReader(in), 42)
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
	_, err := inspect.ParseRecords(strings.NewReader(in), 0)
	var ie *inspect.InputError
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
	var recs []inspect.InputRecord
	for i := 0; i < 25; i++ {
		recs = append(recs, inspect.InputRecord{Line: i + 1, Record: record.Record{Timestamp: t0.UnixMilli(), Value: []byte("hello")}})
	}
	cfg, err := kafkalog.ParseConfig(map[string]string{"segment.bytes": "200"}, config.AllowSmallSegments())
	if err != nil {
		t.Fatal(err)
	}
	var seen int
	res, err := inspect.Append(m, "/logs/f-0", recs, inspect.AppendOptions{Codec: compress.LZ4, BatchRecords: 10, Config: &cfg, Clock: c,
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
		t.Errorf("verify: OK %v, %d records, %d segments:\n%s", rep.OK, rep.Records, rep.Segments, dump(rep))
	}

	// A second append continues the offsets.
	res, err = inspect.Append(m, "/logs/f-0", recs[:1], inspect.AppendOptions{Config: &cfg, Clock: c})
	if err != nil || res[0].FirstOffset != 25 {
		t.Errorf("second append: %+v, %v", res, err)
	}
}

func TestAppendRefusesBeforeWriting(t *testing.T) {
	m := vfs.NewMem()
	c := &clock{t: t0}
	big := make([]byte, 2<<20)
	recs := []inspect.InputRecord{
		{Line: 1, Record: record.Record{Timestamp: t0.UnixMilli(), Value: []byte("ok")}},
		{Line: 2, Record: record.Record{Timestamp: t0.UnixMilli() + 2*3600*1000, Value: []byte("future")}},
		{Line: 3, Record: record.Record{Timestamp: t0.UnixMilli(), Value: big}},
	}
	_, err := inspect.Append(m, "/logs/f-0", recs, inspect.AppendOptions{BatchRecords: 1, Clock: c})
	var ie *inspect.InputError
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
	recs, err := inspect.ParseRecords(strings.NewReader(`{"headers":[{"key":"a","value":null},{"key":"a","value":"aGk="}],"timestamp":5}`), 0)
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
		recs, err := inspect.ParseRecords(bytes.NewReader(in), 0)
		nonBlank := 0
		for _, l := range bytes.Split(in, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				nonBlank++
			}
		}
		var ie *inspect.InputError
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
