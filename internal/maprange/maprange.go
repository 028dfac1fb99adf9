package maprange

import (
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"
)

// Func maps n bytes of a file at off, read-only; release unmaps them.
type Func func(off int64, n int) (b []byte, release func(), err error)

// Mapping is one read-only mapping of the start of a file, for readers
// that pass over a file more than once: its pages are faulted in once.
type Mapping struct {
	name    string
	b       []byte
	release func()
}

// Whole maps the first size bytes of f, or returns nil, nil where files
// are not mapped; an error means the mapping failed (the caller reads
// instead). f must stay open while the mapping is in use.
func Whole(f *os.File, size int64) (*Mapping, error) {
	b, release, err := whole(f, size)
	if b == nil || err != nil {
		return nil, err
	}
	return &Mapping{name: f.Name(), b: b, release: release}, nil
}

// MinSize is the least size ForReader maps. Below it, reading costs
// less: a mapping is a system call to make and one to remove, a fault per
// 64 KiB read, and removing it interrupts the process's threads on other
// cores to flush their TLBs. segviz verify of 1,000 partitions of
// 256 KiB took 0.23 s on two cores with the files read and 0.27 s mapped
// (0.40 s and 0.45 s on one core); from about 1 MiB on the two are even,
// and above it mapping wins (by 10-20% on a 1 GiB segment).
const MinSize = 1 << 20

// ForReader returns For(r) when r is an *os.File of which size bytes are
// to be read, at least MinSize, else nil: a reader of an io.ReaderAt
// maps it where it can and where that pays, and reads it otherwise.
func ForReader(r io.ReaderAt, size int64) Func {
	if size < MinSize {
		return nil
	}
	if f, ok := r.(*os.File); ok {
		return For(f)
	}
	return nil
}

// Func returns a Func serving ranges of m without mapping again; their
// release does nothing (Close unmaps).
func (m *Mapping) Func() Func {
	return func(off int64, n int) ([]byte, func(), error) {
		if off < 0 || n <= 0 || off > int64(len(m.b)) || int64(n) > int64(len(m.b))-off {
			return nil, nil, fmt.Errorf("maprange: %s: bytes %d+%d are outside the mapping of %d", m.name, off, n, len(m.b))
		}
		return m.b[off : off+int64(n) : off+int64(n)], func() {}, nil
	}
}

// Holds reports whether addr, a faulting address (the Addr of a panic
// under debug.SetPanicOnFault), lies in m.
func (m *Mapping) Holds(addr uintptr) bool {
	if len(m.b) == 0 {
		return false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m.b)))
	return addr >= base && addr-base < uintptr(len(m.b))
}

// Faulted is the package's Faulted for a fault in m only: it reports
// whether recovered is a fault at an address m holds, false for nil, and
// panics again with anything else (a fault elsewhere included).
func (m *Mapping) Faulted(recovered any) bool { return faulted(recovered, m.Holds) }

// Close unmaps m. The slices it served must no longer be used.
func (m *Mapping) Close() {
	if m.release != nil {
		m.release()
		m.release, m.b = nil, nil
	}
}

// ErrShrank is the I/O error of a file that shrank under a mapping while
// it was read: reading the pages past its new end faulted.
var ErrShrank = errors.New("the file shrank while it was read")

// Faulted reports whether recovered, the result of recover(), is a fault
// on a mapping (a runtime error with an Addr, under
// debug.SetPanicOnFault), and panics again with any other panic. It
// reports false for nil: no panic.
func Faulted(recovered any) bool {
	return faulted(recovered, func(uintptr) bool { return true })
}

// faulted is Faulted for the faults at an address in reports true.
func faulted(recovered any, in func(addr uintptr) bool) bool {
	if recovered == nil {
		return false
	}
	if e, ok := recovered.(interface{ Addr() uintptr }); ok && e != nil && in(e.Addr()) {
		return true
	}
	panic(recovered)
}
