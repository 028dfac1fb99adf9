package vfs_test

import (
	"bytes"
	"path"
	"testing"

	"github.com/segkit/segkit/vfs"
)

// TestStartWriteback checks that StartWriteback is a hint: on every FS the
// file's content and size are what was written, before and after Sync, and
// a closed file gives no panic.
func TestStartWriteback(t *testing.T) {
	data := bytes.Repeat([]byte("segkit "), 100_000)
	for _, tc := range []struct {
		name string
		fsys vfs.FS
		dir  string
	}{
		{"mem", vfs.NewMem(), "/d"},
		{"os", vfs.OS(), t.TempDir()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.fsys.MkdirAll(tc.dir, 0o755); err != nil {
				t.Fatal(err)
			}
			name := path.Join(tc.dir, "f")
			f, err := tc.fsys.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(data); err != nil {
				t.Fatal(err)
			}
			if err := vfs.StartWriteback(f); err != nil {
				t.Fatalf("StartWriteback: %v", err)
			}
			if fi, err := f.Stat(); err != nil || fi.Size() != int64(len(data)) {
				t.Fatalf("after StartWriteback: size %v, %v", fi.Size(), err)
			}
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			_ = vfs.StartWriteback(f) // closed: an error or nil, no panic
			got, err := vfs.ReadFile(tc.fsys, name)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes, %v", len(got), err)
			}
			d, err := tc.fsys.Open(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			_ = vfs.StartWriteback(d) // a directory: nothing to write
			d.Close()
		})
	}
}
