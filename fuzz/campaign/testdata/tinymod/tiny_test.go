package tinymod

import "testing"

// FuzzTinyPass never fails.
func FuzzTinyPass(f *testing.F) {
	f.Add([]byte("a"))
	f.Fuzz(func(t *testing.T, b []byte) {})
}

// FuzzTinyFail fails on inputs longer than its seed "xyz" that start with
// it: any byte the engine appends or inserts at the end finds it, within
// the first mutations even on a loaded machine ("xyz!" from a seed "a" took
// longer than the test's 2 s in CI runs on two busy cores).
func FuzzTinyFail(f *testing.F) {
	f.Add([]byte("xyz"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 3 && b[0] == 'x' && b[1] == 'y' && b[2] == 'z' {
			t.Fatalf("found it")
		}
	})
}
