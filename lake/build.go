package lake

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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

// builder builds data files; it keeps its buffers between builds (but
// not a large file's bytes).
type builder struct {
	// entryOnly says the caller wants the entry, not the bytes (the
	// indexer, which drops them): the bytes are hashed as they are
	// written and not kept, and build returns nil bytes. The build's
	// peak heap is then about the file once (the row group's pages),
	// instead of twice.
	entryOnly bool
	out       fileSink
	names     map[string]string // interned JSON field names
	obj       Object            // the record's value, parsed (reused)
	// vals holds each column's values for the rows of the current chunk,
	// the first nv[c] of vals[c] (kept at their full length: a put then
	// writes no slice header, with its write barrier); st each column's
	// statistics.
	vals [][]parquet.Value
	nv   []int
	st   []acc
	// arena holds the bytes of the current chunk's values that are not
	// in the records (unescaped strings): the values point into it until
	// the chunk is written, and it is reused after.
	arena []byte
	cbuf  bytes.Buffer // json.Compact's output, copied to arena
	fs    fieldScan    // the table schema, to read record values against
	// groupRows bounds a row group: rowsPerRowGroup when 0; tests make it
	// smaller (a multiple of chunkRows) to reach several row groups.
	groupRows int
	// checkFit has build note in misfit whether a record's value parses
	// as an object that does not fit s (a new field, a wider type): a
	// schema merged with the records' would then type it, and the file
	// built with s is not the one to keep (Indexer.buildRange builds with
	// the table's schema first, and merges only when misfit says so).
	checkFit, misfit bool
}

// chunkRows is the number of rows given to the column writers at a time.
// parquet-go's Writer.WriteRows hands rows to its columns in runs of 64
// from the start of each row group (ConcurrentRowGroupWriter.writeRows'
// maxRowsPerWrite) and cuts a column's page only between runs, when its
// buffer reached the page size: writing the columns directly in the same
// runs gives the same pages, and the same bytes, as writing rows
// (TestBuildSameBytes holds the build to the row writer's bytes), without
// assembling rows and splitting them again into columns.
const chunkRows = 64

// errBuild wraps a failure of the Parquet writer.
var errBuild = errors.New("lake: data file build")

// build writes the records (offset order, one time bucket) as one
// Parquet file with the table schema s and returns its bytes (valid until
// the next build; nil if b.entryOnly) and its entry. The bytes depend only on partition, s
// and the records: no clock, no time zone, no map order (parquet-go
// orders a group's fields by name), fixed writer options.
//
// objs, if not nil, holds each record's value already parsed
// (ParseObject; nil for a value that is not an object), to spare parsing
// it again. It does not spare much: without objs, most values are read
// by fieldScan, in one pass that allocates nothing, which is faster than
// the Objects' path (BenchmarkBuildRange), and an Object kept per record
// for a range costs about 300 bytes a record (TestBuildPeakMemory).
//
// The values go to the column writers 64 rows at a time (chunkRows):
// the build allocates nothing per row (TestBuildAllocs).
func (b *builder) build(partition int32, s Schema, recs []Record, maxFields int, objs []*Object) ([]byte, DataFile, error) {
	sch := fileSchema(s)
	cols := sch.Columns()
	idx := make(map[string]int, len(cols))
	b.st = slices.Grow(b.st[:0], len(cols))[:len(cols)]
	for i, p := range cols {
		name := strings.Join(p, ".")
		idx[name] = i
		b.st[i] = acc{name: name, typ: statType(name, s)}
	}
	groupRows := b.groupRows
	if groupRows == 0 {
		groupRows = rowsPerRowGroup
	}
	b.out.reset(!b.entryOnly)
	w := parquet.NewWriter(&b.out, sch,
		parquet.CreatedBy(createdBy, formatVersion, formatVersion),
		parquet.Compression(&snappy.Codec{}),
		parquet.MaxRowsPerRowGroup(int64(groupRows)),
		parquet.PageBufferSize(pageBufferSize),
		parquet.DataPageVersion(2),
	)
	cws := w.ColumnWriters()
	if len(cws) != len(cols) {
		return nil, DataFile{}, fmt.Errorf("%w: %d column writers for %d columns", errBuild, len(cws), len(cols))
	}
	if cap(b.vals) < len(cols) {
		b.vals = append(b.vals[:cap(b.vals)], make([][]parquet.Value, len(cols)-cap(b.vals))...)
	}
	b.vals = b.vals[:len(cols)]
	b.nv = slices.Grow(b.nv[:0], len(cols))[:len(cols)]
	clear(b.nv)
	rc := rowCols{
		part: idx[ColPartition], off: idx[ColOffset], ts: idx[ColTimestamp], tt: idx[ColTimestampType],
		key: idx[ColKey], raw: idx[ColValueRaw], hk: idx[ColHeaders+".key"], hv: idx[ColHeaders+".value"],
		fields: make([]int, len(s.Fields)),
	}
	for i, f := range s.Fields {
		rc.fields[i] = idx[ColValue+"."+f.Name]
	}
	if len(s.Fields) > 0 && b.names == nil {
		b.names = map[string]string{}
	}
	b.fs.reset(s)
	b.misfit = false
	inGroup := 0
	for start := 0; start < len(recs); start += chunkRows {
		end := min(start+chunkRows, len(recs))
		for i := start; i < end; i++ {
			var o *Object
			if i < len(objs) {
				o = objs[i]
			}
			b.row(partition, s, &rc, &recs[i], maxFields, o)
		}
		for c, cw := range cws {
			vs := b.vals[c][:b.nv[c]]
			if _, err := cw.WriteRowValues(vs); err != nil {
				return nil, DataFile{}, fmt.Errorf("%w: %v", errBuild, err)
			}
			clear(vs) // they point into the records
			b.nv[c] = 0
		}
		b.arena = b.arena[:0]
		if inGroup += end - start; inGroup == groupRows {
			if err := b.flushGroup(w, cws); err != nil {
				return nil, DataFile{}, err
			}
			inGroup = 0
		}
	}
	// The last row group is written before Close (which would write it
	// the same way): what Close writes after it, the page indexes and the
	// footer, is the file's tail, which the sink keeps even when it keeps
	// nothing else.
	if err := b.flushGroup(w, cws); err != nil {
		return nil, DataFile{}, err
	}
	b.out.keepTail()
	if err := w.Close(); err != nil {
		return nil, DataFile{}, fmt.Errorf("%w: %v", errBuild, err)
	}
	clear(b.obj.Names[:cap(b.obj.Names)])
	clear(b.obj.Values[:cap(b.obj.Values)])
	out, size, sum := b.out.done()
	footer, err := footerOf(b.out.tail())
	if err != nil {
		return nil, DataFile{}, err
	}
	df := DataFile{
		Partition: partition,
		Rows:      int64(len(recs)),
		Bytes:     size,
		Footer:    append([]byte(nil), footer...),
		Checksum:  "sha256:" + hex.EncodeToString(sum[:]),
		Columns:   make([]ColumnStats, len(b.st)),
	}
	for i := range b.st {
		df.Columns[i] = b.st[i].stats(i)
	}
	return out, df, nil
}

// flushGroup writes the row group: its columns' last pages first, so
// that the sink can make room for all its pages at once (w.Size), then
// the row group, as w.Flush alone would.
func (b *builder) flushGroup(w *parquet.Writer, cws []*parquet.ColumnWriter) error {
	for _, cw := range cws {
		if err := cw.Flush(); err != nil {
			return fmt.Errorf("%w: %v", errBuild, err)
		}
	}
	b.out.grow(w.Size())
	if err := w.Flush(); err != nil {
		return fmt.Errorf("%w: %v", errBuild, err)
	}
	return nil
}

// fileSink takes a data file's bytes from the Parquet writer and hashes
// them as they come. It keeps them all (keep), in one buffer grown to the
// size of each row group before the row group is written (a bytes.Buffer
// doubling as it goes could hold three times the file for a moment), or
// only the tail, from keepTail on.
type fileSink struct {
	buf   []byte
	n     int64
	h     hash.Hash
	keep  bool
	store bool // buf takes what comes
}

// maxKeptBuffer is the largest buffer a builder keeps between builds.
const maxKeptBuffer = 4 << 20

func (s *fileSink) reset(keep bool) {
	if cap(s.buf) > maxKeptBuffer {
		s.buf = nil
	}
	s.buf, s.n, s.keep, s.store = s.buf[:0], 0, keep, keep
	if s.h == nil {
		s.h = sha256.New()
	}
	s.h.Reset()
}

func (s *fileSink) Write(p []byte) (int, error) {
	s.h.Write(p)
	s.n += int64(len(p))
	if s.store {
		s.buf = append(s.buf, p...)
	}
	return len(p), nil
}

// grow makes room for a file of about size bytes, when s keeps them all.
func (s *fileSink) grow(size int64) {
	if !s.keep || size <= int64(cap(s.buf)) {
		return
	}
	// The page indexes and the footer come after the pages.
	s.buf = slices.Grow(s.buf, int(size)-len(s.buf)+64<<10)
}

// keepTail makes s keep what it is written from now on.
func (s *fileSink) keepTail() {
	s.store = true
}

// tail returns the bytes s kept, the file's last ones.
func (s *fileSink) tail() []byte { return s.buf }

// done returns the bytes (nil unless s keeps them all; valid until the
// next reset), their length and their SHA-256.
func (s *fileSink) done() (out []byte, n int64, sum [sha256.Size]byte) {
	s.h.Sum(sum[:0])
	if s.keep {
		out = s.buf
	}
	return out, s.n, sum
}

// rowCols are the column indexes of a file's leaves: the metadata
// columns, and the value field of each schema field.
type rowCols struct {
	part, off, ts, tt, key, raw, hk, hv int
	fields                              []int
}

// row appends the values of one record to b.vals, each with its
// repetition and definition levels, so that a null header value (def 1)
// differs from an empty header list (def 0), and a typed object's
// missing field (def 1: the value group is there) from a raw value (def
// 0: no group). Levels, by column:
//
//	headers.key    rep 0 first element, 1 after; def 1, 0 empty list
//	headers.value  rep as key; def 2 value, 1 null, 0 empty list
//	key, value_raw def 1 value, 0 null
//	value.F        def 2 value, 1 null or missing field, 0 not typed
//	the rest       required: def 0
//
// obj is the record's value already parsed, or nil; then b.fs reads the
// value, or, when it cannot tell (fieldsUnsure), Object.parse and fitsIn
// do.
func (b *builder) row(partition int32, s Schema, rc *rowCols, r *Record, maxFields int, obj *Object) {
	b.putInt(rc.part, parquet.Int32Value(partition), int64(partition))
	b.putInt(rc.off, parquet.Int64Value(r.Offset), r.Offset)
	b.putInt(rc.ts, parquet.Int64Value(r.Timestamp), r.Timestamp)
	b.putInt(rc.tt, parquet.Int32Value(int32(r.TimestampType)), int64(r.TimestampType))
	if r.Key != nil {
		b.putBytes(rc.key, r.Key, 0, 1)
	} else {
		b.null(rc.key, 0, 0)
	}
	if len(r.Headers) == 0 {
		b.null(rc.hk, 0, 0) // an empty list is one null per leaf
		b.null(rc.hv, 0, 0)
	}
	for j, h := range r.Headers {
		rep := min(j, 1)
		b.putBytes(rc.hk, h.Key, rep, 1)
		if h.Value != nil {
			b.putBytes(rc.hv, h.Value, rep, 2)
		} else {
			b.null(rc.hv, rep, 1)
		}
	}
	typed := false
	if r.Value != nil && len(s.Fields) > 0 {
		scanned := fieldsUnsure
		if obj == nil && b.fs.ok {
			scanned = b.fs.scan(r.Value, maxFields)
		}
		switch scanned {
		case fieldsTyped:
			b.putSlots(rc)
			b.null(rc.raw, 0, 0)
			return
		case fieldsUnsure:
			if obj == nil && b.obj.parse(r.Value, maxFields, b.names) == nil {
				obj = &b.obj
			}
			typed = obj != nil && obj.fitsIn(s)
			b.misfit = b.misfit || b.checkFit && obj != nil && !typed
		case fieldsRaw:
			// Not JSON, not an object, or a value its column's type does
			// not take: only the last would merge into a wider schema.
			b.misfit = b.misfit || b.checkFit && b.obj.parse(r.Value, maxFields, b.names) == nil
		}
	} else if r.Value != nil && b.checkFit && !b.misfit {
		// No typed columns yet: any object brings fields.
		if b.names == nil {
			b.names = map[string]string{}
		}
		b.misfit = b.obj.parse(r.Value, maxFields, b.names) == nil && len(b.obj.Names) > 0
	}
	if !typed {
		for _, c := range rc.fields {
			b.null(c, 0, 0)
		}
		b.putBytesOrNull(rc.raw, r.Value)
		return
	}
	k := 0 // obj's next field: both lists are sorted by name
	for fi, f := range s.Fields {
		c := rc.fields[fi]
		for k < len(obj.Names) && obj.Names[k] < f.Name {
			k++
		}
		if k == len(obj.Names) || obj.Names[k] != f.Name || obj.Values[k].Type == "" {
			b.null(c, 0, 1)
			continue
		}
		b.putField(c, f.Type, &obj.Values[k])
	}
	b.null(rc.raw, 0, 0)
}

// putSlots appends the values b.fs.scan read (fieldsTyped), each as a
// value of its column's type, or a null (def 1) for a field the record
// does not have or has as null: what putField does with the record's
// Object.
func (b *builder) putSlots(rc *rowCols) {
	fs := &b.fs
	for fi, c := range rc.fields {
		sl := &fs.slots[fi]
		if sl.stamp != fs.stamp || sl.kind == kindNull {
			b.null(c, 0, 1)
			continue
		}
		switch fs.cols[fi] {
		case colBoolean:
			x := sl.raw[0] == 't'
			b.put(c, parquet.BooleanValue(x), 0, 2)
			b.st[c].addBool(x)
		case colInt64:
			b.put(c, parquet.Int64Value(sl.n), 0, 2)
			b.st[c].addInt(sl.n)
		case colDouble:
			f := sl.f
			if sl.kind == kindInt64 {
				f, _ = strconv.ParseFloat(string(sl.raw), 64) // "-0" is -0.0
			}
			b.put(c, parquet.DoubleValue(f), 0, 2)
			b.st[c].addFloat(f)
		case colString:
			raw := sl.raw
			switch sl.kind {
			case kindString:
				if in := raw[1 : len(raw)-1]; !sl.esc && utf8.Valid(in) {
					raw = in
				} else if u, ok := unquote(raw); ok {
					raw = b.keep(u)
				}
			case kindJSON:
				raw = b.compact(raw)
			}
			b.putBytes(c, raw, 0, 2)
		default: // colJSON
			b.putBytes(c, b.compact(sl.raw), 0, 2)
		}
	}
}

// compact is the compact text of a scanned JSON object or array, as
// classify makes it (json.Compact only drops the spaces).
func (b *builder) compact(raw []byte) []byte {
	if bytes.IndexAny(raw, " \t\r\n") < 0 {
		return raw
	}
	b.cbuf.Reset()
	if json.Compact(&b.cbuf, raw) != nil {
		return raw // not reached: raw was scanned
	}
	at := len(b.arena)
	b.arena = append(b.arena, b.cbuf.Bytes()...)
	return b.arena[at:len(b.arena):len(b.arena)]
}

// keep copies x to the arena, where it stays until the chunk is written.
func (b *builder) keep(x string) []byte {
	at := len(b.arena)
	b.arena = append(b.arena, x...)
	return b.arena[at:len(b.arena):len(b.arena)]
}

// putField appends v, whose type merges into t (fitsIn), as a value of
// the column of type t: JSONValue.As, without boxing it.
func (b *builder) putField(c int, t ColumnType, v *JSONValue) {
	switch t {
	case TypeBoolean:
		x := v.Raw[0] == 't'
		b.put(c, parquet.BooleanValue(x), 0, 2)
		b.st[c].addBool(x)
	case TypeInt64:
		n, _ := strconv.ParseInt(string(v.Raw), 10, 64)
		b.put(c, parquet.Int64Value(n), 0, 2)
		b.st[c].addInt(n)
	case TypeDouble:
		f, _ := strconv.ParseFloat(string(v.Raw), 64)
		b.put(c, parquet.DoubleValue(f), 0, 2)
		b.st[c].addFloat(f)
	case TypeString:
		raw := v.Raw
		if v.Type == TypeString && raw[0] == '"' {
			if in := raw[1 : len(raw)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
				raw = in // unquote's fast path, without the copy
			} else if u, ok := unquote(raw); ok {
				raw = b.keep(u)
			}
		}
		b.putBytes(c, raw, 0, 2)
	default: // json: its compact text
		b.putBytes(c, v.Raw, 0, 2)
	}
}

// put appends v to column c with its levels (Value.Level, which does
// not inline, costs a copy of v; the setters do not).
func (b *builder) put(c int, v parquet.Value, rep, def int) {
	n := b.nv[c]
	if n == len(b.vals[c]) {
		b.vals[c] = append(b.vals[c], make([]parquet.Value, max(n, chunkRows))...)
	}
	p := &b.vals[c][n]
	*p = v
	p.SetRepetitionLevel(rep)
	p.SetDefinitionLevel(def)
	p.SetColumnIndex(c)
	b.nv[c] = n + 1
}

func (b *builder) putInt(c int, v parquet.Value, x int64) {
	b.put(c, v, 0, 0)
	b.st[c].addInt(x)
}

func (b *builder) putBytes(c int, x []byte, rep, def int) {
	b.put(c, parquet.ByteArrayValue(x), rep, def)
	b.st[c].addBytes(x)
}

// putBytesOrNull appends x at def 1, or a null at def 0 if x is nil.
func (b *builder) putBytesOrNull(c int, x []byte) {
	if x == nil {
		b.null(c, 0, 0)
		return
	}
	b.putBytes(c, x, 0, 1)
}

func (b *builder) null(c, rep, def int) {
	b.put(c, parquet.NullValue(), rep, def)
	b.st[c].addNull()
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

// add adds one value: nil (a null), bool, int64, float64 or string.
func (a *acc) add(v any) {
	switch x := v.(type) {
	case nil:
		a.addNull()
	case bool:
		a.addBool(x)
	case int64:
		a.addInt(x)
	case float64:
		a.addFloat(x)
	case string:
		a.addString(x)
	default:
		a.n++
	}
}

func (a *acc) addNull() {
	a.n++
	a.nulls++
}

func (a *acc) addBool(x bool) {
	a.n++
	if !a.has {
		a.minB, a.maxB = x, x
	}
	a.minB, a.maxB = a.minB && x, a.maxB || x
	a.has = true
}

func (a *acc) addInt(x int64) {
	a.n++
	if !a.has || x < a.minI {
		a.minI = x
	}
	if !a.has || x > a.maxI {
		a.maxI = x
	}
	a.has = true
}

func (a *acc) addFloat(x float64) {
	a.n++
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
}

// addString adds a string (or binary) value. Parquet orders byte arrays
// as unsigned bytes: Go's string comparison.
func (a *acc) addString(x string) {
	a.n++
	if !a.has || x < a.minS {
		a.minS = x
	}
	if !a.has || x > a.maxS {
		a.maxS = x
	}
	a.has = true
}

// addBytes is addString(string(b)) without converting b unless it
// becomes a bound.
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
