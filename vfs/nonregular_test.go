package vfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/vfs"
	"github.com/segkit/segkit/vfs/vfstest"
)

// TestReadFileRefusesDirectory: ReadFile of a directory fails with
// ErrNotRegular on every FS, instead of each FS's own read error.
func TestReadFileRefusesDirectory(t *testing.T) {
	for _, tc := range []struct {
		name string
		fsys func(t *testing.T) vfs.FS
	}{
		{"os", func(t *testing.T) vfs.FS { return vfs.Sub(vfs.OS(), t.TempDir()) }},
		{"mem", func(t *testing.T) vfs.FS { return vfs.NewMem() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := tc.fsys(t)
			if err := fsys.MkdirAll("d", 0o755); err != nil {
				t.Fatal(err)
			}
			_, err := vfs.ReadFile(fsys, "d")
			if !errors.Is(err, vfs.ErrNotRegular) || !strings.Contains(err.Error(), "d: not a regular file (a directory)") {
				t.Errorf("ReadFile(dir) = %v, want ErrNotRegular naming d", err)
			}
		})
	}
}

// TestReadFileLimit: ReadFileLimit reads a file up to its limit, and
// refuses a larger one from its Stat size, without reading it.
func TestReadFileLimit(t *testing.T) {
	fsys := vfs.NewMem()
	if err := vfs.WriteFile(fsys, "f", []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		limit   int64
		want    string
		tooLong bool
	}{
		{-1, "0123456789", false},
		{10, "0123456789", false},
		{11, "0123456789", false},
		{9, "", true},
		{0, "", true},
	} {
		b, err := vfs.ReadFileLimit(fsys, "f", tc.limit)
		if tc.tooLong {
			if !errors.Is(err, vfs.ErrTooLarge) || !strings.Contains(err.Error(), "f: ") {
				t.Errorf("limit %d: %q, %v; want ErrTooLarge naming f", tc.limit, b, err)
			}
			continue
		}
		if err != nil || string(b) != tc.want {
			t.Errorf("limit %d: %q, %v; want %q", tc.limit, b, err, tc.want)
		}
	}
}

// TestReadFileLimitSparse: a sparse 1 TiB file is refused by its size, at
// once, whatever the disk holds.
func TestReadFileLimitSparse(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		f.Close()
		t.Skipf("no sparse 1 TiB file here: %v", err)
	}
	f.Close()
	_, err = vfs.ReadFileLimit(vfs.Sub(vfs.OS(), dir), "sparse", 1<<20)
	if !errors.Is(err, vfs.ErrTooLarge) || !strings.Contains(err.Error(), "1099511627776 bytes") {
		t.Errorf("got %v, want ErrTooLarge with the size", err)
	}
}

// TestConformanceReadOnlyRoot runs the read-only conformance suite on
// FromRoot, as conformance_test.go does on FromIOFS.
func TestConformanceReadOnlyRoot(t *testing.T) {
	vfstest.RunReadOnly(t, func(t *testing.T, files map[string]string) vfs.FS {
		dir := t.TempDir()
		for name, data := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { root.Close() })
		return vfs.FromRoot(root)
	})
}

// TestFromRootRefusesEscape: FromRoot refuses names and links that leave
// the root, as os.Root does.
func TestFromRootRefusesEscape(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "root")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(top, "secret"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret", filepath.Join(dir, "link")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fsys := vfs.FromRoot(root)
	for _, name := range []string{"link", "../secret"} {
		if f, err := fsys.Open(name); err == nil {
			f.Close()
			t.Errorf("Open(%q) left the root", name)
		}
	}
	if _, err := vfs.ReadFile(fsys, "link"); err == nil {
		t.Error("ReadFile through a link leaving the root succeeded")
	}
	infos, err := vfs.ReadDirFollow(fsys, ".")
	if err != nil || len(infos) != 1 || vfs.Followed(infos[0]) || !errors.Is(vfs.CheckRegular("link", infos[0]), vfs.ErrNotRegular) {
		t.Errorf("ReadDirFollow: %v %v: want the link's own description, not regular", infos, err)
	}
}
