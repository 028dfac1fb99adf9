package lake

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"

	"github.com/segkit/segkit/record"
)

func benchRecords(n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{
			Offset: int64(i), Timestamp: t0 + int64(i),
			Key:     []byte(fmt.Sprintf("key-%d", i%1000)),
			Value:   []byte(fmt.Sprintf(`{"amount":%d.5,"id":%d,"name":"customer-%d","ok":%v}`, i%977, i, i%100, i%2 == 0)),
			Headers: []record.Header{{Key: []byte("trace"), Value: []byte("abc")}},
		}
	}
	return recs
}

// BenchmarkBuild is the data file build (JSON parsed, typed columns,
// exact statistics) of 10,000 records; BenchmarkParquetGoRows writes the
// same rows, already typed, with parquet-go's generic writer from
// memory: the indexer's build throughput is judged against it.
func BenchmarkBuild(b *testing.B) {
	recs := benchRecords(10_000)
	var sch Schema
	for _, r := range recs {
		o, _ := ParseObject(r.Value, DefaultMaxFields)
		sch, _ = sch.Merge(o.Schema())
	}
	var size int64
	for _, r := range recs {
		size += r.size()
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var bl builder // the values are parsed in the build, as Rebuild does
	for b.Loop() {
		if _, _, err := bl.build(0, sch, recs, DefaultMaxFields, nil); err != nil {
			b.Fatal(err)
		}
	}
}

type benchValue struct {
	Amount *float64 `parquet:"amount,optional"`
	ID     *int64   `parquet:"id,optional"`
	Name   *string  `parquet:"name,optional"`
	OK     *bool    `parquet:"ok,optional"`
}

type benchHeader struct {
	Key   string `parquet:"key"`
	Value []byte `parquet:"value,optional"`
}

type benchRow struct {
	Headers       []benchHeader `parquet:"headers"`
	Key           []byte        `parquet:"key,optional"`
	Offset        int64         `parquet:"offset"`
	Partition     int32         `parquet:"partition"`
	Timestamp     int64         `parquet:"timestamp,timestamp(millisecond)"`
	TimestampType int32         `parquet:"timestamp_type"`
	Value         *benchValue   `parquet:"value,optional"`
	ValueRaw      []byte        `parquet:"value_raw,optional"`
}

func BenchmarkParquetGoRows(b *testing.B) {
	recs := benchRecords(10_000)
	rows := make([]benchRow, len(recs))
	var size int64
	for i, r := range recs {
		o, _ := ParseObject(r.Value, DefaultMaxFields)
		v := &benchValue{}
		a, _ := o.Get("amount")
		f, _ := a.As(TypeDouble)
		fv := f.(float64)
		v.Amount = &fv
		id, _ := o.Get("id")
		n, _ := id.As(TypeInt64)
		nv := n.(int64)
		v.ID = &nv
		nm, _ := o.Get("name")
		s, _ := nm.As(TypeString)
		sv := s.(string)
		v.Name = &sv
		ok, _ := o.Get("ok")
		x, _ := ok.As(TypeBoolean)
		bv := x.(bool)
		v.OK = &bv
		rows[i] = benchRow{Headers: []benchHeader{{"trace", []byte("abc")}}, Key: r.Key, Offset: r.Offset, Timestamp: r.Timestamp, Value: v}
		size += r.size()
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		w := parquet.NewGenericWriter[benchRow](&buf, parquet.Compression(&snappy.Codec{}))
		if _, err := w.Write(rows); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
