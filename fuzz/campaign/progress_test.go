package main

import (
	"strings"
	"testing"
	"time"
)

// fakeOutput is what `go test -fuzz` prints for a target that fails after
// some fuzzing.
const fakeOutput = `fuzz: elapsed: 0s, gathering baseline coverage: 0/144 completed
fuzz: elapsed: 2s, gathering baseline coverage: 144/144 completed, now fuzzing with 2 workers
fuzz: elapsed: 5s, execs: 1500 (500/sec), new interesting: 3 (total: 147)
fuzz: elapsed: 8s, execs: 3000 (500/sec), new interesting: 5 (total: 149)
fuzz: minimizing 31-byte failing input file
fuzz: elapsed: 9s, minimizing
--- FAIL: FuzzX (9.18s)
    --- FAIL: FuzzX (0.00s)
        x_test.go:9: found it

    Failing input written to testdata/fuzz/FuzzX/2e18bdf4bcd84ccf
    To re-run:
    go test -run=FuzzX/2e18bdf4bcd84ccf
FAIL
exit status 1
FAIL	example.com/x	9.186s`

func TestParseProgress(t *testing.T) {
	tests := []struct {
		line string
		want progress
		ok   bool
	}{
		{"fuzz: elapsed: 0s, gathering baseline coverage: 0/144 completed", progress{Baseline: true, Total: 144}, true},
		{"fuzz: elapsed: 2s, gathering baseline coverage: 144/144 completed, now fuzzing with 2 workers", progress{Elapsed: 2 * time.Second, Baseline: true, BaselineDone: true, Total: 144}, true},
		{"fuzz: elapsed: 1m3s, execs: 123456 (2001/sec), new interesting: 7 (total: 151)", progress{Elapsed: 63 * time.Second, Execs: 123456, Rate: 2001, NewInteresting: 7, Total: 151}, true},
		{"fuzz: elapsed: 9s, minimizing", progress{Elapsed: 9 * time.Second}, true},
		{"--- FAIL: FuzzX (9.18s)", progress{}, false},
		{"ok  	example.com/x	60.01s", progress{}, false},
	}
	for _, tt := range tests {
		got, ok := parseProgress(tt.line)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseProgress(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func TestStatsFromFakeOutput(t *testing.T) {
	var s stats
	for _, l := range strings.Split(fakeOutput, "\n") {
		s.feed(l)
	}
	if s.Last.Execs != 3000 || s.NewEntries() != 5 || s.Last.Total != 149 || s.BaselineTotal != 144 || s.BaselineAt != 2*time.Second {
		t.Fatalf("stats %+v", s)
	}
	if r := s.ExecsPerSec(); r != 500 {
		t.Fatalf("execs/s %v, want 3000 execs over the 6 s after the baseline", r)
	}
	if s.Crasher != "testdata/fuzz/FuzzX/2e18bdf4bcd84ccf" || s.Rerun != "FuzzX/2e18bdf4bcd84ccf" {
		t.Fatalf("crasher %q, rerun %q", s.Crasher, s.Rerun)
	}
	r := result{Target: target{Name: "FuzzX", ImportPath: "example.com/x"}, Stats: s}
	if got, want := r.Replay(), "go test -run='^FuzzX$/^2e18bdf4bcd84ccf$' example.com/x"; got != want {
		t.Fatalf("replay %q, want %q", got, want)
	}
	if len(s.Failed) == 0 || !strings.HasPrefix(s.Failed[0], "--- FAIL") {
		t.Fatalf("failure lines %q", s.Failed)
	}
}

func TestSelectTargets(t *testing.T) {
	all := []target{{Name: "FuzzA", ImportPath: "m/a"}, {Name: "FuzzRoundTrip", ImportPath: "m/a"}, {Name: "FuzzRoundTrip", ImportPath: "m/b"}, {Name: "FuzzLogOps", ImportPath: "m/fuzz"}}
	tests := []struct {
		spec string
		want int
		err  bool
	}{
		{"", 4, false},
		{"FuzzA,FuzzLogOps", 2, false},
		{"FuzzRoundTrip", 2, false},
		{"m/b.FuzzRoundTrip", 1, false},
		{"Fuzz(A|Log)", 2, false},
		{"FuzzNope", 0, true},
		{"(", 0, true},
	}
	for _, tt := range tests {
		got, err := selectTargets(all, tt.spec)
		if (err != nil) != tt.err || len(got) != tt.want {
			t.Errorf("selectTargets(%q) = %d targets, %v; want %d, error %v", tt.spec, len(got), err, tt.want, tt.err)
		}
	}
}

func TestIsFuzzName(t *testing.T) {
	for name, want := range map[string]bool{"Fuzz": true, "FuzzX": true, "Fuzz_x": true, "Fuzzy": false, "TestX": false, "fuzzX": false} {
		if isFuzzName(name) != want {
			t.Errorf("isFuzzName(%q) = %v", name, !want)
		}
	}
}

func TestFindTargets(t *testing.T) {
	got, err := findTargets([]string{"testdata/tinymod/tiny_test.go"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "FuzzTinyFail,FuzzTinyPass" {
		t.Fatalf("targets %v", got)
	}
}
