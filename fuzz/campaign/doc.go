// Command campaign runs fuzzing campaigns over every fuzz target of a Go
// module, one `go test -fuzz` at a time (the go command fuzzes one target
// per invocation), and reports per target the executions per second and
// the new corpus entries.
//
//	go run ./fuzz/campaign -time 10m                       every target, 10 minutes each
//	go run ./fuzz/campaign -time 60s -targets FuzzLogOps,FuzzDumpJSON
//	go run ./fuzz/campaign -time 2m -targets 'Recover|Retention' -parallel 2
//	go run ./fuzz/campaign -list                           the targets it finds
//
// Targets are found with `go list` (test files for the current GOOS and
// GOARCH, build constraints applied) and a parse of those files for
// functions func FuzzXxx(*testing.F); nothing is compiled to list them.
// Each target runs with
//
//	go test -run=^$ -fuzz=^Target$ -fuzztime=T -fuzzminimizetime=M -parallel=N pkg
//
// A failing target leaves its crasher where go test wrote it,
// pkg/testdata/fuzz/Target/<hash>, where a plain `go test` replays it; the
// runner prints the replay command and exits with status 1 at the end. A
// run that fails without writing a crasher (the engine's own "context
// deadline exceeded", go.dev/issue/75804) is retried once.
//
// On a small machine run one target at a time (-jobs 1, the default) with
// -parallel 1 or 2; -jobs N runs N targets at once.
package main
