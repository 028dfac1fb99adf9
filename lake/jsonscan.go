package lake

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// scanObject splits a JSON object into its top-level names and raw
// values, as ParseObject needs, in one pass without allocating per
// value: it is the hot path of indexing JSON values (encoding/json's
// Decoder was 55% of a build). It accepts exactly the RFC 8259 objects
// json.Valid accepts (FuzzParseObject checks it against encoding/json);
// ok is false for anything else. Names are unescaped; raw values alias
// v.
func scanObject(v []byte, names map[string]string, fn func(name string, raw []byte) bool) (ok bool) {
	s := jscan{b: v}
	s.ws()
	if !s.eat('{') {
		return false
	}
	s.ws()
	if s.eat('}') {
		s.ws()
		return s.i == len(s.b)
	}
	for {
		s.ws()
		start := s.i
		if !s.str() {
			return false
		}
		name, ok := internName(s.b[start:s.i], names)
		if !ok {
			return false
		}
		s.ws()
		if !s.eat(':') {
			return false
		}
		s.ws()
		vs := s.i
		if !s.value(0) {
			return false
		}
		if !fn(name, s.b[vs:s.i]) {
			return false
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		if !s.eat('}') {
			return false
		}
		s.ws()
		return s.i == len(s.b)
	}
}

// maxDepth bounds nesting, as encoding/json does (10000).
const maxDepth = 10000

type jscan struct {
	b   []byte
	i   int
	esc bool // a string scanned had an escape
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *jscan) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *jscan) lit(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// value scans one JSON value.
func (s *jscan) value(depth int) bool {
	if s.i >= len(s.b) || depth > maxDepth {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '{':
		s.i++
		s.ws()
		if s.eat('}') {
			return true
		}
		for {
			s.ws()
			if !s.str() {
				return false
			}
			s.ws()
			if !s.eat(':') {
				return false
			}
			s.ws()
			if !s.value(depth + 1) {
				return false
			}
			s.ws()
			if s.eat(',') {
				continue
			}
			return s.eat('}')
		}
	case c == '[':
		s.i++
		s.ws()
		if s.eat(']') {
			return true
		}
		for {
			s.ws()
			if !s.value(depth + 1) {
				return false
			}
			s.ws()
			if s.eat(',') {
				continue
			}
			return s.eat(']')
		}
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.num()
	}
	return false
}

// str scans a string: the quotes, valid escapes, no control bytes.
// Invalid UTF-8 is accepted, as json.Valid accepts it.
func (s *jscan) str() bool {
	if !s.eat('"') {
		return false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			s.esc = true
			s.i++
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if len(s.b)-s.i < 5 {
					return false
				}
				for _, h := range s.b[s.i+1 : s.i+5] {
					if !isHex(h) {
						return false
					}
				}
				s.i += 5
			default:
				return false
			}
		default:
			s.i++
		}
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// num scans a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jscan) num() bool {
	s.eat('-')
	if s.i >= len(s.b) {
		return false
	}
	if s.b[s.i] == '0' {
		s.i++
	} else if !s.digits() {
		return false
	}
	if s.eat('.') && !s.digits() {
		return false
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if !s.eat('+') {
			s.eat('-')
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

func (s *jscan) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// internName unquotes a field name, taking it from names (and adding it)
// when it has no escape: the same few names come in every record, and a
// map lookup by string(b) does not allocate.
func internName(q []byte, names map[string]string) (string, bool) {
	in := q[1 : len(q)-1]
	if names == nil || bytes.IndexByte(in, '\\') >= 0 {
		return unquote(q)
	}
	if n, ok := names[string(in)]; ok {
		return n, true
	}
	n, ok := unquote(q)
	if ok && len(names) < 4096 {
		names[n] = n
	}
	return n, ok
}

// unquote decodes a scanned JSON string as encoding/json does (invalid
// UTF-8 and lone surrogates become U+FFFD); the fast path takes strings
// without escapes as they are.
func unquote(q []byte) (string, bool) {
	in := q[1 : len(q)-1]
	if bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return string(in), true
	}
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		return "", false
	}
	return s, true
}

// The outcomes of fieldScan.scan.
const (
	// fieldsTyped: the value is a JSON object whose fields fit the
	// table schema; their values are in the slots.
	fieldsTyped = iota
	// fieldsRaw: the value is not (invalid JSON, not an object, a
	// duplicate field, more than maxFields fields, a value its column's
	// type does not take): it goes to value_raw.
	fieldsRaw
	// fieldsUnsure: a field name has an escape or is not in the schema
	// (a null field need not be): Object.parse and fitsIn decide.
	fieldsUnsure
)

// valueKind is the type classify infers for a JSON value.
type valueKind uint8

const (
	kindNull    valueKind = iota
	kindBoolean           // boolean
	kindInt64             // int64
	kindDouble            // double
	kindString            // string: a JSON string
	kindNumText           // string: a number out of float64's range, as its text
	kindJSON              // json
)

// colKind is a value column's type.
type colKind uint8

const (
	colOther colKind = iota // no JSON value fits it but null
	colBoolean
	colInt64
	colDouble
	colString
	colJSON
)

// takes reports whether a value of kind k merges into a column of kind
// c without changing it (fitsIn's MergeType test).
func (c colKind) takes(k valueKind) bool {
	switch {
	case k == kindNull || c == colString:
		return true
	case c == colBoolean:
		return k == kindBoolean
	case c == colInt64:
		return k == kindInt64
	case c == colDouble:
		return k == kindInt64 || k == kindDouble
	case c == colJSON:
		return k == kindJSON
	}
	return false
}

// fieldSlot is one schema field's value in the record being written.
type fieldSlot struct {
	stamp uint32 // the record's stamp if the record has the field
	kind  valueKind
	esc   bool    // kindString: it has an escape
	raw   []byte  // the value's JSON text (aliases the record)
	n     int64   // kindInt64's value
	f     float64 // kindDouble's value
}

// fieldScan reads record values against one table schema: it does, in
// one pass and without allocating, what Object.parse then fitsIn do for
// the common record (every field in the schema, no escape in its names)
// and leaves the others to them. Field names are matched against the
// schema's in the order the last record had them, then by a map.
type fieldScan struct {
	fields []Field
	cols   []colKind
	idx    map[string]int
	// next[f] is the field that followed field f in the last record
	// that had f; next[len(fields)] is the first field.
	next  []int
	slots []fieldSlot
	stamp uint32
	// ok says the schema's names are what Object.parse gives (not
	// empty, UTF-8, strictly sorted): fieldScan is used only then.
	ok bool
}

// reset prepares f for schema s.
func (f *fieldScan) reset(s Schema) {
	f.fields = s.Fields
	n := len(s.Fields)
	f.cols = slices.Grow(f.cols[:0], n)[:n]
	f.slots = slices.Grow(f.slots[:0], n)[:n]
	clear(f.slots)
	f.next = slices.Grow(f.next[:0], n+1)[:n+1]
	f.idx = make(map[string]int, n)
	f.stamp = 0
	f.ok = true
	for i, fl := range s.Fields {
		f.idx[fl.Name] = i
		f.next[i] = i + 1
		f.ok = f.ok && fl.Name != "" && utf8.ValidString(fl.Name) && (i == 0 || s.Fields[i-1].Name < fl.Name)
		switch fl.Type {
		case TypeBoolean:
			f.cols[i] = colBoolean
		case TypeInt64:
			f.cols[i] = colInt64
		case TypeDouble:
			f.cols[i] = colDouble
		case TypeString:
			f.cols[i] = colString
		case TypeJSON:
			f.cols[i] = colJSON
		default:
			f.cols[i] = colOther
		}
	}
	f.next[n] = 0
}

// scan reads v, a record value, into the slots (stamped with a new
// stamp) and returns fieldsTyped, fieldsRaw or fieldsUnsure. It accepts
// exactly what scanObject accepts.
func (f *fieldScan) scan(v []byte, maxFields int) int {
	f.stamp++
	s := jscan{b: v}
	s.ws()
	if !s.eat('{') {
		return fieldsRaw
	}
	s.ws()
	if s.eat('}') {
		s.ws()
		if s.i == len(s.b) {
			return fieldsTyped
		}
		return fieldsRaw
	}
	prev, count := len(f.fields), 0
	for {
		s.ws()
		start := s.i
		s.esc = false
		if !s.str() {
			return fieldsRaw
		}
		if s.esc {
			return fieldsUnsure
		}
		name := s.b[start+1 : s.i-1]
		fi := f.next[prev]
		if fi >= len(f.fields) || f.fields[fi].Name != string(name) {
			var ok bool
			if fi, ok = f.idx[string(name)]; !ok {
				return fieldsUnsure
			}
			f.next[prev] = fi
		}
		prev = fi
		if count++; count > maxFields {
			return fieldsRaw
		}
		sl := &f.slots[fi]
		if sl.stamp == f.stamp {
			return fieldsRaw // a duplicate
		}
		sl.stamp = f.stamp
		s.ws()
		if !s.eat(':') {
			return fieldsRaw
		}
		s.ws()
		if !s.slot(sl) || !f.cols[fi].takes(sl.kind) {
			return fieldsRaw
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		if !s.eat('}') {
			return fieldsRaw
		}
		s.ws()
		if s.i != len(s.b) {
			return fieldsRaw
		}
		return fieldsTyped
	}
}

// slot scans one field value into sl, classified as classify does.
func (s *jscan) slot(sl *fieldSlot) bool {
	vs := s.i
	if vs >= len(s.b) {
		return false
	}
	switch c := s.b[vs]; c {
	case '"':
		s.esc = false
		if !s.str() {
			return false
		}
		sl.kind, sl.esc = kindString, s.esc
	case 'n':
		if !s.lit("null") {
			return false
		}
		sl.kind = kindNull
	case 't', 'f':
		if !s.value(0) {
			return false
		}
		sl.kind = kindBoolean
	case '{', '[':
		if !s.value(0) {
			return false
		}
		sl.kind = kindJSON
	default:
		if !s.value(0) {
			return false
		}
		raw := s.b[vs:s.i]
		if n, ok := parseInt64(raw); ok {
			sl.kind, sl.n = kindInt64, n
		} else if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
			sl.kind, sl.f = kindDouble, f
		} else {
			sl.kind = kindNumText
		}
	}
	sl.raw = s.b[vs:s.i]
	return true
}

// parseInt64 parses a scanned JSON number written without fraction or
// exponent, as strconv.ParseInt does; ok is false for any other number
// and for one out of int64's range (classify's int64 test).
func parseInt64(b []byte) (n int64, ok bool) {
	d := b
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 19 {
		return 0, false
	}
	var u uint64 // 19 digits do not overflow it
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if len(d) < len(b) {
		if u > 1<<63 {
			return 0, false
		}
		return int64(-u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}
