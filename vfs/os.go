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

func (osFS) Create(name string) (File, error) {
	f, err := os.Create(filepath.FromSlash(name))
	if err != nil {
		return nil, osErr(err)
	}
	return osFile(f), nil
}

func (osFS) Open(name string) (File, error) {
	f, err := os.Open(filepath.FromSlash(name))
	if err != nil {
		return nil, osErr(err)
	}
	return osFile(f), nil
}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(filepath.FromSlash(name), flag, perm)
	if err != nil {
		return nil, osErr(err)
	}
	return osFile(f), nil
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
