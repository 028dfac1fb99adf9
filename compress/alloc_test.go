package compress

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// TestXAllocs checks that, once warm and given a dst with room, every codec
// compresses and decompresses without allocating, through the Encoder and
// Decoder and through each codec's own type.
func TestXAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	payloads := []input{
		{"16x1k", jsonRecords(20, 16, 1024)},
		{"1000x100", jsonRecords(21, 1000, 100)},
		{"empty", nil},
	}
	for _, c := range append([]Codec{None}, allCodecs...) {
		for _, p := range payloads {
			t.Run(c.String()+"/"+p.name, func(t *testing.T) {
				var e Encoder
				var d Decoder
				comp, err := e.AppendCompressed(nil, c, p.data)
				if err != nil {
					t.Fatal(err)
				}
				cbuf := make([]byte, 0, 2*len(comp)+1<<16)
				dbuf := make([]byte, 0, len(p.data)+1<<16)
				// Warm up.
				for range 3 {
					e.AppendCompressed(cbuf, c, p.data)
					d.AppendDecompressed(dbuf, c, comp, len(p.data))
				}
				if n := testing.AllocsPerRun(50, func() {
					sink, _ = e.AppendCompressed(cbuf, c, p.data)
				}); n != 0 {
					t.Errorf("Encoder.AppendCompressed: %v allocs/op", n)
				}
				if n := testing.AllocsPerRun(50, func() {
					sink, err = d.AppendDecompressed(dbuf, c, comp, len(p.data))
				}); n != 0 || err != nil {
					t.Errorf("Decoder.AppendDecompressed: %v allocs/op, err %v", n, err)
				}
				// The per-codec types directly.
				comp1 := compressorFor(t, c)
				dec1 := decompressorFor(t, c)
				comp1.AppendCompressed(cbuf, p.data)
				dec1.AppendDecompressed(dbuf, comp, len(p.data))
				if n := testing.AllocsPerRun(50, func() {
					sink, _ = comp1.AppendCompressed(cbuf, p.data)
				}); n != 0 {
					t.Errorf("%T.AppendCompressed: %v allocs/op", comp1, n)
				}
				if n := testing.AllocsPerRun(50, func() {
					sink, _ = dec1.AppendDecompressed(dbuf, comp, len(p.data))
				}); n != 0 {
					t.Errorf("%T.AppendDecompressed: %v allocs/op", dec1, n)
				}
			})
		}
	}
}

// TestXAllocsForeign checks steady-state decompression of frames other
// writers produce: zstd without a declared size (as zstd-jni streams it),
// lz4 with 4 MiB blocks and a content checksum (pierrec/lz4's defaults, as
// franz-go writes), concatenated gzip members, a raw snappy block.
func TestXAllocsForeign(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	src := jsonRecords(22, 300, 500)
	var zbuf bytes.Buffer
	zw, _ := zstd.NewWriter(&zbuf, zstd.WithEncoderConcurrency(1))
	for b := src; len(b) > 0; b = b[min(len(b), 16<<10):] {
		zw.Write(b[:min(len(b), 16<<10)])
		zw.Flush()
	}
	zw.Close()
	var lbuf bytes.Buffer
	lw := lz4.NewWriter(&lbuf)
	lw.Apply(lz4.ConcurrencyOption(1))
	lw.Write(src)
	lw.Close()
	cases := []struct {
		name  string
		c     Codec
		in    []byte
		limit int
	}{
		{"zstd_streamed", Zstd, zbuf.Bytes(), 1 << 20},
		{"lz4_pierrec", LZ4, lbuf.Bytes(), 1 << 20},
		{"lz4_pierrec_tight", LZ4, lbuf.Bytes(), len(src)},
		{"gzip_members", Gzip, append(mustCompress(t, Gzip, src[:1000]), mustCompress(t, Gzip, src[1000:])...), 1 << 20},
		{"snappy_raw", Snappy, AppendSnappyBlock(nil, src), len(src)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var d Decoder
			out, err := d.AppendDecompressed(nil, tc.c, tc.in, tc.limit)
			if err != nil || !bytes.Equal(out, src) {
				t.Fatalf("%v", err)
			}
			if n := testing.AllocsPerRun(50, func() {
				out, err = d.AppendDecompressed(out[:0], tc.c, tc.in, tc.limit)
			}); n != 0 || err != nil {
				t.Errorf("%v allocs/op, err %v", n, err)
			}
		})
	}
}

// TestCompressBounds checks that encoders ask for little more room than
// they use: a dst with room for the input plus a small overhead suffices
// for incompressible input, so callers can size it from len(src).
func TestCompressBounds(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, n := range []int{0, 1, 1000, 16 << 10, 64 << 10, 64<<10 + 1, 200000} {
		src := randBytes(uint64(n), n)
		for _, c := range allCodecs {
			var e Encoder
			e.AppendCompressed(nil, c, src) // warm
			room := n + n/100 + 128
			if c == Snappy {
				room = n + n/6 + 64 // snappy's own bound for literals
			}
			dst := make([]byte, 0, room)
			if a := testing.AllocsPerRun(5, func() { sink, _ = e.AppendCompressed(dst, c, src) }); a != 0 {
				t.Errorf("%v, %d random bytes into %d of room: %v allocs", c, n, room, a)
			}
		}
	}
}
