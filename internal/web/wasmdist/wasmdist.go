package wasmdist

//go:generate go run ./gen

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

var (
	//go:embed segkit.wasm.gz
	wasmGzip []byte
	//go:embed wasm_exec.js
	execJS []byte
	//go:embed SOURCE
	source string
)

// Info describes the embedded build.
type Info struct {
	// SourceHash is SourceHash of the sources it was built from.
	SourceHash string
	// GoVersion is the Go that built it.
	GoVersion string
}

// Embedded returns the embedded build: the gzip of the .wasm, the
// wasm_exec.js that goes with it, and what it was built from. ok is false
// when the files hold no build (SOURCE is empty).
func Embedded() (wasmGz, wasmExecJS []byte, info Info, ok bool) {
	f := strings.Fields(source)
	if len(f) < 2 || len(wasmGzip) == 0 || len(execJS) == 0 {
		return nil, nil, Info{}, false
	}
	return wasmGzip, execJS, Info{SourceHash: f[0], GoVersion: f[1]}, true
}

// SourceHash hashes what the WASM build depends on: go.mod, go.sum and
// the non-test .go files of the module's packages that ./wasm imports
// (asked of `go list` for GOOS=js; all of the module's when that fails),
// and extra. root is the module's directory, gocmd the go command.
func SourceHash(gocmd, root, extra string) (string, error) {
	dirs, err := wasmDeps(gocmd, root)
	if err != nil {
		dirs = nil // hash the whole module instead
	}
	var files []string
	for _, name := range []string{"go.mod", "go.sum"} {
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			files = append(files, filepath.Join(root, name))
		}
	}
	if dirs != nil {
		for _, d := range dirs {
			entries, err := os.ReadDir(d)
			if err != nil {
				return "", err
			}
			for _, e := range entries {
				if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
					files = append(files, filepath.Join(d, n))
				}
			}
		}
	} else if files, err = moduleGoFiles(root, files); err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	io.WriteString(h, extra)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(root, f)
		fmt.Fprintf(h, "\x00%s\x00%d\x00", filepath.ToSlash(rel), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// moduleGoFiles appends the non-test .go files of the module at root
// (not of modules nested in it) to files.
func moduleGoFiles(root string, files []string) ([]string, error) {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // another module (interop, e2e)
				}
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

// wasmDeps lists the directories of the module's packages that ./wasm
// depends on, for GOOS=js.
func wasmDeps(gocmd, root string) ([]string, error) {
	cmd := exec.Command(gocmd, "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}}", "./wasm")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, d := range strings.Fields(string(out)) {
		if rel, err := filepath.Rel(root, d); err == nil && !strings.HasPrefix(rel, "..") {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return nil, errors.New("go list found no package")
	}
	return dirs, nil
}
