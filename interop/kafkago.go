package interop

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segmentio/kafka-go/protocol"

	// kafka-go's codecs register themselves in compress.Codecs, which its
	// protocol package reads.
	_ "github.com/segmentio/kafka-go/compress"
)

// KafkaGoRecordSet wraps raw log entries as the RECORDS field of a fetch
// response (an int32 size, then the entries), the form kafka-go's
// protocol.RecordSet.ReadFrom reads.
func KafkaGoRecordSet(raw []byte) []byte {
	out := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(raw)), uint32(len(raw)))
	return append(out, raw...)
}

// KafkaGoDecode returns kafka-go's view of the entries in raw, read with
// protocol.RecordSet.ReadFrom (which checks CRCs, decompresses with
// kafka-go's codecs and parses records). kafka-go does not report a batch's
// maxTimestamp or timestamp type (it ignores LogAppendTime, see the
// differential tests), so MaxTimestamp stays 0 and LogAppendTime false.
func KafkaGoDecode(raw []byte) ([]Batch, error) {
	var rs protocol.RecordSet
	if _, err := rs.ReadFrom(bytes.NewBuffer(KafkaGoRecordSet(raw))); err != nil {
		return nil, err
	}
	stream, ok := rs.Records.(*protocol.RecordStream)
	if !ok {
		return nil, fmt.Errorf("interop: kafka-go returned %T", rs.Records)
	}
	var out []Batch
	for _, rr := range stream.Records {
		var b Batch
		var rd protocol.RecordReader
		switch v := rr.(type) {
		case *protocol.RecordBatch:
			b = Batch{Magic: 2, BaseOffset: v.BaseOffset, PartitionLeaderEpoch: v.PartitionLeaderEpoch,
				Codec: compress.Codec(v.Attributes.Compression()), ProducerID: v.ProducerID, ProducerEpoch: v.ProducerEpoch,
				BaseSequence: v.BaseSequence, Transactional: v.Attributes.Transactional(), Control: v.Attributes.Control()}
			rd = v.Records
		case *protocol.ControlBatch:
			b = Batch{Magic: 2, BaseOffset: v.BaseOffset, PartitionLeaderEpoch: v.PartitionLeaderEpoch,
				Codec: compress.Codec(v.Attributes.Compression()), ProducerID: v.ProducerID, ProducerEpoch: v.ProducerEpoch,
				BaseSequence: v.BaseSequence, Transactional: v.Attributes.Transactional(), Control: v.Attributes.Control()}
			rd = v.Records
		default:
			// Legacy entries come back as the bare record readers.
			b = Batch{Magic: 1, PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
			rd = rr
		}
		for {
			r, err := rd.ReadRecord()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
			rec, err := fromKafkaGo(r)
			if err != nil {
				return nil, err
			}
			b.Records = append(b.Records, rec)
		}
		if b.Magic < 2 && len(b.Records) > 0 {
			b.BaseOffset = b.Records[0].Offset
		}
		out = append(out, b)
	}
	return out, nil
}

func fromKafkaGo(r *protocol.Record) (Record, error) {
	out := Record{Offset: r.Offset, Timestamp: r.Time.UnixMilli()}
	var err error
	if r.Key != nil {
		if out.Key, err = protocol.ReadAll(r.Key); err != nil {
			return out, err
		}
		if out.Key == nil {
			out.Key = []byte{}
		}
	}
	if r.Value != nil {
		if out.Value, err = protocol.ReadAll(r.Value); err != nil {
			return out, err
		}
		if out.Value == nil {
			out.Value = []byte{}
		}
	}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, Header{Key: h.Key, Value: clone(h.Value)})
	}
	return out, nil
}

// KafkaGoRecords converts b's records for kafka-go's encoder.
func KafkaGoRecords(b *Batch) []protocol.Record {
	out := make([]protocol.Record, len(b.Records))
	for i, r := range b.Records {
		out[i] = protocol.Record{Offset: r.Offset, Time: time.UnixMilli(r.Timestamp),
			Key: protocol.NewBytes(r.Key), Value: protocol.NewBytes(r.Value)}
		for _, h := range r.Headers {
			out[i].Headers = append(out[i].Headers, protocol.Header{Key: h.Key, Value: h.Value})
		}
	}
	return out
}

// KafkaGoEncode encodes b with kafka-go's protocol.RecordSet.WriteTo into w
// and returns the batch bytes (without the int32 size WriteTo puts first).
// kafka-go writes what a producer writes: base offset 0, no leader epoch,
// no producer id, CreateTime, so b must be such a batch. Its records' Key
// and Value readers are consumed, so build them fresh for every call.
func KafkaGoEncode(w *bytes.Buffer, b *Batch, recs []protocol.Record) ([]byte, error) {
	if b.Magic != 2 {
		return nil, errors.New("interop: kafka-go encoding is tested for v2 only")
	}
	rs := protocol.RecordSet{Version: 2, Attributes: protocol.Attributes(b.Codec), Records: protocol.NewRecordReader(recs...)}
	w.Reset()
	if _, err := rs.WriteTo(w); err != nil {
		return nil, err
	}
	return w.Bytes()[4:], nil
}
