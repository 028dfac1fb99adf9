package main

import (
	"testing"

	"github.com/segkit/segkit/lake"
)

// FuzzParseWhere: --where's parser never panics on any text, and what it
// parses can be evaluated against a data file's statistics (with and
// without column stats) without panicking; the same text parses the same
// way twice.
func FuzzParseWhere(f *testing.F) {
	for _, s := range []string{"value.amount > 100", "offset >= 5 and timestamp < '2026-03-02T09:00:00Z'", "key = 'k1'", "value.ok = true", "x >", "a and", `"q" = "x"`, "offset != -1"} {
		f.Add(s)
	}
	files := []lake.DataFile{{}, {StartOffset: 3, EndOffset: 9, Rows: 2, Columns: []lake.ColumnStats{
		{Name: "value.amount", Type: "double", HasMinMax: true, Min: "1.5", Max: "200"},
		{Name: "key", Type: "binary", HasMinMax: true, Min: "a", Max: "z"},
		{Name: "value.ok", Type: "boolean", HasMinMax: true, Min: "false", Max: "true"},
	}}}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := parseWhere(s)
		e2, err2 := parseWhere(s)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("%q parses once and fails once", s)
		}
		if err != nil {
			return
		}
		for _, df := range files {
			if e.mayMatch(df) != e2.mayMatch(df) {
				t.Fatalf("%q evaluates two ways", s)
			}
		}
	})
}
