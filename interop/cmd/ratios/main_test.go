package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		name, in, bench string
		ns, mbs, allocs float64
		batch           float64
		ok              bool
	}{
		{"plain", "BenchmarkDecode/segkit/16x1KiB/none-2   	 1000	 391.0 ns/op	 42000.5 MB/s	 0 B/op	 0 allocs/op",
			"Decode/segkit/16x1KiB/none", 391, 42000.5, 0, 0, true},
		{"extra_metric", "BenchmarkEncode/franz6/1000x100B/gzip-2  100  1596977 ns/op  76.00 MB/s  45795 B/batch  6 B/op  0 allocs/op",
			"Encode/franz6/1000x100B/gzip", 1596977, 76, 0, 45795, true},
		{"no_procs_suffix", "BenchmarkCRC32C/16x1KiB 5 1204 ns/op", "CRC32C/16x1KiB", 1204, 0, 0, 0, true},
		{"not_a_result", "goos: linux", "", 0, 0, 0, 0, false},
		{"no_ns", "BenchmarkX 5 3 allocs/op", "", 0, 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, r, ok := parseLine(tt.in)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if name != tt.bench || r.ns != tt.ns || r.mbs != tt.mbs || r.allocs != tt.allocs || r.extra["B/batch"] != tt.batch {
				t.Errorf("got %q %+v", name, r)
			}
		})
	}
}

func TestPatternSelectsExactlyOne(t *testing.T) {
	names := []string{"Decode/segkit/16x1KiB/none", "Decode/segkit/16x1KiB/none2", "Encode/franz6/1000x100B/gzip", "Encode/franz/1000x100B/gzip", "CRC32C/16x1KiB"}
	for _, want := range names {
		pat := strings.Split(pattern(want), "/")
		for _, n := range names {
			parts := strings.Split("Benchmark"+n, "/")
			match := len(parts) == len(pat)
			for i := 0; match && i < len(pat); i++ {
				match = regexp.MustCompile(pat[i]).MatchString(parts[i])
			}
			if match != (n == want) {
				t.Errorf("pattern(%q) = %q: matches %q = %v", want, pattern(want), n, match)
			}
		}
	}
}

func TestCaseOf(t *testing.T) {
	for in, want := range map[string]string{
		"Encode/segkit/16x1KiB/gzip":   "Encode/16x1KiB/gzip",
		"Raw/compress/16x1KiB/gzip":    "Encode/16x1KiB/gzip",
		"Raw/decompress/16x1KiB/gzip":  "Decode/16x1KiB/gzip",
		"Decode/kafkago/1000x100B/lz4": "Decode/1000x100B/lz4",
		"CRC32C/1000x100B":             "Decode/1000x100B/none",
	} {
		if got := caseOf(in); got != want {
			t.Errorf("caseOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		name   string
		s      stat
		goal   float64
		atMost bool
		want   string
	}{
		{"met", stat{2.1, 2.2, 2.15}, 2, false, "ok"},
		{"one_round", stat{2.1}, 2, false, "ok? (untrusted: 1 round(s), no spread to judge)"},
		{"missed", stat{1.5, 1.6, 1.55}, 2, false, "MISS"},
		{"disagree", stat{1.9, 2.2, 2.1}, 2, false, "ok? (untrusted: rounds on both sides of the goal)"},
		{"spread", stat{3, 5, 4}, 2, false, "ok? (untrusted: spread 1.67 > 1.15)"},
		{"at_most", stat{1.01, 1.02, 1.03}, 1.05, true, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &report{spreadMax: 1.15}
			if got := r.verdict(tt.s, tt.goal, tt.atMost); got != tt.want {
				t.Errorf("verdict = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPrintInstr(t *testing.T) {
	r := &report{instr: map[string]float64{
		"Encode/segkit/1000x100B/snappy": 1256, "Raw/compress/1000x100B/snappy": 1000, "Encode/franz/1000x100B/snappy": 1300,
		"Encode/segkit/16x1KiB/gzip": 1000, "Raw/compress/16x1KiB/gzip": 1000, "Encode/franz6/16x1KiB/gzip": 1000,
	}}
	var out bytes.Buffer
	r.printInstr(&out)
	for _, want := range []string{
		"| encode / raw compress | 1000x100B | snappy | 1.256x | <= 1.05x | MISS |",
		"| encode: franz-go / segkit | 1000x100B | snappy | 1.035x | >= 1x | ok |",
		"| encode / raw compress | 16x1KiB | gzip | 1.000x | <= 1.05x | ok |",
		"| encode: franz-go (level 6) / segkit | 16x1KiB | gzip | 1.000x | >= 1x | ok |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no line %q in\n%s", want, out.String())
		}
	}
	if r.instrMisses != 1 {
		t.Errorf("instrMisses = %d, want 1", r.instrMisses)
	}
}
