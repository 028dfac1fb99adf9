package compress

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/segkit/segkit/format"
)

func TestRoundTrip(t *testing.T) {
	inputs := testInputs()
	for _, c := range append([]Codec{None}, allCodecs...) {
		for _, in := range inputs {
			t.Run(c.String()+"/"+in.name, func(t *testing.T) {
				var e Encoder
				var d Decoder
				prefix := []byte("prefix")
				comp, err := e.AppendCompressed(bytes.Clone(prefix), c, in.data)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(comp, prefix) {
					t.Fatal("AppendCompressed changed dst's prefix")
				}
				comp = comp[len(prefix):]
				got, err := d.AppendDecompressed(bytes.Clone(prefix), c, comp, len(in.data))
				if err != nil {
					t.Fatalf("decompress %d bytes: %v", len(comp), err)
				}
				if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], in.data) {
					t.Fatalf("round trip mismatch: got %d bytes, want %d", len(got)-len(prefix), len(in.data))
				}
				// Once more through the same (now warm) state.
				comp2, err := e.AppendCompressed(nil, c, in.data)
				if err != nil || !bytes.Equal(comp2, comp) {
					t.Fatalf("second compression differs (err %v)", err)
				}
				got2, err := d.AppendDecompressed(got[:0], c, comp, len(in.data))
				if err != nil || !bytes.Equal(got2, in.data) {
					t.Fatalf("second decompression differs (err %v)", err)
				}
			})
		}
	}
}

func TestLevels(t *testing.T) {
	src := jsonRecords(7, 200, 512)
	cases := []struct {
		c      Codec
		levels []int
	}{
		{Gzip, []int{0, 1, 5, 9}},
		{LZ4, []int{0, 1, 3, 9, 12, 17}},
		{Zstd, []int{0, -5, 1, 3, 7, 22}},
	}
	for _, tc := range cases {
		for _, lvl := range tc.levels {
			t.Run(fmt.Sprintf("%v/%d", tc.c, lvl), func(t *testing.T) {
				comp, err := NewCompressor(tc.c, lvl)
				if err != nil {
					t.Fatal(err)
				}
				out, err := comp.AppendCompressed(nil, src)
				if err != nil {
					t.Fatal(err)
				}
				var d Decoder
				got, err := d.AppendDecompressed(nil, tc.c, out, len(src))
				if err != nil || !bytes.Equal(got, src) {
					t.Fatalf("round trip failed: %v", err)
				}
			})
		}
	}
	for _, tc := range []struct {
		c     Codec
		level int
	}{{Gzip, 10}, {Gzip, -1}, {LZ4, 18}, {LZ4, -1}, {Zstd, 23}, {Zstd, -131073}} {
		if _, err := NewCompressor(tc.c, tc.level); err == nil {
			t.Errorf("%v level %d: no error", tc.c, tc.level)
		}
	}
	// Encoder fields are checked on use, and a bad level leaves dst alone.
	e := Encoder{GzipLevel: 42}
	if out, err := e.AppendCompressed([]byte("x"), Gzip, src); err == nil || string(out) != "x" {
		t.Errorf("GzipLevel 42: got %q, %v", out, err)
	}
	// Changing a level between calls takes effect.
	e = Encoder{ZstdLevel: 1}
	a, _ := e.AppendCompressed(nil, Zstd, src)
	e.ZstdLevel = 19
	b, _ := e.AppendCompressed(nil, Zstd, src)
	if bytes.Equal(a, b) {
		t.Error("changing ZstdLevel had no effect")
	}
}

func TestUnknownCodec(t *testing.T) {
	var e Encoder
	var d Decoder
	for _, c := range []Codec{5, 6, 7, -1} {
		out, err := e.AppendCompressed([]byte("x"), c, []byte("data"))
		if !errors.Is(err, format.ErrCodec) || string(out) != "x" {
			t.Errorf("compress with %v: %q, %v", c, out, err)
		}
		out, err = d.AppendDecompressed([]byte("x"), c, []byte("data"), 100)
		var ce *format.CorruptionError
		if !errors.Is(err, format.ErrCodec) || !errors.As(err, &ce) || string(out) != "x" {
			t.Errorf("decompress with %v: %q, %v", c, out, err)
		}
		if _, err := NewCompressor(c, 0); !errors.Is(err, format.ErrCodec) {
			t.Errorf("NewCompressor(%v): %v", c, err)
		}
		if _, err := NewDecompressor(c); !errors.Is(err, format.ErrCodec) {
			t.Errorf("NewDecompressor(%v): %v", c, err)
		}
	}
}

func TestLimit(t *testing.T) {
	src := jsonRecords(8, 300, 700) // ~210 KiB: several blocks in every codec
	for _, c := range append([]Codec{None}, allCodecs...) {
		comp := mustCompress(t, c, src)
		for _, tc := range []struct {
			name  string
			limit int
			ok    bool
		}{
			{"exact", len(src), true},
			{"one_over", len(src) + 1, true},
			{"one_under", len(src) - 1, false},
			{"half", len(src) / 2, false},
			{"zero", 0, false},
			{"negative", -1, false},
		} {
			t.Run(c.String()+"/"+tc.name, func(t *testing.T) {
				var d Decoder
				got, err := d.AppendDecompressed([]byte("p"), c, comp, tc.limit)
				if tc.ok {
					if err != nil || !bytes.Equal(got[1:], src) {
						t.Fatalf("got %d bytes, %v", len(got)-1, err)
					}
					return
				}
				if !errors.Is(err, format.ErrTooLarge) {
					t.Fatalf("want ErrTooLarge, got %v", err)
				}
				checkDecodeError(t, err, comp)
				if string(got) != "p" {
					t.Fatalf("on error dst became %d bytes", len(got))
				}
			})
		}
		// Exactly at the limit also with dst already large enough, and with
		// a dst whose spare capacity exceeds the limit.
		t.Run(c.String()+"/big_dst", func(t *testing.T) {
			var d Decoder
			dst := make([]byte, 0, 2*len(src))
			if _, err := d.AppendDecompressed(dst, c, comp, len(src)-1); !errors.Is(err, format.ErrTooLarge) {
				t.Fatalf("limit-1 with roomy dst: %v", err)
			}
			got, err := d.AppendDecompressed(dst, c, comp, len(src))
			if err != nil || !bytes.Equal(got, src) {
				t.Fatalf("limit with roomy dst: %v", err)
			}
		})
	}
	// Empty output fits a zero limit.
	for _, c := range append([]Codec{None}, allCodecs...) {
		var d Decoder
		if got, err := d.AppendDecompressed(nil, c, mustCompress(t, c, nil), 0); err != nil || len(got) != 0 {
			t.Errorf("%v: empty payload with limit 0: %d bytes, %v", c, len(got), err)
		}
	}
}

func TestCorrupt(t *testing.T) {
	src := jsonRecords(9, 100, 700)
	for _, c := range allCodecs {
		comp := mustCompress(t, c, src)
		t.Run(c.String()+"/empty", func(t *testing.T) {
			expectCorrupt(t, c, nil)
		})
		t.Run(c.String()+"/truncated", func(t *testing.T) {
			for _, n := range []int{1, 2, 3, 4, 5, 7, 10, 16, 17, 20, len(comp) / 2, len(comp) - 5, len(comp) - 1} {
				if c == Snappy && n == 16 {
					continue // the xerial header alone is a valid empty stream
				}
				err := expectCorrupt(t, c, comp[:n])
				if !errors.Is(err, format.ErrCompressed) {
					t.Errorf("truncated to %d: %v", n, err)
				}
			}
		})
		t.Run(c.String()+"/trailing_garbage", func(t *testing.T) {
			expectCorrupt(t, c, append(bytes.Clone(comp), 0xde, 0xad, 0xbe, 0xef, 0x01))
		})
		t.Run(c.String()+"/header_bit_flips", func(t *testing.T) {
			// Every bit of the first bytes matters in each format (magic,
			// flags, lengths), or changes the output, except those the
			// formats tell readers to ignore: gzip's FTEXT and MTIME,
			// zstd's unused descriptor bit.
			ignored := func(i, bit int) bool {
				switch c {
				case Gzip:
					return i == 3 && bit == 0 || i >= 4
				case Zstd:
					return i == 4 && bit == 4
				}
				return false
			}
			for i := range min(len(comp), 6) {
				for bit := range 8 {
					if ignored(i, bit) {
						continue
					}
					bad := bytes.Clone(comp)
					bad[i] ^= 1 << bit
					var d Decoder
					got, err := d.AppendDecompressed(nil, c, bad, 2*len(src))
					if err == nil {
						if bytes.Equal(got, src) {
							t.Errorf("flip of byte %d bit %d went unnoticed", i, bit)
						}
						continue
					}
					checkDecodeError(t, err, bad)
				}
			}
		})
		t.Run(c.String()+"/bit_flips", func(t *testing.T) {
			// Anywhere else a flip must give an error or different output
			// (lz4, snappy and zstd as Kafka writes them carry no checksum),
			// never a panic or an error outside the contract.
			for i := 0; i < len(comp); i += 1 + len(comp)/300 {
				bad := bytes.Clone(comp)
				bad[i] ^= 0x10
				var d Decoder
				got, err := d.AppendDecompressed(nil, c, bad, 2*len(src))
				if err != nil {
					checkDecodeError(t, err, bad)
				} else if len(got) > 2*len(src) {
					t.Fatalf("flip at %d: output %d beyond the limit", i, len(got))
				}
			}
		})
	}
	// gzip checks CRC-32 and size: any flip in the deflate data or trailer
	// is caught.
	comp := mustCompress(t, Gzip, src)
	for _, i := range []int{20, len(comp) / 2, len(comp) - 8, len(comp) - 3} {
		bad := bytes.Clone(comp)
		bad[i] ^= 0x01
		expectCorrupt(t, Gzip, bad)
	}
}

// expectCorrupt decodes bad with codec c and asserts an error within the
// contract that leaves dst alone.
func expectCorrupt(t *testing.T, c Codec, bad []byte) error {
	t.Helper()
	var d Decoder
	dst := []byte("dst")
	got, err := d.AppendDecompressed(dst, c, bad, 1<<20)
	if err == nil {
		t.Fatalf("%v: no error for %d bytes %x...", c, len(bad), bad[:min(len(bad), 24)])
	}
	checkDecodeError(t, err, bad)
	if string(got) != "dst" {
		t.Fatalf("%v: on error dst became %q", c, got[:min(len(got), 10)])
	}
	return err
}
