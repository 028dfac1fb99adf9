package format_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/segkit/segkit/format"
)

// eofReader returns io.EOF with a full read that reaches the end, as
// io.ReaderAt allows.
type eofReader struct{ b []byte }

func (r eofReader) ReadAt(p []byte, off int64) (int, error) {
	n := copy(p, r.b[min(off, int64(len(r.b))):])
	if off+int64(n) == int64(len(r.b)) {
		return n, io.EOF
	}
	return n, nil
}

func TestReadFullAt(t *testing.T) {
	data := []byte("0123456789")
	for _, r := range []io.ReaderAt{bytes.NewReader(data), eofReader{data}} {
		p := make([]byte, 4)
		if n, err := format.ReadFullAt(r, p, 6); n != 4 || err != nil || string(p) != "6789" {
			t.Fatalf("%T: full read to the end = %d, %v, %q", r, n, err, p)
		}
		if n, err := format.ReadFullAt(r, p, 8); n != 2 || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("%T: short read = %d, %v; want 2, io.ErrUnexpectedEOF", r, n, err)
		}
	}
}
