package record

import (
	"math"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
)

// Header is a record header. Key is UTF-8 text on the wire; it is kept as
// bytes so that iteration allocates nothing. Value is nil for a null value.
type Header struct {
	Key   []byte
	Value []byte
}

// Record is one record of a v2 batch, or one message of a legacy message
// set. Iterators fill a caller-owned Record whose Key, Value and Headers
// alias the batch (or the iterator's decompression buffer); they are valid
// until the next call to Next or Reset. Copy them to keep them.
type Record struct {
	// Offset and Timestamp are absolute: baseOffset + offsetDelta and
	// baseTimestamp + timestampDelta (or the batch's maxTimestamp under
	// LogAppendTime).
	Offset    int64
	Timestamp int64

	// OffsetDelta and TimestampDelta are the values stored in the record.
	OffsetDelta    int32
	TimestampDelta int64

	// Attributes is the record's attribute byte (unused by Kafka today).
	Attributes int8

	// Key and Value are nil when null.
	Key   []byte
	Value []byte

	// Headers is reused between records; its length is the header count.
	Headers []Header
}

// Iterator decodes the records of one v2 batch at a time into a
// caller-owned Record, decompressing into a buffer it keeps between
// batches, so that steady-state iteration allocates nothing.
//
//	var it record.Iterator
//	var r record.Record
//	it.Reset(&batch)
//	for it.Next(&r) {
//		use(r.Offset, r.Key, r.Value)
//	}
//	if err := it.Err(); err != nil { ... }
//
// An Iterator is not safe for concurrent use.
type Iterator struct {
	// MaxDecompressed bounds the decompressed size of a batch's records;
	// 0 means DefaultMaxDecompressed.
	MaxDecompressed int

	dec compress.Decoder
	buf []byte // decompression buffer, reused

	b          []byte // the records being iterated (payload or buf)
	pos        int    // read position in b
	base       int64  // file position of b[0] for errors, relative to the batch
	compressed bool

	baseOffset      int64
	lastOffsetDelta int32
	baseTimestamp   int64
	maxTimestamp    int64
	logAppendTime   bool
	control         bool
	// general sends every record to next, Next's general path: in
	// control batches, after an error, and when the base timestamp is
	// within 8192 of int64's limits (Next's own timestamp deltas, of two
	// varint bytes at most, cannot overflow from anywhere else).
	general   bool
	count     int32
	read      int32
	prevDelta int32
	err       error
}

// Reset starts iterating over the records of b. A compressed payload is
// decompressed here, bounded by MaxDecompressed; an error is kept for Err
// and Next returns false.
//
// b must be a v2 batch (from ReadBatch or a Scanner entry of magic 2). A
// Batch whose Raw is shorter than the v2 header — such as the zero Batch
// of a legacy (magic 0 or 1) Entry — is not iterated: Err returns a
// *format.CorruptionError wrapping format.ErrMagic. Use EntryIterator to
// read entries of every magic.
func (it *Iterator) Reset(b *Batch) {
	it.baseOffset = b.BaseOffset
	it.lastOffsetDelta = b.LastOffsetDelta
	it.baseTimestamp = b.BaseTimestamp
	it.maxTimestamp = b.MaxTimestamp
	it.logAppendTime = b.Attributes.TimestampType() == LogAppendTime
	it.control = b.Attributes.IsControl()
	it.count = b.RecordCount
	it.read = 0
	it.prevDelta = -1
	it.pos = 0
	it.err = nil
	it.general = it.control || it.baseTimestamp > math.MaxInt64-8192 || it.baseTimestamp < math.MinInt64+8192
	if len(b.Raw) < RecordBatchOverhead {
		it.b, it.count, it.compressed = nil, 0, false
		it.general = true
		it.err = format.Corruptf("", 0, format.ErrMagic, "record: %d bytes is not a v2 batch (a legacy entry needs EntryIterator or LegacyIterator)", len(b.Raw))
		return
	}
	payload := b.Raw[RecordsOffset:]
	codec := b.Attributes.Codec()
	it.compressed = codec != compress.None
	if !it.compressed {
		it.b = payload
		it.base = RecordsOffset
		return
	}
	limit := it.MaxDecompressed
	if limit <= 0 {
		limit = DefaultMaxDecompressed
	}
	out, err := it.dec.AppendDecompressed(it.buf[:0], codec, payload, limit)
	if cap(out) > cap(it.buf) {
		it.buf = out[:0]
	}
	if err != nil {
		it.b = nil
		it.err = format.Corrupt("", RecordsOffset, err)
		it.general = true
		return
	}
	it.b = out
	// Positions inside decompressed data have no place in the file; errors
	// point at the start of the compressed payload.
	it.base = RecordsOffset
}

// Err returns the first error met, or nil if every record was read and the
// records section held exactly the declared count.
func (it *Iterator) Err() error { return it.err }

// Remaining is the number of records Next has yet to return.
func (it *Iterator) Remaining() int { return int(it.count - it.read) }

// fail records an error at position pos of the records section.
func (it *Iterator) fail(pos int, sentinel error, msg string, args ...any) bool {
	off := it.base
	if !it.compressed {
		off += int64(pos)
	}
	it.err = format.Corruptf("", off, sentinel, msg, args...)
	it.general = true
	return false
}

// nextFault names what next found wrong; failNext words it.
type nextFault uint8

const (
	faultLeftOver nextFault = iota
	faultLength
	faultNegativeSize
	faultTruncated
	faultEmpty
	faultTimestampDelta
	faultOffsetDelta
	faultOffsetOrder
	faultKeyLength
	faultValueLength
	faultHeaderCount
	faultHeaderNumber
	faultHeaderKey
	faultHeaderValue
	faultSizeMismatch
	faultControlKey
	faultTimestampOverflow
)

// failNext records next's error f at pos, with the values x and y it
// reports. It is kept apart, with plain integer arguments, so that the
// decoder builds no formatting arguments: they made the compiler keep its
// slices and positions on the stack (a 512-byte frame; with them out and
// Next's own path split off, a 1000 x 100 B decode takes 15% fewer
// instructions, callgrind).
//
//go:noinline
func (it *Iterator) failNext(f nextFault, pos int, x, y int64) bool {
	switch f {
	case faultLeftOver:
		return it.fail(pos, format.ErrInvalid, "incorrect declared batch size: %d bytes left after %d records", x, it.count)
	case faultLength:
		return it.fail(pos, format.ParseError(int(x)), "record %d of %d: length", it.read, it.count)
	case faultNegativeSize:
		return it.fail(pos, format.ErrInvalid, "record %d: negative size %d", it.read, x)
	case faultTruncated:
		return it.fail(pos, format.ErrTruncated, "record %d: size %d but %d bytes left (premature EOF)", it.read, x, y)
	case faultEmpty:
		return it.fail(pos, format.ErrInvalid, "invalid record size: %d", x)
	case faultTimestampDelta:
		return it.fail(pos, format.ParseError(int(x)), "record %d: timestamp delta", it.read)
	case faultOffsetDelta:
		return it.fail(pos, format.ParseError(int(x)), "record %d: offset delta", it.read)
	case faultOffsetOrder:
		return it.fail(pos, format.ErrInvalid, "record %d: offset delta %d after %d (lastOffsetDelta %d)", it.read, x, it.prevDelta, it.lastOffsetDelta)
	case faultKeyLength:
		return it.fail(pos, format.ErrInvalid, "record %d: key length", it.read)
	case faultValueLength:
		return it.fail(pos, format.ErrInvalid, "record %d: value length", it.read)
	case faultHeaderCount:
		return it.fail(pos, format.ParseError(int(x)), "record %d: header count", it.read)
	case faultHeaderNumber:
		return it.fail(pos, format.ErrInvalid, "record %d: invalid number of record headers %d", it.read, x)
	case faultHeaderKey:
		return it.fail(pos, format.ErrInvalid, "record %d: header %d key", it.read, x)
	case faultHeaderValue:
		return it.fail(pos, format.ErrInvalid, "record %d: header %d value", it.read, x)
	case faultSizeMismatch:
		return it.fail(pos, format.ErrInvalid, "invalid record size: expected %d bytes in record payload, found %d", x, y)
	case faultControlKey:
		return it.fail(pos, format.ErrInvalid, "control record key must hold version 0 and a type")
	default: // faultTimestampOverflow
		return it.fail(pos, format.ErrInvalid, "record %d: timestamp %d%+d overflows", it.read, it.baseTimestamp, x)
	}
}

// Next decodes the next record into r and reports whether there was one.
// At the end it checks that no bytes are left over; see Err. After the
// last record r is left as it was; when Next returns false for an error,
// r's fields are unspecified.
//
// Next itself reads only the common record: every varint of one or two
// bytes, no headers, no control batch, and nothing wrong. Anything else it
// leaves to next, the decoder of every record, which starts the same
// record again (the Iterator untouched, r perhaps partly written). Split
// so, Next calls nothing and keeps its values in registers: next's slow
// paths (format.Varint, readBytes, headers, the error reports) made the
// compiler keep them on the stack.
func (it *Iterator) Next(r *Record) bool {
	b, pos := it.b, it.pos
	if it.general || it.read >= it.count {
		return it.next(r)
	}
	u, n := uvarint2(b, pos, len(b))
	// A record holds at least six bytes: attributes, timestamp delta,
	// offset delta, key length, value length and header count.
	length := u>>1 ^ -(u & 1)
	if n == 0 || length < 6 || length > len(b)-pos-n {
		return it.next(r)
	}
	pos += n
	body := b[pos : pos+length : pos+length]
	// Fields go to r as they are read, so that fewer values stay live (a
	// record left to next may find some of them written already).
	r.Attributes = int8(body[0])
	u, n = uvarint2(body, 1, len(body))
	if n == 0 {
		return it.next(r)
	}
	tsDelta := int64(u>>1) ^ -int64(u&1)
	r.TimestampDelta = tsDelta
	i := 1 + n
	u, n = uvarint2(body, i, len(body))
	offDelta := int32(u>>1) ^ -int32(u&1)
	if n == 0 || offDelta <= it.prevDelta || offDelta > it.lastOffsetDelta {
		return it.next(r)
	}
	i += n
	if u, n = uvarint2(body, i, len(body)); n > 0 && u&1 == 0 && i+n+u>>1 <= len(body) {
		e := i + n + u>>1
		r.Key, i = body[i+n:e:e], e
	} else if n == 1 && u == 1 {
		r.Key = nil
		i++
	} else {
		return it.next(r)
	}
	if u, n = uvarint2(body, i, len(body)); n > 0 && u&1 == 0 && i+n+u>>1 <= len(body) {
		e := i + n + u>>1
		r.Value, i = body[i+n:e:e], e
	} else if n == 1 && u == 1 {
		r.Value = nil
		i++
	} else {
		return it.next(r)
	}
	// No headers, and nothing after their count.
	if i != len(body)-1 || body[i] != 0 {
		return it.next(r)
	}
	end := pos + length
	if it.read+1 == it.count && end != len(b) {
		return it.next(r)
	}
	if len(r.Headers) != 0 {
		r.Headers = r.Headers[:0]
	}
	r.Timestamp = it.baseTimestamp + tsDelta
	if it.logAppendTime {
		r.Timestamp = it.maxTimestamp
	}
	r.OffsetDelta = offDelta
	r.Offset = it.baseOffset + int64(offDelta)
	it.prevDelta = offDelta
	it.pos = end
	it.read++
	return true
}

// next decodes the next record into r, whatever its form, or records why
// it cannot: Next's general path.
func (it *Iterator) next(r *Record) bool {
	if it.err != nil {
		return false
	}
	b := it.b
	pos := it.pos
	if it.read >= it.count {
		if pos != len(b) {
			return it.failNext(faultLeftOver, pos, int64(len(b)-pos), 0)
		}
		return false
	}
	start := pos

	// length
	var length int32
	if pos < len(b) && b[pos] < 0x80 {
		u := uint32(b[pos])
		length = int32(u>>1) ^ -int32(u&1)
		pos++
	} else if pos+1 < len(b) && b[pos+1] < 0x80 {
		u := uint32(b[pos]&0x7f) | uint32(b[pos+1])<<7
		length = int32(u>>1) ^ -int32(u&1)
		pos += 2
	} else {
		v, n := format.Varint(b[pos:])
		if n <= 0 {
			return it.failNext(faultLength, pos, int64(n), 0)
		}
		length, pos = v, pos+n
	}
	if length < 0 || int(length) > len(b)-pos {
		if length < 0 {
			return it.failNext(faultNegativeSize, start, int64(length), 0)
		}
		return it.failNext(faultTruncated, start, int64(length), int64(len(b)-pos))
	}
	end := pos + int(length)
	body := b[:end] // bound every field read to the record body
	if end-pos < 1 {
		return it.failNext(faultEmpty, start, int64(length), 0)
	}
	r.Attributes = int8(body[pos])
	pos++

	// timestampDelta (varlong)
	var tsDelta int64
	if pos < end && body[pos] < 0x80 {
		u := uint64(body[pos])
		tsDelta = int64(u>>1) ^ -int64(u&1)
		pos++
	} else if pos+1 < end && body[pos+1] < 0x80 {
		u := uint64(body[pos]&0x7f) | uint64(body[pos+1])<<7
		tsDelta = int64(u>>1) ^ -int64(u&1)
		pos += 2
	} else {
		v, n := format.Varlong(body[pos:])
		if n <= 0 {
			return it.failNext(faultTimestampDelta, pos, int64(n), 0)
		}
		tsDelta, pos = v, pos+n
	}
	// offsetDelta
	var offDelta int32
	if pos < end && body[pos] < 0x80 {
		u := uint32(body[pos])
		offDelta = int32(u>>1) ^ -int32(u&1)
		pos++
	} else if pos+1 < end && body[pos+1] < 0x80 {
		u := uint32(body[pos]&0x7f) | uint32(body[pos+1])<<7
		offDelta = int32(u>>1) ^ -int32(u&1)
		pos += 2
	} else {
		v, n := format.Varint(body[pos:])
		if n <= 0 {
			return it.failNext(faultOffsetDelta, pos, int64(n), 0)
		}
		offDelta, pos = v, pos+n
	}
	if offDelta <= it.prevDelta || offDelta > it.lastOffsetDelta {
		return it.failNext(faultOffsetOrder, start, int64(offDelta), 0)
	}
	it.prevDelta = offDelta

	// The key and the value, each a length and that many bytes (-1:
	// null). Lengths of one or two varint bytes that fit are read here,
	// anything else by readBytes: a call of it per field was a sixth of
	// a record's instructions.
	var ok bool
	if u, n := uvarint2(body, pos, end); n > 0 && u&1 == 0 && pos+n+u>>1 <= end {
		e := pos + n + u>>1
		r.Key, pos = body[pos+n:e:e], e
	} else if n == 1 && u == 1 {
		r.Key, pos = nil, pos+1
	} else if r.Key, pos, ok = readBytes(body, pos); !ok {
		return it.failNext(faultKeyLength, pos, 0, 0)
	}
	if u, n := uvarint2(body, pos, end); n > 0 && u&1 == 0 && pos+n+u>>1 <= end {
		e := pos + n + u>>1
		r.Value, pos = body[pos+n:e:e], e
	} else if n == 1 && u == 1 {
		r.Value, pos = nil, pos+1
	} else if r.Value, pos, ok = readBytes(body, pos); !ok {
		return it.failNext(faultValueLength, pos, 0, 0)
	}

	// headers
	var nh int32
	if pos < end && body[pos] < 0x80 {
		u := uint32(body[pos])
		nh = int32(u>>1) ^ -int32(u&1)
		pos++
	} else {
		v, n := format.Varint(body[pos:])
		if n <= 0 {
			return it.failNext(faultHeaderCount, pos, int64(n), 0)
		}
		nh, pos = v, pos+n
	}
	if nh < 0 || 2*int(nh) > end-pos {
		return it.failNext(faultHeaderNumber, pos, int64(nh), 0)
	}
	if nh == 0 {
		// Most records have none: no store (and no write barrier) when
		// r.Headers is empty already.
		if len(r.Headers) != 0 {
			r.Headers = r.Headers[:0]
		}
	} else {
		hs := r.Headers[:0]
		for i := int32(0); i < nh; i++ {
			var h Header
			if h.Key, pos, ok = readBytes(body, pos); !ok || h.Key == nil {
				return it.failNext(faultHeaderKey, pos, int64(i), 0)
			}
			if h.Value, pos, ok = readBytes(body, pos); !ok {
				return it.failNext(faultHeaderValue, pos, int64(i), 0)
			}
			hs = append(hs, h)
		}
		r.Headers = hs
	}
	if pos != end {
		return it.failNext(faultSizeMismatch, start, int64(length), int64(int(length)-(end-pos)))
	}
	if it.control && (len(r.Key) < 4 || format.Int16(r.Key) != 0) {
		return it.failNext(faultControlKey, start, 0, 0)
	}

	ts := it.baseTimestamp + tsDelta
	if (tsDelta > 0 && ts < it.baseTimestamp) || (tsDelta < 0 && ts > it.baseTimestamp) {
		return it.failNext(faultTimestampOverflow, start, tsDelta, 0)
	}
	if it.logAppendTime {
		ts = it.maxTimestamp
	}
	r.Timestamp = ts
	r.TimestampDelta = tsDelta
	r.OffsetDelta = offDelta
	r.Offset = it.baseOffset + int64(offDelta)
	it.pos = end
	it.read++
	if it.read == it.count && end != len(b) {
		return it.failNext(faultLeftOver, end, int64(len(b)-end), 0)
	}
	return true
}

// uvarint2 reads an unsigned varint of one or two bytes at b[pos:end]:
// its value and length, or 0, 0 if it is longer or does not fit.
func uvarint2(b []byte, pos, end int) (u, n int) {
	if pos < end {
		if u = int(b[pos]); u < 0x80 {
			return u, 1
		}
		if pos+1 < end && b[pos+1] < 0x80 {
			return u&0x7f | int(b[pos+1])<<7, 2
		}
	}
	return 0, 0
}

// readBytes reads a varint length and that many bytes from b at pos. A
// length of -1 is null; below -1, or past the end of b, is invalid. The
// returned slice is capped so appending to it cannot overwrite b.
func readBytes(b []byte, pos int) ([]byte, int, bool) {
	var l int32
	if pos < len(b) && b[pos] < 0x80 {
		u := uint32(b[pos])
		l = int32(u>>1) ^ -int32(u&1)
		pos++
	} else if pos+1 < len(b) && b[pos+1] < 0x80 {
		u := uint32(b[pos]&0x7f) | uint32(b[pos+1])<<7
		l = int32(u>>1) ^ -int32(u&1)
		pos += 2
	} else {
		v, n := format.Varint(b[pos:])
		if n <= 0 {
			return nil, pos, false
		}
		l, pos = v, pos+n
	}
	if l < 0 {
		return nil, pos, l == -1
	}
	if int(l) > len(b)-pos {
		return nil, pos, false
	}
	end := pos + int(l)
	return b[pos:end:end], end, true
}

// Validate checks a v2 batch completely: what ReadBatch checks, and then
// every record (declared sizes, varint lengths, key/value/header lengths,
// offset deltas increasing and within lastOffsetDelta, the record count
// against the bytes). It reuses it's buffers; it may be a zero Iterator.
func (it *Iterator) Validate(b *Batch) error {
	var r Record
	it.Reset(b)
	n := 0
	for it.Next(&r) {
		n++
	}
	if it.err != nil {
		return it.err
	}
	if int32(n) != b.RecordCount {
		return format.Corruptf("", RecordsCountOffset, format.ErrInvalid, "declared %d records, found %d", b.RecordCount, n)
	}
	return nil
}

var _ = math.MaxInt32
