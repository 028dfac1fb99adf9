package vfs

import (
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Mem is an in-memory FS that knows what a power cut would keep. Besides
// each file's current data and each directory's current entries, it tracks
// what has been made durable by Sync, so that CrashClone can return the
// filesystem as a crash at this moment could leave it. The package
// documentation states the crash model.
//
// A Mem is safe for concurrent use. Appends cost amortised O(len(p)); ReadAt,
// WriteAt and Truncate cost O(bytes touched), plus, for bytes that had been
// synced, a copy of the bytes they replace; Sync of a file is O(1).
type Mem struct {
	// mu guards the namespace: every directory's entries, the pending
	// directory operations and the inode counter. Data operations hold it
	// for reading, so that CrashClone, which holds it for writing, sees one
	// instant.
	mu      sync.RWMutex
	root    *inode
	clock   func() time.Time
	nextIno uint64

	// pending holds the directory operations not yet durable, oldest
	// first. Folded (durable) ones are dropped lazily.
	pending []*dirOp
	nfolded int
	// last maps a directory entry to the newest pending operation that
	// changed it; lastDirMove is the newest pending rename of a directory.
	last        map[entryKey]*dirOp
	lastDirMove *dirOp

	// locks holds the files locked with Lock. A crash clone starts with
	// none: the processes that held them are gone.
	locks LockTable
}

var _ FS = (*Mem)(nil)

// MemOptions configure a Mem. The zero value is what NewMem uses.
type MemOptions struct {
	// Clock gives file modification times; nil means time.Now. Tests of
	// retention, which reads modification times, set it.
	Clock func() time.Time
}

// NewMem returns an empty in-memory filesystem. Its root directory, "/"
// (also named "."), exists and is durable.
func NewMem() *Mem { return MemOptions{}.New() }

// New returns an empty in-memory filesystem with o's settings.
func (o MemOptions) New() *Mem {
	m := &Mem{clock: time.Now, last: make(map[entryKey]*dirOp)}
	if o.Clock != nil {
		m.clock = o.Clock
	}
	m.root = m.newInode(fs.ModeDir | 0o755)
	return m
}

// maxMemFileSize bounds a Mem file, so that a stray WriteAt far past the end
// fails (EFBIG) instead of allocating without limit.
const maxMemFileSize = min(1<<40, math.MaxInt)

// inode is a file or a directory.
type inode struct {
	ino  uint64
	mode fs.FileMode

	// Directories, guarded by Mem.mu.
	children map[string]*inode // current entries
	synced   map[string]*inode // entries after folding only durable operations
	ops      []*dirOp          // pending operations on this directory (some maybe folded)

	// Files, guarded by mu under Mem.mu held for reading (or by Mem.mu
	// held for writing alone). mtime is guarded the same way for
	// directories too.
	mu        sync.RWMutex
	mtime     time.Time
	data      []byte
	syncedLen int64
	undo      undoLog
}

func (n *inode) isDir() bool { return n.mode.IsDir() }

// newInode returns a new inode; Mem.mu must be held for writing.
func (m *Mem) newInode(mode fs.FileMode) *inode {
	m.nextIno++
	n := &inode{ino: m.nextIno, mode: mode, mtime: m.clock()}
	if n.isDir() {
		n.children = make(map[string]*inode)
	}
	return n
}

// walk resolves name, relative to the root whether or not it starts with a
// slash. It returns the parent directory, the base name and the inode (nil if
// there is no such entry). For the root, dir is nil. err is an errno.
func (m *Mem) walk(name string) (dir *inode, base string, n *inode, err error) {
	if name == "" {
		return nil, "", nil, syscall.ENOENT
	}
	p := path.Clean("/" + name)
	if p == "/" {
		return nil, "", m.root, nil
	}
	rest := p[1:]
	dir = m.root
	for {
		elem, more, ok := strings.Cut(rest, "/")
		if !ok {
			return dir, elem, dir.children[elem], nil
		}
		child := dir.children[elem]
		switch {
		case child == nil:
			return nil, "", nil, syscall.ENOENT
		case !child.isDir():
			return nil, "", nil, syscall.ENOTDIR
		}
		dir, rest = child, more
	}
}

// baseName is what Stat reports as the name of name, as os does.
func baseName(name string) string { return path.Base(path.Clean(name)) }

// Name returns "mem".
func (m *Mem) Name() string { return "mem" }

// Create creates or truncates the named file, like os.Create.
func (m *Mem) Create(name string) (File, error) {
	return m.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// Open opens the named file or directory for reading, like os.Open.
func (m *Mem) Open(name string) (File, error) {
	return m.OpenFile(name, os.O_RDONLY, 0)
}

// OpenFile opens the named file with os.O_* flags, like os.OpenFile.
// Creating a file is a directory operation: it is durable once the parent
// directory is synced.
func (m *Mem) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	acc := flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	f := &memFile{
		m:      m,
		name:   name,
		read:   acc == os.O_RDONLY || acc == os.O_RDWR,
		write:  acc == os.O_WRONLY || acc == os.O_RDWR,
		append: flag&os.O_APPEND != 0,
	}
	mutate := flag&(os.O_CREATE|os.O_TRUNC) != 0
	if mutate {
		m.mu.Lock()
		defer m.mu.Unlock()
	} else {
		m.mu.RLock()
		defer m.mu.RUnlock()
	}
	dir, base, n, err := m.walk(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if n == nil {
		if flag&os.O_CREATE == 0 {
			return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOENT}
		}
		n = m.newInode(perm & fs.ModePerm)
		m.link(dir, base, n)
	} else {
		if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
			return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EEXIST}
		}
		if n.isDir() && (f.write || flag&os.O_TRUNC != 0) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
		}
		if flag&os.O_TRUNC != 0 && f.write && len(n.data) > 0 {
			n.truncate(0) // Mem.mu is held for writing
			n.mtime = m.clock()
		}
	}
	f.n = n
	return f, nil
}

// MkdirAll creates the directory path and any missing parents, like
// os.MkdirAll. Each directory created is a directory operation in its
// parent.
func (m *Mem) MkdirAll(p string, perm fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p == "" {
		return &fs.PathError{Op: "mkdir", Path: p, Err: syscall.ENOENT}
	}
	dir := m.root
	rest := path.Clean("/" + p)[1:]
	for rest != "" {
		elem, more, _ := strings.Cut(rest, "/")
		child := dir.children[elem]
		if child == nil {
			child = m.newInode(fs.ModeDir | perm&fs.ModePerm)
			m.link(dir, elem, child)
		} else if !child.isDir() {
			return &fs.PathError{Op: "mkdir", Path: p, Err: syscall.ENOTDIR}
		}
		dir, rest = child, more
	}
	return nil
}

// Remove removes the named file or empty directory, like os.Remove.
func (m *Mem) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, n, err := m.walk(name)
	switch {
	case err != nil:
	case n == nil:
		err = syscall.ENOENT
	case dir == nil:
		err = syscall.EBUSY
	case n.isDir() && len(n.children) > 0:
		err = syscall.ENOTEMPTY
	default:
		m.unlink(dir, base)
		return nil
	}
	return &fs.PathError{Op: "remove", Path: name, Err: err}
}

// RemoveAll removes p and everything below it, like os.RemoveAll: it returns
// nil if p does not exist. Each entry removed is a directory operation of its
// own, so a crash can leave a partly removed tree.
func (m *Mem) RemoveAll(p string) error {
	if p == "" {
		return nil
	}
	if p == "." || p == ".." || strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..") {
		return &fs.PathError{Op: "RemoveAll", Path: p, Err: syscall.EINVAL}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, n, err := m.walk(p)
	switch {
	case err == syscall.ENOENT || (err == nil && n == nil):
		return nil
	case err != nil:
		return &fs.PathError{Op: "unlinkat", Path: p, Err: err}
	case dir == nil:
		return &fs.PathError{Op: "RemoveAll", Path: p, Err: syscall.EBUSY}
	}
	m.removeTree(dir, base, n)
	return nil
}

func (m *Mem) removeTree(dir *inode, base string, n *inode) {
	if n.isDir() {
		for _, name := range sortedNames(n.children) {
			m.removeTree(n, name, n.children[name])
		}
	}
	m.unlink(dir, base)
}

// Rename renames oldname to newname, like os.Rename: a file replaces a file
// at newname; an existing directory at newname is an error (EEXIST). The
// rename is one atomic directory operation; it is durable once both parent
// directories are synced.
func (m *Mem) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	fail := func(err error) error { return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err} }
	od, ob, on, err := m.walk(oldname)
	if err != nil {
		return fail(err)
	}
	if on == nil {
		return fail(syscall.ENOENT)
	}
	nd, nb, nn, err := m.walk(newname)
	if err != nil {
		return fail(err)
	}
	switch {
	case nn == on:
		return nil
	case od == nil || nd == nil:
		return fail(syscall.EBUSY)
	case nn != nil && nn.isDir():
		return fail(syscall.EEXIST)
	case nn != nil && on.isDir():
		return fail(syscall.ENOTDIR)
	case on.isDir() && strings.HasPrefix(path.Clean("/"+newname), path.Clean("/"+oldname)+"/"):
		return fail(syscall.EINVAL)
	}
	now := m.clock()
	delete(od.children, ob)
	nd.children[nb] = on
	od.mtime, nd.mtime = now, now
	m.record(on.isDir(), change{od, ob, nil}, change{nd, nb, on})
	return nil
}

// Stat describes the named file, like os.Stat.
func (m *Mem) Stat(name string) (fs.FileInfo, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, _, n, err := m.walk(name)
	if err == nil && n == nil {
		err = syscall.ENOENT
	}
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return n.stat(baseName(name)), nil
}

// Lock creates the named file if needed and takes an in-process exclusive
// lock on it: a second Lock of the same name fails with ErrLocked until the
// first is closed.
func (m *Mem) Lock(name string) (io.Closer, error) {
	if err := touch(m, name); err != nil {
		return nil, err
	}
	return m.locks.Lock(name)
}

// Chtimes sets the modification time of the named file (Mem keeps no access
// time), like os.Chtimes. Times are carried into crash clones as they are.
func (m *Mem) Chtimes(name string, atime, mtime time.Time) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, _, n, err := m.walk(name)
	if err == nil && n == nil {
		err = syscall.ENOENT
	}
	if err != nil {
		return &fs.PathError{Op: "chtimes", Path: name, Err: err}
	}
	n.mu.Lock()
	n.mtime = mtime
	n.mu.Unlock()
	return nil
}

// String lists the tree, one entry a line, with each file's current and
// synced sizes and whether directory operations are pending, for test
// failure messages.
func (m *Mem) String() string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var b strings.Builder
	fmt.Fprintf(&b, "/ (%d pending directory operations)\n", len(m.pending)-m.nfolded)
	var walk func(d *inode, indent string)
	walk = func(d *inode, indent string) {
		for _, name := range sortedNames(d.children) {
			n := d.children[name]
			if n.isDir() {
				fmt.Fprintf(&b, "%s%s/\n", indent, name)
				walk(n, indent+"  ")
				continue
			}
			n.mu.RLock()
			fmt.Fprintf(&b, "%s%s %d bytes (%d synced, %d overwritten)\n", indent, name, len(n.data), n.syncedLen, n.undo.size())
			n.mu.RUnlock()
		}
	}
	walk(m.root, "  ")
	return b.String()
}

func sortedNames(m map[string]*inode) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// link adds the entry dir/base -> n; Mem.mu must be held for writing.
func (m *Mem) link(dir *inode, base string, n *inode) {
	dir.children[base] = n
	dir.mtime = m.clock()
	m.record(false, change{dir, base, n})
}

// unlink removes the entry dir/base; Mem.mu must be held for writing.
func (m *Mem) unlink(dir *inode, base string) {
	delete(dir.children, base)
	dir.mtime = m.clock()
	m.record(false, change{dir, base, nil})
}

// memInfo is a snapshot of an inode's metadata.
type memInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
}

func (fi *memInfo) Name() string       { return fi.name }
func (fi *memInfo) Size() int64        { return fi.size }
func (fi *memInfo) Mode() fs.FileMode  { return fi.mode }
func (fi *memInfo) ModTime() time.Time { return fi.mtime }
func (fi *memInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi *memInfo) Sys() any           { return nil }

// stat snapshots n's metadata; Mem.mu must be held.
func (n *inode) stat(name string) *memInfo {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return &memInfo{name: name, size: int64(len(n.data)), mode: n.mode, mtime: n.mtime}
}
