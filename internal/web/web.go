package web

import (
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/segkit/segkit/internal/viz"
	"github.com/segkit/segkit/vfs"
)

//go:embed static
var staticFS embed.FS

// Static returns the page's files (index.html, app.js, style.css, ...).
func Static() fs.FS {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err)
	}
	return sub
}

// Config configures a Handler.
type Config struct {
	// Session answers the API. Its filesystem is also what /files/ serves.
	Session *viz.Session
	// WASM provides the engine for dropped files; nil disables it.
	WASM WASMSource
	// AllowedHosts are the host names and IP addresses, besides the
	// loopback names (localhost, 127.0.0.0/8, [::1]), that a request's
	// Host header may name: the address the server listens on and the
	// names given with --allow-host. Every other Host gets 421 Misdirected
	// Request, whatever address the server listens on, so that a web page
	// elsewhere cannot read the files through DNS rebinding. Names are
	// compared without the port and case-insensitively; a wildcard
	// address (0.0.0.0, [::]) adds nothing.
	AllowedHosts []string
	// Limits bound the decode and verify work in flight.
	Limits Limits
	// Timeouts bound the connections of the server NewServer returns.
	Timeouts Timeouts
	// Extra are more endpoints, by ServeMux pattern (segviz serve's
	// /api/lake), served behind the same rules as the rest: GET and HEAD
	// only, the Host allow-list, the security headers. A pattern more
	// specific than the API's /api/{method} takes its path.
	Extra map[string]http.Handler
}

// Limits bound the decode and verify work of the API (every method but
// partitions and progress, which only list names and counters). A request
// runs when fewer than the effective in-flight limit — the smaller of
// MaxInFlight and MemoryBudget/RequestCost, at least one — are running;
// otherwise it waits, if fewer than MaxQueued are waiting, for at most
// QueueWait; otherwise, or after the wait, it gets 503 Service Unavailable
// with Retry-After, instead of queueing without bound. A zero field takes
// its default.
type Limits struct {
	// MaxInFlight is how many requests decode at once; default
	// runtime.GOMAXPROCS(0), the cores the process may use.
	MaxInFlight int
	// MemoryBudget is how many bytes the requests in flight may hold
	// together, each counted at RequestCost; default DefaultMemoryBudget.
	MemoryBudget int64
	// RequestCost is what one request is counted at: the most it can
	// hold; default viz.MaxDecompressed (one batch decompressed up to the
	// viewer's limit) plus DefaultResponseCost (the decoder's state and
	// the JSON answer).
	RequestCost int64
	// MaxQueued is how many requests may wait for a slot; default four
	// times the in-flight limit; negative: none wait.
	MaxQueued int
	// QueueWait is how long a request waits for a slot; default
	// DefaultQueueWait.
	QueueWait time.Duration
}

// Defaults of Limits.
const (
	// DefaultMemoryBudget is 256 MiB: with the default RequestCost
	// (64 MiB + 32 MiB), two requests decode at once, whatever the cores.
	DefaultMemoryBudget = 256 << 20
	// DefaultResponseCost is the part of RequestCost beyond the
	// decompressed batch: 32 MiB.
	DefaultResponseCost = 32 << 20
	// DefaultQueueWait is 5 s.
	DefaultQueueWait = 5 * time.Second
	// RetryAfter is the Retry-After, in seconds, of a 503 answer.
	RetryAfter = 1
)

// Timeouts of the server NewServer returns. A zero field takes its default.
type Timeouts struct {
	// ReadHeader bounds the reading of a request's headers (slow clients
	// holding connections); default 10 s.
	ReadHeader time.Duration
	// Idle closes a keep-alive connection idle that long; default 60 s.
	Idle time.Duration
	// MaxHeaderBytes bounds a request's headers; default 64 KiB (the
	// page's requests send well under 2 KiB; net/http's default is 1 MiB).
	MaxHeaderBytes int
}

// Defaults of Timeouts.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
)

// NewServer returns an http.Server for the handler of cfg, with cfg's
// Timeouts (or their defaults) set: ReadHeaderTimeout, IdleTimeout and
// MaxHeaderBytes.
func NewServer(cfg Config) *http.Server {
	t := cfg.Timeouts
	return &http.Server{
		Handler:           NewHandler(cfg),
		ReadHeaderTimeout: cmp.Or(t.ReadHeader, DefaultReadHeaderTimeout),
		IdleTimeout:       cmp.Or(t.Idle, DefaultIdleTimeout),
		MaxHeaderBytes:    cmp.Or(t.MaxHeaderBytes, DefaultMaxHeaderBytes),
	}
}

// WASMSource provides the WASM build of the engine.
type WASMSource interface {
	// Status says whether the build is ready.
	Status() WASMStatus
	// Wait waits (at most until the request ends) for the build and
	// returns the paths of the .wasm and of the wasm_exec.js that goes
	// with it.
	Wait(r *http.Request) (wasm, execJS string, err error)
}

// WASMStatus is the answer of /wasm/status.
type WASMStatus struct {
	// State is "ready", "building" or "unavailable".
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// GoVersion is the version of Go that builds it.
	GoVersion string `json:"goVersion,omitempty"`
	Size      int64  `json:"size,omitempty"`
	// Origin is "embedded" (the engine in the binary, package wasmdist)
	// or "built" (built from the sources here, which differ from it).
	Origin string `json:"origin,omitempty"`
}

// Handler serves the page, the API and the files.
type Handler struct {
	cfg    Config
	mux    *http.ServeMux
	static fs.FS
	hosts  map[string]bool // AllowedHosts, lower case
	work   *limiter
}

// NewHandler returns the handler of cfg.
func NewHandler(cfg Config) *Handler {
	h := &Handler{cfg: cfg, mux: http.NewServeMux(), static: Static(), hosts: map[string]bool{}, work: newLimiter(cfg.Limits)}
	for _, name := range cfg.AllowedHosts {
		if name = hostName(name); name != "" && !isWildcard(name) {
			h.hosts[name] = true
		}
	}
	h.mux.HandleFunc("/{$}", h.index)
	h.mux.HandleFunc("/static/", h.staticFile)
	h.mux.HandleFunc("/api/{method}", h.api)
	h.mux.HandleFunc("/files/", h.file)
	h.mux.HandleFunc("/wasm/status", h.wasmStatus)
	h.mux.HandleFunc("/wasm/segkit.wasm", h.wasmFile)
	h.mux.HandleFunc("/wasm/wasm_exec.js", h.wasmFile)
	for pattern, x := range cfg.Extra {
		h.mux.Handle(pattern, x)
	}
	return h
}

// contentSecurityPolicy lets the page run its own scripts and the WASM
// engine, and nothing else.
const contentSecurityPolicy = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "segviz serves read-only: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	if !h.allowedHost(r.Host) {
		http.Error(w, "segviz answers only requests for localhost, a loopback address, the address it listens on, or a name given with --allow-host", http.StatusMisdirectedRequest)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// allowedHost reports whether a Host header names the local machine or one
// of the allowed hosts.
func (h *Handler) allowedHost(host string) bool {
	host = hostName(host)
	if host == "localhost" || h.hosts[host] {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostName is the host of a Host header or host[:port], lower case,
// without the port or the brackets of an IPv6 address.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
}

// isWildcard reports an unspecified address (0.0.0.0, ::), which no Host
// header should name.
func isWildcard(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	h.serveStatic(w, r, "index.html")
}

func (h *Handler) staticFile(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/static/")
	if name == "" || name == "index.html" || !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	h.serveStatic(w, r, name)
}

func (h *Handler) serveStatic(w http.ResponseWriter, r *http.Request, name string) {
	data, err := fs.ReadFile(h.static, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", contentType(name))
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, time.Time{}, strings.NewReader(string(data)))
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".wasm":
		return "application/wasm"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// api runs a viz method.
func (h *Handler) api(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	method := r.PathValue("method")
	if h.cfg.Session == nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "no partition is served"})
		return
	}
	if method != "partitions" && method != "progress" && method != "cancel" {
		release, err := h.work.acquire(r.Context())
		if err != nil {
			w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
			return
		}
		defer release()
	}
	res, err := h.cfg.Session.Dispatch(method, viz.ParamsFromQuery(r.URL.Query()))
	if err != nil {
		writeJSON(w, errorStatus(err), map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// errorStatus maps an engine error to an HTTP status.
func errorStatus(err error) int {
	switch {
	case errors.Is(err, viz.ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, viz.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return http.StatusNotFound
	case errors.Is(err, viz.ErrCancelled):
		return http.StatusConflict // the page asked for it: not a server error
	case errors.Is(err, fs.ErrPermission), isEscape(err), errors.Is(err, vfs.ErrNotRegular):
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

// isEscape reports an os.Root refusal of a path that leaves the root.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// file serves a file of the session's filesystem, read-only, with Range
// support. Directories are not listed (the API lists partitions).
func (h *Handler) file(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Session == nil {
		http.NotFound(w, r)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/files/")
	clean := path.Clean("/" + name)[1:]
	if name == "" || clean == "" || strings.Contains(name, "\\") || strings.Contains(name, "\x00") || hasDotDot(name) || !fs.ValidPath(clean) {
		http.Error(w, "bad path", http.StatusBadRequest)
		return
	}
	fsys := h.cfg.Session.FS()
	f, err := fsys.Open(clean)
	if err != nil {
		msg := http.StatusText(errorStatus(err))
		if errors.Is(err, vfs.ErrNotRegular) {
			msg = err.Error() // a FIFO, a device: say which, as the API does
		}
		http.Error(w, msg, errorStatus(err))
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if !st.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", path.Base(clean)))
	http.ServeContent(w, r, "", st.ModTime(), f)
}

func hasDotDot(name string) bool {
	for _, p := range strings.Split(name, "/") {
		if p == ".." {
			return true
		}
	}
	return false
}

func (h *Handler) wasmStatus(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if h.cfg.WASM == nil {
		writeJSON(w, http.StatusOK, WASMStatus{State: "unavailable", Reason: "segviz was started with --wasm=off"})
		return
	}
	writeJSON(w, http.StatusOK, h.cfg.WASM.Status())
}

func (h *Handler) wasmFile(w http.ResponseWriter, r *http.Request) {
	if h.cfg.WASM == nil {
		http.Error(w, "the WASM engine is off (--wasm=off)", http.StatusServiceUnavailable)
		return
	}
	wasmPath, execJS, err := h.cfg.WASM.Wait(r)
	if err != nil {
		http.Error(w, "the WASM engine is unavailable: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	p := wasmPath
	if strings.HasSuffix(r.URL.Path, ".js") {
		p = execJS
	}
	typ := contentType(p)
	// The engine is 9 MB, 2.5 MB gzipped: a browser that takes gzip gets
	// the .gz beside it, as it is.
	if p == wasmPath && acceptsGzip(r) {
		if _, err := os.Stat(p + ".gz"); err == nil {
			p += ".gz"
			w.Header().Set("Content-Encoding", "gzip")
		}
	}
	w.Header().Add("Vary", "Accept-Encoding")
	f, err := os.Open(p)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", typ)
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", st.ModTime(), f)
}

// acceptsGzip reports whether the request's Accept-Encoding takes gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// OpenRoot returns a read-only filesystem of the tree under dir that never
// leaves it: names with "..", and symbolic links pointing outside, are
// refused (os.Root), every mutating call fails, and a FIFO, a device or a
// socket is refused without blocking the request that opens it
// (vfs.FromRoot): a FIFO named like a segment would otherwise hold the
// request, and the session's lock, until a writer came. Close the returned
// *os.Root when done.
func OpenRoot(dir string) (vfs.FS, *os.Root, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	return vfs.FromRoot(root), root, nil
}
