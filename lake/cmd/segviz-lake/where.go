package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/segkit/segkit/lake"
)

// expr is a --where expression: whether a file may hold a row for which
// it is true, judged by the file's column statistics alone.
type expr interface {
	mayMatch(f lake.DataFile) bool
}

// and is a conjunction: a file may match only if it may match each.
type and []expr

func (a and) mayMatch(f lake.DataFile) bool {
	for _, e := range a {
		if !e.mayMatch(f) {
			return false
		}
	}
	return true
}

// literal is a comparison's right-hand side.
type literal struct {
	kind  byte // 'n' number, 's' string, 'b' boolean
	text  string
	num   float64
	isInt bool
	i     int64
	b     bool
}

// cmp is COLUMN OP LITERAL.
type cmp struct {
	col string
	op  string
	lit literal
}

// parseWhere parses comparisons joined by "and" (case-insensitive).
func parseWhere(s string) (expr, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	var out and
	for i := 0; ; {
		if i+3 > len(toks) {
			return nil, fmt.Errorf("%q: want COLUMN OP LITERAL", s)
		}
		col, op, val := toks[i], toks[i+1], toks[i+2]
		if col.kind != 'w' {
			return nil, fmt.Errorf("%q: %q is not a column name", s, col.text)
		}
		if op.kind != 'o' {
			return nil, fmt.Errorf("%q: %q is not an operator (= == != < <= > >=)", s, op.text)
		}
		var lit literal
		switch val.kind {
		case 'q':
			lit = literal{kind: 's', text: val.text}
		case 'w':
			switch strings.ToLower(val.text) {
			case "true", "false":
				lit = literal{kind: 'b', text: strings.ToLower(val.text), b: strings.EqualFold(val.text, "true")}
			default:
				f, err := strconv.ParseFloat(val.text, 64)
				if err != nil || math.IsNaN(f) {
					return nil, fmt.Errorf("%q: %q is not a literal (a number, 'string', true or false)", s, val.text)
				}
				lit = literal{kind: 'n', text: val.text, num: f}
				if n, err := strconv.ParseInt(val.text, 10, 64); err == nil {
					lit.isInt, lit.i = true, n
				}
			}
		default:
			return nil, fmt.Errorf("%q: %q is not a literal", s, val.text)
		}
		op.text = strings.Replace(op.text, "==", "=", 1)
		out = append(out, cmp{col: col.text, op: op.text, lit: lit})
		i += 3
		if i == len(toks) {
			break
		}
		if toks[i].kind != 'w' || !strings.EqualFold(toks[i].text, "and") {
			return nil, fmt.Errorf("%q: want \"and\" after a comparison, got %q", s, toks[i].text)
		}
		i++
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return out, nil
}

type token struct {
	kind byte // 'w' word (name, number, keyword), 'q' quoted string, 'o' operator
	text string
}

func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c { // a doubled quote is one
						b.WriteByte(c)
						j++
						continue
					}
					break
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("%q: unterminated string", s)
			}
			out = append(out, token{'q', b.String()})
			i = j + 1
		case strings.ContainsRune("=!<>", rune(c)):
			j := i + 1
			if j < len(s) && s[j] == '=' {
				j++
			}
			op := s[i:j]
			if op == "!" {
				return nil, fmt.Errorf("%q: \"!\" is not an operator", s)
			}
			out = append(out, token{'o', op})
			i = j
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n'\"=!<>", rune(s[j])) {
				j++
			}
			w := s[i:j]
			for _, r := range w {
				if !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-+:$", r)) {
					return nil, fmt.Errorf("%q: unexpected %q", s, r)
				}
			}
			out = append(out, token{'w', w})
			i = j
		}
	}
	return out, nil
}

// errNoFit: the literal does not fit the column's type; the file is kept.
var errNoFit = errors.New("literal does not fit the column")

// mayMatch: some row of f may have col OP lit, given the column's
// min/max. A column the file lacks, or with no bounds (only nulls or
// NaNs), has no row for which a comparison is true (NaN compares false
// too, except != which is kept).
func (c cmp) mayMatch(f lake.DataFile) bool {
	var st *lake.ColumnStats
	for i := range f.Columns {
		if f.Columns[i].Name == c.col {
			st = &f.Columns[i]
		}
	}
	if st == nil {
		return false
	}
	if !st.HasMinMax {
		return c.op == "!=" && st.NaNCount > 0
	}
	lo, err := compareBound(st.Type, st.Min, c.lit)
	if err != nil {
		return true
	}
	hi, err := compareBound(st.Type, st.Max, c.lit)
	if err != nil {
		return true
	}
	// lo = sign(min - lit), hi = sign(max - lit).
	switch c.op {
	case "=":
		return lo <= 0 && hi >= 0
	case "!=":
		return !(lo == 0 && hi == 0) || st.NaNCount > 0
	case "<":
		return lo < 0
	case "<=":
		return lo <= 0
	case ">":
		return hi > 0
	case ">=":
		return hi >= 0
	}
	return true
}

// compareBound compares a catalog bound (text of type typ) with lit: -1,
// 0, +1; errNoFit when lit cannot be compared with the type.
func compareBound(typ, bound string, lit literal) (int, error) {
	switch typ {
	case "int32", "int64":
		if lit.kind != 'n' {
			return 0, errNoFit
		}
		n, err := strconv.ParseInt(bound, 10, 64)
		if err != nil {
			return 0, err
		}
		if lit.isInt {
			return sign3(n, lit.i), nil
		}
		return fcmp(float64(n), lit.num), nil
	case "double":
		if lit.kind != 'n' {
			return 0, errNoFit
		}
		x, err := strconv.ParseFloat(bound, 64)
		if err != nil {
			return 0, err
		}
		return fcmp(x, lit.num), nil
	case "boolean":
		if lit.kind != 'b' {
			return 0, errNoFit
		}
		b := bound == "true"
		switch {
		case b == lit.b:
			return 0, nil
		case b:
			return 1, nil
		}
		return -1, nil
	case "timestamp_ms":
		t, err := time.Parse(catalogTimestamp, bound)
		if err != nil {
			return 0, err
		}
		var ms int64
		switch lit.kind {
		case 's':
			lt, err := time.Parse(time.RFC3339Nano, lit.text)
			if err != nil {
				return 0, errNoFit
			}
			// A literal between two milliseconds: compare at µs.
			a, b := t.UnixMilli()*1000, lt.UnixMicro()
			return sign3(a, b), nil
		case 'n':
			if !lit.isInt {
				return 0, errNoFit
			}
			ms = lit.i
		default:
			return 0, errNoFit
		}
		return sign3(t.UnixMilli(), ms), nil
	case "string", "json":
		if lit.kind != 's' {
			return 0, errNoFit
		}
		return strings.Compare(bound, lit.text), nil
	case "binary":
		if lit.kind != 's' {
			return 0, errNoFit
		}
		b, err := unBlobText(bound)
		if err != nil {
			return 0, err
		}
		return strings.Compare(b, lit.text), nil
	}
	return 0, errNoFit
}

func sign3(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func fcmp(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// unBlobText decodes the catalog's text of a binary bound: \xNN escapes,
// other bytes as they are.
func unBlobText(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+3 >= len(s) || s[i+1] != 'x' {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		n, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
		if err != nil {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		b.WriteByte(byte(n))
		i += 3
	}
	return b.String(), nil
}
