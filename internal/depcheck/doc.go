// Package depcheck holds the test that keeps segkit's dependencies in
// check: the core module requires only the modules its design allows, and
// the library packages pull nothing into a GOOS=js build that a browser
// cannot run (net/http, os/exec, runtime/pprof).
package depcheck
