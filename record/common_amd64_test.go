//go:build amd64 && !purego

package record

// eachCopy runs f with each way of copying values that the assembly has
// and the CPU can run (64-, 32- and 16-byte moves), so that a machine with
// AVX-512 tests all three; how names the way.
func eachCopy(f func(how string)) {
	zmm, ymm := useZMMCopy, useYMMCopy
	defer func() { useZMMCopy, useYMMCopy = zmm, ymm }()
	f("")
	if zmm && ymm {
		useZMMCopy = false
		f(" with 32-byte moves")
	}
	if zmm || ymm {
		useZMMCopy, useYMMCopy = false, false
		f(" with 16-byte moves")
	}
}
