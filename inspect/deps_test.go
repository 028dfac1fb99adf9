package inspect_test

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestNoBannedImports keeps the packages a browser page cannot use out of
// inspect's GOOS=js build: the WASM viewer calls Verify, and the
// terminal and process handling of segviz stay in cmd/segviz.
func TestNoBannedImports(t *testing.T) {
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs the go command")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	cmd := exec.Command(goTool, "list", "-deps", "github.com/segkit/segkit/inspect")
	cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	banned := map[string]bool{"os/exec": true, "net": true, "net/http": true, "os/signal": true, "runtime/pprof": true, "plugin": true}
	for _, pkg := range strings.Fields(string(out)) {
		if banned[pkg] {
			t.Errorf("inspect depends on %s under GOOS=js", pkg)
		}
	}
}
