package interop

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/record"
)

// Batch is a library-neutral description of one log entry: a v2 record
// batch (Magic 2) or a legacy message or compressed wrapper (Magic 0 or 1).
// Every adapter in this package encodes a Batch with its library and decodes
// its library's output back into a Batch, so that the differential tests can
// compare libraries field by field.
type Batch struct {
	Magic                int8 // 2, or 0/1 for legacy entries
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Codec                compress.Codec

	// LogAppendTime marks a LogAppendTime batch; MaxTimestamp is then the
	// append time, and every record reads back with it. With CreateTime,
	// MaxTimestamp is ignored on encode and decoded from the header.
	LogAppendTime bool
	MaxTimestamp  int64

	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	Transactional bool
	Control       bool

	Records []Record
}

// Record is one record as written (Timestamp is the create time) or as read
// (Timestamp is what the library reports).
type Record struct {
	Offset    int64
	Timestamp int64
	Key       []byte // nil = null
	Value     []byte // nil = null
	Headers   []Header
}

// Header is a record header; Value nil = null.
type Header struct {
	Key   string
	Value []byte
}

// NewBatch returns a v2 batch from a plain producer (no producer id, epoch,
// sequence or leader epoch) holding recs at consecutive offsets from base.
func NewBatch(base int64, codec compress.Codec, recs []Record) Batch {
	for i := range recs {
		recs[i].Offset = base + int64(i)
	}
	return Batch{
		Magic: 2, BaseOffset: base, PartitionLeaderEpoch: -1, Codec: codec,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Records: recs,
	}
}

// FirstTimestamp is the batch's baseTimestamp: the first record's.
func (b *Batch) FirstTimestamp() int64 {
	if len(b.Records) == 0 {
		return -1
	}
	return b.Records[0].Timestamp
}

// maxCreateTime is the largest record timestamp.
func (b *Batch) maxCreateTime() int64 {
	m := int64(-1)
	for i, r := range b.Records {
		if i == 0 || r.Timestamp > m {
			m = r.Timestamp
		}
	}
	return m
}

// HeaderMaxTimestamp is the maxTimestamp the batch header must carry.
func (b *Batch) HeaderMaxTimestamp() int64 {
	if b.LogAppendTime {
		return b.MaxTimestamp
	}
	return b.maxCreateTime()
}

// LastOffsetDelta is the offset delta of the last record.
func (b *Batch) LastOffsetDelta() int32 {
	if len(b.Records) == 0 {
		return 0
	}
	return int32(b.Records[len(b.Records)-1].Offset - b.BaseOffset)
}

// Want returns the batch as a reader must report it: MaxTimestamp filled
// in, and under LogAppendTime every record carrying it.
func (b *Batch) Want() Batch {
	w := *b
	w.MaxTimestamp = b.HeaderMaxTimestamp()
	w.Records = slices.Clone(b.Records)
	if b.LogAppendTime {
		for i := range w.Records {
			w.Records[i].Timestamp = w.MaxTimestamp
		}
	}
	return w
}

// Attributes returns the v2 attributes word of the batch.
func (b *Batch) Attributes() int16 {
	a := int16(b.Codec) & 7
	if b.LogAppendTime {
		a |= 0x08
	}
	if b.Transactional {
		a |= 0x10
	}
	if b.Control {
		a |= 0x20
	}
	return a
}

// Spec returns the segkit BatchSpec of a v2 batch.
func (b *Batch) Spec() record.BatchSpec {
	s := record.BatchSpec{
		BaseOffset:           b.BaseOffset,
		PartitionLeaderEpoch: b.PartitionLeaderEpoch,
		Codec:                b.Codec,
		ProducerID:           b.ProducerID,
		ProducerEpoch:        b.ProducerEpoch,
		BaseSequence:         b.BaseSequence,
		Transactional:        b.Transactional,
		Control:              b.Control,
		UseRecordOffsets:     true,
		MaxTimestamp:         record.NoTimestamp,
	}
	if b.LogAppendTime {
		s.TimestampType = record.LogAppendTime
		s.LogAppendTime = b.MaxTimestamp
	}
	return s
}

// SegkitRecords converts the records to segkit's type. The slices alias b.
func (b *Batch) SegkitRecords() []record.Record {
	out := make([]record.Record, len(b.Records))
	for i, r := range b.Records {
		out[i] = record.Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			out[i].Headers = append(out[i].Headers, record.Header{Key: []byte(h.Key), Value: h.Value})
		}
	}
	return out
}

// SegkitAppend encodes b with segkit: Builder.AppendBatch for v2,
// AppendLegacyMessage or Builder.AppendLegacyWrapper for magic 0 and 1.
func SegkitAppend(w *record.Builder, dst []byte, b *Batch) ([]byte, error) {
	if b.Magic == 2 {
		spec := b.Spec()
		return w.AppendBatch(dst, &spec, b.SegkitRecords())
	}
	ls := record.LegacySpec{Offset: b.BaseOffset, Magic: b.Magic, Codec: b.Codec}
	if b.Magic == 1 {
		ls.Timestamp = b.maxCreateTime()
		if b.LogAppendTime {
			ls.TimestampType = record.LogAppendTime
			ls.Timestamp = b.MaxTimestamp
		}
	}
	if b.Codec != compress.None {
		return w.AppendLegacyWrapper(dst, &ls, b.SegkitRecords())
	}
	for i, r := range b.Records {
		ls.Offset = r.Offset
		if b.Magic == 1 && !b.LogAppendTime {
			ls.Timestamp = r.Timestamp
		}
		var err error
		if dst, err = record.AppendLegacyMessage(dst, &ls, r.Key, r.Value); err != nil {
			return dst, fmt.Errorf("record %d: %w", i, err)
		}
	}
	return dst, nil
}

// SegkitDecodeV2 decodes the v2 batch at the start of raw with segkit:
// ReadBatch (CRC), Iterator.Validate, then an Iterator. It returns copies.
func SegkitDecodeV2(raw []byte) (Batch, []byte, error) { return SegkitDecoder{}.DecodeV2(raw) }

// SegkitDecodeLegacy decodes the legacy entry at the start of raw with
// segkit (ReadLegacyMessage, LegacyIterator). Timestamps of v0 are -1.
func SegkitDecodeLegacy(raw []byte) (Batch, []byte, error) { return SegkitDecoder{}.DecodeLegacy(raw) }

// SegkitDecoder decodes with segkit's iterators under a decompression
// limit (a fuzz target keeps it small; 0 means record's default).
type SegkitDecoder struct{ MaxDecompressed int }

// DecodeV2 is SegkitDecodeV2 under d's limit.
func (d SegkitDecoder) DecodeV2(raw []byte) (Batch, []byte, error) {
	bt, rest, err := record.ReadBatch(raw)
	if err != nil {
		return Batch{}, raw, err
	}
	it := record.Iterator{MaxDecompressed: d.MaxDecompressed}
	if err := it.Validate(&bt); err != nil {
		return Batch{}, raw, err
	}
	out := Batch{
		Magic:                bt.Magic,
		BaseOffset:           bt.BaseOffset,
		PartitionLeaderEpoch: bt.PartitionLeaderEpoch,
		Codec:                bt.Attributes.Codec(),
		LogAppendTime:        bt.Attributes.TimestampType() == record.LogAppendTime,
		MaxTimestamp:         bt.MaxTimestamp,
		ProducerID:           bt.ProducerID,
		ProducerEpoch:        bt.ProducerEpoch,
		BaseSequence:         bt.BaseSequence,
		Transactional:        bt.Attributes.IsTransactional(),
		Control:              bt.Attributes.IsControl(),
	}
	var r record.Record
	it.Reset(&bt)
	for it.Next(&r) {
		out.Records = append(out.Records, fromSegkit(&r))
	}
	if err := it.Err(); err != nil {
		return Batch{}, raw, err
	}
	return out, rest, nil
}

// DecodeLegacy is SegkitDecodeLegacy under d's limit.
func (d SegkitDecoder) DecodeLegacy(raw []byte) (Batch, []byte, error) {
	m, rest, err := record.ReadLegacyMessage(raw)
	if err != nil {
		return Batch{}, raw, err
	}
	out := Batch{
		Magic: m.Magic, BaseOffset: m.Offset, PartitionLeaderEpoch: -1, Codec: m.Codec(),
		LogAppendTime: m.TimestampType() == record.LogAppendTime, MaxTimestamp: m.Timestamp,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
	}
	it := record.LegacyIterator{MaxDecompressed: d.MaxDecompressed}
	var r record.Record
	it.Reset(&m)
	for it.Next(&r) {
		out.Records = append(out.Records, fromSegkit(&r))
	}
	if err := it.Err(); err != nil {
		return Batch{}, raw, err
	}
	if len(out.Records) > 0 {
		out.BaseOffset = out.Records[0].Offset
	}
	return out, rest, nil
}

func fromSegkit(r *record.Record) Record {
	out := Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: clone(r.Key), Value: clone(r.Value)}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, Header{Key: string(h.Key), Value: clone(h.Value)})
	}
	return out
}

// clone copies b, keeping nil and empty apart.
func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// Diff describes the first differences between want and got, or returns ""
// when they are equal. nullSensitive says whether nil and empty byte slices
// (keys, values, header values) must match: true for libraries that keep
// them apart.
func Diff(want, got *Batch, nullSensitive bool) string {
	var d bytes.Buffer
	f := func(format string, args ...any) {
		if d.Len() < 2000 {
			fmt.Fprintf(&d, format+"\n", args...)
		}
	}
	eqB := func(a, b []byte) bool {
		if nullSensitive && (a == nil) != (b == nil) {
			return false
		}
		return bytes.Equal(a, b)
	}
	hdr := func(name string, w, g any) {
		if w != g {
			f("%s: want %v, got %v", name, w, g)
		}
	}
	hdr("magic", want.Magic, got.Magic)
	hdr("baseOffset", want.BaseOffset, got.BaseOffset)
	hdr("codec", want.Codec, got.Codec)
	hdr("logAppendTime", want.LogAppendTime, got.LogAppendTime)
	if want.Magic == 2 {
		hdr("partitionLeaderEpoch", want.PartitionLeaderEpoch, got.PartitionLeaderEpoch)
		hdr("maxTimestamp", want.MaxTimestamp, got.MaxTimestamp)
		hdr("producerId", want.ProducerID, got.ProducerID)
		hdr("producerEpoch", want.ProducerEpoch, got.ProducerEpoch)
		hdr("baseSequence", want.BaseSequence, got.BaseSequence)
		hdr("transactional", want.Transactional, got.Transactional)
		hdr("control", want.Control, got.Control)
	}
	if len(want.Records) != len(got.Records) {
		f("records: want %d, got %d", len(want.Records), len(got.Records))
	}
	for i := range min(len(want.Records), len(got.Records)) {
		w, g := &want.Records[i], &got.Records[i]
		if w.Offset != g.Offset {
			f("record %d offset: want %d, got %d", i, w.Offset, g.Offset)
		}
		if w.Timestamp != g.Timestamp {
			f("record %d timestamp: want %d, got %d", i, w.Timestamp, g.Timestamp)
		}
		if !eqB(w.Key, g.Key) {
			f("record %d key: want %s, got %s", i, show(w.Key), show(g.Key))
		}
		if !eqB(w.Value, g.Value) {
			f("record %d value: want %s, got %s", i, show(w.Value), show(g.Value))
		}
		if len(w.Headers) != len(g.Headers) {
			f("record %d headers: want %d, got %d", i, len(w.Headers), len(g.Headers))
			continue
		}
		for j := range w.Headers {
			if w.Headers[j].Key != g.Headers[j].Key || !eqB(w.Headers[j].Value, g.Headers[j].Value) {
				f("record %d header %d: want %q=%s, got %q=%s", i, j,
					w.Headers[j].Key, show(w.Headers[j].Value), g.Headers[j].Key, show(g.Headers[j].Value))
			}
		}
	}
	return d.String()
}

func show(b []byte) string {
	if b == nil {
		return "null"
	}
	if len(b) > 24 {
		return fmt.Sprintf("%q…(%d bytes)", b[:24], len(b))
	}
	return fmt.Sprintf("%q", b)
}
