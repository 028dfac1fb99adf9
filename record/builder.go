package record

import (
	"encoding/binary"
	"math"
	"math/bits"
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
// and returns the extended slice. dst[:len(dst)] is never modified; the
// batch is written in dst's spare capacity, so the records' bytes must not
// lie there (they may lie in dst[:len(dst)]). It returns an error wrapping
// format.ErrInvalid for a spec or record set the format cannot express
// (offsets out of order or overflowing, more than MaxInt32 records), and
// format.ErrCodec for an unknown codec. It does not
// judge what a control batch holds: AppendEndTxnMarker builds the
// transaction markers Kafka writes.
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

// appendRecords appends the records of a batch in one pass: each record's
// varints are zigzagged once, its size computed from them, dst grows only
// when its capacity runs out (never once warm), and every field is written
// in place. Records offset by their position go through appendCommon
// first, which writes the common ones; what it leaves, the loop here writes
// or refuses.
func appendRecords(dst []byte, spec *BatchSpec, baseTs int64, recs []Record) ([]byte, error) {
	prev := int64(-1)
	start := len(dst)
	for i := 0; i < len(recs); i++ {
		if !spec.UseRecordOffsets {
			if dst, i = appendCommon(dst, start, baseTs, recs, i); i == len(recs) {
				break
			}
		}
		r := &recs[i]
		od := int64(i)
		if spec.UseRecordOffsets {
			od = r.Offset - spec.BaseOffset
			if od <= prev || od > math.MaxInt32 {
				return dst[:start], format.Corruptf("", 0, format.ErrInvalid, "record %d: offset %d out of order in a batch at %d", i, r.Offset, spec.BaseOffset)
			}
			prev = od
		}
		klen, vlen := len(r.Key), len(r.Value)
		if klen > math.MaxInt32/4 || vlen > math.MaxInt32/4 {
			return dst[:start], format.Corruptf("", 0, format.ErrTooLarge, "record %d: key or value too large", i)
		}
		td := r.Timestamp - baseTs
		if (r.Timestamp >= baseTs) != (td >= 0) {
			// The delta wraps around int64: the batch would not decode
			// (Iterator rejects the overflowing timestamp).
			return dst[:start], format.Corruptf("", 0, format.ErrInvalid, "record %d: timestamp %d too far from the batch's base timestamp %d", i, r.Timestamp, baseTs)
		}
		utd := uint64(td<<1) ^ uint64(td>>63)
		uod := uint32(od) << 1         // od ≥ 0
		uk, uv := uint32(1), uint32(1) // zigzag(-1): null
		if r.Key != nil {
			uk = uint32(klen) << 1
		}
		if r.Value != nil {
			uv = uint32(vlen) << 1
		}
		unh := uint32(len(r.Headers)) << 1
		body := 1 + uvlen64(utd) + uvlen32(uod) + uvlen32(uk) + klen + uvlen32(uv) + vlen + uvlen32(unh)
		for j := range r.Headers {
			body += bytesSize(r.Headers[j].Key) + bytesSize(r.Headers[j].Value)
		}
		if len(dst)-start+body > MaxBatchSize {
			return dst[:start], format.Corruptf("", 0, format.ErrTooLarge, "records exceed %d bytes", MaxBatchSize)
		}
		need := body + format.MaxVarintLen
		if cap(dst)-len(dst) < need {
			dst = slices.Grow(dst, need+len(dst)/4)
		}
		p := len(dst)
		b := dst[:p+need]
		// The varints most often take two bytes (lengths of 64 bytes and
		// more, deltas from 64 on): both short forms are written inline.
		if u := uint32(body) << 1; u < 0x80 {
			b[p] = byte(u)
			p++
		} else if u < 0x4000 {
			b[p+1] = byte(u >> 7)
			b[p] = byte(u) | 0x80
			p += 2
		} else {
			p = putUv32Slow(b, p, u)
		}
		b[p] = byte(r.Attributes)
		p++
		if u := utd; u < 0x80 {
			b[p] = byte(u)
			p++
		} else if u < 0x4000 {
			b[p+1] = byte(u >> 7)
			b[p] = byte(u) | 0x80
			p += 2
		} else {
			p = putUv64Slow(b, p, u)
		}
		if u := uod; u < 0x80 {
			b[p] = byte(u)
			p++
		} else if u < 0x4000 {
			b[p+1] = byte(u >> 7)
			b[p] = byte(u) | 0x80
			p += 2
		} else {
			p = putUv32Slow(b, p, u)
		}
		p = putUv32(b, p, uk)
		if klen >= 8 && klen <= 16 {
			// Keys are often short: two overlapping 8-byte moves beat a
			// call to memmove.
			k := r.Key
			binary.LittleEndian.PutUint64(b[p:], binary.LittleEndian.Uint64(k))
			binary.LittleEndian.PutUint64(b[p+klen-8:], binary.LittleEndian.Uint64(k[klen-8:]))
			p += klen
		} else {
			p += copy(b[p:], r.Key)
		}
		if u := uv; u < 0x80 {
			b[p] = byte(u)
			p++
		} else if u < 0x4000 {
			b[p+1] = byte(u >> 7)
			b[p] = byte(u) | 0x80
			p += 2
		} else {
			p = putUv32Slow(b, p, u)
		}
		p += copy(b[p:], r.Value)
		p = putUv32(b, p, unh)
		for j := range r.Headers {
			hd := &r.Headers[j]
			p = putUv32(b, p, uint32(len(hd.Key))<<1)
			p += copy(b[p:], hd.Key)
			uh := uint32(1)
			if hd.Value != nil {
				uh = uint32(len(hd.Value)) << 1
			}
			p = putUv32(b, p, uh)
			p += copy(b[p:], hd.Value)
		}
		dst = b[:p]
	}
	return dst, nil
}

// appendCommonGo appends recs[i:], each offset by its position, while they
// are common records: no headers, a key of at most 16 bytes, every varint
// of one or two bytes, nothing wrong. It returns the extended dst and the
// index of the first record it did not write, for appendRecords. With
// fewer values live than appendRecords' loop has, the compiler keeps them
// in registers; the varints' lengths come from one comparison each, and
// the bytes before the value go through a 32-byte window with one bounds
// check, each varint's second byte written whether it has one or not (the
// next field overwrites it). appendCommon runs it where there is no
// assembly of it (on amd64 the loop is in common_amd64.s), and the tests
// hold that assembly to it. Encode 1000 x 100 B, callgrind (hash/crc32
// and memmove included): 400k instructions a batch with appendRecords'
// loop alone, 342k with this path inside that loop, 299k with it on its
// own; on the Xeon, interleaved, 15.8-17.1 -> 14.6-16.9 us, and 16 x 1 KiB
// 535-658 -> 501-526 ns. (Putting the bytes before the key together in a
// register and writing them with one store was slower: 18.0-19.1 us
// against 15.2-15.9.)
func appendCommonGo(dst []byte, start int, baseTs int64, recs []Record, i int) ([]byte, int) {
	for ; i < len(recs); i++ {
		r := &recs[i]
		klen, vlen := len(r.Key), len(r.Value)
		td := r.Timestamp - baseTs
		utd := uint64(td<<1) ^ uint64(td>>63)
		uod := uint32(i) << 1
		uk := uint32(klen)<<1 | uint32(b2i(r.Key == nil)) // zigzag(-1): null
		uv := uint32(vlen)<<1 | uint32(b2i(r.Value == nil))
		if len(r.Headers) != 0 || klen > 16 || vlen > 0x1fc0 || utd|uint64(uod) >= 0x4000 ||
			(r.Timestamp >= baseTs) != (td >= 0) {
			return dst, i
		}
		// uk < 0x80: the key's length takes one byte. body < 8192: its
		// own varint takes two at most.
		lt, lo, lv := b2i(utd >= 0x80), b2i(uod >= 0x80), b2i(uv >= 0x80)
		body := 6 + lt + lo + klen + lv + vlen
		if len(dst)-start+body > MaxBatchSize {
			return dst, i
		}
		need := body + 2 + 32
		if cap(dst)-len(dst) < need {
			dst = slices.Grow(dst, need+len(dst)/4)
		}
		p := len(dst)
		b := dst[:p+need]
		w := (*[32]byte)(b[p:])
		u := uint32(body) << 1
		lb := b2i(u >= 0x80)
		w[0], w[1] = byte(u)|byte(lb<<7), byte(u>>7)
		q := 1 + lb
		w[q&31] = byte(r.Attributes)
		q++
		w[q&31], w[(q+1)&31] = byte(utd)|byte(lt<<7), byte(utd>>7)
		q += 1 + lt
		w[q&31], w[(q+1)&31] = byte(uod)|byte(lo<<7), byte(uod>>7)
		q += 1 + lo
		w[q&31] = byte(uk)
		q++
		if k := r.Key; klen >= 8 {
			binary.LittleEndian.PutUint64(w[q&31:], binary.LittleEndian.Uint64(k))
			binary.LittleEndian.PutUint64(w[(q+klen-8)&31:], binary.LittleEndian.Uint64(k[klen-8:]))
		} else {
			copy(w[q&31:], k)
		}
		q += klen
		w[q&31], w[(q+1)&31] = byte(uv)|byte(lv<<7), byte(uv>>7)
		p += q + 1 + lv
		p += copy(b[p:], r.Value)
		b[p] = 0 // no headers
		dst = b[:p+1]
	}
	return dst, i
}

// b2i is 1 for true and 0 for false, without a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// uvlen32 and uvlen64 are the encoded sizes of an unsigned varint. The
// division is unsigned, a shift: a signed one costs four instructions more
// a call, and a record makes five.
func uvlen32(u uint32) int { return int((9*uint32(bits.Len32(u|1)) + 64) / 64) }
func uvlen64(u uint64) int { return int((9*uint32(bits.Len64(u|1)) + 64) / 64) }

// putUv32 writes an (already zigzagged) varint at b[p:] and returns the
// position after it. The one-byte case is inlined; the caller guarantees
// room for five bytes.
func putUv32(b []byte, p int, u uint32) int {
	if u < 0x80 {
		b[p] = byte(u)
		return p + 1
	}
	return putUv32Slow(b, p, u)
}

//go:noinline
func putUv32Slow(b []byte, p int, u uint32) int {
	if u < 0x4000 {
		_ = b[p+1]
		b[p] = byte(u) | 0x80
		b[p+1] = byte(u >> 7)
		return p + 2
	}
	for u >= 0x80 {
		b[p] = byte(u) | 0x80
		u >>= 7
		p++
	}
	b[p] = byte(u)
	return p + 1
}

//go:noinline
func putUv64Slow(b []byte, p int, u uint64) int {
	for u >= 0x80 {
		b[p] = byte(u) | 0x80
		u >>= 7
		p++
	}
	b[p] = byte(u)
	return p + 1
}
