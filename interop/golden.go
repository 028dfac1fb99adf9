package interop

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"math/rand/v2"
	"strings"

	"github.com/pierrec/lz4/v4"
	"github.com/segkit/segkit/compress"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// GoldenFile is one file of testdata/golden: a log segment's bytes written
// by encoders independent of segkit, and the manifest of what it holds,
// derived from the generator's own description of the content (never from
// segkit's decoding).
type GoldenFile struct {
	Name     string // e.g. "zstd-franz.log"; the manifest is Name minus ".log" plus ".json"
	Log      []byte
	Manifest Manifest
}

// Manifest lists the entries of a golden log and their records. The core
// module's record/golden_test.go reads it with its own copy of these types.
type Manifest struct {
	File        string          `json:"file"`
	Description string          `json:"description"`
	Producer    string          `json:"producer"`
	Entries     []ManifestEntry `json:"entries"`
}

// ManifestEntry is one v2 batch or legacy entry. For legacy entries the
// v2-only fields hold Kafka's "none" values (-1, false), baseOffset is the
// first inner offset and lastOffset the entry's own offset.
type ManifestEntry struct {
	Position             int64            `json:"position"`
	Size                 int              `json:"size"`
	Magic                int8             `json:"magic"`
	Codec                string           `json:"codec"`
	BaseOffset           int64            `json:"baseOffset"`
	LastOffset           int64            `json:"lastOffset"`
	PartitionLeaderEpoch int32            `json:"partitionLeaderEpoch"`
	TimestampType        string           `json:"timestampType"`
	MaxTimestamp         int64            `json:"maxTimestamp"`
	ProducerID           int64            `json:"producerId"`
	ProducerEpoch        int16            `json:"producerEpoch"`
	BaseSequence         int32            `json:"baseSequence"`
	Transactional        bool             `json:"transactional"`
	Control              bool             `json:"control"`
	CRC                  uint32           `json:"crc"`
	Records              []ManifestRecord `json:"records"`
}

// ManifestRecord is one record. Key and Value are base64 (JSON's []byte),
// null for a null key or value; timestamps are what a reader must report
// (-1 for magic 0, the batch's maxTimestamp under LogAppendTime).
type ManifestRecord struct {
	Offset    int64            `json:"offset"`
	Timestamp int64            `json:"timestamp"`
	Key       []byte           `json:"key"`
	Value     []byte           `json:"value"`
	Headers   []ManifestHeader `json:"headers,omitempty"`
	Marker    *ManifestMarker  `json:"marker,omitempty"`
}

// ManifestHeader is a record header; Value null for a null value.
type ManifestHeader struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// ManifestMarker is the decoded end-transaction marker of a control record.
type ManifestMarker struct {
	Type             string `json:"type"` // "ABORT" or "COMMIT"
	CoordinatorEpoch int32  `json:"coordinatorEpoch"`
}

// GenerateGolden builds every golden file, deterministically.
func GenerateGolden() ([]GoldenFile, error) {
	var out []GoldenFile
	for _, gen := range []func() (GoldenFile, error){goldenZstdFranz, goldenTxnAbortFranz, goldenMagic0LZ4, goldenMagic0Sarama} {
		f, err := gen()
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

const goldenTs = int64(1_700_000_000_000)

// goldenText returns n bytes of JSON-like text from rng.
func goldenText(rng *rand.Rand, n int) []byte {
	fields := []string{"id", "amount", "currency", "status", "merchant", "country", "note"}
	var b []byte
	b = append(b, '{')
	for len(b) < n {
		b = fmt.Appendf(b, "%q:%d,", fields[rng.IntN(len(fields))], rng.Uint32()%100000)
	}
	b = b[:n]
	b[n-1] = '}'
	return b
}

// addEntry appends one entry's bytes and its manifest entry, computed from
// the description b and the bytes (position, size, stored CRC).
func (f *GoldenFile) addEntry(raw []byte, b *Batch) {
	pos := int64(len(f.Log))
	f.Log = append(f.Log, raw...)
	w := b.Want()
	e := ManifestEntry{
		Position: pos, Size: len(raw), Magic: b.Magic, Codec: b.Codec.String(),
		BaseOffset: b.BaseOffset, PartitionLeaderEpoch: b.PartitionLeaderEpoch,
		TimestampType: "CreateTime", MaxTimestamp: w.MaxTimestamp,
		ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, BaseSequence: b.BaseSequence,
		Transactional: b.Transactional, Control: b.Control,
	}
	if b.LogAppendTime {
		e.TimestampType = "LogAppendTime"
	}
	if b.Magic == 2 {
		e.LastOffset = b.BaseOffset + int64(b.LastOffsetDelta())
		e.CRC = binary.BigEndian.Uint32(raw[17:])
	} else {
		e.LastOffset = int64(binary.BigEndian.Uint64(raw))
		e.CRC = binary.BigEndian.Uint32(raw[12:])
		if b.Magic == 0 {
			e.TimestampType, e.MaxTimestamp = "NoTimestampType", -1
		}
	}
	for _, r := range w.Records {
		mr := ManifestRecord{Offset: r.Offset, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value}
		if b.Magic == 0 {
			mr.Timestamp = -1
		}
		for _, h := range r.Headers {
			mr.Headers = append(mr.Headers, ManifestHeader{Key: h.Key, Value: h.Value})
		}
		if b.Control {
			mr.Marker = parseMarker(r.Key, r.Value)
		}
		e.Records = append(e.Records, mr)
	}
	f.Manifest.Entries = append(f.Manifest.Entries, e)
}

// parseMarker decodes an end-transaction marker with kmsg.
func parseMarker(key, value []byte) *ManifestMarker {
	var k kmsg.ControlRecordKey
	var v kmsg.EndTxnMarker
	if k.ReadFrom(key) != nil || v.ReadFrom(value) != nil {
		return nil
	}
	t := "ABORT"
	if k.Type == kmsg.ControlRecordKeyTypeCommit {
		t = "COMMIT"
	}
	return &ManifestMarker{Type: t, CoordinatorEpoch: v.CoordinatorEpoch}
}

func goldenZstdFranz() (GoldenFile, error) {
	f := GoldenFile{Name: "zstd-franz.log", Manifest: Manifest{
		File: "zstd-franz.log",
		Description: "Five v2 batches compressed with zstd: a plain producer batch with keys and headers; " +
			"an idempotent producer's batch; edge records (null and empty keys, values and header values, empty header key); " +
			"a 100-record batch of 1 KiB values whose zstd frame holds several blocks (franz-go's 64 KiB window); " +
			"a LogAppendTime batch.",
		Producer: "interop.FranzEncoder: franz-go v1.22.3 pkg/kbin field encoding as kgo's sink.go appendTo, " +
			"kgo.DefaultCompressor(kgo.ZstdCompression()) (klauspost/compress v1.20.4 zstd, window 64 KiB, concurrency 1), CRC-32C back-patched",
	}}
	rng := rand.New(rand.NewPCG(1, 1))
	var enc FranzEncoder
	next := int64(0)
	add := func(b Batch) error {
		raw, err := enc.AppendBatch(nil, &b)
		if err != nil {
			return err
		}
		f.addEntry(raw, &b)
		next = b.BaseOffset + int64(b.LastOffsetDelta()) + 1
		return nil
	}
	// 1: plain producer, keys and a header.
	var recs []Record
	for i := range 5 {
		recs = append(recs, Record{Timestamp: goldenTs + int64(7*i), Key: fmt.Appendf(nil, "order-%d", 1000+i),
			Value:   goldenText(rng, 120+rng.IntN(60)),
			Headers: []Header{{Key: "content-type", Value: []byte("application/json")}}})
	}
	b := NewBatch(next, compress.Zstd, recs)
	b.PartitionLeaderEpoch = 0
	if err := add(b); err != nil {
		return f, err
	}
	// 2: idempotent producer, no keys.
	recs = nil
	for i := range 50 {
		recs = append(recs, Record{Timestamp: goldenTs + 1000 + int64(i), Value: goldenText(rng, 200)})
	}
	b = NewBatch(next, compress.Zstd, recs)
	b.PartitionLeaderEpoch, b.ProducerID, b.ProducerEpoch, b.BaseSequence = 0, 4000, 0, 0
	if err := add(b); err != nil {
		return f, err
	}
	// 3: edge records.
	recs = []Record{
		{Timestamp: goldenTs + 2000, Key: nil, Value: nil},
		{Timestamp: goldenTs + 2001, Key: []byte{}, Value: []byte{}},
		{Timestamp: goldenTs + 1999, Key: []byte("k"), Value: []byte("v"), Headers: []Header{
			{Key: "", Value: nil}, {Key: "empty", Value: []byte{}}, {Key: "ключ", Value: []byte{0, 1, 2, 0xff}}}},
	}
	b = NewBatch(next, compress.Zstd, recs)
	b.PartitionLeaderEpoch, b.ProducerID, b.ProducerEpoch, b.BaseSequence = 1, 4000, 0, 50
	if err := add(b); err != nil {
		return f, err
	}
	// 4: a frame with several blocks.
	recs = nil
	for i := range 100 {
		recs = append(recs, Record{Timestamp: goldenTs + 3000 + int64(i/10), Key: fmt.Appendf(nil, "user-%05d", rng.IntN(100000)),
			Value: goldenText(rng, 1024)})
	}
	b = NewBatch(next, compress.Zstd, recs)
	b.PartitionLeaderEpoch = 1
	if err := add(b); err != nil {
		return f, err
	}
	// 5: LogAppendTime.
	recs = nil
	for i := range 3 {
		recs = append(recs, Record{Timestamp: goldenTs + 4000 + int64(i), Key: fmt.Appendf(nil, "k%d", i), Value: goldenText(rng, 64)})
	}
	b = NewBatch(next, compress.Zstd, recs)
	b.PartitionLeaderEpoch, b.LogAppendTime, b.MaxTimestamp = 1, true, goldenTs+4500
	if err := add(b); err != nil {
		return f, err
	}
	if len(f.Manifest.Entries) != 5 {
		return f, errors.New("interop: zstd-franz: wrong entry count")
	}
	return f, nil
}

func goldenTxnAbortFranz() (GoldenFile, error) {
	f := GoldenFile{Name: "txn-abort-franz.log", Manifest: Manifest{
		File: "txn-abort-franz.log",
		Description: "Transactions as a broker stores them, offsets consecutive: producer 7000 (epoch 2) writes transactional data " +
			"(uncompressed, then zstd), a plain producer's batch lands in between, the coordinator (epoch 12) writes an ABORT marker; " +
			"producer 7000 then writes a second transaction (lz4, then gzip) and the coordinator writes a COMMIT marker; " +
			"a last plain batch follows. Markers are uncompressed control batches with one record (key: version 0 + type, " +
			"value: version 0 + coordinatorEpoch), baseSequence -1, the producer's id and epoch.",
		Producer: "interop.FranzEncoder (franz-go v1.22.3 pkg/kbin, kgo.DefaultCompressor for zstd, lz4 and gzip); " +
			"marker keys and values encoded by kmsg.ControlRecordKey and kmsg.EndTxnMarker (kmsg v1.15.1)",
	}}
	rng := rand.New(rand.NewPCG(2, 2))
	var enc FranzEncoder
	next := int64(0)
	ts := goldenTs + 10_000
	const pid, epoch, coordEpoch = 7000, 2, 12
	seq := int32(0)
	data := func(n int, codec compress.Codec, txn bool) Batch {
		var recs []Record
		for i := range n {
			recs = append(recs, Record{Timestamp: ts + int64(i), Key: fmt.Appendf(nil, "acct-%d", rng.IntN(100)),
				Value: goldenText(rng, 80+rng.IntN(80)), Headers: []Header{{Key: "txn", Value: []byte(fmt.Sprint(txn))}}})
		}
		ts += 100
		b := NewBatch(next, codec, recs)
		b.PartitionLeaderEpoch = 5
		if txn {
			b.ProducerID, b.ProducerEpoch, b.BaseSequence, b.Transactional = pid, epoch, seq, true
			seq += int32(n)
		}
		return b
	}
	marker := func(commit bool) Batch {
		k, v := FranzEndTxnMarker(commit, coordEpoch)
		b := NewBatch(next, compress.None, []Record{{Timestamp: ts, Key: k, Value: v}})
		ts += 100
		b.PartitionLeaderEpoch = 5
		b.ProducerID, b.ProducerEpoch, b.BaseSequence = pid, epoch, -1
		b.Transactional, b.Control = true, true
		return b
	}
	for _, mk := range []func() Batch{
		func() Batch { return data(3, compress.None, true) },
		func() Batch { return data(2, compress.None, false) },
		func() Batch { return data(4, compress.Zstd, true) },
		func() Batch { return marker(false) },
		func() Batch { return data(3, compress.LZ4, true) },
		func() Batch { return data(2, compress.Gzip, true) },
		func() Batch { return marker(true) },
		func() Batch { return data(1, compress.Zstd, false) },
	} {
		b := mk()
		raw, err := enc.AppendBatch(nil, &b)
		if err != nil {
			return f, err
		}
		f.addEntry(raw, &b)
		next = b.BaseOffset + int64(b.LastOffsetDelta()) + 1
	}
	return f, nil
}

// xxh32 is XXH32 (seed 0), written out here so that the LZ4 frame below
// depends on nothing but the specification.
func xxh32(b []byte) uint32 {
	var (
		p1 uint32 = 2654435761
		p2 uint32 = 2246822519
		p3 uint32 = 3266489917
		p4 uint32 = 668265263
		p5 uint32 = 374761393
	)
	n := len(b)
	var h uint32
	if n >= 16 {
		v1, v2, v3, v4 := p1+p2, p2, uint32(0), 0-p1
		round := func(v, x uint32) uint32 { return bits.RotateLeft32(v+x*p2, 13) * p1 }
		for ; len(b) >= 16; b = b[16:] {
			v1 = round(v1, binary.LittleEndian.Uint32(b))
			v2 = round(v2, binary.LittleEndian.Uint32(b[4:]))
			v3 = round(v3, binary.LittleEndian.Uint32(b[8:]))
			v4 = round(v4, binary.LittleEndian.Uint32(b[12:]))
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = p5
	}
	h += uint32(n)
	for ; len(b) >= 4; b = b[4:] {
		h = bits.RotateLeft32(h+binary.LittleEndian.Uint32(b)*p3, 17) * p4
	}
	for ; len(b) > 0; b = b[1:] {
		h = bits.RotateLeft32(h+uint32(b[0])*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}

// Kafka3160LZ4Frame returns src as the LZ4 frame Kafka 0.8.2-0.9's
// KafkaLZ4BlockOutputStream wrote: magic, FLG 0x60 (version 1, independent
// blocks, no checksums, no content size), BD 0x40 (64 KiB blocks), the
// header checksum, 64 KiB blocks compressed with pierrec/lz4's
// CompressorCCompat (the C library's output, which lz4-java wraps) or
// stored raw (high bit of the size) when compressing does not shrink them,
// and the end mark. With kafka3160 the header checksum is computed as
// KAFKA-3160 describes the bug: (xxh32(magic..BD) >> 8) & 0xff, the hash
// taken from the start of the frame, magic included; without it, it is the
// correct (xxh32(FLG, BD) >> 8) & 0xff.
func Kafka3160LZ4Frame(src []byte, kafka3160 bool) ([]byte, error) {
	out := []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40}
	if kafka3160 {
		out = append(out, byte(xxh32(out[0:6])>>8))
	} else {
		out = append(out, byte(xxh32(out[4:6])>>8))
	}
	var c lz4.CompressorCCompat
	buf := make([]byte, lz4.CompressBlockBound(64<<10))
	for len(src) > 0 {
		chunk := src[:min(len(src), 64<<10)]
		src = src[len(chunk):]
		n, err := c.CompressBlock(chunk, buf)
		if err != nil {
			return nil, err
		}
		if n == 0 || n >= len(chunk) {
			out = binary.LittleEndian.AppendUint32(out, uint32(len(chunk))|0x80000000)
			out = append(out, chunk...)
			continue
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
		out = append(out, buf[:n]...)
	}
	return binary.LittleEndian.AppendUint32(out, 0), nil
}

// appendV0Message appends a magic-0 log entry built with kmsg.MessageV0,
// with its size and CRC-32 (IEEE, over magic..value) computed here.
func appendV0Message(dst []byte, offset int64, attrs int8, key, value []byte) []byte {
	m := kmsg.MessageV0{Offset: offset, Magic: 0, Attributes: attrs, Key: key, Value: value}
	body := m.AppendTo(nil)[16:] // magic onwards
	m.MessageSize = int32(4 + len(body))
	m.CRC = int32(crc32.ChecksumIEEE(body))
	return m.AppendTo(dst)
}

func goldenMagic0LZ4() (GoldenFile, error) {
	f := GoldenFile{Name: "magic0-lz4.log", Manifest: Manifest{
		File: "magic0-lz4.log",
		Description: "Magic-0 messages as Kafka 0.8.2/0.9 stored LZ4 data: a wrapper of 5 small messages, an uncompressed " +
			"message, and a wrapper of 90 1 KiB messages (the last 70 random) whose frame has a compressed 64 KiB block and " +
			"a block stored raw. Wrapper offset = last inner offset; inner offsets absolute (v0). Every LZ4 frame carries the " +
			"KAFKA-3160 header checksum (xxh32 over magic+FLG+BD), which pierrec/lz4 and lz4 1.x frame readers reject.",
		Producer: "interop.Kafka3160LZ4Frame (own frame header, pierrec/lz4 v4.1.33 CompressorCCompat blocks, own XXH32) " +
			"inside messages built with kmsg.MessageV0 (kmsg v1.15.1), size and CRC-32 computed by the generator",
	}}
	rng := rand.New(rand.NewPCG(3, 3))
	next := int64(0)
	wrapper := func(recs []Record) error {
		var inner []byte
		for i := range recs {
			recs[i].Offset = next + int64(i)
			recs[i].Timestamp = -1
			inner = appendV0Message(inner, recs[i].Offset, 0, recs[i].Key, recs[i].Value)
		}
		frame, err := Kafka3160LZ4Frame(inner, true)
		if err != nil {
			return err
		}
		last := recs[len(recs)-1].Offset
		raw := appendV0Message(nil, last, int8(compress.LZ4), nil, frame)
		b := Batch{Magic: 0, BaseOffset: next, PartitionLeaderEpoch: -1, Codec: compress.LZ4,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Records: recs}
		f.addEntry(raw, &b)
		next = last + 1
		return nil
	}
	var recs []Record
	for i := range 5 {
		r := Record{Value: goldenText(rng, 50+10*i)}
		if i%2 == 0 {
			r.Key = fmt.Appendf(nil, "sensor-%d", i)
		}
		recs = append(recs, r)
	}
	if err := wrapper(recs); err != nil {
		return f, err
	}
	plain := Record{Offset: next, Timestamp: -1, Key: []byte("k"), Value: []byte("uncompressed v0 message")}
	b := Batch{Magic: 0, BaseOffset: next, PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Records: []Record{plain}}
	f.addEntry(appendV0Message(nil, next, 0, plain.Key, plain.Value), &b)
	next++
	recs = nil
	for i := range 90 {
		v := goldenText(rng, 1024)
		if i >= 20 {
			for j := range v {
				v[j] = byte(rng.Uint32())
			}
		}
		recs = append(recs, Record{Key: fmt.Appendf(nil, "%d", i), Value: v})
	}
	if err := wrapper(recs); err != nil {
		return f, err
	}
	return f, nil
}

func goldenMagic0Sarama() (GoldenFile, error) {
	f := GoldenFile{Name: "magic0-sarama.log", Manifest: Manifest{
		File: "magic0-sarama.log",
		Description: "Magic-0 messages as sarama encodes them: uncompressed messages (a null key, an empty value), " +
			"a gzip wrapper, a snappy wrapper (xerial framing, as Kafka's Java client wrote it), and a tombstone (null value). " +
			"Wrapper offset = last inner offset; inner offsets absolute (v0).",
		Producer: "sarama v1.61.1 MessageSet/Message encoders (Version 0) through sarama's own encode(); " +
			"gzip and xerial snappy from klauspost/compress v1.20.4 as sarama calls them",
	}}
	rng := rand.New(rand.NewPCG(4, 4))
	next := int64(0)
	add := func(codec compress.Codec, recs []Record) error {
		for i := range recs {
			recs[i].Offset = next + int64(i)
			recs[i].Timestamp = -1
		}
		b := Batch{Magic: 0, BaseOffset: next, PartitionLeaderEpoch: -1, Codec: codec,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Records: recs}
		raw, err := SaramaAppend(nil, &b)
		if err != nil {
			return err
		}
		if codec == compress.None {
			// One entry per message.
			for i := range recs {
				m := b
				m.BaseOffset, m.Records = recs[i].Offset, recs[i:i+1]
				size := 12 + int(binary.BigEndian.Uint32(raw[8:]))
				f.addEntry(raw[:size], &m)
				raw = raw[size:]
			}
		} else {
			f.addEntry(raw, &b)
		}
		next += int64(len(recs))
		return nil
	}
	steps := []struct {
		codec compress.Codec
		recs  []Record
	}{
		{compress.None, []Record{{Key: nil, Value: []byte("first")}, {Key: []byte("k1"), Value: []byte{}}, {Key: []byte("k2"), Value: goldenText(rng, 40)}}},
		{compress.Gzip, nil},
		{compress.Snappy, nil},
		{compress.None, []Record{{Key: []byte("k2"), Value: nil}}},
	}
	for i := range 7 {
		steps[1].recs = append(steps[1].recs, Record{Key: fmt.Appendf(nil, "g%d", i), Value: goldenText(rng, 300)})
	}
	for i := range 5 {
		r := Record{Value: []byte(strings.Repeat(fmt.Sprintf("snappy-%d ", i), 30))}
		if i != 2 {
			r.Key = fmt.Appendf(nil, "s%d", i)
		}
		steps[2].recs = append(steps[2].recs, r)
	}
	for _, s := range steps {
		if err := add(s.codec, s.recs); err != nil {
			return f, err
		}
	}
	return f, nil
}
