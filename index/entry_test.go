package index_test

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
)

func TestEntryGolden(t *testing.T) {
	tests := []struct {
		name string
		base int64
		e    index.Entry
		hex  string
	}{
		{"zero", 0, index.Entry{Offset: 0, Position: 0}, "00000000 00000000"},
		{"first_real", 0, index.Entry{Offset: 56, Position: 4177}, "00000038 00001051"},
		{"relative", 30626, index.Entry{Offset: 30626 + 29984, Position: 148014}, "00007520 0002422e"},
		{"max_relative", 100, index.Entry{Offset: 100 + math.MaxInt32, Position: math.MaxInt32}, "7fffffff 7fffffff"},
		{"negative_position", 0, index.Entry{Offset: 1, Position: -1}, "00000001 ffffffff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := mustHex(t, tt.hex)
			dst := []byte{0xAA}
			got, err := index.AppendEntry(dst, tt.base, tt.e)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[1:], want) || got[0] != 0xAA {
				t.Fatalf("AppendEntry = %x, want aa%x", got, want)
			}
			if back := index.DecodeEntry(want, tt.base); back != tt.e {
				t.Fatalf("DecodeEntry = %+v, want %+v", back, tt.e)
			}
		})
	}
}

func TestAppendEntryOverflow(t *testing.T) {
	for _, tt := range []struct {
		name         string
		base, offset int64
	}{
		{"below_base", 10, 9},
		{"above_max", 10, 10 + math.MaxInt32 + 1},
		{"int64_wrap_low", 1, math.MinInt64},
		{"int64_wrap_high", -1, math.MaxInt64},
		{"far_below", math.MaxInt64, math.MinInt64},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte{1, 2}
			got, err := index.AppendEntry(dst, tt.base, index.Entry{Offset: tt.offset})
			if !errors.Is(err, index.ErrOffsetOverflow) {
				t.Fatalf("err = %v, want ErrOffsetOverflow", err)
			}
			if !bytes.Equal(got, []byte{1, 2}) {
				t.Fatalf("dst changed to %x", got)
			}
		})
	}
}

func TestAbortedTxnGolden(t *testing.T) {
	txn := index.AbortedTxn{ProducerID: 1000, FirstOffset: 5, LastOffset: 9, LastStableOffset: 5}
	want := mustHex(t, "0000 00000000000003e8 0000000000000005 0000000000000009 0000000000000005")
	if len(want) != index.AbortedTxnSize {
		t.Fatalf("golden is %d bytes", len(want))
	}
	got := index.AppendAbortedTxn([]byte{7}, txn)
	if !bytes.Equal(got[1:], want) || got[0] != 7 {
		t.Fatalf("AppendAbortedTxn = %x, want 07%x", got, want)
	}
	back, err := index.DecodeAbortedTxn(want)
	if err != nil || back != txn {
		t.Fatalf("DecodeAbortedTxn = %+v, %v", back, err)
	}
	if s := txn.String(); s != "AbortedTxn(version=0, producerId=1000, firstOffset=5, lastOffset=9, lastStableOffset=5)" {
		t.Fatalf("String = %q", s)
	}
}

func TestDecodeAbortedTxnErrors(t *testing.T) {
	good := index.AppendAbortedTxn(nil, index.AbortedTxn{ProducerID: 1, LastOffset: 3})
	for _, tt := range []struct {
		name     string
		in       []byte
		sentinel error
		off      int64
	}{
		{"empty", nil, format.ErrTruncated, 0},
		{"short", good[:33], format.ErrTruncated, 33},
		{"version_1", append([]byte{0, 1}, good[2:]...), index.ErrUnsupportedVersion, 0},
		{"version_256", append([]byte{1, 0}, good[2:]...), index.ErrUnsupportedVersion, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := index.DecodeAbortedTxn(tt.in)
			var ce *format.CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, tt.sentinel) || ce.Offset != tt.off {
				t.Fatalf("err = %v, want a CorruptionError at %d wrapping %v", err, tt.off, tt.sentinel)
			}
		})
	}
	// A negative version is accepted, as Kafka accepts it (it only
	// refuses versions above the current one).
	neg := append([]byte{0xff, 0xff}, good[2:]...)
	if txn, err := index.DecodeAbortedTxn(neg); err != nil || txn.Version != -1 {
		t.Fatalf("negative version: %+v, %v", txn, err)
	}
}
