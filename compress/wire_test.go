package compress

import (
	"bytes"
	stdgzip "compress/gzip"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/segkit/segkit/format"
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func TestXXH32(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32
	}{
		{"", 0x02CC5D05},
		{"a", 0x550D7456},
		{"abc", 0x32D153FF},
		{"Nobody inspects the spammish repetition", 0xE2293B2F},
	} {
		if got := xxh32([]byte(tc.in)); got != tc.want {
			t.Errorf("xxh32(%q) = %#08x, want %#08x", tc.in, got, tc.want)
		}
	}
	// Longer inputs are checked against pierrec/lz4's block and content
	// checksums in TestLZ4Frames.
}

func TestLZ4FrameAsKafka(t *testing.T) {
	var c LZ4Compressor
	// Kafka's header: magic, FLG 0x60, BD 0x40, checksum 0x82; an empty
	// payload is the header and the end mark.
	empty, _ := c.AppendCompressed(nil, nil)
	if want := mustHex("04224d18 6040 82 00000000"); !bytes.Equal(empty, want) {
		t.Fatalf("empty frame %x, want %x", empty, want)
	}
	// 100 KiB of records: a compressed 64 KiB block, then the rest.
	src := jsonRecords(10, 100, 1024)
	frame, _ := c.AppendCompressed(nil, src)
	pos := 7
	var sizes []int
	for {
		h := binary.LittleEndian.Uint32(frame[pos:])
		pos += 4
		if h == 0 {
			break
		}
		if h&lz4Uncompressed != 0 {
			t.Fatalf("compressible block stored uncompressed")
		}
		n, err := lz4.UncompressBlock(frame[pos:pos+int(h)], make([]byte, 64<<10))
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, n)
		pos += int(h)
	}
	if pos != len(frame) || len(sizes) != 2 || sizes[0] != 64<<10 || sizes[0]+sizes[1] != len(src) {
		t.Fatalf("blocks %v, %d trailing bytes", sizes, len(frame)-pos)
	}
	// Incompressible input is stored, with the high bit of the size set.
	rnd := randBytes(11, 70000)
	frame, _ = c.AppendCompressed(nil, rnd)
	if h := binary.LittleEndian.Uint32(frame[7:]); h != 64<<10|lz4Uncompressed {
		t.Fatalf("first block header %#x, want stored 64 KiB", h)
	}
	if !bytes.Equal(frame[11:11+64<<10], rnd[:64<<10]) {
		t.Fatal("stored block differs from the input")
	}
	// Any reader of the standard frame format reads ours.
	got, err := io.ReadAll(lz4.NewReader(bytes.NewReader(frame)))
	if err != nil || !bytes.Equal(got, rnd) {
		t.Fatalf("pierrec/lz4 reading our frame: %v", err)
	}
}

func TestLZ4KafkaLegacyHeader(t *testing.T) {
	src := []byte("a magic-0 message set, as Kafka 0.8 and 0.9 compressed it")
	legacy := AppendLZ4FrameKafkaLegacy(nil, src)
	// KAFKA-3160: the checksum covers the magic number and the descriptor.
	if want := byte(xxh32(mustHex("04224d18 6040")) >> 8); legacy[6] != want {
		t.Fatalf("legacy header checksum %#02x, want %#02x", legacy[6], want)
	}
	if legacy[6] == 0x82 {
		t.Fatal("legacy checksum equals the correct one; the test proves nothing")
	}
	c := LZ4Compressor{LegacyHeaderChecksum: true}
	viaField, _ := c.AppendCompressed(nil, src)
	e := Encoder{LZ4LegacyHeaderChecksum: true}
	viaEncoder, _ := e.AppendCompressed(nil, LZ4, src)
	if !bytes.Equal(viaField, legacy) || !bytes.Equal(viaEncoder, legacy) {
		t.Fatal("the three ways to write a legacy frame differ")
	}
	// Other readers reject it; ours accepts both forms.
	if _, err := io.ReadAll(lz4.NewReader(bytes.NewReader(legacy))); err == nil {
		t.Error("pierrec/lz4 accepted the KAFKA-3160 header checksum")
	}
	var d LZ4Decompressor
	got, err := d.AppendDecompressed(nil, legacy, 1000)
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("legacy frame: %v", err)
	}
	// A checksum matching neither form is corruption, at the checksum byte.
	bad := bytes.Clone(legacy)
	bad[6] ^= 0xff
	_, err = d.AppendDecompressed(nil, bad, 1000)
	if ce := checkDecodeError(t, err, bad); ce.Offset != 6 || !errors.Is(err, format.ErrCompressed) {
		t.Fatalf("bad header checksum: %v", err)
	}
}

func TestLZ4Frames(t *testing.T) {
	src := jsonRecords(12, 300, 1024) // ~300 KiB
	write := func(opts ...lz4.Option) []byte {
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		if err := w.Apply(append([]lz4.Option{lz4.ConcurrencyOption(1)}, opts...)...); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(src); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	frames := []struct {
		name  string
		frame []byte
	}{
		{"pierrec_default", write()}, // 4 MiB blocks, content checksum
		{"block_checksums", write(lz4.BlockSizeOption(lz4.Block64Kb), lz4.BlockChecksumOption(true))},
		{"content_size", write(lz4.SizeOption(uint64(len(src))), lz4.BlockSizeOption(lz4.Block256Kb))},
		{"no_checksums_1m", write(lz4.ChecksumOption(false), lz4.BlockSizeOption(lz4.Block1Mb))},
		{"hc", write(lz4.CompressionLevelOption(lz4.Level5))},
	}
	for _, f := range frames {
		t.Run(f.name, func(t *testing.T) {
			var d LZ4Decompressor
			got, err := d.AppendDecompressed(nil, f.frame, len(src))
			if err != nil || !bytes.Equal(got, src) {
				t.Fatalf("%v", err)
			}
			if _, err := d.AppendDecompressed(nil, f.frame, len(src)-1); !errors.Is(err, format.ErrTooLarge) {
				t.Fatalf("limit-1: %v", err)
			}
		})
	}
	t.Run("concatenated_and_skippable", func(t *testing.T) {
		var c LZ4Compressor
		in := mustHex("5a2a4d18 03000000 aabbcc") // skippable frame, 3 bytes
		in, _ = c.AppendCompressed(in, src[:1000])
		in = append(in, frames[1].frame...)
		var d LZ4Decompressor
		got, err := d.AppendDecompressed(nil, in, 2*len(src))
		if err != nil || !bytes.Equal(got, append(bytes.Clone(src[:1000]), src...)) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("checksum_mismatches", func(t *testing.T) {
		var d LZ4Decompressor
		// The last byte of a frame with a content checksum.
		bad := bytes.Clone(frames[0].frame)
		bad[len(bad)-1] ^= 1
		_, err := d.AppendDecompressed(nil, bad, len(src))
		if ce := checkDecodeError(t, err, bad); ce.Offset != int64(len(bad)-4) {
			t.Errorf("content checksum: %v", err)
		}
		// The first block checksum: after the 7-byte header, block header
		// and block.
		bad = bytes.Clone(frames[1].frame)
		n := int(binary.LittleEndian.Uint32(bad[7:]) &^ lz4Uncompressed)
		bad[11+n] ^= 1
		_, err = d.AppendDecompressed(nil, bad, len(src))
		if ce := checkDecodeError(t, err, bad); ce.Offset != int64(11+n) || !strings.Contains(err.Error(), "block checksum") {
			t.Errorf("block checksum: %v", err)
		}
	})
	t.Run("header_checks", func(t *testing.T) {
		var c LZ4Compressor
		good, _ := c.AppendCompressed(nil, src[:5000])
		for _, tc := range []struct {
			name     string
			flg, bd  byte
			wantText string
		}{
			{"dependent_blocks", 0x40, 0x40, "dependent"},
			{"version_2", 0xa0, 0x40, "version"},
			{"dict_id", 0x61, 0x40, "dictionary"},
			{"block_size_3", 0x60, 0x30, "block maximum size"},
			{"bd_reserved", 0x60, 0x41, "reserved"},
		} {
			bad := bytes.Clone(good)
			bad[4], bad[5] = tc.flg, tc.bd
			bad[6] = byte(xxh32(bad[4:6]) >> 8)
			var d LZ4Decompressor
			_, err := d.AppendDecompressed(nil, bad, 1<<20)
			checkDecodeError(t, err, bad)
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("%s: %v", tc.name, err)
			}
		}
	})
	t.Run("content_size_mismatch", func(t *testing.T) {
		in := bytes.Clone(frames[2].frame)
		binary.LittleEndian.PutUint64(in[6:], uint64(len(src)-1))
		in[14] = byte(xxh32(in[4:14]) >> 8)
		var d LZ4Decompressor
		_, err := d.AppendDecompressed(nil, in, 2*len(src))
		checkDecodeError(t, err, in)
	})
	t.Run("flagged_end_mark", func(t *testing.T) {
		// Java (and the C library) take 0x80000000 as an end mark too.
		var c LZ4Compressor
		in, _ := c.AppendCompressed(nil, src[:3000])
		binary.LittleEndian.PutUint32(in[len(in)-4:], lz4Uncompressed)
		var d LZ4Decompressor
		if got, err := d.AppendDecompressed(nil, in, 3000); err != nil || !bytes.Equal(got, src[:3000]) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("block_over_frame_maximum", func(t *testing.T) {
		var c LZ4Compressor
		in, _ := c.AppendCompressed(nil, randBytes(13, 1000))
		binary.LittleEndian.PutUint32(in[7:], 64<<10+1|lz4Uncompressed)
		var d LZ4Decompressor
		_, err := d.AppendDecompressed(nil, in, 1<<20)
		if ce := checkDecodeError(t, err, in); ce.Offset != 7 {
			t.Fatalf("%v", err)
		}
	})
}

func TestXerialFraming(t *testing.T) {
	var c SnappyCompressor
	empty, _ := c.AppendCompressed(nil, nil)
	if want := mustHex("82534e41505059 00 00000001 00000001"); !bytes.Equal(empty, want) {
		t.Fatalf("empty stream %x, want %x", empty, want)
	}
	src := jsonRecords(14, 100, 1000) // ~100 KiB: 32 KiB blocks
	stream, _ := c.AppendCompressed(nil, src)
	var sizes []int
	for pos := 16; pos < len(stream); {
		n := int(binary.BigEndian.Uint32(stream[pos:]))
		pos += 4
		dl, err := s2.DecodedLen(stream[pos : pos+n])
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, dl)
		pos += n
	}
	for i, n := range sizes {
		if want := min(32<<10, len(src)-i*32<<10); n != want {
			t.Fatalf("block %d holds %d bytes, want %d (%v)", i, n, want, sizes)
		}
	}
	var d SnappyDecompressor
	// The header alone is an empty stream (snappy-java reads it so).
	if got, err := d.AppendDecompressed(nil, empty, 0); err != nil || len(got) != 0 {
		t.Fatalf("header only: %d bytes, %v", len(got), err)
	}
	// Version below 1 is refused, as snappy-java does.
	bad := bytes.Clone(stream)
	bad[11] = 0
	if _, err := d.AppendDecompressed(nil, bad, 1<<20); checkDecodeError(t, err, bad).Offset != 8 {
		t.Fatalf("version 0: %v", err)
	}
	// A chunk length past the end: truncation, at that chunk's header.
	bad = bytes.Clone(stream)
	second := 16 + 4 + int(binary.BigEndian.Uint32(stream[16:]))
	binary.BigEndian.PutUint32(bad[second:], uint32(len(stream)))
	_, err := d.AppendDecompressed(nil, bad, 1<<20)
	if ce := checkDecodeError(t, err, bad); ce.Offset != int64(second) || !errors.Is(err, format.ErrTruncated) {
		t.Fatalf("long chunk: %v", err)
	}
	// A negative int32 chunk length is just as long.
	binary.BigEndian.PutUint32(bad[second:], 0x80000010)
	if _, err := d.AppendDecompressed(nil, bad, 1<<20); !errors.Is(err, format.ErrTruncated) {
		t.Fatalf("negative chunk: %v", err)
	}
	// A zero-length chunk is not a snappy block.
	bad = append(bytes.Clone(empty), 0, 0, 0, 0)
	if _, err := d.AppendDecompressed(nil, bad, 1<<20); !errors.Is(err, format.ErrCompressed) {
		t.Fatalf("zero chunk: %v", err)
	}
	// A chunk declaring more than the limit fails before decoding.
	bad = append(bytes.Clone(empty), 0, 0, 0, 5, 0x80, 0x80, 0x80, 0x80, 0x04) // 1 GiB
	_, err = d.AppendDecompressed(nil, bad, 1<<20)
	if ce := checkDecodeError(t, err, bad); !errors.Is(err, format.ErrTooLarge) || ce.Offset != 20 {
		t.Fatalf("1 GiB chunk: %v", err)
	}
	// Shorter than the header, starting with the magic: snappy-java reads
	// it as a raw block, which it is not.
	if _, err := d.AppendDecompressed(nil, empty[:12], 1<<20); !errors.Is(err, format.ErrCompressed) {
		t.Fatalf("short header: %v", err)
	}
}

func TestSnappyRaw(t *testing.T) {
	src := bytes.Repeat([]byte("0123456789abcdef"), 1<<17) // 2 MiB run
	block := AppendSnappyBlock([]byte("p"), src)[1:]
	if n, err := s2.DecodedLen(block); err != nil || n != len(src) {
		t.Fatalf("declared length %d, %v", n, err)
	}
	var d SnappyDecompressor
	got, err := d.AppendDecompressed(nil, block, len(src))
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("chunked raw block: %v", err)
	}
	// Any snappy decoder reads it.
	if got, err := s2.Decode(nil, block); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("s2.Decode: %v", err)
	}
	// Raw blocks from the reference-format encoder decode too.
	text := jsonRecords(15, 50, 500)
	if got, err := d.AppendDecompressed(nil, s2.EncodeSnappy(nil, text), len(text)); err != nil || !bytes.Equal(got, text) {
		t.Fatalf("EncodeSnappy block: %v", err)
	}
	// S2's extensions (repeat offsets) are not snappy: accepted by
	// default, rejected when strict.
	s2block := s2.Encode(nil, src)
	if got, err := d.AppendDecompressed(nil, s2block, len(src)); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("S2 block, default: %v", err)
	}
	strict := SnappyDecompressor{Strict: true}
	if _, err := strict.AppendDecompressed(nil, s2block, len(src)); !errors.Is(err, format.ErrCompressed) {
		t.Fatalf("S2 block, strict: %v", err)
	}
	if got, err := strict.AppendDecompressed(nil, block, len(src)); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("strict, our block: %v", err)
	}
	dec := Decoder{StrictSnappy: true}
	if _, err := dec.AppendDecompressed(nil, Snappy, AppendXerial(nil, src[:1000]), 1000); err != nil {
		t.Fatalf("strict Decoder: %v", err)
	}
	// A declared length beyond the limit fails before allocating.
	if _, err := d.AppendDecompressed(nil, block, len(src)-1); !errors.Is(err, format.ErrTooLarge) {
		t.Fatalf("limit: %v", err)
	}
}

func TestGzipFormat(t *testing.T) {
	src := jsonRecords(16, 20, 1000)
	for _, level := range []int{0, 1, 6, 9} {
		c, _ := NewGzipCompressor(level)
		out, _ := c.AppendCompressed(nil, src)
		// Java's GZIPOutputStream header (JDK 16+): no flags, no time, XFL
		// 0, OS 255.
		if want := mustHex("1f8b 08 00 00000000 00 ff"); !bytes.Equal(out[:10], want) {
			t.Errorf("level %d: header %x, want %x", level, out[:10], want)
		}
		r, err := stdgzip.NewReader(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		r.Multistream(false)
		if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, src) {
			t.Fatalf("level %d: standard library reading ours: %v", level, err)
		}
	}
	// Several members, one with a file name and a comment, read as one.
	var buf bytes.Buffer
	for i, part := range [][]byte{src[:100], src[100:5000], src[5000:]} {
		w := stdgzip.NewWriter(&buf)
		if i == 1 {
			w.Name, w.Comment = "part.json", "a comment"
		}
		w.Write(part)
		w.Close()
	}
	var d GzipDecompressor
	got, err := d.AppendDecompressed(nil, buf.Bytes(), len(src))
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("multi-member: %v", err)
	}
	// Each member is checked: break the second one's CRC.
	bad := append(mustCompress(t, Gzip, src[:10]), mustCompress(t, Gzip, src[10:])...)
	bad[len(bad)-6] ^= 1 // second member's CRC-32
	if _, err := d.AppendDecompressed(nil, bad, len(src)); !errors.Is(err, format.ErrCompressed) {
		t.Fatalf("second member CRC: %v", err)
	}
	// The trailer's size is only a hint: a lying ISIZE still decodes
	// correctly (and is then caught by the size check).
	lie := mustCompress(t, Gzip, src)
	binary.LittleEndian.PutUint32(lie[len(lie)-4:], 7)
	if _, err := d.AppendDecompressed(nil, lie, len(src)); !errors.Is(err, format.ErrCompressed) {
		t.Fatalf("lying ISIZE: %v", err)
	}
}

func TestZstdFrames(t *testing.T) {
	src := jsonRecords(17, 1000, 1000) // ~1 MiB: several 128 KiB blocks
	ours := mustCompress(t, Zstd, src)
	// The frame declares its size and carries no checksum.
	if fhd := ours[4]; fhd&zstdFHDContentSize == 0 && fhd&zstdFHDSingleSegment == 0 || fhd&zstdFHDChecksum != 0 {
		t.Fatalf("frame header descriptor %#02x", fhd)
	}
	stream := func(opts ...zstd.EOption) []byte {
		var buf bytes.Buffer
		w, err := zstd.NewWriter(&buf, append([]zstd.EOption{zstd.WithEncoderConcurrency(1)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		// Written in 16 KiB pieces as Kafka's BufferedOutputStream does: the
		// frame header cannot declare the size.
		for b := src; len(b) > 0; b = b[min(len(b), 16<<10):] {
			w.Write(b[:min(len(b), 16<<10)])
		}
		w.Close()
		return buf.Bytes()
	}
	noSize := stream()
	if noSize[4]&zstdFHDContentSize != 0 || noSize[4]&zstdFHDSingleSegment != 0 {
		t.Fatalf("streamed frame declares its size: %#02x", noSize[4])
	}
	withCRC := stream(zstd.WithEncoderCRC(true), zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	skippable := append(mustHex("502a4d18 04000000 00000000"), ours...)
	twoFrames := append(mustCompress(t, Zstd, src[:100000]), noSize...)
	for _, tc := range []struct {
		name string
		in   []byte
		want []byte
	}{
		{"ours", ours, src},
		{"streamed_no_size", noSize, src},
		{"streamed_crc_best", withCRC, src},
		{"skippable_first", skippable, src},
		{"two_frames", twoFrames, append(bytes.Clone(src[:100000]), src...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d ZstdDecompressor
			got, err := d.AppendDecompressed(nil, tc.in, len(tc.want))
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("%v", err)
			}
			// Again, warm, with dst reused.
			got, err = d.AppendDecompressed(got[:0], tc.in, len(tc.want))
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("warm: %v", err)
			}
			_, err = d.AppendDecompressed(nil, tc.in, len(tc.want)-1)
			if !errors.Is(err, format.ErrTooLarge) {
				t.Fatalf("limit-1: %v", err)
			}
			checkDecodeError(t, err, tc.in)
			// Just under and at the limit after a failure: state is sound.
			got, err = d.AppendDecompressed(nil, tc.in, len(tc.want))
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("after limit failure: %v", err)
			}
		})
	}
	t.Run("bad_second_frame", func(t *testing.T) {
		bad := bytes.Clone(twoFrames)
		second := len(mustCompress(t, Zstd, src[:100000]))
		bad[second] ^= 0xff
		var d ZstdDecompressor
		_, err := d.AppendDecompressed(nil, bad, 1<<30)
		if ce := checkDecodeError(t, err, bad); ce.Offset != int64(second) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("corrupt_streamed", func(t *testing.T) {
		// Garbage inside the first compressed block of a frame without a
		// declared size, decoded with a limit that sends it down the
		// streaming path.
		bad := bytes.Clone(noSize)
		for i := 12; i < 60; i++ {
			bad[i] = 0xff
		}
		var d ZstdDecompressor
		_, err := d.AppendDecompressed(nil, bad, len(src)/2)
		if ce := checkDecodeError(t, err, bad); !errors.Is(err, format.ErrCompressed) || ce.Offset != 0 {
			t.Fatalf("%v", err)
		}
	})
	t.Run("checksum_mismatch", func(t *testing.T) {
		bad := bytes.Clone(withCRC)
		bad[len(bad)-1] ^= 1
		var d ZstdDecompressor
		_, err := d.AppendDecompressed(nil, bad, 1<<30)
		checkDecodeError(t, err, bad)
	})
	t.Run("streamed_then_declared", func(t *testing.T) {
		// The first frame's bound (a 128 KiB block) exceeds the room, so it
		// is streamed; the second is decoded in place after it.
		var buf bytes.Buffer
		w, _ := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
		w.Write(src[:5000])
		w.Flush() // a block before the size is known: no declared size
		w.Write(src[5000:10000])
		w.Close()
		if fhd := buf.Bytes()[4]; fhd&(zstdFHDContentSize|zstdFHDSingleSegment) != 0 {
			t.Fatalf("first frame declares its size (%#02x): the test needs one that does not", fhd)
		}
		in := append(buf.Bytes(), mustCompress(t, Zstd, src[:1000])...)
		want := append(bytes.Clone(src[:10000]), src[:1000]...)
		var d ZstdDecompressor
		for range 2 {
			got, err := d.AppendDecompressed(nil, in, len(want))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%v", err)
			}
		}
	})
	t.Run("big_window_near_limit", func(t *testing.T) {
		// No declared size, a window far beyond the limit, output just
		// within it: the streamed path lowers the window and succeeds.
		small := src[:200000]
		var buf bytes.Buffer
		w, _ := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(8<<20))
		w.Write(small)
		w.Close()
		var d ZstdDecompressor
		got, err := d.AppendDecompressed(nil, buf.Bytes(), len(small))
		if err != nil || !bytes.Equal(got, small) {
			t.Fatalf("%v", err)
		}
		if _, err := d.AppendDecompressed(nil, buf.Bytes(), len(small)-1); !errors.Is(err, format.ErrTooLarge) {
			t.Fatalf("limit-1: %v", err)
		}
	})
}

func TestCodecNames(t *testing.T) {
	for i, name := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		c := Codec(i)
		if c.String() != name || !c.Valid() {
			t.Errorf("Codec(%d): %q, valid %v", i, c.String(), c.Valid())
		}
		if p, err := ParseCodec(name); err != nil || p != c {
			t.Errorf("ParseCodec(%q) = %v, %v", name, p, err)
		}
	}
	if p, err := ParseCodec("uncompressed"); err != nil || p != None {
		t.Errorf("uncompressed: %v, %v", p, err)
	}
	if _, err := ParseCodec("brotli"); !errors.Is(err, format.ErrCodec) {
		t.Errorf("brotli: %v", err)
	}
	if Codec(5).Valid() || Codec(5).String() != "codec(5)" {
		t.Error("Codec(5)")
	}
}
