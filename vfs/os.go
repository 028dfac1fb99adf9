package vfs

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// OS returns the FS of the real disk, through the os package. Names are
// converted with filepath.FromSlash and used as given: relative names are
// relative to the working directory. Its files are *os.File, wrapped only
// on Windows (where a directory's Sync is a no-op, as Windows cannot flush a
// directory handle) and on WebAssembly (where a negative Truncate is refused
// before Node.js takes it).
//
// Under GOOS=js the os package works where the host gives it a filesystem
// (Node.js, as go_js_wasm_exec runs tests); in a browser every operation
// fails with an error matching errors.ErrUnsupported: use NewMem there.
// Under GOOS=wasip1 it works inside the directories the runtime preopened.
func OS() FS { return osFS{} }

type osFS struct{}

var _ FS = osFS{}

func (osFS) Name() string { return "os" }

// Create, Open and OpenFile refuse a file that is neither a regular file
// nor a directory (a FIFO, a device, a socket) with an *fs.PathError
// matching ErrNotRegular, as CheckRegular words it. Opening a FIFO blocks
// until the other end opens it, so the check cannot come after a plain
// open; where the platform has O_NONBLOCK the file is opened with it, which
// makes the open of a FIFO return at once, and checked with fstat; the
// flag is cleared again for the regular files and directories kept. Where it
// does not (js, wasip1), the named file is checked before it is opened,
// which leaves a race with a rename; Windows has no FIFOs in the file
// namespace and the check is made after the open.

func (osFS) Create(name string) (File, error) {
	return openOS(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

func (osFS) Open(name string) (File, error) { return openOS(name, os.O_RDONLY, 0) }

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	return openOS(name, flag, perm)
}

// openOS opens name with os.OpenFile through the platform's openChecked.
func openOS(name string, flag int, perm fs.FileMode) (File, error) {
	name = filepath.FromSlash(name)
	f, err := openChecked(name, flag, func(flag int) (*os.File, error) { return os.OpenFile(name, flag, perm) }, os.Stat)
	if err != nil {
		return nil, osErr(err)
	}
	return osFile(f), nil
}

// checkOpened returns nil if fi, of a file just opened as name, is a
// regular file or a directory, and otherwise the error of CheckRegular.
func checkOpened(name string, fi fs.FileInfo) error {
	if fi.IsDir() {
		return nil
	}
	return CheckRegular(name, fi)
}

func (osFS) MkdirAll(path string, perm fs.FileMode) error {
	return osErr(os.MkdirAll(filepath.FromSlash(path), perm))
}

func (osFS) Remove(name string) error { return osErr(os.Remove(filepath.FromSlash(name))) }

func (osFS) RemoveAll(path string) error { return osErr(os.RemoveAll(filepath.FromSlash(path))) }

func (osFS) Rename(oldname, newname string) error {
	return osErr(os.Rename(filepath.FromSlash(oldname), filepath.FromSlash(newname)))
}

func (osFS) Stat(name string) (fs.FileInfo, error) {
	fi, err := os.Stat(filepath.FromSlash(name))
	if err != nil {
		return nil, osErr(err)
	}
	return fi, nil
}

func (osFS) Chtimes(name string, atime, mtime time.Time) error {
	return osErr(os.Chtimes(filepath.FromSlash(name), atime, mtime))
}

// Lock takes an exclusive flock (and on Linux an open file description
// record lock, which the JVM's FileChannel.tryLock conflicts with) on the
// named file.
func (osFS) Lock(name string) (io.Closer, error) { return osLock(name) }

// checkFile returns f, just opened as name, if it is a regular file or a
// directory, and otherwise closes it and returns the error of
// checkOpened.
func checkFile(name string, f *os.File) (*os.File, error) {
	fi, err := f.Stat()
	if err == nil {
		err = checkOpened(name, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
