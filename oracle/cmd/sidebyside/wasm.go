package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// wasmTarget is the performance issue's bar for WebAssembly: within 3×
// native, as a ratio of native's time to WASM's.
const wasmTarget = 1.0 / 3

// wasmKit is what the wasm rows run: record's benchmarks built three
// ways, segviz built for js/wasm, and node with Go's wasm_exec_node.js.
type wasmKit struct {
	node, execJS         string // node, and the loader it runs a js/wasm binary with
	native, noasm, wasm  string // record's test binary: native, native without asm or SIMD, js/wasm
	segvizWasm, pkgDir   string // segviz for js/wasm; record's directory (the benchmarks' working directory)
	benchNative, benchWA string // -test.benchtime of the native and the WASM runs
}

// wasmBuild builds the wasm rows' binaries into dir.
func (b *bench) wasmBuild(dir string) (*wasmKit, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("the wasm rows need node (Node.js) on PATH; leave them out with -only dump,recover,verify")
	}
	goroot, err := goOutput("", nil, "env", "GOROOT")
	if err != nil {
		return nil, err
	}
	k := &wasmKit{node: node, benchNative: b.benchtime.String(), benchWA: (3 * b.benchtime).String()}
	for _, p := range []string{"lib/wasm/wasm_exec_node.js", "misc/wasm/wasm_exec_node.js"} {
		if _, err := os.Stat(filepath.Join(goroot, p)); err == nil {
			k.execJS = filepath.Join(goroot, p)
			break
		}
	}
	if k.execJS == "" {
		return nil, fmt.Errorf("no wasm_exec_node.js under %s", goroot)
	}
	// The core module's directory (the oracle's replace of it): the
	// builds run there, with the core module's own go.sum.
	root, err := goOutput("", nil, "list", "-m", "-f", "{{.Dir}}", "github.com/segkit/segkit")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	k.pkgDir = filepath.Join(root, "record")
	k.native, k.noasm, k.wasm = filepath.Join(dir, "record.native"), filepath.Join(dir, "record.noasm"), filepath.Join(dir, "record.wasm")
	k.segvizWasm = filepath.Join(dir, "segviz.wasm")
	js := []string{"GOOS=js", "GOARCH=wasm"}
	for _, c := range []struct {
		env  []string
		args []string
	}{
		{nil, []string{"test", "-c", "-o", k.native, "./record"}},
		// purego: format's CRC-32C without AVX-512 folding; noasm:
		// klauspost/compress's and pierrec/lz4's pure-Go decoders. With
		// GODEBUG=cpu.all=off at run time, hash/crc32 and memmove leave
		// SSE4.2 and AVX too: the Go code WASM runs, compiled for amd64.
		{nil, []string{"test", "-c", "-tags", "purego,noasm", "-o", k.noasm, "./record"}},
		{js, []string{"test", "-c", "-o", k.wasm, "./record"}},
		{js, []string{"build", "-o", k.segvizWasm, "./cmd/segviz"}},
	} {
		b.logf("go %s", strings.Join(c.args, " "))
		if _, err := goOutput(root, c.env, c.args...); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// goOutput runs the go command in dir with env added and returns its
// standard output, trimmed.
func goOutput(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out)), nil
}

// benchLine is a line of go test -bench's output: the name (without the
// -GOMAXPROCS suffix) and ns/op.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([0-9.]+) ns/op`)

// runBench runs a test binary's benchmarks (p's arguments give the
// flags) in dir and returns their names, in the order they ran, and each
// one's seconds per operation.
func runBench(p proc, dir string) ([]string, map[string]float64, error) {
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), p.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v\n%s%s", p, err, tail(string(out), 20), tail(stderr.String(), 20))
	}
	var names []string
	res := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := benchLine.FindStringSubmatch(sc.Text()); m != nil {
			ns, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %q: %v", p, sc.Text(), err)
			}
			names = append(names, m[1])
			res[m[1]] = ns / 1e9
		}
	}
	if len(res) == 0 {
		return nil, nil, fmt.Errorf("%s: no benchmark results in its output:\n%s", p, tail(string(out), 20))
	}
	return names, res, nil
}

// wasm: row 4. segkit compiled to WebAssembly (GOOS=js GOARCH=wasm) and
// run by node, against the same code native, in the same rounds.
func (b *bench) wasm() error {
	k, err := b.wasmBuild(filepath.Join(b.work, "wasm"))
	if err != nil {
		return err
	}
	const benches = "^Benchmark(Decode|CRC32C)$"
	// One goroutine natively too: the WASM engine has one thread, and
	// the benchmarks use one.
	native := proc{args: []string{k.native, "-test.run", "^$", "-test.bench", benches, "-test.benchtime", k.benchNative}, env: []string{"GOMAXPROCS=1"}}
	noasm := proc{args: []string{k.noasm, "-test.run", "^$", "-test.bench", benches, "-test.benchtime", k.benchNative}, env: []string{"GOMAXPROCS=1", "GODEBUG=cpu.all=off"}}
	// V8 compiles WASM code with its baseline compiler first and the
	// optimising one later, in the background: short runs measure the
	// baseline code (twice as slow on zstd at 200 ms a benchmark), so the
	// WASM runs are three times as long as the native ones.
	wasm := proc{args: []string{k.node, "--stack-size=8192", k.execJS, k.wasm, "-test.run", "^$", "-test.bench", benches, "-test.benchtime", k.benchWA}}
	res := map[string]map[string]series{} // side → benchmark → seconds per op
	var order []string
	err = b.rounds("wasm: record's benchmarks", func(m bool) error {
		for _, x := range []struct {
			side string
			p    proc
		}{{"native", native}, {"noasm", noasm}, {"wasm", wasm}} {
			names, r, err := runBench(x.p, k.pkgDir)
			if err != nil {
				return err
			}
			if !m {
				continue
			}
			if res[x.side] == nil {
				res[x.side] = map[string]series{}
			}
			if order == nil {
				order = names
			}
			for name, s := range r {
				res[x.side][name] = append(res[x.side][name], s)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	first := 0 // the row number of the first decode row
	for _, name := range order {
		w, n, a := res["wasm"][name], res["native"][name], res["noasm"][name]
		if len(w) == 0 || len(a) == 0 {
			return fmt.Errorf("wasm: %s missing from the WASM or the no-asm run", name)
		}
		if !strings.HasPrefix(name, "BenchmarkDecode/") {
			continue
		}
		c := strings.TrimPrefix(name, "BenchmarkDecode/")
		// The first row lists the three commands; the others are
		// benchmarks of the same runs.
		cmds := []string{wasm.String() + "  (in " + k.pkgDir + ")", native.String(),
			noasm.String() + "  (built with -tags purego,noasm: the Go code WASM runs, for amd64)"}
		if first == 0 {
			first = len(b.rows) + 1
		} else {
			cmds = []string{fmt.Sprintf("%s of the runs of row %d", name, first)}
		}
		b.rows = append(b.rows,
			&row{name: "WASM decode " + c + " vs native", vs: "native", a: w, b: n, target: wasmTarget, cmds: cmds},
			&row{name: "WASM decode " + c + " vs native without asm/SIMD", vs: "no asm/SIMD", a: w, b: a})
		if strings.HasSuffix(c, "/none") {
			// The floor under WASM: hash/crc32's slicing-by-8 over the
			// same batch, with no record read, against native's whole
			// decode. Where it misses, no WASM decoder can meet the bar.
			shape := strings.TrimSuffix(c, "/none")
			crc := res["wasm"]["BenchmarkCRC32C/"+shape]
			if len(crc) == 0 {
				return fmt.Errorf("wasm: BenchmarkCRC32C/%s missing from the WASM run", shape)
			}
			b.rows = append(b.rows, &row{name: "WASM CRC-32C alone " + shape + " vs native decode", vs: "native", a: crc, b: n, target: wasmTarget,
				cmds: []string{fmt.Sprintf("BenchmarkCRC32C/%s of the WASM runs of row %d (the checksum of the batch, nothing else)", shape, first)}})
		}
	}

	// segviz verify of the big partition: the js/wasm build under node
	// (one thread) against native on one core and on two.
	part := filepath.Join(b.work, "clean", "big-0")
	wv := proc{args: []string{k.node, "--stack-size=8192", k.execJS, k.segvizWasm, "verify", part}, out: os.DevNull}
	n1 := proc{args: []string{b.segviz, "verify", part}, env: []string{"GOMAXPROCS=1"}, out: os.DevNull}
	n2 := proc{args: []string{b.segviz, "verify", part}, env: []string{"GOMAXPROCS=2"}, out: os.DevNull}
	var tw, t1, t2 series
	err = b.rounds("wasm: verify", func(m bool) error {
		for _, x := range []struct {
			p proc
			s *series
		}{{wv, &tw}, {n1, &t1}, {n2, &t2}} {
			if err := timeProc(x.p, x.s, m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	b.rows = append(b.rows,
		&row{name: "WASM verify, 1 partition vs native on 1 core", vs: "native", a: tw, b: t1, bytes: b.bigSize, target: wasmTarget,
			cmds: []string{wv.String(), n1.String()}},
		&row{name: "WASM verify, 1 partition vs native on 2 cores", vs: "native", a: tw, b: t2, bytes: b.bigSize, target: wasmTarget,
			cmds: []string{n2.String()}})
	b.notes = append(b.notes, fmt.Sprintf("wasm: each of record's benchmarks ran for %s natively and %s under node, in every round.", k.benchNative, k.benchWA))
	return nil
}
