//go:build linux

package maprange

import (
	"os"
	"syscall"
)

var pageSize = int64(os.Getpagesize())

// For returns the Func that maps ranges of f, or nil where files are not
// mapped. f must stay open while mappings are in use.
func For(f *os.File) Func {
	fd := int(f.Fd())
	return func(off int64, n int) ([]byte, func(), error) {
		if off < 0 || n <= 0 {
			return nil, nil, syscall.EINVAL
		}
		start := off &^ (pageSize - 1)
		b, err := syscall.Mmap(fd, start, n+int(off-start), syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			return nil, nil, &os.PathError{Op: "mmap", Path: f.Name(), Err: err}
		}
		return b[off-start:], func() { syscall.Munmap(b) }, nil
	}
}

// whole maps the first size bytes of f.
func whole(f *os.File, size int64) ([]byte, func(), error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, &os.PathError{Op: "mmap", Path: f.Name(), Err: err}
	}
	return b, func() { syscall.Munmap(b) }, nil
}
