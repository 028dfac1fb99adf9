//go:build windows

package vfs

import (
	"io/fs"
	"os"
)

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

// openChecked opens name with open and checks that it is a regular file or
// a directory (checkOpened). Windows has no FIFOs in the file namespace
// (its named pipes live under \\.\pipe\), so the open cannot block on one;
// stat is not needed.
func openChecked(name string, flag int, open func(flag int) (*os.File, error), stat func(string) (fs.FileInfo, error)) (*os.File, error) {
	f, err := open(flag)
	if err != nil {
		return nil, err
	}
	return checkFile(name, f)
}
