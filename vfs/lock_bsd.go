//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package vfs

import "os"

// recordLock has nothing to add on BSD kernels, where flock and POSIX
// record locks are one mechanism and conflict with each other.
func recordLock(*os.File) error { return nil }
