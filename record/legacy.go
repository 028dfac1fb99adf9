package record

import (
	"math"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
)

// legacyTimestampTypeBit is the attribute bit of a v1 message's
// timestamp type (the field layout is in legacylayout.go).
//
// This constant is part of the wire format and should not be changed.
const legacyTimestampTypeBit = 0x08

// LegacyMessage is one legacy log entry: a v0/v1 message and its offset. A
// compressed message (a wrapper) carries a whole message set in Value.
type LegacyMessage struct {
	// Offset is the entry's offset. For a v1 wrapper it is the offset of
	// the last inner message; for a v0 wrapper, likewise.
	Offset     int64
	Magic      int8
	Attributes int8
	CRC        uint32
	// Timestamp is NoTimestamp for v0.
	Timestamp int64
	Key       []byte
	Value     []byte
	// Raw is the whole entry, log overhead included, aliasing the input.
	Raw []byte
}

// Codec returns the codec in the attributes; not None means a wrapper.
func (m *LegacyMessage) Codec() compress.Codec {
	return compress.Codec(m.Attributes & compress.CodecMask)
}

// TimestampType is NoTimestampType for v0, else CreateTime or
// LogAppendTime from attribute bit 3.
func (m *LegacyMessage) TimestampType() TimestampType {
	if m.Magic == MagicV0 {
		return NoTimestampType
	}
	if m.Attributes&legacyTimestampTypeBit != 0 {
		return LogAppendTime
	}
	return CreateTime
}

// Size is the entry's size including the log overhead.
func (m *LegacyMessage) Size() int { return len(m.Raw) }

// ComputeCRC returns the CRC-32 (IEEE) of the message's [magic, end) (of
// no bytes when Raw is shorter than 16).
func (m *LegacyMessage) ComputeCRC() uint32 {
	if len(m.Raw) < LegacyMagicOffset {
		return format.CRC32IEEE(nil)
	}
	return format.CRC32IEEE(m.Raw[LegacyMagicOffset:])
}

// ReadLegacyMessage decodes the legacy log entry at the start of b and
// returns it and the bytes after it. It checks the size field (at least
// the overhead of the magic, at most the bytes present), the magic, the
// CRC, and that key and value lengths fill the message exactly. Errors are
// *format.CorruptionError with Offset relative to b; a short b gives
// format.ErrTruncated.
func ReadLegacyMessage(b []byte) (LegacyMessage, []byte, error) {
	var m LegacyMessage
	if len(b) < HeaderSizeUpToMagic {
		return m, b, format.Corruptf("", 0, format.ErrTruncated, "%d bytes left, an entry header needs %d", len(b), HeaderSizeUpToMagic)
	}
	size := format.Int32(b[LegacyLengthOffset:])
	magic := int8(b[LegacyMagicOffset])
	if magic != MagicV0 && magic != MagicV1 {
		return m, b, format.Corruptf("", LegacyMagicOffset, format.ErrMagic, "magic %d in a legacy message reader", magic)
	}
	min := int32(RecordOverheadV0)
	if magic == MagicV1 {
		min = RecordOverheadV1
	}
	if size < min {
		return m, b, format.Corruptf("", LegacyLengthOffset, format.ErrInvalid, "message size %d is below the v%d minimum %d", size, magic, min)
	}
	if int64(size) > int64(MaxBatchSize) {
		return m, b, format.Corruptf("", LegacyLengthOffset, format.ErrTooLarge, "message size %d exceeds the limit %d", size, MaxBatchSize)
	}
	total := LogOverhead + int(size)
	if total > len(b) {
		return m, b, format.Corruptf("", LegacyLengthOffset, format.ErrTruncated, "message of %d bytes but only %d left", total, len(b))
	}
	raw := b[:total:total]
	m.Raw = raw
	m.Offset = format.Int64(raw[LegacyOffsetOffset:])
	m.CRC = format.Uint32(raw[LegacyCRCOffset:])
	m.Magic = magic
	m.Attributes = int8(raw[LegacyAttributesOffset])
	if crc := m.ComputeCRC(); crc != m.CRC {
		return LegacyMessage{}, b, format.Corruptf("", LegacyCRCOffset, format.ErrCRC, "stored crc = %d, computed crc = %d", m.CRC, crc)
	}
	pos := LegacyTimestampOffset
	m.Timestamp = NoTimestamp
	if magic == MagicV1 {
		m.Timestamp = format.Int64(raw[pos:])
		pos += LegacyTimestampSize
	}
	var ok bool
	if m.Key, pos, ok = readLegacyBytes(raw, pos); !ok {
		return LegacyMessage{}, b, format.Corruptf("", int64(pos), format.ErrInvalid, "key length")
	}
	if m.Value, pos, ok = readLegacyBytes(raw, pos); !ok {
		return LegacyMessage{}, b, format.Corruptf("", int64(pos), format.ErrInvalid, "value length")
	}
	if pos != total {
		return LegacyMessage{}, b, format.Corruptf("", int64(pos), format.ErrInvalid, "%d bytes after the value", total-pos)
	}
	if c := m.Codec(); !c.Valid() {
		return LegacyMessage{}, b, format.Corruptf("", LegacyAttributesOffset, format.ErrCodec, "codec id %d", int(c))
	}
	return m, b[total:], nil
}

func readLegacyBytes(b []byte, pos int) ([]byte, int, bool) {
	if len(b)-pos < LegacyBytesLengthSize {
		return nil, pos, false
	}
	l := format.Int32(b[pos:])
	pos += LegacyBytesLengthSize
	if l < 0 {
		return nil, pos, l == -1
	}
	if int(l) > len(b)-pos {
		return nil, pos, false
	}
	end := pos + int(l)
	return b[pos:end:end], end, true
}

// LegacyIterator yields the records of one legacy entry: the message
// itself when it is uncompressed, or the messages inside a compressed
// wrapper, with absolute offsets (v1 inner offsets are relative to the
// wrapper: absoluteBase = wrapperOffset - lastInnerOffset) and, under
// LogAppendTime, the wrapper's timestamp. It checks the wrapper rules of
// AbstractLegacyRecordBatch: a non-null value, at least one inner message,
// inner magic equal to the wrapper's, no nested compression, and every
// inner CRC. The zero value is ready; it keeps its decompression buffer.
type LegacyIterator struct {
	// MaxDecompressed bounds a wrapper's decompressed size; 0 means
	// DefaultMaxDecompressed.
	MaxDecompressed int

	dec   compress.Decoder
	buf   []byte
	outer LegacyMessage
	rest  []byte // inner messages not yet returned
	inner bool
	done  bool
	delta int64 // added to inner offsets
	err   error
}

// Reset starts iterating over m.
func (it *LegacyIterator) Reset(m *LegacyMessage) {
	it.outer = *m
	it.err = nil
	it.done = false
	it.rest = nil
	it.inner = m.Codec() != compress.None
	it.delta = 0
	if !it.inner {
		return
	}
	if m.Value == nil {
		it.err = format.Corruptf("", 0, format.ErrInvalid, "found invalid compressed record set with null value")
		return
	}
	limit := it.MaxDecompressed
	if limit <= 0 {
		limit = DefaultMaxDecompressed
	}
	valueAt := int64(len(m.Raw) - len(m.Value))
	out, err := it.dec.AppendDecompressed(it.buf[:0], m.Codec(), m.Value, limit)
	if cap(out) > cap(it.buf) {
		it.buf = out[:0]
	}
	if err != nil {
		it.err = format.Corrupt("", valueAt, err)
		return
	}
	if len(out) == 0 {
		it.err = format.Corruptf("", valueAt, format.ErrInvalid, "found invalid compressed record set with no inner records")
		return
	}
	// Find the last inner offset without decoding: hop over entries.
	var last int64
	for p := out; len(p) > 0; {
		if len(p) < LogOverhead {
			it.err = format.Corruptf("", valueAt, format.ErrInvalid, "inner message set ends in a partial entry")
			return
		}
		sz := format.Int32(p[LengthOffset:])
		if sz < 0 || int(sz) > len(p)-LogOverhead {
			it.err = format.Corruptf("", valueAt, format.ErrInvalid, "inner message size %d", sz)
			return
		}
		last = format.Int64(p)
		p = p[LogOverhead+int(sz):]
	}
	if m.Magic == MagicV1 && m.Offset != 0 {
		if m.Offset < last {
			it.err = format.Corruptf("", 0, format.ErrInvalid, "wrapper offset %d is below its last inner offset %d", m.Offset, last)
			return
		}
		it.delta = m.Offset - last
	}
	it.rest = out
}

// Next decodes the next record into r. Headers are always empty.
func (it *LegacyIterator) Next(r *Record) bool {
	if it.err != nil || it.done {
		return false
	}
	r.Headers = r.Headers[:0]
	r.OffsetDelta, r.TimestampDelta = 0, 0
	if !it.inner {
		it.done = true
		m := &it.outer
		r.Offset, r.Timestamp, r.Attributes, r.Key, r.Value = m.Offset, m.Timestamp, m.Attributes, m.Key, m.Value
		return true
	}
	if len(it.rest) == 0 {
		it.done = true
		return false
	}
	valueAt := int64(len(it.outer.Raw) - len(it.outer.Value))
	in, rest, err := ReadLegacyMessage(it.rest)
	if err != nil {
		// Inner positions are in decompressed data: point at the value.
		it.err = format.Corrupt("", valueAt, unwrapCorruption(err))
		return false
	}
	if in.Magic != it.outer.Magic {
		it.err = format.Corruptf("", valueAt, format.ErrInvalid, "inner magic %d in a magic %d wrapper", in.Magic, it.outer.Magic)
		return false
	}
	if in.Codec() != compress.None {
		it.err = format.Corruptf("", valueAt, format.ErrInvalid, "inner messages must not be compressed")
		return false
	}
	it.rest = rest
	r.Offset = in.Offset + it.delta
	if r.Offset < in.Offset { // overflow
		it.err = format.Corruptf("", 0, format.ErrInvalid, "inner offset overflows")
		return false
	}
	r.Timestamp = in.Timestamp
	if it.outer.Magic == MagicV1 && it.outer.TimestampType() == LogAppendTime {
		r.Timestamp = it.outer.Timestamp
	}
	r.Attributes, r.Key, r.Value = in.Attributes, in.Key, in.Value
	return true
}

// Err returns the first error met.
func (it *LegacyIterator) Err() error { return it.err }

// unwrapCorruption drops the position of an error found in decompressed
// data, which has no place in the file.
func unwrapCorruption(err error) error {
	if ce, ok := err.(*format.CorruptionError); ok {
		return ce.Err
	}
	return err
}

// LegacySpec describes a legacy message to append.
type LegacySpec struct {
	Offset    int64
	Magic     int8 // MagicV0 or MagicV1
	Codec     compress.Codec
	Timestamp int64 // v1 only
	// TimestampType is CreateTime or LogAppendTime (v1 only).
	TimestampType TimestampType
}

// AppendLegacyMessage appends one uncompressed legacy message with the
// given key and value (nil = null).
func AppendLegacyMessage(dst []byte, s *LegacySpec, key, value []byte) ([]byte, error) {
	if s.Magic != MagicV0 && s.Magic != MagicV1 {
		return dst, format.Corruptf("", 0, format.ErrMagic, "legacy magic %d", s.Magic)
	}
	if len(key) > math.MaxInt32/2 || len(value) > math.MaxInt32/2 {
		return dst, format.Corruptf("", 0, format.ErrTooLarge, "key or value too large")
	}
	attrs := int8(s.Codec & compress.CodecMask)
	if s.Magic == MagicV1 && s.TimestampType == LogAppendTime {
		attrs |= legacyTimestampTypeBit
	}
	start := len(dst)
	dst = format.AppendInt64(dst, s.Offset)
	dst = format.AppendInt32(dst, 0)  // size, patched
	dst = format.AppendUint32(dst, 0) // crc, patched
	dst = append(dst, byte(s.Magic), byte(attrs))
	if s.Magic == MagicV1 {
		dst = format.AppendInt64(dst, s.Timestamp)
	}
	dst = appendLegacyBytes(dst, key)
	dst = appendLegacyBytes(dst, value)
	e := dst[start:]
	format.PutInt32(e[LegacyLengthOffset:], int32(len(e)-LogOverhead))
	format.PutUint32(e[LegacyCRCOffset:], format.CRC32IEEE(e[LegacyMagicOffset:]))
	return dst, nil
}

func appendLegacyBytes(dst, b []byte) []byte {
	if b == nil {
		return format.AppendInt32(dst, -1)
	}
	dst = format.AppendInt32(dst, int32(len(b)))
	return append(dst, b...)
}

// AppendLegacyWrapper appends a compressed legacy wrapper message holding
// recs as old brokers and clients wrote them: inner messages carry the
// wrapper's magic; s.Offset is the absolute offset of the first record and
// the wrapper takes the offset of the last one; v0 inner offsets are
// absolute, v1 inner offsets relative (0, 1, ...). For v1, the wrapper's timestamp is
// the greatest inner timestamp (or s.Timestamp under LogAppendTime). Only
// Key, Value and Timestamp of each record are used.
//
// A magic-0 LZ4 wrapper gets the frame header checksum of KAFKA-3160, as
// Kafka 0.8 and 0.9 wrote it.
func (w *Builder) AppendLegacyWrapper(dst []byte, s *LegacySpec, recs []Record) ([]byte, error) {
	if s.Codec == compress.None || !s.Codec.Valid() {
		return dst, format.Corruptf("", 0, format.ErrCodec, "a wrapper needs a compression codec, not %v", s.Codec)
	}
	if len(recs) == 0 {
		return dst, format.Corruptf("", 0, format.ErrInvalid, "a wrapper needs at least one record")
	}
	inner := LegacySpec{Magic: s.Magic, TimestampType: CreateTime}
	maxTs := NoTimestamp
	w.scratch = w.scratch[:0]
	var err error
	for i := range recs {
		inner.Offset = int64(i)
		if s.Magic == MagicV0 {
			inner.Offset = s.Offset + int64(i)
		}
		inner.Timestamp = recs[i].Timestamp
		if recs[i].Timestamp > maxTs {
			maxTs = recs[i].Timestamp
		}
		if w.scratch, err = AppendLegacyMessage(w.scratch, &inner, recs[i].Key, recs[i].Value); err != nil {
			return dst, err
		}
	}
	legacyHC := w.Encoder.LZ4LegacyHeaderChecksum
	w.Encoder.LZ4LegacyHeaderChecksum = s.Magic == MagicV0
	value, err := w.Encoder.AppendCompressed(nil, s.Codec, w.scratch)
	w.Encoder.LZ4LegacyHeaderChecksum = legacyHC
	if err != nil {
		return dst, err
	}
	outer := *s
	outer.Offset = s.Offset + int64(len(recs)) - 1
	if s.Magic == MagicV1 && s.TimestampType != LogAppendTime {
		outer.Timestamp = maxTs
	}
	return AppendLegacyMessage(dst, &outer, nil, value)
}
