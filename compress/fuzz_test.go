package compress

import (
	"bytes"
	stdgzip "compress/gzip"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/segkit/segkit/format"
)

// fuzzLimitMax bounds the limits the fuzzers try, so that each execution
// stays fast.
const fuzzLimitMax = 1 << 20

func FuzzDecompressGzip(f *testing.F)   { fuzzDecompress(f, Gzip) }
func FuzzDecompressSnappy(f *testing.F) { fuzzDecompress(f, Snappy) }
func FuzzDecompressLZ4(f *testing.F)    { fuzzDecompress(f, LZ4) }
func FuzzDecompressZstd(f *testing.F)   { fuzzDecompress(f, Zstd) }

// fuzzDecompress checks, for any input and limit: no panic; an error is a
// *format.CorruptionError wrapping ErrCompressed or ErrTooLarge, inside
// src, that leaves dst as it was; output never exceeds the limit nor
// touches dst's prefix; the limit is exact (the output's own size passes,
// one byte less fails with ErrTooLarge); decoding is deterministic across
// two reused decoders; our output recompresses and round-trips; and,
// for gzip and zstd, a reference reader agrees with what we accept.
// Seeds: testdata/fuzz/<target>/, written by TestGenerateCorpus.
func fuzzDecompress(f *testing.F, c Codec) {
	f.Add([]byte{}, uint32(100))
	f.Add(mustCompress(f, c, []byte("hello, hello, hello kafka")), uint32(100))
	// Two decoders reused across executions, as callers would: one takes a
	// small dst, the other nil; their state must never leak between calls.
	var warm, other Decoder
	var enc Encoder
	// The reference takes the windows ours takes (the format's largest: a
	// frame may declare a 1 GiB window for 40 bytes of content, and both
	// decode it into dst); at klauspost's default limit it would refuse
	// what the format allows.
	zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxWindow))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src []byte, limit uint32) {
		lim := int(limit % (fuzzLimitMax + 1))
		prefix := []byte("canary")
		dst := make([]byte, len(prefix), len(prefix)+32)
		copy(dst, prefix)
		out, err := warm.AppendDecompressed(dst, c, src, lim)
		if !bytes.Equal(out[:len(prefix)], prefix) {
			t.Fatal("dst prefix changed")
		}
		if err != nil {
			checkDecodeError(t, err, src)
			if len(out) != len(prefix) {
				t.Fatalf("error %v but dst grew to %d", err, len(out))
			}
			if errors.Is(err, format.ErrTooLarge) && lim < fuzzLimitMax {
				// More room must either succeed or fail for another reason
				// than the limit it was given.
				more, err2 := other.AppendDecompressed(nil, c, src, fuzzLimitMax)
				if err2 == nil && len(more) <= lim {
					t.Fatalf("ErrTooLarge at limit %d, but the output is %d bytes", lim, len(more))
				}
			}
			return
		}
		got := out[len(prefix):]
		if len(got) > lim {
			t.Fatalf("output %d bytes beyond limit %d", len(got), lim)
		}
		// The other decoder into nil gives the same bytes, exactly at the
		// limit; one byte less is too large.
		again, err := other.AppendDecompressed(nil, c, src, len(got))
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("second decoder at limit %d: %v", len(got), err)
		}
		if len(got) > 0 {
			if _, err := other.AppendDecompressed(nil, c, src, len(got)-1); !errors.Is(err, format.ErrTooLarge) {
				t.Fatalf("limit %d for %d bytes: %v", len(got)-1, len(got), err)
			}
		}
		// Our encoder round-trips what we decoded.
		re, err := enc.AppendCompressed(nil, c, got)
		if err != nil {
			t.Fatal(err)
		}
		back, err := other.AppendDecompressed(nil, c, re, len(got))
		if err != nil || !bytes.Equal(back, got) {
			t.Fatalf("recompressed output does not round-trip: %v", err)
		}
		// Reference readers accept what we accept, with the same result.
		switch c {
		case Snappy:
			// What the strict decoder accepts, the default one reads alike.
			strict := SnappyDecompressor{Strict: true}
			if st, err := strict.AppendDecompressed(nil, src, lim); err == nil && !bytes.Equal(st, got) {
				t.Fatal("strict and default snappy decoders disagree")
			}
		case Gzip:
			r, err := stdgzip.NewReader(bytes.NewReader(src))
			if err != nil {
				t.Fatalf("compress/gzip rejects what we read: %v", err)
			}
			ref, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(ref, got) {
				t.Fatalf("compress/gzip disagrees: %v", err)
			}
		case Zstd:
			ref, err := zd.DecodeAll(src, nil)
			if err != nil || !bytes.Equal(ref, got) {
				t.Fatalf("zstd.DecodeAll disagrees: %v", err)
			}
		}
	})
}

// FuzzRoundTrip checks that every codec, and the raw snappy and legacy lz4
// writers, decompress what they compress, within an exact limit.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("a"))
	f.Add(bytes.Repeat([]byte("kafka"), 1000))
	var e Encoder
	var d Decoder
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range append([]Codec{None}, allCodecs...) {
			comp, err := e.AppendCompressed([]byte("p"), c, data)
			if err != nil || comp[0] != 'p' {
				t.Fatalf("%v: compress: %v", c, err)
			}
			got, err := d.AppendDecompressed(nil, c, comp[1:], len(data))
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%v: round trip: %v", c, err)
			}
			if len(data) > 0 {
				if _, err := d.AppendDecompressed(nil, c, comp[1:], len(data)-1); !errors.Is(err, format.ErrTooLarge) {
					t.Fatalf("%v: limit one under: %v", c, err)
				}
			}
		}
		var sd SnappyDecompressor
		if got, err := sd.AppendDecompressed(nil, AppendSnappyBlock(nil, data), len(data)); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("raw snappy block: %v", err)
		}
		var ld LZ4Decompressor
		if got, err := ld.AppendDecompressed(nil, AppendLZ4FrameKafkaLegacy(nil, data), len(data)); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("legacy lz4 frame: %v", err)
		}
	})
}
