package compress

import (
	"bytes"
	stdgzip "compress/gzip"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
)

// realCompressed is one compressed payload found in a real record set: the
// records section of a compressed v2 batch, or the value of a compressed
// legacy (magic 0/1) wrapper message.
type realCompressed struct {
	codec   Codec
	legacy  bool
	payload []byte
}

// realCompressedPayloads walks every real .log (../shared/kafka-real and
// testdata/kafka-broker) and the kafka-go fixtures' record sets.
func realCompressedPayloads(t testing.TB) []realCompressed {
	var sets [][]byte
	for _, p := range realdata.Glob(t, "*.log") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, b)
	}
	for _, p := range realdata.Glob(t, "*.hex") {
		sets = append(sets, realdata.FixtureRecordSet(t, p))
	}
	var out []realCompressed
	var walk func(b []byte, depth int)
	walk = func(b []byte, depth int) {
		for pos := 0; len(b)-pos >= batchLogOverhead+5; {
			size := int(int32(binary.BigEndian.Uint32(b[pos+batchLengthOffset:])))
			if size < 5 || size > len(b)-pos-batchLogOverhead {
				return
			}
			e := b[pos : pos+batchLogOverhead+size]
			pos += len(e)
			switch magic := e[batchMagicOffset]; magic {
			case 2:
				if len(e) > batchRecordsAt {
					if c := Codec(e[batchAttrOffset+1] & CodecMask); c != None {
						out = append(out, realCompressed{c, false, e[batchRecordsAt:]})
					}
				}
			case 0, 1:
				at := 18 // offset, size, crc, magic, attributes
				if magic == 1 {
					at += 8 // timestamp
				}
				c := Codec(e[17] & CodecMask)
				var value []byte
				for field := 0; field < 2; field++ {
					if at+4 > len(e) {
						value = nil
						break
					}
					l := int(int32(binary.BigEndian.Uint32(e[at:])))
					at += 4
					if l < 0 {
						value = nil
						continue
					}
					if l > len(e)-at {
						value = nil
						break
					}
					value = e[at : at+l]
					at += l
				}
				if c != None && value != nil {
					out = append(out, realCompressed{c, true, value})
					if depth == 0 {
						var d Decoder
						if inner, err := d.AppendDecompressed(nil, c, value, 16<<20); err == nil {
							walk(inner, depth+1)
						}
					}
				}
			}
		}
	}
	for _, s := range sets {
		walk(s, 0)
	}
	return out
}

// TestGenerateMoreSeeds adds grow-* seeds to the five compress targets:
// every distinct real compressed payload small enough (both framings of
// the real snappy data, raw and xerial; the Kafka lz4 frames; the zstd of
// the 4.3.1 broker; gzip of v2 batches and legacy wrappers), at the limits
// that matter (plenty, exact, one under, zero), truncated and with a byte
// flipped; the real records recompressed by other writers Kafka's clients
// may have used (stdlib and klauspost gzip at every level and with header
// fields, zstd streams, checksums and several frames, lz4 frames with
// content size, checksums and other block sizes, S2 blocks); and, for
// FuzzRoundTrip, the real decompressed record sections and sizes around
// every codec's block boundaries. It runs after TestGenerateCorpus (which
// rewrites each directory), with the same -generate flag.
func TestGenerateMoreSeeds(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz")
	}
	target := map[Codec]string{Gzip: "FuzzDecompressGzip", Snappy: "FuzzDecompressSnappy", LZ4: "FuzzDecompressLZ4", Zstd: "FuzzDecompressZstd"}
	corp := map[Codec]*fuzzseed.Grow{}
	for c, name := range target {
		corp[c] = newGrow(t, name)
	}
	for c, cp := range corp {
		cp.Caps["real-"+c.String()] = 60
		cp.Caps["real-"+c.String()+"-legacy"] = 30
		cp.Caps["real-snappy-raw"] = 30
		cp.Caps["ours-real"] = 25
	}
	rt := newGrow(t, "FuzzRoundTrip")
	rt.Caps["real-records"] = 70

	var d Decoder
	var e Encoder
	decoded := map[Codec][][]byte{} // real records sections, per codec
	flip := func(b []byte, at int) []byte {
		b = bytes.Clone(b)
		b[at] ^= 0x5a
		return b
	}
	// Real payloads, smallest first, so the most of them fit.
	real := realCompressedPayloads(t)
	slices.SortStableFunc(real, func(a, b realCompressed) int { return len(a.payload) - len(b.payload) })
	for i, p := range real {
		cp := corp[p.codec]
		kind := "real-" + p.codec.String()
		if p.legacy {
			kind += "-legacy"
		}
		out, err := d.AppendDecompressed(nil, p.codec, p.payload, 64<<20)
		if err != nil {
			t.Fatalf("real %v payload %d: %v", p.codec, i, err)
		}
		if !cp.Add(kind, p.payload, uint32(fuzzLimitMax)) {
			continue // a duplicate, or too large
		}
		decoded[p.codec] = append(decoded[p.codec], out)
		if cp.Kinds[kind]%3 == 1 {
			cp.Add(kind+"-exact", p.payload, uint32(len(out)))
			if len(out) > 0 {
				cp.Add(kind+"-under", p.payload, uint32(len(out)-1))
			}
		}
		if cp.Kinds[kind]%4 == 2 {
			cp.Add(kind+"-torn", p.payload[:len(p.payload)*2/3], uint32(fuzzLimitMax))
			cp.Add(kind+"-flip", flip(p.payload, len(p.payload)/2), uint32(fuzzLimitMax))
			cp.Add(kind+"-zero-limit", p.payload, uint32(0))
		}
		if p.codec == Snappy && len(p.payload) >= xerialHeaderLen+4 && bytes.HasPrefix(p.payload, xerialHeader[:8]) {
			// The raw block inside the xerial chunk: the other framing.
			l := int(binary.BigEndian.Uint32(p.payload[xerialHeaderLen:]))
			if l <= len(p.payload)-xerialHeaderLen-4 {
				raw := p.payload[xerialHeaderLen+4 : xerialHeaderLen+4+l]
				cp.Add("real-snappy-raw", raw, uint32(fuzzLimitMax))
				cp.Add("real-snappy-xerial-v0", append(slices.Clone(p.payload[:8]), append([]byte{0, 0, 0, 0}, p.payload[12:]...)...), uint32(fuzzLimitMax))
				cp.Add("real-snappy-xerial-badlen", append(slices.Clone(p.payload[:xerialHeaderLen]), append([]byte{0x7f, 0xff, 0xff, 0xff}, p.payload[xerialHeaderLen+4:]...)...), uint32(fuzzLimitMax))
			}
		}
		if p.codec == LZ4 && len(p.payload) > 7 {
			// KAFKA-3160's header checksum over the magic too.
			legacy := AppendLZ4FrameKafkaLegacy(nil, out)
			cp.Add("real-lz4-kafka3160", legacy, uint32(fuzzLimitMax))
			// A frame ended by 0x80000000, which Java accepts.
			if bytes.HasSuffix(p.payload, []byte{0, 0, 0, 0}) {
				alt := slices.Clone(p.payload)
				alt[len(alt)-1] = 0x80
				cp.Add("real-lz4-endmark80", alt, uint32(fuzzLimitMax))
			}
		}
	}

	// Every real records section recompressed by every codec's writers.
	var all [][]byte
	for _, c := range allCodecs {
		all = append(all, decoded[c]...)
	}
	slices.SortStableFunc(all, func(a, b []byte) int { return len(a) - len(b) })
	all = slices.CompactFunc(all, bytes.Equal)
	// A spread of sizes: every 3rd section.
	var picks [][]byte
	for i := 0; i < len(all); i += 3 {
		picks = append(picks, all[i])
	}
	for i, src := range picks {
		for _, c := range allCodecs {
			comp, err := e.AppendCompressed(nil, c, src)
			if err != nil {
				t.Fatal(err)
			}
			corp[c].Add("ours-real", comp, uint32(fuzzLimitMax))
		}
		gz := corp[Gzip]
		for _, lvl := range []int{stdgzip.HuffmanOnly, stdgzip.NoCompression, stdgzip.BestSpeed, stdgzip.DefaultCompression, stdgzip.BestCompression} {
			if i%5 == (lvl+2)%5 {
				gz.Add("stdgzip-real", stdGzip(t, src, lvl, nil), uint32(fuzzLimitMax))
			}
		}
		if i%4 == 0 {
			gz.Add("stdgzip-header", stdGzip(t, src, 6, func(w *stdgzip.Writer) {
				w.Name, w.Comment, w.Extra = "segment.log", "kafka", []byte{'S', 'K', 2, 0, 1, 2}
			}), uint32(fuzzLimitMax))
			gz.Add("kgzip-real", kGzip(t, src, kgzip.StatelessCompression), uint32(fuzzLimitMax))
		}
		if i%4 == 1 && len(src) > 10 {
			gz.Add("two-members-real", append(stdGzip(t, src[:len(src)/2], 1, nil), stdGzip(t, src[len(src)/2:], 9, nil)...), uint32(fuzzLimitMax))
		}
		zs := corp[Zstd]
		if i%3 == 0 {
			zs.Add("zstd-stream-real", zstdStream(t, src, zstd.WithEncoderCRC(true), zstd.WithWindowSize(1<<10)), uint32(fuzzLimitMax))
		}
		if i%3 == 1 {
			zs.Add("zstd-nocrc-best", zstdAll(t, src, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderCRC(false)), uint32(fuzzLimitMax))
			zs.Add("zstd-crc-fastest", zstdAll(t, src, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(true), zstd.WithSingleSegment(false)), uint32(fuzzLimitMax))
		}
		if i%3 == 2 && len(src) > 4 {
			two := append(zstdAll(t, src[:len(src)/3]), zstdAll(t, src[len(src)/3:])...)
			zs.Add("zstd-two-frames", two, uint32(fuzzLimitMax))
		}
		lz := corp[LZ4]
		switch i % 4 {
		case 0:
			lz.Add("pierrec-size-checksums", pierrecLZ4(t, src, lz4.SizeOption(uint64(len(src))), lz4.BlockChecksumOption(true), lz4.ChecksumOption(true)), uint32(fuzzLimitMax))
		case 1:
			lz.Add("pierrec-256k", pierrecLZ4(t, src, lz4.BlockSizeOption(lz4.Block256Kb), lz4.ChecksumOption(false)), uint32(fuzzLimitMax))
		case 2:
			lz.Add("pierrec-fast", pierrecLZ4(t, src, lz4.CompressionLevelOption(lz4.Fast), lz4.ChecksumOption(true)), uint32(fuzzLimitMax))
		case 3:
			lz.Add("pierrec-legacy", pierrecLZ4(t, src, lz4.LegacyOption(true)), uint32(fuzzLimitMax))
		}
		sn := corp[Snappy]
		sn.Add("s2-block-real", s2.Encode(nil, src), uint32(fuzzLimitMax))
		if i%2 == 0 {
			sn.Add("snappy-compat-raw", s2.EncodeSnappy(nil, src), uint32(fuzzLimitMax))
		}
		if i%4 == 0 {
			// The snappy framing format ("sNaPpY" stream), which Kafka
			// never writes: decoded as a raw block, so rejected.
			var buf bytes.Buffer
			w := s2.NewWriter(&buf, s2.WriterSnappyCompat())
			w.Write(src)
			w.Close()
			sn.Add("snappy-stream-real", buf.Bytes(), uint32(fuzzLimitMax))
		}
		// FuzzRoundTrip: the real records themselves.
		rt.Add("real-records", src)
	}

	// Sizes around block boundaries and incompressible or repetitive
	// contents, for every codec's writer and reader.
	sizes := []int{1, 2, 3, 4, 7, 8, 11, 12, 13, 15, 16, 17, 31, 32, 33, 59, 60, 61, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 1023, 1024, 1025, 2047, 2048, 2049}
	for _, n := range sizes {
		rt.Add("rand", randBytes(uint64(n), n))
		rt.Add("zeros", make([]byte, n*4))
		js := jsonRecords(uint64(n), 1+n/20, 60)
		rt.Add("json", js[:min(len(js), n*3)])
	}
	for _, n := range []int{4095, 4096, 4097, 8191, 8192, 8193, 9000} {
		rt.Add("run-long", bytes.Repeat([]byte{byte(n)}, n))
	}
	var every []byte
	for i := range 256 {
		every = append(every, byte(i))
	}
	rt.Add("all-bytes", every)
	rt.Add("all-bytes-x4", bytes.Repeat(every, 4))
	rt.Add("ascending-runs", func() []byte {
		var b []byte
		for i := range 200 {
			b = append(b, bytes.Repeat([]byte{byte(i)}, i%17+1)...)
		}
		return b
	}())

	for _, c := range corp {
		c.Write()
	}
	rt.Write()
}

func stdGzip(t testing.TB, src []byte, level int, hdr func(*stdgzip.Writer)) []byte {
	var buf bytes.Buffer
	w, err := stdgzip.NewWriterLevel(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	if hdr != nil {
		hdr(w)
	}
	w.Write(src)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func kGzip(t testing.TB, src []byte, level int) []byte {
	var buf bytes.Buffer
	w, err := kgzip.NewWriterLevel(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(src)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstdAll(t testing.TB, src []byte, opts ...zstd.EOption) []byte {
	enc, err := zstd.NewWriter(nil, append([]zstd.EOption{zstd.WithEncoderConcurrency(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return enc.EncodeAll(src, nil)
}

// zstdStream writes src as zstd-jni does: a streamed frame without a
// declared content size.
func zstdStream(t testing.TB, src []byte, opts ...zstd.EOption) []byte {
	var buf bytes.Buffer
	enc, err := zstd.NewWriter(&buf, append([]zstd.EOption{zstd.WithEncoderConcurrency(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	for len(src) > 0 { // several writes, several blocks
		n := min(len(src), 700)
		enc.Write(src[:n])
		enc.Flush()
		src = src[n:]
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func pierrecLZ4(t testing.TB, src []byte, opts ...lz4.Option) []byte {
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if err := w.Apply(append([]lz4.Option{lz4.ConcurrencyOption(1)}, opts...)...); err != nil {
		t.Fatal(err)
	}
	w.Write(src)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var _ = fmt.Sprintf

// newGrow is fuzzseed.NewGrow with this package's default of 15 seeds a kind.
func newGrow(t testing.TB, target string) *fuzzseed.Grow {
	g := fuzzseed.NewGrow(t, target)
	g.DefaultCap = 15
	return g
}
