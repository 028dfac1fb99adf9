//go:build !amd64 || purego

package record

// withoutZMM runs f: there are no AVX-512 moves to turn off here.
func withoutZMM(f func()) { f() }
