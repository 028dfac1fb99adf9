//go:build !windows && !js && !wasip1

package vfs

import "os"

// osFile returns f as a File.
func osFile(f *os.File) File { return f }

// osErr returns err as it is: the os package's errors are already the ones
// FS promises.
func osErr(err error) error { return err }
