package tinymod

import "testing"

// FuzzTinyPass never fails.
func FuzzTinyPass(f *testing.F) {
	f.Add([]byte("a"))
	f.Fuzz(func(t *testing.T, b []byte) {})
}

// FuzzTinyFail fails on inputs starting "xyz!", which the engine finds in
// a second or two.
func FuzzTinyFail(f *testing.F) {
	f.Add([]byte("a"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 3 && b[0] == 'x' && b[1] == 'y' && b[2] == 'z' && b[3] == '!' {
			t.Fatalf("found it")
		}
	})
}
