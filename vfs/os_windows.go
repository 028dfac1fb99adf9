//go:build windows

package vfs

import "os"

// osFile returns f as a File; a directory gets a no-op Sync, since Windows
// cannot flush a directory handle and makes renames durable by itself.
func osFile(f *os.File) File {
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return winDir{f}
	}
	return f
}

type winDir struct{ *os.File }

func (winDir) Sync() error { return nil }

// osErr returns err as it is.
func osErr(err error) error { return err }
