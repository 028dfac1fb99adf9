package describe

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/record"
)

// Field is one field of an entry's bytes: what links a hex view to the
// structure.
type Field struct {
	Name string
	// Start and End are file positions (End exclusive).
	Start int64
	End   int64
	// Value is the field's value as text.
	Value string
	// Record is the index of the record the field belongs to, -1 for the
	// entry's header.
	Record int
	// Bad marks a field whose value is wrong (a CRC that does not match).
	Bad bool
}

// Layout maps the bytes of one entry to the fields they encode.
type Layout struct {
	// Position is the entry's file position, Size the bytes laid out.
	Position int64
	Size     int
	Magic    int8
	Fields   []Field
	// Truncated says the fields stop before the entry's end (more than
	// the fields asked for, or bytes that do not parse).
	Truncated bool
	// Error says why the bytes could not be laid out further.
	Error string
}

// LayoutEntry lays out raw, the entry at file position pos (as much of it
// as the file holds), in at most maxFields fields: the header's, and for
// an uncompressed v2 batch each record's (length, attributes, deltas, key,
// value, headers). A compressed payload is one field.
func LayoutEntry(raw []byte, pos int64, maxFields int) *Layout {
	out := &Layout{Position: pos, Size: len(raw), Fields: []Field{}}
	if len(raw) >= record.HeaderSizeUpToMagic {
		out.Magic = int8(raw[record.MagicOffset])
	}
	l := layouter{out: out, raw: raw, pos: pos, max: maxFields}
	switch {
	case len(raw) < record.HeaderSizeUpToMagic:
		out.Error = "fewer bytes than an entry header"
	case out.Magic == record.MagicV2:
		l.v2()
	case out.Magic == record.MagicV0 || out.Magic == record.MagicV1:
		l.legacy()
	default:
		l.field("baseOffset", record.BaseOffsetOffset, 8, strconv.FormatInt(format.Int64(raw), 10), -1)
		l.field("length", record.LengthOffset, 4, strconv.Itoa(int(format.Int32(raw[record.LengthOffset:]))), -1)
		l.field("partitionLeaderEpoch", record.PartitionLeaderEpochOffset, 4, strconv.Itoa(int(format.Int32(raw[record.PartitionLeaderEpochOffset:]))), -1)
		l.field("magic", record.MagicOffset, 1, strconv.Itoa(int(out.Magic)), -1)
		out.Error = fmt.Sprintf("unknown magic %d", out.Magic)
	}
	return out
}

type layouter struct {
	out *Layout
	raw []byte
	pos int64
	max int
}

// field adds a field of n bytes at offset at of the entry; false when the
// entry ends first or there are too many fields.
func (l *layouter) field(name string, at, n int, value string, rec int) bool {
	if at+n > len(l.raw) || len(l.out.Fields) >= l.max {
		l.out.Truncated = true
		return false
	}
	l.out.Fields = append(l.out.Fields, Field{Name: name, Start: l.pos + int64(at), End: l.pos + int64(at+n), Value: value, Record: rec})
	return true
}

func (l *layouter) bad() { l.out.Fields[len(l.out.Fields)-1].Bad = true }

func (l *layouter) v2() {
	raw := l.raw
	h, ok := record.PeekBatchHeader(raw)
	if !ok {
		l.field("baseOffset", record.BaseOffsetOffset, 8, strconv.FormatInt(format.Int64(raw), 10), -1)
		l.field("length", record.LengthOffset, 4, strconv.Itoa(int(format.Int32(raw[record.LengthOffset:]))), -1)
		l.out.Error = "the batch header is incomplete"
		l.out.Truncated = true
		return
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	i32 := func(v int32) string { return strconv.Itoa(int(v)) }
	l.field("baseOffset", record.BaseOffsetOffset, 8, i64(h.BaseOffset), -1)
	l.field("length", record.LengthOffset, 4, i32(h.Length)+" (batch size "+strconv.Itoa(h.Size())+")", -1)
	l.field("partitionLeaderEpoch", record.PartitionLeaderEpochOffset, 4, i32(h.PartitionLeaderEpoch), -1)
	l.field("magic", record.MagicOffset, 1, strconv.Itoa(int(h.Magic)), -1)
	crcOK := len(raw) == h.Size() && format.CRC32C(raw[record.AttributesOffset:]) == h.CRC
	crcText := strconv.FormatUint(uint64(h.CRC), 10)
	if crcOK {
		crcText += " (valid)"
	} else if len(raw) == h.Size() {
		crcText += fmt.Sprintf(" (mismatch: computed %d)", format.CRC32C(raw[record.AttributesOffset:]))
	} else {
		crcText += " (cannot check: the batch is incomplete)"
	}
	l.field("crc", record.CRCOffset, 4, crcText, -1)
	if !crcOK {
		l.bad()
	}
	a := h.Attributes
	attrs := fmt.Sprintf("0x%04x: codec %s, %s", uint16(a), a.Codec(), a.TimestampType())
	if a.IsTransactional() {
		attrs += ", transactional"
	}
	if a.IsControl() {
		attrs += ", control"
	}
	if a.HasDeleteHorizon() {
		attrs += ", delete horizon"
	}
	l.field("attributes", record.AttributesOffset, 2, attrs, -1)
	l.field("lastOffsetDelta", record.LastOffsetDeltaOffset, 4, i32(h.LastOffsetDelta)+" (last offset "+i64(h.LastOffset())+")", -1)
	l.field("baseTimestamp", record.BaseTimestampOffset, 8, i64(h.BaseTimestamp), -1)
	l.field("maxTimestamp", record.MaxTimestampOffset, 8, i64(h.MaxTimestamp), -1)
	l.field("producerId", record.ProducerIDOffset, 8, i64(h.ProducerID), -1)
	l.field("producerEpoch", record.ProducerEpochOffset, 2, strconv.Itoa(int(h.ProducerEpoch)), -1)
	l.field("baseSequence", record.BaseSequenceOffset, 4, i32(h.BaseSequence), -1)
	l.field("recordsCount", record.RecordsCountOffset, 4, i32(h.RecordCount), -1)
	end := min(len(raw), h.Size())
	if end <= record.RecordsOffset {
		return
	}
	if c := a.Codec(); c != compress.None {
		l.field(fmt.Sprintf("records (%s-compressed)", c), record.RecordsOffset, end-record.RecordsOffset,
			fmt.Sprintf("%d bytes of %s data holding %d records", end-record.RecordsOffset, c, h.RecordCount), -1)
		return
	}
	l.records(record.RecordsOffset, end, int(h.RecordCount), a.IsControl())
}

// records lays out the uncompressed records in raw[at:end].
func (l *layouter) records(at, end int, count int, control bool) {
	raw := l.raw[:end]
	for i := 0; at < end; i++ {
		p := fmt.Sprintf("record[%d].", i)
		length, n := format.Varint(raw[at:])
		if n <= 0 || length < 0 {
			l.out.Error = fmt.Sprintf("record %d: bad length varint at position %d", i, l.pos+int64(at))
			l.out.Truncated = true
			return
		}
		if !l.field(p+"length", at, n, strconv.Itoa(int(length)), i) {
			return
		}
		recEnd := at + n + int(length)
		if recEnd > end {
			l.out.Error = fmt.Sprintf("record %d: its length %d runs past the batch", i, length)
			l.out.Truncated = true
			return
		}
		cur := at + n
		rec := raw[:recEnd]
		ok := l.field(p+"attributes", cur, 1, strconv.Itoa(int(int8(rec[cur]))), i)
		cur++
		tsd, n := format.Varlong(rec[cur:])
		ok = ok && n > 0 && l.field(p+"timestampDelta", cur, n, strconv.FormatInt(tsd, 10), i)
		cur += max(n, 0)
		od, n := format.Varint(rec[cur:])
		ok = ok && n > 0 && l.field(p+"offsetDelta", cur, n, strconv.Itoa(int(od)), i)
		cur += max(n, 0)
		if !ok {
			l.out.Truncated = true
			return
		}
		var key []byte
		for _, part := range []string{"key", "value"} {
			vl, n := format.Varint(rec[cur:])
			if n <= 0 || !l.field(p+part+"Length", cur, n, strconv.Itoa(int(vl)), i) {
				l.out.Truncated = true
				return
			}
			cur += n
			if vl < 0 {
				continue
			}
			if cur+int(vl) > recEnd {
				l.out.Truncated = true
				return
			}
			b := rec[cur : cur+int(vl)]
			if part == "key" {
				key = b
			}
			val := preview(b)
			if control {
				val = controlPreview(part, key, b)
			}
			if vl > 0 && !l.field(p+part, cur, int(vl), val, i) {
				return
			}
			cur += int(vl)
		}
		hc, n := format.Varint(rec[cur:])
		if n <= 0 || !l.field(p+"headerCount", cur, n, strconv.Itoa(int(hc)), i) {
			l.out.Truncated = true
			return
		}
		cur += n
		for j := 0; j < int(hc) && cur < recEnd; j++ {
			hp := fmt.Sprintf("%sheaders[%d].", p, j)
			for _, part := range []string{"keyLength", "valueLength"} {
				vl, n := format.Varint(rec[cur:])
				if n <= 0 || !l.field(hp+part, cur, n, strconv.Itoa(int(vl)), i) {
					l.out.Truncated = true
					return
				}
				cur += n
				if vl > 0 {
					if cur+int(vl) > recEnd {
						l.out.Truncated = true
						return
					}
					name := hp + "key"
					if part == "valueLength" {
						name = hp + "value"
					}
					if !l.field(name, cur, int(vl), preview(rec[cur:cur+int(vl)]), i) {
						return
					}
					cur += int(vl)
				}
			}
		}
		at = recEnd
	}
}

func (l *layouter) legacy() {
	raw := l.raw
	m := int8(raw[record.LegacyMagicOffset])
	length := int(format.Int32(raw[record.LegacyLengthOffset:]))
	l.field("offset", record.LegacyOffsetOffset, record.LegacyOffsetSize, strconv.FormatInt(format.Int64(raw[record.LegacyOffsetOffset:]), 10), -1)
	l.field("size", record.LegacyLengthOffset, record.LegacyLengthSize, strconv.Itoa(length), -1)
	crc := format.Uint32(raw[record.LegacyCRCOffset:])
	crcOK := len(raw) == record.LogOverhead+length && format.CRC32IEEE(raw[record.LegacyMagicOffset:]) == crc
	text := strconv.FormatUint(uint64(crc), 10)
	if crcOK {
		text += " (valid)"
	} else {
		text += " (mismatch)"
	}
	l.field("crc", record.LegacyCRCOffset, record.LegacyCRCSize, text, -1)
	if !crcOK {
		l.bad()
	}
	l.field("magic", record.LegacyMagicOffset, record.LegacyMagicSize, strconv.Itoa(int(m)), -1)
	if len(raw) < record.LegacyAttributesOffset+record.LegacyAttributesSize {
		l.out.Truncated = true
		return
	}
	attrs := int8(raw[record.LegacyAttributesOffset])
	codec := compress.Codec(attrs & compress.CodecMask)
	l.field("attributes", record.LegacyAttributesOffset, record.LegacyAttributesSize, fmt.Sprintf("0x%02x: codec %s", uint8(attrs), codec), -1)
	at := record.LegacyKeyLengthOffsetV0
	if m == record.MagicV1 {
		if !l.field("timestamp", record.LegacyTimestampOffset, record.LegacyTimestampSize, strconv.FormatInt(format.Int64(raw[record.LegacyTimestampOffset:]), 10), -1) {
			return
		}
		at = record.LegacyKeyLengthOffsetV1
	}
	for _, part := range []string{"key", "value"} {
		if at+record.LegacyBytesLengthSize > len(raw) {
			l.out.Truncated = true
			return
		}
		vl := int(format.Int32(raw[at:]))
		l.field(part+"Length", at, record.LegacyBytesLengthSize, strconv.Itoa(vl), -1)
		at += record.LegacyBytesLengthSize
		if vl <= 0 {
			continue
		}
		if at+vl > len(raw) {
			l.out.Truncated = true
			return
		}
		val := preview(raw[at : at+vl])
		if part == "value" && codec != compress.None {
			val = fmt.Sprintf("%d bytes of %s data: the wrapped messages", vl, codec)
		}
		l.field(part, at, vl, val, -1)
		at += vl
	}
}

// preview shows the start of b as text when it is printable UTF-8, else
// as hex.
func preview(b []byte) string {
	const max = 80
	cut := b
	if len(cut) > max {
		cut = cut[:max]
	}
	suffix := ""
	if len(b) > max {
		suffix = fmt.Sprintf("… (%d bytes)", len(b))
	}
	if utf8.Valid(cut) && printable(cut) {
		return strconv.Quote(string(cut)) + suffix
	}
	return fmt.Sprintf("0x%x", cut) + suffix
}

func controlPreview(part string, key, b []byte) string {
	if part == "key" {
		if t, err := record.ParseControlKey(b); err == nil {
			return "control key: " + t.String()
		}
		return preview(b)
	}
	if m, err := record.ParseEndTxnMarker(key, b); err == nil {
		return fmt.Sprintf("end-transaction marker: %s, coordinator epoch %d", m.Type, m.CoordinatorEpoch)
	}
	return preview(b)
}

func printable(b []byte) bool {
	for _, r := range string(b) {
		if r < 0x20 && r != '\t' || r == 0x7f || r == utf8.RuneError {
			return false
		}
	}
	return true
}
