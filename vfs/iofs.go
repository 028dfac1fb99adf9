package vfs

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
	"syscall"
	"time"
)

// FromIOFS returns a read-only FS over fsys: an embed.FS, os.DirFS, a
// *zip.Reader, fstest.MapFS, or the files a browser page was given. Names are
// cleaned and made relative ("/a/b" and "a/b" are the same file, "/" is ".").
// Every mutating call (Create, OpenFile for writing, MkdirAll, Remove,
// RemoveAll, Rename, Chtimes, Write, WriteAt, Truncate) fails with an
// *fs.PathError wrapping fs.ErrPermission; Sync succeeds, as there is nothing
// to make durable. ReadAt and Seek use the file's own io.ReaderAt and
// io.Seeker when it has them, and otherwise read the whole file into memory
// once, on first use.
//
// Open refuses a file that is neither a regular file nor a directory (a
// FIFO, a device, a socket) with an *fs.PathError matching ErrNotRegular.
// When fsys is an fs.StatFS it checks before it opens, since the open of a
// FIFO by os.DirFS blocks until a writer comes; a FIFO renamed into place
// between the Stat and the Open still blocks it (FromRoot has no such
// race). It checks the opened file's Stat too.
func FromIOFS(fsys fs.FS) FS { return &ioFS{fsys: fsys} }

// FromRoot returns a read-only FS over the tree of root, as
// FromIOFS(root.FS()) but without the race: a name is opened inside root
// as OS opens it (with O_NONBLOCK, then checked with fstat, where the
// platform has O_NONBLOCK), so that a FIFO, a device or a socket is refused
// without blocking. Names with "..", and symbolic links, that leave root
// are refused, as os.Root refuses them.
func FromRoot(root *os.Root) FS {
	return &ioFS{fsys: rootFS{root.FS(), root}, name: "root", nonBlocking: true}
}

type ioFS struct {
	fsys fs.FS
	name string // Name; "" for "iofs"
	// nonBlocking is set when fsys's Open checks the file's type without
	// blocking on a FIFO (rootFS): Open then does not Stat first.
	nonBlocking bool
}

// rootFS is an os.Root as an fs.FS whose Open does not block on a FIFO.
type rootFS struct {
	fs.FS // root.FS()
	root  *os.Root
}

func (r rootFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := openChecked(name, os.O_RDONLY, func(flag int) (*os.File, error) { return r.root.OpenFile(name, flag, 0) }, r.root.Stat)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (r rootFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(r.FS, name) }

var _ FS = (*ioFS)(nil)

// ioName turns an FS name into an fs.FS one.
func ioName(op, name string) (string, error) {
	p := path.Clean("/" + name)[1:]
	if p == "" {
		p = "."
	}
	if name == "" || !fs.ValidPath(p) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return p, nil
}

func readOnly(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: fs.ErrPermission}
}

func (x *ioFS) Name() string {
	if x.name != "" {
		return x.name
	}
	return "iofs"
}

func (x *ioFS) Create(name string) (File, error) { return nil, readOnly("open", name) }

func (x *ioFS) Open(name string) (File, error) {
	p, err := ioName("open", name)
	if err != nil {
		return nil, err
	}
	if _, ok := x.fsys.(fs.StatFS); ok && !x.nonBlocking {
		if fi, err := fs.Stat(x.fsys, p); err == nil {
			if err := checkOpened(name, fi); err != nil {
				return nil, err
			}
		}
	}
	f, err := x.fsys.Open(p)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil {
		if err := checkOpened(name, fi); err != nil {
			f.Close()
			return nil, err
		}
	}
	return &ioFile{fsys: x.fsys, f: f, name: name, ioName: p}, nil
}

func (x *ioFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, readOnly("open", name)
	}
	return x.Open(name)
}

func (x *ioFS) MkdirAll(p string, perm fs.FileMode) error { return readOnly("mkdir", p) }
func (x *ioFS) Remove(name string) error                  { return readOnly("remove", name) }
func (x *ioFS) RemoveAll(p string) error                  { return readOnly("RemoveAll", p) }
func (x *ioFS) Lock(name string) (io.Closer, error)       { return nil, readOnly("lock", name) }
func (x *ioFS) Chtimes(name string, atime, mtime time.Time) error {
	return readOnly("chtimes", name)
}

func (x *ioFS) Rename(oldname, newname string) error {
	return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrPermission}
}

func (x *ioFS) Stat(name string) (fs.FileInfo, error) {
	p, err := ioName("stat", name)
	if err != nil {
		return nil, err
	}
	return fs.Stat(x.fsys, p)
}

// ioFile is a File of a FromIOFS FS.
type ioFile struct {
	fsys   fs.FS
	f      fs.File
	name   string
	ioName string

	mu     sync.Mutex
	nread  int64         // bytes consumed through f.Read, before buf is used
	buf    *bytes.Reader // the whole file, once ReadAt or Seek needed it
	bufErr error
}

var _ File = (*ioFile)(nil)

func (f *ioFile) Name() string { return f.name }

// buffered returns the whole file as a bytes.Reader positioned where Read
// had got to, reading it on first use.
func (f *ioFile) buffered() (*bytes.Reader, error) {
	if f.buf != nil || f.bufErr != nil {
		return f.buf, f.bufErr
	}
	data, err := fs.ReadFile(f.fsys, f.ioName)
	if err != nil {
		f.bufErr = err
		return nil, err
	}
	f.buf = bytes.NewReader(data)
	f.buf.Seek(f.nread, io.SeekStart)
	return f.buf, nil
}

func (f *ioFile) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.buf != nil {
		return f.buf.Read(p)
	}
	n, err := f.f.Read(p)
	f.nread += int64(n)
	return n, err
}

func (f *ioFile) ReadAt(p []byte, off int64) (int, error) {
	if ra, ok := f.f.(io.ReaderAt); ok {
		return ra.ReadAt(p, off)
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.name, Err: errNegativeOffset}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := f.buffered()
	if err != nil {
		return 0, err
	}
	return b.ReadAt(p, off)
}

func (f *ioFile) Seek(offset int64, whence int) (int64, error) {
	if s, ok := f.f.(io.Seeker); ok {
		return s.Seek(offset, whence)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := f.buffered()
	if err != nil {
		return 0, err
	}
	pos, err := b.Seek(offset, whence)
	if err != nil {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: syscall.EINVAL}
	}
	return pos, nil
}

func (f *ioFile) Write(p []byte) (int, error)              { return 0, readOnly("write", f.name) }
func (f *ioFile) WriteAt(p []byte, off int64) (int, error) { return 0, readOnly("write", f.name) }
func (f *ioFile) Truncate(size int64) error                { return readOnly("truncate", f.name) }
func (f *ioFile) Sync() error                              { return nil }
func (f *ioFile) Close() error                             { return f.f.Close() }
func (f *ioFile) Stat() (fs.FileInfo, error)               { return f.f.Stat() }

func (f *ioFile) Readdir(count int) ([]fs.FileInfo, error) {
	d, ok := f.f.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: f.name, Err: syscall.ENOTDIR}
	}
	entries, err := d.ReadDir(count)
	infos := make([]fs.FileInfo, 0, len(entries))
	for _, e := range entries {
		fi, ierr := e.Info()
		if ierr != nil {
			return infos, ierr
		}
		infos = append(infos, fi)
	}
	return infos, err
}

func (f *ioFile) Readdirnames(n int) ([]string, error) {
	d, ok := f.f.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdirent", Path: f.name, Err: syscall.ENOTDIR}
	}
	entries, err := d.ReadDir(n)
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, err
}
