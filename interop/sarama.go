package interop

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"github.com/IBM/sarama"
	"github.com/rcrowley/go-metrics"
	"github.com/segkit/segkit/compress"
)

// sarama keeps its codec behind unexported methods: RecordBatch,
// MessageSet and Message have encode(packetEncoder) and
// decode(packetDecoder), reached only through the package functions
// encode(encoder, metrics.Registry) and decode([]byte, decoder,
// metrics.Registry), which its producer and consumer call on every request
// and response. No exported path runs them without a broker connection, so
// we call those two functions directly with go:linkname (pinned to sarama
// v1.61.1; the tests fail loudly if their behaviour changes). This runs
// exactly sarama's code: its prep and real encoders, its CRC fields (the
// decoder checks the CRC and returns "CRC didn't match"), its decompression
// and its record parsing.
//
// An interface value is two words (itab, data). encode takes an
// `encoder`, whose type reflect can reach (sarama.RequestResponse.Response
// is declared with it), so the runtime builds a real itab. decode takes a
// `decoder`, which no exported declaration mentions, so its one-method itab
// is assembled by hand: the concrete type, and the code pointer of the
// linknamed decode method as the method table's only entry. decode only
// calls that method (and, on error, formats the value with %#v, which needs
// only the type), so nothing else in the itab is read.

type ifaceWords struct{ tab, data unsafe.Pointer }

//go:linkname saramaEncode github.com/IBM/sarama.encode
func saramaEncode(e ifaceWords, reg metrics.Registry) ([]byte, error)

//go:linkname saramaDecode github.com/IBM/sarama.decode
func saramaDecode(buf []byte, in ifaceWords, reg metrics.Registry) error

//go:linkname saramaRecordBatchDecode github.com/IBM/sarama.(*RecordBatch).decode
func saramaRecordBatchDecode(b *sarama.RecordBatch, pd ifaceWords) error

//go:linkname saramaMessageSetDecode github.com/IBM/sarama.(*MessageSet).decode
func saramaMessageSetDecode(ms *sarama.MessageSet, pd ifaceWords) error

var saramaEncoderType = func() reflect.Type {
	f, ok := reflect.TypeOf(sarama.RequestResponse{}).FieldByName("Response")
	if !ok || f.Type.Kind() != reflect.Interface || f.Type.NumMethod() != 1 || f.Type.Method(0).Name != "encode" {
		panic("interop: sarama.RequestResponse.Response is no longer sarama's encoder interface")
	}
	return f.Type
}()

// saramaEncoder returns v (a *sarama.RecordBatch or *sarama.MessageSet) as
// a sarama `encoder` interface value.
func saramaEncoder(v any) ifaceWords {
	p := reflect.New(saramaEncoderType)
	p.Elem().Set(reflect.ValueOf(v))
	return *(*ifaceWords)(p.UnsafePointer())
}

// itab mirrors internal/abi.ITab with a one-entry method table.
type itab struct {
	inter unsafe.Pointer
	typ   unsafe.Pointer
	hash  uint32
	_     [4]byte
	fun   [1]uintptr
}

// decoderItab builds the itab of sarama's one-method `decoder` interface
// for the pointer type of zero, whose decode method is fn (a func value of
// the linknamed method).
func decoderItab(zero any, fn any) *itab {
	if reflect.TypeOf(fn).Kind() != reflect.Func {
		panic("interop: decoderItab needs a func")
	}
	typ := (*[2]unsafe.Pointer)(unsafe.Pointer(&zero))[0]
	// A func value is a pointer to its closure, stored directly in the
	// interface's data word; the closure's first word is the code pointer.
	closure := (*[2]unsafe.Pointer)(unsafe.Pointer(&fn))[1]
	pc := *(*uintptr)(closure)
	enc := (*itab)(saramaEncoder(zero).tab) // same concrete type: borrow inter and hash
	return &itab{inter: enc.inter, typ: typ, hash: enc.hash, fun: [1]uintptr{pc}}
}

var (
	recordBatchDecoderTab = decoderItab((*sarama.RecordBatch)(nil), saramaRecordBatchDecode)
	messageSetDecoderTab  = decoderItab((*sarama.MessageSet)(nil), saramaMessageSetDecode)
)

// SaramaDecodeRecordBatch decodes exactly one v2 batch (raw must hold it
// and nothing else) into rb with sarama's decoder.
func SaramaDecodeRecordBatch(raw []byte, rb *sarama.RecordBatch) error {
	return saramaDecode(raw, ifaceWords{unsafe.Pointer(recordBatchDecoderTab), unsafe.Pointer(rb)}, nil)
}

// SaramaDecodeMessageSet decodes a legacy message set into ms with
// sarama's decoder.
func SaramaDecodeMessageSet(raw []byte, ms *sarama.MessageSet) error {
	return saramaDecode(raw, ifaceWords{unsafe.Pointer(messageSetDecoderTab), unsafe.Pointer(ms)}, nil)
}

// SaramaEncodeRecordBatch encodes rb with sarama's encoder. The result is
// freshly allocated (sarama sizes it with a first pass).
func SaramaEncodeRecordBatch(rb *sarama.RecordBatch) ([]byte, error) {
	return saramaEncode(saramaEncoder(rb), nil)
}

// SaramaEncodeMessageSet encodes a legacy message set with sarama.
func SaramaEncodeMessageSet(ms *sarama.MessageSet) ([]byte, error) {
	return saramaEncode(saramaEncoder(ms), nil)
}

func saramaTime(ms int64) time.Time {
	if ms < 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func fromSaramaTime(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return t.UnixMilli()
}

// SaramaRecordBatch returns b as a sarama RecordBatch ready to encode.
func SaramaRecordBatch(b *Batch) *sarama.RecordBatch {
	first := b.FirstTimestamp()
	rb := &sarama.RecordBatch{
		FirstOffset:          b.BaseOffset,
		PartitionLeaderEpoch: b.PartitionLeaderEpoch,
		Version:              2,
		Codec:                sarama.CompressionCodec(b.Codec),
		CompressionLevel:     sarama.CompressionLevelDefault,
		Control:              b.Control,
		LogAppendTime:        b.LogAppendTime,
		LastOffsetDelta:      b.LastOffsetDelta(),
		FirstTimestamp:       saramaTime(first),
		MaxTimestamp:         saramaTime(b.HeaderMaxTimestamp()),
		ProducerID:           b.ProducerID,
		ProducerEpoch:        b.ProducerEpoch,
		FirstSequence:        b.BaseSequence,
		IsTransactional:      b.Transactional,
		Records:              make([]*sarama.Record, len(b.Records)),
	}
	for i, r := range b.Records {
		sr := &sarama.Record{
			TimestampDelta: time.Duration(r.Timestamp-first) * time.Millisecond,
			OffsetDelta:    r.Offset - b.BaseOffset,
			Key:            r.Key,
			Value:          r.Value,
		}
		for _, h := range r.Headers {
			sr.Headers = append(sr.Headers, &sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
		}
		rb.Records[i] = sr
	}
	return rb
}

// SaramaMessageSet returns legacy entry b as a sarama MessageSet: one
// message per record, or one compressed wrapper whose value is the inner
// message set encoded by sarama and compressed by sarama's Message.encode.
// v0 inner offsets are absolute (as 0.8/0.9 brokers assigned them), v1
// inner offsets relative (0, 1, ...), as Kafka wrote them.
func SaramaMessageSet(b *Batch) (*sarama.MessageSet, error) {
	msg := func(r *Record, codec sarama.CompressionCodec) *sarama.Message {
		m := &sarama.Message{Codec: codec, CompressionLevel: sarama.CompressionLevelDefault,
			Key: r.Key, Value: r.Value, Version: b.Magic}
		if b.Magic == 1 {
			m.Timestamp = saramaTime(r.Timestamp)
		}
		return m
	}
	if b.Codec == compress.None {
		ms := &sarama.MessageSet{}
		for i := range b.Records {
			ms.Messages = append(ms.Messages, &sarama.MessageBlock{Offset: b.Records[i].Offset, Msg: msg(&b.Records[i], sarama.CompressionNone)})
		}
		return ms, nil
	}
	inner := &sarama.MessageSet{}
	for i := range b.Records {
		off := b.Records[i].Offset
		if b.Magic == 1 {
			off = int64(i)
		}
		inner.Messages = append(inner.Messages, &sarama.MessageBlock{Offset: off, Msg: msg(&b.Records[i], sarama.CompressionNone)})
	}
	payload, err := SaramaEncodeMessageSet(inner)
	if err != nil {
		return nil, err
	}
	w := &sarama.Message{Codec: sarama.CompressionCodec(b.Codec), CompressionLevel: sarama.CompressionLevelDefault,
		Value: payload, Version: b.Magic, LogAppendTime: b.LogAppendTime}
	if b.Magic == 1 {
		w.Timestamp = saramaTime(b.HeaderMaxTimestamp())
	}
	last := b.Records[len(b.Records)-1].Offset
	return &sarama.MessageSet{Messages: []*sarama.MessageBlock{{Offset: last, Msg: w}}}, nil
}

// SaramaAppend encodes b with sarama and appends it to dst.
func SaramaAppend(dst []byte, b *Batch) ([]byte, error) {
	var out []byte
	var err error
	if b.Magic == 2 {
		out, err = SaramaEncodeRecordBatch(SaramaRecordBatch(b))
	} else {
		var ms *sarama.MessageSet
		if ms, err = SaramaMessageSet(b); err == nil {
			out, err = SaramaEncodeMessageSet(ms)
		}
	}
	if err != nil {
		return dst, err
	}
	return append(dst, out...), nil
}

// SaramaDecode returns sarama's view of every entry in raw: v2 batches
// through RecordBatch.decode, legacy entries through MessageSet.decode,
// with offsets and timestamps computed as sarama's consumer does
// (partitionConsumer.parseRecords and parseMessages).
func SaramaDecode(raw []byte) ([]Batch, error) {
	var out []Batch
	for in := raw; len(in) > 0; {
		if len(in) < 17 {
			return nil, fmt.Errorf("interop: %d trailing bytes", len(in))
		}
		size := 12 + int(int32(binary.BigEndian.Uint32(in[8:])))
		if size < 12 || size > len(in) {
			return nil, errors.New("interop: entry runs past the end")
		}
		if in[16] == 2 {
			var rb sarama.RecordBatch
			if err := SaramaDecodeRecordBatch(in[:size], &rb); err != nil {
				return nil, err
			}
			if rb.PartialTrailingRecord {
				return nil, errors.New("interop: sarama reports a partial trailing record")
			}
			out = append(out, fromSaramaBatch(&rb))
		} else {
			var ms sarama.MessageSet
			if err := SaramaDecodeMessageSet(in[:size], &ms); err != nil {
				return nil, err
			}
			if ms.PartialTrailingMessage || len(ms.Messages) != 1 {
				return nil, fmt.Errorf("interop: sarama read %d messages (partial %v)", len(ms.Messages), ms.PartialTrailingMessage)
			}
			out = append(out, fromSaramaMessages(ms.Messages[0]))
		}
		in = in[size:]
	}
	return out, nil
}

func fromSaramaBatch(rb *sarama.RecordBatch) Batch {
	b := Batch{
		Magic: rb.Version, BaseOffset: rb.FirstOffset, PartitionLeaderEpoch: rb.PartitionLeaderEpoch,
		Codec: compress.Codec(rb.Codec), LogAppendTime: rb.LogAppendTime, MaxTimestamp: fromSaramaTime(rb.MaxTimestamp),
		ProducerID: rb.ProducerID, ProducerEpoch: rb.ProducerEpoch, BaseSequence: rb.FirstSequence,
		Transactional: rb.IsTransactional, Control: rb.Control,
	}
	for _, r := range rb.Records {
		ts := fromSaramaTime(rb.FirstTimestamp.Add(r.TimestampDelta))
		if rb.LogAppendTime {
			ts = fromSaramaTime(rb.MaxTimestamp)
		}
		rec := Record{Offset: rb.FirstOffset + r.OffsetDelta, Timestamp: ts, Key: clone(r.Key), Value: clone(r.Value)}
		for _, h := range r.Headers {
			rec.Headers = append(rec.Headers, Header{Key: string(h.Key), Value: clone(h.Value)})
		}
		b.Records = append(b.Records, rec)
	}
	return b
}

func fromSaramaMessages(blk *sarama.MessageBlock) Batch {
	b := Batch{
		Magic: blk.Msg.Version, PartitionLeaderEpoch: -1, Codec: compress.Codec(blk.Msg.Codec),
		LogAppendTime: blk.Msg.LogAppendTime, MaxTimestamp: fromSaramaTime(blk.Msg.Timestamp),
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
	}
	msgs := blk.Messages()
	for _, m := range msgs {
		off := m.Offset
		ts := m.Msg.Timestamp
		if m.Msg.Version >= 1 {
			off += blk.Offset - msgs[len(msgs)-1].Offset
			if m.Msg.LogAppendTime {
				ts = blk.Msg.Timestamp
			}
		}
		b.Records = append(b.Records, Record{Offset: off, Timestamp: fromSaramaTime(ts), Key: clone(m.Msg.Key), Value: clone(m.Msg.Value)})
	}
	if len(b.Records) > 0 {
		b.BaseOffset = b.Records[0].Offset
	}
	return b
}
