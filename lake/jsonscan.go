package lake

import (
	"bytes"
	"encoding/json"
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
	b []byte
	i int
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
