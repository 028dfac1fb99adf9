package format

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

func TestVarintRoundTrip(t *testing.T) {
	vals := []int32{0, 1, -1, 63, -64, 64, -65, 8191, -8192, 8192, 1 << 20, -(1 << 20), math.MaxInt32, math.MinInt32}
	for _, v := range vals {
		b := AppendVarint(nil, v)
		if len(b) != SizeVarint(v) {
			t.Errorf("SizeVarint(%d) = %d, encoded %d bytes", v, SizeVarint(v), len(b))
		}
		// Kafka's varint is zigzag LEB128, the same as encoding/binary's.
		if want := binary.AppendVarint(nil, int64(v)); string(want) != string(b) {
			t.Errorf("AppendVarint(%d) = %x, want %x", v, b, want)
		}
		var p [MaxVarintLen]byte
		if n := PutVarint(p[:], v); string(p[:n]) != string(b) {
			t.Errorf("PutVarint(%d) = %x, want %x", v, p[:n], b)
		}
		got, n := Varint(b)
		if n != len(b) || got != v {
			t.Errorf("Varint(%x) = %d, %d; want %d, %d", b, got, n, v, len(b))
		}
	}
}

func TestVarlongRoundTrip(t *testing.T) {
	vals := []int64{0, 1, -1, 63, -64, 1 << 35, -(1 << 35), math.MaxInt64, math.MinInt64, math.MaxInt32 + 1}
	for _, v := range vals {
		b := AppendVarlong(nil, v)
		if len(b) != SizeVarlong(v) {
			t.Errorf("SizeVarlong(%d) = %d, encoded %d bytes", v, SizeVarlong(v), len(b))
		}
		if want := binary.AppendVarint(nil, v); string(want) != string(b) {
			t.Errorf("AppendVarlong(%d) = %x, want %x", v, b, want)
		}
		var p [MaxVarlongLen]byte
		if n := PutVarlong(p[:], v); string(p[:n]) != string(b) {
			t.Errorf("PutVarlong(%d) = %x, want %x", v, p[:n], b)
		}
		got, n := Varlong(b)
		if n != len(b) || got != v {
			t.Errorf("Varlong(%x) = %d, %d; want %d, %d", b, got, n, v, len(b))
		}
	}
}

func TestVarintErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		long bool // decode as varlong
		want error
	}{
		{"empty", nil, false, ErrTruncated},
		{"unterminated", []byte{0x80, 0x80}, false, ErrTruncated},
		{"six_bytes", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, false, ErrVarint},
		{"overflow_5th_byte", []byte{0xff, 0xff, 0xff, 0xff, 0x1f}, false, ErrVarint},
		{"long_empty", nil, true, ErrTruncated},
		{"long_eleven_bytes", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, true, ErrVarint},
		{"long_overflow_10th_byte", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, true, ErrVarint},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n int
			if tt.long {
				_, n = Varlong(tt.in)
			} else {
				_, n = Varint(tt.in)
			}
			if n > 0 {
				t.Fatalf("decoded %x with n=%d, want an error", tt.in, n)
			}
			if err := ParseError(n); !errors.Is(err, tt.want) {
				t.Fatalf("ParseError(%d) = %v, want %v", n, err, tt.want)
			}
		})
	}
}

func TestUvarint(t *testing.T) {
	for _, v := range []uint32{0, 1, 127, 128, 16383, 16384, math.MaxUint32} {
		b := AppendUvarint(nil, v)
		got, n := Uvarint(b)
		if n != len(b) || got != v {
			t.Errorf("Uvarint(%x) = %d, %d; want %d", b, got, n, v)
		}
	}
}

// FuzzVarint checks our decoders against encoding/binary (which uses the
// same zigzag LEB128 encoding) with Kafka's length limits added.
func FuzzVarint(f *testing.F) {
	for _, s := range [][]byte{{0}, {1}, {0x80, 0x01}, {0xff, 0xff, 0xff, 0xff, 0x0f}, {0xff, 0xff, 0xff, 0xff, 0x1f},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, {0x80}, {}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ref, rn := binary.Varint(b)

		v, n := Varint(b)
		if n > 0 {
			if n > MaxVarintLen || rn != n || int64(v) != ref {
				t.Fatalf("Varint(%x) = %d,%d; binary.Varint = %d,%d", b, v, n, ref, rn)
			}
			if re := AppendVarint(nil, v); string(re) != string(b[:n]) && n == SizeVarint(v) {
				t.Fatalf("re-encode of %d = %x, input %x", v, re, b[:n])
			}
		} else if rn > 0 && rn <= MaxVarintLen && ref >= math.MinInt32 && ref <= math.MaxInt32 && SizeVarlong(ref) == rn {
			t.Fatalf("Varint rejected %x (n=%d) that is a valid 32-bit varint %d", b, n, ref)
		}

		l, ln := Varlong(b)
		if ln > 0 {
			if ln > MaxVarlongLen || rn != ln || l != ref {
				t.Fatalf("Varlong(%x) = %d,%d; binary.Varint = %d,%d", b, l, ln, ref, rn)
			}
		} else if rn > 0 && ln != codeTruncated {
			t.Fatalf("Varlong rejected %x (n=%d) that binary.Varint accepts as %d", b, ln, ref)
		}
	})
}
