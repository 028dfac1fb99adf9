package interop

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/record"
)

// diffCases is the number of random logs each differential test checks.
const diffCases = 200

var allCodecs = []compress.Codec{compress.None, compress.Gzip, compress.Snappy, compress.LZ4, compress.Zstd}

// batchKind is the shape of a generated v2 batch.
type batchKind int

const (
	kindPlain         batchKind = iota // no producer id
	kindIdempotent                     // producer id, epoch, sequence
	kindTransactional                  // transactional data
	kindControl                        // COMMIT or ABORT marker
	kindLogAppendTime                  // broker-assigned timestamps
	kindCompacted                      // offset gaps, as the cleaner leaves them
	numKinds
)

var kindNames = [...]string{"plain", "idempotent", "transactional", "control", "logappendtime", "compacted"}

// randBytes returns nil, empty, or random bytes (text-like, so that codecs
// compress them, or fully random).
func randBytes(rng *rand.Rand, maxLen int, nullable bool) []byte {
	switch p := rng.IntN(10); {
	case p == 0 && nullable:
		return nil
	case p == 1:
		return []byte{}
	}
	n := rng.IntN(maxLen + 1)
	b := make([]byte, n)
	if rng.IntN(3) == 0 {
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	const alphabet = `{"id":1234567890,"status":"ok","note":"lorem ipsum"}`
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return b
}

func randHeaderKey(rng *rand.Rand) string {
	keys := []string{"", "trace-id", "content-type", "schéma", "キー", "x"}
	if rng.IntN(3) == 0 {
		b := randBytes(rng, 12, false)
		if utf8.Valid(b) {
			return string(b)
		}
	}
	return keys[rng.IntN(len(keys))]
}

func randRecords(rng *rand.Rand, n int, ts int64) []Record {
	recs := make([]Record, n)
	withKeys := rng.IntN(4) != 0
	withHeaders := rng.IntN(2) == 0
	for i := range recs {
		r := &recs[i]
		r.Timestamp = ts + rng.Int64N(200_000) - 20_000 // out of order too
		if withKeys {
			r.Key = randBytes(rng, 40, true)
		}
		r.Value = randBytes(rng, 1500, true)
		if withHeaders {
			for range rng.IntN(5) {
				r.Headers = append(r.Headers, Header{Key: randHeaderKey(rng), Value: randBytes(rng, 30, true)})
			}
		}
	}
	return recs
}

// randLog returns 1 to 4 consecutive v2 batches; the codec of batch i is
// allCodecs[(seed+i)%5] so that every codec meets every kind.
func randLog(seed uint64) []Batch {
	rng := rand.New(rand.NewPCG(seed, 0x5e9c17))
	next := rng.Int64N(1 << 40)
	ts := int64(1_500_000_000_000) + rng.Int64N(1<<36)
	pid := rng.Int64N(1 << 40)
	epoch := int16(rng.IntN(100))
	seq := int32(rng.IntN(1000))
	var out []Batch
	for i := range 1 + rng.IntN(4) {
		kind := batchKind(rng.IntN(int(numKinds)))
		codec := allCodecs[(int(seed)+i)%len(allCodecs)]
		n := 1 + rng.IntN(40)
		if rng.IntN(10) == 0 {
			n = 100 + rng.IntN(400)
		}
		recs := randRecords(rng, n, ts)
		if kind == kindControl {
			commit := rng.IntN(2) == 0
			k, v := FranzEndTxnMarker(commit, int32(rng.IntN(50)))
			recs = []Record{{Timestamp: ts, Key: k, Value: v}}
			codec = compress.None // coordinators write markers uncompressed
		}
		b := NewBatch(next, codec, recs)
		if rng.IntN(3) == 0 {
			b.PartitionLeaderEpoch = int32(rng.IntN(200))
		}
		switch kind {
		case kindIdempotent:
			b.ProducerID, b.ProducerEpoch, b.BaseSequence = pid, epoch, seq
		case kindTransactional, kindControl:
			b.ProducerID, b.ProducerEpoch, b.BaseSequence = pid, epoch, seq
			b.Transactional = true
			b.Control = kind == kindControl
			if b.Control {
				b.BaseSequence = -1 // as Kafka writes markers
			}
		case kindLogAppendTime:
			b.LogAppendTime = true
			b.MaxTimestamp = b.maxCreateTime() + rng.Int64N(5000)
		case kindCompacted:
			off := next
			for j := range b.Records {
				b.Records[j].Offset = off
				off += 1 + rng.Int64N(5)
			}
		}
		if b.BaseSequence >= 0 {
			seq += int32(len(b.Records))
		}
		next = b.BaseOffset + int64(b.LastOffsetDelta()) + 1
		ts += 1000
		out = append(out, b)
	}
	return out
}

func describe(log []Batch) string {
	var s []byte
	for i, b := range log {
		kind := "plain"
		switch {
		case b.Control:
			kind = "control"
		case b.Transactional:
			kind = "txn"
		case b.LogAppendTime:
			kind = "logappend"
		case b.ProducerID >= 0:
			kind = "idempotent"
		}
		s = fmt.Appendf(s, "[%d %s %v n=%d base=%d]", i, kind, b.Codec, len(b.Records), b.BaseOffset)
	}
	return string(s)
}

// kindOf classifies a generated batch.
func kindOf(b *Batch) string {
	switch {
	case b.Control:
		return "control"
	case b.Transactional:
		return "transactional"
	case b.LogAppendTime:
		return "logappendtime"
	case !consecutive(b):
		return "compacted"
	case b.ProducerID >= 0:
		return "idempotent"
	}
	return "plain"
}

// TestDiffCoverage checks that the random logs cover every codec with every
// batch kind, null and empty keys, values and header values, and logs the
// counts.
func TestDiffCoverage(t *testing.T) {
	cells := map[string]int{}
	var batches, recs, nullKeys, emptyKeys, nullValues, emptyValues, headers, nullHeaderValues, multi int
	for seed := uint64(1); seed <= diffCases; seed++ {
		log := randLog(seed)
		if len(log) > 1 {
			multi++
		}
		for i := range log {
			b := &log[i]
			batches++
			cells[kindOf(b)+"/"+b.Codec.String()]++
			for _, r := range b.Records {
				recs++
				switch {
				case r.Key == nil:
					nullKeys++
				case len(r.Key) == 0:
					emptyKeys++
				}
				switch {
				case r.Value == nil:
					nullValues++
				case len(r.Value) == 0:
					emptyValues++
				}
				for _, h := range r.Headers {
					headers++
					if h.Value == nil {
						nullHeaderValues++
					}
				}
			}
		}
	}
	for _, k := range kindNames {
		for _, c := range allCodecs {
			if k == "control" && c != compress.None {
				continue
			}
			if cells[k+"/"+c.String()] == 0 {
				t.Errorf("no %s batch with codec %v", k, c)
			}
		}
	}
	t.Logf("%d logs (%d with several batches), %d batches, %d records: %d null keys, %d empty keys, %d null values, %d empty values, %d headers (%d null values)",
		diffCases, multi, batches, recs, nullKeys, emptyKeys, nullValues, emptyValues, headers, nullHeaderValues)
	t.Logf("batches per kind/codec: %v", cells)
}

func wantAll(log []Batch) []Batch {
	out := make([]Batch, len(log))
	for i := range log {
		out[i] = log[i].Want()
	}
	return out
}

// compareLog checks got against want batch by batch.
func compareLog(t *testing.T, seed uint64, who string, want, got []Batch, nullSensitive bool) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("seed %d %s: want %d batches, got %d", seed, who, len(want), len(got))
	}
	for i := range want {
		if d := Diff(&want[i], &got[i], nullSensitive); d != "" {
			t.Errorf("seed %d %s batch %d (%v, %d records):\n%s", seed, who, i, want[i].Codec, len(want[i].Records), d)
		}
	}
}

func segkitEncodeLog(t testing.TB, w *record.Builder, log []Batch) []byte {
	t.Helper()
	var buf []byte
	for i := range log {
		var err error
		if buf, err = SegkitAppend(w, buf, &log[i]); err != nil {
			t.Fatalf("segkit encode batch %d: %v", i, err)
		}
	}
	return buf
}

// segkitDecodeLog decodes a whole log with a validating Scanner and
// SegkitDecodeV2, and checks they agree on the entry boundaries.
func segkitDecodeLog(raw []byte) ([]Batch, error) { return segkitDecodeLogLimit(raw, 0) }

// segkitDecodeLogLimit is segkitDecodeLog with a decompression limit (0:
// record's default).
func segkitDecodeLogLimit(raw []byte, limit int) ([]Batch, error) {
	d := SegkitDecoder{MaxDecompressed: limit}
	s := record.NewScanner(raw, "log", 0)
	s.Validate, s.MaxDecompressed = true, limit
	var out []Batch
	for s.Next() {
		e := s.Entry()
		var b Batch
		var err error
		if e.Magic == 2 {
			b, _, err = d.DecodeV2(e.Raw())
		} else {
			b, _, err = d.DecodeLegacy(e.Raw())
		}
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if kind, at, n := s.Tail(); kind != record.TailNone {
		return nil, fmt.Errorf("tail %v at %d (%d bytes)", kind, at, n)
	}
	return out, nil
}

// kafkaGoWant is what kafka-go reports for a batch: it has no field for
// maxTimestamp or the timestamp type, and it gives every record
// baseTimestamp + timestampDelta even under LogAppendTime.
func kafkaGoWant(b Batch) Batch {
	w := b.Want()
	w.MaxTimestamp, w.LogAppendTime = 0, false
	for i := range w.Records {
		w.Records[i].Timestamp = b.Records[i].Timestamp
	}
	return w
}

// TestSegkitEncodesOthersDecode: segkit encodes random logs; franz-go
// (kgo.ProcessFetchPartition), sarama (RecordBatch.decode) and kafka-go
// (protocol.RecordSet.ReadFrom) decode them to the same batches and records.
func TestSegkitEncodesOthersDecode(t *testing.T) {
	var w record.Builder
	var franz FranzDecoder
	for seed := uint64(1); seed <= diffCases; seed++ {
		log := randLog(seed)
		raw := segkitEncodeLog(t, &w, log)
		want := wantAll(log)

		got, err := segkitDecodeLog(raw)
		if err != nil {
			t.Fatalf("seed %d %s: segkit decode: %v", seed, describe(log), err)
		}
		compareLog(t, seed, "segkit", want, got, true)

		got, err = franz.Decode(raw)
		if err != nil {
			t.Fatalf("seed %d %s: franz-go decode: %v", seed, describe(log), err)
		}
		compareLog(t, seed, "franz-go", want, got, true)

		got, err = SaramaDecode(raw)
		if err != nil {
			t.Fatalf("seed %d %s: sarama decode: %v", seed, describe(log), err)
		}
		compareLog(t, seed, "sarama", want, got, true)

		got, err = KafkaGoDecode(raw)
		if err != nil {
			t.Fatalf("seed %d %s: kafka-go decode: %v", seed, describe(log), err)
		}
		kwant := make([]Batch, len(log))
		for i := range log {
			kwant[i] = kafkaGoWant(log[i])
		}
		compareLog(t, seed, "kafka-go", kwant, got, true)
		if t.Failed() {
			t.Fatalf("seed %d: %s", seed, describe(log))
		}
	}
}

// TestOthersEncodeSegkitDecodes: franz-go and sarama encode random logs
// (kafka-go the plain batches it can express); segkit decodes them to the
// same batches. Uncompressed batches must be byte-identical to segkit's
// encoding; compressed ones must decompress to segkit's records section.
func TestOthersEncodeSegkitDecodes(t *testing.T) {
	var w record.Builder
	var fe FranzEncoder
	var dec compress.Decoder
	var kbuf bytes.Buffer
	kafkaGoCases := 0
	for seed := uint64(1); seed <= diffCases; seed++ {
		log := randLog(seed)
		want := wantAll(log)
		var franzRaw, saramaRaw []byte
		for i := range log {
			b := &log[i]
			ours, err := SegkitAppend(&w, nil, b)
			if err != nil {
				t.Fatal(err)
			}
			fr, err := fe.AppendBatch(nil, b)
			if err != nil {
				t.Fatalf("seed %d: franz-go encode: %v", seed, err)
			}
			sr, err := SaramaAppend(nil, b)
			if err != nil {
				t.Fatalf("seed %d: sarama encode: %v", seed, err)
			}
			franzRaw = append(franzRaw, fr...)
			saramaRaw = append(saramaRaw, sr...)
			// Same bytes when uncompressed; same records section when not.
			for _, o := range []struct {
				who string
				raw []byte
			}{{"franz-go", fr}, {"sarama", sr}} {
				if b.Codec == compress.None {
					if !bytes.Equal(o.raw, ours) {
						t.Errorf("seed %d batch %d: %s bytes differ from segkit's\n%s: %x\nsegkit: %x", seed, i, o.who, o.who, head(o.raw), head(ours))
					}
					continue
				}
				plainSpec := *b
				plainSpec.Codec = compress.None
				plain, _ := SegkitAppend(&w, nil, &plainSpec)
				got, err := dec.AppendDecompressed(nil, b.Codec, o.raw[record.RecordsOffset:], 1<<28)
				if err != nil {
					t.Errorf("seed %d batch %d: segkit cannot decompress %s's %v payload: %v", seed, i, o.who, b.Codec, err)
				} else if !bytes.Equal(got, plain[record.RecordsOffset:]) {
					t.Errorf("seed %d batch %d: %s's %v payload decompresses to other records bytes", seed, i, o.who, b.Codec)
				}
				// Header fields other than length and CRC match too.
				if !bytes.Equal(o.raw[21:61], ours[21:61]) || !bytes.Equal(o.raw[:8], ours[:8]) || !bytes.Equal(o.raw[12:17], ours[12:17]) {
					t.Errorf("seed %d batch %d: %s's header differs:\n%x\n%x", seed, i, o.who, o.raw[:61], ours[:61])
				}
			}
			// kafka-go writes only producer-style batches.
			if !b.Transactional && b.ProducerID < 0 && !b.LogAppendTime && b.PartitionLeaderEpoch < 0 && consecutive(b) {
				k := *b
				k.BaseOffset = 0
				k.Records = append([]Record(nil), b.Records...)
				for j := range k.Records {
					k.Records[j].Offset = int64(j)
				}
				kraw, err := KafkaGoEncode(&kbuf, &k, KafkaGoRecords(&k))
				if err != nil {
					t.Fatalf("seed %d: kafka-go encode: %v", seed, err)
				}
				got, _, err := SegkitDecodeV2(kraw)
				if err != nil {
					t.Fatalf("seed %d batch %d: segkit decode of kafka-go's %v batch: %v", seed, i, b.Codec, err)
				}
				kw := k.Want()
				if d := Diff(&kw, &got, true); d != "" {
					t.Errorf("seed %d batch %d kafka-go→segkit:\n%s", seed, i, d)
				}
				kafkaGoCases++
			}
		}
		got, err := segkitDecodeLog(franzRaw)
		if err != nil {
			t.Fatalf("seed %d %s: segkit decode of franz-go's log: %v", seed, describe(log), err)
		}
		compareLog(t, seed, "franz-go→segkit", want, got, true)
		got, err = segkitDecodeLog(saramaRaw)
		if err != nil {
			t.Fatalf("seed %d %s: segkit decode of sarama's log: %v", seed, describe(log), err)
		}
		compareLog(t, seed, "sarama→segkit", want, got, true)
		if t.Failed() {
			t.Fatalf("seed %d: %s", seed, describe(log))
		}
	}
	if kafkaGoCases < 50 {
		t.Errorf("only %d batches checked against kafka-go's encoder", kafkaGoCases)
	}
	t.Logf("%d kafka-go encoded batches decoded", kafkaGoCases)
}

func consecutive(b *Batch) bool {
	for i, r := range b.Records {
		if r.Offset != b.BaseOffset+int64(i) {
			return false
		}
	}
	return true
}

func head(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}

// TestCRCChecked proves that each decoder in the harness really checks the
// CRC: a flipped payload byte in a segkit batch must be rejected by all of
// them, and a flipped byte in franz-go's and sarama's batches by segkit.
func TestCRCChecked(t *testing.T) {
	var w record.Builder
	var fe FranzEncoder
	var franz FranzDecoder
	for _, codec := range allCodecs {
		recs := randRecords(rand.New(rand.NewPCG(uint64(codec), 1)), 20, 1_700_000_000_000)
		b := NewBatch(42, codec, recs)
		raw, err := SegkitAppend(&w, nil, &b)
		if err != nil {
			t.Fatal(err)
		}
		bad := bytes.Clone(raw)
		bad[len(bad)-1] ^= 0x01
		if fp, _ := franz.Process(bad); fp.Err == nil {
			t.Errorf("%v: franz-go accepted a bad CRC", codec)
		}
		if _, err := SaramaDecode(bad); err == nil {
			t.Errorf("%v: sarama accepted a bad CRC", codec)
		}
		if _, err := KafkaGoDecode(bad); err == nil {
			t.Errorf("%v: kafka-go accepted a bad CRC", codec)
		}
		fr, _ := fe.AppendBatch(nil, &b)
		sr, _ := SaramaAppend(nil, &b)
		for who, o := range map[string][]byte{"franz-go": fr, "sarama": sr} {
			o = bytes.Clone(o)
			o[record.RecordsOffset] ^= 0x80
			if _, _, err := record.ReadBatch(o); err == nil {
				t.Errorf("%v: segkit accepted a bad CRC in %s's batch", codec, who)
			}
		}
	}
}
