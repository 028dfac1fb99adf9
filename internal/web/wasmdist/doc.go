// Package wasmdist holds the WASM build of the engine that segviz embeds,
// so that its drop-a-folder mode works in a binary installed with
// `go install` or copied to a machine without Go: segkit.wasm.gz (the
// gzip of `GOOS=js GOARCH=wasm go build -trimpath -buildvcs=false
// -ldflags=-s ./wasm`), the wasm_exec.js of the Go that built it, and
// SOURCE, which names the sources it was built from (SourceHash) and that
// Go's version.
//
// The files are generated and checked in:
//
//	go generate ./internal/web/wasmdist
//
// rebuilds them, reproducibly (the same sources and Go version give the
// same bytes: -trimpath, no VCS stamp, no GOFLAGS, gzip without a name or
// time). CI regenerates them and fails when the result differs from what
// is checked in, so that main always embeds the engine of its own
// sources; TestEmbeddedIsCurrent says so sooner. Regenerate once before a
// change lands, not at every commit: each regeneration adds about 2.5 MB
// to the repository's history.
package wasmdist
