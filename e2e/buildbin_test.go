package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// segvizBinary returns a segviz binary for the tests that run the command
// without a browser (append, recover, verify), building cmd/segviz once:
// unlike setup, it needs no Chromium. SEGVIZ_BIN names a binary built
// elsewhere instead, to measure another revision with the same tests.
func segvizBinary(t testing.TB) string {
	t.Helper()
	p, err := builtSegviz()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// builtSegviz builds segviz once for every test of the package (or takes
// SEGVIZ_BIN), and returns its path.
func builtSegviz() (string, error) {
	binOnce.Do(func() {
		if p := os.Getenv("SEGVIZ_BIN"); p != "" {
			binPath, binErr = filepath.Abs(p)
			return
		}
		root, err := filepath.Abs("..")
		if err != nil {
			binErr = err
			return
		}
		dir, err := os.MkdirTemp("", "segviz-e2e-cli-")
		if err != nil {
			binErr = err
			return
		}
		cleanup = append(cleanup, dir)
		binPath = filepath.Join(dir, "segviz")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/segviz")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/segviz: %v\n%s", err, out)
		}
	})
	return binPath, binErr
}
