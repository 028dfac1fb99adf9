package compress

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// benchPayloads are the records sections of two typical batches: 16 records
// of 1 KiB and 1000 records of 100 bytes, JSON-like values.
func benchPayloads() []input {
	return []input{
		{"16x1KiB", jsonRecords(40, 16, 1024)},
		{"1000x100B", jsonRecords(41, 1000, 100)},
	}
}

// Each benchmark runs our call ("ours") next to the library call a program
// without our framing, limits and checks would make ("raw"), on the same
// payload, so that the wrapper's overhead shows as their ratio.

func BenchmarkCompress(b *testing.B) {
	for _, c := range allCodecs {
		for _, p := range benchPayloads() {
			src := p.data
			bench := func(name string, f func(b *testing.B)) {
				b.Run(c.String()+"/"+p.name+"/"+name, func(b *testing.B) {
					b.SetBytes(int64(len(src)))
					b.ReportAllocs()
					f(b)
				})
			}
			bench("ours", func(b *testing.B) {
				var e Encoder
				dst, _ := e.AppendCompressed(nil, c, src)
				for b.Loop() {
					dst, _ = e.AppendCompressed(dst[:0], c, src)
				}
				b.ReportMetric(float64(len(dst))/float64(len(src)), "size/input")
			})
			switch c {
			case Gzip: // a reused Writer at level 6 into a reused buffer
				bench("raw", func(b *testing.B) {
					var buf bytes.Buffer
					zw, _ := gzip.NewWriterLevel(&buf, 6)
					for b.Loop() {
						buf.Reset()
						zw.Reset(&buf)
						zw.Write(src)
						zw.Close()
					}
				})
			case Snappy: // one raw block
				bench("raw", func(b *testing.B) {
					dst := make([]byte, s2.MaxEncodedLen(len(src)))
					for b.Loop() {
						s2.EncodeSnappy(dst, src)
					}
				})
			case LZ4: // the block calls of a Kafka frame, one per 64 KiB
				blocks := func(b *testing.B, f func(src, dst []byte) (int, error)) {
					dst := make([]byte, lz4.CompressBlockBound(64<<10))
					for b.Loop() {
						for o := 0; o < len(src); o += 64 << 10 {
							f(src[o:min(o+64<<10, len(src))], dst)
						}
					}
				}
				bench("raw", func(b *testing.B) {
					var cc lz4.CompressorCCompat
					blocks(b, cc.CompressBlock)
				})
				bench("raw_pierrec_fast", func(b *testing.B) {
					var fast lz4.Compressor
					blocks(b, fast.CompressBlock)
				})
			case Zstd: // EncodeAll with our options
				bench("raw", func(b *testing.B) {
					enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true))
					dst := make([]byte, 0, enc.MaxEncodedSize(len(src)))
					for b.Loop() {
						dst = enc.EncodeAll(src, dst[:0])
					}
				})
			}
		}
	}
}

func BenchmarkDecompress(b *testing.B) {
	for _, c := range allCodecs {
		for _, p := range benchPayloads() {
			src := p.data
			bench := func(name string, f func(b *testing.B)) {
				b.Run(c.String()+"/"+p.name+"/"+name, func(b *testing.B) {
					b.SetBytes(int64(len(src)))
					b.ReportAllocs()
					f(b)
				})
			}
			comp := mustCompress(b, c, src)
			bench("ours", func(b *testing.B) {
				var d Decoder
				dst, err := d.AppendDecompressed(nil, c, comp, len(src))
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					dst, _ = d.AppendDecompressed(dst[:0], c, comp, len(src))
				}
			})
			out := make([]byte, len(src))
			switch c {
			case Gzip: // a reused Reader into a reused buffer
				bench("raw", func(b *testing.B) {
					var zr gzip.Reader
					var br bytes.Reader
					var buf bytes.Buffer
					for b.Loop() {
						br.Reset(comp)
						zr.Reset(&br)
						buf.Reset()
						buf.ReadFrom(&zr)
					}
				})
			case Snappy: // one raw block: s2's decoder (ours by default) and the strict one
				raw := s2.EncodeSnappy(nil, src)
				bench("raw", func(b *testing.B) {
					for b.Loop() {
						s2.Decode(out, raw)
					}
				})
				bench("strict", func(b *testing.B) {
					d := Decoder{StrictSnappy: true}
					dst, _ := d.AppendDecompressed(nil, c, comp, len(src))
					for b.Loop() {
						dst, _ = d.AppendDecompressed(dst[:0], c, comp, len(src))
					}
				})
				bench("raw_strict", func(b *testing.B) {
					for b.Loop() {
						snappy.DecodeStrict(out, raw)
					}
				})
			case LZ4: // UncompressBlock per block of the same frame
				var blocks [][]byte
				var cc lz4.CompressorCCompat
				for o := 0; o < len(src); o += 64 << 10 {
					chunk := src[o:min(o+64<<10, len(src))]
					d := make([]byte, lz4.CompressBlockBound(len(chunk)))
					n, _ := cc.CompressBlock(chunk, d)
					blocks = append(blocks, d[:n])
				}
				bench("raw", func(b *testing.B) {
					for b.Loop() {
						o := 0
						for _, blk := range blocks {
							n, _ := lz4.UncompressBlock(blk, out[o:])
							o += n
						}
					}
				})
			case Zstd: // DecodeAll of the same frame
				bench("raw", func(b *testing.B) {
					dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
					defer dec.Close()
					for b.Loop() {
						dec.DecodeAll(comp, out[:0])
					}
				})
			}
		}
	}
}

// BenchmarkOverhead alternates our call and the raw library call on every
// iteration and reports both times and their ratio, which stays meaningful
// on a loaded machine where separate benchmarks drift apart.
func BenchmarkOverhead(b *testing.B) {
	for _, c := range allCodecs {
		for _, p := range benchPayloads() {
			src := p.data
			comp := mustCompress(b, c, src)
			oursC, rawC, oursD, rawD := overheadPair(b, c, src, comp)
			for _, op := range []struct {
				name      string
				ours, raw func()
			}{{"compress", oursC, rawC}, {"decompress", oursD, rawD}} {
				b.Run(c.String()+"/"+op.name+"/"+p.name, func(b *testing.B) {
					// Allocations here are both sides' plus the timing
					// slices' (amortised to 0); the per-codec figures are
					// BenchmarkCompress's and BenchmarkDecompress's.
					b.ReportAllocs()
					op.ours()
					op.raw()
					var tOurs, tRaw []time.Duration
					for b.Loop() {
						t0 := time.Now()
						op.ours()
						t1 := time.Now()
						op.raw()
						tOurs = append(tOurs, t1.Sub(t0))
						tRaw = append(tRaw, time.Since(t1))
					}
					// Medians: a preemption lands on one side only.
					mo, mr := median(tOurs), median(tRaw)
					b.ReportMetric(float64(mo.Nanoseconds()), "ours-ns/op")
					b.ReportMetric(float64(mr.Nanoseconds()), "raw-ns/op")
					b.ReportMetric(float64(mo)/float64(mr), "ours/raw")
					b.ReportMetric(float64(len(src))/float64(mo.Nanoseconds())*1e3, "ours-MB/s")
				})
			}
		}
	}
}

// overheadPair returns, for codec c, our compress and decompress calls and
// the raw library calls that do the same work.
func overheadPair(b *testing.B, c Codec, src, comp []byte) (oursC, rawC, oursD, rawD func()) {
	var e Encoder
	var d Decoder
	cdst := make([]byte, 0, 2*len(src)+1024)
	ddst := make([]byte, 0, len(src))
	out := make([]byte, len(src))
	oursC = func() { sink, _ = e.AppendCompressed(cdst, c, src) }
	oursD = func() {
		var err error
		if sink, err = d.AppendDecompressed(ddst, c, comp, len(src)); err != nil {
			b.Fatal(err)
		}
	}
	switch c {
	case Gzip:
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, 6)
		var zr gzip.Reader
		var br bytes.Reader
		var obuf bytes.Buffer
		rawC = func() { buf.Reset(); zw.Reset(&buf); zw.Write(src); zw.Close() }
		rawD = func() { br.Reset(comp); zr.Reset(&br); obuf.Reset(); obuf.ReadFrom(&zr) }
	case Snappy:
		dst := make([]byte, s2.MaxEncodedLen(len(src)))
		raw := s2.EncodeSnappy(nil, src)
		rawC = func() { s2.EncodeSnappy(dst, src) }
		rawD = func() { s2.Decode(out, raw) }
	case LZ4:
		var cc lz4.CompressorCCompat
		dst := make([]byte, lz4.CompressBlockBound(64<<10))
		var blocks [][]byte
		for o := 0; o < len(src); o += 64 << 10 {
			chunk := src[o:min(o+64<<10, len(src))]
			blk := make([]byte, lz4.CompressBlockBound(len(chunk)))
			n, _ := cc.CompressBlock(chunk, blk)
			blocks = append(blocks, blk[:n])
		}
		rawC = func() {
			for o := 0; o < len(src); o += 64 << 10 {
				cc.CompressBlock(src[o:min(o+64<<10, len(src))], dst)
			}
		}
		rawD = func() {
			o := 0
			for _, blk := range blocks {
				n, _ := lz4.UncompressBlock(blk, out[o:])
				o += n
			}
		}
	case Zstd:
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true))
		dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		dst := make([]byte, 0, enc.MaxEncodedSize(len(src)))
		rawC = func() { enc.EncodeAll(src, dst) }
		rawD = func() { dec.DecodeAll(comp, out[:0]) }
	}
	return oursC, rawC, oursD, rawD
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
