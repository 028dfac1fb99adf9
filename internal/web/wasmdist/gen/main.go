// Command gen rebuilds the embedded WASM engine (see package wasmdist):
// run it with `go generate ./internal/web/wasmdist` from anywhere in the
// module.
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/segkit/segkit/internal/web/wasmdist"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "wasmdist/gen:", err)
		os.Exit(1)
	}
}

func run() error {
	// go generate runs in the package's directory: the module root is
	// three up.
	here, err := os.Getwd()
	if err != nil {
		return err
	}
	root := filepath.Clean(filepath.Join(here, "..", "..", ".."))
	gocmd, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	goVersion, goroot, err := goEnv(gocmd, root)
	if err != nil {
		return err
	}
	hash, err := wasmdist.SourceHash(gocmd, root, "")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "wasmdist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "segkit.wasm")
	cmd := exec.Command(gocmd, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s", "-o", out, "./wasm")
	cmd.Dir = root
	// Hermetic: no GOFLAGS of the caller's (CI sets some) change the bytes.
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("GOOS=js GOARCH=wasm go build ./wasm: %w", err)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return err
	}
	// No name and no time in the header: the same .wasm gives the same
	// bytes.
	if _, err := zw.Write(wasm); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	js, err := os.ReadFile(filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		if js, err = os.ReadFile(filepath.Join(goroot, "misc", "wasm", "wasm_exec.js")); err != nil {
			return err
		}
	}
	for name, b := range map[string][]byte{
		"segkit.wasm.gz": gz.Bytes(),
		"wasm_exec.js":   js,
		"SOURCE":         []byte(hash + " " + goVersion + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(here, name), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "wasmdist: %s: %d bytes, %d gzipped, sources %s, %s\n", "segkit.wasm", len(wasm), gz.Len(), hash, goVersion)
	return nil
}

func goEnv(gocmd, root string) (version, goroot string, err error) {
	cmd := exec.Command(gocmd, "env", "GOVERSION", "GOROOT")
	cmd.Dir = root
	b, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("go env: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return "", "", fmt.Errorf("go env: unexpected %q", b)
	}
	return f[0], f[1], nil
}
