package vfs_test

import (
	"archive/zip"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/segkit/segkit/vfs"
	"github.com/segkit/segkit/vfs/vfstest"
)

func TestConformance(t *testing.T) {
	t.Run("os", func(t *testing.T) {
		vfstest.Run(t, func(t *testing.T) vfs.FS { return vfs.Sub(vfs.OS(), t.TempDir()) })
	})
	t.Run("mem", func(t *testing.T) {
		vfstest.Run(t, func(t *testing.T) vfs.FS { return vfs.NewMem() })
	})
	t.Run("mem/sub", func(t *testing.T) {
		vfstest.Run(t, func(t *testing.T) vfs.FS {
			m := vfs.NewMem()
			if err := m.MkdirAll("/root/dir", 0o755); err != nil {
				t.Fatal(err)
			}
			return vfs.Sub(m, "/root/dir")
		})
	})
	t.Run("faults(mem)", func(t *testing.T) {
		vfstest.Run(t, func(t *testing.T) vfs.FS { return vfs.WithFaults(vfs.NewMem(), nil) })
	})
	t.Run("faults(mem)/never", func(t *testing.T) {
		vfstest.Run(t, func(t *testing.T) vfs.FS {
			return vfs.WithFaults(vfs.NewMem(), vfs.EIO(vfs.Not(vfs.Always())))
		})
	})
	t.Run("crashclone(mem)", func(t *testing.T) {
		// A crash clone is an ordinary Mem: run the suite on one.
		vfstest.Run(t, func(t *testing.T) vfs.FS {
			m := vfs.NewMem()
			m.MkdirAll("x", 0o755)
			return m.CrashClone(vfs.CrashConfig{Seed: 1, UnsyncedDataPercent: 50, TornWrites: true})
		})
	})
}

func TestConformanceReadOnly(t *testing.T) {
	t.Run("iofs/mapfs", func(t *testing.T) {
		vfstest.RunReadOnly(t, func(t *testing.T, files map[string]string) vfs.FS {
			m := fstest.MapFS{}
			for name, data := range files {
				m[name] = &fstest.MapFile{Data: []byte(data), Mode: 0o644}
			}
			return vfs.FromIOFS(m)
		})
	})
	t.Run("iofs/dirfs", func(t *testing.T) {
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
			return vfs.FromIOFS(os.DirFS(dir))
		})
	})
	t.Run("iofs/zip", func(t *testing.T) {
		// A zip's compressed members are neither io.ReaderAt nor
		// io.Seeker: FromIOFS buffers them.
		vfstest.RunReadOnly(t, func(t *testing.T, files map[string]string) vfs.FS {
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			var names []string
			for name := range files {
				names = append(names, name)
			}
			slices.Sort(names)
			dirs := map[string]bool{}
			for _, name := range names {
				for d := path.Dir(name); d != "." && !dirs[d]; d = path.Dir(d) {
					dirs[d] = true
					if _, err := zw.Create(d + "/"); err != nil {
						t.Fatal(err)
					}
				}
				w, err := zw.Create(name)
				if err != nil {
					t.Fatal(err)
				}
				w.Write([]byte(files[name]))
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			if err != nil {
				t.Fatal(err)
			}
			return vfs.FromIOFS(zr)
		})
	})
}
