package vfsafero_test

import (
	"testing"

	"github.com/segkit/segkit/interop/vfsafero"
	"github.com/segkit/segkit/vfs"
	"github.com/segkit/segkit/vfs/vfstest"
	"github.com/spf13/afero"
)

func TestConformance(t *testing.T) {
	t.Run("memmap", func(t *testing.T) {
		vfstest.Run(t, func(t *testing.T) vfs.FS { return vfsafero.New(afero.NewMemMapFs()) })
	})
	t.Run("os", func(t *testing.T) {
		vfstest.Run(t, func(t *testing.T) vfs.FS {
			return vfsafero.New(afero.NewBasePathFs(afero.NewOsFs(), t.TempDir()))
		})
	})
}
