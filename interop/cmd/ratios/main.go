// Command ratios reads the output of the interop module's comparative
// benchmarks (go test -bench) and prints segkit against the other libraries
// and against its floors, with the targets segkit set itself:
//
//	cd interop
//	go test -run '^$' -bench . -benchtime=1s -count=1 | tee bench.txt
//	go run ./cmd/ratios < bench.txt
//
// When the input holds several runs of a benchmark (concatenated files,
// or -count > 1), the fastest is used. On a machine shared with other work,
// one run's ratios mix benchmarks measured minutes apart under different
// load; several short runs and the fastest of each are steadier. With
// -runs N, ratios runs the benchmarks itself N times in a row (each a
// separate go test -count=1 with -benchtime, default 200ms), echoes their
// output to stderr and prints the table from all of them:
//
//	go run ./cmd/ratios -runs 5 -benchtime 200ms
//
// Decode, uncompressed: segkit at least 4x faster than the fastest of
// franz-go (kgo.ProcessFetchPartition), sarama and kafka-go, 0 allocs, and
// on 16x1KiB within 2x of hash/crc32 Castagnoli over the same bytes.
// Encode, uncompressed: at least 1.35x (16x1KiB) and 1.5x (1000x100B)
// faster than franz-go, 0 allocs. Compressed: decode within 1.15x of raw
// decompression (BenchmarkRaw/decompress) plus segkit's uncompressed decode
// of the same shape; encode within 1.05x of raw compression.
//
// The "kmsg" decode line (franz-go's kmsg primitives in a hand-written
// loop) is shown for information and is not one of "the three".
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

type result struct {
	ns, mbs, allocs float64
}

var line = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+([\d.]+) MB/s)?(?:\s+[\d.]+ B/op)?(?:\s+([\d.]+) allocs/op)?`)

func parse(r io.Reader) (map[string]result, error) {
	out := map[string]result{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := line.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		var res result
		res.ns, _ = strconv.ParseFloat(m[2], 64)
		res.mbs, _ = strconv.ParseFloat(m[3], 64)
		res.allocs, _ = strconv.ParseFloat(m[4], 64)
		// Several runs may be concatenated: keep the fastest of each
		// benchmark, the usual estimate on a machine shared with other work.
		if prev, ok := out[m[1]]; !ok || res.ns < prev.ns {
			out[m[1]] = res
		}
	}
	return out, sc.Err()
}

var (
	shapes  = []string{"16x1KiB", "1000x100B"}
	codecs  = []string{"none", "gzip", "snappy", "lz4", "zstd"}
	others  = []string{"franz", "sarama", "kafkago"}
	verdict = map[bool]string{true: "ok", false: "MISS"}
)

func fmtRes(r result, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.0f ns %.0f MB/s %.0f allocs", r.ns, r.mbs, r.allocs)
}

func main() {
	runs := flag.Int("runs", 0, "run the benchmarks this many times instead of reading stdin")
	benchtime := flag.String("benchtime", "200ms", "-benchtime for -runs")
	bench := flag.String("bench", ".", "-bench pattern for -runs")
	flag.Parse()
	var in io.Reader = os.Stdin
	if *runs > 0 {
		var all bytes.Buffer
		for i := range *runs {
			fmt.Fprintf(os.Stderr, "ratios: run %d of %d\n", i+1, *runs)
			cmd := exec.Command("go", "test", "-run", "^$", "-bench", *bench, "-benchtime", *benchtime, "-count", "1", ".")
			cmd.Stdout = io.MultiWriter(&all, os.Stderr)
			cmd.Stderr = os.Stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintln(os.Stderr, "ratios:", err)
				os.Exit(1)
			}
		}
		in = &all
	}
	res, err := parse(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if len(res) == 0 {
		fmt.Fprintln(os.Stderr, "ratios: no benchmark lines on stdin")
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	misses := 0
	check := func(ok bool) string {
		if !ok {
			misses++
		}
		return verdict[ok]
	}

	for _, dir := range []string{"Decode", "Encode"} {
		fmt.Fprintf(w, "## %s\n\n", dir)
		fmt.Fprintf(w, "| shape | codec | library | ns/op | MB/s | allocs/op | segkit speed-up |\n|---|---|---|---:|---:|---:|---:|\n")
		for _, s := range shapes {
			for _, c := range codecs {
				seg, ok := res[dir+"/segkit/"+s+"/"+c]
				if !ok {
					continue
				}
				libs := append([]string{"segkit"}, others...)
				if dir == "Decode" {
					libs = append(libs, "kmsg")
				}
				for _, lib := range libs {
					r, ok := res[dir+"/"+lib+"/"+s+"/"+c]
					if !ok {
						continue
					}
					name := lib
					if lib == "kmsg" {
						name = "kmsg (info)"
					}
					fmt.Fprintf(w, "| %s | %s | %s | %.0f | %.0f | %.0f | %.2fx |\n", s, c, name, r.ns, r.mbs, r.allocs, r.ns/seg.ns)
				}
			}
		}
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "## Targets\n\n| target | shape | codec | measured | goal | verdict |\n|---|---|---|---:|---:|---|\n")
	for _, s := range shapes {
		dec, okd := res["Decode/segkit/"+s+"/none"]
		enc, oke := res["Encode/segkit/"+s+"/none"]
		if okd {
			best, bestName := 0.0, ""
			for _, o := range others {
				if r, ok := res["Decode/"+o+"/"+s+"/none"]; ok && (best == 0 || r.ns < best) {
					best, bestName = r.ns, o
				}
			}
			if best > 0 {
				fmt.Fprintf(w, "| decode vs fastest of the three (%s) | %s | none | %.2fx | >= 4x | %s |\n", bestName, s, best/dec.ns, check(best/dec.ns >= 4))
			}
			fmt.Fprintf(w, "| decode allocs | %s | none | %.0f | 0 | %s |\n", s, dec.allocs, check(dec.allocs == 0))
			if crc, ok := res["CRC32C/"+s]; ok {
				goal, isTarget := "<= 2x", s == "16x1KiB"
				v := "info"
				if isTarget {
					v = check(dec.ns/crc.ns <= 2)
				}
				if !isTarget {
					goal = "(none)"
				}
				fmt.Fprintf(w, "| decode / CRC-32C floor (%.0f ns) | %s | none | %.2fx | %s | %s |\n", crc.ns, s, dec.ns/crc.ns, goal, v)
			}
		}
		if oke {
			if fr, ok := res["Encode/franz/"+s+"/none"]; ok {
				goal := 1.35
				if s == "1000x100B" {
					goal = 1.5
				}
				fmt.Fprintf(w, "| encode vs franz-go | %s | none | %.2fx | >= %.2fx | %s |\n", s, fr.ns/enc.ns, goal, check(fr.ns/enc.ns >= goal))
			}
			fmt.Fprintf(w, "| encode allocs | %s | none | %.0f | 0 | %s |\n", s, enc.allocs, check(enc.allocs == 0))
		}
		for _, c := range codecs[1:] {
			if d, ok := res["Decode/segkit/"+s+"/"+c]; ok && okd {
				if raw, ok := res["Raw/decompress/"+s+"/"+c]; ok {
					ref := raw.ns + dec.ns
					fmt.Fprintf(w, "| decode / (raw decompress %.0f + parse %.0f ns) | %s | %s | %.3fx | <= 1.15x | %s |\n", raw.ns, dec.ns, s, c, d.ns/ref, check(d.ns/ref <= 1.15))
				}
				fmt.Fprintf(w, "| decode allocs | %s | %s | %.0f | 0 | %s |\n", s, c, d.allocs, check(d.allocs == 0))
			}
			if e, ok := res["Encode/segkit/"+s+"/"+c]; ok {
				if raw, ok := res["Raw/compress/"+s+"/"+c]; ok {
					fmt.Fprintf(w, "| encode / raw compress (%.0f ns) | %s | %s | %.3fx | <= 1.05x | %s |\n", raw.ns, s, c, e.ns/raw.ns, check(e.ns/raw.ns <= 1.05))
				}
				fmt.Fprintf(w, "| encode allocs | %s | %s | %.0f | 0 | %s |\n", s, c, e.allocs, check(e.allocs == 0))
			}
		}
	}
	fmt.Fprintf(w, "\n%d target(s) missed.\n", misses)

	var rest []string
	for k := range res {
		if strings.HasPrefix(k, "Raw/") || strings.HasPrefix(k, "CRC32C/") {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	fmt.Fprintf(w, "\n## Floors and raw codecs\n\n| benchmark | result |\n|---|---|\n")
	for _, k := range rest {
		fmt.Fprintf(w, "| %s | %s |\n", k, fmtRes(res[k], true))
	}
}
