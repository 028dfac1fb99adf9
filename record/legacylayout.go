package record

// Byte offsets and sizes of the fields of a legacy (magic 0 and 1) message
// (LegacyRecord.java), counted from the start of its log entry, so that
// the first two fields are the log overhead every entry has and the magic
// is where a v2 batch has it:
//
//	offset  size  field
//	     0     8  offset
//	     8     4  length (bytes after this field; entry size = 12 + length)
//	    12     4  crc (CRC-32 IEEE of [16, end))
//	    16     1  magic (0 or 1)
//	    17     1  attributes: bits 0-2 codec, bit 3 LogAppendTime (v1)
//	    18     8  timestamp (v1 only)
//	 18/26     4  key length (-1 = null), then the key
//	     -     4  value length (-1 = null), then the value
//
// A v0 message's key length is at LegacyKeyLengthOffsetV0, a v1 message's
// at LegacyKeyLengthOffsetV1; what follows has no fixed offset.
//
// These constants are part of the wire format and should not be changed.
const (
	LegacyOffsetOffset     = 0
	LegacyOffsetSize       = 8
	LegacyLengthOffset     = LegacyOffsetOffset + LegacyOffsetSize // 8, same as LengthOffset
	LegacyLengthSize       = 4
	LegacyCRCOffset        = LegacyLengthOffset + LegacyLengthSize // 12, LogOverhead
	LegacyCRCSize          = 4
	LegacyMagicOffset      = LegacyCRCOffset + LegacyCRCSize // 16, same as MagicOffset
	LegacyMagicSize        = 1
	LegacyAttributesOffset = LegacyMagicOffset + LegacyMagicSize // 17
	LegacyAttributesSize   = 1
	LegacyTimestampOffset  = LegacyAttributesOffset + LegacyAttributesSize // 18, v1 only
	LegacyTimestampSize    = 8

	// LegacyKeyLengthOffsetV0 and LegacyKeyLengthOffsetV1 are where the
	// key length is: right after the attributes in v0, after the
	// timestamp in v1. They are also the size of each magic's fixed
	// header, log overhead included.
	LegacyKeyLengthOffsetV0 = LegacyTimestampOffset                       // 18
	LegacyKeyLengthOffsetV1 = LegacyTimestampOffset + LegacyTimestampSize // 26
	// LegacyBytesLengthSize is the size of the length before the key and
	// the value.
	LegacyBytesLengthSize = 4

	// RecordOverheadV0 and RecordOverheadV1 are the smallest message sizes
	// (the length field) of each legacy magic: the fixed header after the
	// log overhead, and a null key and value
	// (LegacyRecord.RECORD_OVERHEAD_V0 and _V1).
	RecordOverheadV0 = LegacyKeyLengthOffsetV0 - LogOverhead + 2*LegacyBytesLengthSize // 14
	RecordOverheadV1 = LegacyKeyLengthOffsetV1 - LogOverhead + 2*LegacyBytesLengthSize // 22
)
