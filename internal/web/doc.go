// Package web is the HTTP side of segviz's visualiser: the page (static
// files embedded in the binary), the JSON API through which the page asks
// the native engine (package viz) about the served partitions, read-only
// access to the served files, and the WASM build of the engine that parses
// files dropped on the page in the browser.
//
// # Routes
//
//	GET /                      the page
//	GET /static/NAME           its scripts and styles
//	GET /api/METHOD?PARAMS     viz.Session.Dispatch(METHOD, PARAMS) as JSON
//	GET /files/PATH            a served file's bytes (Range requests work)
//	GET /wasm/status           whether the WASM engine is ready, and why not
//	GET /wasm/segkit.wasm      the engine, application/wasm
//	GET /wasm/wasm_exec.js     Go's support script of the same Go version
//
// Everything is read-only: other methods get 405. Paths are resolved inside
// the served root only (OpenRoot refuses "..", absolute names and symbolic
// links that leave it). A FIFO, a device or a socket named like a
// partition's file is refused without being read (403, the error naming
// it), so that no request waits on a FIFO for a writer. Whatever address the server listens on, it answers
// only requests whose Host is a loopback name, the listening address or a
// name in Config.AllowedHosts (421 Misdirected Request otherwise), so that
// a web page elsewhere cannot reach it through DNS rebinding.
//
// # Limits
//
// API methods that decode or verify (all but partitions and progress) go
// through a limiter (Config.Limits): at most runtime.GOMAXPROCS(0) at once
// and no more than fit DefaultMemoryBudget (256 MiB) at the most one
// request can hold (a batch decompressed to viz.MaxDecompressed, plus
// DefaultResponseCost); a few more wait, briefly; the rest get 503 with
// Retry-After. NewServer sets ReadHeaderTimeout, IdleTimeout and
// MaxHeaderBytes (Config.Timeouts; DefaultReadHeaderTimeout,
// DefaultIdleTimeout, DefaultMaxHeaderBytes).
package web
