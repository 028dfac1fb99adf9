package record_test

import (
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/record"
)

// TestLegacyLayout reads each field of messages AppendLegacyMessage wrote
// at the offsets of legacylayout.go, and checks that the layout agrees
// with the v2 header where every entry shares it.
func TestLegacyLayout(t *testing.T) {
	if record.LegacyLengthOffset != record.LengthOffset || record.LegacyMagicOffset != record.MagicOffset ||
		record.LegacyCRCOffset != record.LogOverhead || record.LegacyMagicOffset+record.LegacyMagicSize != record.HeaderSizeUpToMagic {
		t.Fatal("the legacy layout disagrees with the log overhead or the magic's place")
	}
	if record.RecordOverheadV0 != record.MinLegacyEntrySize {
		t.Fatalf("RecordOverheadV0 = %d, MinLegacyEntrySize = %d", record.RecordOverheadV0, record.MinLegacyEntrySize)
	}
	for _, tt := range []struct {
		name      string
		spec      record.LegacySpec
		keyAt     int
		overhead  int
		timestamp int64
	}{
		{"v0", record.LegacySpec{Offset: 42, Magic: record.MagicV0, Codec: compress.Snappy}, record.LegacyKeyLengthOffsetV0, record.RecordOverheadV0, record.NoTimestamp},
		{"v1", record.LegacySpec{Offset: 42, Magic: record.MagicV1, Codec: compress.Gzip, Timestamp: 1_700_000_000_000, TimestampType: record.LogAppendTime}, record.LegacyKeyLengthOffsetV1, record.RecordOverheadV1, 1_700_000_000_000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			null, err := record.AppendLegacyMessage(nil, &tt.spec, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := int(format.Int32(null[record.LegacyLengthOffset:])); got != tt.overhead || len(null) != record.LogOverhead+tt.overhead {
				t.Errorf("a null key and value: length %d (%d bytes), want %d", got, len(null), tt.overhead)
			}
			b, err := record.AppendLegacyMessage(nil, &tt.spec, []byte("key"), []byte("value"))
			if err != nil {
				t.Fatal(err)
			}
			m, _, err := record.ReadLegacyMessage(b)
			if err != nil {
				t.Fatal(err)
			}
			if got := format.Int64(b[record.LegacyOffsetOffset:]); got != m.Offset {
				t.Errorf("offset %d, want %d", got, m.Offset)
			}
			if got := format.Uint32(b[record.LegacyCRCOffset:]); got != m.CRC || got != format.CRC32IEEE(b[record.LegacyMagicOffset:]) {
				t.Errorf("crc %d, want %d", got, m.CRC)
			}
			if got := int8(b[record.LegacyMagicOffset]); got != tt.spec.Magic {
				t.Errorf("magic %d, want %d", got, tt.spec.Magic)
			}
			if got := int8(b[record.LegacyAttributesOffset]); got != m.Attributes {
				t.Errorf("attributes %d, want %d", got, m.Attributes)
			}
			if tt.spec.Magic == record.MagicV1 {
				if got := format.Int64(b[record.LegacyTimestampOffset:]); got != tt.timestamp {
					t.Errorf("timestamp %d, want %d", got, tt.timestamp)
				}
			}
			if got := format.Int32(b[tt.keyAt:]); got != 3 {
				t.Errorf("key length %d, want 3", got)
			}
			valueAt := tt.keyAt + record.LegacyBytesLengthSize + 3
			if got := format.Int32(b[valueAt:]); got != 5 || valueAt+record.LegacyBytesLengthSize+5 != len(b) {
				t.Errorf("value length %d at %d of %d bytes, want 5 filling the message", got, valueAt, len(b))
			}
		})
	}
}
