//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package vfs

import (
	"io"
	"io/fs"
)

// osLock fails, without creating the file, where the platform has no file
// locks segkit uses (js, wasip1, windows, plan9, ...): the error matches
// errors.ErrUnsupported.
func osLock(name string) (io.Closer, error) {
	return nil, &fs.PathError{Op: "lock", Path: name, Err: errLockUnsupported}
}
