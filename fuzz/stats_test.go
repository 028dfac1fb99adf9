package fuzz

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

var (
	fuzzStats = flag.Bool("fuzzstats", false, "TestLogOpsStats: replay the FuzzLogOps corpus and print the operations per input")
	fuzzCache = flag.Bool("fuzzcache", false, "with -fuzzstats, include the inputs the fuzzing engine found ($GOCACHE/fuzz)")
)

// TestLogOpsStats replays the FuzzLogOps corpus (testdata/fuzz/FuzzLogOps,
// and with -fuzzcache the entries campaigns added under $GOCACHE/fuzz) and
// prints how many operations an input executes on average, by kind, and
// the time per input: the figures it prints (docs/fuzzing.md gives the command).
//
//	go test ./fuzz -run TestLogOpsStats -fuzzstats -fuzzcache -v
func TestLogOpsStats(t *testing.T) {
	if !*fuzzStats {
		t.Skip("run with -fuzzstats")
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzLogOps", "*"))
	cached := 0
	if *fuzzCache && runtime.GOOS != "js" && runtime.GOOS != "wasip1" {
		out, err := exec.Command("go", "env", "GOCACHE").Output()
		if err == nil {
			c, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "fuzz", "github.com", "segkit", "segkit", "fuzz", "FuzzLogOps", "*"))
			cached = len(c)
			files = append(files, c...)
		}
	}
	var total logOpsStats
	inputs := 0
	sizes := make([]int, 0, len(files))
	start := time.Now()
	for _, f := range files {
		data, err := readSeed(f)
		if err != nil {
			continue
		}
		var st logOpsStats
		if msg := capture(t, func(tb testing.TB) { st = runLogOps(tb, data) }); msg != "" {
			t.Errorf("%s: %s", f, firstLine(msg))
			continue
		}
		inputs++
		sizes = append(sizes, st.Ops)
		total.Ops += st.Ops
		total.Crashes += st.Crashes
		total.Records += st.Records
		for k := range total.ByKind {
			total.ByKind[k] += st.ByKind[k]
		}
	}
	if inputs == 0 {
		t.Fatal("no inputs")
	}
	el := time.Since(start)
	sort.Ints(sizes)
	var b strings.Builder
	fmt.Fprintf(&b, "FuzzLogOps: %d inputs (%d from the fuzzing cache), %.1f operations per input on average (median %d, max %d), %.1f crash images and %.1f records per input, %v per input\n",
		inputs, cached, float64(total.Ops)/float64(inputs), sizes[len(sizes)/2], sizes[len(sizes)-1],
		float64(total.Crashes)/float64(inputs), float64(total.Records)/float64(inputs), (el / time.Duration(inputs)).Round(time.Microsecond))
	for k, n := range total.ByKind {
		if k == opAppendB {
			continue
		}
		if k == opAppend {
			n += total.ByKind[opAppendB]
		}
		fmt.Fprintf(&b, "  %-16s %5.1f%%\n", opNames[k], 100*float64(n)/float64(total.Ops))
	}
	fmt.Fprint(os.Stdout, b.String())
}
