package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestLake: segviz lake runs segviz-lake from PATH with its arguments and
// exits with its status; without it, it says how to install it (exit 3).
func TestLake(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("the test's segviz-lake is a shell script")
	}
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	if code, _, errs := runSegviz("lake", "files"); code != exitFailure || !strings.Contains(errs, "go install github.com/segkit/segkit/lake/cmd/segviz-lake") {
		t.Errorf("without segviz-lake: exit %d: %s", code, errs)
	}
	script := "#!/bin/sh\necho \"args: $*\"\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "segviz-lake"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runSegviz("lake", "files", "--catalog", "sqlite:/tmp/x.db", "--json")
	if code != 1 || strings.TrimSpace(out) != "args: files --catalog sqlite:/tmp/x.db --json" {
		t.Errorf("segviz lake files: exit %d, output %q", code, out)
	}
	if code, out, _ := runSegviz("lake", "--help"); code != exitOK || !strings.Contains(out, "segviz-lake") {
		t.Errorf("segviz lake --help: exit %d", code)
	}
}
