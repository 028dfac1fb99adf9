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
// links that leave it). A server bound to loopback answers only requests
// whose Host is a loopback name, so that a web page elsewhere cannot reach
// it through DNS rebinding.
package web
