//go:build unix

package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// TestKill9 is a bounded kill -9 campaign. Each run starts a segviz
// command that writes a partition — append into a fresh partition, append
// into the active segment of an existing one, recover --in-place of a
// partition with a torn tail — and kills it with SIGKILL after a random
// delay drawn below the time an uninterrupted run takes (the faster of two,
// measured per scenario). Then it checks what a crash must leave:
//
//   - after an append, segviz verify accepts the partition as the kill
//     left it (exit 0: warnings, such as a torn tail or an untrimmed index
//     of the active segment, are what a crash leaves; errors are not).
//     Not after a recover: its input was damaged on purpose;
//   - segviz recover --in-place, or a writable open (segviz append of an
//     empty input), brings it to a state segviz verify accepts (exit 0);
//   - read back with the library, the offsets are contiguous from 0 and
//     offset i holds record i of the input, so every record is there at
//     most once and in order; every record segviz append acknowledged (a
//     batch line printed before it died) is there; recover loses no record
//     of a complete batch.
//
// SEGVIZ_KILL9_SEED sets the campaign's seed (printed at the start and with
// every failure), SEGVIZ_KILL9_RUNS the runs per scenario (default 10).
// A seed replays each run's input, flags and kill delay; where in the run
// the kill lands depends on the machine. A failing run's partition, as the
// kill left it, is copied under /tmp/kill9-repro/.
func TestKill9(t *testing.T) {
	bin := segvizBinary(t)
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("SEGVIZ_KILL9_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SEGVIZ_KILL9_SEED=%q: want an unsigned integer", v)
		}
		seed = s
	}
	runs := 10
	if v := os.Getenv("SEGVIZ_KILL9_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SEGVIZ_KILL9_RUNS=%q: want a positive count", v)
		}
		runs = n
	}
	t.Logf("kill -9 campaign: seed %d (replay: SEGVIZ_KILL9_SEED=%d), %d runs per scenario", seed, seed, runs)
	var killed, finished int
	for _, sc := range kill9Scenarios {
		t.Run(sc.name, func(t *testing.T) {
			k := &kill9{t: t, bin: bin, seed: seed, scenario: sc.name}
			budget := k.calibrate(sc)
			for i := range runs {
				t.Run(strconv.Itoa(i), func(t *testing.T) {
					k := &kill9{t: t, bin: bin, seed: seed, scenario: sc.name, run: i}
					k.rng = rand.New(rand.NewPCG(seed, runSeed(sc.name, i)))
					delay := time.Duration(k.rng.Int64N(int64(budget)))
					if sc.run(k, delay) {
						killed++
					} else {
						finished++
					}
				})
			}
		})
	}
	t.Logf("%d runs killed mid-way, %d finished before the kill", killed, finished)
	if killed == 0 {
		t.Errorf("no run was killed before it finished: the campaign tested nothing")
	}
}

// runSeed derives a run's stream from the scenario's name and the run's
// number, so that one run replays alone (go test -run TestKill9/NAME/I).
func runSeed(scenario string, i int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", scenario, i)
	return h.Sum64()
}

type kill9Scenario struct {
	name string
	// run sets up, starts, kills after delay and checks one run; it
	// reports whether the kill landed before the command finished.
	run func(k *kill9, delay time.Duration) bool
	// calibrate runs the scenario's command to completion (on a fresh
	// partition each time) and returns how long it took.
	calibrate func(k *kill9) time.Duration
}

var kill9Scenarios = []kill9Scenario{
	{"append-fresh", (*kill9).appendFresh, func(k *kill9) time.Duration {
		k.rng = rand.New(rand.NewPCG(k.seed, runSeed(k.scenario, -1)))
		return k.appendFreshCalibrate()
	}},
	{"append-existing", (*kill9).appendExisting, func(k *kill9) time.Duration {
		k.rng = rand.New(rand.NewPCG(k.seed, runSeed(k.scenario, -1)))
		return k.appendExistingCalibrate()
	}},
	{"recover-in-place", (*kill9).recoverInPlace, func(k *kill9) time.Duration {
		k.rng = rand.New(rand.NewPCG(k.seed, runSeed(k.scenario, -1)))
		return k.recoverCalibrate()
	}},
}

// kill9 is one run (or a scenario's calibration).
type kill9 struct {
	t        *testing.T
	bin      string
	seed     uint64
	scenario string
	run      int
	rng      *rand.Rand
	crashed  string // a copy of the partition as the kill left it
}

func (k *kill9) calibrate(sc kill9Scenario) time.Duration {
	// The faster of two runs: a machine busy with other work slows some
	// runs, and kills drawn past a run's end test nothing.
	d := min(sc.calibrate(k), sc.calibrate(k))
	// Kill anywhere in the command's run, a little past its end at most.
	budget := max(d*5/4, 2*time.Millisecond)
	k.t.Logf("%s: an uninterrupted run takes %s; kills are drawn below %s", k.scenario, d.Round(time.Microsecond), budget.Round(time.Microsecond))
	return budget
}

// fail reports a failed check with what replays the run, and keeps the
// partition as the kill left it under /tmp/kill9-repro.
func (k *kill9) fail(format string, args ...any) {
	k.t.Helper()
	msg := fmt.Sprintf(format, args...)
	where := ""
	if k.crashed != "" {
		dst := filepath.Join("/tmp/kill9-repro", fmt.Sprintf("%s-seed%d-run%d", k.scenario, k.seed, k.run), filepath.Base(k.crashed))
		os.RemoveAll(filepath.Dir(dst))
		if err := copyTree(k.crashed, dst); err != nil {
			where = fmt.Sprintf(" (copying the partition to %s: %v)", dst, err)
		} else {
			where = fmt.Sprintf("; the partition as the kill left it: %s", dst)
		}
	}
	k.t.Fatalf("%s\nreplay: SEGVIZ_KILL9_SEED=%d go test -run 'TestKill9/%s/%d' -count=1 .%s", msg, k.seed, k.scenario, k.run, where)
}

// params are one append's flags, drawn from the run's stream.
type appendParams struct {
	batchRecords int
	syncBytes    int
	segmentBytes int // 0: the default
	codec        string
}

func (k *kill9) drawParams(smallSegments bool) appendParams {
	codecs := []string{"none", "gzip", "snappy", "lz4", "zstd"}
	p := appendParams{
		batchRecords: 1 + k.rng.IntN(64),
		syncBytes:    1 << (10 + k.rng.IntN(7)), // 1 KiB to 64 KiB
		codec:        codecs[k.rng.IntN(len(codecs))],
	}
	if smallSegments {
		p.segmentBytes = 8<<10 + k.rng.IntN(248<<10)
	}
	return p
}

func (p appendParams) args() []string {
	a := []string{"append", "--batch-records", strconv.Itoa(p.batchRecords), "--sync-bytes", strconv.Itoa(p.syncBytes), "--compression", p.codec}
	if p.segmentBytes > 0 {
		a = append(a, "--segment.bytes", strconv.Itoa(p.segmentBytes))
	}
	return a
}

// input writes the JSON lines of records from to to-1 into a file of the
// run's directory: record i has key k<i> and value seq-<i>, so that
// reading offset i back tells which record it holds.
func (k *kill9) input(from, to int) string {
	var b bytes.Buffer
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, `{"key":"%s","value":"%s"}`+"\n",
			base64.StdEncoding.EncodeToString([]byte("k"+strconv.Itoa(i))),
			base64.StdEncoding.EncodeToString([]byte(seqValue(i))))
	}
	p := filepath.Join(k.t.TempDir(), fmt.Sprintf("records-%d-%d.jsonl", from, to))
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		k.t.Fatal(err)
	}
	return p
}

func seqValue(i int) string { return fmt.Sprintf("seq-%08d", i) }

// killed is a command started and killed.
type killed struct {
	stdout, stderr string
	dead           bool // the kill landed before the command exited
	exit           int  // the exit code when it was not killed
}

// startKill runs segviz args with stdin from the file in ("" for none),
// sends it SIGKILL after delay (never, with delay < 0), and waits.
func (k *kill9) startKill(in string, delay time.Duration, args ...string) killed {
	k.t.Helper()
	cmd := exec.Command(k.bin, args...)
	if in != "" {
		f, err := os.Open(in)
		if err != nil {
			k.t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	if delay >= 0 {
		select {
		case err = <-done:
		case <-time.After(delay):
			cmd.Process.Kill()
			err = <-done
		}
	} else {
		err = <-done
	}
	r := killed{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(interface{ Signaled() bool }); ok && ws.Signaled() {
			r.dead = true
		} else {
			r.exit = ee.ExitCode()
		}
	} else if err != nil {
		k.t.Fatal(err)
	}
	return r
}

// segviz runs segviz to completion and returns its exit code and output.
func (k *kill9) segviz(stdin string, args ...string) (int, string, string) {
	k.t.Helper()
	r := k.startKill(stdin, -1, args...)
	return r.exit, r.stdout, r.stderr
}

// acks parses the batch lines append printed — complete lines only: a
// line cut by the kill acknowledges nothing — and checks that they follow
// each other from offset from; it returns the offset after the last.
func (k *kill9) acks(out string, from int64) int64 {
	k.t.Helper()
	next := from
	out = out[:strings.LastIndexByte(out, '\n')+1]
	for line := range strings.Lines(out) {
		var a struct{ FirstOffset, LastOffset *int64 }
		if err := json.Unmarshal([]byte(line), &a); err != nil || a.FirstOffset == nil || a.LastOffset == nil {
			k.fail("append printed %q, not a batch line (%v)", line, err)
		}
		if *a.FirstOffset != next || *a.LastOffset < *a.FirstOffset {
			k.fail("append acknowledged offsets %d-%d after %d: not contiguous", *a.FirstOffset, *a.LastOffset, next-1)
		}
		next = *a.LastOffset + 1
	}
	return next
}

// snapshot copies the partition as the kill left it, for fail.
func (k *kill9) snapshot(dir string) {
	k.t.Helper()
	dst := filepath.Join(k.t.TempDir(), "crashed", filepath.Base(filepath.Dir(dir)), filepath.Base(dir))
	if err := copyTree(filepath.Dir(dir), filepath.Dir(dst)); err != nil {
		k.t.Fatal(err)
	}
	k.crashed = filepath.Dir(dst)
}

// verify runs segviz verify and fails the run unless it exits 0.
func (k *kill9) verify(dir, when string) {
	k.t.Helper()
	code, out, errs := k.segviz("", "verify", dir)
	if code != 0 {
		k.fail("segviz verify %s: exit %d, want 0\n%s%s", when, code, out, errs)
	}
}

// repair brings the partition back after the kill: segviz recover
// --in-place, or (drawn) a writable open, by appending an empty input.
func (k *kill9) repair(dir string) {
	k.t.Helper()
	if k.rng.IntN(2) == 0 {
		code, out, errs := k.segviz("", "recover", "--in-place", dir)
		if code != 0 && code != 1 {
			k.fail("segviz recover --in-place after the kill: exit %d\n%s%s", code, out, errs)
		}
		return
	}
	empty := filepath.Join(k.t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		k.t.Fatal(err)
	}
	if code, out, errs := k.segviz(empty, "append", dir); code != 0 {
		k.fail("a writable open (segviz append of nothing) after the kill: exit %d\n%s%s", code, out, errs)
	}
}

// readBack reads every record of the partition with the library and
// checks that offset i holds record i of the input; it returns the log end
// offset.
func (k *kill9) readBack(dir string) int64 {
	k.t.Helper()
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		k.fail("opening %s read-only: %v", dir, err)
	}
	defer l.Close()
	if lso := l.LogStartOffset(); lso != 0 {
		k.fail("log start offset %d, want 0", lso)
	}
	end := l.LogEndOffset()
	var it record.Iterator
	var r record.Record
	for off := int64(0); off < end; {
		rr, err := l.Read(off, 1<<20, nil, kafkalog.ReadOptions{})
		if err != nil {
			k.fail("reading offset %d of %d: %v", off, end, err)
		}
		if len(rr.Records) == 0 {
			k.fail("reading offset %d of %d: nothing", off, end)
		}
		for rest := rr.Records; len(rest) > 0; {
			b, next, err := record.ReadBatch(rest)
			if err != nil {
				k.fail("batch at offset %d: %v", off, err)
			}
			it.Reset(&b)
			for it.Next(&r) {
				if r.Offset < off {
					continue
				}
				if r.Offset != off {
					k.fail("offset %d follows %d: not contiguous", r.Offset, off-1)
				}
				if want := seqValue(int(off)); string(r.Value) != want {
					k.fail("offset %d holds %q, want %q (a record lost, repeated or reordered)", off, r.Value, want)
				}
				off++
			}
			if err := it.Err(); err != nil {
				k.fail("records of the batch at offset %d: %v", b.BaseOffset, err)
			}
			rest = next
		}
	}
	return end
}

// appendRun appends records from to to-1 into dir with p, killed after
// delay (or not, with delay < 0), and checks the partition after the kill;
// it reports whether the kill landed.
func (k *kill9) appendRun(dir string, from, to int, p appendParams, delay time.Duration) bool {
	k.t.Helper()
	in := k.input(from, to)
	r := k.startKill(in, delay, append(p.args(), dir)...)
	if !r.dead && r.exit != 0 {
		k.fail("segviz %s: exit %d\n%s", strings.Join(p.args(), " "), r.exit, r.stderr)
	}
	acked := k.acks(r.stdout, int64(from))
	if !r.dead && acked != int64(to) {
		k.fail("append finished with offsets %d-%d acknowledged, want up to %d", from, acked-1, to-1)
	}
	if _, err := os.Stat(dir); os.IsNotExist(err) && from == 0 {
		// Killed before the first batch was ready: the partition is
		// opened (and created) only then.
		if acked != 0 {
			k.fail("no partition, but append acknowledged offsets up to %d", acked-1)
		}
		return r.dead
	}
	k.snapshot(dir)
	k.verify(dir, "after the kill")
	k.repair(dir)
	k.verify(dir, "after the repair")
	end := k.readBack(dir)
	if end < acked {
		k.fail("the log ends at %d, but append acknowledged offsets up to %d (%s): acknowledged records lost", end, acked-1, strings.Join(p.args(), " "))
	}
	if end > int64(to) {
		k.fail("the log ends at %d, past the %d records of the input", end, to)
	}
	return r.dead
}

const (
	freshRecords    = 12000 // records of an append-fresh run
	existingSeed    = 3000  // records already in an append-existing partition
	existingRecords = 8000  // records appended to it
)

func (k *kill9) appendFreshCalibrate() time.Duration {
	dir := filepath.Join(k.t.TempDir(), "logs", "fresh-0")
	p := appendParams{batchRecords: 32, syncBytes: 8 << 10, codec: "none"}
	start := time.Now()
	if code, _, errs := k.segviz(k.input(0, freshRecords), append(p.args(), dir)...); code != 0 {
		k.t.Fatalf("calibration: segviz append: exit %d\n%s", code, errs)
	}
	return time.Since(start)
}

// appendFresh: segviz append into a new partition, with rolls (small
// segment.bytes) in half the runs.
func (k *kill9) appendFresh(delay time.Duration) bool {
	dir := filepath.Join(k.t.TempDir(), "logs", "fresh-0")
	return k.appendRun(dir, 0, freshRecords, k.drawParams(k.rng.IntN(2) == 0), delay)
}

// existingPartition makes a partition of existingSeed records, cleanly
// closed, with a few segments in half the runs; it returns the segment
// size it used (0: the default).
func (k *kill9) existingPartition(dir string) int {
	p := appendParams{batchRecords: 1 + k.rng.IntN(50), syncBytes: 1 << 20, codec: "lz4"}
	if k.rng.IntN(2) == 0 {
		p.segmentBytes = 16<<10 + k.rng.IntN(48<<10)
	}
	if code, _, errs := k.segviz(k.input(0, existingSeed), append(p.args(), dir)...); code != 0 {
		k.t.Fatalf("making the partition: segviz append: exit %d\n%s", code, errs)
	}
	return p.segmentBytes
}

func (k *kill9) appendExistingCalibrate() time.Duration {
	dir := filepath.Join(k.t.TempDir(), "logs", "existing-0")
	k.existingPartition(dir)
	p := appendParams{batchRecords: 32, syncBytes: 8 << 10, codec: "none"}
	start := time.Now()
	if code, _, errs := k.segviz(k.input(existingSeed, existingSeed+existingRecords), append(p.args(), dir)...); code != 0 {
		k.t.Fatalf("calibration: segviz append: exit %d\n%s", code, errs)
	}
	return time.Since(start)
}

// appendExisting: segviz append into the active segment of a partition
// that a clean close left (its indexes trimmed; the append's open
// preallocates them again), with the default segment.bytes (no roll) in
// half the runs and the partition's own small one in the others.
func (k *kill9) appendExisting(delay time.Duration) bool {
	dir := filepath.Join(k.t.TempDir(), "logs", "existing-0")
	seg := k.existingPartition(dir)
	p := k.drawParams(false)
	if k.rng.IntN(2) == 0 {
		p.segmentBytes = seg
	}
	return k.appendRun(dir, existingSeed, existingSeed+existingRecords, p, delay)
}

const recoverRecords = 20000 // records of a recover-in-place partition

// tornPartition makes a partition of recoverRecords records in a dozen
// segments or so, then tears its tail: a cut inside the last batch, or
// zeros appended. It returns how many records recovery must keep.
func (k *kill9) tornPartition(dir string) int64 {
	// The library writes it, as segviz append would, but without the cost
	// of the JSON lines.
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{config.SegmentBytes: strconv.Itoa(64 << 10)})
	if err != nil {
		k.t.Fatal(err)
	}
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), cfg, kafkalog.Options{})
	if err != nil {
		k.t.Fatal(err)
	}
	var w record.Builder
	var buf []byte
	batch := 1 + k.rng.IntN(64)
	for i := 0; i < recoverRecords; i += batch {
		var recs []record.Record
		for j := i; j < min(i+batch, recoverRecords); j++ {
			recs = append(recs, record.Record{Key: []byte("k" + strconv.Itoa(j)), Value: []byte(seqValue(j)), Timestamp: time.Now().UnixMilli()})
		}
		spec := record.NewBatchSpec(0, compress.None)
		if buf, err = w.AppendBatch(buf[:0], &spec, recs); err != nil {
			k.t.Fatal(err)
		}
		if _, err := l.Append(buf, -1); err != nil {
			k.t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		k.t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(logs) < 2 {
		k.t.Fatalf("making the partition: %d segments", len(logs))
	}
	last := logs[len(logs)-1] // Glob sorts; names are zero-padded offsets
	data, err := os.ReadFile(last)
	if err != nil {
		k.t.Fatal(err)
	}
	if k.rng.IntN(2) == 0 {
		f, err := os.OpenFile(last, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			k.t.Fatal(err)
		}
		_, err = f.Write(make([]byte, 1+k.rng.IntN(4096)))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			k.t.Fatal(err)
		}
		return recoverRecords
	}
	// The last batch's start and its first offset.
	at, first := 0, int64(-1)
	for rest := data; len(rest) > 0; {
		b, next, err := record.ReadBatch(rest)
		if err != nil {
			k.t.Fatalf("%s at %d: %v", last, len(data)-len(rest), err)
		}
		at, first = len(data)-len(rest), b.BaseOffset
		rest = next
	}
	cut := at + 1 + k.rng.IntN(len(data)-at-1)
	if err := os.Truncate(last, int64(cut)); err != nil {
		k.t.Fatal(err)
	}
	return first
}

func (k *kill9) recoverCalibrate() time.Duration {
	dir := filepath.Join(k.t.TempDir(), "logs", "torn-0")
	k.tornPartition(dir)
	start := time.Now()
	if code, _, errs := k.segviz("", "recover", "--in-place", dir); code != 1 {
		k.t.Fatalf("calibration: segviz recover --in-place: exit %d, want 1 (a tail cut)\n%s", code, errs)
	}
	return time.Since(start)
}

// recoverInPlace: segviz recover --in-place of a torn partition, killed;
// then recovered again to the end. Every record of a complete batch stays.
func (k *kill9) recoverInPlace(delay time.Duration) bool {
	dir := filepath.Join(k.t.TempDir(), "logs", "torn-0")
	keep := k.tornPartition(dir)
	r := k.startKill("", delay, "recover", "--in-place", dir)
	if !r.dead && r.exit != 1 {
		k.fail("segviz recover --in-place: exit %d, want 1 (a tail cut)\n%s%s", r.exit, r.stdout, r.stderr)
	}
	k.snapshot(dir)
	if code, out, errs := k.segviz("", "recover", "--in-place", dir); code != 0 && code != 1 {
		k.fail("segviz recover --in-place after the kill: exit %d\n%s%s", code, out, errs)
	}
	k.verify(dir, "after the recovery")
	if end := k.readBack(dir); end != keep {
		k.fail("the log ends at %d after recovery, want %d (the records of every complete batch)", end, keep)
	}
	return r.dead
}

// copyTree copies the directory src to dst (created), files and
// subdirectories.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
}
