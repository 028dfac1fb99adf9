package viz

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/segkit/segkit/vfs"
)

// ReadAhead returns a read-only view of fsys whose files' ReadAt goes
// through a shared cache of blocks blockSize bytes long, at most blocks of
// them (least recently used out first). It is for filesystems where each
// read costs a round trip, such as the browser's File objects, which the
// bridge reads with Blob.slice().arrayBuffer(): the engine's header walks
// read 61 bytes at a time, and the cache turns them into one read a block.
// Reads of a block or more bypass the cache. Files must not change while
// the view is used; mutating calls fail with fs.ErrPermission.
func ReadAhead(fsys vfs.FS, blockSize, blocks int) vfs.FS {
	return &readAheadFS{FS: fsys, bs: int64(blockSize), max: blocks, cache: map[blockKey]*block{}}
}

type readAheadFS struct {
	vfs.FS
	bs  int64
	max int

	mu    sync.Mutex
	cache map[blockKey]*block
	tick  uint64
	// Reads counts the reads that reached fsys, for tests.
	reads int
}

type blockKey struct {
	name string
	n    int64
}

type block struct {
	data []byte
	used uint64
	// ready is closed once data is filled (or err set).
	ready chan struct{}
	err   error
}

func (r *readAheadFS) Open(name string) (vfs.File, error) {
	f, err := r.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return &readAheadFile{File: f, fs: r, name: name}, nil
}

func (r *readAheadFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return r.Open(name)
}

func (r *readAheadFS) Create(name string) (vfs.File, error) {
	return nil, &fs.PathError{Op: "create", Path: name, Err: fs.ErrPermission}
}

func (r *readAheadFS) MkdirAll(p string, _ fs.FileMode) error {
	return &fs.PathError{Op: "mkdir", Path: p, Err: fs.ErrPermission}
}

func (r *readAheadFS) Remove(name string) error {
	return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrPermission}
}

func (r *readAheadFS) RemoveAll(name string) error {
	return &fs.PathError{Op: "removeall", Path: name, Err: fs.ErrPermission}
}

func (r *readAheadFS) Rename(o, n string) error {
	return &os.LinkError{Op: "rename", Old: o, New: n, Err: fs.ErrPermission}
}

func (r *readAheadFS) Name() string { return "readahead(" + r.FS.Name() + ")" }

type readAheadFile struct {
	vfs.File
	fs   *readAheadFS
	name string

	sizeOnce sync.Once
	size     int64
	sizeErr  error
}

func (f *readAheadFile) fileSize() (int64, error) {
	f.sizeOnce.Do(func() {
		st, err := f.File.Stat()
		if err != nil {
			f.sizeErr = err
			return
		}
		f.size = st.Size()
	})
	return f.size, f.sizeErr
}

func (f *readAheadFile) ReadAt(p []byte, off int64) (int, error) {
	bs := f.fs.bs
	if int64(len(p)) >= bs || off < 0 {
		return f.File.ReadAt(p, off)
	}
	size, err := f.fileSize()
	if err != nil {
		return 0, err
	}
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if at >= size {
			return n, io.EOF
		}
		b, err := f.fs.get(f.File, f.name, at/bs, size)
		if err != nil {
			return n, err
		}
		i := at % bs
		if i >= int64(len(b)) {
			return n, io.EOF
		}
		n += copy(p[n:], b[i:])
	}
	return n, nil
}

// get returns block n of the file, reading it if it is not cached. Two
// goroutines asking for the same block share one read.
func (r *readAheadFS) get(f vfs.File, name string, n, size int64) ([]byte, error) {
	k := blockKey{name, n}
	r.mu.Lock()
	r.tick++
	if b, ok := r.cache[k]; ok {
		b.used = r.tick
		r.mu.Unlock()
		<-b.ready
		return b.data, b.err
	}
	b := &block{used: r.tick, ready: make(chan struct{})}
	r.cache[k] = b
	r.evictLocked()
	r.reads++
	r.mu.Unlock()

	start := n * r.bs
	buf := make([]byte, min(r.bs, size-start))
	m, err := f.ReadAt(buf, start)
	if err != nil && !(errors.Is(err, io.EOF) && m > 0) {
		b.err = err
		r.mu.Lock()
		if r.cache[k] == b {
			delete(r.cache, k)
		}
		r.mu.Unlock()
	}
	b.data = buf[:m]
	close(b.ready)
	return b.data, b.err
}

func (r *readAheadFS) evictLocked() {
	for len(r.cache) > r.max {
		var oldK blockKey
		var old *block
		for k, b := range r.cache {
			if old == nil || b.used < old.used {
				oldK, old = k, b
			}
		}
		delete(r.cache, oldK)
	}
}
