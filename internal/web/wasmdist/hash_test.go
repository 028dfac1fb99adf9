package wasmdist

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func TestSourceHash(t *testing.T) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip(err)
	}
	root, _ := filepath.Abs(filepath.Join("..", "..", ".."))
	a, err := SourceHash(gocmd, root, "go1.x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := SourceHash(gocmd, root, "go1.x")
	c, _ := SourceHash(gocmd, root, "go1.y")
	d, _ := SourceHash("/nonexistent/go", root, "go1.x") // go list fails: the whole module
	if a != b || a == c || a == d || len(a) != 20 {
		t.Errorf("hashes %s %s %s %s", a, b, c, d)
	}
	deps, err := wasmDeps(gocmd, root)
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, dep := range deps {
		r, _ := filepath.Rel(root, dep)
		rel = append(rel, filepath.ToSlash(r))
	}
	for _, want := range []string{"wasm", "internal/viz", "record", "vfs"} {
		if !slices.Contains(rel, want) {
			t.Errorf("the WASM build's packages %v lack %s", rel, want)
		}
	}
	for _, not := range []string{"cmd/segviz", "internal/web", "internal/web/wasmdist"} {
		if slices.Contains(rel, not) {
			t.Errorf("the WASM build's packages include %s", not)
		}
	}
}
