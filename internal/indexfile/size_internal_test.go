package indexfile

import (
	"testing"
	"unsafe"
)

// TestViewSize keeps the View each append publishes within a 64-byte
// allocation (BenchmarkAppend in package index measures it).
func TestViewSize(t *testing.T) {
	if n := unsafe.Sizeof(View{}); n > 64 {
		t.Errorf("a View takes %d bytes, want at most 64", n)
	}
}
