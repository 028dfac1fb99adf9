//go:build js || wasip1

package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"syscall"
)

// osFile returns f as a File that refuses a negative Truncate, which
// Node.js's ftruncate accepts.
func osFile(f *os.File) File { return wasmFile{f} }

type wasmFile struct{ *os.File }

func (f wasmFile) Truncate(size int64) error {
	if size < 0 {
		return &fs.PathError{Op: "truncate", Path: f.Name(), Err: syscall.EINVAL}
	}
	return f.File.Truncate(size)
}

// osErr adds GOOS/GOARCH to an error that says the host has no filesystem
// (a browser answers ENOSYS), keeping errors.Is(err, errors.ErrUnsupported).
func osErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && errors.Is(pe.Err, errors.ErrUnsupported) {
		return &fs.PathError{Op: pe.Op, Path: pe.Path, Err: fmt.Errorf("%w on %s/%s (no filesystem in this host; use vfs.NewMem): %w",
			errors.ErrUnsupported, runtime.GOOS, runtime.GOARCH, pe.Err)}
	}
	return err
}

// openChecked opens name with open after checking, with stat, that it is
// not a FIFO or another special file: js and wasip1 have no O_NONBLOCK to
// make the open of a FIFO return at once, so a FIFO renamed into place
// between the two calls still blocks the open. The opened file is checked
// again (checkOpened).
func openChecked(name string, flag int, open func(flag int) (*os.File, error), stat func(string) (fs.FileInfo, error)) (*os.File, error) {
	if fi, err := stat(name); err == nil {
		if err := checkOpened(name, fi); err != nil {
			return nil, err
		}
	}
	f, err := open(flag)
	if err != nil {
		return nil, err
	}
	return checkFile(name, f)
}
