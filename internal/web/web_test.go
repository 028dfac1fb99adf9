package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/internal/demo"
	"github.com/segkit/segkit/internal/viz"
)

const secret = "TOP SECRET: outside the served root"

// fixture exports the demo into root/served (a log directory served
// read-only), with a secret beside it and links that try to leave.
func fixture(t *testing.T) (root, served string) {
	t.Helper()
	root = t.TempDir()
	served = filepath.Join(root, "served")
	d, err := demo.Get()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Export(served); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "secret.txt"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "outside-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "outside-0", "00000000000000000000.log"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"escape.txt":      filepath.Join(root, "secret.txt"),
		"relative.txt":    "../secret.txt",
		"escape-dir":      filepath.Join(root, "outside-0"),
		"alias-log-start": "kafka-logs/log-start-offset-checkpoint",
	} {
		if err := os.Symlink(target, filepath.Join(served, name)); err != nil {
			t.Skipf("symbolic links: %v", err)
		}
	}
	return root, served
}

// treeHash hashes names, sizes, modes, times and contents under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %v %d\n", p, fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

type fakeWASM struct {
	status     WASMStatus
	wasm, exec string
	err        error
}

func (f *fakeWASM) Status() WASMStatus { return f.status }
func (f *fakeWASM) Wait(*http.Request) (string, string, error) {
	return f.wasm, f.exec, f.err
}

func newServer(t *testing.T, served string, w WASMSource) *Handler {
	t.Helper()
	fsys, root, err := OpenRoot(served)
	if err != nil {
		t.Fatal(err)
	}
	sess := viz.NewSession(fsys, viz.Options{Name: "served"})
	t.Cleanup(func() { sess.Close(); root.Close() })
	return NewHandler(Config{Session: sess, WASM: w})
}

func get(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	r.Host = "127.0.0.1:8080"
	for k, v := range hdr {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestPageAndHeaders(t *testing.T) {
	_, served := fixture(t)
	h := newServer(t, served, nil)
	for _, tc := range []struct {
		path, ctype string
	}{
		{"/", "text/html; charset=utf-8"},
		{"/static/app.js", "text/javascript; charset=utf-8"},
		{"/static/style.css", "text/css; charset=utf-8"},
		{"/api/partitions", "application/json; charset=utf-8"},
		{"/wasm/status", "application/json; charset=utf-8"},
	} {
		w := get(t, h, "GET", tc.path, nil)
		if w.Code != 200 || w.Header().Get("Content-Type") != tc.ctype {
			t.Errorf("%s: %d %q", tc.path, w.Code, w.Header().Get("Content-Type"))
		}
		if w.Header().Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(w.Header().Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("%s: security headers %v", tc.path, w.Header())
		}
	}
	for _, p := range []string{"/static/", "/static/index.html", "/static/nope.js", "/nope"} {
		if w := get(t, h, "GET", p, nil); w.Code != 404 {
			t.Errorf("%s: %d", p, w.Code)
		}
	}
	// Every static file the page loads is embedded.
	page := get(t, h, "GET", "/", nil).Body.String()
	for _, name := range []string{"app.js", "style.css"} {
		if !strings.Contains(page, "/static/"+name) {
			t.Errorf("index.html does not load %s", name)
		}
	}
	for _, name := range []string{"app.js", "engine.js", "util.js", "segment.js", "plots.js", "retention.js", "verify.js"} {
		if w := get(t, h, "GET", "/static/"+name, nil); w.Code != 200 || w.Body.Len() == 0 {
			t.Errorf("/static/%s: %d", name, w.Code)
		}
	}
}

func TestReadOnlyAndLoopback(t *testing.T) {
	_, served := fixture(t)
	h := newServer(t, served, nil)
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		w := get(t, h, m, "/api/partitions", nil)
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d", m, w.Code)
		}
	}
	if w := get(t, h, "HEAD", "/", nil); w.Code != 200 {
		t.Errorf("HEAD: %d", w.Code)
	}
	for host, want := range map[string]int{
		"evil.example:8080": 421, "127.0.0.1.nip.io": 421, "10.0.0.1:80": 421, "0.0.0.0:8080": 421, "": 421,
		"localhost:1234": 200, "LOCALHOST": 200, "127.0.0.1": 200, "[::1]:9": 200, "127.1.2.3:5": 200,
	} {
		if w := get(t, h, "GET", "/api/partitions", map[string]string{"Host": host}); w.Code != want {
			t.Errorf("Host %s: %d, want %d", host, w.Code, want)
		}
	}
}

// TestHostAllowList: whatever address the server listens on (a wildcard
// one too), only loopback names and the allowed hosts are answered; a
// rebinding page's Host gets 421 on every route.
func TestHostAllowList(t *testing.T) {
	_, served := fixture(t)
	h := newServer(t, served, nil)
	open := NewHandler(Config{Session: h.cfg.Session, AllowedHosts: []string{"0.0.0.0", "192.0.2.7", "Kafka1.Example.com", "[2001:db8::1]:8080"}})
	for host, want := range map[string]int{
		"evil.example": 421, "evil.example:8080": 421, "0.0.0.0:8080": 421, "192.0.2.8": 421, "kafka1.example.com.evil": 421,
		"192.0.2.7:8080": 200, "kafka1.example.com": 200, "KAFKA1.EXAMPLE.COM:1": 200, "[2001:db8::1]:80": 200, "localhost": 200, "[::1]": 200,
	} {
		for _, target := range []string{"/", "/api/partitions", "/api/partition?dir=kafka-logs/orders-0", "/files/kafka-logs/orders-1/00000000000000000000.log", "/static/app.js"} {
			if w := get(t, open, "GET", target, map[string]string{"Host": host}); (w.Code == http.StatusMisdirectedRequest) != (want == 421) {
				t.Errorf("Host %s %s: %d, want %d", host, target, w.Code, want)
			}
		}
	}
}

func TestAPI(t *testing.T) {
	_, served := fixture(t)
	before := treeHash(t, served)
	h := newServer(t, served, nil)
	var ps viz.PartitionsJSON
	if err := json.Unmarshal(get(t, h, "GET", "/api/partitions", nil).Body.Bytes(), &ps); err != nil {
		t.Fatal(err)
	}
	if len(ps.Partitions) != 2 || ps.Partitions[0].Dir != "kafka-logs/orders-0" {
		t.Fatalf("partitions %+v", ps.Partitions)
	}
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/api/partition?dir=kafka-logs/orders-0", 200},
		{"/api/scan?dir=kafka-logs/orders-0&base=378", 200},
		{"/api/batches?dir=kafka-logs/orders-0&base=378&limit=3", 200},
		{"/api/records?dir=kafka-logs/orders-0&base=378&position=0", 200},
		{"/api/layout?dir=kafka-logs/orders-0&base=378&position=0", 200},
		{"/api/index?dir=kafka-logs/orders-0&base=378&kind=time&check=1", 200},
		{"/api/retention?dir=kafka-logs/orders-0&retention.ms=86400000&now=1772442000000", 200},
		{"/api/verify?dir=kafka-logs/orders-1", 200},
		{"/api/progress?dir=kafka-logs/orders-1", 200},
		{"/api/locate?dir=kafka-logs/orders-0&offset=1000", 200},
		{"/api/bytes?dir=kafka-logs&file=log-start-offset-checkpoint", 200},
		{"/api/nope", 400},
		{"/api/partition", 400},
		{"/api/partition?dir=kafka-logs/nope-0", 404},
		{"/api/scan?dir=kafka-logs/orders-0&base=1", 404},
		{"/api/scan?dir=kafka-logs/orders-0&base=x", 400},
		{"/api/retention?dir=kafka-logs/orders-0&retention.ms=-9", 400},
	} {
		w := get(t, h, "GET", tc.path, nil)
		if w.Code != tc.code {
			t.Errorf("%s: %d, want %d: %s", tc.path, w.Code, tc.code, w.Body)
		}
		if w.Code != 200 {
			var e map[string]string
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e["error"] == "" {
				t.Errorf("%s: error body %q", tc.path, w.Body)
			}
		}
	}
	if after := treeHash(t, served); after != before {
		t.Error("the served directory changed")
	}
}

// TestNoEscape tries to read outside the served root through every route
// that takes a path: "..", absolute names, encoded dots, and symbolic links.
func TestNoEscape(t *testing.T) {
	_, served := fixture(t)
	before := treeHash(t, served)
	h := newServer(t, served, nil)
	for _, p := range []string{
		"/files/../secret.txt",
		"/files/%2e%2e/secret.txt",
		"/files/kafka-logs/../../secret.txt",
		"/files//etc/passwd",
		"/files/escape.txt",
		"/files/relative.txt",
		"/files/escape-dir/00000000000000000000.log",
		"/files/kafka-logs",
		"/files/",
		"/api/partition?dir=..",
		"/api/partition?dir=../outside-0",
		"/api/partition?dir=/",
		"/api/partition?dir=escape-dir",
		"/api/partitions?dir=..",
		"/api/bytes?dir=.&file=escape.txt",
		"/api/bytes?dir=.&file=relative.txt",
		"/api/bytes?dir=..&file=secret.txt",
		"/api/bytes?dir=.&file=../secret.txt",
		"/api/bytes?dir=escape-dir&file=00000000000000000000.log",
		"/api/scan?dir=escape-dir&base=0",
		"/api/layout?dir=kafka-logs/orders-0&base=378&position=0&suffix=/../../../secret.txt",
	} {
		w := get(t, h, "GET", p, nil)
		body := w.Body.String()
		if strings.Contains(body, "TOP SECRET") || strings.Contains(body, base64Secret()) {
			t.Errorf("%s: %d leaks the secret", p, w.Code)
		}
		if strings.HasPrefix(p, "/files/") && w.Code == 200 {
			t.Errorf("%s: 200", p)
		}
		if strings.Contains(p, "escape") && w.Code == 200 && !strings.HasPrefix(p, "/api/partitions") {
			t.Errorf("%s: 200 through a link that leaves the root: %s", p, body)
		}
	}
	// A link inside the root is followed.
	if w := get(t, h, "GET", "/files/alias-log-start", nil); w.Code != 200 || w.Body.Len() == 0 {
		t.Errorf("link inside the root: %d", w.Code)
	}
	// Files: read-only, octet-stream, ranges.
	w := get(t, h, "GET", "/files/kafka-logs/orders-0/00000000000000000378.log", map[string]string{"Range": "bytes=0-11"})
	if w.Code != http.StatusPartialContent || w.Body.Len() != 12 || w.Header().Get("Content-Type") != "application/octet-stream" {
		t.Errorf("range: %d %d %q", w.Code, w.Body.Len(), w.Header().Get("Content-Type"))
	}
	if after := treeHash(t, served); after != before {
		t.Error("the served directory changed")
	}
}

func base64Secret() string {
	// The bytes API returns base64; the secret's start encodes as this.
	return "VE9QIFNFQ1JFVD"
}

func TestWASMRoutes(t *testing.T) {
	_, served := fixture(t)
	dir := t.TempDir()
	wasm, execJS := filepath.Join(dir, "segkit.wasm"), filepath.Join(dir, "wasm_exec.js")
	os.WriteFile(wasm, []byte("\x00asm\x01\x00\x00\x00"), 0o644)
	os.WriteFile(execJS, []byte("// go"), 0o644)
	h := newServer(t, served, &fakeWASM{status: WASMStatus{State: "ready", GoVersion: "go1.x", Size: 8}, wasm: wasm, exec: execJS})
	if w := get(t, h, "GET", "/wasm/segkit.wasm", nil); w.Code != 200 || w.Header().Get("Content-Type") != "application/wasm" || w.Body.Len() != 8 {
		t.Errorf("wasm: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	if w := get(t, h, "GET", "/wasm/wasm_exec.js", nil); w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/javascript") {
		t.Errorf("wasm_exec.js: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	// With a .gz beside it, a browser that takes gzip gets that.
	os.WriteFile(wasm+".gz", []byte("gzipped"), 0o644)
	gw := get(t, h, "GET", "/wasm/segkit.wasm", map[string]string{"Accept-Encoding": "gzip, deflate, br"})
	if gw.Code != 200 || gw.Header().Get("Content-Encoding") != "gzip" || gw.Body.String() != "gzipped" || gw.Header().Get("Content-Type") != "application/wasm" {
		t.Errorf("gzip: %d %q %q %q", gw.Code, gw.Header().Get("Content-Encoding"), gw.Header().Get("Content-Type"), gw.Body.String())
	}
	if w := get(t, h, "GET", "/wasm/segkit.wasm", nil); w.Header().Get("Content-Encoding") != "" || w.Body.Len() != 8 {
		t.Errorf("without Accept-Encoding: %q, %d bytes", w.Header().Get("Content-Encoding"), w.Body.Len())
	}
	var st WASMStatus
	json.Unmarshal(get(t, h, "GET", "/wasm/status", nil).Body.Bytes(), &st)
	if st.State != "ready" {
		t.Errorf("status %+v", st)
	}
	down := newServer(t, served, &fakeWASM{status: WASMStatus{State: "unavailable", Reason: "no go command"}, err: io.ErrUnexpectedEOF})
	if w := get(t, down, "GET", "/wasm/segkit.wasm", nil); w.Code != 503 {
		t.Errorf("unavailable wasm: %d", w.Code)
	}
	json.Unmarshal(get(t, down, "GET", "/wasm/status", nil).Body.Bytes(), &st)
	if st.State != "unavailable" || st.Reason == "" {
		t.Errorf("status %+v", st)
	}
	off := newServer(t, served, nil)
	if w := get(t, off, "GET", "/wasm/segkit.wasm", nil); w.Code != 503 {
		t.Errorf("--wasm=off: %d", w.Code)
	}
}

func TestModuleRootAndEmbedded(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if !isModuleRoot(root) {
		t.Fatalf("%s is not the module root", root)
	}
	t.Setenv(EnvSource, t.TempDir())
	if _, err := ModuleRoot(); err == nil {
		t.Error("a directory without the sources is taken as the module root")
	}
	// Without the sources, the engine embedded in the binary is served.
	t.Setenv(EnvCache, t.TempDir())
	wasm, execJS, st, err := build(context.Background(), io.Discard)
	if err != nil || st.State != "ready" || st.Origin != "embedded" || st.Size < 1<<20 {
		t.Fatalf("build without sources: %v %+v", err, st)
	}
	b, err := os.ReadFile(wasm)
	if err != nil || !bytes.HasPrefix(b, []byte("\x00asm")) || int64(len(b)) != st.Size {
		t.Errorf("the embedded engine's %s: %d bytes, %v", wasm, len(b), err)
	}
	if _, err := os.Stat(wasm + ".gz"); err != nil {
		t.Error(err)
	}
	if js, err := os.ReadFile(execJS); err != nil || !bytes.Contains(js, []byte("globalThis.Go")) {
		t.Errorf("wasm_exec.js: %v", err)
	}
	// A second start finds it extracted.
	if w2, _, _, err := build(context.Background(), io.Discard); err != nil || w2 != wasm {
		t.Errorf("second build: %s %v", w2, err)
	}
}

func TestPrune(t *testing.T) {
	cache := t.TempDir()
	now := time.Now()
	for i, name := range []string{"keep", "a", "b", "c", "d", "e", "x.tmp-1", "y.tmp-2"} {
		p := filepath.Join(cache, name)
		os.Mkdir(p, 0o755)
		mt := now.Add(-time.Duration(i) * time.Minute)
		if name == "x.tmp-1" {
			mt = now.Add(-2 * time.Hour)
		}
		os.Chtimes(p, mt, mt)
	}
	prune(cache, "keep")
	entries, _ := os.ReadDir(cache)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{"a", "b", "c", "keep", "y.tmp-2"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}
