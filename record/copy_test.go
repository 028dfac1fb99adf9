package record

import (
	"bytes"
	"testing"
)

// TestCopyValue holds copyValue to copy's result for lengths around its
// threshold and the 64-byte moves, at every alignment of source and
// destination, and for a source and destination that overlap either way
// (where the moves cannot be used and memmove must run).
func TestCopyValue(t *testing.T) {
	buf := make([]byte, 8192)
	for i := range buf {
		buf[i] = byte(i*7 + i>>8)
	}
	for _, n := range []int{1, 63, 64, 100, 255, 256, 257, 319, 320, 321, 1000, 1024, 4097} {
		for off := range 64 {
			src := buf[off : off+n]
			got := make([]byte, n+128)
			want := make([]byte, n+128)
			d := (off * 5) % 64
			if k := copyValue(got[d:], src); k != n {
				t.Fatalf("n %d: copied %d", n, k)
			}
			copy(want[d:], src)
			if !bytes.Equal(got, want) {
				t.Fatalf("n %d, source at %d, destination at %d: differs from copy", n, off, d)
			}
		}
		for _, shift := range []int{-100, -64, -1, 1, 63, 64, 200} {
			a := append([]byte(nil), buf[:n+512]...)
			b := append([]byte(nil), buf[:n+512]...)
			s, d := 256, 256+shift
			if k := copyValue(a[d:], a[s:s+n]); k != n {
				t.Fatalf("n %d, overlap %d: copied %d", n, shift, k)
			}
			copy(b[d:], b[s:s+n])
			if !bytes.Equal(a, b) {
				t.Fatalf("n %d, destination %d bytes from the source: differs from copy", n, shift)
			}
		}
	}
}
