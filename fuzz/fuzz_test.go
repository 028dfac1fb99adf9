package fuzz

import (
	"fmt"
	"testing"
	"time"
)

// hangLimit bounds one input's run. A panic from another goroutine kills
// the fuzzing worker, and the fuzzing engine then records the input it was
// running as a crasher, so a hang (RELIABILITY I5) becomes a reproducer.
const hangLimit = 20 * time.Second

func watchdog(target string, data []byte) (stop func() bool) {
	t := time.AfterFunc(hangLimit, func() {
		panic(fmt.Sprintf("%s: input still running after %v (a hang): %x", target, hangLimit, data))
	})
	return t.Stop
}

// FuzzLogOps runs an operation sequence decoded from the input against the
// log engine on a crash-aware in-memory disk and against a reference model,
// checking the invariants after every step (doc.go).
func FuzzLogOps(f *testing.F) {
	for _, p := range edgePrograms() {
		f.Add(p.encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer watchdog("FuzzLogOps", data)()
		runLogOps(t, data)
	})
}

// FuzzDumpJSON runs the `segviz dump` engine (internal/dumplog) with JSON
// output on a random .log or index file: it never panics, never fails on
// bytes it can read, and prints only valid JSON lines of the documented
// types, consistent with the result it returns.
func FuzzDumpJSON(f *testing.F) {
	for _, s := range edgeDumps() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer watchdog("FuzzDumpJSON", data)()
		runDumpJSON(t, data)
	})
}

// FuzzRecoverCorrupt damages a valid partition (generated, or real files
// from a broker) with a recipe of byte flips, truncations, zeroed blocks,
// garbage, deleted files and junk leftovers (RELIABILITY F1-F10), then
// checks that inspect.Verify reports the damage, that kafkalog.Open recovers
// or fails with a typed error, that nothing but original records is ever
// served, and that repair.Salvage keeps at least what recovery keeps.
func FuzzRecoverCorrupt(f *testing.F) {
	for _, c := range edgeRecoverCases() {
		f.Add(c.encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer watchdog("FuzzRecoverCorrupt", data)()
		runRecoverCorrupt(t, data)
	})
}
