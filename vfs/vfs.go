package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// FS is the filesystem segkit's engine runs on. Each method has the
// signature of the afero.Fs method of the same name, so an afero.Fs adapts in
// a few lines (see interop/vfsafero), and the semantics of the os function of
// the same name: errors are *fs.PathError (*os.LinkError for Rename) wrapping
// an error that satisfies errors.Is with fs.ErrNotExist, fs.ErrExist,
// fs.ErrPermission, fs.ErrClosed or an errno.
//
// Names are slash-separated. Implementations clean them with path.Clean,
// except OS, which passes them to the os package as given (after
// filepath.FromSlash).
type FS interface {
	// Create creates or truncates the named file, opened for reading and
	// writing, like os.Create.
	Create(name string) (File, error)
	// Open opens the named file or directory for reading, like os.Open.
	Open(name string) (File, error)
	// OpenFile opens the named file with os.O_* flags and, when it creates
	// the file, the permission bits perm, like os.OpenFile.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// MkdirAll creates a directory and any missing parents, like
	// os.MkdirAll. It returns nil if path is already a directory.
	MkdirAll(path string, perm fs.FileMode) error
	// Remove removes a file or an empty directory, like os.Remove.
	Remove(name string) error
	// RemoveAll removes path and everything it contains, like os.RemoveAll.
	// It returns nil if path does not exist.
	RemoveAll(path string) error
	// Rename renames (moves) oldname to newname, replacing newname if it is
	// a file, like os.Rename.
	Rename(oldname, newname string) error
	// Stat describes the named file, like os.Stat.
	Stat(name string) (fs.FileInfo, error)
	// Chtimes sets the access and modification times of the named file,
	// like os.Chtimes. Retention reads modification times; tests set them.
	Chtimes(name string, atime, mtime time.Time) error
	// Lock takes an exclusive advisory lock on the named file, creating the
	// file if needed, without waiting: if another holder (another process,
	// or another Lock of the same file) has it, Lock fails at once with an
	// *fs.PathError matching ErrLocked. Closing the returned io.Closer
	// releases the lock; the file stays, as Kafka's FileLock leaves it. This
	// is the lock a broker's LogManager holds on each log directory's
	// ".lock". Where the platform has no file locks (OS under js, wasip1 or
	// windows) Lock fails with an error matching errors.ErrUnsupported.
	Lock(name string) (io.Closer, error)
	// Name names the implementation ("os", "mem", ...), for test output.
	Name() string
}

// File is an open file or directory. Its methods have the signatures of
// afero.File's (and *os.File satisfies it): positional reads and writes
// (ReadAt, WriteAt) do not move the offset that Read, Write and Seek share.
//
// Sync makes the file's data durable; to make a directory's entries durable
// (a create, remove or rename in it), open the directory and Sync it, or call
// SyncDir.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.WriterAt
	io.Seeker
	io.Closer
	// Name returns the name the file was opened with.
	Name() string
	// Readdir reads the directory's entries, like (*os.File).Readdir: with
	// count > 0 at most count at a time and io.EOF at the end, otherwise
	// all the remaining ones.
	Readdir(count int) ([]fs.FileInfo, error)
	// Readdirnames is Readdir returning names only.
	Readdirnames(n int) ([]string, error)
	// Stat describes the open file.
	Stat() (fs.FileInfo, error)
	// Sync makes the file's data (or the directory's entries) durable.
	Sync() error
	// Truncate changes the file's size, zero-filling when it grows.
	Truncate(size int64) error
}

// Sentinel errors. Operations wrap them in *fs.PathError; test with
// errors.Is.
var (
	// ErrInjected is matched (errors.Is) by every error a FaultFS injects.
	ErrInjected = errors.New("vfs: injected fault")

	// ErrCrashed is returned by every mutating operation of a FaultFS
	// after its CrashAfter injector fired: the simulated machine is off.
	ErrCrashed = errors.New("vfs: simulated crash")
)

// Errors with os's wording, for the cases where os does not use an errno.
var (
	errNegativeOffset      = errors.New("negative offset")
	errWriteAtInAppendMode = errors.New("invalid use of WriteAt on file opened with O_APPEND")
)

// ReadDir reads the named directory and returns its entries sorted by name,
// like os.ReadDir but with fs.FileInfo.
func ReadDir(fsys FS, dir string) ([]fs.FileInfo, error) {
	f, err := fsys.Open(dir)
	if err != nil {
		return nil, err
	}
	infos, err := f.Readdir(-1)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(infos, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	return infos, nil
}

// ReadFile reads the whole named file, like os.ReadFile. Unlike
// os.ReadFile it reports a failing Stat or Close too, so that no injected
// fault goes unseen; and it refuses a file that is not a regular file (a
// directory, or one that FS.Open let through) with an *fs.PathError
// matching ErrNotRegular. It preallocates at most maxPrealloc bytes from
// the size Stat gives, and grows from there as it reads, so that a sparse
// file's size costs no memory before its bytes are read; for a file whose
// size has a known bound (a checkpoint, a snapshot), ReadFileLimit stops at
// the bound.
func ReadFile(fsys FS, name string) ([]byte, error) { return ReadFileLimit(fsys, name, -1) }

// ReadFileLimit is ReadFile for a file that should hold at most limit
// bytes (no bound if limit is negative): a file whose Stat size is over
// limit is not read, and one that turns out to hold more is not read
// further; both give an *fs.PathError matching ErrTooLarge.
func ReadFileLimit(fsys FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	data, err := readAll(f, name, limit)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return data, err
}

// ErrTooLarge is matched (errors.Is) by the error of ReadFileLimit for a
// file larger than its limit.
var ErrTooLarge = errors.New("file too large")

// maxPrealloc bounds ReadFile's allocation before it reads: Stat's size
// is a claim (a sparse file can say 1 TiB and hold nothing), so memory
// beyond it is only spent on bytes actually read.
const maxPrealloc = 1 << 20

// tooLarge returns the error of ReadFileLimit for name.
func tooLarge(name string, size, limit int64) error {
	return &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: %d bytes or more, over the limit of %d", ErrTooLarge, size, limit)}
}

func readAll(f File, name string, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := CheckRegular(name, fi); err != nil {
		return nil, err
	}
	if limit >= 0 && fi.Size() > limit {
		return nil, tooLarge(name, fi.Size(), limit)
	}
	size := min(max(fi.Size(), 0), maxPrealloc)
	if limit >= 0 {
		size = min(size, limit)
	}
	data := make([]byte, 0, size+1) // +1: find io.EOF without growing
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if limit >= 0 && int64(len(data)) > limit {
			return nil, tooLarge(name, int64(len(data)), limit)
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return data, err
		}
		if len(data) == cap(data) {
			data = slices.Grow(data, 512)
		}
	}
}

// WriteFile writes data to the named file, creating it with perm if needed
// and truncating it otherwise, like os.WriteFile. It does not Sync: use
// WriteFileAtomic for a durable replacement.
func WriteFile(fsys FS, name string, data []byte, perm fs.FileMode) error {
	f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SyncDir makes the entries of directory dir durable: it opens dir, Syncs
// it and closes it. After a create, remove or rename in dir, SyncDir is what
// makes the change survive a crash.
func SyncDir(fsys FS, dir string) error {
	f, err := fsys.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteFileAtomic replaces the named file with data durably, with Kafka's
// checkpoint protocol: it writes name+".tmp", Syncs it, renames it over name
// and syncs the parent directory. After a crash, name holds either its old
// content or data, never a mix (a stray name+".tmp" may remain). If an error
// is returned the new content may or may not be in place.
func WriteFileAtomic(fsys FS, name string, data []byte, perm fs.FileMode) error {
	tmp := name + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := fsys.Rename(tmp, name); err != nil {
		return err
	}
	return SyncDir(fsys, path.Dir(name))
}
