package interop

import (
	"bytes"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/record"
)

// TestKnownDeviations pins down, with exact inputs and outputs, where the
// other libraries differ from Kafka (and so from segkit). If a library
// fixes one of these, the test fails and the differential tests can drop
// their special case.
func TestKnownDeviations(t *testing.T) {
	var w record.Builder
	mk := func(magic int8, base int64, codec compress.Codec, n int) Batch {
		var recs []Record
		for i := range n {
			recs = append(recs, Record{Timestamp: 1_600_000_000_000 + int64(i), Key: []byte{'k', byte('0' + i)}, Value: []byte("value")})
		}
		b := NewBatch(base, codec, recs)
		b.Magic = magic
		if magic == 0 {
			for i := range b.Records {
				b.Records[i].Timestamp = -1
			}
		}
		return b
	}

	t.Run("kafka-go/v2-LogAppendTime", func(t *testing.T) {
		// A LogAppendTime batch: Kafka reports maxTimestamp for every record.
		b := mk(2, 10, compress.None, 3)
		b.LogAppendTime, b.MaxTimestamp = true, 1_700_000_000_000
		raw, _ := SegkitAppend(&w, nil, &b)
		got, err := KafkaGoDecode(raw)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range got[0].Records {
			if r.Timestamp != b.Records[i].Timestamp {
				t.Errorf("record %d: kafka-go now reports %d (create time %d, append time %d)", i, r.Timestamp, b.Records[i].Timestamp, b.MaxTimestamp)
			}
		}
	})

	t.Run("kafka-go/v0-wrapper-offsets", func(t *testing.T) {
		// A magic-0 gzip wrapper at offsets 100..104: inner offsets are
		// absolute and the wrapper's offset is 104. kafka-go applies the v1
		// rule (wrapper - (count-1 - inner)) and reports 200..204.
		b := mk(0, 100, compress.Gzip, 5)
		raw, _ := SegkitAppend(&w, nil, &b)
		got, err := KafkaGoDecode(raw)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range got[0].Records {
			if want := int64(200 + i); r.Offset != want {
				t.Errorf("record %d: kafka-go now reports offset %d, was %d (Kafka: %d)", i, r.Offset, want, 100+i)
			}
			if r.Timestamp != 0 {
				t.Errorf("record %d: kafka-go now reports v0 timestamp %d, was 0 (Kafka: none, -1)", i, r.Timestamp)
			}
		}
	})

	t.Run("kafka-go/later-crc-error-ignored", func(t *testing.T) {
		// Two batches, the second with a bad CRC: kafka-go returns the
		// first batch's records and no error ("Ignore errors if we've
		// successfully read records").
		b1, b2 := mk(2, 0, compress.None, 2), mk(2, 2, compress.None, 2)
		raw, _ := SegkitAppend(&w, nil, &b1)
		raw, _ = SegkitAppend(&w, raw, &b2)
		raw[len(raw)-1] ^= 1
		got, err := KafkaGoDecode(raw)
		if err != nil || len(got) != 1 || len(got[0].Records) != 2 {
			t.Errorf("kafka-go now gives %d batches, err %v", len(got), err)
		}
		if _, err := segkitDecodeLog(raw); err == nil {
			t.Error("segkit accepted the bad CRC")
		}
	})

	t.Run("franz-go/later-decompression-error-dropped", func(t *testing.T) {
		// A good batch, then a zstd batch whose payload is damaged and whose
		// CRC is recomputed (so only decompression fails): kgo returns the
		// first batch and no error, and stops before the second.
		b1, b2 := mk(2, 0, compress.None, 2), mk(2, 2, compress.Zstd, 2)
		raw, _ := SegkitAppend(&w, nil, &b1)
		at := len(raw)
		raw, _ = SegkitAppend(&w, raw, &b2)
		second := raw[at:]
		second[record.RecordsOffset+1] ^= 0xff // zstd magic
		damaged := record.Batch{Raw: second}
		putCRC(second, damaged.ComputeCRC())
		var franz FranzDecoder
		fp, next := franz.Process(raw)
		if fp.Err != nil || len(fp.Records) != 2 || next != 2 {
			t.Errorf("kgo now returns err %v, %d records, next offset %d", fp.Err, len(fp.Records), next)
		}
		if _, err := segkitDecodeLog(raw); err == nil {
			t.Error("segkit accepted the damaged zstd frame")
		}
	})

	t.Run("franz-go+sarama/v1-LogAppendTime-wrapper", func(t *testing.T) {
		// A v1 gzip wrapper with LogAppendTime: Kafka gives every inner
		// record the wrapper's timestamp; franz-go and sarama give the
		// inner create times.
		b := mk(1, 50, compress.Gzip, 3)
		b.LogAppendTime, b.MaxTimestamp = true, 1_700_000_000_000
		raw, _ := SegkitAppend(&w, nil, &b)
		seg, err := segkitDecodeLog(raw)
		if err != nil || seg[0].Records[0].Timestamp != b.MaxTimestamp {
			t.Fatalf("segkit: %v %v", err, seg)
		}
		var franz FranzDecoder
		fr, err := franz.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		sr, err := SaramaDecode(raw)
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.Records {
			if fr[0].Records[i].Timestamp != b.Records[i].Timestamp || sr[0].Records[i].Timestamp != b.Records[i].Timestamp {
				t.Errorf("record %d: franz-go %d, sarama %d; create time %d, append time %d", i,
					fr[0].Records[i].Timestamp, sr[0].Records[i].Timestamp, b.Records[i].Timestamp, b.MaxTimestamp)
			}
		}
	})

	t.Run("franz-go+sarama/magic0-lz4-KAFKA-3160", func(t *testing.T) {
		// Kafka writes magic-0 LZ4 frames with the KAFKA-3160 header
		// checksum and, from 0.10 on, ignores that checksum for magic 0.
		// franz-go and sarama check it (pierrec/lz4) and fail.
		b := mk(0, 7, compress.LZ4, 3)
		raw, _ := SegkitAppend(&w, nil, &b)
		var franz FranzDecoder
		if _, err := franz.Decode(raw); err == nil {
			t.Error("franz-go now reads KAFKA-3160 frames")
		}
		if _, err := SaramaDecode(raw); err == nil {
			t.Error("sarama now reads KAFKA-3160 frames")
		}
		// segkit also reads the frame with a correct checksum (sarama's).
		sraw, err := SaramaAppend(nil, &b)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(sraw, raw) {
			t.Fatal("sarama wrote the KAFKA-3160 checksum")
		}
		got, err := segkitDecodeLog(sraw)
		if err != nil || len(got[0].Records) != 3 {
			t.Errorf("segkit on sarama's magic-0 lz4: %v", err)
		}
	})
}

func putCRC(batch []byte, crc uint32) {
	batch[record.CRCOffset] = byte(crc >> 24)
	batch[record.CRCOffset+1] = byte(crc >> 16)
	batch[record.CRCOffset+2] = byte(crc >> 8)
	batch[record.CRCOffset+3] = byte(crc)
}
