package lake

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"

	"github.com/segkit/segkit/record"
)

// refBuild is the data file build as it was before it was made faster
// (lake/build.go of commit 10ece1b: rows assembled as parquet.Row, written
// with WriteRows in batches of 256, values converted through
// JSONValue.As and statistics through acc.add), kept as the oracle of
// TestBuildSameBytes: the faster build must give the same bytes and the
// same entry. groupRows is MaxRowsPerRowGroup (rowsPerRowGroup in the
// real build; smaller in tests, a multiple of 64, to reach several row
// groups).
func refBuild(partition int32, s Schema, recs []Record, maxFields int, groupRows int64) ([]byte, DataFile, error) {
	var b struct {
		buf   bytes.Buffer
		names map[string]string
	}
	var objs []*Object
	sch := fileSchema(s)
	cols := sch.Columns()
	idx := map[string]int{}
	for i, p := range cols {
		idx[strings.Join(p, ".")] = i
	}
	st := make([]acc, len(cols))
	for i, p := range cols {
		st[i].name = strings.Join(p, ".")
		st[i].typ = statType(st[i].name, s)
	}
	b.buf.Reset()
	w := parquet.NewWriter(&b.buf, sch,
		parquet.CreatedBy(createdBy, formatVersion, formatVersion),
		parquet.Compression(&snappy.Codec{}),
		parquet.MaxRowsPerRowGroup(groupRows),
		parquet.PageBufferSize(pageBufferSize),
		parquet.DataPageVersion(2),
	)
	// Rows are assembled by hand, each value with its repetition and
	// definition levels, so that a null header value (def 1) differs from
	// an empty header list (def 0), and a typed object's missing field
	// (def 1: the value group is there) from a raw value (def 0: no
	// group). Levels, by column:
	//
	//	headers.key    rep 0 first element, 1 after; def 1, 0 empty list
	//	headers.value  rep as key; def 2 value, 1 null, 0 empty list
	//	key, value_raw def 1 value, 0 null
	//	value.F        def 2 value, 1 null or missing field, 0 not typed
	//	the rest       required: def 0
	vals := make([][]parquet.Value, len(cols))
	cPart, cOff, cTs, cTt, cKey, cRaw := idx[ColPartition], idx[ColOffset], idx[ColTimestamp], idx[ColTimestampType], idx[ColKey], idx[ColValueRaw]
	hk, hv := idx[ColHeaders+".key"], idx[ColHeaders+".value"]
	fieldCols := make([]int, len(s.Fields))
	for i, f := range s.Fields {
		fieldCols[i] = idx[ColValue+"."+f.Name]
	}
	// Rows go to the writer in batches: one WriteRows per row costs a
	// quarter of a build.
	const batchRows = 256
	rows := make([]parquet.Row, 0, batchRows)
	var spare []parquet.Row
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		if _, err := w.WriteRows(rows); err != nil {
			return fmt.Errorf("%w: %v", errBuild, err)
		}
		spare, rows = rows, spare[:0]
		return nil
	}
	var obj Object
	for i := range recs {
		r := &recs[i]
		for c := range vals {
			vals[c] = vals[c][:0]
		}
		put := func(c int, v parquet.Value, rep, def int, stat any) {
			vals[c] = append(vals[c], v.Level(rep, def, c))
			st[c].add(stat)
		}
		putBytes := func(c int, b []byte, rep, def int) {
			vals[c] = append(vals[c], parquet.ByteArrayValue(b).Level(rep, def, c))
			st[c].addBytes(b)
		}
		null := func(c, rep, def int) { put(c, parquet.NullValue(), rep, def, nil) }
		put(cPart, parquet.Int32Value(partition), 0, 0, int64(partition))
		put(cOff, parquet.Int64Value(r.Offset), 0, 0, r.Offset)
		put(cTs, parquet.Int64Value(r.Timestamp), 0, 0, r.Timestamp)
		put(cTt, parquet.Int32Value(int32(r.TimestampType)), 0, 0, int64(r.TimestampType))
		if r.Key != nil {
			putBytes(cKey, r.Key, 0, 1)
		} else {
			null(cKey, 0, 0)
		}
		if len(r.Headers) == 0 {
			null(hk, 0, 0) // an empty list is one null per leaf
			null(hv, 0, 0)
		}
		for j, h := range r.Headers {
			rep := min(j, 1)
			putBytes(hk, h.Key, rep, 1)
			if h.Value != nil {
				putBytes(hv, h.Value, rep, 2)
			} else {
				null(hv, rep, 1)
			}
		}
		typed := false
		if r.Value != nil && len(s.Fields) > 0 {
			var o Object
			var err error
			if i < len(objs) && objs[i] != nil {
				o = *objs[i]
			} else {
				if b.names == nil {
					b.names = map[string]string{}
				}
				o, err = parseObject(r.Value, maxFields, b.names)
			}
			if err == nil && o.fitsIn(s) {
				obj, typed = o, true
			}
		}
		k := 0 // obj's next field: both lists are sorted by name
		for fi, f := range s.Fields {
			c := fieldCols[fi]
			if !typed {
				null(c, 0, 0)
				continue
			}
			for k < len(obj.Names) && obj.Names[k] < f.Name {
				k++
			}
			var v any
			ok := false
			if k < len(obj.Names) && obj.Names[k] == f.Name {
				v, ok = obj.Values[k].As(f.Type)
			}
			if !ok {
				null(c, 0, 1)
				continue
			}
			var pv parquet.Value
			switch x := v.(type) {
			case bool:
				pv = parquet.BooleanValue(x)
			case int64:
				pv = parquet.Int64Value(x)
			case float64:
				pv = parquet.DoubleValue(x)
			case string:
				pv = parquet.ByteArrayValue([]byte(x))
			}
			put(c, pv, 0, 2, v)
		}
		if r.Value != nil && !typed {
			putBytes(cRaw, r.Value, 0, 1)
		} else {
			null(cRaw, 0, 0)
		}
		var row parquet.Row
		if k := len(rows); k < cap(spare) {
			row = spare[:k+1][k][:0]
		}
		for _, v := range vals {
			row = append(row, v...)
		}
		rows = append(rows, row)
		if len(rows) == batchRows {
			if err := flush(); err != nil {
				return nil, DataFile{}, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, DataFile{}, err
	}
	if err := w.Close(); err != nil {
		return nil, DataFile{}, fmt.Errorf("%w: %v", errBuild, err)
	}
	out := b.buf.Bytes()
	footer, err := footerOf(out)
	if err != nil {
		return nil, DataFile{}, err
	}
	sum := sha256.Sum256(out)
	df := DataFile{
		Partition: partition,
		Rows:      int64(len(recs)),
		Bytes:     int64(len(out)),
		Footer:    append([]byte(nil), footer...),
		Checksum:  "sha256:" + hex.EncodeToString(sum[:]),
		Columns:   make([]ColumnStats, len(st)),
	}
	for i := range st {
		df.Columns[i] = st[i].stats(i)
	}
	return out, df, nil
}

// TestBuildSameBytes: the build gives the bytes and the entry of
// refBuild, the row writer it replaced, for records of every kind (typed,
// widened to string, nested json, escaped and invalid UTF-8 strings, raw,
// null, untypeable, many headers or none), over several pages and,
// with smaller row groups, several row groups; with the values parsed in
// the build (Rebuild) or before it (the indexer), and with one builder
// reused.
func TestBuildSameBytes(t *testing.T) {
	sets := []struct {
		name string
		recs []Record
	}{
		{"bench", benchRecords(3000)},
		{"mixed_many", mixedRecords(20_000, 4)},
		{"mixed", mixedRecords(4000, 1)},
		{"big_values", bigRecords(1500, 2)},
		{"one", mixedRecords(1, 3)},
		{"empty", nil},
	}
	if testing.Short() {
		sets = slices.DeleteFunc(sets, func(s struct {
			name string
			recs []Record
		}) bool {
			return s.name == "mixed_many"
		})
	}
	var reused builder
	for _, set := range sets {
		all := schemaOf(set.recs, 16)
		half := Schema{Fields: all.Fields[:len(all.Fields)/2]}
		for _, sc := range []struct {
			name string
			s    Schema
		}{{"schema", all}, {"half_schema", half}, {"no_schema", Schema{}}} {
			for _, groupRows := range []int{0, 320} {
				name := fmt.Sprintf("%s/%s/group=%d", set.name, sc.name, groupRows)
				t.Run(name, func(t *testing.T) {
					want := int64(groupRows)
					if want == 0 {
						want = rowsPerRowGroup
					}
					wantOut, wantDF, err := refBuild(7, sc.s, set.recs, 16, want)
					if err != nil {
						t.Fatal(err)
					}
					var objs []*Object
					for _, r := range set.recs {
						var p *Object
						if o, err := ParseObject(r.Value, 16); err == nil {
							p = &o
						}
						objs = append(objs, p)
					}
					for _, tc := range []struct {
						name string
						b    *builder
						objs []*Object
					}{{"new", &builder{}, nil}, {"reused", &reused, nil}, {"parsed", &builder{}, objs}, {"entry_only", &builder{entryOnly: true}, nil}} {
						tc.b.groupRows = groupRows
						out, df, err := tc.b.build(7, sc.s, set.recs, 16, tc.objs)
						if err != nil {
							t.Fatal(err)
						}
						if tc.b.entryOnly {
							if out != nil {
								t.Fatalf("%s: %d bytes returned", tc.name, len(out))
							}
							out = wantOut
						}
						if !bytes.Equal(out, wantOut) {
							t.Fatalf("%s: %d bytes %s, want %d bytes %s", tc.name, len(out), df.Checksum, len(wantOut), wantDF.Checksum)
						}
						if !reflect.DeepEqual(df, wantDF) {
							t.Fatalf("%s: entry\n%+v\nwant\n%+v", tc.name, df, wantDF)
						}
					}
					if groupRows != 0 && len(set.recs) > 2*groupRows {
						f, err := parquet.OpenFile(bytes.NewReader(wantOut), int64(len(wantOut)))
						if err != nil {
							t.Fatal(err)
						}
						if n := len(f.RowGroups()); n < 3 {
							t.Fatalf("%d row groups", n)
						}
					}
				})
			}
		}
	}
}

// schemaOf is the merge of the records' schemas, as the indexer makes it.
func schemaOf(recs []Record, maxFields int) Schema {
	var s Schema
	for _, r := range recs {
		if o, err := ParseObject(r.Value, maxFields); err == nil {
			s, _ = s.Merge(o.Schema())
		}
	}
	return s
}

// mixedRecords are n records of every kind, drawn with seed.
func mixedRecords(n int, seed uint64) []Record {
	rng := rand.New(rand.NewPCG(seed, 17))
	vals := []func(i int) string{
		func(i int) string { return fmt.Sprintf(`{"a":%d,"b":"s%d","c":true}`, rng.IntN(2000)-1000, i) },
		func(i int) string { return fmt.Sprintf(`{ "c" : false , "a" : %d.25 , "d":null }`, i) },
		func(i int) string { return fmt.Sprintf(`{"e":{"x":[1, 2 ,{"y":"%d"}]},"f":[ ]}`, i) },
		func(i int) string { return `{"b":"esc\n\u00e9\"q\\","g":"\ud800 lone"}` },
		func(i int) string { return "{\"b\":\"bad \xff utf8\",\"a\":1e400}" },
		func(i int) string { return fmt.Sprintf(`{"h":%d}`, rng.Int64()) },
		func(i int) string { return `{"h":"now a string","a":99999999999999999999}` },
		func(i int) string { return `{"a":1,"a":2}` },
		func(i int) string { return `{"":1}` },
		func(i int) string { return `[1,2,3]` },
		func(i int) string { return `not json at all` },
		func(i int) string { return `{"truncated":` },
		func(i int) string { return "<null>" },
		func(i int) string { return "" },
		func(i int) string {
			return `{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17}`
		},
		func(i int) string { return `{"z":-0.0,"y":-0,"x":1.5e-300,"w":"-"}` },
		func(i int) string {
			return fmt.Sprintf(`{"g":"%s","c":%v}`, strings.Repeat("x", rng.IntN(40)), i%2 == 0)
		},
		func(i int) string { return `{"\u0061":5,"c":true,"b":"\/"}` },
		func(i int) string { return `{"zz":null,"a":-0,"y":-9223372036854775808}` },
		func(i int) string { return `{"a":3,"a":null}` },
		func(i int) string { return ` { "a" : 1E5 , "e" : { "x" : [ 1 , "a b" ] } } ` },
		func(i int) string { return `{"y":9223372036854775808,"x":123456789012345678901234567890,"w":1e400}` },
		func(i int) string { return `{"c":"yes","e":"not json","f":{"k":null}}` },
	}
	recs := make([]Record, n)
	ts := t0
	for i := range recs {
		ts += rng.Int64N(3) - 1
		r := Record{Offset: int64(100 + 2*i), Timestamp: ts, TimestampType: record.TimestampType(rng.IntN(3) - 1)}
		switch rng.IntN(4) {
		case 0:
		case 1:
			r.Key = []byte{}
		default:
			r.Key = []byte(fmt.Sprintf("key\x00%d\xfe", rng.IntN(50)))
		}
		for range rng.IntN(4) {
			h := record.Header{Key: []byte(fmt.Sprintf("h%d", rng.IntN(5)))}
			if rng.IntN(3) > 0 {
				h.Value = []byte(fmt.Sprintf("v'%d\"", rng.IntN(1000)))
			}
			r.Headers = append(r.Headers, h)
		}
		if v := vals[rng.IntN(len(vals))](i); v != "<null>" {
			r.Value = []byte(v)
		}
		recs[i] = r
	}
	return recs
}

// bigRecords are n records with large values, typed and raw, that fill
// several pages of their columns.
func bigRecords(n int, seed uint64) []Record {
	rng := rand.New(rand.NewPCG(seed, 29))
	recs := make([]Record, n)
	for i := range recs {
		b := make([]byte, 200+rng.IntN(800))
		for j := range b {
			b[j] = 'a' + byte(rng.IntN(26))
		}
		v := fmt.Sprintf(`{"text":"%s","n":%d}`, b, rng.Int64())
		if i%3 == 0 {
			v = string(b)
		}
		recs[i] = Record{Offset: int64(i), Timestamp: t0 + int64(i), Key: b[:8], Value: []byte(v)}
	}
	return recs
}

// FuzzBuildSameBytes: for any record values, the build gives the bytes
// and the entry of refBuild, with the schema the values bring and with a
// fixed schema of every type.
func FuzzBuildSameBytes(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":"x"}`), []byte(`{"b":"y","a":2.5}`), []byte(`{"c":[1, 2]}`))
	f.Add([]byte(`{"a":-0,"d":true}`), []byte(`{"\u0061":1}`), []byte(`{"a":1,"a":2}`))
	f.Add([]byte(`{"j":{"x": 1}}`), []byte(`not json`), []byte(`{"s":"\ud800","n":1e400}`))
	fixed := Schema{Fields: []Field{{"a", TypeDouble}, {"b", TypeString}, {"c", TypeJSON}, {"d", TypeBoolean}, {"i", TypeInt64}, {"j", TypeJSON}, {"s", TypeString}}}
	f.Fuzz(func(t *testing.T, v1, v2, v3 []byte) {
		var recs []Record
		for i, v := range [][]byte{v1, v2, v3, v1, v3, v2} {
			recs = append(recs, Record{Offset: int64(i), Timestamp: t0, Key: v, Value: v})
		}
		for _, s := range []Schema{schemaOf(recs, 4), fixed} {
			want, wantDF, err := refBuild(1, s, recs, 4, rowsPerRowGroup)
			if err != nil {
				t.Fatal(err)
			}
			var b builder
			got, df, err := b.build(1, s, recs, 4, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) || !reflect.DeepEqual(df, wantDF) {
				t.Fatalf("schema %v: build differs from refBuild\n%+v\nwant\n%+v", s, df.Columns, wantDF.Columns)
			}
			e := builder{entryOnly: true}
			if _, df, err := e.build(1, s, recs, 4, nil); err != nil || !reflect.DeepEqual(df, wantDF) {
				t.Fatalf("schema %v: entry-only build differs from refBuild (%v)", s, err)
			}
		}
	})
}

// TestRangeSchema: rangeSchema is the fold of Schema.Merge over the
// records' parsed values.
func TestRangeSchema(t *testing.T) {
	for _, recs := range [][]Record{benchRecords(500), mixedRecords(3000, 9), bigRecords(100, 3), nil} {
		for _, maxFields := range []int{4, 16, DefaultMaxFields} {
			want := schemaOf(recs, maxFields)
			if got := rangeSchema(recs, maxFields, map[string]string{}); !got.Equal(want) {
				t.Fatalf("maxFields %d: %v, want %v", maxFields, got, want)
			}
		}
	}
}
