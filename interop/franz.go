package interop

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/segkit/segkit/compress"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// FranzEncoder builds v2 record batches as franz-go's producer does.
// franz-go keeps its batch builder internal (kgo/sink.go,
// seqRecBatch.appendTo and promisedRec.appendTo in v1.22.3), so this is
// that code restated over franz-go's exported pieces: pkg/kbin for every
// field, kgo.DefaultCompressor for the records section, and the CRC-32C
// back-patched over [21, end). Two deliberate differences from the
// producer: the compressed form is kept even when it is not smaller (kgo
// would fall back to no compression), so that every codec is exercised,
// and the header fields a producer leaves at fixed values (base offset,
// leader epoch, timestamp type, control bit) are taken from the Batch, as
// a broker writing the batch to disk would set them. Control records are
// built with kmsg.ControlRecordKey and kmsg.EndTxnMarker when the caller
// passes them as keys and values (see FranzEndTxnMarker).
//
// Legacy message sets (magic 0 and 1) are out of scope: use sarama.
type FranzEncoder struct {
	comps [5]kgo.Compressor
	buf   bytes.Buffer
}

func (e *FranzEncoder) compressor(c compress.Codec) (kgo.Compressor, error) {
	if c <= compress.None || c > compress.Zstd {
		return nil, nil
	}
	if e.comps[c] == nil {
		var codec kgo.CompressionCodec
		switch c {
		case compress.Gzip:
			codec = kgo.GzipCompression()
		case compress.Snappy:
			codec = kgo.SnappyCompression()
		case compress.LZ4:
			codec = kgo.Lz4Compression()
		case compress.Zstd:
			codec = kgo.ZstdCompression()
		}
		comp, err := kgo.DefaultCompressor(codec)
		if err != nil {
			return nil, err
		}
		e.comps[c] = comp
	}
	return e.comps[c], nil
}

// AppendBatch appends b, a v2 batch, to dst.
func (e *FranzEncoder) AppendBatch(dst []byte, b *Batch) ([]byte, error) {
	if b.Magic != 2 {
		return dst, errors.New("interop: franz-go encodes v2 batches only")
	}
	comp, err := e.compressor(b.Codec)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	firstTs := b.FirstTimestamp()
	dst = kbin.AppendInt64(dst, b.BaseOffset)
	lengthAt := len(dst)
	dst = kbin.AppendInt32(dst, 0) // back-patched
	dst = kbin.AppendInt32(dst, b.PartitionLeaderEpoch)
	dst = kbin.AppendInt8(dst, 2)
	crcAt := len(dst)
	dst = kbin.AppendInt32(dst, 0) // back-patched
	dst = kbin.AppendInt16(dst, b.Attributes())
	dst = kbin.AppendInt32(dst, b.LastOffsetDelta())
	dst = kbin.AppendInt64(dst, firstTs)
	dst = kbin.AppendInt64(dst, b.HeaderMaxTimestamp())
	dst = kbin.AppendInt64(dst, b.ProducerID)
	dst = kbin.AppendInt16(dst, b.ProducerEpoch)
	dst = kbin.AppendInt32(dst, b.BaseSequence)
	dst = kbin.AppendArrayLen(dst, len(b.Records))
	recordsAt := len(dst)
	for i := range b.Records {
		dst = franzAppendRecord(dst, &b.Records[i], int32(b.Records[i].Offset-b.BaseOffset), firstTs)
	}
	if comp != nil {
		e.buf.Reset()
		compressed, used := comp.Compress(&e.buf, dst[recordsAt:])
		if compressed == nil || used != kgo.CompressionCodecType(b.Codec) {
			return dst[:start], fmt.Errorf("interop: franz-go %v compression failed", b.Codec)
		}
		dst = append(dst[:recordsAt], compressed...)
	}
	kbin.AppendInt32(dst[:lengthAt], int32(len(dst)-lengthAt-4))
	kbin.AppendInt32(dst[:crcAt], int32(crc32.Checksum(dst[crcAt+4:], castagnoli)))
	return dst, nil
}

// franzAppendRecord is kgo's promisedRec.appendTo, with the length computed
// as kgo's calcNums does when a record is buffered.
func franzAppendRecord(dst []byte, r *Record, offsetDelta int32, firstTs int64) []byte {
	tsDelta := r.Timestamp - firstTs
	length := 1 + kbin.VarlongLen(tsDelta) + kbin.VarintLen(offsetDelta) +
		bytesLen(r.Key) + bytesLen(r.Value) + kbin.VarintLen(int32(len(r.Headers)))
	for _, h := range r.Headers {
		length += kbin.VarintLen(int32(len(h.Key))) + len(h.Key) + bytesLen(h.Value)
	}
	dst = kbin.AppendVarint(dst, int32(length))
	dst = kbin.AppendInt8(dst, 0)
	dst = kbin.AppendVarlong(dst, tsDelta)
	dst = kbin.AppendVarint(dst, offsetDelta)
	dst = kbin.AppendVarintBytes(dst, r.Key)
	dst = kbin.AppendVarintBytes(dst, r.Value)
	dst = kbin.AppendVarint(dst, int32(len(r.Headers)))
	for _, h := range r.Headers {
		dst = kbin.AppendVarintString(dst, h.Key)
		dst = kbin.AppendVarintBytes(dst, h.Value)
	}
	return dst
}

func bytesLen(b []byte) int {
	if b == nil {
		return kbin.VarintLen(-1)
	}
	return kbin.VarintLen(int32(len(b))) + len(b)
}

// FranzEndTxnMarker returns the key and value of an end-transaction control
// record encoded by kmsg: ControlRecordKey{Version 0, Type} and
// EndTxnMarker{Version 0, CoordinatorEpoch}. commit selects COMMIT (1)
// rather than ABORT (0).
func FranzEndTxnMarker(commit bool, coordinatorEpoch int32) (key, value []byte) {
	k := kmsg.NewControlRecordKey()
	k.Version = 0
	k.Type = kmsg.ControlRecordKeyTypeAbort
	if commit {
		k.Type = kmsg.ControlRecordKeyTypeCommit
	}
	v := kmsg.NewEndTxnMarker()
	v.Version = 0
	v.CoordinatorEpoch = coordinatorEpoch
	return k.AppendTo(nil), v.AppendTo(nil)
}

// FranzDecoder decodes log entries as franz-go's consumer does:
// kgo.ProcessFetchPartition, the exported function kgo runs on every fetched
// partition (kmsg.RecordBatch/MessageV0/MessageV1 ReadFrom, length and CRC
// checks, kgo.DefaultDecompressor, and its record parser), keeping control
// records.
type FranzDecoder struct {
	dec kgo.Decompressor
	rp  kmsg.FetchResponseTopicPartition
}

// Decode returns franz-go's view of every entry in raw, grouped by the v2
// batch or legacy entry they came from.
//
// kgo treats a decompression failure after at least one good record as a
// fetch response cut short by the broker and drops it silently (source.go,
// "If we encounter a decompression error BUT we have successfully
// decompressed one batch"); Decode turns that into an error by checking
// that kgo's next offset is past the last entry.
func (d *FranzDecoder) Decode(raw []byte) ([]Batch, error) {
	fp, next := d.Process(raw)
	if fp.Err != nil {
		return nil, fp.Err
	}
	if want := lastOffset(raw) + 1; next != want {
		return nil, fmt.Errorf("interop: franz-go stopped silently at offset %d, before %d", next, want)
	}
	// Group records back into their batches with kmsg's view of the headers.
	var out []Batch
	ri := 0
	for in := raw; len(in) > 17; {
		size := 12 + int(int32(binary.BigEndian.Uint32(in[8:])))
		if size > len(in) || size < 12 {
			return nil, fmt.Errorf("interop: franz-go accepted an entry of size %d with %d bytes left", size, len(in))
		}
		var b Batch
		n := 0
		switch in[16] {
		case 2:
			var rb kmsg.RecordBatch
			if err := rb.ReadFrom(in[:size]); err != nil {
				return nil, err
			}
			b = Batch{
				Magic: 2, BaseOffset: rb.FirstOffset, PartitionLeaderEpoch: rb.PartitionLeaderEpoch,
				Codec: compress.Codec(rb.Attributes & 7), LogAppendTime: rb.Attributes&0x08 != 0,
				MaxTimestamp: rb.MaxTimestamp, ProducerID: rb.ProducerID, ProducerEpoch: rb.ProducerEpoch,
				BaseSequence: rb.FirstSequence, Transactional: rb.Attributes&0x10 != 0, Control: rb.Attributes&0x20 != 0,
			}
			n = int(rb.NumRecords)
		default:
			// Legacy: count what kgo returned whose offsets fall in this entry.
			b = Batch{Magic: int8(in[16]), PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
			b.Codec = compress.Codec(in[17] & 7)
			last := int64(binary.BigEndian.Uint64(in))
			for ri+n < len(fp.Records) && fp.Records[ri+n].Offset <= last {
				n++
			}
		}
		for i := 0; i < n && ri < len(fp.Records); i++ {
			b.Records = append(b.Records, fromFranz(fp.Records[ri]))
			ri++
		}
		if b.Magic < 2 && len(b.Records) > 0 {
			b.BaseOffset = b.Records[0].Offset
			b.LogAppendTime = fp.Records[ri-1].Attrs.TimestampType() == 1
		}
		out = append(out, b)
		in = in[size:]
	}
	if ri != len(fp.Records) {
		return nil, fmt.Errorf("interop: franz-go returned %d records, %d grouped", len(fp.Records), ri)
	}
	return out, nil
}

// Process runs kgo.ProcessFetchPartition over raw, keeping control records,
// and returns the partition and the next offset kgo would fetch.
func (d *FranzDecoder) Process(raw []byte) (kgo.FetchPartition, int64) {
	if d.dec == nil {
		d.dec = kgo.DefaultDecompressor()
	}
	d.rp.RecordBatches = raw
	d.rp.HighWatermark = 1 << 62
	d.rp.LastStableOffset = 1 << 62
	return kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{KeepControlRecords: true}, &d.rp, d.dec, nil)
}

// lastOffset is the last offset of the last entry in raw (a v2 batch's
// baseOffset + lastOffsetDelta, a legacy entry's offset), or -1.
func lastOffset(raw []byte) int64 {
	last := int64(-1)
	for in := raw; len(in) > 17; {
		size := 12 + int(int32(binary.BigEndian.Uint32(in[8:])))
		if size < 12 || size > len(in) {
			break
		}
		last = int64(binary.BigEndian.Uint64(in))
		if in[16] == 2 && size >= 27 {
			last += int64(int32(binary.BigEndian.Uint32(in[23:])))
		}
		in = in[size:]
	}
	return last
}

func fromFranz(r *kgo.Record) Record {
	ts := int64(-1)
	if !r.Timestamp.IsZero() {
		ts = r.Timestamp.UnixMilli()
	}
	out := Record{Offset: r.Offset, Timestamp: ts, Key: clone(r.Key), Value: clone(r.Value)}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, Header{Key: h.Key, Value: clone(h.Value)})
	}
	return out
}
