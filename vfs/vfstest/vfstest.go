package vfstest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/segkit/segkit/vfs"
)

// Run runs the read-write conformance suite. newFS is called once per test
// and must return an empty filesystem (for the OS, vfs.Sub over t.TempDir()).
func Run(t *testing.T, newFS func(t *testing.T) vfs.FS) {
	tests := []struct {
		name string
		fn   func(t *testing.T, fsys vfs.FS)
	}{
		{"CreateWriteRead", testCreateWriteRead},
		{"ReadAt", testReadAt},
		{"WriteAtPastEOF", testWriteAtPastEOF},
		{"Seek", testSeek},
		{"Truncate", testTruncate},
		{"OpenFlags", testOpenFlags},
		{"AccessMode", testAccessMode},
		{"Rename", testRename},
		{"RenameDir", testRenameDir},
		{"Remove", testRemove},
		{"RemoveAll", testRemoveAll},
		{"MkdirAll", testMkdirAll},
		{"Stat", testStat},
		{"Readdir", testReaddir},
		{"SyncDir", testSyncDir},
		{"WriteFileAtomic", testWriteFileAtomic},
		{"Close", testClose},
		{"Chtimes", testChtimes},
		{"Lock", testLock},
		{"OpenDir", testOpenDir},
		{"LargeFile", testLargeFile},
		{"ConcurrentReadAt", testConcurrentReadAt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newFS(t)) })
	}
}

// readOnlyFiles is the tree RunReadOnly asks its newFS to serve.
var readOnlyFiles = map[string]string{
	"a.txt":      "hello, world\n",
	"dir/b.log":  string(pattern(3000)),
	"dir/sub/c":  "",
	"dir/z.json": `{"version":0}`,
}

// RunReadOnly runs the read-only conformance suite. newFS is called once per
// test and must return a filesystem holding exactly files (name -> content;
// directories implied), on which every mutating call fails with an error
// matching fs.ErrPermission.
func RunReadOnly(t *testing.T, newFS func(t *testing.T, files map[string]string) vfs.FS) {
	tests := []struct {
		name string
		fn   func(t *testing.T, fsys vfs.FS)
	}{
		{"Read", testRORead},
		{"ReadAtSeek", testROReadAtSeek},
		{"Stat", testROStat},
		{"Readdir", testROReaddir},
		{"NotExist", testRONotExist},
		{"Mutations", testROMutations},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newFS(t, readOnlyFiles)) })
	}
}

// pattern returns n bytes that differ from their neighbours and from zero.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i%251 + 1)
	}
	return b
}

func write(t *testing.T, fsys vfs.FS, name string, data []byte) {
	t.Helper()
	if err := vfs.WriteFile(fsys, name, data, 0o644); err != nil {
		t.Fatalf("WriteFile(%q): %v", name, err)
	}
}

func read(t *testing.T, fsys vfs.FS, name string) []byte {
	t.Helper()
	b, err := vfs.ReadFile(fsys, name)
	if err != nil {
		t.Fatalf("ReadFile(%q): %v", name, err)
	}
	return b
}

func wantContent(t *testing.T, fsys vfs.FS, name string, want []byte) {
	t.Helper()
	if got := read(t, fsys, name); !bytes.Equal(got, want) {
		t.Fatalf("%s holds %q, want %q", name, trim(got), trim(want))
	}
}

func trim(b []byte) string {
	if len(b) > 64 {
		return fmt.Sprintf("%q... (%d bytes)", b[:64], len(b))
	}
	return string(b)
}

func ok(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// wantPathErr checks that err is an *fs.PathError (or *os.LinkError when
// link is set) matching target (nil: any error).
func wantPathErr(t *testing.T, err error, target error, what string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %v", what, target)
	}
	if target != nil && !errors.Is(err, target) {
		t.Fatalf("%s: %v (%T), want errors.Is %v", what, err, err, target)
	}
	var pe *fs.PathError
	var le *os.LinkError
	if !errors.As(err, &pe) && !errors.As(err, &le) {
		t.Fatalf("%s: %v is a %T, want *fs.PathError or *os.LinkError", what, err, err)
	}
}

func exists(t *testing.T, fsys vfs.FS, name string) bool {
	t.Helper()
	_, err := fsys.Stat(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat(%q): %v", name, err)
	}
	return err == nil
}

func names(infos []fs.FileInfo) []string {
	var s []string
	for _, fi := range infos {
		s = append(s, fi.Name())
	}
	return s
}

func testCreateWriteRead(t *testing.T, fsys vfs.FS) {
	f, err := fsys.Create("a")
	ok(t, err, "Create")
	if f.Name() != "a" {
		t.Errorf("Name() = %q, want %q", f.Name(), "a")
	}
	n, err := f.Write([]byte("hello"))
	if n != 5 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	_, err = f.Write([]byte(", world"))
	ok(t, err, "Write")
	// Create opens for reading too; the offset is at the end.
	if n, err := f.Read(make([]byte, 4)); n != 0 || err != io.EOF {
		t.Fatalf("Read at end = %d, %v; want 0, io.EOF", n, err)
	}
	ok(t, f.Close(), "Close")
	wantContent(t, fsys, "a", []byte("hello, world"))

	f, err = fsys.Open("a")
	ok(t, err, "Open")
	defer f.Close()
	buf := make([]byte, 5)
	if n, err := io.ReadFull(f, buf); n != 5 || err != nil || string(buf) != "hello" {
		t.Fatalf("ReadFull = %d, %v, %q", n, err, buf)
	}
	rest, err := io.ReadAll(f)
	ok(t, err, "ReadAll")
	if string(rest) != ", world" {
		t.Fatalf("rest = %q", rest)
	}
	if n, err := f.Read(nil); n != 0 || (err != nil && err != io.EOF) {
		t.Fatalf("Read(nil) = %d, %v", n, err)
	}

	// Create truncates an existing file.
	f2, err := fsys.Create("a")
	ok(t, err, "Create existing")
	ok(t, f2.Close(), "Close")
	wantContent(t, fsys, "a", nil)
	// Dots and dot-dots name the same file.
	ok(t, fsys.MkdirAll("x", 0o755), "MkdirAll")
	write(t, fsys, "x/../b", []byte("B"))
	wantContent(t, fsys, "b", []byte("B"))
	wantContent(t, fsys, "./b", []byte("B"))
}

func testReadAt(t *testing.T, fsys vfs.FS) {
	write(t, fsys, "f", []byte("0123456789"))
	f, err := fsys.Open("f")
	ok(t, err, "Open")
	defer f.Close()
	buf := make([]byte, 4)
	if n, err := f.ReadAt(buf, 3); n != 4 || err != nil || string(buf) != "3456" {
		t.Fatalf("ReadAt(4, 3) = %d, %v, %q", n, err, buf)
	}
	if n, err := f.ReadAt(buf, 6); n != 4 || (err != nil && err != io.EOF) || string(buf) != "6789" {
		t.Fatalf("ReadAt(4, 6) = %d, %v, %q", n, err, buf)
	}
	if n, err := f.ReadAt(buf, 8); n != 2 || err != io.EOF || string(buf[:2]) != "89" {
		t.Fatalf("ReadAt(4, 8) = %d, %v, %q; want 2, io.EOF", n, err, buf[:n])
	}
	if n, err := f.ReadAt(buf, 10); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt at EOF = %d, %v; want 0, io.EOF", n, err)
	}
	if n, err := f.ReadAt(buf, 100); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt past EOF = %d, %v; want 0, io.EOF", n, err)
	}
	if _, err := f.ReadAt(buf, -1); err == nil {
		t.Fatalf("ReadAt(-1): no error")
	}
	// ReadAt does not move the offset.
	if n, err := f.Read(buf); n != 4 || err != nil || string(buf) != "0123" {
		t.Fatalf("Read after ReadAt = %d, %v, %q", n, err, buf)
	}
}

func testWriteAtPastEOF(t *testing.T, fsys vfs.FS) {
	f, err := fsys.Create("f")
	ok(t, err, "Create")
	defer f.Close()
	if n, err := f.WriteAt([]byte("xy"), 10); n != 2 || err != nil {
		t.Fatalf("WriteAt = %d, %v", n, err)
	}
	fi, err := f.Stat()
	ok(t, err, "Stat")
	if fi.Size() != 12 {
		t.Fatalf("size %d, want 12", fi.Size())
	}
	want := append(make([]byte, 10), "xy"...)
	got := make([]byte, 12)
	if _, err := f.ReadAt(got, 0); err != nil && err != io.EOF {
		t.Fatalf("ReadAt: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	// Overwrite in the middle, and WriteAt leaves the offset alone.
	_, err = f.WriteAt([]byte("ab"), 4)
	ok(t, err, "WriteAt")
	_, err = f.Write([]byte("S"))
	ok(t, err, "Write")
	copy(want[4:], "ab")
	want[0] = 'S'
	ok(t, f.Sync(), "Sync")
	wantContent(t, fsys, "f", want)
	if _, err := f.WriteAt([]byte("x"), -1); err == nil {
		t.Fatalf("WriteAt(-1): no error")
	}
}

func testSeek(t *testing.T, fsys vfs.FS) {
	write(t, fsys, "f", []byte("0123456789"))
	f, err := fsys.OpenFile("f", os.O_RDWR, 0)
	ok(t, err, "OpenFile")
	defer f.Close()
	seek := func(off int64, whence int, want int64) {
		t.Helper()
		got, err := f.Seek(off, whence)
		if err != nil || got != want {
			t.Fatalf("Seek(%d, %d) = %d, %v; want %d", off, whence, got, err, want)
		}
	}
	buf := make([]byte, 2)
	seek(2, io.SeekStart, 2)
	io.ReadFull(f, buf)
	if string(buf) != "23" {
		t.Fatalf("read %q after Seek(2)", buf)
	}
	seek(1, io.SeekCurrent, 5)
	seek(-1, io.SeekEnd, 9)
	io.ReadFull(f, buf[:1])
	if buf[0] != '9' {
		t.Fatalf("read %q after Seek(-1, end)", buf[:1])
	}
	seek(0, io.SeekCurrent, 10)
	if _, err := f.Seek(-11, io.SeekEnd); err == nil {
		t.Fatalf("Seek to -1: no error")
	}
	// Seek past the end, then write: the gap reads as zeros.
	seek(12, io.SeekStart, 12)
	_, err = f.Write([]byte("E"))
	ok(t, err, "Write")
	wantContent(t, fsys, "f", []byte("0123456789\x00\x00E"))
}

func testTruncate(t *testing.T, fsys vfs.FS) {
	write(t, fsys, "f", []byte("0123456789"))
	f, err := fsys.OpenFile("f", os.O_RDWR, 0)
	ok(t, err, "OpenFile")
	defer f.Close()
	ok(t, f.Truncate(4), "Truncate(4)")
	wantContent(t, fsys, "f", []byte("0123"))
	// Growing again zero-fills: the cut bytes do not come back.
	ok(t, f.Truncate(8), "Truncate(8)")
	wantContent(t, fsys, "f", []byte("0123\x00\x00\x00\x00"))
	fi, err := fsys.Stat("f")
	ok(t, err, "Stat")
	if fi.Size() != 8 {
		t.Fatalf("size %d, want 8", fi.Size())
	}
	// Truncate does not move the offset.
	_, err = f.Write([]byte("ab"))
	ok(t, err, "Write")
	wantContent(t, fsys, "f", []byte("ab23\x00\x00\x00\x00"))
	ok(t, f.Truncate(0), "Truncate(0)")
	wantContent(t, fsys, "f", nil)
	if err := f.Truncate(-1); err == nil {
		t.Fatalf("Truncate(-1): no error")
	}
	r, err := fsys.Open("f")
	ok(t, err, "Open")
	defer r.Close()
	if err := r.Truncate(0); err == nil {
		t.Fatalf("Truncate on a read-only file: no error")
	}
}

func testOpenFlags(t *testing.T, fsys vfs.FS) {
	_, err := fsys.OpenFile("f", os.O_RDWR, 0)
	wantPathErr(t, err, fs.ErrNotExist, "OpenFile missing without O_CREATE")
	_, err = fsys.Open("f")
	wantPathErr(t, err, fs.ErrNotExist, "Open missing")

	f, err := fsys.OpenFile("f", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	ok(t, err, "O_EXCL on a new file")
	f.Write([]byte("hello"))
	ok(t, f.Close(), "Close")
	_, err = fsys.OpenFile("f", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	wantPathErr(t, err, fs.ErrExist, "O_EXCL on an existing file")

	// O_CREATE without O_TRUNC keeps the content.
	f, err = fsys.OpenFile("f", os.O_RDWR|os.O_CREATE, 0o644)
	ok(t, err, "O_CREATE on an existing file")
	ok(t, f.Close(), "Close")
	wantContent(t, fsys, "f", []byte("hello"))

	// O_APPEND writes at the end, whatever the offset.
	f, err = fsys.OpenFile("f", os.O_RDWR|os.O_APPEND, 0)
	ok(t, err, "O_APPEND")
	_, err = f.Write([]byte(", "))
	ok(t, err, "Write")
	f.Seek(0, io.SeekStart)
	_, err = f.Write([]byte("world"))
	ok(t, err, "Write after Seek(0)")
	ok(t, f.Close(), "Close")
	wantContent(t, fsys, "f", []byte("hello, world"))

	// O_TRUNC empties it.
	f, err = fsys.OpenFile("f", os.O_WRONLY|os.O_TRUNC, 0)
	ok(t, err, "O_TRUNC")
	_, err = f.Write([]byte("new"))
	ok(t, err, "Write")
	ok(t, f.Close(), "Close")
	wantContent(t, fsys, "f", []byte("new"))

	// A missing parent directory.
	_, err = fsys.Create("nodir/f")
	wantPathErr(t, err, fs.ErrNotExist, "Create in a missing directory")
	_, err = fsys.OpenFile("nodir/f", os.O_RDWR|os.O_CREATE, 0o644)
	wantPathErr(t, err, fs.ErrNotExist, "OpenFile(O_CREATE) in a missing directory")
}

func testAccessMode(t *testing.T, fsys vfs.FS) {
	write(t, fsys, "f", []byte("data"))
	r, err := fsys.Open("f")
	ok(t, err, "Open")
	defer r.Close()
	if n, err := r.Write([]byte("x")); n != 0 || err == nil {
		t.Fatalf("Write on O_RDONLY = %d, %v; want an error", n, err)
	}
	if n, err := r.WriteAt([]byte("x"), 0); n != 0 || err == nil {
		t.Fatalf("WriteAt on O_RDONLY = %d, %v; want an error", n, err)
	}
	w, err := fsys.OpenFile("f", os.O_WRONLY, 0)
	ok(t, err, "OpenFile(O_WRONLY)")
	defer w.Close()
	if n, err := w.Read(make([]byte, 4)); n != 0 || err == nil || err == io.EOF {
		t.Fatalf("Read on O_WRONLY = %d, %v; want an error", n, err)
	}
	wantContent(t, fsys, "f", []byte("data"))
}

func testRename(t *testing.T, fsys vfs.FS) {
	write(t, fsys, "a", []byte("A"))
	write(t, fsys, "b", []byte("B"))
	ok(t, fsys.Rename("a", "b"), "Rename over an existing file")
	if exists(t, fsys, "a") {
		t.Fatalf("a still exists after Rename(a, b)")
	}
	wantContent(t, fsys, "b", []byte("A"))

	err := fsys.Rename("missing", "c")
	wantPathErr(t, err, fs.ErrNotExist, "Rename of a missing file")

	ok(t, fsys.MkdirAll("d/e", 0o755), "MkdirAll")
	ok(t, fsys.Rename("b", "d/e/c"), "Rename across directories")
	wantContent(t, fsys, "d/e/c", []byte("A"))
	if exists(t, fsys, "b") {
		t.Fatalf("b still exists")
	}
	err = fsys.Rename("d/e/c", "nodir/c")
	wantPathErr(t, err, fs.ErrNotExist, "Rename into a missing directory")
	ok(t, fsys.Rename("d/e/c", "d/e/c"), "Rename onto itself")
	wantContent(t, fsys, "d/e/c", []byte("A"))

	// A file cannot replace a directory.
	if err := fsys.Rename("d/e/c", "d"); err == nil {
		t.Fatalf("Rename of a file over a directory: no error")
	}
	wantContent(t, fsys, "d/e/c", []byte("A"))

	// An open file keeps working across a rename.
	f, err := fsys.OpenFile("d/e/c", os.O_RDWR, 0)
	ok(t, err, "OpenFile")
	defer f.Close()
	ok(t, fsys.Rename("d/e/c", "z"), "Rename an open file")
	_, err = f.WriteAt([]byte("Z"), 1)
	ok(t, err, "WriteAt after Rename")
	ok(t, f.Sync(), "Sync")
	wantContent(t, fsys, "z", []byte("AZ"))
}

func testRenameDir(t *testing.T, fsys vfs.FS) {
	ok(t, fsys.MkdirAll("d/sub", 0o755), "MkdirAll")
	write(t, fsys, "d/sub/f", []byte("F"))
	ok(t, fsys.Rename("d", "e"), "Rename a directory")
	wantContent(t, fsys, "e/sub/f", []byte("F"))
	if exists(t, fsys, "d") {
		t.Fatalf("d still exists")
	}
	if err := fsys.Rename("e", "e/sub/x"); err == nil {
		t.Fatalf("Rename of a directory into itself: no error")
	}
	write(t, fsys, "g", nil)
	if err := fsys.Rename("e", "g"); err == nil {
		t.Fatalf("Rename of a directory over a file: no error")
	}
	wantContent(t, fsys, "e/sub/f", []byte("F"))
}

func testRemove(t *testing.T, fsys vfs.FS) {
	write(t, fsys, "f", []byte("x"))
	ok(t, fsys.Remove("f"), "Remove")
	if exists(t, fsys, "f") {
		t.Fatalf("f exists after Remove")
	}
	wantPathErr(t, fsys.Remove("f"), fs.ErrNotExist, "Remove of a missing file")
	wantPathErr(t, fsys.Remove("nodir/f"), fs.ErrNotExist, "Remove in a missing directory")

	ok(t, fsys.MkdirAll("d", 0o755), "MkdirAll")
	write(t, fsys, "d/f", []byte("x"))
	wantPathErr(t, fsys.Remove("d"), nil, "Remove of a non-empty directory")
	wantContent(t, fsys, "d/f", []byte("x"))
	ok(t, fsys.Remove("d/f"), "Remove d/f")
	ok(t, fsys.Remove("d"), "Remove of an empty directory")
	if exists(t, fsys, "d") {
		t.Fatalf("d exists after Remove")
	}
}

func testRemoveAll(t *testing.T, fsys vfs.FS) {
	ok(t, fsys.MkdirAll("d/e/f", 0o755), "MkdirAll")
	write(t, fsys, "d/x", []byte("x"))
	write(t, fsys, "d/e/y", []byte("y"))
	write(t, fsys, "keep", []byte("k"))
	ok(t, fsys.RemoveAll("d"), "RemoveAll")
	for _, name := range []string{"d", "d/x", "d/e", "d/e/y", "d/e/f"} {
		if exists(t, fsys, name) {
			t.Fatalf("%s exists after RemoveAll(d)", name)
		}
	}
	wantContent(t, fsys, "keep", []byte("k"))
	ok(t, fsys.RemoveAll("d"), "RemoveAll of a missing path")
	ok(t, fsys.RemoveAll("nodir/x"), "RemoveAll in a missing directory")
	ok(t, fsys.RemoveAll("keep"), "RemoveAll of a file")
	if exists(t, fsys, "keep") {
		t.Fatalf("keep exists after RemoveAll")
	}
	// "." is refused, as os refuses it. (The suite never tries "/": run
	// against a bare OS() by mistake, that would be a disaster.)
	write(t, fsys, "stay", []byte("s"))
	if err := fsys.RemoveAll("."); err == nil {
		t.Fatalf("RemoveAll(.): no error")
	}
	wantContent(t, fsys, "stay", []byte("s"))
	ok(t, fsys.RemoveAll(""), "RemoveAll of the empty name")
}

func testMkdirAll(t *testing.T, fsys vfs.FS) {
	ok(t, fsys.MkdirAll("a/b/c", 0o755), "MkdirAll")
	ok(t, fsys.MkdirAll("a/b/c", 0o755), "MkdirAll again")
	ok(t, fsys.MkdirAll("a/b", 0o755), "MkdirAll of a parent")
	for _, d := range []string{"a", "a/b", "a/b/c"} {
		fi, err := fsys.Stat(d)
		ok(t, err, "Stat")
		if !fi.IsDir() || !fi.Mode().IsDir() {
			t.Fatalf("%s: IsDir false, mode %v", d, fi.Mode())
		}
	}
	write(t, fsys, "a/file", nil)
	if err := fsys.MkdirAll("a/file", 0o755); err == nil {
		t.Fatalf("MkdirAll over a file: no error")
	}
	if err := fsys.MkdirAll("a/file/sub", 0o755); err == nil {
		t.Fatalf("MkdirAll below a file: no error")
	}
	if _, err := fsys.Create("a/file/sub"); err == nil {
		t.Fatalf("Create below a file: no error")
	}
}

func testStat(t *testing.T, fsys vfs.FS) {
	before := time.Now().Add(-time.Hour)
	write(t, fsys, "./f", []byte("12345"))
	fi, err := fsys.Stat("f")
	ok(t, err, "Stat")
	if fi.Name() != "f" || fi.Size() != 5 || fi.IsDir() || !fi.Mode().IsRegular() {
		t.Fatalf("Stat(f) = name %q size %d isdir %v mode %v", fi.Name(), fi.Size(), fi.IsDir(), fi.Mode())
	}
	if fi.Mode().Perm()&0o600 != 0o600 {
		t.Errorf("mode %v lacks owner read-write", fi.Mode())
	}
	if mt := fi.ModTime(); mt.Before(before) || mt.After(time.Now().Add(time.Hour)) {
		t.Errorf("ModTime %v is not about now", mt)
	}
	ok(t, fsys.MkdirAll("d/e", 0o755), "MkdirAll")
	fi, err = fsys.Stat("d/e")
	ok(t, err, "Stat dir")
	if fi.Name() != "e" || !fi.IsDir() {
		t.Fatalf("Stat(d/e) = name %q isdir %v", fi.Name(), fi.IsDir())
	}
	fi, err = fsys.Stat(".")
	ok(t, err, "Stat(.)")
	if !fi.IsDir() {
		t.Fatalf("Stat(.) is not a directory")
	}
	_, err = fsys.Stat("missing")
	wantPathErr(t, err, fs.ErrNotExist, "Stat of a missing file")
	_, err = fsys.Stat("missing/x")
	wantPathErr(t, err, fs.ErrNotExist, "Stat in a missing directory")
	_, err = fsys.Stat("f/x")
	wantPathErr(t, err, nil, "Stat below a file")

	// File.Stat follows writes.
	f, err := fsys.OpenFile("f", os.O_RDWR|os.O_APPEND, 0)
	ok(t, err, "OpenFile")
	defer f.Close()
	f.Write([]byte("678"))
	fi, err = f.Stat()
	ok(t, err, "File.Stat")
	if fi.Size() != 8 || fi.Name() != "f" {
		t.Fatalf("File.Stat = name %q size %d", fi.Name(), fi.Size())
	}
}

func testReaddir(t *testing.T, fsys vfs.FS) {
	ok(t, fsys.MkdirAll("d/sub", 0o755), "MkdirAll")
	want := []string{"a", "b", "c", "d", "e", "sub"}
	for _, n := range want {
		if n != "sub" {
			write(t, fsys, "d/"+n, []byte(n+n))
		}
	}
	infos, err := vfs.ReadDir(fsys, "d")
	ok(t, err, "ReadDir")
	if got := names(infos); !slices.Equal(got, want) {
		t.Fatalf("ReadDir = %q, want %q (sorted)", got, want)
	}
	for _, fi := range infos {
		if fi.Name() == "sub" {
			if !fi.IsDir() {
				t.Fatalf("sub is not a directory")
			}
		} else if fi.Size() != 2 || fi.IsDir() {
			t.Fatalf("%s: size %d isdir %v", fi.Name(), fi.Size(), fi.IsDir())
		}
	}

	// Paging: at most n at a time, then io.EOF.
	f, err := fsys.Open("d")
	ok(t, err, "Open dir")
	var got []string
	for {
		page, err := f.Readdirnames(4)
		if err == io.EOF {
			if len(page) != 0 {
				t.Fatalf("Readdirnames returned %d names with io.EOF", len(page))
			}
			break
		}
		ok(t, err, "Readdirnames(4)")
		if len(page) == 0 || len(page) > 4 {
			t.Fatalf("Readdirnames(4) returned %d names", len(page))
		}
		got = append(got, page...)
	}
	ok(t, f.Close(), "Close")
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("Readdirnames pages = %q, want %q", got, want)
	}
	f, err = fsys.Open("d")
	ok(t, err, "Open dir")
	defer f.Close()
	page, err := f.Readdir(2)
	ok(t, err, "Readdir(2)")
	all, err := f.Readdir(-1)
	ok(t, err, "Readdir(-1)")
	if len(page)+len(all) != len(want) {
		t.Fatalf("Readdir(2) + Readdir(-1) = %d entries, want %d", len(page)+len(all), len(want))
	}
	if rest, err := f.Readdir(0); len(rest) != 0 || err != nil {
		t.Fatalf("Readdir(0) at the end = %d, %v; want 0, nil", len(rest), err)
	}

	empty, err := vfs.ReadDir(fsys, "d/sub")
	ok(t, err, "ReadDir of an empty directory")
	if len(empty) != 0 {
		t.Fatalf("empty dir lists %q", names(empty))
	}
	_, err = vfs.ReadDir(fsys, "missing")
	wantPathErr(t, err, fs.ErrNotExist, "ReadDir of a missing directory")
	r, err := fsys.Open("d/a")
	ok(t, err, "Open")
	defer r.Close()
	if _, err := r.Readdir(-1); err == nil {
		t.Fatalf("Readdir of a file: no error")
	}
}

func testSyncDir(t *testing.T, fsys vfs.FS) {
	ok(t, fsys.MkdirAll("d", 0o755), "MkdirAll")
	write(t, fsys, "d/f", []byte("x"))
	d, err := fsys.Open("d")
	ok(t, err, "Open dir")
	ok(t, d.Sync(), "Sync of a directory")
	ok(t, d.Close(), "Close")
	ok(t, vfs.SyncDir(fsys, "d"), "SyncDir")
	ok(t, vfs.SyncDir(fsys, "."), "SyncDir(.)")
	wantPathErr(t, vfs.SyncDir(fsys, "missing"), fs.ErrNotExist, "SyncDir of a missing directory")
	f, err := fsys.Open("d/f")
	ok(t, err, "Open")
	ok(t, f.Sync(), "Sync of a read-only file")
	ok(t, f.Close(), "Close")
}

func testWriteFileAtomic(t *testing.T, fsys vfs.FS) {
	ok(t, fsys.MkdirAll("p", 0o755), "MkdirAll")
	ok(t, vfs.WriteFileAtomic(fsys, "p/recovery-point-offset-checkpoint", []byte("0\n1\nt 0 42\n"), 0o644), "WriteFileAtomic")
	ok(t, vfs.WriteFileAtomic(fsys, "p/recovery-point-offset-checkpoint", []byte("0\n1\nt 0 43\n"), 0o644), "WriteFileAtomic again")
	wantContent(t, fsys, "p/recovery-point-offset-checkpoint", []byte("0\n1\nt 0 43\n"))
	if exists(t, fsys, "p/recovery-point-offset-checkpoint.tmp") {
		t.Fatalf("the .tmp file remains")
	}
}

func testClose(t *testing.T, fsys vfs.FS) {
	f, err := fsys.Create("f")
	ok(t, err, "Create")
	ok(t, f.Close(), "Close")
	if err := f.Close(); err == nil {
		t.Fatalf("second Close: no error")
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Fatalf("Write after Close: no error")
	}
	if _, err := f.Read(make([]byte, 1)); err == nil || err == io.EOF {
		t.Fatalf("Read after Close = %v, want an error", err)
	}
}

func testChtimes(t *testing.T, fsys vfs.FS) {
	write(t, fsys, "f", []byte("x"))
	mt := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	ok(t, fsys.Chtimes("f", mt, mt), "Chtimes")
	fi, err := fsys.Stat("f")
	ok(t, err, "Stat")
	if !fi.ModTime().Equal(mt) {
		t.Fatalf("ModTime %v, want %v", fi.ModTime(), mt)
	}
	wantPathErr(t, fsys.Chtimes("missing", mt, mt), fs.ErrNotExist, "Chtimes of a missing file")
}

func testLock(t *testing.T, fsys vfs.FS) {
	ok(t, fsys.MkdirAll("logs", 0o755), "MkdirAll")
	l, err := fsys.Lock("logs/.lock")
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("Lock: %v", err)
	}
	ok(t, err, "Lock")
	if !exists(t, fsys, "logs/.lock") {
		t.Fatal("Lock did not create logs/.lock")
	}
	_, err = fsys.Lock("logs/.lock")
	wantPathErr(t, err, vfs.ErrLocked, "second Lock")
	ok(t, l.Close(), "Close")
	if err := l.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("second Close = %v, want fs.ErrClosed", err)
	}
	l, err = fsys.Lock("logs/.lock")
	ok(t, err, "Lock after Close")
	other, err := fsys.Lock("logs/other.lock")
	ok(t, err, "Lock of another file")
	ok(t, other.Close(), "Close")
	ok(t, l.Close(), "Close")
	if !exists(t, fsys, "logs/.lock") {
		t.Fatal("Close removed logs/.lock (Kafka leaves it)")
	}
	_, err = fsys.Lock("missing/.lock")
	wantPathErr(t, err, fs.ErrNotExist, "Lock in a missing directory")
}

func testOpenDir(t *testing.T, fsys vfs.FS) {
	ok(t, fsys.MkdirAll("d", 0o755), "MkdirAll")
	if _, err := fsys.OpenFile("d", os.O_RDWR, 0); err == nil {
		t.Fatalf("OpenFile(dir, O_RDWR): no error")
	}
	if _, err := fsys.Create("d"); err == nil {
		t.Fatalf("Create over a directory: no error")
	}
	d, err := fsys.Open("d")
	ok(t, err, "Open dir")
	defer d.Close()
	fi, err := d.Stat()
	ok(t, err, "Stat")
	if !fi.IsDir() || fi.Name() != "d" {
		t.Fatalf("dir Stat: name %q isdir %v", fi.Name(), fi.IsDir())
	}
	if n, err := d.Read(make([]byte, 1)); n != 0 || err == nil || err == io.EOF {
		t.Fatalf("Read of a directory = %d, %v; want an error", n, err)
	}
}

func testLargeFile(t *testing.T, fsys vfs.FS) {
	data := pattern(1<<20 + 17)
	f, err := fsys.Create("big")
	ok(t, err, "Create")
	for off := 0; off < len(data); off += 16 << 10 {
		_, err := f.Write(data[off:min(off+16<<10, len(data))])
		ok(t, err, "Write")
	}
	ok(t, f.Sync(), "Sync")
	ok(t, f.Close(), "Close")
	wantContent(t, fsys, "big", data)
}

func testConcurrentReadAt(t *testing.T, fsys vfs.FS) {
	data := pattern(64 << 10)
	write(t, fsys, "f", data)
	f, err := fsys.Open("f")
	ok(t, err, "Open")
	defer f.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			buf := make([]byte, 100)
			for i := range 200 {
				off := int64((g*7919 + i*104729) % (len(data) - 100))
				if _, err := f.ReadAt(buf, off); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(buf, data[off:off+100]) {
					errs <- fmt.Errorf("ReadAt(%d) returned wrong bytes", off)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func testRORead(t *testing.T, fsys vfs.FS) {
	for name, want := range readOnlyFiles {
		wantContent(t, fsys, name, []byte(want))
		wantContent(t, fsys, "/"+name, []byte(want))
	}
	f, err := fsys.Open("a.txt")
	ok(t, err, "Open")
	defer f.Close()
	if f.Name() != "a.txt" {
		t.Errorf("Name() = %q", f.Name())
	}
	b, err := io.ReadAll(f)
	ok(t, err, "ReadAll")
	if string(b) != readOnlyFiles["a.txt"] {
		t.Fatalf("read %q", b)
	}
	ok(t, f.Sync(), "Sync")
}

func testROReadAtSeek(t *testing.T, fsys vfs.FS) {
	want := []byte(readOnlyFiles["dir/b.log"])
	f, err := fsys.Open("dir/b.log")
	ok(t, err, "Open")
	defer f.Close()
	head := make([]byte, 10)
	io.ReadFull(f, head)
	buf := make([]byte, 100)
	if n, err := f.ReadAt(buf, 1000); n != 100 || err != nil || !bytes.Equal(buf, want[1000:1100]) {
		t.Fatalf("ReadAt(100, 1000) = %d, %v", n, err)
	}
	if n, err := f.ReadAt(buf, int64(len(want)-10)); n != 10 || err != io.EOF {
		t.Fatalf("ReadAt across EOF = %d, %v; want 10, io.EOF", n, err)
	}
	// Read continues where it was, ReadAt notwithstanding.
	next := make([]byte, 10)
	io.ReadFull(f, next)
	if !bytes.Equal(next, want[10:20]) {
		t.Fatalf("Read after ReadAt = %v, want %v", next, want[10:20])
	}
	pos, err := f.Seek(-5, io.SeekEnd)
	if err != nil || pos != int64(len(want)-5) {
		t.Fatalf("Seek(-5, end) = %d, %v", pos, err)
	}
	rest, _ := io.ReadAll(f)
	if !bytes.Equal(rest, want[len(want)-5:]) {
		t.Fatalf("read %v after Seek", rest)
	}
}

func testROStat(t *testing.T, fsys vfs.FS) {
	fi, err := fsys.Stat("dir/b.log")
	ok(t, err, "Stat")
	if fi.Name() != "b.log" || fi.Size() != 3000 || fi.IsDir() {
		t.Fatalf("Stat = %q %d %v", fi.Name(), fi.Size(), fi.IsDir())
	}
	fi, err = fsys.Stat("dir/sub")
	ok(t, err, "Stat dir")
	if !fi.IsDir() {
		t.Fatalf("dir/sub is not a directory")
	}
	fi, err = fsys.Stat("/")
	ok(t, err, "Stat(/)")
	if !fi.IsDir() {
		t.Fatalf("/ is not a directory")
	}
	f, err := fsys.Open("a.txt")
	ok(t, err, "Open")
	defer f.Close()
	fi, err = f.Stat()
	ok(t, err, "File.Stat")
	if fi.Size() != int64(len(readOnlyFiles["a.txt"])) {
		t.Fatalf("File.Stat size %d", fi.Size())
	}
}

func testROReaddir(t *testing.T, fsys vfs.FS) {
	infos, err := vfs.ReadDir(fsys, "dir")
	ok(t, err, "ReadDir")
	if got, want := names(infos), []string{"b.log", "sub", "z.json"}; !slices.Equal(got, want) {
		t.Fatalf("ReadDir(dir) = %q, want %q", got, want)
	}
	infos, err = vfs.ReadDir(fsys, ".")
	ok(t, err, "ReadDir(.)")
	if got, want := names(infos), []string{"a.txt", "dir"}; !slices.Equal(got, want) {
		t.Fatalf("ReadDir(.) = %q, want %q", got, want)
	}
	f, err := fsys.Open("dir")
	ok(t, err, "Open")
	defer f.Close()
	var got []string
	for {
		page, err := f.Readdirnames(2)
		if err == io.EOF {
			break
		}
		ok(t, err, "Readdirnames(2)")
		got = append(got, page...)
	}
	slices.Sort(got)
	if want := []string{"b.log", "sub", "z.json"}; !slices.Equal(got, want) {
		t.Fatalf("Readdirnames pages = %q, want %q", got, want)
	}
}

func testRONotExist(t *testing.T, fsys vfs.FS) {
	_, err := fsys.Open("missing")
	wantPathErr(t, err, fs.ErrNotExist, "Open missing")
	_, err = fsys.Stat("dir/missing")
	wantPathErr(t, err, fs.ErrNotExist, "Stat missing")
	_, err = vfs.ReadFile(fsys, "nodir/x")
	wantPathErr(t, err, fs.ErrNotExist, "ReadFile missing")
}

func testROMutations(t *testing.T, fsys vfs.FS) {
	perm := func(err error, what string) {
		t.Helper()
		wantPathErr(t, err, fs.ErrPermission, what)
	}
	_, err := fsys.Create("new")
	perm(err, "Create")
	_, err = fsys.OpenFile("a.txt", os.O_RDWR, 0)
	perm(err, "OpenFile(O_RDWR)")
	_, err = fsys.OpenFile("new", os.O_WRONLY|os.O_CREATE, 0o644)
	perm(err, "OpenFile(O_CREATE)")
	perm(fsys.MkdirAll("x/y", 0o755), "MkdirAll")
	perm(fsys.Remove("a.txt"), "Remove")
	perm(fsys.RemoveAll("dir"), "RemoveAll")
	perm(fsys.Rename("a.txt", "b.txt"), "Rename")
	perm(fsys.Chtimes("a.txt", time.Now(), time.Now()), "Chtimes")
	_, err = fsys.Lock("dir/.lock")
	perm(err, "Lock")
	f, err := fsys.Open("a.txt")
	ok(t, err, "Open")
	defer f.Close()
	_, err = f.Write([]byte("x"))
	perm(err, "Write")
	_, err = f.WriteAt([]byte("x"), 0)
	perm(err, "WriteAt")
	perm(f.Truncate(0), "Truncate")
	wantContent(t, fsys, "a.txt", []byte(readOnlyFiles["a.txt"]))
}
