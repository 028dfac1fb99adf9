package tier_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/tier"
)

// The golden strings below were printed by Kafka 4.3.1's own classes
// (kafka-clients and kafka-storage jars from ~/.m2), with java G.java:
//
//	new Uuid(0x0123456789abcdefL, 0xfedcba9876543210L).toString()  -> ASNFZ4mrze_-3LqYdlQyEA
//	new Uuid(0xfbffbfefbeffffffL, 0x3e3f7fbfdfeffbfcL).toString()  -> -_-_777___8-P3-_3-_7_A
//	LogFileUtils.filenamePrefixFromOffset(4000L) + "-" + seg + ".log"
//	                                               -> 00000000000000004000-ASNFZ4mrze_-3LqYdlQyEA.log
//	Uuid.fromString("oAtiIQ95REujbuzNd_lkLQ")      -> -6914324908764216245 -6670133630863842259
var (
	segUUID   = uuidOf(0x0123456789abcdef, 0xfedcba9876543210)
	topicUUID = uuidOf(0xfbffbfefbeffffff, 0x3e3f7fbfdfeffbfc)
)

func uuidOf(hi, lo uint64) tier.UUID {
	var u tier.UUID
	for i := range 8 {
		u[i] = byte(hi >> (56 - 8*i))
		u[8+i] = byte(lo >> (56 - 8*i))
	}
	return u
}

func TestUUIDMatchesKafka(t *testing.T) {
	if got := segUUID.String(); got != "ASNFZ4mrze_-3LqYdlQyEA" {
		t.Errorf("segment uuid %q", got)
	}
	if got := topicUUID.String(); got != "-_-_777___8-P3-_3-_7_A" {
		t.Errorf("topic uuid %q", got)
	}
	hi, lo := int64(-6914324908764216245), int64(-6670133630863842259)
	if got := uuidOf(uint64(hi), uint64(lo)).String(); got != "oAtiIQ95REujbuzNd_lkLQ" {
		t.Errorf("LocalTieredStorage's doc example: %q", got)
	}
}

func TestLayoutNames(t *testing.T) {
	tp := tier.TopicIDPartition{TopicID: topicUUID, Topic: "orders.v1-x", Partition: 7}
	if got, want := tier.PartitionDirName(tp), "orders.v1-x-7--_-_777___8-P3-_3-_7_A"; got != want {
		t.Errorf("partition dir %q, want %q", got, want)
	}
	back, err := tier.ParsePartitionDirName(tier.PartitionDirName(tp))
	if err != nil || back != tp {
		t.Errorf("ParsePartitionDirName: %+v, %v", back, err)
	}
	for _, tt := range []struct {
		ft   tier.FileType
		want string
	}{
		{tier.FileSegment, "00000000000000004000-ASNFZ4mrze_-3LqYdlQyEA.log"},
		{tier.FileOffsetIndex, "00000000000000004000-ASNFZ4mrze_-3LqYdlQyEA.index"},
		{tier.FileTimeIndex, "00000000000000004000-ASNFZ4mrze_-3LqYdlQyEA.timeindex"},
		{tier.FileTransactionIndex, "00000000000000004000-ASNFZ4mrze_-3LqYdlQyEA.txnindex"},
		{tier.FileLeaderEpochCheckpoint, "00000000000000004000-ASNFZ4mrze_-3LqYdlQyEA.leader_epoch_checkpoint"},
		{tier.FileProducerSnapshot, "00000000000000004000-ASNFZ4mrze_-3LqYdlQyEA.snapshot"},
	} {
		name := tier.SegmentFileName(4000, segUUID, tt.ft)
		if name != tt.want {
			t.Errorf("%v: %q, want %q", tt.ft, name, tt.want)
		}
		start, id, ft, err := tier.ParseSegmentFileName(name)
		if err != nil || start != 4000 || id != segUUID || ft != tt.ft {
			t.Errorf("parse %q: %d %v %v %v", name, start, id, ft, err)
		}
	}
	// Older LocalTieredStorage versions wrote unpadded offsets.
	if start, _, _, err := tier.ParseSegmentFileName("4000-ASNFZ4mrze_-3LqYdlQyEA.log"); err != nil || start != 4000 {
		t.Errorf("unpadded: %d %v", start, err)
	}
	for _, bad := range []string{"00000000000000004000-ASNFZ4mrze_-3LqYdlQyEA.rlsm", "x-ASNFZ4mrze_-3LqYdlQyEA.log", "00000000000000004000-short.log", "00000000000000004000.log"} {
		if _, _, _, err := tier.ParseSegmentFileName(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestNewSegmentID(t *testing.T) {
	// A reader that first yields ids Uuid.randomUuid rejects.
	minus := make([]byte, 16)
	minus[0] = 0xf8 // base64 '-' first
	src := bytes.NewReader(append(append(minus, make([]byte, 16)...), segUUID[:]...))
	id, err := tier.NewSegmentID(tier.TopicIDPartition{}, src)
	if err != nil {
		t.Fatal(err)
	}
	if s := id.ID.String(); s[0] == '-' || id.ID[6]>>4 != 4 || id.ID[8]>>6 != 2 {
		t.Errorf("id %s (%x) is not a version-4 Kafka uuid", s, id.ID)
	}
}

func sampleMeta() tier.SegmentMetadata {
	return tier.SegmentMetadata{
		ID:          tier.SegmentID{TopicIDPartition: tier.TopicIDPartition{TopicID: topicUUID, Topic: "t", Partition: 3}, ID: segUUID},
		StartOffset: 100, EndOffset: 199, MaxTimestampMs: 1_700_000_000_123, BrokerID: 1, EventTimestampMs: 1_700_000_001_000,
		SegmentSizeInBytes: 4096, SegmentLeaderEpochs: []checkpoint.EpochEntry{{Epoch: 0, StartOffset: 100}, {Epoch: 2, StartOffset: 150}},
		TxnIdxEmpty: true, State: tier.CopySegmentFinished,
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	for st := tier.CopySegmentStarted; st <= tier.DeleteSegmentFinished; st++ {
		m := sampleMeta()
		m.State, m.Abandoned = st, st == tier.DeleteSegmentFinished
		b := tier.AppendMetadata([]byte("keep"), m)
		if string(b[:4]) != "keep" {
			t.Fatal("dst prefix changed")
		}
		got, err := tier.ParseMetadata(b[4:], "f")
		if err != nil {
			t.Fatalf("%v: %v", st, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(m) {
			t.Errorf("%v: round trip\n got %+v\nwant %+v", st, got, m)
		}
	}
	b := tier.AppendMetadata(nil, sampleMeta())
	if !bytes.HasPrefix(b, []byte("SKTIER1 ")) || b[27] != '\n' || b[len(b)-1] != '\n' {
		t.Errorf("header %q", b[:28])
	}
}

func TestMetadataDamage(t *testing.T) {
	good := tier.AppendMetadata(nil, sampleMeta())
	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	for _, tt := range []struct {
		name string
		b    []byte
		want error
		at   int64
	}{
		{"empty", nil, format.ErrTruncated, 0},
		{"short_header", good[:20], format.ErrTruncated, 20},
		{"torn_body", good[:len(good)-5], format.ErrTruncated, int64(len(good) - 5)},
		{"magic", mod(func(b []byte) []byte { b[0] = 'X'; return b }), format.ErrInvalid, 0},
		{"crc_field", mod(func(b []byte) []byte { b[9] = 'z'; return b }), format.ErrInvalid, 8},
		{"length_field", mod(func(b []byte) []byte { b[20] = 'x'; return b }), format.ErrInvalid, 17},
		{"flipped_body", mod(func(b []byte) []byte { b[40] ^= 1; return b }), format.ErrCRC, 28},
		{"trailing", append(bytes.Clone(good), 'x'), format.ErrInvalid, int64(len(good))},
		{"zero_tail", append(bytes.Clone(good), 0, 0, 0), format.ErrInvalid, int64(len(good))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tier.ParseMetadata(tt.b, "m.rlsm")
			var ce *format.CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want a CorruptionError wrapping %v", err, tt.want)
			}
			if ce.Path != "m.rlsm" || ce.Offset != tt.at {
				t.Errorf("at %s byte %d, want byte %d", ce.Path, ce.Offset, tt.at)
			}
		})
	}
	// A valid envelope around bad JSON, a bad state, bad offsets.
	for _, body := range []string{`{"version":1,`, `{"version":2}`, `{"version":1,"topicId":"-_-_777___8-P3-_3-_7_A","id":"ASNFZ4mrze_-3LqYdlQyEA","topic":"t","state":"NOPE"}`,
		`{"version":1,"topicId":"-_-_777___8-P3-_3-_7_A","id":"ASNFZ4mrze_-3LqYdlQyEA","topic":"t","state":"COPY_SEGMENT_STARTED","startOffset":5,"endOffset":4}`} {
		b := envelope(body)
		if _, err := tier.ParseMetadata(b, "m"); !errors.Is(err, format.ErrInvalid) {
			t.Errorf("%s: %v", body, err)
		}
	}
	old := tier.MaxMetadataFileSize
	tier.MaxMetadataFileSize = 64
	defer func() { tier.MaxMetadataFileSize = old }()
	if _, err := tier.ParseMetadata(good, "m"); !errors.Is(err, format.ErrTooLarge) {
		t.Errorf("size limit: %v", err)
	}
}

// envelope wraps body in a valid header.
func envelope(body string) []byte {
	b := tier.AppendMetadata(nil, sampleMeta())
	h := bytes.Clone(b[:28])
	copy(h[8:16], fmt.Sprintf("%08x", crc32c([]byte(body))))
	copy(h[17:27], fmt.Sprintf("%010d", len(body)))
	return append(h, body...)
}

// FuzzParseMetadata: any input parses or fails with a CorruptionError;
// what parses re-encodes to bytes that parse to the same metadata.
func FuzzParseMetadata(f *testing.F) {
	for st := tier.CopySegmentStarted; st <= tier.DeleteSegmentFinished; st++ {
		m := sampleMeta()
		m.State = st
		f.Add(tier.AppendMetadata(nil, m))
	}
	f.Add(envelope(`{"version":1}`))
	f.Add([]byte("SKTIER1 00000000 0000000000\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := tier.ParseMetadata(b, "f")
		if err != nil {
			var ce *format.CorruptionError
			if !errors.As(err, &ce) || ce.Offset < 0 || ce.Offset > int64(len(b)) {
				t.Fatalf("error %v is not a CorruptionError within the input", err)
			}
			return
		}
		again, err := tier.ParseMetadata(tier.AppendMetadata(nil, m), "f")
		if err != nil || fmt.Sprint(again) != fmt.Sprint(m) {
			t.Fatalf("re-encoded: %+v, %v; was %+v", again, err, m)
		}
	})
}
