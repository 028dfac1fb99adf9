package lake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// ColumnType is the type of a value column (a field of a JSON object
// value).
type ColumnType string

// The value column types. These names are stored in the catalog and
// should not be changed.
const (
	TypeBoolean ColumnType = "boolean" // Parquet BOOLEAN
	TypeInt64   ColumnType = "int64"   // Parquet INT64
	TypeDouble  ColumnType = "double"  // Parquet DOUBLE
	TypeString  ColumnType = "string"  // Parquet BYTE_ARRAY, STRING
	TypeJSON    ColumnType = "json"    // Parquet BYTE_ARRAY, JSON: a nested object or array as compact JSON text
)

// Field is one typed value column: a top-level field of the JSON object
// values.
type Field struct {
	Name string     `json:"name"`
	Type ColumnType `json:"type"`
}

// Schema is the table schema of the value columns: the merge of every
// schema the records brought, sorted by name. The metadata columns
// (partition, offset, timestamp, timestamp_type, key, headers) and
// value_raw are in every file and not listed.
type Schema struct {
	Fields []Field `json:"fields"`
}

// Field returns the field named name.
func (s Schema) Field(name string) (Field, bool) {
	i, ok := slices.BinarySearchFunc(s.Fields, name, func(f Field, n string) int { return strings.Compare(f.Name, n) })
	if !ok {
		return Field{}, false
	}
	return s.Fields[i], true
}

// Equal reports whether s and o have the same fields.
func (s Schema) Equal(o Schema) bool { return slices.Equal(s.Fields, o.Fields) }

// MergeType is the type of a column that has held values of types a and
// b. The merge rules:
//
//   - the same type stays;
//   - int64 and double widen to double (integers above 2^53 lose
//     precision, as in every engine that widens so);
//   - any other pair (boolean with a number, a number with a string,
//     json with a scalar …) is incompatible and becomes string: each
//     value is then stored as its JSON text (a string as the string
//     itself);
//   - a column is never removed, and a field missing from a record, or
//     null in it, is a null in that column.
//
// A field only ever seen as null gets no column until it has a value.
// Merging is commutative and associative, so the table schema does not
// depend on the order the records come in.
func MergeType(a, b ColumnType) ColumnType {
	switch {
	case a == b:
		return a
	case a == "":
		return b
	case b == "":
		return a
	case (a == TypeInt64 && b == TypeDouble) || (a == TypeDouble && b == TypeInt64):
		return TypeDouble
	}
	return TypeString
}

// Merge returns the schema with the fields of o merged in (MergeType)
// and whether it changed. s is not modified.
func (s Schema) Merge(o Schema) (Schema, bool) {
	out := Schema{Fields: slices.Clone(s.Fields)}
	changed := false
	for _, f := range o.Fields {
		i, ok := slices.BinarySearchFunc(out.Fields, f.Name, func(f Field, n string) int { return strings.Compare(f.Name, n) })
		if !ok {
			out.Fields = slices.Insert(out.Fields, i, f)
			changed = true
			continue
		}
		if t := MergeType(out.Fields[i].Type, f.Type); t != out.Fields[i].Type {
			out.Fields[i].Type = t
			changed = true
		}
	}
	return out, changed
}

// Errors of the JSON decoder.
var (
	// ErrNotObject is returned by ParseObject for a value that is not a
	// JSON object (such values go to the value_raw column).
	ErrNotObject = errors.New("lake: value is not a JSON object")
	// ErrUntypeable is returned by ParseObject for a JSON object that
	// cannot become columns: a duplicate or empty field name, a name
	// that is not UTF-8, or more fields than the limit.
	ErrUntypeable = errors.New("lake: JSON object cannot become columns")
)

// JSONValue is one field of a parsed JSON object: its type (empty for
// null) and its JSON text (compact for json; as written for numbers).
type JSONValue struct {
	Type ColumnType
	Raw  []byte
}

// Object is a parsed JSON object value: its fields sorted by name.
type Object struct {
	Names  []string
	Values []JSONValue
}

// Schema is the object's schema (null fields left out).
func (o *Object) Schema() Schema {
	var s Schema
	for i, n := range o.Names {
		if o.Values[i].Type != "" {
			s.Fields = append(s.Fields, Field{n, o.Values[i].Type})
		}
	}
	return s
}

// Get returns the field named name.
func (o *Object) Get(name string) (JSONValue, bool) {
	i, ok := slices.BinarySearch(o.Names, name)
	if !ok {
		return JSONValue{}, false
	}
	return o.Values[i], true
}

// ParseObject decodes a record value as a JSON object with at most
// maxFields fields: each top-level field's type is inferred (true/false:
// boolean; a number that is an integer in int64's range, written without
// fraction or exponent: int64; any other number: double; a string:
// string; an object or array: json; null: no type). It never panics and
// returns ErrNotObject or ErrUntypeable (wrapped) for values that stay
// raw.
func ParseObject(v []byte, maxFields int) (Object, error) {
	return parseObject(v, maxFields, nil)
}

// parseObject is ParseObject with the field names interned in names.
func parseObject(v []byte, maxFields int, names map[string]string) (Object, error) {
	// The fields are parsed into a pooled Object, then copied to slices
	// of their size: the indexer keeps an Object per record of a range
	// (for four fields, 224 bytes of slices instead of 448 with room for
	// eight).
	o := objectPool.Get().(*Object)
	defer func() {
		clear(o.Names[:cap(o.Names)]) // they point into v
		clear(o.Values[:cap(o.Values)])
		objectPool.Put(o)
	}()
	if err := o.parse(v, maxFields, names); err != nil {
		return Object{}, err
	}
	return Object{Names: slices.Clone(o.Names), Values: slices.Clone(o.Values)}, nil
}

// objectPool holds parseObject's scratch Objects.
var objectPool = sync.Pool{New: func() any { return new(Object) }}

// parse is parseObject into o, reusing its slices (the build parses each
// record into the same Object). On error o is left empty.
func (o *Object) parse(v []byte, maxFields int, names map[string]string) error {
	o.Names, o.Values = o.Names[:0], o.Values[:0]
	var bad error
	// The whole value is scanned even after a bad name, so that invalid
	// JSON is always ErrNotObject.
	ok := scanObject(v, names, func(name string, raw []byte) bool {
		if bad != nil {
			return true
		}
		if name == "" || !utf8.ValidString(name) || len(o.Names) >= maxFields {
			bad = fmt.Errorf("%w: field %q", ErrUntypeable, name)
			return true
		}
		jv, err := classify(raw)
		if err != nil {
			bad = fmt.Errorf("%w: field %q: %v", ErrUntypeable, name, err)
			return true
		}
		o.Names = append(o.Names, name)
		o.Values = append(o.Values, jv)
		return true
	})
	if !ok {
		bad = ErrNotObject
	}
	if bad == nil {
		o.sort()
		for i := 1; i < len(o.Names); i++ {
			if o.Names[i] == o.Names[i-1] {
				bad = fmt.Errorf("%w: duplicate field %q", ErrUntypeable, o.Names[i])
				break
			}
		}
	}
	if bad != nil {
		o.Names, o.Values = o.Names[:0], o.Values[:0]
	}
	return bad
}

// sort sorts o's fields by name, stably (a duplicate name is an error
// either way; which pair comes first does not matter).
func (o *Object) sort() {
	n := len(o.Names)
	if n < 2 || slices.IsSorted(o.Names) {
		return
	}
	if n <= 16 {
		// Insertion sort, in place: the small objects of most records.
		for i := 1; i < n; i++ {
			for j := i; j > 0 && o.Names[j] < o.Names[j-1]; j-- {
				o.Names[j], o.Names[j-1] = o.Names[j-1], o.Names[j]
				o.Values[j], o.Values[j-1] = o.Values[j-1], o.Values[j]
			}
		}
		return
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(o.Names[a], o.Names[b]) })
	names, values := make([]string, n), make([]JSONValue, n)
	for i, j := range idx {
		names[i], values[i] = o.Names[j], o.Values[j]
	}
	o.Names, o.Values = names, values
}

// classify infers the type of one JSON value.
func classify(raw []byte) (JSONValue, error) {
	switch raw[0] {
	case 'n':
		return JSONValue{}, nil
	case 't', 'f':
		return JSONValue{Type: TypeBoolean, Raw: raw}, nil
	case '"':
		return JSONValue{Type: TypeString, Raw: raw}, nil
	case '{', '[':
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return JSONValue{}, err
		}
		return JSONValue{Type: TypeJSON, Raw: b.Bytes()}, nil
	}
	s := string(raw)
	if !strings.ContainsAny(s, ".eE") {
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return JSONValue{Type: TypeInt64, Raw: raw}, nil
		}
	}
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		// Out of float64's range: kept as its text.
		return JSONValue{Type: TypeString, Raw: raw}, nil
	}
	return JSONValue{Type: TypeDouble, Raw: raw}, nil
}

// As converts v to a column of type t (the table's merged type, which v's
// type merges into) and returns the Go value: bool, int64, float64 or
// string (also for json). ok is false for a null.
func (v JSONValue) As(t ColumnType) (any, bool) {
	if v.Type == "" {
		return nil, false
	}
	switch t {
	case TypeBoolean:
		return v.Raw[0] == 't', true
	case TypeInt64:
		n, _ := strconv.ParseInt(string(v.Raw), 10, 64)
		return n, true
	case TypeDouble:
		f, _ := strconv.ParseFloat(string(v.Raw), 64)
		return f, true
	case TypeString:
		if v.Type == TypeString && v.Raw[0] == '"' {
			if s, ok := unquote(v.Raw); ok {
				return s, true
			}
		}
		return string(v.Raw), true
	}
	return string(v.Raw), true // json
}

// rangeSchema is the merge of the schemas of the records' values (those
// that are JSON objects ParseObject takes), as folding Schema.Merge over
// them gives, parsing each value into one reused Object and merging only
// the values that bring a field or a type the schema so far does not
// have: no allocation per record, and no parsed value kept. names interns
// the field names (nil: none).
func rangeSchema(recs []Record, maxFields int, names map[string]string) Schema {
	var s Schema
	var o Object
	for i := range recs {
		v := recs[i].Value
		if v == nil || o.parse(v, maxFields, names) != nil || o.fitsIn(s) {
			continue
		}
		s, _ = s.Merge(o.Schema())
	}
	return s
}
