package fuzz

import (
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// captureTB runs harness code and records a failure instead of failing
// the test.
type captureTB struct {
	testing.TB
	failed bool
	msg    string
}

func (c *captureTB) Fatalf(format string, args ...any) {
	c.failed, c.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (c *captureTB) Fatal(args ...any) {
	c.failed, c.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}
func (c *captureTB) Errorf(format string, args ...any) { c.Fatalf(format, args...) }
func (c *captureTB) FailNow()                          { c.Fatal("FailNow") }
func (c *captureTB) Helper()                           {}

// capture runs f(tb) and returns the failure message, "" if it passed.
func capture(t testing.TB, f func(testing.TB)) string {
	c := &captureTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(c)
	}()
	<-done
	if !c.failed {
		return ""
	}
	return c.msg
}

// targetRunners maps a fuzz target to its body.
var targetRunners = map[string]func(testing.TB, []byte){
	"FuzzLogOps":         func(tb testing.TB, b []byte) { runLogOps(tb, b) },
	"FuzzRecoverCorrupt": runRecoverCorrupt,
	"FuzzDumpJSON":       runDumpJSON,
}

// readSeed reads a one-[]byte `go test fuzz v1` file.
func readSeed(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
		return nil, fmt.Errorf("%s: not a one-[]byte seed", path)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	return []byte(s), err
}

// TestKnownBugReproducers checks each committed reproducer,
// testdata/fuzz/<Target>/bugN-*: it passes with the harness's workarounds
// and fails with the workaround for bug N alone turned off. When a fix
// lands, the second check fails: delete the workaround (knownbugs_test.go)
// and keep the reproducer as a regression seed.
func TestKnownBugReproducers(t *testing.T) {
	if *strict || *knownBug != 0 {
		t.Skip("runs with the default workarounds")
	}
	n := 0
	for target, run := range targetRunners {
		files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", target, "bug*"))
		for _, f := range files {
			name := filepath.Base(f)
			bug, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(name, "-", 2)[0], "bug"))
			if err != nil {
				t.Fatalf("%s: name it bugN-...", f)
			}
			data, err := readSeed(f)
			if err != nil {
				t.Fatal(err)
			}
			n++
			if msg := capture(t, func(tb testing.TB) { run(tb, data) }); msg != "" {
				t.Errorf("%s fails even with the workarounds: %s", f, msg)
			}
			*knownBug = bug
			msg := capture(t, func(tb testing.TB) { run(tb, data) })
			*knownBug = 0
			if msg == "" {
				t.Errorf("%s passes without the workaround for bug %d: fixed? Delete the workaround and rename the seed", f, bug)
			} else {
				t.Logf("%s without workaround %d: %s", name, bug, firstLine(msg))
			}
		}
	}
	t.Logf("%d reproducers", n)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

var (
	minimizeHex    = flag.String("minimize", "", "minimize this input (hex) of -target while it fails with -expect, under -knownbug/-strict")
	minimizeTarget = flag.String("target", "FuzzLogOps", "target of -minimize")
	minimizeExpect = flag.String("expect", "", "substring the failure of -minimize must keep")
)

// TestMinimize shrinks a failing input by removing whole operations (or
// recipe steps) while it keeps failing the same way, and prints it.
func TestMinimize(t *testing.T) {
	if *minimizeHex == "" {
		t.Skip("run with -minimize HEX [-target T] [-expect TEXT] [-knownbug N]")
	}
	data, err := hex.DecodeString(*minimizeHex)
	if err != nil {
		t.Fatal(err)
	}
	run := targetRunners[*minimizeTarget]
	fails := func(b []byte) bool {
		msg := capture(t, func(tb testing.TB) { run(tb, b) })
		return msg != "" && strings.Contains(msg, *minimizeExpect)
	}
	if !fails(data) {
		t.Fatal("the input does not fail as expected")
	}
	head, unit := headerSize, opSize
	if *minimizeTarget == "FuzzRecoverCorrupt" {
		c := decodeRecoverCase(data)
		head, unit = len(data)-len(c.recipe)*recoverOpSize, recoverOpSize
	}
	for changed := true; changed; {
		changed = false
		for i := head; i+unit <= len(data); i += unit {
			cand := append(append([]byte{}, data[:i]...), data[i+unit:]...)
			if fails(cand) {
				data, changed = cand, true
				i -= unit
			}
		}
	}
	msg := capture(t, func(tb testing.TB) { run(tb, data) })
	t.Logf("minimized to %d bytes: %x\n%s", len(data), data, firstLine(msg))
	if *minimizeTarget == "FuzzLogOps" {
		t.Logf("%v", decodeProgram(data))
	}
}
