package compress

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/segkit/segkit/format"
)

// kafkaRealDir holds segments written by real brokers (see its
// PROVENANCE.md), relative to this package's directory, where go test runs.
var kafkaRealDir = filepath.Join("..", "..", "shared", "kafka-real")

// requireKafkaReal returns kafkaRealDir, or skips the test when it is
// missing, except under CI=true, where a missing directory fails it.
func requireKafkaReal(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(kafkaRealDir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("real Kafka data missing at %s (required when CI=true): %v", kafkaRealDir, err)
		}
		t.Skipf("real Kafka data not found at %s (%v); it lives next to the repository in shared/kafka-real", kafkaRealDir, err)
	}
	return kafkaRealDir
}

// v2 record batch layout, as far as these tests need it.
const (
	batchLengthOffset = 8
	batchLogOverhead  = 12 // baseOffset + length
	batchMagicOffset  = 16
	batchAttrOffset   = 21
	batchCountOffset  = 57
	batchRecordsAt    = 61
)

// realPayload is the compressed records section of one batch.
type realPayload struct {
	file    string
	pos     int // the batch's position in file
	codec   Codec
	count   int // recordsCount
	payload []byte
}

// realPayloads walks every .log under dir and returns the compressed payload
// of every v2 batch.
func realPayloads(t testing.TB, dir string) []realPayload {
	t.Helper()
	var out []realPayload
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".log") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for pos := 0; len(b)-pos >= batchLogOverhead; {
			size := batchLogOverhead + int(int32(binary.BigEndian.Uint32(b[pos+batchLengthOffset:])))
			if size < batchLogOverhead || size > len(b)-pos {
				return fmt.Errorf("%s: bad batch length at %d", path, pos)
			}
			batch := b[pos : pos+size]
			if len(batch) > batchRecordsAt && batch[batchMagicOffset] == 2 {
				if c := Codec(batch[batchAttrOffset+1] & CodecMask); c != None {
					out = append(out, realPayload{
						file:    path,
						pos:     pos,
						codec:   c,
						count:   int(int32(binary.BigEndian.Uint32(batch[batchCountOffset:]))),
						payload: batch[batchRecordsAt:],
					})
				}
			}
			pos += size
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkRecords checks that recs holds exactly count length-prefixed records.
func checkRecords(recs []byte, count int) error {
	for i := range count {
		l, n := format.Varint(recs)
		if n <= 0 || l < 0 || int(l) > len(recs)-n {
			return fmt.Errorf("record %d of %d: bad length", i, count)
		}
		recs = recs[n+int(l):]
	}
	if len(recs) != 0 {
		return fmt.Errorf("%d bytes after %d records", len(recs), count)
	}
	return nil
}

func TestRealKafkaPayloads(t *testing.T) {
	dir := requireKafkaReal(t)
	payloads := realPayloads(t, dir)
	seen := map[Codec]int{}
	var e Encoder
	var d Decoder
	var buf, again, re []byte
	for _, p := range payloads {
		name := fmt.Sprintf("%s@%d (%v)", strings.TrimPrefix(p.file, dir), p.pos, p.codec)
		var err error
		buf, err = d.AppendDecompressed(buf[:0], p.codec, p.payload, 64<<20)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := checkRecords(buf, p.count); err != nil {
			t.Errorf("%s: decompressed records: %v", name, err)
			continue
		}
		seen[p.codec]++
		re, err = e.AppendCompressed(re[:0], p.codec, buf)
		if err != nil {
			t.Fatalf("%s: recompress: %v", name, err)
		}
		again, err = d.AppendDecompressed(again[:0], p.codec, re, len(buf))
		if err != nil || !bytes.Equal(again, buf) {
			t.Errorf("%s: our recompression does not round-trip: %v", name, err)
		}
		// Kafka's Java client compresses LZ4 with the C library; our
		// frames are meant to be identical.
		if p.codec == LZ4 && !bytes.Equal(re, p.payload) {
			t.Errorf("%s: our LZ4 frame differs from Kafka's (%d vs %d bytes)", name, len(re), len(p.payload))
		}
		// And the limit is exact on real data too.
		if _, err := d.AppendDecompressed(nil, p.codec, p.payload, len(buf)-1); len(buf) > 0 && err == nil {
			t.Errorf("%s: limit one under the size accepted", name)
		}
	}
	t.Logf("decompressed %d real payloads: %v", len(payloads), seen)
	for _, c := range []Codec{Gzip, Snappy, LZ4} {
		if seen[c] == 0 {
			t.Errorf("no %v batch found under %s", c, dir)
		}
	}
}

var generate = flag.Bool("generate", false, "regenerate the seed corpora under testdata/fuzz")

// TestGenerateCorpus writes the committed seed corpora: real payloads from
// kafka-real and edge cases. Run it with -run TestGenerateCorpus -generate.
func TestGenerateCorpus(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz")
	}
	seeds := map[string][]corpusSeed{}
	add := func(target, name string, data []byte, limit uint32) {
		if len(data) >= 64<<10 {
			t.Fatalf("seed %s/%s is %d bytes", target, name, len(data))
		}
		seeds[target] = append(seeds[target], corpusSeed{name, data, limit})
	}
	target := map[Codec]string{Gzip: "FuzzDecompressGzip", Snappy: "FuzzDecompressSnappy", LZ4: "FuzzDecompressLZ4", Zstd: "FuzzDecompressZstd"}

	// Real payloads: the few smallest and largest (under 64 KiB) per codec.
	byCodec := map[Codec][]realPayload{}
	for _, p := range realPayloads(t, requireKafkaReal(t)) {
		if len(p.payload) < 64<<10 {
			byCodec[p.codec] = append(byCodec[p.codec], p)
		}
	}
	for c, ps := range byCodec {
		slices.SortStableFunc(ps, func(a, b realPayload) int { return len(a.payload) - len(b.payload) })
		ps = slices.CompactFunc(ps, func(a, b realPayload) bool { return bytes.Equal(a.payload, b.payload) })
		pick := ps
		if len(ps) > 6 {
			pick = append(slices.Clone(ps[:3]), ps[len(ps)-3:]...)
		}
		for i, p := range pick {
			add(target[c], fmt.Sprintf("real_%d", i), p.payload, 1<<20)
		}
	}

	// Edge cases for every decoder.
	text := jsonRecords(30, 40, 300)
	for _, c := range allCodecs {
		comp := mustCompress(t, c, text)
		add(target[c], "ours", comp, 1<<20)
		add(target[c], "ours_limit_exact", comp, uint32(len(text)))
		add(target[c], "ours_limit_under", comp, uint32(len(text)-1))
		add(target[c], "empty_input", nil, 1<<20)
		add(target[c], "empty_payload", mustCompress(t, c, nil), 0)
		add(target[c], "truncated_half", comp[:len(comp)/2], 1<<20)
		add(target[c], "truncated_header", comp[:min(len(comp), 5)], 1<<20)
	}
	for _, b := range bombs(t) {
		if len(b.in) < 16<<10 {
			add(target[b.codec], "bomb_"+b.name, b.in, 1<<20)
		}
	}
	rle := mustHex("28b52ffd 00 68") // 256 RLE blocks of 128 KiB: 32 MiB from 1 KiB
	for i := range 256 {
		h := uint32(128<<10)<<3 | zstdBlockRLE<<1
		if i == 255 {
			h |= 1
		}
		rle = append(rle, byte(h), byte(h>>8), byte(h>>16), 'z')
	}
	add("FuzzDecompressZstd", "bomb_zstd_rle_32m", rle, 1<<20)
	add("FuzzDecompressSnappy", "xerial_header_only", AppendXerial(nil, nil), 100)
	add("FuzzDecompressSnappy", "raw_block", AppendSnappyBlock(nil, text), 1<<20)
	add("FuzzDecompressLZ4", "magic0_kafka3160", AppendLZ4FrameKafkaLegacy(nil, text), 1<<20)
	add("FuzzDecompressLZ4", "skippable_then_frame", append(mustHex("5a2a4d18 03000000 aabbcc"), mustCompress(t, LZ4, text[:100])...), 1<<20)
	add("FuzzDecompressZstd", "skippable_then_frame", append(mustHex("502a4d18 04000000 00000000"), mustCompress(t, Zstd, text[:100])...), 1<<20)
	add("FuzzDecompressGzip", "two_members", append(mustCompress(t, Gzip, text[:100]), mustCompress(t, Gzip, text[100:])...), 1<<20)

	for _, in := range []input{{"empty", nil}, {"one_byte", []byte{0}}, {"text", text[:2000]}, {"run", bytes.Repeat([]byte("ab"), 5000)}} {
		seeds["FuzzRoundTrip"] = append(seeds["FuzzRoundTrip"], corpusSeed{in.name, in.data, 0})
	}

	for target, list := range seeds {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			var b bytes.Buffer
			b.WriteString("go test fuzz v1\n")
			fmt.Fprintf(&b, "[]byte(%q)\n", s.data)
			if target != "FuzzRoundTrip" {
				fmt.Fprintf(&b, "uint32(%d)\n", s.limit)
			}
			if err := os.WriteFile(filepath.Join(dir, s.name), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: %d seeds", target, len(list))
	}
}

type corpusSeed struct {
	name  string
	data  []byte
	limit uint32
}
