// Package record encodes and decodes Kafka's record batches: the v2 format
// (magic 2, Kafka 0.11 and later) and the legacy v0/v1 message sets, with
// any compression codec, byte-compatibly with Apache Kafka.
//
// # Layout of a v2 batch
//
// All integers are big-endian; the CRC-32C covers bytes [21, end).
//
//	offset  size  field
//	     0     8  baseOffset
//	     8     4  length (bytes after this field; batch size = 12 + length)
//	    12     4  partitionLeaderEpoch
//	    16     1  magic (2)
//	    17     4  crc (CRC-32C of [21, end))
//	    21     2  attributes: bits 0-2 codec, 3 LogAppendTime, 4 transactional,
//	              5 control, 6 delete horizon
//	    23     4  lastOffsetDelta
//	    27     8  baseTimestamp
//	    35     8  maxTimestamp
//	    43     8  producerId
//	    51     2  producerEpoch
//	    53     4  baseSequence
//	    57     4  recordsCount
//	    61     -  records, compressed as a whole when the codec is not none
//
// Each record is: varint length, int8 attributes, varlong timestampDelta,
// varint offsetDelta, varint key length (-1 = null) and key, varint value
// length and value, varint header count, and per header a varint key
// length and UTF-8 key, varint value length and value.
//
// # Legacy messages (magic 0 and 1)
//
//	offset  size  field
//	     0     8  offset
//	     8     4  size
//	    12     4  crc (CRC-32 IEEE of [16, end))
//	    16     1  magic
//	    17     1  attributes: bits 0-2 codec, bit 3 LogAppendTime (v1)
//	    18     8  timestamp (v1 only)
//	     -     4  key length (-1 = null), key
//	     -     4  value length (-1 = null), value
//
// A compressed message (wrapper) holds a whole message set in its value.
// In v1 the inner offsets are relative and the wrapper carries the
// absolute offset of the last inner message.
//
// # Use
//
// Decoding is zero-copy: ReadBatch returns a header view into the caller's
// buffer, and an Iterator fills a caller-owned Record whose slices alias
// the batch (or the Iterator's decompression buffer):
//
//	b, rest, err := record.ReadBatch(buf)
//	var it record.Iterator
//	var r record.Record
//	it.Reset(&b)
//	for it.Next(&r) {
//		fmt.Println(r.Offset, string(r.Key), string(r.Value))
//	}
//	err = it.Err()
//
// A Scanner walks a whole segment file whatever the magic of each entry,
// and tells a torn tail from corruption. Its entries are read with an
// EntryIterator, which handles every magic; an Iterator reads v2 batches
// only (on a legacy entry's Batch its Err is format.ErrMagic):
//
//	var it record.EntryIterator
//	for s := record.NewScanner(data, path, 0); s.Next(); {
//		it.Reset(s.Entry())
//		for it.Next(&r) { ... }
//		if err := it.Err(); err != nil { ... }
//	}
//
// Encoding appends to dst:
//
//	var w record.Builder
//	spec := record.NewBatchSpec(0, compress.Zstd)
//	dst, err := w.AppendBatch(dst[:0], &spec, recs)
//
// # Errors
//
// Every decoding error is a *format.CorruptionError that names the byte
// position (relative to the buffer given; Scanner makes it absolute and
// adds the file name), wrapping format.ErrCRC, ErrTruncated, ErrInvalid,
// ErrVarint, ErrMagic, ErrCodec, ErrCompressed or ErrTooLarge. Nothing
// panics on bad input, and nothing allocates more than the input size
// plus the configured decompression limit (Iterator.MaxDecompressed).
//
// # Concurrency
//
// Batches and Records are values; Iterators, LegacyIterators, Scanners and
// Builders hold reusable buffers and are not safe for concurrent use. Use
// one per goroutine.
package record
