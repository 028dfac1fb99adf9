package describe

import (
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/record"
)

// Batch describes one log entry by its header: a v2 batch's fields and
// attributes, or a legacy message's in the same terms, with the sentinels
// Kafka's tools print for what a legacy entry has not (producer, sequence,
// leader epoch, delete horizon).
type Batch struct {
	// Position is the entry's byte position in its file; Size its size,
	// log overhead included.
	Position int64
	Size     int
	Magic    int8
	// BaseOffset and LastOffset are the first and last offsets; for a
	// legacy message both are its offset until Walker.Wrapper finds a
	// wrapper's first inner offset.
	BaseOffset int64
	LastOffset int64
	// Count is the number of records: a v2 batch's records count, 1 for a
	// legacy message until Walker.Wrapper counts a wrapper's.
	Count int
	// Attributes is the attributes field as stored (a legacy message's
	// byte, sign-extended).
	Attributes    int16
	Codec         compress.Codec
	TimestampType record.TimestampType
	// BaseTimestamp and MaxTimestamp are a v2 batch's; both are a legacy
	// message's timestamp (NoTimestamp in v0).
	BaseTimestamp int64
	MaxTimestamp  int64
	ProducerID    int64
	ProducerEpoch int16
	// BaseSequence and LastSequence are the producer sequences of the
	// first and last records (record.NoSequence without).
	BaseSequence         int32
	LastSequence         int32
	PartitionLeaderEpoch int32
	IsTransactional      bool
	IsControl            bool
	// DeleteHorizonMs is the cleaner's delete horizon, or NoTimestamp.
	DeleteHorizonMs int64
	// CRC is the stored checksum (CRC-32C of a v2 batch, CRC-32 of a
	// legacy message); whether it holds is the caller's check.
	CRC uint32
	// PayloadSize is the size of what holds the records: a v2 batch's
	// bytes after its header, a legacy message's value.
	PayloadSize int
}

// NewBatch describes the entry e from its header alone: nothing is
// decompressed, so a legacy wrapper counts as one record at its own
// offset (Walker.Wrapper finds its inner ones).
func NewBatch(e *record.Entry) Batch {
	b := Batch{Position: e.Position, Size: e.Size(), Magic: e.Magic}
	if e.Magic == record.MagicV2 {
		h := &e.Batch
		a := h.Attributes
		b.BaseOffset, b.LastOffset, b.Count = h.BaseOffset, h.LastOffset(), int(h.RecordCount)
		b.Attributes, b.Codec, b.TimestampType = int16(a), a.Codec(), a.TimestampType()
		b.BaseTimestamp, b.MaxTimestamp = h.BaseTimestamp, h.MaxTimestamp
		b.ProducerID, b.ProducerEpoch = h.ProducerID, h.ProducerEpoch
		b.BaseSequence, b.LastSequence = h.BaseSequence, h.LastSequence()
		b.PartitionLeaderEpoch = h.PartitionLeaderEpoch
		b.IsTransactional, b.IsControl = a.IsTransactional(), a.IsControl()
		b.DeleteHorizonMs = h.DeleteHorizonMs()
		b.CRC = h.CRC
		b.PayloadSize = len(h.Raw) - record.RecordsOffset
		return b
	}
	m := &e.Legacy
	b.BaseOffset, b.LastOffset, b.Count = m.Offset, m.Offset, 1
	b.Attributes, b.Codec, b.TimestampType = int16(m.Attributes), m.Codec(), m.TimestampType()
	b.BaseTimestamp, b.MaxTimestamp = m.Timestamp, m.Timestamp
	b.ProducerID, b.ProducerEpoch = record.NoProducerID, record.NoProducerEpoch
	b.BaseSequence, b.LastSequence = record.NoSequence, record.NoSequence
	b.PartitionLeaderEpoch = record.NoPartitionLeaderEpoch
	b.DeleteHorizonMs = record.NoTimestamp
	b.CRC = m.CRC
	b.PayloadSize = len(m.Value)
	return b
}

// IsWrapper reports whether the entry is a compressed legacy message, whose
// records are inner messages.
func (b *Batch) IsWrapper() bool { return b.Magic != record.MagicV2 && b.Codec != compress.None }

// PeekEntry decodes the header of the entry in raw, at file position pos,
// without checking it: what a complete entry whose checksum (or another
// check) fails is described from. A v2 batch gets its header (Raw holds
// raw); a legacy message its offset, CRC, magic, attributes and, in v1,
// timestamp, but no key or value. It reports false when raw is too short
// for the header or holds an unknown magic.
func PeekEntry(raw []byte, pos int64) (record.Entry, bool) {
	if len(raw) < record.HeaderSizeUpToMagic {
		return record.Entry{}, false
	}
	e := record.Entry{Position: pos, Magic: int8(raw[record.MagicOffset])}
	switch e.Magic {
	case record.MagicV2:
		h, ok := record.PeekBatchHeader(raw)
		if !ok {
			return record.Entry{}, false
		}
		e.Batch = record.Batch{BatchHeader: h, Raw: raw}
	case record.MagicV0, record.MagicV1:
		m, ok := PeekLegacy(raw)
		if !ok {
			return record.Entry{}, false
		}
		e.Legacy = m
	default:
		return record.Entry{}, false
	}
	return e, true
}

// PeekLegacy decodes the header of the legacy message in raw without
// checking it: offset, CRC, magic, attributes and, in v1 when raw holds
// it, the timestamp (else NoTimestamp). Key and Value stay nil; Raw is raw.
// It reports false when raw ends before the attributes.
func PeekLegacy(raw []byte) (record.LegacyMessage, bool) {
	if len(raw) < record.LegacyAttributesOffset+record.LegacyAttributesSize {
		return record.LegacyMessage{}, false
	}
	m := record.LegacyMessage{
		Raw:        raw,
		Offset:     format.Int64(raw[record.LegacyOffsetOffset:]),
		CRC:        format.Uint32(raw[record.LegacyCRCOffset:]),
		Magic:      int8(raw[record.LegacyMagicOffset]),
		Attributes: int8(raw[record.LegacyAttributesOffset]),
		Timestamp:  record.NoTimestamp,
	}
	if m.Magic == record.MagicV1 && len(raw) >= record.LegacyTimestampOffset+record.LegacyTimestampSize {
		m.Timestamp = format.Int64(raw[record.LegacyTimestampOffset:])
	}
	return m, true
}
