package vfs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMapUsesMmap checks that Map maps OS files (through Sub too) where the
// platform has mmap, and copies otherwise.
func TestMapUsesMmap(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "i"), []byte("12345678"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fsys FS
		name string
	}{
		{OS(), filepath.ToSlash(filepath.Join(dir, "i"))},
		{Sub(OS(), dir), "i"},
		{Sub(Sub(OS(), filepath.Dir(dir)), filepath.Base(dir)), "i"},
	} {
		m, err := Map(tc.fsys, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if (m.mm != nil) != haveMmap {
			t.Errorf("Map(%s, %s): mapped %v, platform has mmap %v", tc.fsys.Name(), tc.name, m.mm != nil, haveMmap)
		}
		m.Close()
	}
}
