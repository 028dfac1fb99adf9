package lake

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
)

// The metadata column names and the file format constants. These are
// part of the data file format and should not be changed: a rebuild must
// give the bytes of the first build.
const (
	ColPartition     = "partition"
	ColOffset        = "offset"
	ColTimestamp     = "timestamp"
	ColTimestampType = "timestamp_type"
	ColKey           = "key"
	ColHeaders       = "headers" // repeated group {key, value}
	ColValue         = "value"   // optional group of the typed JSON fields
	ColValueRaw      = "value_raw"

	// createdBy is the footer's created_by, fixed so that the bytes do
	// not depend on the build (parquet-go's default names its version).
	createdBy = "segkit lake"
	// formatVersion names this layout in created_by, which reads
	// "segkit lake version 1(build 1)" (parquet-go's format).
	formatVersion = "1"
	// rowsPerRowGroup bounds a row group; fixed, as the file's layout
	// depends on it.
	rowsPerRowGroup = 1 << 20
	// pageBufferSize is the data page size target; fixed likewise.
	pageBufferSize = 256 << 10
)

// ColumnStats are the exact statistics of one leaf column of a data file,
// computed from the values written (not read from the footer: Parquet
// footers carry no NaN counts, and their min/max may be truncated).
type ColumnStats struct {
	// ID is the leaf's index in the file's schema (Parquet column order).
	ID int
	// Name is the leaf's dotted path: "offset", "headers.key",
	// "value.amount".
	Name string
	// Type is the leaf's type: int32, int64, timestamp_ms, boolean,
	// double, string, json or binary.
	Type string
	// ValueCount counts the leaf's values, nulls included (Parquet's
	// num_values: a row with no header counts one null header key).
	ValueCount int64
	NullCount  int64
	NaNCount   int64
	// Min and Max are the smallest and largest non-null, non-NaN values
	// as text (DuckLake's VARCHAR bounds, exact here): integers and
	// doubles in Go's shortest form, booleans as true/false, timestamps
	// as "2006-01-02 15:04:05.000+00" (UTC), strings as they are, binary
	// with bytes outside printable ASCII (and backslash) as \xNN, as
	// DuckDB prints a BLOB. HasMinMax is false when every value is null
	// or NaN.
	Min, Max  string
	HasMinMax bool
}

// DataFile is a built data file's entry: what the catalog keeps once the
// bytes are dropped.
type DataFile struct {
	// ID is the catalog's data_file_id (0 until added); Table its
	// table_id (set by the catalog's listings).
	ID        int64
	Table     int64
	Partition int32
	// StartOffset and EndOffset are the range's offsets, inclusive. The
	// files of one range (one per time bucket) share them.
	StartOffset, EndOffset int64
	// Bucket is the start of the file's time bucket (epoch ms).
	Bucket int64
	// Trigger is what closed the range.
	Trigger Trigger
	// SchemaVersion is the table schema the file was written with.
	SchemaVersion int64
	Rows          int64
	Bytes         int64
	// Footer is the Parquet footer: the FileMetaData thrift bytes, its
	// 4-byte little-endian length and "PAR1".
	Footer []byte
	// Checksum is "sha256:" and the hex SHA-256 of the bytes.
	Checksum string
	Columns  []ColumnStats
	// Expired says every offset of the file is below the partition's
	// earliest offset (retention deleted them).
	Expired bool
}

// fileSchema is the Parquet schema of a data file with the value fields
// of s.
func fileSchema(s Schema) *parquet.Schema {
	bin := parquet.Leaf(parquet.ByteArrayType)
	g := parquet.Group{
		ColPartition:     parquet.Int(32),
		ColOffset:        parquet.Int(64),
		ColTimestamp:     parquet.Timestamp(parquet.Millisecond),
		ColTimestampType: parquet.Int(32),
		ColKey:           parquet.Optional(bin),
		ColHeaders: parquet.Repeated(parquet.Group{
			"key":   parquet.String(),
			"value": parquet.Optional(bin),
		}),
		ColValueRaw: parquet.Optional(bin),
	}
	if len(s.Fields) > 0 {
		vg := parquet.Group{}
		for _, f := range s.Fields {
			vg[f.Name] = parquet.Optional(leafOf(f.Type))
		}
		g[ColValue] = parquet.Optional(vg)
	}
	return parquet.NewSchema("kafka", g)
}

func leafOf(t ColumnType) parquet.Node {
	switch t {
	case TypeBoolean:
		return parquet.Leaf(parquet.BooleanType)
	case TypeInt64:
		return parquet.Int(64)
	case TypeDouble:
		return parquet.Leaf(parquet.DoubleType)
	case TypeJSON:
		return parquet.JSON()
	}
	return parquet.String()
}

// builder builds data files; it keeps its buffers between builds.
type builder struct {
	buf   bytes.Buffer
	names map[string]string // interned JSON field names
}

// errBuild wraps a failure of the Parquet writer.
var errBuild = errors.New("lake: data file build")

// build writes the records (offset order, one time bucket) as one
// Parquet file with the table schema s and returns its bytes (valid until
// the next build) and its entry. The bytes depend only on partition, s
// and the records: no clock, no time zone, no map order (parquet-go
// orders a group's fields by name), fixed writer options.
//
// objs, if not nil, holds each record's value already parsed
// (ParseObject; nil for a value that is not an object), to spare parsing
// it again.
func (b *builder) build(partition int32, s Schema, recs []Record, maxFields int, objs []*Object) ([]byte, DataFile, error) {
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
		parquet.MaxRowsPerRowGroup(rowsPerRowGroup),
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

// fitsIn reports whether every non-null field of o is a column of s whose
// type o's type merges into without change (true once s is merged with
// o's schema).
func (o *Object) fitsIn(s Schema) bool {
	j := 0 // s's next field: both lists are sorted by name
	for i, n := range o.Names {
		t := o.Values[i].Type
		if t == "" {
			continue
		}
		for j < len(s.Fields) && s.Fields[j].Name < n {
			j++
		}
		if j == len(s.Fields) || s.Fields[j].Name != n || MergeType(s.Fields[j].Type, t) != s.Fields[j].Type {
			return false
		}
	}
	return true
}

// footerOf returns the footer of a Parquet file: the FileMetaData, its
// length and the magic.
func footerOf(b []byte) ([]byte, error) {
	if len(b) < 12 || string(b[len(b)-4:]) != "PAR1" {
		return nil, fmt.Errorf("%w: no Parquet footer", errBuild)
	}
	n := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
	if n > int64(len(b)-12) {
		return nil, fmt.Errorf("%w: footer length %d", errBuild, n)
	}
	return b[int64(len(b))-8-n:], nil
}

// statType names a leaf's type for ColumnStats.
func statType(name string, s Schema) string {
	switch name {
	case ColPartition, ColTimestampType:
		return "int32"
	case ColOffset:
		return "int64"
	case ColTimestamp:
		return "timestamp_ms"
	case ColKey, ColValueRaw, ColHeaders + ".value":
		return "binary"
	case ColHeaders + ".key":
		return "string"
	}
	if f, ok := s.Field(strings.TrimPrefix(name, ColValue+".")); ok {
		return string(f.Type)
	}
	return "string"
}

// acc accumulates one column's statistics.
type acc struct {
	name, typ      string
	n, nulls, nans int64
	has            bool
	minI, maxI     int64
	minF, maxF     float64
	minS, maxS     string
	minB, maxB     bool
}

func (a *acc) add(v any) {
	a.n++
	switch x := v.(type) {
	case nil:
		a.nulls++
	case bool:
		if !a.has {
			a.minB, a.maxB = x, x
		}
		a.minB, a.maxB = a.minB && x, a.maxB || x
		a.has = true
	case int64:
		if !a.has || x < a.minI {
			a.minI = x
		}
		if !a.has || x > a.maxI {
			a.maxI = x
		}
		a.has = true
	case float64:
		if math.IsNaN(x) {
			a.nans++
			return
		}
		if !a.has || x < a.minF {
			a.minF = x
		}
		if !a.has || x > a.maxF {
			a.maxF = x
		}
		a.has = true
	case string:
		// Parquet orders byte arrays as unsigned bytes: Go's string
		// comparison.
		if !a.has || x < a.minS {
			a.minS = x
		}
		if !a.has || x > a.maxS {
			a.maxS = x
		}
		a.has = true
	}
}

// addBytes is add(string(b)) without converting b unless it becomes a
// bound.
func (a *acc) addBytes(b []byte) {
	a.n++
	if !a.has || string(b) < a.minS {
		a.minS = string(b)
	}
	if !a.has || string(b) > a.maxS {
		a.maxS = string(b)
	}
	a.has = true
}

func (a *acc) stats(id int) ColumnStats {
	cs := ColumnStats{ID: id, Name: a.name, Type: a.typ, ValueCount: a.n, NullCount: a.nulls, NaNCount: a.nans, HasMinMax: a.has}
	if !a.has {
		return cs
	}
	switch a.typ {
	case "boolean":
		cs.Min, cs.Max = strconv.FormatBool(a.minB), strconv.FormatBool(a.maxB)
	case "int32", "int64":
		cs.Min, cs.Max = strconv.FormatInt(a.minI, 10), strconv.FormatInt(a.maxI, 10)
	case "timestamp_ms":
		cs.Min, cs.Max = formatTimestamp(a.minI), formatTimestamp(a.maxI)
	case "double":
		cs.Min, cs.Max = strconv.FormatFloat(a.minF, 'g', -1, 64), strconv.FormatFloat(a.maxF, 'g', -1, 64)
	case "binary":
		cs.Min, cs.Max = blobText(a.minS), blobText(a.maxS)
	default:
		cs.Min, cs.Max = a.minS, a.maxS
	}
	return cs
}

// formatTimestamp is ms as UTC text, whatever the local time zone.
func formatTimestamp(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000+00")
}

// blobText is b as DuckDB prints a BLOB: printable ASCII as is, other
// bytes, the backslash and the quotes as \xNN.
func blobText(b string) string {
	var sb strings.Builder
	for i := 0; i < len(b); i++ {
		c := b[i]
		// DuckDB escapes the quotes too (seen with DuckDB 2.0.1,
		// TestDuckDBAgrees).
		if c >= 0x20 && c < 0x7f && c != '\\' && c != '\'' && c != '"' {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, "\\x%02X", c)
		}
	}
	return sb.String()
}
