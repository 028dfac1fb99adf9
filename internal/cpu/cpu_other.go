//go:build !amd64 || purego

package cpu

// PCLMULQDQ reports PCLMULQDQ with SSE4.1: never here.
func PCLMULQDQ() bool { return false }

// VPCLMULQDQ reports VPCLMULQDQ: never here.
func VPCLMULQDQ() bool { return false }

// AVX2 reports AVX and AVX2 with the YMM state saved: never here.
func AVX2() bool { return false }

// AVX512F reports AVX-512F with the ZMM state saved: never here.
func AVX512F() bool { return false }

// AMDFamily returns the family of an AMD CPU: 0 here.
func AMDFamily() uint32 { return 0 }
