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
	"sync"
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
// the bytes asked for, with Blob.slice().arrayBuffer(), awaited from the
// calling goroutine (never from a JavaScript callback); a handle read
// sequentially reads ahead (readAhead).
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
	ra     readAhead
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
	n, err := h.ra.read(h.f, p[:end-off], off)
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
	h.ra.drop()
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
	buf, err := await(sliceBuffer(blob, off, int64(len(p))))
	if err != nil {
		return 0, err
	}
	return js.CopyBytesToGo(p, uint8Array.New(buf)), nil
}

// sliceBuffer starts reading n bytes of blob at off: the Promise of
// blob.slice(off, off+n).arrayBuffer().
func sliceBuffer(blob js.Value, off, n int64) js.Value {
	return blob.Call("slice", float64(off), float64(off+n)).Call("arrayBuffer")
}

var uint8Array = js.Global().Get("Uint8Array")

// Sequential read-ahead of a dropped file. The page reads a File in
// Blob.slice().arrayBuffer() pieces, each a round trip through the
// browser: in headless Chromium (TestWASMVerifySpeed, e2e, on a shared
// two-core machine), reading 1 GiB in 1 MiB pieces awaited one after the
// other took 6.5 s, in 16 MiB pieces four in flight 1.4 s; and verifying
// a 1 GiB partition took 6.0 s without this read-ahead and 3.1 s with it
// (best of four each, alternating in one page). So once a handle has been
// read sequentially (each read starting where the last one ended) for
// raAfter bytes, it asks for the pieces that follow before they are
// needed, raPieces of them in flight after the one being read, each twice
// as long as the one before from raMin up to raMax: a header walk or a
// verification streams the file in large pieces, and the page's reads of
// one batch or one page of rows read only what they ask for, as before
// (TestBridgePaging: starting after 1 MiB, a 1 MiB scan page would read
// 8). It saves round trips, not reading: Chromium moves a piece's bytes on
// the page's main thread, the one the engine runs on, so reading and
// checking take turns (the page's reads with the main thread kept busy
// take about the sum of both, yielding to the event loop or not).
const (
	raAfter  = 4 << 20
	raMin    = 1 << 20
	raMax    = 16 << 20
	raPieces = 2
)

// readAhead is a handle's window of pieces read, or being read, ahead.
// The window's reads of one handle are serial: mu is held for a whole
// read from the window, its awaits included (other goroutines run
// meanwhile, reads of their own included), so a piece is awaited by one
// reader and the window changes under no one.
type readAhead struct {
	mu sync.Mutex
	// pieces are consecutive, in file order, from the one holding next;
	// next is where a sequential read is expected (the end of the last
	// one), run how many bytes were read sequentially up to it.
	pieces    []*piece
	next, run int64
}

// piece is [start, end) of the file: its Promise until awaited, then its
// bytes (a Uint8Array). short says the Blob had fewer bytes than asked
// for, and end was moved back to where they end.
type piece struct {
	start, end int64
	promise    js.Value
	buf        js.Value
	short      bool
}

func (ra *readAhead) drop() {
	ra.mu.Lock()
	ra.pieces = nil
	ra.mu.Unlock()
}

// read reads p at off (within the file): from the pieces read ahead when
// the read is sequential, with a read of its own otherwise. A read
// elsewhere (a view reading a batch while the file is streamed) keeps the
// window for the sequential reads that follow.
func (ra *readAhead) read(f *blobFile, p []byte, off int64) (int, error) {
	ra.mu.Lock()
	end := off + int64(len(p))
	if off != ra.next {
		if len(ra.pieces) == 0 {
			// Perhaps the start of another sequential run.
			ra.next, ra.run = end, int64(len(p))
		}
		ra.mu.Unlock()
		return readBlob(f.blob, off, p)
	}
	ra.next = end
	if len(ra.pieces) == 0 && ra.run < raAfter {
		ra.run += int64(len(p))
		ra.mu.Unlock()
		return readBlob(f.blob, off, p)
	}
	defer ra.mu.Unlock()
	n := 0
	for n < len(p) {
		at := off + int64(n)
		for len(ra.pieces) > 0 && ra.pieces[0].end <= at {
			ra.pieces[0] = nil
			ra.pieces = ra.pieces[1:]
		}
		if len(ra.pieces) > 0 && ra.pieces[0].start > at {
			ra.pieces = nil // not where the window is (it cannot be, but never read out of it)
		}
		if len(ra.pieces) == 0 {
			ra.pieces = append(ra.pieces, ra.start(f, at, max(end-at, raMin)))
		}
		for len(ra.pieces) < 1+raPieces {
			last := ra.pieces[len(ra.pieces)-1]
			if last.end >= f.size {
				break
			}
			ra.pieces = append(ra.pieces, ra.start(f, last.end, min(2*(last.end-last.start), raMax)))
		}
		pc := ra.pieces[0]
		err := pc.wait()
		if err == nil && at < pc.end {
			upto := min(end, pc.end)
			n += js.CopyBytesToGo(p[n:n+int(upto-at)], pc.buf.Call("subarray", float64(at-pc.start), float64(upto-pc.start)))
			if !pc.short || upto == end {
				continue
			}
		}
		if err == nil {
			// The file is shorter than it was when dropped.
			err = fmt.Errorf("%w: the file is shorter than when it was dropped (%d bytes, not %d)", io.ErrUnexpectedEOF, pc.end, f.size)
		}
		// Start again: the next read reads on its own.
		ra.pieces, ra.next, ra.run = nil, -1, 0
		return n, err
	}
	return n, nil
}

// start starts reading [at, at+n) of f, within the file.
func (ra *readAhead) start(f *blobFile, at, n int64) *piece {
	end := min(at+n, f.size)
	return &piece{start: at, end: end, promise: sliceBuffer(f.blob, at, end-at)}
}

// wait awaits the piece's bytes, once.
func (pc *piece) wait() error {
	if pc.promise.IsUndefined() {
		return nil
	}
	buf, err := await(pc.promise)
	pc.promise = js.Undefined()
	if err != nil {
		return err
	}
	pc.buf = uint8Array.New(buf)
	if got := int64(pc.buf.Length()); got < pc.end-pc.start {
		pc.end, pc.short = pc.start+got, true
	}
	return nil
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
