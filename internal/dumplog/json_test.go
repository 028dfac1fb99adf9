package dumplog_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/dumplog"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/record"
)

// The JSON contract of docs/cli.md's "segviz dump --json" table: the fields
// of each line type, every one of them present.
var (
	batchFields = []string{"type", "file", "position", "baseOffset", "lastOffset", "count", "magic", "compression",
		"timestampType", "baseTimestamp", "maxTimestamp", "producerId", "producerEpoch", "baseSequence",
		"partitionLeaderEpoch", "isTransactional", "isControl", "crc", "crcValid", "size"}
	recordFields = []string{"type", "offset", "timestamp", "keySize", "valueSize", "headers"}
)

// contractLog builds a log whose records exercise every nullable field: a
// null key, a null value, a header with a null value, an empty one, and a
// transaction marker.
func contractLog(t *testing.T) []byte {
	t.Helper()
	var w record.Builder
	spec := record.NewBatchSpec(0, compress.Gzip)
	log, err := w.AppendBatch(nil, &spec, []record.Record{
		{Timestamp: 1_700_000_000_000, Key: []byte("k"), Value: nil, Headers: []record.Header{{Key: []byte("h-null"), Value: nil}, {Key: []byte("h-empty"), Value: []byte{}}}},
		{Timestamp: 1_700_000_000_001, Key: nil, Value: []byte{0xff, 0}, Headers: []record.Header{{Key: []byte("h"), Value: []byte("v")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	spec = record.NewBatchSpec(2, compress.None)
	spec.ProducerID, spec.ProducerEpoch = 7, 1
	log, err = w.AppendEndTxnMarker(log, &spec, record.EndTxnMarker{Type: record.ControlCommit, CoordinatorEpoch: 3}, 1_700_000_000_002)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// TestJSONContract dumps logs with --deep --print-data --json and checks
// every documented field of every line against what package record
// decodes from the same bytes: present (null where null), with the value
// record gives.
func TestJSONContract(t *testing.T) {
	logs := map[string][]byte{"contract/00000000000000000000.log": contractLog(t)}
	var roots []string
	if root, err := realdata.Find(); err == nil {
		roots = append(roots, root)
	}
	if root, err := realdata.BrokerDir(); err == nil {
		roots = append(roots, root)
	}
	for _, dir := range roots {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".log") || strings.HasSuffix(p, ".checkpoint")) {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				logs[p] = firstEntries(b, 64<<10)
			}
			return nil
		})
	}
	lines := 0
	for path, log := range logs {
		for _, printData := range []bool{false, true} {
			lines += checkJSONContract(t, path, log, printData)
		}
	}
	t.Logf("%d files, %d JSON lines checked", len(logs), lines)
}

// firstEntries returns the prefix of log made of the entries that start
// in its first n bytes: the big real logs repeat themselves, and the test
// must stay quick.
func firstEntries(log []byte, n int64) []byte {
	var rs record.ReaderScanner
	rs.Reset(bytes.NewReader(log), int64(len(log)), "", 0)
	for rs.ValidEnd() < n && rs.Next() {
	}
	return log[:rs.ValidEnd()]
}

func checkJSONContract(t *testing.T, path string, log []byte, printData bool) int {
	t.Helper()
	var out bytes.Buffer
	if _, err := dumplog.Log(&out, bytes.NewReader(log), int64(len(log)), path, dumplog.Options{JSON: true, Deep: true, PrintData: printData}); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&out)
	dec.UseNumber()
	next := func() map[string]any {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return m
	}
	n := 0
	var rs record.ReaderScanner
	rs.Reset(bytes.NewReader(log), int64(len(log)), path, 0)
	var it record.Iterator
	var lit record.LegacyIterator
	var rec record.Record
	for rs.Next() {
		e := rs.Entry()
		var recs []want
		if e.Magic == record.MagicV2 {
			it.Reset(&e.Batch)
			for it.Next(&rec) {
				recs = append(recs, wantRecord(&rec, e.Batch.Attributes.IsControl(), printData))
			}
		} else {
			lit.Reset(&e.Legacy)
			for lit.Next(&rec) {
				recs = append(recs, wantRecord(&rec, false, printData))
			}
		}
		compare(t, path, next(), wantBatch(e, path, recs), batchFields)
		n++
		for _, r := range recs {
			fields := recordFields
			if _, ok := r["controlType"]; ok {
				fields = append(slices.Clone(fields), "controlType")
			}
			if printData {
				fields = append(slices.Clone(fields), "key", "value")
			}
			compare(t, path, next(), r, fields)
			n++
		}
	}
	if rs.Err() != nil {
		t.Fatalf("%s: %v", path, rs.Err())
	}
	if dec.More() {
		t.Fatalf("%s: JSON lines left after the last entry", path)
	}
	return n
}

// want is a JSON line as the contract says it must be, with values in the
// forms encoding/json decodes them to (json.Number for numbers).
type want map[string]any

func num[T int | int8 | int16 | int32 | int64 | uint32](v T) json.Number {
	return json.Number(strconv.FormatInt(int64(v), 10))
}

// b64 is a byte string as the JSON shows it: base64, or null.
func b64(b []byte) any {
	if b == nil {
		return nil
	}
	return base64.StdEncoding.EncodeToString(b)
}

func wantBatch(e *record.Entry, path string, recs []want) want {
	w := want{"type": "batch", "file": path, "position": num(e.Position), "magic": num(e.Magic), "size": num(e.Size()), "crcValid": true}
	if e.Magic == record.MagicV2 {
		b := &e.Batch
		a := b.Attributes
		w["baseOffset"], w["lastOffset"], w["count"] = num(b.BaseOffset), num(b.LastOffset()), num(b.RecordCount)
		w["compression"], w["timestampType"] = a.Codec().String(), a.TimestampType().String()
		w["baseTimestamp"], w["maxTimestamp"] = num(b.BaseTimestamp), num(b.MaxTimestamp)
		w["producerId"], w["producerEpoch"], w["baseSequence"] = num(b.ProducerID), num(b.ProducerEpoch), num(b.BaseSequence)
		w["partitionLeaderEpoch"], w["isTransactional"], w["isControl"] = num(b.PartitionLeaderEpoch), a.IsTransactional(), a.IsControl()
		w["crc"] = num(b.CRC)
		return w
	}
	m := &e.Legacy
	w["baseOffset"], w["lastOffset"], w["count"] = num(m.Offset), num(m.Offset), num(1)
	if m.Codec() != compress.None {
		w["count"] = num(len(recs))
		if len(recs) > 0 {
			w["baseOffset"] = recs[0]["offset"]
		}
	}
	w["compression"], w["timestampType"] = m.Codec().String(), m.TimestampType().String()
	w["baseTimestamp"], w["maxTimestamp"] = num(m.Timestamp), num(m.Timestamp)
	w["producerId"], w["producerEpoch"], w["baseSequence"] = num(record.NoProducerID), num(record.NoProducerEpoch), num(record.NoSequence)
	w["partitionLeaderEpoch"], w["isTransactional"], w["isControl"] = num(record.NoPartitionLeaderEpoch), false, false
	w["crc"] = num(m.CRC)
	return w
}

func wantRecord(r *record.Record, control, printData bool) want {
	size := func(b []byte) json.Number {
		if b == nil {
			return num(-1)
		}
		return num(len(b))
	}
	headers := []any{}
	for _, h := range r.Headers {
		hj := map[string]any{"key": string(h.Key)}
		if printData {
			hj["value"] = b64(h.Value)
		}
		headers = append(headers, hj)
	}
	w := want{"type": "record", "offset": num(r.Offset), "timestamp": num(r.Timestamp), "keySize": size(r.Key), "valueSize": size(r.Value), "headers": headers}
	if control {
		if ct, err := record.ParseControlKey(r.Key); err == nil {
			w["controlType"] = ct.String()
		}
	}
	if printData {
		w["key"], w["value"] = b64(r.Key), b64(r.Value)
	}
	return w
}

// compare checks that got has exactly the fields, each equal to want's.
func compare(t *testing.T, path string, got map[string]any, w want, fields []string) {
	t.Helper()
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	sorted := slices.Sorted(slices.Values(fields))
	if !slices.Equal(keys, sorted) {
		t.Fatalf("%s: %s line has fields %v, the contract says %v", path, w["type"], keys, sorted)
	}
	for _, f := range fields {
		if !reflect.DeepEqual(got[f], w[f]) {
			t.Fatalf("%s: %s line at %v: %s = %#v, record decodes %#v", path, w["type"], got["position"], f, got[f], w[f])
		}
	}
}

// TestJSONNullHeaderValue pins the fix of a header whose value is null:
// with --print-data, "value": null, not a missing field.
func TestJSONNullHeaderValue(t *testing.T) {
	log := contractLog(t)
	var out bytes.Buffer
	if _, err := dumplog.Log(&out, bytes.NewReader(log), int64(len(log)), "x.log", dumplog.Options{JSON: true, PrintData: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"headers":[{"key":"h-null","value":null},{"key":"h-empty","value":""}],"key":"aw==","value":null`) {
		t.Fatalf("record line:\n%s", out.String())
	}
	out.Reset()
	dumplog.Log(&out, bytes.NewReader(log), int64(len(log)), "x.log", dumplog.Options{JSON: true, Deep: true})
	if strings.Contains(out.String(), `"value"`) {
		t.Fatalf("values without --print-data:\n%s", out.String())
	}
}
