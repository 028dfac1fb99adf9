package vfs

import (
	"io"
	"io/fs"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
)

// memFile is an open Mem file or directory.
type memFile struct {
	m                   *Mem
	n                   *inode
	name                string
	read, write, append bool
	closed              atomic.Bool
	mu                  sync.Mutex // guards pos and the directory cursor
	pos                 int64
	dirents             []string // directory snapshot, taken by the first Readdir
	dirPos              int
	dirSnap             bool
}

var _ File = (*memFile)(nil)

func (f *memFile) Name() string { return f.name }

func (f *memFile) pathErr(op string, err error) error {
	return &fs.PathError{Op: op, Path: f.name, Err: err}
}

// check returns the error for an operation that needs the handle open and,
// if mode is 'r' or 'w', readable or writable.
func (f *memFile) check(op string, mode byte) error {
	switch {
	case f.closed.Load():
		return f.pathErr(op, fs.ErrClosed)
	case mode == 'r' && f.n.isDir():
		return f.pathErr(op, syscall.EISDIR)
	case mode == 'r' && !f.read, mode == 'w' && !f.write:
		return f.pathErr(op, syscall.EBADF)
	}
	return nil
}

func (f *memFile) Close() error {
	if f.closed.Swap(true) {
		return f.pathErr("close", fs.ErrClosed)
	}
	return nil
}

func (f *memFile) Read(p []byte) (int, error) {
	if err := f.check("read", 'r'); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.readAt(p, f.pos)
	f.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.check("read", 'r'); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, f.pathErr("readat", errNegativeOffset)
	}
	return f.readAt(p, off)
}

func (f *memFile) readAt(p []byte, off int64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	f.m.mu.RLock()
	defer f.m.mu.RUnlock()
	n := f.n
	n.mu.RLock()
	defer n.mu.RUnlock()
	if off >= int64(len(n.data)) {
		return 0, io.EOF
	}
	c := copy(p, n.data[off:])
	if c < len(p) {
		return c, io.EOF
	}
	return c, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	if err := f.check("write", 'w'); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	end, err := f.writeAt(p, f.pos, f.append)
	if err != nil {
		return 0, f.pathErr("write", err)
	}
	f.pos = end
	return len(p), nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.check("write", 'w'); err != nil {
		return 0, err
	}
	if f.append {
		return 0, f.pathErr("writeat", errWriteAtInAppendMode)
	}
	if off < 0 {
		return 0, f.pathErr("writeat", errNegativeOffset)
	}
	if _, err := f.writeAt(p, off, false); err != nil {
		return 0, f.pathErr("writeat", err)
	}
	return len(p), nil
}

// writeAt writes p at off (at the end of the file if atEnd) and returns the
// offset just past the bytes written.
func (f *memFile) writeAt(p []byte, off int64, atEnd bool) (int64, error) {
	f.m.mu.RLock()
	defer f.m.mu.RUnlock()
	n := f.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if atEnd {
		off = int64(len(n.data))
	}
	end := off + int64(len(p))
	if end > maxMemFileSize {
		return off, syscall.EFBIG
	}
	if len(p) == 0 {
		return off, nil
	}
	n.writeAt(p, off)
	n.mtime = f.m.clock()
	return end, nil
}

func (f *memFile) Seek(offset int64, whence int) (int64, error) {
	if err := f.check("seek", 0); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = f.pos
	case io.SeekEnd:
		f.m.mu.RLock()
		f.n.mu.RLock()
		base = int64(len(f.n.data))
		f.n.mu.RUnlock()
		f.m.mu.RUnlock()
	default:
		return 0, f.pathErr("seek", syscall.EINVAL)
	}
	pos := base + offset
	if pos < 0 {
		return 0, f.pathErr("seek", syscall.EINVAL)
	}
	f.pos = pos
	if f.n.isDir() && pos == 0 {
		f.dirSnap, f.dirents, f.dirPos = false, nil, 0
	}
	return pos, nil
}

func (f *memFile) Truncate(size int64) error {
	if err := f.check("truncate", 'w'); err != nil {
		return err
	}
	if f.n.isDir() {
		return f.pathErr("truncate", syscall.EISDIR)
	}
	if size < 0 {
		return f.pathErr("truncate", syscall.EINVAL)
	}
	if size > maxMemFileSize {
		return f.pathErr("truncate", syscall.EFBIG)
	}
	f.m.mu.RLock()
	defer f.m.mu.RUnlock()
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	f.n.truncate(size)
	f.n.mtime = f.m.clock()
	return nil
}

// Sync makes the file's data durable, or, for a directory, its entries: the
// creates, removes and renames done in it so far (a rename between two
// directories once both are synced).
func (f *memFile) Sync() error {
	if err := f.check("sync", 0); err != nil {
		return err
	}
	if f.n.isDir() {
		f.m.mu.Lock()
		defer f.m.mu.Unlock()
		f.m.syncDir(f.n)
		return nil
	}
	f.m.mu.RLock()
	defer f.m.mu.RUnlock()
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	f.n.syncedLen = int64(len(f.n.data))
	f.n.undo.reset()
	return nil
}

func (f *memFile) Stat() (fs.FileInfo, error) {
	if err := f.check("stat", 0); err != nil {
		return nil, err
	}
	f.m.mu.RLock()
	defer f.m.mu.RUnlock()
	return f.n.stat(baseName(f.name)), nil
}

func (f *memFile) Readdir(count int) ([]fs.FileInfo, error) {
	names, err := f.readdirnames("readdir", count)
	if len(names) == 0 {
		return nil, err
	}
	infos := make([]fs.FileInfo, 0, len(names))
	f.m.mu.RLock()
	defer f.m.mu.RUnlock()
	for _, name := range names {
		if c := f.n.children[name]; c != nil { // skip entries removed since the snapshot
			infos = append(infos, c.stat(name))
		}
	}
	return infos, err
}

func (f *memFile) Readdirnames(n int) ([]string, error) {
	return f.readdirnames("readdirent", n)
}

// readdirnames serves the directory snapshot with os's paging rules.
func (f *memFile) readdirnames(op string, count int) ([]string, error) {
	if err := f.check(op, 0); err != nil {
		return nil, err
	}
	if !f.n.isDir() {
		return nil, f.pathErr(op, syscall.ENOTDIR)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.dirSnap {
		f.m.mu.RLock()
		f.dirents = sortedNames(f.n.children)
		f.m.mu.RUnlock()
		f.dirSnap, f.dirPos = true, 0
	}
	rest := f.dirents[f.dirPos:]
	if count > 0 {
		if len(rest) == 0 {
			return nil, io.EOF
		}
		rest = rest[:min(count, len(rest))]
	}
	f.dirPos += len(rest)
	return slices.Clone(rest), nil
}

// writeAt writes p at off, zero-filling any gap; n.mu must be held.
func (n *inode) writeAt(p []byte, off int64) {
	end := off + int64(len(p))
	if off < n.syncedLen {
		n.undo.save(off, min(end, n.syncedLen), n.data)
	}
	if old := int64(len(n.data)); end > old {
		n.data = slices.Grow(n.data, int(end-old))[:end]
		if off > old {
			clear(n.data[old:off])
		}
	}
	copy(n.data[off:], p)
}

// truncate sets n's size, zero-filling when it grows; n.mu must be held.
func (n *inode) truncate(size int64) {
	old := int64(len(n.data))
	switch {
	case size < old:
		if size < n.syncedLen {
			n.undo.save(size, min(old, n.syncedLen), n.data)
		}
		if c := int64(cap(n.data)); c > 64<<10 && size < c/4 {
			n.data = slices.Clone(n.data[:size:size])
		} else {
			n.data = n.data[:size]
		}
	case size > old:
		n.data = slices.Grow(n.data, int(size-old))[:size]
		clear(n.data[old:])
	}
}

// syncedContent returns the file as last synced; n.mu (or Mem.mu for
// writing) must be held.
func (n *inode) syncedContent() []byte {
	s := make([]byte, n.syncedLen)
	copy(s, n.data)
	for _, sp := range n.undo.spans {
		copy(s[sp.off:], sp.old)
	}
	return s
}

// dirty reports whether n has data that was not synced.
func (n *inode) dirty() bool {
	return int64(len(n.data)) != n.syncedLen || len(n.undo.spans) > 0
}

// undoLog keeps the synced bytes that writes and truncations replaced since
// the last Sync, so that the synced content is data[:syncedLen] with the
// spans laid over it. Invariant: every byte below syncedLen is either in a
// span or still in data, unchanged.
type undoLog struct {
	spans []undoSpan // sorted, disjoint, not adjacent
}

type undoSpan struct {
	off int64
	old []byte
}

func (s undoSpan) end() int64 { return s.off + int64(len(s.old)) }

func (u *undoLog) reset() { u.spans = u.spans[:0] }

func (u *undoLog) size() (n int) {
	for _, s := range u.spans {
		n += len(s.old)
	}
	return n
}

// save records the synced bytes of [lo, hi) that are not saved yet, taking
// them from cur (the data before the change). It costs O(hi-lo) plus the
// number of spans, and O(1) amortised per byte for a sequential run of
// overwrites.
func (u *undoLog) save(lo, hi int64, cur []byte) {
	if lo >= hi {
		return
	}
	s := u.spans
	i := sort.Search(len(s), func(i int) bool { return s[i].end() >= lo })
	j := i
	for j < len(s) && s[j].off <= hi {
		j++
	}
	switch {
	case i == j: // touches no span
		u.spans = slices.Insert(s, i, undoSpan{lo, slices.Clone(cur[lo:hi])})
	case j == i+1 && s[i].off <= lo: // within or extending one span to the right
		if e := s[i].end(); hi > e {
			s[i].old = append(s[i].old, cur[e:hi]...)
		}
	default: // merge s[i:j] with [lo, hi)
		nlo, nhi := min(lo, s[i].off), max(hi, s[j-1].end())
		buf := make([]byte, nhi-nlo)
		if nlo < int64(len(cur)) {
			copy(buf, cur[nlo:min(nhi, int64(len(cur)))])
		}
		for _, sp := range s[i:j] {
			copy(buf[sp.off-nlo:], sp.old)
		}
		u.spans = slices.Replace(s, i, j, undoSpan{nlo, buf})
	}
}
