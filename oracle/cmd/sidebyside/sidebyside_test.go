package main

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/segkit/segkit/oracle"
)

// TestQuick runs the whole harness end to end on tiny inputs (8 MiB, 20
// partitions, one run, benchmarks of 20 ms: about 15 s, most of it JVM
// start-ups, and the WASM builds when they are not cached) and checks
// that the table has every row, each with a positive ratio. The figures
// themselves need real sizes: -quick (64 MiB, 100 partitions, 3 runs) with
// SEGKIT_SIDEBYSIDE=1 runs that instead:
//
//	SEGKIT_SIDEBYSIDE=1 go test -run TestQuick -v ./cmd/sidebyside
func TestQuick(t *testing.T) {
	oracle.Require(t)
	args := []string{"-size", "8MiB", "-dump-size", "8MiB", "-partitions", "20", "-partition-size", "64KiB", "-verify-size", "16MiB", "-runs", "1", "-warmup", "0", "-benchtime", "20ms"}
	if os.Getenv("SEGKIT_SIDEBYSIDE") == "1" {
		args = []string{"-quick"}
	}
	parts, large := "20", "16 MiB"
	if os.Getenv("SEGKIT_SIDEBYSIDE") == "1" {
		parts, large = "100", "256 MiB"
	}
	var out, log bytes.Buffer
	if err := run(append(args, "-dir", t.TempDir()), &out, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.Bytes())
	}
	t.Logf("\n%s", out.Bytes())
	want := []string{
		"dump, wall",
		"dump, steady",
		"dump, steady vs the mapped CRC floor",
		"the mapped CRC floor vs Kafka's dump, steady",
		"dump --deep-iteration --print-data-log, wall",
		"dump --deep-iteration --print-data-log, steady",
		"recover, wall",
		"recover, steady",
		"recover, wall vs the copy floor",
		"the copy floor vs Kafka's recover, wall",
		"recover in place, wall",
		"recover in place, steady",
		"recover vs CRC floor (segviz, wall)",
		"recover vs CRC floor (repair.Recover in-process)",
		"verify, " + parts + " partitions vs CRC floor",
		"verify, " + parts + " partitions, GOMAXPROCS=2 vs 1",
		"verify, " + parts + " partitions, peak RSS",
		"verify, 1 partition vs CRC floor",
		"verify, 1 partition, GOMAXPROCS=2 vs 1",
		"verify, 1 partition, peak RSS",
		"the mapped CRC floor, 2 goroutines vs 1",
		"verify, large dir " + large + " vs CRC floor",
		"verify, large dir " + large + ", GOMAXPROCS=2 vs 1",
		"verify, large dir " + large + ", peak RSS",
	}
	for _, shape := range []string{"16x1KiB", "1000x100B"} {
		for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
			want = append(want, "WASM decode "+shape+"/"+codec+" vs native", "WASM decode "+shape+"/"+codec+" vs native without asm/SIMD")
		}
		want = append(want, "WASM CRC-32C alone "+shape+" vs native decode")
	}
	want = append(want, "WASM verify, 1 partition vs native on 1 core", "WASM verify, 1 partition vs native on 2 cores")
	ratio := regexp.MustCompile(`^([0-9.]+)× \(([0-9.]+)×\)$`)
	got := map[string]bool{}
	for _, line := range strings.Split(out.String(), "\n") {
		cols := strings.Split(line, "|")
		if len(cols) != 9 || strings.TrimSpace(cols[0]) == "#" {
			continue
		}
		name := strings.TrimSpace(cols[1])
		got[name] = true
		m := ratio.FindStringSubmatch(strings.TrimSpace(cols[5]))
		if m == nil {
			t.Errorf("row %q: ratio %q is not \"N× (N×)\"", name, cols[5])
			continue
		}
		for _, s := range m[1:] {
			v, err := strconv.ParseFloat(s, 64)
			// On tiny inputs a steady-state rate (the run less the
			// start-up) can round to 0: the row then says "n/a".
			tinySteady := parts == "20" && strings.Contains(name, "steady") && strings.Contains(line, "n/a")
			if err != nil || !(v > 0 || tinySteady && v == 0) {
				t.Errorf("row %q: ratio %q is not a positive number", name, s)
			}
		}
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("no row %q", w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d rows, want %d", len(got), len(want))
	}
}
