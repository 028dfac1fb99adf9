package lake

import (
	"bytes"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/segkit/segkit/record"
)

// FuzzBuild: any record values (JSON or not, empty, null) build a file
// that reads back with one row per record, the same offsets, keys and
// raw values, and a second build gives the same bytes.
func FuzzBuild(f *testing.F) {
	f.Add([]byte(`{"a":1}`), []byte(`{"a":2.5,"b":"x"}`), []byte(""), false)
	f.Add([]byte(""), []byte(`not json`), []byte{0xff, 0}, true)
	f.Add([]byte(`{"a":true}`), []byte(`{"a":"s"}`), []byte(`{"":1}`), false)
	f.Fuzz(func(t *testing.T, v1, v2, key []byte, nullValue bool) {
		recs := []Record{
			{Offset: 5, Timestamp: t0, Key: key, Value: v1, Headers: []record.Header{{Key: []byte("h"), Value: key}, {Key: []byte(""), Value: nil}}},
			{Offset: 9, Timestamp: t0 + 1, Value: v2},
			{Offset: 10, Timestamp: -1, Key: []byte{}, Value: nil},
		}
		if nullValue {
			recs[0].Value = nil
		}
		var sch Schema
		for _, r := range recs {
			if o, err := ParseObject(r.Value, 8); err == nil {
				sch, _ = sch.Merge(o.Schema())
			}
		}
		var b builder
		out, df, err := b.build(3, sch, recs, 8, nil)
		if err != nil {
			t.Fatal(err)
		}
		first := bytes.Clone(out)
		out2, df2, err := b.build(3, sch, recs, 8, nil)
		if err != nil || !bytes.Equal(first, out2) || df.Checksum != df2.Checksum {
			t.Fatalf("second build differs (%v)", err)
		}
		rows, err := parquet.Read[fileRow](bytesReaderAt(first), int64(len(first)))
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(recs) || df.Rows != int64(len(recs)) {
			t.Fatalf("%d rows read, %d in the entry, want %d", len(rows), df.Rows, len(recs))
		}
		for i, r := range rows {
			w := recs[i]
			if r.Offset != w.Offset || !bytes.Equal(r.Key, w.Key) || (r.Key == nil) != (w.Key == nil) {
				t.Fatalf("row %d: offset %d key %q, want %d %q", i, r.Offset, r.Key, w.Offset, w.Key)
			}
			o, err := ParseObject(w.Value, 8)
			typed := w.Value != nil && len(sch.Fields) > 0 && err == nil && o.fitsIn(sch)
			if !typed && (!bytes.Equal(r.ValueRaw, w.Value) || (r.ValueRaw == nil) != (w.Value == nil)) {
				t.Fatalf("row %d: value_raw %q, want %q", i, r.ValueRaw, w.Value)
			}
			if typed && r.ValueRaw != nil {
				t.Fatalf("row %d: typed value also raw", i)
			}
		}
	})
}
