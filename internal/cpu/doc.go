// Package cpu reports the x86-64 features segkit's assembly uses, read
// once with CPUID and XGETBV: carry-less multiplication (PCLMULQDQ, and
// VPCLMULQDQ on YMM and ZMM registers) for format's CRC-32C, AVX-512 and
// AVX2 for record's copies of values, AVX2 for compaction's eight-lane
// MD5, and the vendor and family that choose between format's CRC loops.
// A feature is reported only where the CPU has it and the operating
// system saves the registers it needs (XCR0), as Go's own internal/cpu
// does. On other architectures, and with the purego build tag, every
// feature is reported absent.
package cpu
