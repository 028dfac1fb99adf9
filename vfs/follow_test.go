//go:build !windows && !js && !wasip1

package vfs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/segkit/segkit/vfs"
)

// TestReadDirFollow: links are described by their targets, under their
// own names, and Followed says so; a dangling link keeps its own
// description, which CheckRegular refuses; entries that are not links are
// ReadDir's.
func TestReadDirFollow(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "a"), []byte("hello"), 0o644))
	must(os.Mkdir(filepath.Join(dir, "d"), 0o755))
	must(syscall.Mkfifo(filepath.Join(dir, "g"), 0o644))
	for link, target := range map[string]string{"b": "a", "c": "d", "e": "nothing", "f": "g", "h": "b"} {
		must(os.Symlink(target, filepath.Join(dir, link)))
	}
	type entry struct {
		Name     string
		Followed bool
		Size     int64 // regular files only
		Type     fs.FileMode
		Refused  string // CheckRegular's error, "" for a regular file
	}
	want := []entry{
		{"a", false, 5, 0, ""},
		{"b", true, 5, 0, ""},
		{"c", true, 0, fs.ModeDir, "open c: not a regular file (a directory)"},
		{"d", false, 0, fs.ModeDir, "open d: not a regular file (a directory)"},
		{"e", false, 0, fs.ModeSymlink, "open e: not a regular file (a symbolic link to nothing)"},
		{"f", true, 0, fs.ModeNamedPipe, "open f: not a regular file (a FIFO)"},
		{"g", false, 0, fs.ModeNamedPipe, "open g: not a regular file (a FIFO)"},
		{"h", true, 5, 0, ""}, // a link to a link
	}
	for _, tc := range []struct {
		name string
		fsys vfs.FS
	}{
		{"os", vfs.Sub(vfs.OS(), dir)},
		{"root", fromRoot(t, dir)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			infos, err := vfs.ReadDirFollow(tc.fsys, ".")
			if err != nil {
				t.Fatal(err)
			}
			var got []entry
			for _, fi := range infos {
				e := entry{Name: fi.Name(), Followed: vfs.Followed(fi), Type: fi.Mode().Type()}
				if fi.Mode().IsRegular() {
					e.Size = fi.Size()
				}
				if err := vfs.CheckRegular(fi.Name(), fi); err != nil {
					e.Refused = err.Error()
				}
				got = append(got, e)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ReadDirFollow (-want +got):\n%s", diff)
			}
			plain, err := vfs.ReadDir(tc.fsys, ".")
			if err != nil {
				t.Fatal(err)
			}
			for _, fi := range plain {
				if vfs.Followed(fi) {
					t.Errorf("ReadDir: %s reported as followed", fi.Name())
				}
			}
		})
	}
}

func fromRoot(t *testing.T, dir string) vfs.FS {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return vfs.FromRoot(root)
}

// TestReadDirFollowMem: without links (NewMem has none), ReadDirFollow is
// ReadDir.
func TestReadDirFollowMem(t *testing.T) {
	fsys := vfs.NewMem()
	if err := fsys.MkdirAll("p", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vfs.WriteFile(fsys, "p/x", []byte("12"), 0o644); err != nil {
		t.Fatal(err)
	}
	infos, err := vfs.ReadDirFollow(fsys, "p")
	if err != nil || len(infos) != 1 || infos[0].Name() != "x" || infos[0].Size() != 2 || vfs.Followed(infos[0]) {
		t.Errorf("ReadDirFollow = %v, %v", infos, err)
	}
}
