package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/internal/dumplog"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/repair"
	"github.com/segkit/segkit/vfs"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(1)
	}
}

// settings are the command's flags.
type settings struct {
	size       int64
	dumpSize   int64
	tiny       int64
	partitions int
	psize      int64
	verifySize int64
	runs       int
	warmup     int
	codec      compress.Codec
	dir        string
	keep       bool
	segviz     string
	kafka      string
	spreadMax  float64
	only       map[string]bool
	kafkaJVM   string
	cpuprofile string
	rssBudget  int64
	benchtime  time.Duration
	log        io.Writer
}

func parseFlags(args []string, stderr io.Writer) (*settings, error) {
	s := &settings{log: stderr}
	fs := flag.NewFlagSet("sidebyside", flag.ContinueOnError)
	fs.SetOutput(stderr)
	size := fs.String("size", "1GiB", "bytes of the big segment (dump, recovery, verify of one partition); suffixes KiB, MiB, GiB")
	dumpSize := fs.String("dump-size", "", "bytes of the dumped segment (default -size): Kafka's deep dump runs at a few MB/s")
	tiny := fs.String("tiny", "4KiB", "bytes of the tiny segment whose time estimates each tool's start-up")
	psize := fs.String("partition-size", "256KiB", "bytes of each small partition of the verified log directory")
	fs.IntVar(&s.partitions, "partitions", 1000, "small partitions in the verified log directory")
	verifySize := fs.String("verify-size", "10GiB", "bytes of the large verified log directory (partitions hard-linked from the big one, so no extra generation); 0 leaves it out")
	fs.IntVar(&s.runs, "runs", 5, "measured runs of each command (interleaved)")
	fs.IntVar(&s.warmup, "warmup", 1, "unmeasured rounds first (page cache, JVM class files)")
	codec := fs.String("codec", "zstd", "the codec of the compressed half of the batches: gzip, snappy, lz4, zstd")
	quick := fs.Bool("quick", false, "smoke test: -size 64MiB -partitions 100 -verify-size 256MiB -runs 3 (flags given explicitly win)")
	fs.StringVar(&s.dir, "dir", "", "work directory (default: a new temporary directory, removed at the end)")
	fs.BoolVar(&s.keep, "keep", false, "keep the work directory")
	fs.StringVar(&s.segviz, "segviz", "", "segviz binary (default: built from this tree into the work directory)")
	fs.StringVar(&s.kafka, "kafka", oracle.Script(), "the oracle's entry point script")
	fs.Float64Var(&s.spreadMax, "spread", 1.3, "a verdict whose runs spread (max/min) wider than this is marked untrusted")
	only := fs.String("only", "dump,recover,verify,wasm", "the row groups to run, comma-separated")
	fs.DurationVar(&s.benchtime, "benchtime", time.Second, "wasm rows: each of record's benchmarks runs this long natively, and three times as long under node")
	fs.StringVar(&s.kafkaJVM, "kafka-jvm", "", "extra JVM options for Kafka (ORACLE_JAVA_OPTS), e.g. -XX:TieredStopAtLevel=4 to undo the oracle's C1-only default")
	fs.StringVar(&s.cpuprofile, "cpuprofile", "", "after the table, profile segkit's dump, recovery and verify in-process into FILE.{dump,recover,verify}.pprof")
	budget := fs.String("rss-budget", "256MiB", "peak RSS target of segviz verify")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() != 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		if !set["size"] {
			*size = "64MiB"
		}
		if !set["partitions"] {
			s.partitions = 100
		}
		if !set["verify-size"] {
			*verifySize = "256MiB"
		}
		if !set["runs"] {
			s.runs = 3
		}
	}
	var err error
	for _, f := range []struct {
		name string
		s    string
		v    *int64
	}{{"size", *size, &s.size}, {"tiny", *tiny, &s.tiny}, {"partition-size", *psize, &s.psize}, {"rss-budget", *budget, &s.rssBudget}} {
		if *f.v, err = parseSize(f.s); err != nil {
			return nil, fmt.Errorf("-%s: %v", f.name, err)
		}
	}
	if *verifySize != "0" {
		if s.verifySize, err = parseSize(*verifySize); err != nil {
			return nil, fmt.Errorf("-verify-size: %v", err)
		}
	}
	s.dumpSize = s.size
	if *dumpSize != "" {
		if s.dumpSize, err = parseSize(*dumpSize); err != nil {
			return nil, fmt.Errorf("-dump-size: %v", err)
		}
	}
	if s.runs < 1 || s.partitions < 1 {
		return nil, fmt.Errorf("-runs and -partitions must be at least 1")
	}
	switch *codec {
	case "gzip":
		s.codec = compress.Gzip
	case "snappy":
		s.codec = compress.Snappy
	case "lz4":
		s.codec = compress.LZ4
	case "zstd":
		s.codec = compress.Zstd
	default:
		return nil, fmt.Errorf("-codec %q: want gzip, snappy, lz4 or zstd", *codec)
	}
	s.only = map[string]bool{}
	for _, g := range strings.Split(*only, ",") {
		switch g = strings.TrimSpace(g); g {
		case "dump", "recover", "verify", "wasm":
			s.only[g] = true
		default:
			return nil, fmt.Errorf("-only: unknown group %q", g)
		}
	}
	return s, nil
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
		if strings.HasSuffix(s, u.suf) {
			s, mult = strings.TrimSuffix(s, u.suf), u.m
			break
		}
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return int64(n * float64(mult)), nil
}

// bench is one harness run: the fixtures and the rows measured on them.
type bench struct {
	*settings
	work    string
	rows    []*row
	notes   []string
	crcBuf  []byte
	bigLog  string // the big segment's .log (clean partition)
	bigSize int64
	dumpLog string // the dumped segment's .log (bigLog unless -dump-size)
	dumpLen int64
	tinyLog string // the tiny segment's .log
}

func run(args []string, stdout, stderr io.Writer) error {
	s, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	b := &bench{settings: s, crcBuf: make([]byte, 1<<20)}
	if b.work = s.dir; b.work == "" {
		if b.work, err = os.MkdirTemp("", "sidebyside-"); err != nil {
			return err
		}
		if !s.keep {
			defer os.RemoveAll(b.work)
		}
	}
	if err := b.setup(); err != nil {
		return err
	}
	if s.only["dump"] {
		if err := b.dump(); err != nil {
			return err
		}
	}
	if s.only["recover"] {
		if err := b.recovery(); err != nil {
			return err
		}
	}
	if s.only["verify"] {
		if err := b.verify(); err != nil {
			return err
		}
	}
	if s.only["wasm"] {
		if err := b.wasm(); err != nil {
			return err
		}
	}
	b.print(stdout)
	if s.cpuprofile != "" {
		if err := b.profile(); err != nil {
			return err
		}
	}
	return nil
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "sidebyside: "+format+"\n", args...)
}

// setup builds segviz and writes the fixtures.
func (b *bench) setup() error {
	if b.segviz == "" {
		b.segviz = filepath.Join(b.work, "segviz")
		b.logf("building segviz into %s", b.segviz)
		cmd := exec.Command("go", "build", "-o", b.segviz, "github.com/segkit/segkit/cmd/segviz")
		cmd.Stderr = b.log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building segviz: %v", err)
		}
	}
	if err := oracle.Available(); err != nil {
		return err
	}
	start := time.Now()
	var err error
	if b.bigSize, err = genPartition(vfs.OS(), filepath.Join(b.work, "clean", "big-0"), b.size, b.codec, 1); err != nil {
		return err
	}
	b.bigLog = filepath.Join(b.work, "clean", "big-0", logName)
	if _, err := genPartition(vfs.OS(), filepath.Join(b.work, "tinyclean", "tiny-0"), b.tiny, b.codec, 2); err != nil {
		return err
	}
	b.dumpLog, b.dumpLen = b.bigLog, b.bigSize
	if b.dumpSize != b.size && b.only["dump"] {
		if b.dumpLen, err = genPartition(vfs.OS(), filepath.Join(b.work, "dump", "big-0"), b.dumpSize, b.codec, 3); err != nil {
			return err
		}
		b.dumpLog = filepath.Join(b.work, "dump", "big-0", logName)
	}
	b.tinyLog = filepath.Join(b.work, "tinyclean", "tiny-0", logName)
	b.logf("wrote a %d-byte segment (%v codec in about half of the batches) in %v", b.bigSize, b.codec, time.Since(start).Round(time.Millisecond))
	if b.only["recover"] {
		if err := makeUnclean(filepath.Join(b.work, "clean", "big-0"), filepath.Join(b.work, "unclean", "big-0")); err != nil {
			return err
		}
		if err := makeUnclean(filepath.Join(b.work, "tinyclean", "tiny-0"), filepath.Join(b.work, "tinyunclean", "tiny-0")); err != nil {
			return err
		}
	}
	if b.only["verify"] {
		start = time.Now()
		// Each partition in a fresh Mem (no fsync per partition), then
		// written out; the log directory's checkpoints are merged.
		many := filepath.Join(b.work, "many")
		merged := map[string][]string{}
		for i := range b.partitions {
			mem := vfs.NewMem()
			name := fmt.Sprintf("topic-%d", i)
			if _, err := genPartition(mem, "/many/"+name, b.psize, b.codec, uint64(100+i)); err != nil {
				return err
			}
			if err := exportLogDir(mem, "/many", many, merged); err != nil {
				return err
			}
		}
		for name, lines := range merged {
			text := fmt.Sprintf("0\n%d\n%s\n", len(lines), strings.Join(lines, "\n"))
			if err := os.WriteFile(filepath.Join(many, name), []byte(text), 0o644); err != nil {
				return err
			}
		}
		b.logf("wrote %d partitions of %d bytes in %v", b.partitions, b.psize, time.Since(start).Round(time.Millisecond))
		if b.verifySize > 0 {
			n, err := b.largeDir()
			if err != nil {
				return err
			}
			b.logf("made the large log directory: %d partitions hard-linked from the big one (%d bytes in all)", n, int64(n)*b.bigSize)
		}
	}
	syscall.Sync()
	return nil
}

// largeDir makes the large verified log directory, large/: as many copies
// of the big partition as reach -verify-size, each a directory of hard
// links (verify only reads), and returns how many. The page cache then
// holds one copy of the bytes, for verify and the CRC floor alike.
func (b *bench) largeDir() (int, error) {
	n := int((b.verifySize + b.bigSize - 1) / b.bigSize)
	src := filepath.Join(b.work, "clean", "big-0")
	for i := range n {
		err := copyFiles(src, filepath.Join(b.work, "large", fmt.Sprintf("big-%d", i)), func(string) fileAction { return linkFile })
		if err != nil {
			return 0, err
		}
	}
	// The big partition's log directory files (its checkpoints), with
	// every copy named in them.
	ents, err := os.ReadDir(filepath.Join(b.work, "clean"))
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		text, err := os.ReadFile(filepath.Join(b.work, "clean", e.Name()))
		if err != nil {
			return 0, err
		}
		lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
		if strings.HasSuffix(e.Name(), "-checkpoint") && len(lines) >= 2 && lines[0] == "0" {
			var out []string
			for _, l := range lines[2:] {
				for i := range n {
					out = append(out, strings.Replace(l, "big 0 ", fmt.Sprintf("big %d ", i), 1))
				}
			}
			text = []byte(fmt.Sprintf("0\n%d\n%s\n", len(out), strings.Join(out, "\n")))
		}
		if err := os.WriteFile(filepath.Join(b.work, "large", e.Name()), text, 0o644); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// env is the environment the Kafka commands run with.
func (b *bench) kafkaEnv() []string {
	if b.kafkaJVM == "" {
		return nil
	}
	return []string{"ORACLE_JAVA_OPTS=" + b.kafkaJVM}
}

// rounds runs the warm-up rounds and then the measured ones, each a call
// of round(measured); each round runs every command of a group once, in
// the same order (A, B, A, B, …).
func (b *bench) rounds(name string, round func(measured bool) error) error {
	for i := 0; i < b.warmup+b.runs; i++ {
		start := time.Now()
		if err := round(i >= b.warmup); err != nil {
			return err
		}
		b.logf("%s: round %d/%d in %v", name, i+1, b.warmup+b.runs, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// timeProc runs p and appends its seconds to into (when measured).
func timeProc(p proc, into *series, measured bool) error {
	syscall.Sync() // others' dirty pages are not written back on our clock
	d, err := p.run()
	if err != nil {
		return err
	}
	if measured {
		*into = append(*into, d.Seconds())
	}
	return nil
}

func (b *bench) timeCRC(files []string, into *series, measured bool) error {
	d, err := crcFloor(files, b.crcBuf)
	if err != nil {
		return err
	}
	if measured {
		*into = append(*into, d.Seconds())
	}
	return nil
}

// dump: row 1.
func (b *bench) dump() error {
	for _, deep := range []bool{false, true} {
		var flags []string
		label := "dump"
		if deep {
			flags = []string{"--deep-iteration", "--print-data-log"}
			label = "dump --deep-iteration --print-data-log"
		}
		mk := func(tool, file, out string) proc {
			if tool == "segviz" {
				return proc{args: append(append([]string{b.segviz, "dump"}, flags...), "--files", file), out: out}
			}
			return proc{args: append(append([]string{b.kafka, "dump-log"}, flags...), "--files", file), out: out, env: b.kafkaEnv()}
		}
		sOut, kOut := filepath.Join(b.work, "dump-segviz.txt"), filepath.Join(b.work, "dump-kafka.txt")
		sp, kp := mk("segviz", b.dumpLog, sOut), mk("kafka", b.dumpLog, kOut)
		spT, kpT := mk("segviz", b.tinyLog, filepath.Join(b.work, "dump-segviz-tiny.txt")), mk("kafka", b.tinyLog, filepath.Join(b.work, "dump-kafka-tiny.txt"))
		var st, kt, stT, ktT, ft series
		checked := false
		err := b.rounds(label, func(m bool) error {
			for _, x := range []struct {
				p proc
				s *series
			}{{sp, &st}, {kp, &kt}, {spT, &stT}, {kpT, &ktT}} {
				if err := timeProc(x.p, x.s, m); err != nil {
					return err
				}
			}
			if !deep {
				d, err := crcFloorMapped(b.dumpLog, runtime.NumCPU())
				if err != nil {
					return err
				}
				if m {
					ft = append(ft, d.Seconds())
				}
			}
			if !checked {
				checked = true
				same, n, err := sameFiles(sOut, kOut)
				if err != nil {
					return err
				}
				b.notes = append(b.notes, fmt.Sprintf("%s: the two outputs (%d bytes) are %s.", label, n, map[bool]string{true: "byte for byte identical", false: "NOT identical"}[same]))
			}
			return nil
		})
		if err != nil {
			return err
		}
		cmds := []string{sp.String(), kp.String(), "start-up: the same on the tiny segment " + b.tinyLog}
		steady := steadyRow(label+", steady", st, stT, kt, ktT, b.dumpLen, 10)
		b.rows = append(b.rows,
			&row{name: label + ", wall", a: st, b: kt, target: 10, cmds: cmds},
			steady)
		if !deep {
			// What bounds the plain dump: checking the CRCs on all cores
			// through mappings, and nothing else. The second row is the
			// most any dump can be ahead of Kafka's steady rate.
			floorCmd := fmt.Sprintf("in-process: %s mapped 64 MiB at a time, one part per core (%d), format.UpdateCRC32C", b.dumpLog, runtime.NumCPU())
			b.rows = append(b.rows,
				&row{name: "dump, steady vs the mapped CRC floor", vs: "CRC floor", a: steady.a, b: ft, bytes: b.dumpLen, cmds: []string{floorCmd}, void: steady.void},
				&row{name: "the mapped CRC floor vs Kafka's dump, steady", vs: "Kafka 4.3.1", a: ft, b: steady.b, bytes: b.dumpLen,
					cmds: []string{"the floor (row above) against Kafka's steady runs: the most any dump can reach"}, void: steady.void})
		}
	}
	return nil
}

// recovery: row 2.
func (b *bench) recovery() error {
	src := filepath.Join(b.work, "unclean", "big-0")
	tinySrc := filepath.Join(b.work, "tinyunclean", "tiny-0")
	out := filepath.Join(b.work, "out")
	n := 0
	var st, kt, stT, ktT, ct, it, cpt series
	var ist, ikt, istT, iktT series // in place
	var sp, kp, isp, ikp proc
	files := []string{filepath.Join(src, logName)}
	err := b.rounds("recover", func(m bool) error {
		n++
		dir := func(tool, part string) string { return filepath.Join(out, fmt.Sprintf("%s-%d", tool, n), part) }
		sp = proc{args: []string{b.segviz, "recover", "--out", dir("segviz", "big-0"), src}, out: os.DevNull}
		kp = proc{args: []string{b.kafka, "recover", src, dir("kafka", "big-0")}, out: os.DevNull, env: b.kafkaEnv()}
		spT := proc{args: []string{b.segviz, "recover", "--out", dir("segviz", "tiny-0"), tinySrc}, out: os.DevNull}
		kpT := proc{args: []string{b.kafka, "recover", tinySrc, dir("kafka", "tiny-0")}, out: os.DevNull, env: b.kafkaEnv()}
		for _, x := range []struct {
			p proc
			s *series
		}{{sp, &st}, {kp, &kt}, {spT, &stT}, {kpT, &ktT}} {
			if err := timeProc(x.p, x.s, m); err != nil {
				return err
			}
		}
		// In place, as a broker's restart recovers: each tool recovers a
		// copy of its own, made before the clock starts.
		cps := map[string]string{}
		for _, c := range []struct{ tool, from, part string }{{"segviz", src, "big-0"}, {"kafka", src, "big-0"}, {"segviz", tinySrc, "tiny-0"}, {"kafka", tinySrc, "tiny-0"}} {
			cp := dir(c.tool+"-inplace", c.part)
			if err := copyDir(c.from, cp); err != nil {
				return err
			}
			cps[c.tool+c.part] = cp
		}
		syscall.Sync()
		inPlace := func(tool, part string) proc {
			if tool == "segviz" {
				return proc{args: []string{b.segviz, "recover", "--in-place", cps[tool+part]}, out: os.DevNull}
			}
			return proc{args: []string{b.kafka, "recover", "--in-place", cps[tool+part]}, out: os.DevNull, env: b.kafkaEnv()}
		}
		isp, ikp = inPlace("segviz", "big-0"), inPlace("kafka", "big-0")
		for _, x := range []struct {
			p proc
			s *series
		}{{isp, &ist}, {ikp, &ikt}, {inPlace("segviz", "tiny-0"), &istT}, {inPlace("kafka", "tiny-0"), &iktT}} {
			if err := timeProc(x.p, x.s, m); err != nil {
				return err
			}
		}
		if err := b.timeCRC(files, &ct, m); err != nil {
			return err
		}
		// The copy floor: what recover --out does before recovering, the
		// durable copy of the partition's files (repair's, which starts
		// each 64 MiB's writeback as it goes: a plain copy and one fsync
		// took 2.85-2.92 s here where this took 1.6-2.1), and nothing else.
		start := time.Now()
		if _, err := repair.CopyPartitionFiles(vfs.OS(), src, dir("copy", "big-0")); err != nil {
			return err
		}
		if m {
			cpt = append(cpt, time.Since(start).Seconds())
		}
		// In-process: repair.Recover on a copy made first (not timed).
		cp := dir("inproc", "big-0")
		if err := copyDir(src, cp); err != nil {
			return err
		}
		syscall.Sync()
		start = time.Now()
		rep, err := repair.Recover(vfs.OS(), cp, repair.RecoverOptions{})
		d := time.Since(start)
		if err != nil {
			return fmt.Errorf("repair.Recover: %v", err)
		}
		if m {
			it = append(it, d.Seconds())
		}
		if n == 1 {
			if err := b.checkRecovered(dir("segviz", "big-0"), dir("kafka", "big-0"), rep); err != nil {
				return err
			}
		}
		return os.RemoveAll(out)
	})
	if err != nil {
		return err
	}
	sp.args[3] = filepath.Join(out, "segviz-N", "big-0")
	kp.args[3] = filepath.Join(out, "kafka-N", "big-0")
	isp.args[3] = filepath.Join(out, "segviz-inplace-N", "big-0")
	ikp.args[3] = filepath.Join(out, "kafka-inplace-N", "big-0")
	crcCmd := fmt.Sprintf("in-process: 1 MiB os.File.Read + format.UpdateCRC32C over %s", files[0])
	copyCmd := fmt.Sprintf("in-process: repair.CopyPartitionFiles(vfs.OS(), %s, NEW): the durable copy recover --out makes, alone", src)
	b.rows = append(b.rows,
		&row{name: "recover, wall", a: st, b: kt, target: 2, cmds: []string{sp.String(), kp.String(), "start-up: the same on the tiny partition " + tinySrc}},
		steadyRow("recover, steady", st, stT, kt, ktT, b.bigSize, 2),
		// What bounds recover --out on a slow disk: the copy. The second
		// row is the most any recovery that copies can be ahead of Kafka's.
		&row{name: "recover, wall vs the copy floor", vs: "copy floor", a: st, b: cpt, cmds: []string{copyCmd}},
		&row{name: "the copy floor vs Kafka's recover, wall", vs: "Kafka 4.3.1", a: cpt, b: kt,
			cmds: []string{"the floor (row above) against Kafka's recover: the most a recovery that copies first can reach"}},
		&row{name: "recover in place, wall", a: ist, b: ikt, target: 2, cmds: []string{isp.String(), ikp.String(),
			"each on a copy of " + src + " of its own, made and synced before the clock starts; start-up: the same on the tiny partition"}},
		steadyRow("recover in place, steady", ist, istT, ikt, iktT, b.bigSize, 2),
		&row{name: "recover vs CRC floor (segviz, wall)", vs: "CRC floor", a: st, b: ct, bytes: b.bigSize, target: 0.5, cmds: []string{crcCmd}},
		&row{name: "recover vs CRC floor (repair.Recover in-process)", vs: "CRC floor", a: it, b: ct, bytes: b.bigSize, target: 0.5,
			cmds: []string{"in-process: repair.Recover(vfs.OS(), COPY, {}) on a fresh copy of " + src + " (copy not timed)"}})
	return nil
}

// checkRecovered compares what the two recoveries left: the same .log and
// index sizes.
func (b *bench) checkRecovered(sDir, kDir string, rep repair.RecoverReport) error {
	var diffs []string
	for _, ext := range []string{".log", ".index", ".timeindex"} {
		name := strings.TrimSuffix(logName, ".log") + ext
		sf, err1 := os.Stat(filepath.Join(sDir, name))
		kf, err2 := os.Stat(filepath.Join(kDir, name))
		switch {
		case err1 != nil || err2 != nil:
			diffs = append(diffs, fmt.Sprintf("%s: %v %v", name, err1, err2))
		case sf.Size() != kf.Size():
			diffs = append(diffs, fmt.Sprintf("%s: segviz %d bytes, Kafka %d", name, sf.Size(), kf.Size()))
		}
	}
	if len(diffs) == 0 {
		b.notes = append(b.notes, fmt.Sprintf("recover: segviz and Kafka left the same .log, .index and .timeindex sizes (log end offset %d).", rep.LogEndAfter))
	} else {
		b.notes = append(b.notes, "recover: the recovered partitions DIFFER: "+strings.Join(diffs, "; "))
	}
	return nil
}

// verify: row 3.
func (b *bench) verify() error {
	type target struct{ label, dir string }
	targets := []target{
		{fmt.Sprintf("verify, %d partitions", b.partitions), filepath.Join(b.work, "many")},
		{"verify, 1 partition", filepath.Join(b.work, "clean", "big-0")},
	}
	if b.verifySize > 0 {
		targets = append(targets, target{"verify, large dir " + sizeText(b.verifySize), filepath.Join(b.work, "large")})
	}
	for _, t := range targets {
		files, total, err := logFiles(t.dir)
		if err != nil {
			return err
		}
		out := filepath.Join(b.work, "verify.txt")
		p2 := proc{args: []string{b.segviz, "verify", t.dir}, env: []string{"GOMAXPROCS=2"}, out: out}
		p1 := proc{args: []string{b.segviz, "verify", t.dir}, env: []string{"GOMAXPROCS=1"}, out: out}
		var t2, t1, ct, rss, f2, f1 series
		// With the one big partition, the rounds also time the mapped CRC
		// floor on two goroutines and on one: what the machine's second
		// core gives this hour, for work that shares nothing.
		scaling := t.dir == filepath.Join(b.work, "clean", "big-0")
		err = b.rounds(t.label, func(m bool) error {
			if err := timeProc(p2, &t2, m); err != nil {
				return err
			}
			if err := timeProc(p1, &t1, m); err != nil {
				return err
			}
			if scaling {
				for _, x := range []struct {
					n int
					s *series
				}{{2, &f2}, {1, &f1}} {
					d, err := crcFloorMapped(b.bigLog, x.n)
					if err != nil {
						return err
					}
					if m {
						*x.s = append(*x.s, d.Seconds())
					}
				}
			}
			return b.timeCRC(files, &ct, m)
		})
		if err != nil {
			return err
		}
		// Peak RSS in runs of their own, untimed: the poller would take
		// CPU from the timed runs.
		for _, p := range []proc{p2, p1} {
			r, err := p.peakRSS()
			if err != nil {
				return err
			}
			rss = append(rss, float64(r))
		}
		if strings.HasPrefix(t.label, "verify, large dir") {
			b.notes = append(b.notes, fmt.Sprintf("%s: %d .log files, %d bytes in all, hard links to the big partition's (one copy in the page cache, for verify and the CRC floor alike).", t.label, len(files), total))
		}
		b.rows = append(b.rows,
			&row{name: t.label + " vs CRC floor", vs: "CRC floor", a: t2, b: ct, bytes: total,
				cmds: []string{p2.String(), fmt.Sprintf("in-process: 1 MiB os.File.Read + format.UpdateCRC32C over the %d .log files (%d bytes)", len(files), total)}},
			&row{name: t.label + ", GOMAXPROCS=2 vs 1", vs: "GOMAXPROCS=1", a: t2, b: t1, target: 1.7, cmds: []string{p1.String()}},
			&row{name: t.label + ", peak RSS", rss: true, a: rss, target: float64(b.rssBudget), atMost: true,
				cmds: []string{"VmHWM of one more run of each command above (GOMAXPROCS=2 and 1), untimed"}})
		if scaling {
			b.rows = append(b.rows, &row{name: "the mapped CRC floor, 2 goroutines vs 1", vs: "1 goroutine", a: f2, b: f1,
				cmds: []string{fmt.Sprintf("in-process: %s mapped 64 MiB at a time and checksummed (format.UpdateCRC32C) in two halves by two goroutines, and whole by one", b.bigLog)}})
		}
	}
	return nil
}

// sizeText is n in the largest binary unit that divides it evenly enough.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'g', 4, 64) + " GiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'g', 4, 64) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

// sameFiles reports whether two files hold the same bytes, and the size
// of the first.
func sameFiles(a, b string) (bool, int64, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, 0, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, 0, err
	}
	defer fb.Close()
	ra, rb := bufio.NewReaderSize(fa, 1<<20), bufio.NewReaderSize(fb, 1<<20)
	ba, bb := make([]byte, 1<<20), make([]byte, 1<<20)
	var n int64
	for {
		na, ea := io.ReadFull(ra, ba)
		nb, eb := io.ReadFull(rb, bb)
		n += int64(na)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, n, nil
		}
		if ea != nil || eb != nil { // equal lengths: both at the end
			return true, n, nil
		}
	}
}

// profile runs segkit's dump, recovery and verify in-process under the CPU
// profiler, once each, on the big segment.
func (b *bench) profile() error {
	prof := func(name string, f func() error) error {
		pf, err := os.Create(b.cpuprofile + "." + name + ".pprof")
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		err = f()
		pprof.StopCPUProfile()
		b.logf("wrote %s", pf.Name())
		return err
	}
	if b.only["dump"] {
		err := prof("dump", func() error {
			f, err := os.Open(b.dumpLog)
			if err != nil {
				return err
			}
			defer f.Close()
			out, err := os.Create(filepath.Join(b.work, "dump-profile.txt"))
			if err != nil {
				return err
			}
			defer out.Close()
			_, err = dumplog.Log(out, f, b.dumpLen, b.dumpLog, dumplog.Options{Deep: true, PrintData: true})
			return err
		})
		if err != nil {
			return err
		}
	}
	if b.only["recover"] {
		cp := filepath.Join(b.work, "out", "profile", "big-0")
		if err := copyDir(filepath.Join(b.work, "unclean", "big-0"), cp); err != nil {
			return err
		}
		syscall.Sync()
		if err := prof("recover", func() error {
			_, err := repair.Recover(vfs.OS(), cp, repair.RecoverOptions{})
			return err
		}); err != nil {
			return err
		}
		os.RemoveAll(filepath.Join(b.work, "out"))
	}
	if b.only["verify"] {
		return prof("verify", func() error {
			_, err := inspect.Verify(vfs.OS(), filepath.Join(b.work, "clean", "big-0"), inspect.Options{})
			return err
		})
	}
	return nil
}
