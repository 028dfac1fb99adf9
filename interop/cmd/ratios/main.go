// Command ratios runs (or reads) the interop module's comparative
// benchmarks and prints segkit against the other libraries and against its
// floors, with the targets of issue 19, every figure a ratio taken round by
// round with its spread:
//
//	cd interop
//	go run ./cmd/ratios                          # 5 interleaved rounds, 100ms per benchmark
//	go run ./cmd/ratios -runs 9 -benchtime 200ms # more rounds, longer runs
//	go run ./cmd/ratios -bench 'Encode|Raw'      # some benchmarks only
//	go run ./cmd/ratios -instr                   # and callgrind instruction counts
//	go test -run '^$' -bench . -count 5 | go run ./cmd/ratios -runs 0
//
// # Rounds and interleaving
//
// On a machine shared with other work, a ratio of two benchmarks measured
// minutes apart mixes two different loads. ratios therefore builds the
// test binary once (go test -c) and runs -runs rounds; each round runs
// every benchmark once, each in its own process (-test.benchtime), grouped
// by case: the libraries (and the raw codec, and the CRC floor) of one
// direction, shape and codec back to back, in an order that rotates from
// round to round, so that no library always runs first or after a
// particular other one. A first round of one iteration each lists the
// benchmarks and warms the page cache; it is not measured.
//
// Every ratio is computed within a round (the two sides measured seconds
// apart) and reported as the median of the rounds with its range
// (min–max). A verdict is "ok" or "MISS" on the median; it is marked
// untrusted ("ok?" or "MISS?") when there are fewer than 3 rounds, when
// the rounds disagree (some on each side of the goal), or when the
// ratios' spread (max/min) is wider than -spread. The summary counts trusted misses and untrusted verdicts apart.
// Absolute times are medians, with each benchmark's own spread.
//
// With -runs 0 the benchmark output is read from standard input instead
// (concatenated files or -count N): the k-th result of each benchmark is
// round k. Those rounds are not interleaved by library, and the header
// says so.
//
// # Instruction counts
//
// -instr adds a column that noise hardly moves: for segkit, franz-go and
// the raw codec on every compressed path (Encode, Decode, Raw; and
// segkit's uncompressed decode, the parse in the compressed decodes'
// reference), the instructions per operation under valgrind
// --tool=callgrind, taken as the difference of two runs of n and 3n
// iterations (which cancels the process's start-up and the benchmark's
// set-up; n is about 20 ms of the benchmark, at least -instr-n). Repeated,
// they agree within about 1–2%. It is slow (valgrind runs code some 50×
// slower): a few seconds per benchmark. Instructions are not time: one
// AVX-512 fold or one wide memmove step counts as one instruction, and
// valgrind's CPU has no AVX-512, so the CRC-32C takes hash/crc32's SSE4.2
// path there. The instruction ratios are printed for the compressed paths,
// where the codec's scalar work dominates, and not for the uncompressed
// ones, which are CRC and memmove.
//
// # Targets (issue 19)
//
// Decode, uncompressed: at least 5× faster than the fastest of franz-go
// (kgo.ProcessFetchPartition), sarama and kafka-go on both shapes, at most
// 17 ns per record on 1000×100B, 0 allocs, and on 16×1KiB within 2× of
// hash/crc32 Castagnoli over the same bytes. Encode, uncompressed: at
// least 2× (16×1KiB) and 1.5× (1000×100B) faster than franz-go, 0 allocs.
// Compressed: decode within 1.15× of raw decompression
// (BenchmarkRaw/decompress) plus segkit's uncompressed decode of the same
// shape; encode within 1.05× of raw compression and never slower than any
// peer. For gzip the peers compress at their default level, klauspost's
// 5, and segkit at Java's default, 6 (the bytes Kafka's Java client
// writes), which costs more: the "franz6" benchmark is franz-go at level 6,
// the same work, and the verdict against franz-go for gzip is taken
// against it (the default-level comparison is shown too, as information).
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
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// result is one benchmark line: ns/op, MB/s, allocs/op and any other
// metric (by unit).
type result struct {
	ns, mbs, allocs float64
	extra           map[string]float64
}

// results holds each benchmark's results, one per round, in round order.
type results map[string][]result

var nameRE = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parseLine parses one benchmark output line.
func parseLine(s string) (string, result, bool) {
	m := nameRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", result{}, false
	}
	f := strings.Fields(m[2])
	r := result{extra: map[string]float64{}}
	seen := false
	for i := 0; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return "", result{}, false
		}
		switch f[i+1] {
		case "ns/op":
			r.ns, seen = v, true
		case "MB/s":
			r.mbs = v
		case "allocs/op":
			r.allocs = v
		default:
			r.extra[f[i+1]] = v
		}
	}
	return m[1], r, seen
}

func parse(r io.Reader, into results) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if name, res, ok := parseLine(sc.Text()); ok {
			into[name] = append(into[name], res)
		}
	}
	return sc.Err()
}

var (
	shapes = []string{"16x1KiB", "1000x100B"}
	codecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}
	others = []string{"franz", "sarama", "kafkago"}
	counts = map[string]float64{"16x1KiB": 16, "1000x100B": 1000}
)

// stat is one quantity over the rounds.
type stat []float64

func (s stat) median() float64 {
	c := slices.Clone(s)
	slices.Sort(c)
	n := len(c)
	if n%2 == 1 {
		return c[n/2]
	}
	return (c[n/2-1] + c[n/2]) / 2
}

func (s stat) spread() float64 {
	if lo := slices.Min(s); lo > 0 {
		return slices.Max(s) / lo
	}
	return 0
}

func (s stat) rangeText(format string) string {
	return fmt.Sprintf(format+"–"+format, slices.Min(s), slices.Max(s))
}

// report formats the tables.
type report struct {
	res          results
	rounds       int
	spreadMax    float64
	instr        map[string]float64 // instructions per op, by benchmark
	misses       int
	untrusted    int
	interleaved  bool
	benchtime    string
	instrSkipped bool
	instrMisses  int
}

// ns is a benchmark's ns/op over the rounds.
func (r *report) ns(name string) (stat, bool) {
	rs, ok := r.res[name]
	if !ok || len(rs) == 0 {
		return nil, false
	}
	s := make(stat, len(rs))
	for i, x := range rs {
		s[i] = x.ns
	}
	return s, true
}

// ratio is f(round) over the rounds where every benchmark it names has a
// result.
func (r *report) ratio(f func(get func(string) float64) float64, names ...string) (stat, bool) {
	n := -1
	for _, name := range names {
		rs, ok := r.res[name]
		if !ok {
			return nil, false
		}
		if n < 0 || len(rs) < n {
			n = len(rs)
		}
	}
	if n <= 0 {
		return nil, false
	}
	s := make(stat, n)
	for i := range n {
		s[i] = f(func(name string) float64 { return r.res[name][i].ns })
	}
	return s, true
}

// over is the per-round ratio a/b of two benchmarks' times.
func (r *report) over(a, b string) (stat, bool) {
	return r.ratio(func(get func(string) float64) float64 { return get(a) / get(b) }, a, b)
}

// mbs is a benchmark's MB/s at its median time (the bytes per op are the
// same in every round).
func (r *report) mbs(name string) float64 {
	x := r.res[name][0]
	ns, _ := r.ns(name)
	return x.mbs * x.ns / ns.median()
}

// maxAllocs is a benchmark's largest allocs/op over the rounds.
func (r *report) maxAllocs(name string) float64 {
	m := 0.0
	for _, x := range r.res[name] {
		m = max(m, x.allocs)
	}
	return m
}

// verdict judges s against goal (at least goal, or at most when atMost).
func (r *report) verdict(s stat, goal float64, atMost bool) string {
	meets := func(v float64) bool {
		if atMost {
			return v <= goal
		}
		return v >= goal
	}
	ok := meets(s.median())
	agree := true
	for _, v := range s {
		if meets(v) != ok {
			agree = false
		}
	}
	word := map[bool]string{true: "ok", false: "MISS"}[ok]
	switch {
	case len(s) < 3:
		r.untrusted++
		return fmt.Sprintf("%s? (untrusted: %d round(s), no spread to judge)", word, len(s))
	case !agree:
		r.untrusted++
		return word + "? (untrusted: rounds on both sides of the goal)"
	case len(s) > 1 && s.spread() > r.spreadMax:
		r.untrusted++
		return fmt.Sprintf("%s? (untrusted: spread %.2f > %.2f)", word, s.spread(), r.spreadMax)
	}
	if !ok {
		r.misses++
	}
	return word
}

// exact judges a count that noise does not move (allocations).
func (r *report) exact(ok bool) string {
	if !ok {
		r.misses++
		return "MISS"
	}
	return "ok"
}

func (r *report) instrText(name string) string {
	if v, ok := r.instr[name]; ok {
		return fmt.Sprintf("%.0f", v)
	}
	return ""
}

func (r *report) print(w io.Writer) {
	how := fmt.Sprintf("%d rounds, interleaved: each round runs every benchmark once, in its own process, -benchtime %s, the libraries of a case back to back in an order rotated each round", r.rounds, r.benchtime)
	if !r.interleaved {
		how = fmt.Sprintf("%d rounds read from standard input (the k-th result of each benchmark is round k; not interleaved by library)", r.rounds)
	}
	fmt.Fprintf(w, "# segkit against franz-go, sarama and kafka-go\n\n%s. Times are medians over the rounds (spread = max/min); ratios are taken within each round and shown as median (min–max).\n", how)
	if len(r.instr) > 0 {
		fmt.Fprintln(w, "instr/op: instructions per operation under valgrind --tool=callgrind (difference of two iteration counts): the same on every run.")
	}
	fmt.Fprintln(w)
	instrCol := len(r.instr) > 0
	for _, dir := range []string{"Decode", "Encode"} {
		has := false
		for k := range r.res {
			has = has || strings.HasPrefix(k, dir+"/")
		}
		if !has {
			continue
		}
		fmt.Fprintf(w, "## %s\n\n", dir)
		hdr := "| shape | codec | library | ns/op (median) | spread | MB/s | allocs/op | segkit speed-up, median (range) |"
		sep := "|---|---|---|---:|---:|---:|---:|---:|"
		if dir == "Encode" {
			hdr += " bytes out |"
			sep += "---:|"
		}
		if instrCol {
			hdr += " instr/op |"
			sep += "---:|"
		}
		fmt.Fprintf(w, "%s\n%s\n", hdr, sep)
		for _, s := range shapes {
			for _, c := range codecs {
				segName := dir + "/segkit/" + s + "/" + c
				if _, ok := r.res[segName]; !ok {
					continue
				}
				libs := append([]string{"segkit"}, others...)
				if dir == "Decode" {
					libs = append(libs, "kmsg")
				}
				if dir == "Encode" && c == "gzip" {
					libs = append(libs, "franz6")
				}
				for _, lib := range libs {
					name := dir + "/" + lib + "/" + s + "/" + c
					ns, ok := r.ns(name)
					if !ok {
						continue
					}
					label := lib
					switch lib {
					case "kmsg":
						label = "kmsg (info)"
					case "franz6":
						label = "franz (gzip level 6)"
					}
					up := "1"
					if lib != "segkit" {
						if q, ok := r.over(name, segName); ok {
							up = fmt.Sprintf("%.2fx (%s)", q.median(), q.rangeText("%.2f"))
						}
					}
					line := fmt.Sprintf("| %s | %s | %s | %.0f | %.2f | %.0f | %.0f | %s |", s, c, label, ns.median(), ns.spread(), r.mbs(name), r.maxAllocs(name), up)
					if dir == "Encode" {
						if v, ok := r.res[name][0].extra["B/batch"]; ok {
							line += fmt.Sprintf(" %.0f |", v)
						} else {
							line += " |"
						}
					}
					if instrCol {
						line += " " + r.instrText(name) + " |"
					}
					fmt.Fprintln(w, line)
				}
			}
		}
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "## Targets\n\n| target | shape | codec | measured, median (range) | goal | verdict |\n|---|---|---|---:|---:|---|\n")
	row := func(what, s, c string, q stat, goal string, v string) {
		fmt.Fprintf(w, "| %s | %s | %s | %.3fx (%s) | %s | %s |\n", what, s, c, q.median(), q.rangeText("%.3f"), goal, v)
	}
	for _, s := range shapes {
		dec := "Decode/segkit/" + s + "/none"
		enc := "Encode/segkit/" + s + "/none"
		if _, ok := r.res[dec]; ok {
			// The fastest of the three, round by round.
			var names []string
			for _, o := range others {
				if _, ok := r.res["Decode/"+o+"/"+s+"/none"]; ok {
					names = append(names, "Decode/"+o+"/"+s+"/none")
				}
			}
			if len(names) > 0 {
				q, _ := r.ratio(func(get func(string) float64) float64 {
					best := get(names[0])
					for _, n := range names[1:] {
						best = min(best, get(n))
					}
					return best / get(dec)
				}, append(names, dec)...)
				row("decode vs fastest of the three", s, "none", q, ">= 5x", r.verdict(q, 5, false))
			}
			if s == "1000x100B" {
				ns, _ := r.ns(dec)
				per := make(stat, len(ns))
				for i, v := range ns {
					per[i] = v / counts[s]
				}
				fmt.Fprintf(w, "| decode ns per record | %s | none | %.1f ns (%s) | <= 17 ns | %s |\n", s, per.median(), per.rangeText("%.1f"), r.verdict(per, 17, true))
			}
			fmt.Fprintf(w, "| decode allocs | %s | none | %.0f | 0 | %s |\n", s, r.maxAllocs(dec), r.exact(r.maxAllocs(dec) == 0))
			if q, ok := r.over(dec, "CRC32C/"+s); ok {
				if s == "16x1KiB" {
					row("decode / CRC-32C floor", s, "none", q, "<= 2x", r.verdict(q, 2, true))
				} else {
					row("decode / CRC-32C floor", s, "none", q, "(none)", "info")
				}
			}
		}
		if _, ok := r.res[enc]; ok {
			if q, ok := r.over("Encode/franz/"+s+"/none", enc); ok {
				goal := 2.0
				if s == "1000x100B" {
					goal = 1.5
				}
				row("encode vs franz-go", s, "none", q, fmt.Sprintf(">= %.1fx", goal), r.verdict(q, goal, false))
			}
			fmt.Fprintf(w, "| encode allocs | %s | none | %.0f | 0 | %s |\n", s, r.maxAllocs(enc), r.exact(r.maxAllocs(enc) == 0))
		}
		for _, c := range codecs[1:] {
			d := "Decode/segkit/" + s + "/" + c
			if _, ok := r.res[d]; ok {
				raw := "Raw/decompress/" + s + "/" + c
				if q, ok := r.ratio(func(get func(string) float64) float64 { return get(d) / (get(raw) + get(dec)) }, d, raw, dec); ok {
					row("decode / (raw decompress + parse)", s, c, q, "<= 1.15x", r.verdict(q, 1.15, true))
				}
				fmt.Fprintf(w, "| decode allocs | %s | %s | %.0f | 0 | %s |\n", s, c, r.maxAllocs(d), r.exact(r.maxAllocs(d) == 0))
			}
			e := "Encode/segkit/" + s + "/" + c
			if _, ok := r.res[e]; ok {
				if q, ok := r.over(e, "Raw/compress/"+s+"/"+c); ok {
					row("encode / raw compress", s, c, q, "<= 1.05x", r.verdict(q, 1.05, true))
				}
				for _, o := range others {
					name := "Encode/" + o + "/" + s + "/" + c
					what := "encode vs " + o
					if o == "franz" && c == "gzip" {
						if q, ok := r.over(name, e); ok {
							row("encode vs franz (its default gzip level 5)", s, c, q, "(info)", "info")
						}
						name, what = "Encode/franz6/"+s+"/"+c, "encode vs franz (gzip level 6, as segkit)"
					}
					if q, ok := r.over(name, e); ok {
						row(what, s, c, q, ">= 1x", r.verdict(q, 1, false))
					}
				}
				fmt.Fprintf(w, "| encode allocs | %s | %s | %.0f | 0 | %s |\n", s, c, r.maxAllocs(e), r.exact(r.maxAllocs(e) == 0))
			}
		}
	}
	if instrCol {
		r.printInstr(w)
	}
	fmt.Fprintf(w, "\n%d target(s) missed; %d verdict(s) untrusted (marked ?: the rounds disagree or spread more than %.2f; run more rounds, -runs, on a quieter machine).\n", r.misses, r.untrusted, r.spreadMax)
	if instrCol {
		fmt.Fprintf(w, "In instructions: %d of the compressed-path targets missed.\n", r.instrMisses)
	}

	var rest []string
	for k := range r.res {
		if strings.HasPrefix(k, "Raw/") || strings.HasPrefix(k, "CRC32C/") {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	if len(rest) > 0 {
		fmt.Fprintf(w, "\n## Floors and raw codecs\n\n| benchmark | ns/op (median) | spread | MB/s | allocs/op |")
		if instrCol {
			fmt.Fprint(w, " instr/op |")
		}
		fmt.Fprint(w, "\n|---|---:|---:|---:|---:|")
		if instrCol {
			fmt.Fprint(w, "---:|")
		}
		fmt.Fprintln(w)
		for _, k := range rest {
			ns, _ := r.ns(k)
			fmt.Fprintf(w, "| %s | %.0f | %.2f | %.0f | %.0f |", k, ns.median(), ns.spread(), r.mbs(k), r.maxAllocs(k))
			if instrCol {
				fmt.Fprintf(w, " %s |", r.instrText(k))
			}
			fmt.Fprintln(w)
		}
	}
	if r.instrSkipped {
		fmt.Fprintln(w, "\n(-instr: valgrind not found; no instruction counts.)")
	}
}

// printInstr prints the compressed paths' target ratios in instructions,
// which no load moves (instructions are not time: a memory stall or a SIMD
// step counts as one instruction).
func (r *report) printInstr(w io.Writer) {
	fmt.Fprintf(w, "\n### The same ratios in instructions (callgrind)\n\n| ratio | shape | codec | instr ratio | goal | verdict |\n|---|---|---|---:|---:|---|\n")
	line := func(what, s, c string, num, den float64, goal string) {
		if num <= 0 || den <= 0 {
			return
		}
		var g float64
		atMost := strings.HasPrefix(goal, "<=")
		fmt.Sscanf(strings.TrimLeft(goal, "<>= "), "%gx", &g)
		q := num / den
		ok := q >= g
		if atMost {
			ok = q <= g
		}
		v := "ok"
		if !ok {
			v = "MISS"
			r.instrMisses++
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.3fx | %s | %s |\n", what, s, c, q, goal, v)
	}
	in := r.instr
	for _, s := range shapes {
		for _, c := range codecs[1:] {
			if parse := in["Decode/segkit/"+s+"/none"]; parse > 0 {
				line("decode / (raw decompress + parse)", s, c, in["Decode/segkit/"+s+"/"+c], in["Raw/decompress/"+s+"/"+c]+parse, "<= 1.15x")
			}
			line("encode / raw compress", s, c, in["Encode/segkit/"+s+"/"+c], in["Raw/compress/"+s+"/"+c], "<= 1.05x")
			fr := "Encode/franz/" + s + "/" + c
			what := "encode: franz-go / segkit"
			if c == "gzip" {
				fr, what = "Encode/franz6/"+s+"/"+c, "encode: franz-go (level 6) / segkit"
			}
			line(what, s, c, in[fr], in["Encode/segkit/"+s+"/"+c], ">= 1x")
		}
	}
}

// caseOf is the case a benchmark belongs to: its direction, shape and
// codec (Raw/decompress with Decode, Raw/compress with Encode, the CRC
// floor with the uncompressed decode).
func caseOf(name string) string {
	p := strings.Split(name, "/")
	switch {
	case len(p) == 4 && p[0] == "Raw":
		d := map[string]string{"decompress": "Decode", "compress": "Encode"}[p[1]]
		return d + "/" + p[2] + "/" + p[3]
	case len(p) == 4:
		return p[0] + "/" + p[2] + "/" + p[3]
	case len(p) == 2 && p[0] == "CRC32C":
		return "Decode/" + p[1] + "/none"
	}
	return name
}

// pattern is the -test.bench pattern that selects exactly name.
func pattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	parts[0] = "^Benchmark" + parts[0][1:]
	return strings.Join(parts, "/")
}

// runner runs the test binary.
type runner struct {
	bin       string
	benchtime string
	echo      io.Writer
}

func (rn *runner) run(pat, benchtime string, extra ...string) ([]byte, error) {
	args := append([]string{"-test.run", "^$", "-test.bench", pat, "-test.benchtime", benchtime, "-test.benchmem"}, extra...)
	cmd := exec.Command(rn.bin, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s", rn.bin, strings.Join(args, " "), err, out.Bytes())
	}
	return out.Bytes(), nil
}

// interleaved runs rounds rounds of every benchmark matching bench.
func interleaved(rn *runner, bench string, rounds int, log io.Writer) (results, error) {
	out, err := rn.run(bench, "1x")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, l := range strings.Split(string(out), "\n") {
		if n, _, ok := parseLine(l); ok {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no benchmarks match %q", bench)
	}
	var order []string // cases, in first-seen order
	members := map[string][]string{}
	for _, n := range names {
		c := caseOf(n)
		if _, ok := members[c]; !ok {
			order = append(order, c)
		}
		members[c] = append(members[c], n)
	}
	res := results{}
	for round := range rounds {
		start := time.Now()
		for _, c := range order {
			m := members[c]
			for i := range m {
				name := m[(i+round)%len(m)]
				out, err := rn.run(pattern(name), rn.benchtime)
				if err != nil {
					return nil, err
				}
				got := false
				for _, l := range strings.Split(string(out), "\n") {
					if n, r, ok := parseLine(l); ok && n == name {
						res[n] = append(res[n], r)
						got = true
						if rn.echo != nil {
							fmt.Fprintln(rn.echo, strings.TrimSpace(l))
						}
					}
				}
				if !got {
					return nil, fmt.Errorf("%s: no result in\n%s", name, out)
				}
			}
		}
		fmt.Fprintf(log, "ratios: round %d of %d: %d benchmarks in %v\n", round+1, rounds, len(names), time.Since(start).Round(time.Millisecond))
	}
	return res, nil
}

var collectedRE = regexp.MustCompile(`Collected\s*:\s*(\d+)`)

// instructions counts the instructions per op of the named benchmarks
// under callgrind: two runs of the whole process, of n and 3n iterations;
// n is about 20 ms of the benchmark's median native time (at least
// -instr-n), so that the difference (hundreds of millions of instructions)
// dwarfs what varies from run to run (the runtime's background work, a few
// million). (Callgrind's --toggle-collect on testing.(*B).runN would leave
// that out, but Go's stack copying confuses its call tracking: some counts
// came out negative.) A count that is not positive is left out.
func instructions(rn *runner, names []string, minN int, ns func(string) float64, log io.Writer) (map[string]float64, error) {
	count := func(name string, iters int) (float64, error) {
		cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
			rn.bin, "-test.run", "^$", "-test.bench", pattern(name), "-test.benchtime", fmt.Sprintf("%dx", iters))
		// Callgrind fails an assertion on the signals of Go's
		// asynchronous preemption.
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("valgrind %s: %v\n%s", name, err, out)
		}
		m := collectedRE.FindSubmatch(out)
		if m == nil {
			return 0, fmt.Errorf("valgrind %s: no instruction count in\n%s", name, out)
		}
		return strconv.ParseFloat(string(m[1]), 64)
	}
	got := map[string]float64{}
	start := time.Now()
	for _, name := range names {
		n := minN
		if t := ns(name); t > 0 {
			n = max(minN, min(20000, int(20e6/t)))
		}
		a, err := count(name, n)
		if err != nil {
			return nil, err
		}
		b, err := count(name, 3*n)
		if err != nil {
			return nil, err
		}
		if b > a {
			got[name] = (b - a) / float64(2*n)
		}
	}
	fmt.Fprintf(log, "ratios: instruction counts of %d benchmarks in %v\n", len(names), time.Since(start).Round(time.Millisecond))
	return got, nil
}

func main() {
	runs := flag.Int("runs", 5, "rounds to run (0: read benchmark output from standard input)")
	benchtime := flag.String("benchtime", "100ms", "-benchtime of each benchmark run")
	bench := flag.String("bench", ".", "-bench pattern: the benchmarks to run")
	spread := flag.Float64("spread", 1.15, "a verdict whose per-round ratios spread (max/min) wider than this is marked untrusted")
	instr := flag.Bool("instr", false, "also count instructions per op under callgrind for segkit, franz-go and the raw codecs on the compressed paths")
	instrN := flag.Int("instr-n", 20, "fewest iterations of the smaller callgrind run (the larger is three times as many)")
	verbose := flag.Bool("v", false, "echo every benchmark line to stderr")
	flag.Parse()
	if err := run(*runs, *benchtime, *bench, *spread, *instr, *instrN, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "ratios:", err)
		os.Exit(1)
	}
}

func run(runs int, benchtime, bench string, spread float64, instr bool, instrN int, verbose bool) error {
	rep := &report{spreadMax: spread, benchtime: benchtime}
	var rn *runner
	if runs > 0 || instr {
		dir, err := os.MkdirTemp("", "ratios-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "interop.test")
		cmd := exec.Command("go", "test", "-c", "-o", bin, ".")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go test -c: %v", err)
		}
		rn = &runner{bin: bin, benchtime: benchtime}
		if verbose {
			rn.echo = os.Stderr
		}
	}
	if runs > 0 {
		res, err := interleaved(rn, bench, runs, os.Stderr)
		if err != nil {
			return err
		}
		rep.res, rep.interleaved = res, true
	} else {
		rep.res = results{}
		if err := parse(os.Stdin, rep.res); err != nil {
			return err
		}
	}
	if len(rep.res) == 0 {
		return fmt.Errorf("no benchmark results")
	}
	for _, rs := range rep.res {
		rep.rounds = max(rep.rounds, len(rs))
	}
	if instr {
		if _, err := exec.LookPath("valgrind"); err != nil {
			rep.instrSkipped = true
		} else {
			var names []string
			for n := range rep.res {
				p := strings.Split(n, "/")
				// The compressed paths, and segkit's uncompressed decode:
				// the parse in the compressed decode's reference.
				compressed := len(p) == 4 && p[3] != "none" && (p[0] == "Raw" || p[1] == "segkit" || p[1] == "franz" || p[1] == "franz6")
				if compressed || len(p) == 4 && p[0] == "Decode" && p[1] == "segkit" {
					names = append(names, n)
				}
			}
			sort.Strings(names)
			m, err := instructions(rn, names, instrN, func(n string) float64 {
				s, _ := rep.ns(n)
				return s.median()
			}, os.Stderr)
			if err != nil {
				return err
			}
			rep.instr = m
		}
	}
	w := bufio.NewWriter(os.Stdout)
	rep.print(w)
	return w.Flush()
}
