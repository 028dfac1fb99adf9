//go:build !windows && !js && !wasip1

package vfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// osFile returns f as a File.
func osFile(f *os.File) File { return f }

// osErr returns err as it is: the os package's errors are already the ones
// FS promises.
func osErr(err error) error { return err }

// openChecked opens name with open, adding O_NONBLOCK so that the open of
// a FIFO returns at once instead of waiting for its other end, checks with
// fstat that it is a regular file or a directory (checkOpened), and clears
// O_NONBLOCK again unless the caller asked for it. stat describes name, for
// the error of an open that O_NONBLOCK makes fail: a FIFO opened for writing
// without a reader, or a socket, gives ENXIO.
func openChecked(name string, flag int, open func(flag int) (*os.File, error), stat func(string) (fs.FileInfo, error)) (*os.File, error) {
	f, err := open(flag | syscall.O_NONBLOCK)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			if fi, serr := stat(name); serr == nil {
				if cerr := checkOpened(name, fi); cerr != nil {
					return nil, cerr
				}
			}
		}
		return nil, err
	}
	if f, err = checkFile(name, f); err != nil {
		return nil, err
	}
	if flag&syscall.O_NONBLOCK == 0 {
		// Linux ignores O_NONBLOCK for regular files and directories,
		// but POSIX leaves it unspecified: the files segkit reads and
		// writes get the flags they were asked for.
		if err := setBlocking(f); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// setBlocking clears O_NONBLOCK on f's descriptor. f.Fd would do it too,
// but would also take the file out of the runtime's poller for good.
func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	if serr != nil {
		return &fs.PathError{Op: "fcntl", Path: f.Name(), Err: serr}
	}
	return nil
}
