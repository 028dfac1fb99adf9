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
// exact statistics, checksum) of 10,000 records; BenchmarkParquetGoRows
// writes the same rows, already typed, with parquet-go's generic writer
// from memory, the same schema and options: the indexer's build
// throughput is judged against it (TestBuildSpeedRatio, target 0.5x).
func BenchmarkBuild(b *testing.B) {
	recs := benchRecords(10_000)
	sch := schemaOf(recs, DefaultMaxFields)
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

// BenchmarkBuildRange is what the indexer does with a closed range of
// benchRecords(10_000) (Indexer.buildRange, entry only): "steady" in a
// table that already has the records' schema (one build, checking that
// every record fits), "new_table" in a table without it (a first build
// finds they do not, the range's schema is merged, the build redone),
// and "merge_first" the range's schema merged before one build
// (rangeSchema: every value scanned twice).
func BenchmarkBuildRange(b *testing.B) {
	recs := benchRecords(10_000)
	sch := schemaOf(recs, DefaultMaxFields)
	var size int64
	for _, r := range recs {
		size += r.size()
	}
	for _, c := range []struct {
		name  string
		table Schema
	}{{"steady", sch}, {"new_table", Schema{}}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var bl builder
			names := map[string]string{}
			for b.Loop() {
				if err := buildAsIndexer(&bl, c.table, recs, names); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("merge_first", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		bl := builder{entryOnly: true}
		names := map[string]string{}
		for b.Loop() {
			add := rangeSchema(recs, DefaultMaxFields, names)
			if _, _, err := bl.build(0, add, recs, DefaultMaxFields, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
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

// BenchmarkParquetGoRows writes benchRecords(10_000) as benchRows with
// parquet-go's generic writer, with the build's options and schema: the
// file is byte for byte the build's (TestParquetGoSameFile).
func BenchmarkParquetGoRows(b *testing.B) {
	recs := benchRecords(10_000)
	sch := schemaOf(recs, DefaultMaxFields)
	rows := benchRows(recs)
	var size int64
	for _, r := range recs {
		size += r.size()
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var buf bytes.Buffer
	for b.Loop() {
		if err := writeParquetGo(&buf, sch, rows); err != nil {
			b.Fatal(err)
		}
	}
}

// benchRows are benchRecords as Go values (their JSON values parsed):
// what parquet-go's generic writer writes from memory.
func benchRows(recs []Record) []benchRow {
	rows := make([]benchRow, len(recs))
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
		var hs []benchHeader
		for _, h := range r.Headers {
			hs = append(hs, benchHeader{string(h.Key), h.Value})
		}
		rows[i] = benchRow{Headers: hs, Key: r.Key, Offset: r.Offset, Timestamp: r.Timestamp, TimestampType: int32(r.TimestampType), Value: v}
	}
	return rows
}

// writeParquetGo writes rows to buf (reset first) with parquet-go's
// generic writer, the schema of the build for sch and the build's writer
// options.
func writeParquetGo(buf *bytes.Buffer, sch Schema, rows []benchRow) error {
	buf.Reset()
	w := parquet.NewGenericWriter[benchRow](buf, fileSchema(sch),
		parquet.CreatedBy(createdBy, formatVersion, formatVersion),
		parquet.Compression(&snappy.Codec{}),
		parquet.MaxRowsPerRowGroup(rowsPerRowGroup),
		parquet.PageBufferSize(pageBufferSize),
		parquet.DataPageVersion(2),
	)
	if _, err := w.Write(rows); err != nil {
		return err
	}
	return w.Close()
}

// buildAsIndexer builds recs as Indexer.buildRange does, in a table
// whose schema is table: the file's entry with the table's schema, and
// only if a record does not fit it (misfit), the range's schema merged
// in and the entry built again.
func buildAsIndexer(bl *builder, table Schema, recs []Record, names map[string]string) error {
	bl.entryOnly, bl.checkFit = true, true
	if _, _, err := bl.build(0, table, recs, DefaultMaxFields, nil); err != nil || !bl.misfit {
		return err
	}
	s, _ := table.Merge(rangeSchema(recs, DefaultMaxFields, names))
	_, _, err := bl.build(0, s, recs, DefaultMaxFields, nil)
	return err
}
