package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/repair"
	"github.com/segkit/segkit/vfs"
)

// holdLockEnv makes the test binary a helper process that locks the file
// the variable names, prints "locked", and holds the lock until its
// standard input closes (TestHelperHoldLock).
const (
	holdLockEnv     = "SEGVIZ_TEST_HOLD_LOCK"
	holdLockModeEnv = "SEGVIZ_TEST_HOLD_LOCK_MODE" // "vfs" (default) or "posix"
)

// TestHelperHoldLock is not a test: it is the child process of
// TestAppendLockedByAnotherProcess.
func TestHelperHoldLock(t *testing.T) {
	name := os.Getenv(holdLockEnv)
	if name == "" {
		t.Skip("helper process only")
	}
	var closer io.Closer
	var err error
	if os.Getenv(holdLockModeEnv) == "posix" {
		closer, err = posixLock(name)
	} else {
		closer, err = vfs.OS().Lock(name)
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	closer.Close()
	os.Exit(0)
}

// holdLock starts a child process holding name locked and returns once it
// holds it; the lock goes when the test ends.
func holdLock(t *testing.T, name, mode string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldLock$")
	cmd.Env = append(os.Environ(), holdLockEnv+"="+name, holdLockModeEnv+"="+mode)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper process: %q %v", line, err)
	}
}

// newPartition appends n records to a new partition dir of a new log
// directory, with the CLI, and returns dir.
func newPartition(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kafka-logs", "orders-0")
	if code, _, errs := appendCmd(t, records(n), "--batch-records", "2", dir); code != exitOK {
		t.Fatalf("append: exit %d: %s", code, errs)
	}
	return dir
}

// wantLocked checks that a segviz command met the log directory's lock:
// exit 3, a message naming the lock file and who may hold it.
func wantLocked(t *testing.T, what string, code int, errs, logDir string) {
	t.Helper()
	lock := filepath.ToSlash(filepath.Join(logDir, ".lock"))
	if code != exitFailure || !strings.Contains(errs, lock+" is locked") || !strings.Contains(errs, "a Kafka broker or another segviz may be running") {
		t.Fatalf("%s: exit %d, want 3 with a message naming %s:\n%s", what, code, lock, errs)
	}
}

// TestAppendLockedByAnotherProcess: a lock held by another process — a
// segviz, or a broker, whose JVM takes a POSIX record lock — makes
// segviz append exit 3, before writing a byte.
func TestAppendLockedByAnotherProcess(t *testing.T) {
	for _, mode := range []string{"vfs", "posix"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "posix" {
				if _, err := posixLock(""); errors.Is(err, errors.ErrUnsupported) {
					t.Skip(err)
				}
			}
			dir := newPartition(t, 4)
			logDir := filepath.Dir(dir)
			holdLock(t, filepath.Join(logDir, ".lock"), mode)
			before := snapshot(t, logDir)
			code, out, errs := appendCmd(t, records(3), dir)
			wantLocked(t, "append", code, errs, logDir)
			if out != "" {
				t.Errorf("output of a refused append: %q", out)
			}
			code, _, errs = runSegviz("recover", "--in-place", dir)
			wantLocked(t, "recover --in-place", code, errs, logDir)
			if after := snapshot(t, logDir); after != before {
				t.Fatalf("a refused writer changed the log directory:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// blockingWriter blocks each Write until the test lets it through: a
// segviz append writing its first output line holds the partition open.
type blockingWriter struct {
	wrote   chan struct{}
	release chan struct{}
	once    sync.Once
	buf     bytes.Buffer
}

func newBlockingWriter() *blockingWriter {
	return &blockingWriter{wrote: make(chan struct{}), release: make(chan struct{})}
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	w.once.Do(func() {
		close(w.wrote)
		<-w.release
	})
	return w.buf.Write(p)
}

// TestTwoWritersOnePartition: of two writers — the library's kafkalog.Open,
// segviz append, segviz recover --in-place, repair.Recover — the second
// fails before writing a byte, in every order, while the first holds the
// partition; once it is done, the second succeeds.
func TestTwoWritersOnePartition(t *testing.T) {
	type writer struct {
		name string
		run  func(t *testing.T, dir string) error // nil error: wrote
	}
	library := writer{"kafkalog.Open", func(t *testing.T, dir string) error {
		l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{})
		if err != nil {
			return err
		}
		return l.Close()
	}}
	cli := func(name string, in string, args ...string) writer {
		return writer{name, func(t *testing.T, dir string) error {
			var out, errb bytes.Buffer
			code := appendFrom(strings.NewReader(in), append(args[1:], dir), &out, &errb)
			if args[0] == "recover" {
				code = run(append(args, dir), &out, &errb)
			}
			if code == exitFailure {
				return fmt.Errorf("exit 3: %s", errb.String())
			}
			if code != exitOK {
				t.Fatalf("%s: exit %d: %s", name, code, errb.String())
			}
			return nil
		}}
	}
	seconds := []writer{
		library,
		cli("segviz append", records(5), "append", "--batch-records", "1"),
		cli("segviz recover --in-place", "", "recover", "--in-place"),
		{"repair.Recover", func(t *testing.T, dir string) error {
			_, err := repair.Recover(vfs.OS(), filepath.ToSlash(dir), repair.RecoverOptions{})
			return err
		}},
	}
	// The first writer holds the partition: the library with an open
	// Log; segviz append blocked writing its first output line.
	firsts := []struct {
		name string
		hold func(t *testing.T, dir string) (release func())
	}{
		{"kafkalog.Open", func(t *testing.T, dir string) func() {
			l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return func() {
				if err := l.Close(); err != nil {
					t.Error(err)
				}
			}
		}},
		{"segviz append", func(t *testing.T, dir string) func() {
			w := newBlockingWriter()
			done := make(chan int)
			var errb bytes.Buffer
			go func() {
				done <- appendFrom(strings.NewReader(records(4)), []string{"--batch-records", "2", dir}, w, &errb)
			}()
			<-w.wrote
			return func() {
				close(w.release)
				if code := <-done; code != exitOK {
					t.Errorf("the first append: exit %d: %s", code, errb.String())
				}
			}
		}},
	}
	for _, first := range firsts {
		for _, second := range seconds {
			t.Run(first.name+"/then/"+second.name, func(t *testing.T) {
				dir := newPartition(t, 6)
				logDir := filepath.Dir(dir)
				release := first.hold(t, dir)
				before := snapshot(t, logDir)
				err := second.run(t, dir)
				var le *kafkalog.LockError
				if err == nil || !errors.Is(err, vfs.ErrLocked) && !strings.Contains(err.Error(), "is locked") {
					release()
					t.Fatalf("the second writer (%s) was not refused: %v", second.name, err)
				}
				if errors.As(err, &le) && le.Path != filepath.ToSlash(filepath.Join(logDir, ".lock")) {
					t.Errorf("LockError names %s", le.Path)
				}
				if after := snapshot(t, logDir); after != before {
					release()
					t.Fatalf("the refused writer changed the log directory:\nbefore:\n%s\nafter:\n%s", before, after)
				}
				release()
				if err := second.run(t, dir); err != nil {
					t.Fatalf("%s after the first writer was done: %v", second.name, err)
				}
				if code, out, _ := runSegviz("verify", dir); code != exitOK {
					t.Errorf("verify: exit %d\n%s", code, out)
				}
			})
		}
	}
}

// TestConcurrentAppends runs segviz appends on one partition at once
// (under -race): each either appends all its batches or fails with exit 3
// before writing; the offsets of those that succeeded never overlap, and
// the partition holds exactly their records.
func TestConcurrentAppends(t *testing.T) {
	dir := newPartition(t, 1)
	const n = 8
	var wg sync.WaitGroup
	codes := make([]int, n)
	outs := make([]string, n)
	for i := range n {
		wg.Go(func() {
			var out, errb bytes.Buffer
			codes[i] = appendFrom(strings.NewReader(records(10)), []string{"--batch-records", "1", dir}, &out, &errb)
			outs[i] = out.String()
			if codes[i] == exitFailure && !strings.Contains(errb.String(), "is locked") {
				t.Errorf("append %d: %s", i, errb.String())
			}
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	ok := 0
	for i := range n {
		if codes[i] != exitOK {
			if codes[i] != exitFailure || outs[i] != "" {
				t.Errorf("append %d: exit %d, output %q", i, codes[i], outs[i])
			}
			continue
		}
		ok++
		for _, line := range strings.Split(strings.TrimSpace(outs[i]), "\n") {
			var r struct{ FirstOffset, LastOffset int64 }
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			for o := r.FirstOffset; o <= r.LastOffset; o++ {
				if seen[o] {
					t.Fatalf("offset %d reported appended twice", o)
				}
				seen[o] = true
			}
		}
	}
	if ok == 0 {
		t.Fatal("no append succeeded")
	}
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got, want := l.LogEndOffset(), int64(1+10*ok); got != want {
		t.Fatalf("log end offset %d, want %d (%d appends of 10 succeeded)", got, want, ok)
	}
}

// TestAppendRefusesMidLogCorruption: one flipped byte in batch 10 of a
// real 4-segment partition. Appending used to truncate the first segment
// there and delete the three later ones (99% of the records), silently,
// with exit 0. Now nothing is written, the command exits 3 and names the
// file, the position and the repair commands; recover (the explicit
// repair) still truncates as Kafka does.
func TestAppendRefusesMidLogCorruption(t *testing.T) {
	src := filepath.Join(realdata.Dir(t), "dipendrasaini__kafka-learnning-series/tmp/kafka-logs-1/invoice-0")
	dir := filepath.Join(t.TempDir(), "kafka-logs-1", "invoice-0")
	copyDir(t, src, dir)
	name := filepath.Join(dir, "00000000000000000000.log")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var pos []int64
	for s := record.NewScanner(b, "", 0); s.Next(); {
		pos = append(pos, s.Entry().Position)
	}
	at := pos[10]
	b[at+70] ^= 0x01 // inside the records: the CRC fails
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	before := dataSnapshot(t, dir)
	code, out, errs := appendCmd(t, records(1), dir)
	if code != exitFailure || out != "" {
		t.Fatalf("exit %d, want 3; output %q\n%s", code, out, errs)
	}
	for _, want := range []string{filepath.ToSlash(name), fmt.Sprintf("damaged at byte %d", at), "segviz salvage", "segviz recover", "nothing was written"} {
		if !strings.Contains(errs, want) {
			t.Errorf("message lacks %q:\n%s", want, errs)
		}
	}
	if after := dataSnapshot(t, dir); after != before {
		t.Fatalf("the refused append changed the partition:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// The library's writable Open refuses it with a typed error.
	_, err = kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{})
	var ce *kafkalog.CorruptLogError
	if !errors.As(err, &ce) || !errors.Is(err, kafkalog.ErrCorruptLog) || ce.Path != filepath.ToSlash(name) || ce.Position != at || ce.NextValid <= at || ce.LaterSegments != 3 {
		t.Fatalf("kafkalog.Open: %v (%+v)", err, ce)
	}
	if after := dataSnapshot(t, dir); after != before {
		t.Fatal("the refused kafkalog.Open changed the partition")
	}
	// The explicit repair still does what Kafka's recovery does.
	code, out, errs = runSegviz("recover", "--in-place", dir)
	if code != exitProblem || !strings.Contains(out, fmt.Sprintf("cut at position %d", at)) || strings.Count(out, "deleted 000") != 3 {
		t.Fatalf("recover --in-place: exit %d\n%s\n%s", code, out, errs)
	}
}

// dataSnapshot is snapshot without the offset and time indexes, which a
// writable open may rebuild (a missing index) before it meets damage.
func dataSnapshot(t *testing.T, root string) string {
	t.Helper()
	var keep []string
	for _, line := range strings.SplitAfter(snapshot(t, root), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && (strings.HasSuffix(f[0], ".index") || strings.HasSuffix(f[0], ".timeindex")) {
			continue
		}
		if len(f) > 3 && strings.HasPrefix(f[2], "d") {
			line = f[0] + " dir\n" // a rebuilt index changes the directory's mtime
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "")
}

// TestAppendCutsTornTail: a partial last batch at the end of the active
// segment is a crash's torn write: append cuts it, says so, and appends.
func TestAppendCutsTornTail(t *testing.T) {
	dir := newPartition(t, 4)
	name := filepath.Join(dir, "00000000000000000000.log")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	size := len(b)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(b[:30]) // the first 30 bytes of a batch
	f.Close()
	os.Remove(filepath.Join(filepath.Dir(dir), ".kafka_cleanshutdown"))
	code, out, errs := appendCmd(t, records(1), dir)
	if code != exitOK || out != "{\"firstOffset\":4,\"lastOffset\":4}\n" {
		t.Fatalf("exit %d %q\n%s", code, out, errs)
	}
	if want := fmt.Sprintf("cut 30 bytes at position %d of segment 0 (partial entry)", size); !strings.Contains(errs, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errs)
	}
}

// TestWritersRefuseNonPartitionDirs: recover --in-place and append given a
// log directory, or an empty directory that is not named as a partition,
// exit 2 and write nothing; recover --out refuses DIR2 inside DIR. ("/" is
// tested on Mem, in inspect's TestCheckPartitionDir: a regression must
// not write into the real root.)
func TestWritersRefuseNonPartitionDirs(t *testing.T) {
	dir := newPartition(t, 2)
	logDir := filepath.Dir(dir)
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	snap := func() string { return snapshot(t, logDir) + snapshot(t, filepath.Dir(empty)) }
	before := snap()
	for _, c := range []struct {
		name string
		args []string
	}{
		{"recover log dir", []string{"recover", "--in-place", logDir}},
		{"recover empty dir", []string{"recover", "--in-place", empty}},
		{"recover --out inside DIR", []string{"recover", "--out", filepath.Join(dir, "x-0"), dir}},
		{"recover --out of a log dir", []string{"recover", "--out", filepath.Join(root, "copy-0"), logDir}},
		{"recover --out not a partition name", []string{"recover", "--out", filepath.Join(root, "copy"), dir}},
		{"append log dir", []string{"append", logDir}},
		{"append empty dir", []string{"append", empty}},
		{"append inside a partition", []string{"append", filepath.Join(dir, "inner-0")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(c.args, &out, &errb)
			if c.args[0] == "append" {
				code = appendFrom(strings.NewReader(records(1)), c.args[1:], &out, &errb)
			}
			if code != exitUsage || !strings.Contains(errb.String(), "partition") && !strings.Contains(errb.String(), "outside DIR") {
				t.Fatalf("exit %d, want 2\n%s\n%s", code, out.String(), errb.String())
			}
		})
	}
	if after := snap(); after != before {
		t.Fatalf("a refused command wrote:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Fatalf("recover --out wrote %v", ents)
	}
}

// TestRecoverOutReportsCleanShutdown: recover --out of a partition whose
// log directory has a clean-shutdown marker says so, labels the segments
// as recovered by force after a clean shutdown (not "unclean shutdown"),
// and lists each segment once, even one recovered twice (its index
// missing, then the whole log).
func TestRecoverOutReportsCleanShutdown(t *testing.T) {
	src := filepath.Join(realdata.Dir(t), realTestPartition)
	code, out, errs := runSegviz("recover", "--out", filepath.Join(t.TempDir(), "copy", "test-0"), src)
	if code != exitOK || !strings.Contains(out, "had a clean-shutdown marker") || strings.Contains(out, "unclean") ||
		!strings.Contains(out, "segment 00000000000000000000.log (forced, after a clean shutdown)") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	src = filepath.Join(realdata.Dir(t), "dipendrasaini__kafka-learnning-series/tmp/kafka-logs-1/invoice-0")
	code, out, errs = runSegviz("recover", "--out", filepath.Join(t.TempDir(), "copy", "invoice-0"), src)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var segs []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "segment" {
			segs = append(segs, f[1])
		}
	}
	want := []string{"00000000000000000000.log", "00000000000000030626.log", "00000000000000060611.log", "00000000000000090867.log"}
	if strings.Join(segs, " ") != strings.Join(want, " ") || !strings.Contains(out, "00000000000000090867.log (missing index, then unclean shutdown)") {
		t.Fatalf("segments %v, want each once in order %v:\n%s", segs, want, out)
	}
}

// TestRecoverCompletesSwap: a .log.swap left by an interrupted compaction
// (without its index files) is completed into place: the report says the
// segment was replaced, not truncated, and no .swap file — of the ones
// recovery itself opened — is left behind.
func TestRecoverCompletesSwap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kafka-logs", "orders-0")
	if code, _, errs := appendCmd(t, records(30), "--batch-records", "5", "--segment.bytes", "300", dir); code != exitOK {
		t.Fatalf("append: exit %d: %s", code, errs)
	}
	ents, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(ents) < 3 {
		t.Fatalf("%d segments", len(ents))
	}
	// The cleaner's output for the second segment: its batches, as a swap.
	b, err := os.ReadFile(ents[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ents[1]+".swap", b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runSegviz("recover", "--in-place", dir)
	if code != exitOK {
		t.Fatalf("exit %d, want 0 (nothing truncated)\n%s\n%s", code, out, errs)
	}
	base := filepath.Base(ents[1])
	if !strings.Contains(out, "renamed "+base+".swap") || !strings.Contains(out, "replaced "+base) || strings.Contains(out, "deleted "+base) ||
		!strings.Contains(out, "result: the log was clean") {
		t.Errorf("report:\n%s", out)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*.swap"))
	if len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if code, out, _ := runSegviz("verify", dir); code != exitOK {
		t.Errorf("verify: exit %d\n%s", code, out)
	}
}
