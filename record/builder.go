package record

import (
	"math"
	"slices"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
)

// BatchSpec describes the header of a v2 batch to build. Fields hold what
// is written; for a plain (non-idempotent) producer set ProducerID,
// ProducerEpoch and BaseSequence to -1, as NewBatchSpec does.
type BatchSpec struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Codec                compress.Codec

	// TimestampType is CreateTime (the zero value) or LogAppendTime; with
	// LogAppendTime, maxTimestamp is LogAppendTime and readers give every
	// record that timestamp.
	TimestampType TimestampType
	LogAppendTime int64

	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	Transactional bool
	Control       bool

	// UseRecordOffsets takes each record's offsetDelta from its Offset
	// (Offset - BaseOffset, strictly increasing) instead of its position
	// in the slice: a compacted batch keeps gaps.
	UseRecordOffsets bool
	// LastOffsetDelta, when greater than the last record's offset delta,
	// is written instead: compaction keeps the original range. It is the
	// only source of the range for an empty (count 0) batch.
	LastOffsetDelta int32
	// MaxTimestamp is written as the max timestamp of an empty batch
	// (whose baseTimestamp is -1, as the cleaner leaves it).
	MaxTimestamp int64

	// DeleteHorizon sets attribute bit 6 and makes DeleteHorizonMs the
	// batch's baseTimestamp, as the log cleaner does for tombstones.
	DeleteHorizon   bool
	DeleteHorizonMs int64
}

// NewBatchSpec returns a spec for a batch from a plain producer: no
// producer id, epoch or sequence, and no partition leader epoch.
func NewBatchSpec(baseOffset int64, codec compress.Codec) BatchSpec {
	return BatchSpec{
		BaseOffset:           baseOffset,
		PartitionLeaderEpoch: NoPartitionLeaderEpoch,
		Codec:                codec,
		ProducerID:           NoProducerID,
		ProducerEpoch:        NoProducerEpoch,
		BaseSequence:         NoSequence,
		MaxTimestamp:         NoTimestamp,
	}
}

// Builder appends v2 batches. It keeps the compressor state and a scratch
// buffer for the uncompressed records, so that once warm, building a batch
// into a dst with enough capacity allocates nothing. The zero value is
// ready to use; a Builder is not safe for concurrent use.
type Builder struct {
	// Encoder compresses payloads; set its options before first use.
	Encoder compress.Encoder
	scratch []byte
}

// AppendBatch appends a v2 batch holding recs, built as spec says, to dst
// and returns the extended slice. dst[:len(dst)] is never modified. It
// returns an error wrapping format.ErrInvalid for a spec or record set the
// format cannot express (offsets out of order or overflowing, more than
// MaxInt32 records, a control batch that is not transactional-compatible).
func (w *Builder) AppendBatch(dst []byte, spec *BatchSpec, recs []Record) ([]byte, error) {
	if !spec.Codec.Valid() {
		return dst, format.Corruptf("", 0, format.ErrCodec, "codec id %d", int(spec.Codec))
	}
	if len(recs) > math.MaxInt32 {
		return dst, format.Corruptf("", 0, format.ErrInvalid, "%d records in one batch", len(recs))
	}
	var baseTs, maxTs int64 = NoTimestamp, spec.MaxTimestamp
	if len(recs) > 0 {
		baseTs, maxTs = recs[0].Timestamp, recs[0].Timestamp
		for i := 1; i < len(recs); i++ {
			if t := recs[i].Timestamp; t > maxTs {
				maxTs = t
			}
		}
	}
	if spec.DeleteHorizon {
		baseTs = spec.DeleteHorizonMs
	}
	if spec.TimestampType == LogAppendTime {
		maxTs = spec.LogAppendTime
	}

	lastDelta := spec.LastOffsetDelta
	if n := len(recs); n > 0 {
		d := int64(n - 1)
		if spec.UseRecordOffsets {
			d = recs[n-1].Offset - spec.BaseOffset
		}
		if d > math.MaxInt32 {
			return dst, format.Corruptf("", 0, format.ErrInvalid, "offset delta %d overflows", d)
		}
		if int32(d) > lastDelta {
			lastDelta = int32(d)
		}
	}
	if lastDelta < 0 || spec.BaseOffset < 0 || spec.BaseOffset > math.MaxInt64-int64(lastDelta) {
		return dst, format.Corruptf("", 0, format.ErrInvalid, "offset range %d+%d", spec.BaseOffset, lastDelta)
	}

	start := len(dst)
	dst = slices.Grow(dst, RecordBatchOverhead)
	dst = dst[:start+RecordBatchOverhead]
	h := dst[start:]
	format.PutInt64(h[BaseOffsetOffset:], spec.BaseOffset)
	// Length and CRC are back-patched below.
	format.PutInt32(h[PartitionLeaderEpochOffset:], spec.PartitionLeaderEpoch)
	h[MagicOffset] = byte(MagicV2)
	attrs := Attributes(spec.Codec)
	if spec.TimestampType == LogAppendTime {
		attrs |= AttrTimestampType
	}
	if spec.Transactional {
		attrs |= AttrTransactional
	}
	if spec.Control {
		attrs |= AttrControl
	}
	if spec.DeleteHorizon {
		attrs |= AttrDeleteHorizon
	}
	format.PutInt16(h[AttributesOffset:], int16(attrs))
	format.PutInt32(h[LastOffsetDeltaOffset:], lastDelta)
	format.PutInt64(h[BaseTimestampOffset:], baseTs)
	format.PutInt64(h[MaxTimestampOffset:], maxTs)
	format.PutInt64(h[ProducerIDOffset:], spec.ProducerID)
	format.PutInt16(h[ProducerEpochOffset:], spec.ProducerEpoch)
	format.PutInt32(h[BaseSequenceOffset:], spec.BaseSequence)
	format.PutInt32(h[RecordsCountOffset:], int32(len(recs)))

	var err error
	if spec.Codec == compress.None {
		dst, err = appendRecords(dst, spec, baseTs, recs)
		if err != nil {
			return dst[:start], err
		}
	} else {
		w.scratch, err = appendRecords(w.scratch[:0], spec, baseTs, recs)
		if err != nil {
			return dst[:start], err
		}
		dst, err = w.Encoder.AppendCompressed(dst, spec.Codec, w.scratch)
		if err != nil {
			return dst[:start], err
		}
	}
	size := len(dst) - start
	if size-LogOverhead > MaxBatchSize {
		return dst[:start], format.Corruptf("", 0, format.ErrTooLarge, "batch of %d bytes", size)
	}
	b := dst[start:]
	format.PutInt32(b[LengthOffset:], int32(size-LogOverhead))
	format.PutUint32(b[CRCOffset:], format.CRC32C(b[AttributesOffset:]))
	return dst, nil
}

// AppendBatch is Builder.AppendBatch with a throwaway Builder: fine for
// uncompressed batches, but compressed ones allocate the codec state on
// every call. Keep a Builder for repeated use.
func AppendBatch(dst []byte, spec *BatchSpec, recs []Record) ([]byte, error) {
	var w Builder
	return w.AppendBatch(dst, spec, recs)
}

// SizeRecord returns the encoded size of r (with its length prefix) at the
// given deltas.
func SizeRecord(r *Record, offsetDelta int32, timestampDelta int64) int {
	body := bodySize(r, offsetDelta, timestampDelta)
	return format.SizeVarint(int32(body)) + body
}

func bytesSize(b []byte) int {
	if b == nil {
		return 1
	}
	return format.SizeVarint(int32(len(b))) + len(b)
}

func bodySize(r *Record, offsetDelta int32, timestampDelta int64) int {
	n := 1 + format.SizeVarlong(timestampDelta) + format.SizeVarint(offsetDelta) +
		bytesSize(r.Key) + bytesSize(r.Value) + format.SizeVarint(int32(len(r.Headers)))
	for i := range r.Headers {
		n += format.SizeVarint(int32(len(r.Headers[i].Key))) + len(r.Headers[i].Key) + bytesSize(r.Headers[i].Value)
	}
	return n
}

// appendRecords appends the records of a batch. It sizes dst once, then
// writes every field in place.
func appendRecords(dst []byte, spec *BatchSpec, baseTs int64, recs []Record) ([]byte, error) {
	total := 0
	prev := int64(-1)
	for i := range recs {
		r := &recs[i]
		od := int64(i)
		if spec.UseRecordOffsets {
			od = r.Offset - spec.BaseOffset
			if od <= prev || od > math.MaxInt32 {
				return dst, format.Corruptf("", 0, format.ErrInvalid, "record %d: offset %d out of order in a batch at %d", i, r.Offset, spec.BaseOffset)
			}
			prev = od
		}
		if len(r.Key) > math.MaxInt32/2 || len(r.Value) > math.MaxInt32/2 {
			return dst, format.Corruptf("", 0, format.ErrTooLarge, "record %d: key or value too large", i)
		}
		total += SizeRecord(r, int32(od), r.Timestamp-baseTs)
		if total > MaxBatchSize {
			return dst, format.Corruptf("", 0, format.ErrTooLarge, "records exceed %d bytes", MaxBatchSize)
		}
	}
	at := len(dst)
	dst = slices.Grow(dst, total)[:at+total]
	b := dst[at:]
	p := 0
	for i := range recs {
		r := &recs[i]
		od := int32(i)
		if spec.UseRecordOffsets {
			od = int32(r.Offset - spec.BaseOffset)
		}
		td := r.Timestamp - baseTs
		body := bodySize(r, od, td)
		p += format.PutVarint(b[p:], int32(body))
		b[p] = byte(r.Attributes)
		p++
		p += format.PutVarlong(b[p:], td)
		p += format.PutVarint(b[p:], od)
		p = putBytes(b, p, r.Key)
		p = putBytes(b, p, r.Value)
		p += format.PutVarint(b[p:], int32(len(r.Headers)))
		for j := range r.Headers {
			hd := &r.Headers[j]
			p += format.PutVarint(b[p:], int32(len(hd.Key)))
			p += copy(b[p:], hd.Key)
			p = putBytes(b, p, hd.Value)
		}
	}
	return dst, nil
}

func putBytes(b []byte, p int, v []byte) int {
	if v == nil {
		b[p] = 1 // zigzag(-1)
		return p + 1
	}
	l := len(v)
	if l < 64 {
		b[p] = byte(l << 1)
		p++
	} else {
		p += format.PutVarint(b[p:], int32(l))
	}
	return p + copy(b[p:], v)
}
