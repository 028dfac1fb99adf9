//go:build !js && !wasip1

package vfs

import (
	"io/fs"
	"path/filepath"

	"golang.org/x/exp/mmap"
)

const haveMmap = true

type platformMap = mmap.ReaderAt

func mmapOpen(name string) (*platformMap, error) {
	mm, err := mmap.Open(filepath.FromSlash(name))
	if err != nil {
		if _, ok := err.(*fs.PathError); ok {
			return nil, err
		}
		return nil, &fs.PathError{Op: "mmap", Path: name, Err: err}
	}
	return mm, nil
}
