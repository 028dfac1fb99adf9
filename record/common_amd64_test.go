//go:build amd64 && !purego

package record

// withoutZMM runs f with the assembly's AVX-512 moves turned off, so that
// a machine that has them tests the 16-byte moves too.
func withoutZMM(f func()) {
	old := useZMMCopy
	useZMMCopy = false
	defer func() { useZMMCopy = old }()
	f()
}
