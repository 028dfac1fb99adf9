package format

import "encoding/binary"

// Fixed-width big-endian integers, as Kafka writes every non-varint field.
// The readers panic on a short slice like encoding/binary does: callers
// check lengths first (once per structure, not per field).

// Int16 reads a big-endian int16 from b[0:2].
func Int16(b []byte) int16 { return int16(binary.BigEndian.Uint16(b)) }

// Int32 reads a big-endian int32 from b[0:4].
func Int32(b []byte) int32 { return int32(binary.BigEndian.Uint32(b)) }

// Int64 reads a big-endian int64 from b[0:8].
func Int64(b []byte) int64 { return int64(binary.BigEndian.Uint64(b)) }

// Uint32 reads a big-endian uint32 from b[0:4].
func Uint32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }

// AppendInt16 appends v in big-endian order.
func AppendInt16(dst []byte, v int16) []byte { return binary.BigEndian.AppendUint16(dst, uint16(v)) }

// AppendInt32 appends v in big-endian order.
func AppendInt32(dst []byte, v int32) []byte { return binary.BigEndian.AppendUint32(dst, uint32(v)) }

// AppendInt64 appends v in big-endian order.
func AppendInt64(dst []byte, v int64) []byte { return binary.BigEndian.AppendUint64(dst, uint64(v)) }

// AppendUint32 appends v in big-endian order.
func AppendUint32(dst []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(dst, v) }

// PutInt16 writes v into b[0:2].
func PutInt16(b []byte, v int16) { binary.BigEndian.PutUint16(b, uint16(v)) }

// PutInt32 writes v into b[0:4]; builders use it to back-patch lengths.
func PutInt32(b []byte, v int32) { binary.BigEndian.PutUint32(b, uint32(v)) }

// PutInt64 writes v into b[0:8].
func PutInt64(b []byte, v int64) { binary.BigEndian.PutUint64(b, uint64(v)) }

// PutUint32 writes v into b[0:4]; builders use it to back-patch CRCs.
func PutUint32(b []byte, v uint32) { binary.BigEndian.PutUint32(b, v) }

// NoTimestamp is the timestamp Kafka stores where there is none
// (RecordBatch.NO_TIMESTAMP): a v0 message, an empty batch's base
// timestamp, an empty time index's lookup. record.NoTimestamp is this
// constant; the index files use it without knowing record batches.
const NoTimestamp int64 = -1
