package format

import (
	"errors"
	"fmt"
	"testing"
)

func TestCorruptionError(t *testing.T) {
	inner := Corruptf("", 5, ErrCRC, "stored %d computed %d", 1, 2)
	outer := Corrupt("00000000000000000000.log", 100, inner)
	if outer.Offset != 105 || outer.Path != "00000000000000000000.log" {
		t.Fatalf("Corrupt folded to %+v, want offset 105", outer)
	}
	if !errors.Is(outer, ErrCRC) {
		t.Fatal("errors.Is(outer, ErrCRC) = false")
	}
	want := "00000000000000000000.log: byte 105: format: checksum mismatch: stored 1 computed 2"
	if outer.Error() != want {
		t.Fatalf("Error() = %q, want %q", outer.Error(), want)
	}
	wrapped := fmt.Errorf("reading: %w", inner)
	moved := WithPath(wrapped, "x.log", 1000)
	var ce *CorruptionError
	if !errors.As(moved, &ce) || ce.Offset != 1005 || ce.Path != "x.log" {
		t.Fatalf("WithPath = %v", moved)
	}
	if WithPath(nil, "x", 1) != nil {
		t.Fatal("WithPath(nil) != nil")
	}
	plain := errors.New("io")
	if WithPath(plain, "x", 1) != plain {
		t.Fatal("WithPath changed a non-corruption error")
	}
}

func TestCRC(t *testing.T) {
	// Known answers: "123456789" is the standard check input.
	if got := CRC32C([]byte("123456789")); got != 0xe3069283 {
		t.Errorf("CRC32C = %08x, want e3069283", got)
	}
	if got := CRC32IEEE([]byte("123456789")); got != 0xcbf43926 {
		t.Errorf("CRC32IEEE = %08x, want cbf43926", got)
	}
	if got := UpdateCRC32C(CRC32C([]byte("1234")), []byte("56789")); got != 0xe3069283 {
		t.Errorf("UpdateCRC32C = %08x", got)
	}
}

func TestVarintAllocs(t *testing.T) {
	buf := make([]byte, 0, 32)
	n := testing.AllocsPerRun(100, func() {
		buf = AppendVarlong(buf[:0], -123456789)
		v, _ := Varlong(buf)
		sink += v
	})
	if n != 0 {
		t.Fatalf("allocs = %v, want 0", n)
	}
}

var sink int64
