// Package vfsafero adapts an afero.Fs to segkit's vfs.FS. It lives in the
// interop module so that segkit's core module does not depend on afero.
//
//	fsys := vfsafero.New(afero.NewMemMapFs())
//
// afero's method signatures are vfs's, so the core of the adapter is a
// pass-through. Around it, the adapter gives every afero.Fs the os semantics
// that vfs.FS promises and that afero.MemMapFs (v1.15) lacks: ReadAt reports
// io.EOF when it comes up short, WriteAt leaves the file offset alone,
// O_APPEND writes at the end, a handle opened read-only or write-only
// refuses the other direction, Seek refuses a negative offset, a second
// Close fails, and the namespace checks that os makes (a missing parent
// directory, a non-empty directory, a directory opened for writing, a
// directory renamed into itself, MkdirAll over a file, RemoveAll of ".").
// The checks are made before the afero call, so they are not atomic with
// it.
//
// afero.MemMapFs makes Sync a no-op: it is fine as a plain in-memory
// filesystem (in a browser, say) but it is no crash model; tests of
// durability use vfs.NewMem.
package vfsafero

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/segkit/segkit/vfs"
	"github.com/spf13/afero"
)

// New returns fsys as a vfs.FS.
func New(fsys afero.Fs) vfs.FS { return &aferoFS{fs: fsys} }

type aferoFS struct {
	fs    afero.Fs
	locks vfs.LockTable // afero has no file locks: Lock is in-process
}

var _ vfs.FS = (*aferoFS)(nil)

func (a *aferoFS) Name() string { return "afero(" + a.fs.Name() + ")" }

// isDir stats name: it returns whether it exists and whether it is a
// directory.
func (a *aferoFS) isDir(name string) (exists, dir bool) {
	fi, err := a.fs.Stat(name)
	if err != nil {
		return false, false
	}
	return true, fi.IsDir()
}

// parentOK returns the errno for creating name if its parent is missing or
// not a directory.
func (a *aferoFS) parentOK(name string) error {
	parent := filepath.Dir(filepath.Clean(name))
	switch exists, dir := a.isDir(parent); {
	case !exists:
		return syscall.ENOENT
	case !dir:
		return syscall.ENOTDIR
	}
	return nil
}

func (a *aferoFS) Create(name string) (vfs.File, error) {
	return a.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

func (a *aferoFS) Open(name string) (vfs.File, error) {
	return a.OpenFile(name, os.O_RDONLY, 0)
}

func (a *aferoFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	acc := flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	w := &file{
		name:   name,
		read:   acc == os.O_RDONLY || acc == os.O_RDWR,
		write:  acc == os.O_WRONLY || acc == os.O_RDWR,
		append: flag&os.O_APPEND != 0,
	}
	exists, dir := a.isDir(name)
	switch {
	case exists && dir && (w.write || flag&os.O_TRUNC != 0):
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	case !exists && flag&os.O_CREATE != 0:
		if err := a.parentOK(name); err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
	f, err := a.fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	w.f, w.dir = f, dir
	return w, nil
}

func (a *aferoFS) MkdirAll(path string, perm fs.FileMode) error {
	// Find the deepest existing ancestor; it must be a directory.
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if exists, dir := a.isDir(p); exists {
			if !dir {
				return &fs.PathError{Op: "mkdir", Path: path, Err: syscall.ENOTDIR}
			}
			break
		}
		if p == filepath.Dir(p) {
			break
		}
	}
	return a.fs.MkdirAll(path, perm)
}

func (a *aferoFS) Remove(name string) error {
	if exists, dir := a.isDir(name); exists && dir {
		d, err := a.fs.Open(name)
		if err != nil {
			return err
		}
		names, _ := d.Readdirnames(1)
		d.Close()
		if len(names) > 0 {
			return &fs.PathError{Op: "remove", Path: name, Err: syscall.ENOTEMPTY}
		}
	}
	return a.fs.Remove(name)
}

func (a *aferoFS) RemoveAll(path string) error {
	// os refuses "." and names ending in "/." or "/.."; refuse the root too,
	// which an afero.BasePathFs maps to its whole base directory.
	if path != "" && (filepath.Base(path) == "." || filepath.Base(path) == ".." || filepath.Clean(path) == string(filepath.Separator)) {
		return &fs.PathError{Op: "RemoveAll", Path: path, Err: syscall.EINVAL}
	}
	return a.fs.RemoveAll(path)
}

func (a *aferoFS) Rename(oldname, newname string) error {
	fail := func(err error) error { return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err} }
	oldExists, oldDir := a.isDir(oldname)
	if !oldExists {
		return fail(syscall.ENOENT)
	}
	oc, nc := filepath.Clean(oldname), filepath.Clean(newname)
	if oc == nc {
		return nil
	}
	if err := a.parentOK(newname); err != nil {
		return fail(err)
	}
	switch newExists, newDir := a.isDir(newname); {
	case oldDir && strings.HasPrefix(nc, oc+string(filepath.Separator)):
		return fail(syscall.EINVAL)
	case newExists && newDir:
		return fail(syscall.EEXIST)
	case newExists && oldDir:
		return fail(syscall.ENOTDIR)
	}
	return a.fs.Rename(oldname, newname)
}

func (a *aferoFS) Stat(name string) (fs.FileInfo, error) { return a.fs.Stat(name) }

func (a *aferoFS) Chtimes(name string, atime, mtime time.Time) error {
	return a.fs.Chtimes(name, atime, mtime)
}

// Lock creates the named file if needed and takes an in-process lock on it
// (afero has no file locks): another Lock through this adapter fails with
// vfs.ErrLocked until the first is closed; other processes are not kept
// out.
func (a *aferoFS) Lock(name string) (io.Closer, error) {
	f, err := a.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return a.locks.Lock(name)
}

// file wraps an afero.File. mu serialises the calls that use the afero
// file's offset, which afero.MemMapFs's ReadAt and WriteAt borrow.
type file struct {
	f                   afero.File
	name                string
	read, write, append bool
	dir                 bool

	mu     sync.Mutex
	closed bool
}

var _ vfs.File = (*file)(nil)

func (f *file) Name() string { return f.name }

func (f *file) err(op string, err error) error { return &fs.PathError{Op: op, Path: f.name, Err: err} }

// check locks f and returns an error if it is closed or lacks access mode
// ('r', 'w' or 0 for none); on error f is unlocked.
func (f *file) check(op string, mode byte) error {
	f.mu.Lock()
	var err error
	switch {
	case f.closed:
		err = fs.ErrClosed
	case mode == 'r' && f.dir:
		err = syscall.EISDIR
	case mode == 'r' && !f.read, mode == 'w' && !f.write:
		err = syscall.EBADF
	default:
		return nil
	}
	f.mu.Unlock()
	return f.err(op, err)
}

func (f *file) Read(p []byte) (int, error) {
	if err := f.check("read", 'r'); err != nil {
		return 0, err
	}
	defer f.mu.Unlock()
	return f.f.Read(p)
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if err := f.check("read", 'r'); err != nil {
		return 0, err
	}
	defer f.mu.Unlock()
	if off < 0 {
		return 0, f.err("readat", errors.New("negative offset"))
	}
	n, err := f.f.ReadAt(p, off)
	if (err == nil || err == io.ErrUnexpectedEOF) && n < len(p) {
		err = io.EOF // MemMapFs says nil, or ErrUnexpectedEOF past the end
	}
	return n, err
}

func (f *file) Write(p []byte) (int, error) {
	if err := f.check("write", 'w'); err != nil {
		return 0, err
	}
	defer f.mu.Unlock()
	if f.append {
		if _, err := f.f.Seek(0, io.SeekEnd); err != nil {
			return 0, err
		}
	}
	return f.f.Write(p)
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	if err := f.check("write", 'w'); err != nil {
		return 0, err
	}
	defer f.mu.Unlock()
	if f.append {
		return 0, f.err("writeat", errors.New("invalid use of WriteAt on file opened with O_APPEND"))
	}
	if off < 0 {
		return 0, f.err("writeat", errors.New("negative offset"))
	}
	pos, err := f.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	n, err := f.f.WriteAt(p, off)
	if _, serr := f.f.Seek(pos, io.SeekStart); err == nil {
		err = serr
	}
	return n, err
}

func (f *file) Seek(offset int64, whence int) (int64, error) {
	if err := f.check("seek", 0); err != nil {
		return 0, err
	}
	defer f.mu.Unlock()
	var base int64
	if whence != io.SeekStart {
		b, err := f.f.Seek(0, whence)
		if err != nil {
			return 0, err
		}
		base = b
	}
	if base+offset < 0 {
		return 0, f.err("seek", syscall.EINVAL)
	}
	return f.f.Seek(base+offset, io.SeekStart)
}

func (f *file) Close() error {
	if err := f.check("close", 0); err != nil {
		return err
	}
	defer f.mu.Unlock()
	f.closed = true
	return f.f.Close()
}

func (f *file) Readdir(count int) ([]fs.FileInfo, error) {
	if err := f.check("readdir", 0); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	return f.f.Readdir(count)
}

func (f *file) Readdirnames(n int) ([]string, error) {
	if err := f.check("readdirent", 0); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	return f.f.Readdirnames(n)
}

func (f *file) Stat() (fs.FileInfo, error) {
	if err := f.check("stat", 0); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	return f.f.Stat()
}

func (f *file) Sync() error {
	if err := f.check("sync", 0); err != nil {
		return err
	}
	defer f.mu.Unlock()
	return f.f.Sync()
}

func (f *file) Truncate(size int64) error {
	if err := f.check("truncate", 'w'); err != nil {
		return err
	}
	defer f.mu.Unlock()
	if size < 0 {
		return f.err("truncate", syscall.EINVAL)
	}
	return f.f.Truncate(size)
}
