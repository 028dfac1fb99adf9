package compress

import (
	"bytes"
	stdgzip "compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
)

// growMaxSeed is the repository's bound on a committed seed file.
const growMaxSeed = 10 << 10

// growCorpus collects the seeds of one target and writes them as grow-*
// files: named by a hash of their content, never a duplicate of a file
// already in the directory, each under growMaxSeed.
type growCorpus struct {
	t      testing.TB
	dir    string
	seen   map[string]bool
	files  map[string]string
	kinds  map[string]int
	target string
	caps   map[string]int // seeds per kind; defCap otherwise
	defCap int
}

func newGrowCorpus(t testing.TB, target string) *growCorpus {
	c := &growCorpus{t: t, target: target, dir: filepath.Join("testdata", "fuzz", target), seen: map[string]bool{}, files: map[string]string{}, kinds: map[string]int{}, caps: map[string]int{}, defCap: 15}
	ents, _ := os.ReadDir(c.dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "grow-") {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(c.dir, e.Name())); err == nil {
			c.seen[string(b)] = true
		}
	}
	return c
}

// add adds one seed (the fuzz function's arguments, in order); it reports
// whether the seed is new and small enough.
func (c *growCorpus) add(kind string, values ...any) bool {
	text := fuzzseed.Encode(values...)
	limit, ok := c.caps[kind]
	if !ok {
		limit = c.defCap
	}
	if len(text) >= growMaxSeed || c.seen[text] || c.kinds[kind] >= limit {
		return false
	}
	c.seen[text] = true
	sum := sha256.Sum256([]byte(text))
	c.files["grow-"+kind+"-"+hex.EncodeToString(sum[:6])] = text
	c.kinds[kind]++
	return true
}

// write replaces the directory's grow-* files with the collected ones.
func (c *growCorpus) write() {
	c.t.Helper()
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	ents, _ := os.ReadDir(c.dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "grow-") {
			if err := os.Remove(filepath.Join(c.dir, e.Name())); err != nil {
				c.t.Fatal(err)
			}
		}
	}
	for name, text := range c.files {
		if err := os.WriteFile(filepath.Join(c.dir, name), []byte(text), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	c.t.Logf("%s: %d grow seeds %v", c.target, len(c.files), c.kinds)
}

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
	corp := map[Codec]*growCorpus{}
	for c, name := range target {
		corp[c] = newGrowCorpus(t, name)
	}
	for c, cp := range corp {
		cp.caps["real-"+c.String()] = 60
		cp.caps["real-"+c.String()+"-legacy"] = 30
		cp.caps["real-snappy-raw"] = 30
		cp.caps["ours-real"] = 25
	}
	rt := newGrowCorpus(t, "FuzzRoundTrip")
	rt.caps["real-records"] = 70

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
		if !cp.add(kind, p.payload, uint32(fuzzLimitMax)) {
			continue // a duplicate, or too large
		}
		decoded[p.codec] = append(decoded[p.codec], out)
		if cp.kinds[kind]%3 == 1 {
			cp.add(kind+"-exact", p.payload, uint32(len(out)))
			if len(out) > 0 {
				cp.add(kind+"-under", p.payload, uint32(len(out)-1))
			}
		}
		if cp.kinds[kind]%4 == 2 {
			cp.add(kind+"-torn", p.payload[:len(p.payload)*2/3], uint32(fuzzLimitMax))
			cp.add(kind+"-flip", flip(p.payload, len(p.payload)/2), uint32(fuzzLimitMax))
			cp.add(kind+"-zero-limit", p.payload, uint32(0))
		}
		if p.codec == Snappy && len(p.payload) >= xerialHeaderLen+4 && bytes.HasPrefix(p.payload, xerialHeader[:8]) {
			// The raw block inside the xerial chunk: the other framing.
			l := int(binary.BigEndian.Uint32(p.payload[xerialHeaderLen:]))
			if l <= len(p.payload)-xerialHeaderLen-4 {
				raw := p.payload[xerialHeaderLen+4 : xerialHeaderLen+4+l]
				cp.add("real-snappy-raw", raw, uint32(fuzzLimitMax))
				cp.add("real-snappy-xerial-v0", append(slices.Clone(p.payload[:8]), append([]byte{0, 0, 0, 0}, p.payload[12:]...)...), uint32(fuzzLimitMax))
				cp.add("real-snappy-xerial-badlen", append(slices.Clone(p.payload[:xerialHeaderLen]), append([]byte{0x7f, 0xff, 0xff, 0xff}, p.payload[xerialHeaderLen+4:]...)...), uint32(fuzzLimitMax))
			}
		}
		if p.codec == LZ4 && len(p.payload) > 7 {
			// KAFKA-3160's header checksum over the magic too.
			legacy := AppendLZ4FrameKafkaLegacy(nil, out)
			cp.add("real-lz4-kafka3160", legacy, uint32(fuzzLimitMax))
			// A frame ended by 0x80000000, which Java accepts.
			if bytes.HasSuffix(p.payload, []byte{0, 0, 0, 0}) {
				alt := slices.Clone(p.payload)
				alt[len(alt)-1] = 0x80
				cp.add("real-lz4-endmark80", alt, uint32(fuzzLimitMax))
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
			corp[c].add("ours-real", comp, uint32(fuzzLimitMax))
		}
		gz := corp[Gzip]
		for _, lvl := range []int{stdgzip.HuffmanOnly, stdgzip.NoCompression, stdgzip.BestSpeed, stdgzip.DefaultCompression, stdgzip.BestCompression} {
			if i%5 == (lvl+2)%5 {
				gz.add("stdgzip-real", stdGzip(t, src, lvl, nil), uint32(fuzzLimitMax))
			}
		}
		if i%4 == 0 {
			gz.add("stdgzip-header", stdGzip(t, src, 6, func(w *stdgzip.Writer) {
				w.Name, w.Comment, w.Extra = "segment.log", "kafka", []byte{'S', 'K', 2, 0, 1, 2}
			}), uint32(fuzzLimitMax))
			gz.add("kgzip-real", kGzip(t, src, kgzip.StatelessCompression), uint32(fuzzLimitMax))
		}
		if i%4 == 1 && len(src) > 10 {
			gz.add("two-members-real", append(stdGzip(t, src[:len(src)/2], 1, nil), stdGzip(t, src[len(src)/2:], 9, nil)...), uint32(fuzzLimitMax))
		}
		zs := corp[Zstd]
		if i%3 == 0 {
			zs.add("zstd-stream-real", zstdStream(t, src, zstd.WithEncoderCRC(true), zstd.WithWindowSize(1<<10)), uint32(fuzzLimitMax))
		}
		if i%3 == 1 {
			zs.add("zstd-nocrc-best", zstdAll(t, src, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderCRC(false)), uint32(fuzzLimitMax))
			zs.add("zstd-crc-fastest", zstdAll(t, src, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(true), zstd.WithSingleSegment(false)), uint32(fuzzLimitMax))
		}
		if i%3 == 2 && len(src) > 4 {
			two := append(zstdAll(t, src[:len(src)/3]), zstdAll(t, src[len(src)/3:])...)
			zs.add("zstd-two-frames", two, uint32(fuzzLimitMax))
		}
		lz := corp[LZ4]
		switch i % 4 {
		case 0:
			lz.add("pierrec-size-checksums", pierrecLZ4(t, src, lz4.SizeOption(uint64(len(src))), lz4.BlockChecksumOption(true), lz4.ChecksumOption(true)), uint32(fuzzLimitMax))
		case 1:
			lz.add("pierrec-256k", pierrecLZ4(t, src, lz4.BlockSizeOption(lz4.Block256Kb), lz4.ChecksumOption(false)), uint32(fuzzLimitMax))
		case 2:
			lz.add("pierrec-fast", pierrecLZ4(t, src, lz4.CompressionLevelOption(lz4.Fast), lz4.ChecksumOption(true)), uint32(fuzzLimitMax))
		case 3:
			lz.add("pierrec-legacy", pierrecLZ4(t, src, lz4.LegacyOption(true)), uint32(fuzzLimitMax))
		}
		sn := corp[Snappy]
		sn.add("s2-block-real", s2.Encode(nil, src), uint32(fuzzLimitMax))
		if i%2 == 0 {
			sn.add("snappy-compat-raw", s2.EncodeSnappy(nil, src), uint32(fuzzLimitMax))
		}
		if i%4 == 0 {
			// The snappy framing format ("sNaPpY" stream), which Kafka
			// never writes: decoded as a raw block, so rejected.
			var buf bytes.Buffer
			w := s2.NewWriter(&buf, s2.WriterSnappyCompat())
			w.Write(src)
			w.Close()
			sn.add("snappy-stream-real", buf.Bytes(), uint32(fuzzLimitMax))
		}
		// FuzzRoundTrip: the real records themselves.
		rt.add("real-records", src)
	}

	// Sizes around block boundaries and incompressible or repetitive
	// contents, for every codec's writer and reader.
	sizes := []int{1, 2, 3, 4, 7, 8, 11, 12, 13, 15, 16, 17, 31, 32, 33, 59, 60, 61, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 1023, 1024, 1025, 2047, 2048, 2049}
	for _, n := range sizes {
		rt.add("rand", randBytes(uint64(n), n))
		rt.add("zeros", make([]byte, n*4))
		js := jsonRecords(uint64(n), 1+n/20, 60)
		rt.add("json", js[:min(len(js), n*3)])
	}
	for _, n := range []int{4095, 4096, 4097, 8191, 8192, 8193, 9000} {
		rt.add("run-long", bytes.Repeat([]byte{byte(n)}, n))
	}
	var every []byte
	for i := range 256 {
		every = append(every, byte(i))
	}
	rt.add("all-bytes", every)
	rt.add("all-bytes-x4", bytes.Repeat(every, 4))
	rt.add("ascending-runs", func() []byte {
		var b []byte
		for i := range 200 {
			b = append(b, bytes.Repeat([]byte{byte(i)}, i%17+1)...)
		}
		return b
	}())

	for _, c := range corp {
		c.write()
	}
	rt.write()
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
