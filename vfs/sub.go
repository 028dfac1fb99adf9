package vfs

import (
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"syscall"
	"time"
)

// Sub returns the FS of the tree under dir of fsys: name n of the result is
// dir/n of fsys, with n cleaned as if rooted, so no name escapes dir. Files
// report the name they were opened with; errors name the full path. Sub of
// OS() is how tests run against a temporary directory.
func Sub(fsys FS, dir string) FS {
	return &subFS{fsys: fsys, dir: filepath.ToSlash(dir)}
}

type subFS struct {
	fsys FS
	dir  string
}

var _ FS = (*subFS)(nil)

func (s *subFS) full(name string) string {
	if name == "" {
		return ""
	}
	return path.Join(s.dir, path.Clean("/" + name)[1:])
}

func (s *subFS) wrap(f File, err error, name string) (File, error) {
	if err != nil {
		return nil, err
	}
	return subFile{f, name}, nil
}

func (s *subFS) Name() string { return s.fsys.Name() }

func (s *subFS) Create(name string) (File, error) {
	f, err := s.fsys.Create(s.full(name))
	return s.wrap(f, err, name)
}

func (s *subFS) Open(name string) (File, error) {
	f, err := s.fsys.Open(s.full(name))
	return s.wrap(f, err, name)
}

func (s *subFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := s.fsys.OpenFile(s.full(name), flag, perm)
	return s.wrap(f, err, name)
}

func (s *subFS) MkdirAll(p string, perm fs.FileMode) error { return s.fsys.MkdirAll(s.full(p), perm) }
func (s *subFS) Remove(name string) error                  { return s.fsys.Remove(s.full(name)) }
func (s *subFS) RemoveAll(p string) error {
	switch {
	case p == "":
		return nil
	case path.Clean("/"+p) == "/":
		// Never pass the root on: os.RemoveAll("/") would remove it all.
		return &fs.PathError{Op: "RemoveAll", Path: p, Err: syscall.EINVAL}
	}
	return s.fsys.RemoveAll(s.full(p))
}
func (s *subFS) Rename(oldname, newname string) error {
	return s.fsys.Rename(s.full(oldname), s.full(newname))
}
func (s *subFS) Stat(name string) (fs.FileInfo, error) {
	fi, err := s.fsys.Stat(s.full(name))
	if err != nil {
		return nil, err
	}
	if path.Clean("/"+name) == "/" {
		return renamedInfo{fi, baseName(name)}, nil
	}
	return fi, nil
}
func (s *subFS) Lock(name string) (io.Closer, error) { return s.fsys.Lock(s.full(name)) }
func (s *subFS) Chtimes(name string, atime, mtime time.Time) error {
	return s.fsys.Chtimes(s.full(name), atime, mtime)
}

// subFile is a File of a Sub FS, named as it was opened.
type subFile struct {
	File
	name string
}

func (f subFile) Name() string { return f.name }

func (f subFile) Stat() (fs.FileInfo, error) {
	fi, err := f.File.Stat()
	if err != nil || path.Clean("/"+f.name) != "/" {
		return fi, err
	}
	return renamedInfo{fi, baseName(f.name)}, nil
}

// renamedInfo reports the root of a Sub FS under the name it was asked by.
type renamedInfo struct {
	fs.FileInfo
	name string
}

func (fi renamedInfo) Name() string { return fi.name }
