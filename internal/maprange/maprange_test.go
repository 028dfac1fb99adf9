package maprange_test

import (
	"errors"
	"testing"

	"github.com/segkit/segkit/internal/maprange"
)

// fault looks like the runtime error of a fault under
// debug.SetPanicOnFault: an error with the faulting address.
type fault struct{ addr uintptr }

func (f fault) Error() string  { return "fault" }
func (f fault) Addr() uintptr  { return f.addr }
func (f fault) RuntimeError()  {}
func panics(fn func()) (p any) { defer func() { p = recover() }(); fn(); return nil }

func TestFaulted(t *testing.T) {
	if maprange.Faulted(nil) {
		t.Error("Faulted(nil) = true")
	}
	if !maprange.Faulted(fault{0x1000}) {
		t.Error("Faulted(a fault) = false")
	}
	other := errors.New("not a fault")
	if p := panics(func() { maprange.Faulted(other) }); p != other {
		t.Errorf("Faulted(another panic) panicked with %v, want it again", p)
	}
}
