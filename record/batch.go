package record

import (
	"math"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
)

// Byte offsets of the v2 record batch header (DefaultRecordBatch.java).
//
// These constants are part of the wire format and should not be changed.
const (
	BaseOffsetOffset           = 0
	LengthOffset               = BaseOffsetOffset + 8           // 8
	PartitionLeaderEpochOffset = LengthOffset + 4               // 12
	MagicOffset                = PartitionLeaderEpochOffset + 4 // 16
	CRCOffset                  = MagicOffset + 1                // 17
	AttributesOffset           = CRCOffset + 4                  // 21
	LastOffsetDeltaOffset      = AttributesOffset + 2           // 23
	BaseTimestampOffset        = LastOffsetDeltaOffset + 4      // 27
	MaxTimestampOffset         = BaseTimestampOffset + 8        // 35
	ProducerIDOffset           = MaxTimestampOffset + 8         // 43
	ProducerEpochOffset        = ProducerIDOffset + 8           // 51
	BaseSequenceOffset         = ProducerEpochOffset + 2        // 53
	RecordsCountOffset         = BaseSequenceOffset + 4         // 57
	RecordsOffset              = RecordsCountOffset + 4         // 61

	// LogOverhead is the offset and length prefix every log entry has,
	// whatever its magic: sizeInBytes = LogOverhead + length.
	LogOverhead = LengthOffset + 4 // 12
	// HeaderSizeUpToMagic is how much of an entry must be present to tell
	// its magic, and so its format.
	HeaderSizeUpToMagic = MagicOffset + 1 // 17
	// RecordBatchOverhead is the size of a v2 batch with no records.
	RecordBatchOverhead = RecordsOffset // 61

	// MinLegacyEntrySize is the smallest length field any entry may have:
	// the v0 message overhead. Smaller is corrupt (FileLogInputStream), and
	// it is also the smallest allowed segment.bytes.
	MinLegacyEntrySize = 14

	// MaxRecordOverhead is the most bytes a record adds besides its key,
	// value and headers (DefaultRecord.MAX_RECORD_OVERHEAD).
	MaxRecordOverhead = 21
	// minRecordSize is the smallest encoded record: a one-byte length and
	// six one-byte fields (attributes, deltas, null key, null value, zero
	// headers).
	minRecordSize = 7
)

// Magic values.
//
// These constants are part of the wire format and should not be changed.
const (
	MagicV0 int8 = 0
	MagicV1 int8 = 1
	MagicV2 int8 = 2
)

// Sentinel values Kafka stores in place of an absent field.
//
// These constants are part of the wire format and should not be changed.
const (
	NoTimestamp                  = format.NoTimestamp
	NoProducerID           int64 = -1
	NoProducerEpoch        int16 = -1
	NoSequence             int32 = -1
	NoPartitionLeaderEpoch int32 = -1
)

// Attributes is the attributes field of a v2 batch.
type Attributes int16

// Attribute bits (DefaultRecordBatch.java).
//
// These constants are part of the wire format and should not be changed.
const (
	AttrCodecMask     Attributes = 0x07
	AttrTimestampType Attributes = 0x08
	AttrTransactional Attributes = 0x10
	AttrControl       Attributes = 0x20
	AttrDeleteHorizon Attributes = 0x40
)

// Codec returns the compression codec in bits 0-2.
func (a Attributes) Codec() compress.Codec { return compress.Codec(a & AttrCodecMask) }

// TimestampType returns CreateTime or LogAppendTime (bit 3).
func (a Attributes) TimestampType() TimestampType {
	if a&AttrTimestampType != 0 {
		return LogAppendTime
	}
	return CreateTime
}

// IsTransactional reports bit 4.
func (a Attributes) IsTransactional() bool { return a&AttrTransactional != 0 }

// IsControl reports bit 5: the batch holds control records (transaction
// markers, KRaft control records).
func (a Attributes) IsControl() bool { return a&AttrControl != 0 }

// HasDeleteHorizon reports bit 6: the batch's baseTimestamp is the delete
// horizon set by the log cleaner.
func (a Attributes) HasDeleteHorizon() bool { return a&AttrDeleteHorizon != 0 }

// TimestampType says what a batch's timestamps mean.
type TimestampType int8

// Timestamp types, with Kafka's ids (NO_TIMESTAMP_TYPE is -1).
const (
	NoTimestampType TimestampType = -1
	CreateTime      TimestampType = 0
	LogAppendTime   TimestampType = 1
)

// String returns Kafka's name: "CreateTime", "LogAppendTime" or
// "NoTimestampType".
func (t TimestampType) String() string {
	switch t {
	case CreateTime:
		return "CreateTime"
	case LogAppendTime:
		return "LogAppendTime"
	default:
		return "NoTimestampType"
	}
}

// BatchHeader holds the 61-byte header of a v2 record batch, decoded.
type BatchHeader struct {
	BaseOffset           int64
	Length               int32 // bytes after the Length field; Size() = 12 + Length
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           Attributes
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	RecordCount          int32
}

// Size is the batch's total size in bytes, including the 12-byte log
// overhead.
func (h *BatchHeader) Size() int { return LogOverhead + int(h.Length) }

// LastOffset is baseOffset + lastOffsetDelta: the offset the next batch
// follows, even when compaction removed the records that carried it.
func (h *BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset is LastOffset() + 1.
func (h *BatchHeader) NextOffset() int64 { return h.LastOffset() + 1 }

// LastSequence is baseSequence + lastOffsetDelta, wrapping at MaxInt32 as
// Kafka's DefaultRecordBatch.incrementSequence does; NoSequence stays -1.
func (h *BatchHeader) LastSequence() int32 {
	if h.BaseSequence == NoSequence {
		return NoSequence
	}
	return incrementSequence(h.BaseSequence, h.LastOffsetDelta)
}

func incrementSequence(seq, inc int32) int32 {
	if int64(seq) > int64(math.MaxInt32)-int64(inc) {
		return inc - (math.MaxInt32 - seq) - 1
	}
	return seq + inc
}

// DeleteHorizonMs is the cleaner's delete horizon, or NoTimestamp.
func (h *BatchHeader) DeleteHorizonMs() int64 {
	if h.Attributes.HasDeleteHorizon() {
		return h.BaseTimestamp
	}
	return NoTimestamp
}

// decodeHeader reads the fixed header from b, which must hold at least
// RecordBatchOverhead bytes.
func (h *BatchHeader) decodeHeader(b []byte) {
	_ = b[RecordsOffset-1]
	h.BaseOffset = format.Int64(b[BaseOffsetOffset:])
	h.Length = format.Int32(b[LengthOffset:])
	h.PartitionLeaderEpoch = format.Int32(b[PartitionLeaderEpochOffset:])
	h.Magic = int8(b[MagicOffset])
	h.CRC = format.Uint32(b[CRCOffset:])
	h.Attributes = Attributes(format.Int16(b[AttributesOffset:]))
	h.LastOffsetDelta = format.Int32(b[LastOffsetDeltaOffset:])
	h.BaseTimestamp = format.Int64(b[BaseTimestampOffset:])
	h.MaxTimestamp = format.Int64(b[MaxTimestampOffset:])
	h.ProducerID = format.Int64(b[ProducerIDOffset:])
	h.ProducerEpoch = format.Int16(b[ProducerEpochOffset:])
	h.BaseSequence = format.Int32(b[BaseSequenceOffset:])
	h.RecordCount = format.Int32(b[RecordsCountOffset:])
}

// Batch is a v2 record batch: its decoded header and a view of its bytes.
type Batch struct {
	BatchHeader
	// Raw is the whole batch, from baseOffset to the last record byte. It
	// aliases the buffer given to ReadBatch.
	Raw []byte
}

// Payload returns the records section (compressed or not): Raw[61:], or
// nil when Raw is shorter than the v2 header.
func (b *Batch) Payload() []byte {
	if len(b.Raw) < RecordsOffset {
		return nil
	}
	return b.Raw[RecordsOffset:]
}

// ComputeCRC returns the CRC-32C of the batch's bytes [21, end) (of no
// bytes when Raw is shorter than 21).
func (b *Batch) ComputeCRC() uint32 {
	if len(b.Raw) < AttributesOffset {
		return format.CRC32C(nil)
	}
	return format.CRC32C(b.Raw[AttributesOffset:])
}

// ReadBatch decodes the v2 batch at the start of b and returns it and the
// bytes that follow it. It checks what can be checked without looking at
// the records: the length (at least 49, at most the bytes present and at
// most MaxBatchSize), magic 2, the CRC-32C over [21, end), a known codec,
// a non-negative record count that the uncompressed payload could hold, a
// non-negative lastOffsetDelta not below count-1, no offset overflow, and
// a producer id on transactional batches. Records are checked as they are
// iterated (Iterator) or all at once by Validate.
//
// Errors are *format.CorruptionError with Offset relative to b. A b that
// ends inside the batch gives format.ErrTruncated: at the end of a file,
// that is a torn tail rather than corruption (see Scanner).
//
// The returned Batch aliases b.
func ReadBatch(b []byte) (Batch, []byte, error) { return readBatch(b, true) }

// readBatch is ReadBatch, with the CRC checked only if crc is set.
func readBatch(b []byte, crc bool) (Batch, []byte, error) {
	var bt Batch
	if len(b) < HeaderSizeUpToMagic {
		return bt, b, format.Corruptf("", 0, format.ErrTruncated, "%d bytes left, a batch header needs %d", len(b), HeaderSizeUpToMagic)
	}
	length := format.Int32(b[LengthOffset:])
	if magic := int8(b[MagicOffset]); magic != MagicV2 {
		return bt, b, format.Corruptf("", MagicOffset, format.ErrMagic, "magic %d in a v2 batch reader", magic)
	}
	if length < RecordBatchOverhead-LogOverhead {
		return bt, b, format.Corruptf("", LengthOffset, format.ErrInvalid, "batch length %d is below the v2 minimum %d", length, RecordBatchOverhead-LogOverhead)
	}
	if int64(length) > int64(MaxBatchSize) {
		return bt, b, format.Corruptf("", LengthOffset, format.ErrTooLarge, "batch length %d exceeds the limit %d", length, MaxBatchSize)
	}
	size := LogOverhead + int(length)
	if size > len(b) {
		return bt, b, format.Corruptf("", LengthOffset, format.ErrTruncated, "batch of %d bytes but only %d left", size, len(b))
	}
	raw := b[:size:size]
	bt.decodeHeader(raw)
	bt.Raw = raw
	if err := bt.checkHeader(crc); err != nil {
		return Batch{}, b, err
	}
	return bt, b[size:], nil
}

// checkHeader validates the header fields, and the CRC if crc is set, of
// a batch whose size is already known to be right.
func (bt *Batch) checkHeader(crc bool) error {
	if crc {
		if c := bt.ComputeCRC(); c != bt.CRC {
			return format.Corruptf("", CRCOffset, format.ErrCRC, "stored crc = %d, computed crc = %d", bt.CRC, c)
		}
	}
	if c := bt.Attributes.Codec(); !c.Valid() {
		return format.Corruptf("", AttributesOffset, format.ErrCodec, "codec id %d", int(c))
	}
	if bt.RecordCount < 0 {
		return format.Corruptf("", RecordsCountOffset, format.ErrInvalid, "found invalid record count %d", bt.RecordCount)
	}
	if bt.LastOffsetDelta < 0 || int64(bt.RecordCount) > int64(bt.LastOffsetDelta)+1 {
		return format.Corruptf("", LastOffsetDeltaOffset, format.ErrInvalid, "lastOffsetDelta %d cannot hold %d records", bt.LastOffsetDelta, bt.RecordCount)
	}
	if bt.BaseOffset < 0 || bt.BaseOffset > math.MaxInt64-int64(bt.LastOffsetDelta) {
		return format.Corruptf("", BaseOffsetOffset, format.ErrInvalid, "offset range %d+%d is out of range", bt.BaseOffset, bt.LastOffsetDelta)
	}
	if bt.Attributes.Codec() == compress.None && int64(bt.RecordCount)*minRecordSize > int64(len(bt.Raw)-RecordsOffset) {
		return format.Corruptf("", RecordsCountOffset, format.ErrInvalid, "record count %d cannot fit in %d bytes", bt.RecordCount, len(bt.Raw)-RecordsOffset)
	}
	if bt.Attributes.IsTransactional() && bt.ProducerID < 0 {
		return format.Corruptf("", ProducerIDOffset, format.ErrInvalid, "transactional batch without a producer id")
	}
	return nil
}

// Limits. They are constants: a caller that wants a smaller decompression
// bound sets MaxDecompressed on its Iterator, LegacyIterator, Scanner or
// ReaderScanner.
const (
	// MaxBatchSize bounds the length of one batch or legacy entry that a
	// decoder accepts: Kafka's largest possible segment (Integer.MAX_VALUE).
	MaxBatchSize = math.MaxInt32

	// DefaultMaxDecompressed bounds the decompressed size of one batch's
	// records when an Iterator has no limit of its own: 256 MiB, far above
	// max.message.bytes and well below what would exhaust a browser tab.
	DefaultMaxDecompressed = 256 << 20
)

// PeekBatchHeader decodes the fixed 61-byte header at the start of b
// without checking anything but its presence: for tools that show a
// damaged batch (dump prints it with crcValid false) or look for the next
// plausible batch after corruption.
func PeekBatchHeader(b []byte) (BatchHeader, bool) {
	var h BatchHeader
	if len(b) < RecordBatchOverhead {
		return h, false
	}
	h.decodeHeader(b)
	return h, true
}
