// Package vfstest is the conformance suite for vfs.FS implementations: the
// same tests run against the OS filesystem in a temporary directory, Mem,
// Mem behind a FaultFS that injects nothing, FromIOFS (read-only subset) and,
// in the interop module, the afero adapter. The reference for every
// behaviour is the os package on Linux.
//
//	func TestConformance(t *testing.T) {
//		vfstest.Run(t, func(t *testing.T) vfs.FS { return vfs.NewMem() })
//	}
package vfstest
