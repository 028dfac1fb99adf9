package interop

import (
	"math/rand/v2"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/record"
)

var legacyCodecs = []compress.Codec{compress.None, compress.Gzip, compress.Snappy, compress.LZ4}

// randLegacyLog returns a legacy log of one magic: uncompressed messages
// (one Batch each) and compressed wrappers, at consecutive offsets. The
// magic is seed%2 and the wrapper codec legacyCodecs[(seed/2)%4].
func randLegacyLog(seed uint64) []Batch {
	rng := rand.New(rand.NewPCG(seed, 0x1e9ac7))
	magic := int8(seed % 2)
	codec := legacyCodecs[(seed/2)%4]
	next := rng.Int64N(1 << 40)
	ts := int64(1_400_000_000_000) + rng.Int64N(1<<36)
	var out []Batch
	for range 1 + rng.IntN(4) {
		c := codec
		n := 1 + rng.IntN(30)
		if rng.IntN(3) == 0 {
			c = compress.None
		}
		if c == compress.None {
			n = 1 // an uncompressed legacy entry holds one message
		}
		recs := randRecords(rng, n, ts)
		for i := range recs {
			recs[i].Headers = nil
			if magic == 0 {
				recs[i].Timestamp = -1
			}
		}
		b := NewBatch(next, c, recs)
		b.Magic = magic
		if magic == 1 && c != compress.None && rng.IntN(3) == 0 {
			b.LogAppendTime = true
			b.MaxTimestamp = b.maxCreateTime() + rng.Int64N(5000)
		}
		next += int64(n)
		ts += 1000
		out = append(out, b)
	}
	return out
}

// legacyWant is what a reader must report for a legacy entry.
func legacyWant(b *Batch) Batch {
	w := b.Want()
	if b.Magic == 0 {
		w.MaxTimestamp = -1
	}
	return w
}

// TestLegacyDifferential: segkit encodes magic 0 and 1 message sets
// (plain messages and gzip, snappy and lz4 wrappers); franz-go, sarama and
// (for magic 1) kafka-go decode them. sarama encodes the same sets and
// segkit decodes them. Known, asserted deviations:
//
//   - a magic-0 LZ4 wrapper from segkit carries the KAFKA-3160 header
//     checksum, as Kafka 0.8-0.10 wrote it; franz-go and sarama (both read
//     LZ4 with pierrec/lz4, which checks the header checksum) reject it;
//   - franz-go and sarama give the inner records of a LogAppendTime v1
//     wrapper their own (create) timestamps instead of the wrapper's, which
//     Kafka's AbstractLegacyRecordBatch returns (sarama looks at the inner
//     message's timestamp-type bit, which producers and brokers leave at
//     CreateTime; franz-go never looks), and franz-go reports those records
//     as CreateTime;
//   - kafka-go treats every legacy wrapper as v1 (relative inner offsets),
//     so magic 0 is not compared with it.
func TestLegacyDifferential(t *testing.T) {
	var w record.Builder
	var franz FranzDecoder
	rejected, franzLAT := 0, 0
	for seed := uint64(1); seed <= diffCases; seed++ {
		log := randLegacyLog(seed)
		raw := segkitEncodeLog(t, &w, log)
		want := make([]Batch, len(log))
		lz4v0 := false
		lat := false
		for i := range log {
			want[i] = legacyWant(&log[i])
			lz4v0 = lz4v0 || (log[i].Magic == 0 && log[i].Codec == compress.LZ4)
			lat = lat || log[i].LogAppendTime
		}
		got, err := segkitDecodeLog(raw)
		if err != nil {
			t.Fatalf("seed %d: segkit decode: %v", seed, err)
		}
		compareLog(t, seed, "segkit", want, got, true)

		if lz4v0 {
			if _, err := franz.Decode(raw); err == nil {
				t.Errorf("seed %d: franz-go accepted a KAFKA-3160 LZ4 frame", seed)
			}
			if _, err := SaramaDecode(raw); err == nil {
				t.Errorf("seed %d: sarama accepted a KAFKA-3160 LZ4 frame", seed)
			}
			rejected++
		} else {
			got, err = franz.Decode(raw)
			if err != nil {
				t.Fatalf("seed %d: franz-go decode: %v", seed, err)
			}
			// Both give a LogAppendTime wrapper's records their inner
			// create times; franz-go also reports them as CreateTime.
			fwant, swant := want, want
			if lat {
				franzLAT++
				fwant, swant = make([]Batch, len(log)), make([]Batch, len(log))
				for i := range log {
					fwant[i], swant[i] = legacyWant(&log[i]), legacyWant(&log[i])
					if log[i].LogAppendTime {
						copy(fwant[i].Records, log[i].Records)
						copy(swant[i].Records, log[i].Records)
						fwant[i].LogAppendTime = false
					}
				}
			}
			compareLog(t, seed, "franz-go", fwant, got, true)
			got, err = SaramaDecode(raw)
			if err != nil {
				t.Fatalf("seed %d: sarama decode: %v", seed, err)
			}
			compareLog(t, seed, "sarama", swant, got, true)
		}
		if log[0].Magic == 1 {
			got, err = KafkaGoDecode(raw)
			if err != nil {
				t.Fatalf("seed %d: kafka-go decode: %v", seed, err)
			}
			kwant := make([]Batch, len(log))
			for i := range log {
				kwant[i] = legacyWant(&log[i])
				kwant[i].Codec, kwant[i].LogAppendTime, kwant[i].MaxTimestamp = 0, false, 0
				if log[i].LogAppendTime {
					copy(kwant[i].Records, log[i].Records)
				}
			}
			for i := range got {
				got[i].Codec, got[i].Magic = 0, 1
			}
			compareLog(t, seed, "kafka-go", kwant, got, true)
		}

		// sarama encodes, segkit decodes.
		var sraw []byte
		for i := range log {
			if sraw, err = SaramaAppend(sraw, &log[i]); err != nil {
				t.Fatalf("seed %d: sarama encode: %v", seed, err)
			}
		}
		got, err = segkitDecodeLog(sraw)
		if err != nil {
			t.Fatalf("seed %d: segkit decode of sarama's set: %v", seed, err)
		}
		compareLog(t, seed, "sarama→segkit", want, got, true)
		if t.Failed() {
			t.Fatalf("seed %d: %s", seed, describe(log))
		}
	}
	if rejected == 0 || franzLAT == 0 {
		t.Errorf("coverage: %d magic-0 lz4 logs, %d LogAppendTime logs", rejected, franzLAT)
	}
	t.Logf("%d legacy logs; %d with magic-0 LZ4 (rejected by franz-go and sarama), %d with LogAppendTime wrappers", diffCases, rejected, franzLAT)
}
