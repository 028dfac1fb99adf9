package lake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func errClass(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrNotObject):
		return "not object"
	case errors.Is(err, ErrUntypeable):
		return "untypeable"
	}
	return "other: " + err.Error()
}

// parseObjectStd is ParseObject written with encoding/json's Decoder:
// the reference the scanner is fuzzed against.
func parseObjectStd(v []byte, maxFields int) (Object, error) {
	var o Object
	t := bytes.TrimLeft(v, " \t\r\n")
	if len(t) == 0 || t[0] != '{' || !json.Valid(v) {
		return o, ErrNotObject
	}
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if _, err := d.Token(); err != nil {
		return o, ErrNotObject
	}
	seen := map[string]bool{}
	var bad error
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return Object{}, ErrNotObject
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return Object{}, ErrNotObject
		}
		if bad != nil {
			continue
		}
		if name == "" || seen[name] || !utf8.ValidString(name) || len(seen) >= maxFields {
			bad = fmt.Errorf("%w: field %q", ErrUntypeable, name)
			continue
		}
		seen[name] = true
		jv, err := classify(raw)
		if err != nil {
			bad = err
			continue
		}
		o.Names = append(o.Names, name)
		o.Values = append(o.Values, jv)
	}
	if _, err := d.Token(); err != nil {
		return Object{}, ErrNotObject
	}
	if _, err := d.Token(); err != io.EOF {
		return Object{}, ErrNotObject
	}
	if bad != nil {
		return Object{}, bad
	}
	idx := make([]int, len(o.Names))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(o.Names[a], o.Names[b]) })
	sorted := Object{Names: make([]string, len(idx)), Values: make([]JSONValue, len(idx))}
	for i, j := range idx {
		sorted.Names[i], sorted.Values[i] = o.Names[j], o.Values[j]
	}
	return sorted, nil
}

func TestMergeType(t *testing.T) {
	tests := []struct {
		a, b, want ColumnType
	}{
		{TypeInt64, TypeInt64, TypeInt64},
		{TypeInt64, TypeDouble, TypeDouble},
		{TypeDouble, TypeInt64, TypeDouble},
		{TypeBoolean, TypeInt64, TypeString},
		{TypeString, TypeDouble, TypeString},
		{TypeJSON, TypeJSON, TypeJSON},
		{TypeJSON, TypeString, TypeString},
		{TypeBoolean, TypeJSON, TypeString},
		{"", TypeBoolean, TypeBoolean},
	}
	for _, tt := range tests {
		if got := MergeType(tt.a, tt.b); got != tt.want {
			t.Errorf("MergeType(%s, %s) = %s, want %s", tt.a, tt.b, got, tt.want)
		}
		if got := MergeType(tt.b, tt.a); got != tt.want {
			t.Errorf("MergeType(%s, %s) = %s, want %s (not commutative)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestParseObject(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Field
		err  error
	}{
		{"types", `{"b":true,"i":-3,"d":1.5,"e":1e3,"s":"x","o":{"a":1},"a":[1],"z":null}`,
			[]Field{{"a", TypeJSON}, {"b", TypeBoolean}, {"d", TypeDouble}, {"e", TypeDouble}, {"i", TypeInt64}, {"o", TypeJSON}, {"s", TypeString}}, nil},
		{"int_overflow", `{"n":18446744073709551616}`, []Field{{"n", TypeDouble}}, nil},
		{"empty", `{}`, nil, nil},
		{"not_object", `[1,2]`, nil, ErrNotObject},
		{"scalar", `42`, nil, ErrNotObject},
		{"invalid", `{"a":`, nil, ErrNotObject},
		{"trailing", `{"a":1} x`, nil, ErrNotObject},
		{"duplicate", `{"a":1,"a":2}`, nil, ErrUntypeable},
		{"empty_name", `{"":1}`, nil, ErrUntypeable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := ParseObject([]byte(tt.in), DefaultMaxFields)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if err == nil && !slices.Equal(o.Schema().Fields, tt.want) {
				t.Fatalf("schema %v, want %v", o.Schema().Fields, tt.want)
			}
		})
	}
	if _, err := ParseObject([]byte(`{"a":1,"b":2}`), 1); !errors.Is(err, ErrUntypeable) {
		t.Fatalf("over the field limit: %v", err)
	}
}

// FuzzParseObject: the JSON-to-columns inference never panics; a parsed
// object's names are sorted and unique; every non-null field converts to
// its own type and to the type merged with any other, and the merge is
// commutative, idempotent and only ever widens.
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":1.5,"b":"x"}`, `{"n":null,"o":{"x":[1,2]}}`, `{"a":true}`, `[1]`, `{"a":1,"a":2}`, `{"\u00e9":"\ud800"}`} {
		f.Add([]byte(s), []byte(`{"a":"s"}`))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		oa, errA := ParseObject(a, 64)
		ob, errB := ParseObject(b, 64)
		// Differential: the hand-written scanner against encoding/json,
		// and with interned names (shared by a and b) against without.
		names := map[string]string{}
		for _, in := range [][]byte{a, b, a} {
			got, gerr := ParseObject(in, 64)
			interned, ierr := parseObject(in, 64, names)
			if errClass(ierr) != errClass(gerr) || !slices.Equal(interned.Names, got.Names) {
				t.Fatalf("%q: interned %v %q, not %v %q", in, ierr, interned.Names, gerr, got.Names)
			}
			want, werr := parseObjectStd(in, 64)
			if errClass(gerr) != errClass(werr) {
				t.Fatalf("%q: error %v, encoding/json's %v", in, gerr, werr)
			}
			if gerr == nil && (!slices.Equal(got.Names, want.Names) || !slices.EqualFunc(got.Values, want.Values, func(x, y JSONValue) bool {
				return x.Type == y.Type && string(x.Raw) == string(y.Raw)
			})) {
				t.Fatalf("%q: %+v, encoding/json's %+v", in, got, want)
			}
		}
		if errA != nil && !errors.Is(errA, ErrNotObject) && !errors.Is(errA, ErrUntypeable) {
			t.Fatalf("untyped error %v", errA)
		}
		if errA != nil || errB != nil {
			return
		}
		if !slices.IsSorted(oa.Names) || len(slices.Compact(slices.Clone(oa.Names))) != len(oa.Names) {
			t.Fatalf("names %q not sorted and unique", oa.Names)
		}
		sa, sb := oa.Schema(), ob.Schema()
		ab, _ := sa.Merge(sb)
		ba, _ := sb.Merge(sa)
		if !ab.Equal(ba) {
			t.Fatalf("merge not commutative: %v vs %v", ab, ba)
		}
		if again, changed := ab.Merge(sa); changed || !again.Equal(ab) {
			t.Fatalf("merge not idempotent: %v then %v", ab, again)
		}
		for i, n := range oa.Names {
			v := oa.Values[i]
			if v.Type == "" {
				continue
			}
			f, ok := ab.Field(n)
			if !ok || MergeType(f.Type, v.Type) != f.Type {
				t.Fatalf("field %q type %s not in the merged schema %v", n, v.Type, ab)
			}
			for _, typ := range []ColumnType{v.Type, f.Type} {
				x, ok := v.As(typ)
				if !ok {
					t.Fatalf("field %q: no value as %s", n, typ)
				}
				switch typ {
				case TypeBoolean:
					_, ok = x.(bool)
				case TypeInt64:
					_, ok = x.(int64)
				case TypeDouble:
					_, ok = x.(float64)
				default:
					_, ok = x.(string)
				}
				if !ok {
					t.Fatalf("field %q: %T as %s", n, x, typ)
				}
			}
		}
		if !oa.fitsIn(ab) {
			t.Fatalf("object does not fit the schema merged with its own")
		}
	})
}
