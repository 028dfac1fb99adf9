package wasmdist_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/segkit/segkit/internal/web/wasmdist"
)

// TestEmbeddedIsCurrent: the embedded engine was built from the sources
// of this checkout (its SOURCE hash is theirs), is a WebAssembly module,
// and fits the budget of 3 MB gzipped.
func TestEmbeddedIsCurrent(t *testing.T) {
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no go command under WASM")
	}
	gz, js, info, ok := wasmdist.Embedded()
	if !ok {
		t.Fatal("no embedded WASM engine: run go generate ./internal/web/wasmdist")
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs(filepath.Join("..", "..", ".."))
	hash, err := wasmdist.SourceHash(gocmd, root, "")
	if err != nil {
		t.Fatal(err)
	}
	if hash != info.SourceHash {
		t.Fatalf("the embedded WASM engine was built from sources %s, these are %s: run go generate ./internal/web/wasmdist", info.SourceHash, hash)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(wasm, []byte("\x00asm")) || !bytes.Contains(js, []byte("globalThis.Go = class")) {
		t.Errorf("not a WASM module (%q) with its wasm_exec.js", wasm[:min(8, len(wasm))])
	}
	if len(gz) > 3<<20 {
		t.Errorf("the engine is %d bytes gzipped, over 3 MiB", len(gz))
	}
	t.Logf("embedded engine: %d bytes, %d gzipped (%.0f%%), built by %s from sources %s", len(wasm), len(gz), 100*float64(len(gz))/float64(len(wasm)), info.GoVersion, info.SourceHash)
}
