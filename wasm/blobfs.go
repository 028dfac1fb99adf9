//go:build js && wasm

package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"syscall/js"
	"time"
)

// blobFile is one dropped file: a JavaScript File or Blob (anything with a
// size and a slice(start, end) whose result has arrayBuffer()).
type blobFile struct {
	path  string
	blob  js.Value
	size  int64
	mtime time.Time
}

func newBlobFile(p string, blob js.Value) blobFile {
	f := blobFile{path: cleanPath(p), blob: blob, mtime: time.Unix(0, 0)}
	if s := blob.Get("size"); s.Type() == js.TypeNumber {
		f.size = int64(s.Float())
	}
	if m := blob.Get("lastModified"); m.Type() == js.TypeNumber {
		f.mtime = time.UnixMilli(int64(m.Float()))
	}
	return f
}

// blobFS is a read-only io/fs.FS over dropped files. Reading a file reads
// only the bytes asked for, with Blob.slice().arrayBuffer(), awaited from
// the calling goroutine (never from a JavaScript callback).
type blobFS struct {
	files map[string]*blobFile
	dirs  map[string][]fs.DirEntry
}

var (
	_ fs.StatFS    = (*blobFS)(nil)
	_ fs.ReadDirFS = (*blobFS)(nil)
)

// newBlobFS builds the tree of files, and names it: the folder all the
// files are in, or "dropped files".
func newBlobFS(files []blobFile) (*blobFS, string, error) {
	b := &blobFS{files: map[string]*blobFile{}, dirs: map[string][]fs.DirEntry{".": nil}}
	children := map[string]map[string]fs.DirEntry{".": {}}
	for i := range files {
		f := &files[i]
		if f.path == "" || !fs.ValidPath(f.path) {
			continue
		}
		if _, isDir := children[f.path]; isDir {
			return nil, "", fmt.Errorf("%s is both a file and a folder", f.path)
		}
		b.files[f.path] = f
		child := fs.DirEntry(fileInfo{name: path.Base(f.path), size: f.size, mtime: f.mtime})
		for p := f.path; p != "."; {
			parent := path.Dir(p)
			if children[parent] == nil {
				children[parent] = map[string]fs.DirEntry{}
			}
			children[parent][path.Base(p)] = child
			child = fileInfo{name: path.Base(parent), dir: true}
			p = parent
		}
	}
	for dir, m := range children {
		if _, clash := b.files[dir]; clash {
			return nil, "", fmt.Errorf("%s is both a file and a folder", dir)
		}
		list := make([]fs.DirEntry, 0, len(m))
		for _, e := range m {
			list = append(list, e)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Name() < list[j].Name() })
		b.dirs[dir] = list
	}
	if len(b.files) == 0 {
		return nil, "", errors.New("no files")
	}
	name := "dropped files"
	if top := b.dirs["."]; len(top) == 1 && top[0].IsDir() {
		name = top[0].Name()
	}
	return b, name, nil
}

func (b *blobFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if f, ok := b.files[name]; ok {
		return &blobHandle{f: f}, nil
	}
	if list, ok := b.dirs[name]; ok {
		return &dirHandle{name: name, entries: list}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

func (b *blobFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if f, ok := b.files[name]; ok {
		return fileInfo{name: path.Base(name), size: f.size, mtime: f.mtime}, nil
	}
	if _, ok := b.dirs[name]; ok {
		return fileInfo{name: path.Base(name), dir: true}, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

func (b *blobFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if list, ok := b.dirs[name]; ok {
		return append([]fs.DirEntry(nil), list...), nil
	}
	if _, ok := b.files[name]; ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
}

// fileInfo is both the fs.FileInfo and the fs.DirEntry of a file or folder.
type fileInfo struct {
	name  string
	size  int64
	mtime time.Time
	dir   bool
}

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64  { return i.size }
func (i fileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i fileInfo) ModTime() time.Time         { return i.mtime }
func (i fileInfo) IsDir() bool                { return i.dir }
func (i fileInfo) Sys() any                   { return nil }
func (i fileInfo) Type() fs.FileMode          { return i.Mode().Type() }
func (i fileInfo) Info() (fs.FileInfo, error) { return i, nil }

// blobHandle is an open dropped file.
type blobHandle struct {
	f      *blobFile
	off    int64
	closed bool
}

func (h *blobHandle) Stat() (fs.FileInfo, error) {
	return fileInfo{name: path.Base(h.f.path), size: h.f.size, mtime: h.f.mtime}, nil
}

func (h *blobHandle) Read(p []byte) (int, error) {
	n, err := h.ReadAt(p, h.off)
	h.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (h *blobHandle) ReadAt(p []byte, off int64) (int, error) {
	if h.closed {
		return 0, &fs.PathError{Op: "read", Path: h.f.path, Err: fs.ErrClosed}
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: h.f.path, Err: fs.ErrInvalid}
	}
	if off >= h.f.size {
		return 0, io.EOF
	}
	end := min(off+int64(len(p)), h.f.size)
	n, err := readBlob(h.f.blob, off, p[:end-off])
	if err != nil {
		return n, &fs.PathError{Op: "read", Path: h.f.path, Err: err}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (h *blobHandle) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += h.off
	case io.SeekEnd:
		offset += h.f.size
	default:
		return h.off, fs.ErrInvalid
	}
	if offset < 0 {
		return h.off, fs.ErrInvalid
	}
	h.off = offset
	return offset, nil
}

func (h *blobHandle) Close() error {
	h.closed = true
	return nil
}

// dirHandle is an open folder.
type dirHandle struct {
	name    string
	entries []fs.DirEntry
	read    int
}

func (d *dirHandle) Stat() (fs.FileInfo, error) {
	return fileInfo{name: path.Base(d.name), dir: true}, nil
}

func (d *dirHandle) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errors.New("is a directory")}
}

func (d *dirHandle) Close() error { return nil }

func (d *dirHandle) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.read:]
	if n <= 0 {
		d.read = len(d.entries)
		return append([]fs.DirEntry(nil), rest...), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.read += n
	return append([]fs.DirEntry(nil), rest[:n]...), nil
}

// readBlob reads len(p) bytes of blob at off: blob.slice(off, off+len(p))
// .arrayBuffer(), awaited.
func readBlob(blob js.Value, off int64, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	slice := blob.Call("slice", float64(off), float64(off+int64(len(p))))
	buf, err := await(slice.Call("arrayBuffer"))
	if err != nil {
		return 0, err
	}
	return js.CopyBytesToGo(p, js.Global().Get("Uint8Array").New(buf)), nil
}

// await waits for a Promise. It must be called from a goroutine of its
// own, never from inside a js.FuncOf callback: the Go scheduler runs the
// JavaScript event loop while the goroutine waits.
func await(p js.Value) (js.Value, error) {
	done := make(chan struct{})
	var val js.Value
	var err error
	onOK := js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) > 0 {
			val = args[0]
		}
		close(done)
		return nil
	})
	onErr := js.FuncOf(func(_ js.Value, args []js.Value) any {
		msg := "promise rejected"
		if len(args) > 0 {
			msg = js.Global().Call("String", args[0]).String()
		}
		err = errors.New(strings.TrimPrefix(msg, "Error: "))
		close(done)
		return nil
	})
	defer onOK.Release()
	defer onErr.Release()
	p.Call("then", onOK, onErr)
	<-done
	return val, err
}
