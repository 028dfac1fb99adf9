package lake

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

// speedTarget is issue 17's target: the build's throughput at least half
// of parquet-go's writing the same rows from memory.
const speedTarget = 0.5

// maxTrustedSpread is the widest spread of the rounds' ratios (their
// interquartile range over their median) under which the median is taken
// as the figure; above it the machine was too busy to trust the run, and
// it says so.
const maxTrustedSpread = 0.20

// TestParquetGoSameFile: the comparison is like with like. parquet-go's
// generic writer, given benchRows with the build's schema and options,
// writes the file the build writes from benchRecords, byte for byte: the
// same rows, schema, compression, pages and row groups.
func TestParquetGoSameFile(t *testing.T) {
	recs := benchRecords(10_000)
	sch := schemaOf(recs, DefaultMaxFields)
	var b builder
	out, _, err := b.build(0, sch, recs, DefaultMaxFields, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := writeParquetGo(&buf, sch, benchRows(recs)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, buf.Bytes()) {
		t.Fatalf("build %d bytes, parquet-go %d bytes: not the same file", len(out), buf.Len())
	}
}

// TestBuildSpeedRatio measures the build's throughput against
// parquet-go's generic writer writing the same rows from memory
// (BenchmarkBuild against BenchmarkParquetGoRows), interleaved in the
// same run so that a change of load hits both, and asserts the median
// ratio meets speedTarget, for the build alone and for the indexer's
// path (Indexer.buildRange in a table that has the records' schema:
// misfit checked, entry only). It runs only with SEGKIT_LAKE_SPEED=1 (a
// few seconds); SEGKIT_LAKE_SPEED_ROUNDS sets the rounds (15),
// SEGKIT_LAKE_SPEED_RECORDS the records per file (10,000), and
// SEGKIT_LAKE_SPEED_ALL=1 adds, measured the same way but not asserted,
// refBuild (the build before it was made faster) and the indexer's path
// in a new table (the schema merged after a first build, then built
// again).
//
// A round is 8 runs of each side, each after a GC, in rotating order (A
// B, B A, …); its ratio is parquet-go's median time per file over the
// build's. It prints each round, the median ratio with the rounds' min
// and max, and the ratio of each side's fastest run (the least
// disturbed); the run is called untrustworthy when the rounds'
// interquartile range is above maxTrustedSpread of the median.
//
//	SEGKIT_LAKE_SPEED=1 go test -run TestBuildSpeedRatio -v .
func TestBuildSpeedRatio(t *testing.T) {
	if os.Getenv("SEGKIT_LAKE_SPEED") != "1" {
		t.Skip("SEGKIT_LAKE_SPEED=1 runs it")
	}
	rounds := envInt(t, "SEGKIT_LAKE_SPEED_ROUNDS", 15)
	n := envInt(t, "SEGKIT_LAKE_SPEED_RECORDS", 10_000)
	recs := benchRecords(n)
	sch := schemaOf(recs, DefaultMaxFields)
	rows := benchRows(recs)
	var size int64
	for _, r := range recs {
		size += r.size()
	}
	var b, bi builder
	var buf bytes.Buffer
	names := map[string]string{}
	sides := []struct {
		name string
		run  func()
	}{
		{"parquet-go", func() {
			if err := writeParquetGo(&buf, sch, rows); err != nil {
				t.Fatal(err)
			}
		}},
		{"build", func() {
			if _, _, err := b.build(0, sch, recs, DefaultMaxFields, nil); err != nil {
				t.Fatal(err)
			}
		}},
		// Indexing: Indexer.buildRange's path in a table that has the
		// records' schema (the steady state), the entry only.
		{"indexer", func() {
			if err := buildAsIndexer(&bi, sch, recs, names); err != nil {
				t.Fatal(err)
			}
		}},
	}
	if os.Getenv("SEGKIT_LAKE_SPEED_ALL") == "1" {
		sides = append(sides, struct {
			name string
			run  func()
		}{"refBuild", func() {
			if _, _, err := refBuild(0, sch, recs, DefaultMaxFields, rowsPerRowGroup); err != nil {
				t.Fatal(err)
			}
		}}, struct {
			name string
			run  func()
		}{"indexer_new_table", func() {
			// A new table: the first build finds the records do not fit
			// (misfit), the range's schema is merged, the build is redone.
			if err := buildAsIndexer(&bi, Schema{}, recs, names); err != nil {
				t.Fatal(err)
			}
		}})
	}
	for _, sd := range sides {
		sd.run() // warm: buffers grown, code paged in
	}
	const runs = 8
	ratios := make([][]float64, len(sides)) // per side, per round: parquet-go's time over the side's
	all := make([][]time.Duration, len(sides))
	for i := range rounds {
		per := make([][]time.Duration, len(sides))
		for j := range runs {
			for k := range sides {
				sd := (k + i + j) % len(sides)
				d := timeOne(sides[sd].run)
				per[sd] = append(per[sd], d)
			}
		}
		line := fmt.Sprintf("round %2d:", i)
		for sd := range sides {
			all[sd] = append(all[sd], per[sd]...)
			r := float64(medianDur(per[0])) / float64(medianDur(per[sd]))
			ratios[sd] = append(ratios[sd], r)
			line += fmt.Sprintf("  %s %6.2f ms %6.1f MB/s", sides[sd].name, ms(medianDur(per[sd])), mbps(size, medianDur(per[sd])))
			if sd > 0 {
				line += fmt.Sprintf(" (%.3f)", r)
			}
		}
		t.Log(line)
	}
	t.Logf("%d records, %d bytes of keys, values and headers a file; %d rounds of %d runs", n, size, rounds, runs)
	for sd := 1; sd < len(sides); sd++ {
		rs := ratios[sd]
		med, lo, hi := median(rs), slices.Min(rs), slices.Max(rs)
		iqr := (quantile(rs, 0.75) - quantile(rs, 0.25)) / med
		best := float64(slices.Min(all[0])) / float64(slices.Min(all[sd]))
		t.Logf("%s/parquet-go throughput: median %.3f (min %.3f, max %.3f, interquartile %.0f%% of the median); fastest runs %.2f ms vs %.2f ms: %.3f",
			sides[sd].name, med, lo, hi, 100*iqr, ms(slices.Min(all[sd])), ms(slices.Min(all[0])), best)
		if sides[sd].name != "build" && sides[sd].name != "indexer" {
			continue
		}
		trusted := iqr <= maxTrustedSpread
		if !trusted {
			t.Logf("the rounds' interquartile range is %.0f%% of the median, above %.0f%%: the machine was too busy for this run to be trusted; run it again on a quieter one", 100*iqr, 100*maxTrustedSpread)
		}
		if med < speedTarget {
			t.Errorf("median ratio %.3f is below the target %.2f (trusted %v)", med, speedTarget, trusted)
		} else {
			t.Logf("target %.2f met (trusted %v)", speedTarget, trusted)
		}
	}
}

// timeOne times one run of f, after a GC.
func timeOne(f func()) time.Duration {
	runtime.GC()
	start := time.Now()
	f()
	return time.Since(start)
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

func median(x []float64) float64 {
	s := slices.Sorted(slices.Values(x))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// quantile is x's q-quantile, interpolated between the closest ranks.
func quantile(x []float64, q float64) float64 {
	s := slices.Sorted(slices.Values(x))
	p := q * float64(len(s)-1)
	i := int(p)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (p-float64(i))*(s[i+1]-s[i])
}

func medianDur(x []time.Duration) time.Duration {
	f := make([]float64, len(x))
	for i, d := range x {
		f[i] = float64(d)
	}
	return time.Duration(median(f))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mbps(size int64, d time.Duration) float64 { return float64(size) / d.Seconds() / 1e6 }

// TestBuildAllocs: the build does not allocate per row. What it allocates
// (parquet-go's writer, its pages, the entry) is about constant and grows
// with the pages: 735 allocations for 10,000 rows of benchRecords, 101
// more for 30,000 more (Go 1.27, parquet-go 0.32.1). The bounds: 1,000
// for 10,000 rows, one per 100 rows after.
func TestBuildAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	allocs := func(n int) float64 {
		recs := benchRecords(n)
		sch := schemaOf(recs, DefaultMaxFields)
		var b builder
		return testing.AllocsPerRun(3, func() {
			if _, _, err := b.build(0, sch, recs, DefaultMaxFields, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	a, b := allocs(10_000), allocs(40_000)
	t.Logf("allocations a build: %.0f for 10,000 rows, %.0f for 40,000 (%.4f a row after the first 10,000)", a, b, (b-a)/30_000)
	if a > 1000 || b-a > 300 {
		t.Errorf("allocations a build: %.0f for 10,000 rows (bound 1000), %.0f more for 30,000 more (bound 300)", a, b-a)
	}
}
