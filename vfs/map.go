package vfs

import (
	"io"
	"io/fs"
)

// ReadOnlyMap is a read-only view of a whole file, for index lookups (Kafka
// maps its .index and .timeindex files). From OS() on native platforms it is
// a memory mapping (golang.org/x/exp/mmap): opening costs no read and
// lookups no system call. Otherwise (another FS, or GOOS=js/wasip1) it holds
// a copy of the file read at Map time.
//
// ReadAt, At and Len may be called concurrently; Close may not be called
// concurrently with them. A mapping sees the file's length as it was at Map
// time. Map only files that are no longer written: truncating a mapped file
// makes later accesses past the new end fault (SIGBUS) on Unix.
type ReadOnlyMap struct {
	mm   *platformMap // nil for a copy
	data []byte
}

// Map returns a read-only view of the named file of fsys: a memory mapping
// if fsys is OS() (or a Sub of it) on a native platform, a copy otherwise.
func Map(fsys FS, name string) (*ReadOnlyMap, error) {
	osName := name
	under := fsys
	for {
		s, ok := under.(*subFS)
		if !ok {
			break
		}
		osName, under = s.full(osName), s.fsys
	}
	if _, ok := under.(osFS); ok && haveMmap {
		mm, err := mmapOpen(osName)
		if err != nil {
			return nil, err
		}
		return &ReadOnlyMap{mm: mm}, nil
	}
	data, err := ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	return &ReadOnlyMap{data: data}, nil
}

// Len returns the length of the file.
func (m *ReadOnlyMap) Len() int {
	if m.mm != nil {
		return m.mm.Len()
	}
	return len(m.data)
}

// At returns the byte at index i; it panics if i is out of range.
func (m *ReadOnlyMap) At(i int) byte {
	if m.mm != nil {
		return m.mm.At(i)
	}
	return m.data[i]
}

// ReadAt implements io.ReaderAt.
func (m *ReadOnlyMap) ReadAt(p []byte, off int64) (int, error) {
	if m.mm != nil {
		return m.mm.ReadAt(p, off)
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: "map", Err: errNegativeOffset}
	}
	if off >= int64(len(m.data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, m.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Close releases the mapping. Later calls to At panic and to ReadAt fail.
func (m *ReadOnlyMap) Close() error {
	if m.mm != nil {
		err := m.mm.Close()
		m.mm = nil
		return err
	}
	m.data = nil
	return nil
}
