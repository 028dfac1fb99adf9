//go:build !js && !wasip1

package depcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// allowedModules are the core module's permitted requirements (STYLE 25).
var allowedModules = map[string]bool{
	"github.com/klauspost/compress": true,
	"github.com/pierrec/lz4/v4":     true,
	"github.com/google/go-cmp":      true, // tests only
	"golang.org/x/exp":              true, // mmap of index files
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = filepath.Dir(dir)
	}
}

func TestCoreModuleRequirements(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	inRequire := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			inRequire = true
			continue
		case line == ")":
			inRequire = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !inRequire:
			continue
		}
		if f := strings.Fields(line); len(f) >= 2 && !allowedModules[f[0]] {
			t.Errorf("go.mod requires %s, which is not in the core module's budget; put it in interop/ or e2e/", f[0])
		}
	}
}

// TestLibraryPackagesForJS lists what the library packages import when
// built for GOOS=js and fails on packages a browser build must not carry.
func TestLibraryPackagesForJS(t *testing.T) {
	goCmd := "go" // the one on PATH, as go test itself was found
	libs := []string{"format", "compress", "record", "vfs", "index", "timeindex", "segment", "kafkalog/...", "retention", "inspect", "repair", "finding", "verify", "compaction", "timeline"}
	args := []string{"list", "-deps", "-f", "{{.ImportPath}}"}
	for _, l := range libs {
		args = append(args, "./"+l)
	}
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = moduleRoot(t)
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	banned := []string{"net/http", "os/exec", "runtime/pprof", "net"}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	for _, b := range banned {
		if deps[b] {
			t.Errorf("a library package imports %s in the GOOS=js build", b)
		}
	}
	for p := range deps {
		if strings.Contains(p, "/cmd/") || strings.HasSuffix(p, "/wasm") || strings.Contains(p, "/internal/viz") || strings.Contains(p, "/internal/web") {
			t.Errorf("a library package depends on %s", p)
		}
	}
}
