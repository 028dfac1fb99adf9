package compress

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/segkit/segkit/format"
)

// bombLimit is the limit the bombs run against.
const bombLimit = 4 << 20

// bombSlack is what a decoder may allocate beyond twice the limit for its
// own state (zstd's stream buffers, lz4's block scratch, gzip's window).
const bombSlack = 1 << 20

// A bomb is a small input that declares, or inflates to, far more than the
// limit.
type bomb struct {
	name    string
	codec   Codec
	in      []byte
	inflate int64 // what it would inflate to
}

func bombs(t testing.TB) []bomb {
	var out []bomb

	// gzip: 1 GiB of zeros as 64 members of 16 MiB (each ~16 KiB), and one
	// 64 MiB member.
	member := mustCompress(t, Gzip, make([]byte, 16<<20))
	out = append(out, bomb{"gzip_members_1g", Gzip, bytes.Repeat(member, 64), 1 << 30})
	c1, _ := NewGzipCompressor(1)
	single, _ := c1.AppendCompressed(nil, make([]byte, 64<<20))
	out = append(out, bomb{"gzip_member_64m", Gzip, single, 64 << 20})

	// snappy: a raw block and xerial chunks declaring 1 GiB.
	out = append(out, bomb{"snappy_raw_declared_1g", Snappy, []byte{0x80, 0x80, 0x80, 0x80, 0x04, 0, 0, 0}, 1 << 30})
	xer := AppendXerial(nil, nil)
	chunk := AppendSnappyBlock(nil, make([]byte, 32<<10))
	for range 256 {
		// Each chunk declares 4 MiB but holds a 32 KiB block: the sum is
		// checked before any decoding.
		lie := append([]byte{0x80, 0x80, 0x80, 0x02}, chunk[3:]...)
		xer = binary.BigEndian.AppendUint32(xer, uint32(len(lie)))
		xer = append(xer, lie...)
	}
	out = append(out, bomb{"snappy_xerial_declared_1g", Snappy, xer, 1 << 30})

	// lz4: a declared content size; Kafka-style 64 KiB blocks of zeros
	// (16384 of them, ~270 bytes each); 4 MiB blocks (256, ~16 KiB each).
	hdr := mustHex("04224d18 68 40 0000004000000000 00") // FLG with content size: 1 GiB
	hdr[14] = byte(xxh32(hdr[4:14]) >> 8)
	out = append(out, bomb{"lz4_declared_1g", LZ4, append(hdr, 0, 0, 0, 0), 1 << 30})
	var cc lz4.CompressorCCompat
	blk := make([]byte, lz4.CompressBlockBound(64<<10))
	n, _ := cc.CompressBlock(make([]byte, 64<<10), blk)
	frame := appendLZ4Header(nil, false)
	for range 16384 {
		frame = binary.LittleEndian.AppendUint32(frame, uint32(n))
		frame = append(frame, blk[:n]...)
	}
	out = append(out, bomb{"lz4_64k_blocks_1g", LZ4, binary.LittleEndian.AppendUint32(frame, 0), 1 << 30})
	big := make([]byte, lz4.CompressBlockBound(4<<20))
	n, _ = cc.CompressBlock(make([]byte, 4<<20), big)
	frame = mustHex("04224d18 60 70 00")
	frame[6] = byte(xxh32(frame[4:6]) >> 8)
	for range 256 {
		frame = binary.LittleEndian.AppendUint32(frame, uint32(n))
		frame = append(frame, big[:n]...)
	}
	out = append(out, bomb{"lz4_4m_blocks_1g", LZ4, binary.LittleEndian.AppendUint32(frame, 0), 1 << 30})

	// zstd: a declared size; 8192 RLE blocks of 128 KiB (4 bytes each); and
	// 64 MiB of a repeating pattern streamed without a declared size, in
	// compressed blocks of a few bytes each, with a large and a small
	// window.
	z := mustHex("28b52ffd a0 00000040 010000") // single segment, FCS 1 GiB, empty last raw block
	out = append(out, bomb{"zstd_declared_1g", Zstd, z, 1 << 30})
	rle := mustHex("28b52ffd 00 68") // no FCS, 8 MiB window
	for i := range 8192 {
		h := uint32(128<<10)<<3 | zstdBlockRLE<<1
		if i == 8191 {
			h |= 1
		}
		rle = append(rle, byte(h), byte(h>>8), byte(h>>16), 'z')
	}
	out = append(out, bomb{"zstd_rle_1g", Zstd, rle, 1 << 30})
	pattern := bytes.Repeat(randBytes(18, 1000), 64<<10) // 62.5 MiB
	for _, w := range []int{8 << 20, 1 << 20} {
		var buf bytes.Buffer
		enc, _ := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(w), zstd.WithEncoderLevel(zstd.SpeedFastest))
		for b := pattern; len(b) > 0; b = b[min(len(b), 1<<20):] {
			enc.Write(b[:min(len(b), 1<<20)])
		}
		enc.Close()
		name := "zstd_streamed_64m_window_8m"
		if w == 1<<20 {
			name = "zstd_streamed_64m_window_1m"
		}
		out = append(out, bomb{name, Zstd, buf.Bytes(), int64(len(pattern))})
	}
	return out
}

func TestBombs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 1 GiB-class inputs")
	}
	for _, b := range bombs(t) {
		t.Run(b.name, func(t *testing.T) {
			var d Decoder
			// Warm the decoder so its one-time state is not counted.
			d.AppendDecompressed(nil, b.codec, mustCompress(t, b.codec, []byte("warm up")), 100)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := d.AppendDecompressed(nil, b.codec, b.in, bombLimit)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, format.ErrTooLarge) {
				t.Fatalf("want ErrTooLarge, got %v", err)
			}
			checkDecodeError(t, err, b.in)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d-byte input (inflating to %d MiB): failed after %v, allocated %.2f MiB (limit %d MiB)",
				len(b.in), b.inflate>>20, took.Round(time.Millisecond), float64(alloc)/(1<<20), bombLimit>>20)
			if alloc > 2*bombLimit+bombSlack {
				t.Fatalf("allocated %d bytes, more than 2×limit + %d", alloc, bombSlack)
			}
		})
	}
}
