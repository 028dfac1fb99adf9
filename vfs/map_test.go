package vfs_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"testing"

	"github.com/segkit/segkit/vfs"
)

func TestMap(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1000)
	for _, tc := range []struct {
		name string
		fsys vfs.FS
	}{
		{"os", vfs.Sub(vfs.OS(), t.TempDir())},
		{"mem", vfs.NewMem()},
		{"faults(mem)", vfs.WithFaults(vfs.NewMem(), nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			must(t, vfs.WriteFile(tc.fsys, "00000000000000000000.index", data, 0o644))
			must(t, vfs.WriteFile(tc.fsys, "empty.index", nil, 0o644))
			m, err := vfs.Map(tc.fsys, "00000000000000000000.index")
			must(t, err)
			if m.Len() != len(data) {
				t.Fatalf("Len %d, want %d", m.Len(), len(data))
			}
			for _, i := range []int{0, 1, 4095, 4096, len(data) - 1} {
				if m.At(i) != data[i] {
					t.Fatalf("At(%d) = %q, want %q", i, m.At(i), data[i])
				}
			}
			buf := make([]byte, 8)
			if n, err := m.ReadAt(buf, 16*500+4); n != 8 || err != nil || string(buf) != "456789ab" {
				t.Fatalf("ReadAt = %d, %v, %q", n, err, buf)
			}
			if n, err := m.ReadAt(buf, int64(len(data)-3)); n != 3 || err != io.EOF {
				t.Fatalf("ReadAt across the end = %d, %v; want 3, io.EOF", n, err)
			}
			must(t, m.Close())
			e, err := vfs.Map(tc.fsys, "empty.index")
			must(t, err)
			if e.Len() != 0 {
				t.Fatalf("empty map Len %d", e.Len())
			}
			must(t, e.Close())
			if _, err := vfs.Map(tc.fsys, "missing.index"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Map of a missing file: %v", err)
			}
		})
	}
}
