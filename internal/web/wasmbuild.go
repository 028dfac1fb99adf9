package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/segkit/segkit/internal/web/wasmdist"
)

// ModulePath is the module whose wasm/ package is built.
const ModulePath = "github.com/segkit/segkit"

// Environment variables that steer the WASM build.
const (
	// EnvSource names the module's source directory, when segviz cannot
	// find it by itself (a binary built with -trimpath, or moved).
	EnvSource = "SEGKIT_SRC"
	// EnvCache names the directory builds are cached in; the default is
	// segkit/segviz-wasm in the user cache directory.
	EnvCache = "SEGVIZ_WASM_CACHE"
)

// Builder builds the WASM engine (GOOS=js GOARCH=wasm go build -trimpath
// ./wasm) on first use, into a cache directory keyed by a hash of the
// module's sources and the Go version, so that it is built once per
// version of the code and served from the cache afterwards. It needs the
// module's sources and the go command: `go run ./cmd/segviz` has both.
type Builder struct {
	mu     sync.Mutex
	status WASMStatus
	wasm   string
	execJS string
	done   chan struct{}
	err    error
	log    io.Writer
	cancel context.CancelFunc
}

// NewBuilder returns a builder that reports its progress to log (nil:
// nowhere). Start begins the build.
func NewBuilder(log io.Writer) *Builder {
	if log == nil {
		log = io.Discard
	}
	return &Builder{status: WASMStatus{State: "building"}, done: make(chan struct{}), log: log}
}

// Start builds in the background, unless the cache has the build already.
// Stop ends a build that is still running.
func (b *Builder) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	go func() {
		wasm, execJS, status, err := build(ctx, b.log)
		b.mu.Lock()
		b.wasm, b.execJS, b.status, b.err = wasm, execJS, status, err
		b.mu.Unlock()
		close(b.done)
	}()
}

// Stop stops a running build (killing the go command) and waits for it,
// at most a few seconds, so that no build outlives the server.
func (b *Builder) Stop() {
	if b.cancel == nil {
		return
	}
	b.cancel()
	select {
	case <-b.done:
	case <-time.After(5 * time.Second):
	}
}

// Status implements WASMSource.
func (b *Builder) Status() WASMStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status
}

// Wait implements WASMSource.
func (b *Builder) Wait(r *http.Request) (string, string, error) {
	var ctx context.Context = context.Background()
	if r != nil {
		ctx = r.Context()
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return "", "", ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.wasm, b.execJS, b.err
}

// build returns the engine: the one embedded in the binary (package
// wasmdist) when there are no sources and go command to build from, or
// when the sources here are those it was built from; otherwise (a
// checkout with changes) a build of the sources, cached.
func build(ctx context.Context, log io.Writer) (wasm, execJS string, st WASMStatus, err error) {
	fail := func(err error) (string, string, WASMStatus, error) {
		return "", "", WASMStatus{State: "unavailable", Reason: err.Error()}, err
	}
	gz, embeddedJS, info, embedded := wasmdist.Embedded()
	useEmbedded := func() (string, string, WASMStatus, error) {
		wasm, execJS, size, err := extractEmbedded(gz, embeddedJS, info)
		if err != nil {
			return fail(err)
		}
		return wasm, execJS, WASMStatus{State: "ready", GoVersion: info.GoVersion, Size: size, Origin: "embedded"}, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		if embedded {
			return useEmbedded()
		}
		return fail(err)
	}
	gocmd, err := goCommand()
	if err != nil {
		if embedded {
			return useEmbedded()
		}
		return fail(err)
	}
	if embedded {
		if h, err := wasmdist.SourceHash(gocmd, root, ""); err == nil && h == info.SourceHash {
			return useEmbedded() // the sources here are the embedded engine's
		}
	}
	env, err := exec.Command(gocmd, "env", "GOVERSION", "GOROOT").Output()
	if err != nil {
		return fail(fmt.Errorf("%s env: %w", gocmd, err))
	}
	lines := strings.Split(strings.TrimSpace(string(env)), "\n")
	if len(lines) < 2 {
		return fail(fmt.Errorf("%s env: unexpected output %q", gocmd, env))
	}
	goVersion, goroot := strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1])
	key, err := wasmdist.SourceHash(gocmd, root, goVersion+"\x00"+os.Getenv("GOFLAGS"))
	if err != nil {
		return fail(err)
	}
	cache, err := cacheDir()
	if err != nil {
		return fail(err)
	}
	dir := filepath.Join(cache, key)
	wasm, execJS = filepath.Join(dir, "segkit.wasm"), filepath.Join(dir, "wasm_exec.js")
	ready := func() (string, string, WASMStatus, error) {
		fi, err := os.Stat(wasm)
		if err != nil {
			return fail(err)
		}
		return wasm, execJS, WASMStatus{State: "ready", GoVersion: goVersion, Size: fi.Size(), Origin: "built"}, nil
	}
	if _, err := os.Stat(execJS); err == nil {
		return ready()
	}
	fmt.Fprintf(log, "segviz: building the WASM engine for dropped files with %s (first run of this version only) ...\n", goVersion)
	start := time.Now()
	tmp, err := os.MkdirTemp(cache, key+".tmp-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, gocmd, "build", "-trimpath", "-o", filepath.Join(tmp, "segkit.wasm"), "./wasm")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fail(fmt.Errorf("GOOS=js GOARCH=wasm go build ./wasm in %s: %v: %s", root, err, strings.TrimSpace(out.String())))
	}
	js, err := os.ReadFile(filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		if js, err = os.ReadFile(filepath.Join(goroot, "misc", "wasm", "wasm_exec.js")); err != nil {
			return fail(fmt.Errorf("wasm_exec.js of %s: %w", goVersion, err))
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "wasm_exec.js"), js, 0o644); err != nil {
		return fail(err)
	}
	if err := gzipFile(filepath.Join(tmp, "segkit.wasm")); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another segviz built it at the same time: use theirs.
		if _, serr := os.Stat(execJS); serr != nil {
			return fail(err)
		}
	}
	fmt.Fprintf(log, "segviz: WASM engine built in %s, cached in %s\n", time.Since(start).Round(100*time.Millisecond), dir)
	prune(cache, key)
	return ready()
}

// ModuleRoot finds the source directory of module github.com/segkit/segkit:
// $SEGKIT_SRC, else the directory this file was compiled from (recorded in
// the binary unless it was built with -trimpath), else the working
// directory or one of its parents.
func ModuleRoot() (string, error) {
	var tried []string
	try := func(dir string) bool {
		if dir == "" {
			return false
		}
		tried = append(tried, dir)
		return isModuleRoot(dir)
	}
	if d := os.Getenv(EnvSource); d != "" {
		if try(d) {
			return d, nil
		}
		return "", fmt.Errorf("$%s=%s does not hold the %s sources (go.mod and wasm/)", EnvSource, d, ModulePath)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		if d := filepath.Dir(filepath.Dir(filepath.Dir(file))); try(d) {
			return d, nil
		}
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if try(d) {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", fmt.Errorf("the %s sources are not here (looked in %s); run segviz from a clone with `go run ./cmd/segviz`, or set $%s", ModulePath, strings.Join(tried, ", "), EnvSource)
}

func isModuleRoot(dir string) bool {
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	found := false
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == ModulePath {
			found = true
			break
		}
	}
	if !found {
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, "wasm"))
	return err == nil && fi.IsDir()
}

// goCommand finds the go command: on PATH, else in $GOROOT/bin.
func goCommand() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	root := os.Getenv("GOROOT")
	if root == "" {
		return "", errors.New("the go command is not on PATH (nor GOROOT set): it builds the WASM engine")
	}
	p := filepath.Join(root, "bin", "go")
	if runtime.GOOS == "windows" {
		p += ".exe"
	}
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", errors.New("the go command is not on PATH: it builds the WASM engine")
}

// extractEmbedded writes the embedded engine into the cache (or a
// temporary directory when the cache cannot be written), once per build
// embedded: the handler serves files, segkit.wasm.gz to a browser that
// takes gzip.
func extractEmbedded(gz, js []byte, info wasmdist.Info) (wasm, execJS string, size int64, err error) {
	raw, err := gunzip(gz)
	if err != nil {
		return "", "", 0, fmt.Errorf("the embedded WASM engine: %w", err)
	}
	cache, err := cacheDir()
	if err != nil {
		if cache, err = os.MkdirTemp("", "segviz-wasm-"); err != nil {
			return "", "", 0, err
		}
	}
	dir := filepath.Join(cache, "embedded-"+info.SourceHash+"-"+info.GoVersion)
	wasm, execJS = filepath.Join(dir, "segkit.wasm"), filepath.Join(dir, "wasm_exec.js")
	if fi, err := os.Stat(wasm); err == nil && fi.Size() == int64(len(raw)) {
		if _, err := os.Stat(execJS); err == nil {
			return wasm, execJS, fi.Size(), nil
		}
	}
	tmp, err := os.MkdirTemp(cache, "embedded.tmp-")
	if err != nil {
		return "", "", 0, err
	}
	defer os.RemoveAll(tmp)
	for name, b := range map[string][]byte{"segkit.wasm": raw, "segkit.wasm.gz": gz, "wasm_exec.js": js} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return "", "", 0, err
		}
	}
	os.RemoveAll(dir) // a partial extraction of an earlier run
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(execJS); serr != nil {
			return "", "", 0, err
		}
	}
	return wasm, execJS, int64(len(raw)), nil
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// gzipFile writes name.gz beside name.
func gzipFile(name string) error {
	raw, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(name+".gz", buf.Bytes(), 0o644)
}

// keepBuilds is how many builds the cache keeps (the newest).
const keepBuilds = 4

// prune removes all but the newest builds from the cache, and temporary
// directories of builds that did not finish.
func prune(cache, keep string) {
	entries, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	type build struct {
		name string
		mod  time.Time
	}
	var builds []build
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !e.IsDir() || e.Name() == keep {
			continue
		}
		if strings.Contains(e.Name(), ".tmp-") {
			if time.Since(info.ModTime()) > time.Hour {
				os.RemoveAll(filepath.Join(cache, e.Name()))
			}
			continue
		}
		builds = append(builds, build{e.Name(), info.ModTime()})
	}
	sort.Slice(builds, func(i, j int) bool { return builds[i].mod.After(builds[j].mod) })
	for i, b := range builds {
		if i >= keepBuilds-1 {
			os.RemoveAll(filepath.Join(cache, b.name))
		}
	}
}

func cacheDir() (string, error) {
	if d := os.Getenv(EnvCache); d != "" {
		return d, os.MkdirAll(d, 0o755)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	d := filepath.Join(base, "segkit", "segviz-wasm")
	return d, os.MkdirAll(d, 0o755)
}
