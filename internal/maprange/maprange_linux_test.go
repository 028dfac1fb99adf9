package maprange_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/segkit/segkit/internal/maprange"
)

// TestMappingFaulted: a Mapping's Faulted takes a fault at one of its own
// addresses only, and panics again with a fault elsewhere; ForReader maps
// OS files only, of MinSize bytes or more.
func TestMappingFaulted(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, make([]byte, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if maprange.ForReader(f, maprange.MinSize) == nil {
		t.Error("ForReader(an *os.File, MinSize) = nil")
	}
	if maprange.ForReader(f, maprange.MinSize-1) != nil {
		t.Error("ForReader(an *os.File, MinSize-1) is not nil: a small file is read")
	}
	if maprange.ForReader(strings.NewReader("x"), maprange.MinSize) != nil {
		t.Error("ForReader(a strings.Reader) is not nil")
	}
	m, err := maprange.Whole(f, 8192)
	if err != nil || m == nil {
		t.Fatalf("Whole = %v, %v", m, err)
	}
	defer m.Close()
	b, release, err := m.Func()(4096, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	in := uintptr(unsafe.Pointer(&b[0]))
	if m.Faulted(nil) {
		t.Error("Faulted(nil) = true")
	}
	if !m.Faulted(fault{in}) {
		t.Error("Faulted(a fault in the mapping) = false")
	}
	elsewhere := fault{in + 1<<30}
	if p := panics(func() { m.Faulted(elsewhere) }); p != elsewhere {
		t.Errorf("Faulted(a fault elsewhere) panicked with %v, want it again", p)
	}
}
