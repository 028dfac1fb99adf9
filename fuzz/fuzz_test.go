package fuzz

import "testing"

// FuzzLogOps runs an operation sequence decoded from the input against the
// log engine on a crash-aware in-memory disk and against a reference model,
// checking the invariants after every step (doc.go).
func FuzzLogOps(f *testing.F) {
	for _, p := range edgePrograms() {
		f.Add(p.encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runLogOps(t, data)
	})
}
