package format

import (
	"errors"
	"fmt"
	"io"
)

// ReadFullAt reads len(p) bytes at off. An io.ReaderAt may return io.EOF
// together with a full read, which is not an error here; a short read is
// io.ErrUnexpectedEOF, wrapped with the offset and the counts.
func ReadFullAt(r io.ReaderAt, p []byte, off int64) (int, error) {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return n, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = fmt.Errorf("short read at %d: %d of %d bytes: %w", off, n, len(p), io.ErrUnexpectedEOF)
	}
	return n, err
}
