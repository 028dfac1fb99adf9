package oracle

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Script is the path of the oracle/kafka entry point.
func Script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "kafka")
}

var (
	buildOnce sync.Once
	buildErr  error
)

// Available reports whether java and mvn are on PATH and the oracle builds.
// The first call builds it (a minute with a cold ~/.m2, a second otherwise).
func Available() error {
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("oracle: %s not found on PATH (the Kafka oracle needs Java 17 and Maven)", tool)
		}
	}
	buildOnce.Do(func() {
		cmd := exec.Command(Script(), "help")
		var stderr bytes.Buffer
		cmd.Stdout = &bytes.Buffer{}
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("oracle: building it failed: %v\n%s", err, stderr.Bytes())
		}
	})
	return buildErr
}

// Require skips the test when the oracle cannot run, and fails it under
// CI=true, where the oracle is a requirement.
func Require(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (required under CI=true)", err)
		}
		t.Skipf("skipping: %v", err)
	}
}

// Run runs oracle/kafka with args and returns its standard output. A non-zero
// exit is an error that carries the standard error.
func Run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, Script(), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("oracle/kafka %s: %v\n%s", strings.Join(args, " "), err, lastLines(stderr.String(), 40))
	}
	return stdout.Bytes(), nil
}

// RunSplit is Run that also returns the standard error (DumpLogSegments
// writes some of its findings there).
func RunSplit(ctx context.Context, args ...string) (stdout, stderr []byte, err error) {
	cmd := exec.CommandContext(ctx, Script(), args...)
	var o, e bytes.Buffer
	cmd.Stdout = &o
	cmd.Stderr = &e
	err = cmd.Run()
	if _, ok := err.(*exec.ExitError); ok {
		err = nil // DumpLogSegments exits non-zero on some findings; the caller compares output
	}
	return o.Bytes(), e.Bytes(), err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Server is a running `broker` or `adopt` command: a Kafka broker in its own
// JVM. Report is the JSON object it printed when it became ready.
type Server struct {
	Report []byte
	cmd    *exec.Cmd
	stdin  interface{ Close() error }
	stderr *bytes.Buffer
	done   chan error
}

// Start runs a serving command ("broker" or "adopt", with its flags) and
// waits until it prints its ready line. The broker stops when Stop is called
// (it closes the command's stdin: Kafka shuts down cleanly) or when ctx ends.
func Start(ctx context.Context, args ...string) (*Server, error) {
	cmd := exec.CommandContext(ctx, Script(), args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &Server{cmd: cmd, stdin: stdin, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = &lockedWriter{w: s.stderr}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line := make(chan []byte, 1)
	go func() {
		buf := make([]byte, 0, 4096)
		one := make([]byte, 1)
		for {
			n, err := stdout.Read(one)
			if n == 1 {
				if one[0] == '\n' {
					line <- buf
					break
				}
				buf = append(buf, one[0])
			}
			if err != nil {
				close(line)
				break
			}
		}
		// Drain whatever else it prints.
		var sink [4096]byte
		for {
			if _, err := stdout.Read(sink[:]); err != nil {
				break
			}
		}
		s.done <- cmd.Wait()
	}()
	select {
	case l, ok := <-line:
		if !ok {
			err := <-s.done
			return nil, fmt.Errorf("oracle/kafka %s exited before it was ready: %v\n%s", strings.Join(args, " "), err, lastLines(s.Stderr(), 40))
		}
		s.Report = l
		return s, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("oracle/kafka %s: %v\n%s", strings.Join(args, " "), ctx.Err(), lastLines(s.Stderr(), 40))
	}
}

// Stderr returns what the broker has logged so far (Kafka's server.log lines).
func (s *Server) Stderr() string {
	mu.Lock()
	defer mu.Unlock()
	return s.stderr.String()
}

// Stop shuts the broker down cleanly and waits for it to exit.
func (s *Server) Stop() error {
	s.stdin.Close()
	return <-s.done
}

var mu sync.Mutex

type lockedWriter struct{ w *bytes.Buffer }

func (l *lockedWriter) Write(p []byte) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	return l.w.Write(p)
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on now, and
// whose successor (the broker's controller port) is free too.
func FreePort() (int, error) {
	for i := 0; i < 50; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if l2, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1)); err == nil {
			l2.Close()
			return p, nil
		}
	}
	return 0, fmt.Errorf("oracle: no free port pair")
}
