package maprange

// Func maps n bytes of a file at off, read-only; release unmaps them.
type Func func(off int64, n int) (b []byte, release func(), err error)
