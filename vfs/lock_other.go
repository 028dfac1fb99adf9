//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
)

// errLockUnsupported is the error of Lock where the platform has no file
// locks (js, wasip1, windows, ...). It matches errors.ErrUnsupported.
var errLockUnsupported = fmt.Errorf("%w: file locking is not supported on %s/%s", errors.ErrUnsupported, runtime.GOOS, runtime.GOARCH)

// osLock fails, without creating the file, where the platform has no file
// locks segkit uses (js, wasip1, windows, plan9, ...): the error matches
// errors.ErrUnsupported.
func osLock(name string) (io.Closer, error) {
	return nil, &fs.PathError{Op: "lock", Path: name, Err: errLockUnsupported}
}
