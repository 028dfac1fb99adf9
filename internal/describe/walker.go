package describe

import (
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/record"
)

// Record is one record of an entry as the views show it: the decoded
// record, whose Key, Value and Headers alias the entry or the Walker's
// decompression buffer (valid until the Walker's next call), and what it
// means in its batch.
type Record struct {
	record.Record
	// KeySize and ValueSize are the lengths of Key and Value, -1 when null.
	KeySize   int
	ValueSize int
	// Sequence is the record's producer sequence: the batch's base
	// sequence plus the record's offset delta, wrapping past MaxInt32 to 0
	// as Kafka's DefaultRecordBatch.incrementSequence does; NoSequence in
	// a batch without one, and for legacy messages.
	Sequence int32
	// Control says the record belongs to a control batch. ControlType is
	// then the type its key holds, when the key parses (HasControlType);
	// IsMarker says the record is a COMMIT or ABORT marker whose value
	// parses too, and Marker holds it.
	Control        bool
	HasControlType bool
	ControlType    record.ControlType
	IsMarker       bool
	Marker         record.EndTxnMarker
}

// Message describes a legacy message by its own header: a message of the
// log, or one inside a wrapper (whose Offset is then as stored: relative
// to the wrapper in v1).
type Message struct {
	Offset     int64
	Magic      int8
	Attributes int8
	// Timestamp is NoTimestamp in v0.
	Timestamp int64
	// CRC is the stored checksum, and CRCValid whether it is that of the
	// message's bytes.
	CRC      uint32
	CRCValid bool
	// Size is the message's size, log overhead included.
	Size int
}

// Walker reads the records of entries of any magic as Record views, and
// what the view of an entry needs its records for (a legacy wrapper's
// count, a control batch's transaction markers, a wrapper's inner
// messages). It keeps its decompression buffers from one entry to the
// next. The zero value is ready; a Walker is not safe for concurrent use.
//
// Reset, Wrapper and TxnMarkers all walk the records: the iteration Reset
// started ends at the next call of either of the others.
type Walker struct {
	// MaxDecompressed bounds the decompressed size of each entry's
	// records; 0 means record.DefaultMaxDecompressed.
	MaxDecompressed int

	it      record.EntryIterator
	cur     Record
	hdr     record.BatchHeader // the v2 batch iterated, for sequences
	v2      bool
	control bool

	dec  compress.Decoder
	buf  []byte
	msgs []Message
}

// Reset starts iterating over the records of e: a v2 batch's, a legacy
// message itself, or a legacy wrapper's inner messages (with absolute
// offsets). The entry must stay unmodified during the iteration.
func (w *Walker) Reset(e *record.Entry) {
	w.it.V2.MaxDecompressed = w.MaxDecompressed
	w.it.Legacy.MaxDecompressed = w.MaxDecompressed
	w.v2 = e.Magic == record.MagicV2
	w.control = w.v2 && e.Batch.Attributes.IsControl()
	if w.v2 {
		w.hdr = e.Batch.BatchHeader
	}
	w.it.Reset(e)
}

// Next decodes the next record, and reports whether there was one.
func (w *Walker) Next() bool {
	r := &w.cur
	if !w.it.Next(&r.Record) {
		return false
	}
	r.KeySize, r.ValueSize = Size(r.Key), Size(r.Value)
	r.Sequence = record.NoSequence
	if w.v2 {
		h := w.hdr
		h.LastOffsetDelta = r.OffsetDelta // LastSequence is then this record's
		r.Sequence = h.LastSequence()
	}
	r.Control, r.HasControlType, r.ControlType, r.IsMarker, r.Marker = w.control, false, 0, false, record.EndTxnMarker{}
	if w.control {
		if t, err := record.ParseControlKey(r.Key); err == nil {
			r.HasControlType, r.ControlType = true, t
			if m, err := record.ParseEndTxnMarker(r.Key, r.Value); err == nil {
				r.IsMarker, r.Marker = true, m
			}
		}
	}
	return true
}

// Record returns the record Next decoded. It is stale after the next call
// to any of the Walker's methods.
func (w *Walker) Record() *Record { return &w.cur }

// Err returns the error that stopped the iteration, if any.
func (w *Walker) Err() error { return w.it.Err() }

// Wrapper completes the description b of e when e is a legacy wrapper:
// Count becomes the number of its inner messages and BaseOffset the first
// one's offset, as far as they decode. It returns the error that stopped
// them (Count is then the number decoded before it). It does nothing for
// other entries.
func (w *Walker) Wrapper(b *Batch, e *record.Entry) error {
	if !b.IsWrapper() {
		return nil
	}
	n := 0
	for w.Reset(e); w.Next(); n++ {
		if n == 0 {
			b.BaseOffset = w.cur.Offset
		}
	}
	b.Count = n
	return w.Err()
}

// TxnMarkers reports whether the control batch e holds a COMMIT and an
// ABORT marker (by their keys). It is false, false for other entries and
// for records that do not decode.
func (w *Walker) TxnMarkers(e *record.Entry) (commit, abort bool) {
	if e.Magic != record.MagicV2 || !e.Batch.Attributes.IsControl() {
		return false, false
	}
	for w.Reset(e); w.Next(); {
		if w.cur.HasControlType {
			switch w.cur.ControlType {
			case record.ControlCommit:
				commit = true
			case record.ControlAbort:
				abort = true
			}
		}
	}
	return commit, abort
}

// Messages describes the legacy message m and, when it is a wrapper, the
// messages inside it instead: as far as they decode, and none when its
// value does not decompress (within MaxDecompressed). Inner messages are
// decoded by record.ReadLegacyMessage, which checks their CRCs, so the
// list stops before the first that fails. The slice is the Walker's and is
// stale after the next call to Messages (iterating records leaves it).
func (w *Walker) Messages(m *record.LegacyMessage) []Message {
	w.msgs = w.msgs[:0]
	if m.Codec() == compress.None {
		w.msgs = append(w.msgs, message(m, m.CRC == m.ComputeCRC()))
		return w.msgs
	}
	limit := w.MaxDecompressed
	if limit <= 0 {
		limit = record.DefaultMaxDecompressed
	}
	inner, err := w.dec.AppendDecompressed(w.buf[:0], m.Codec(), m.Value, limit)
	w.buf = inner[:0]
	if err != nil {
		return w.msgs
	}
	for len(inner) > 0 {
		in, rest, err := record.ReadLegacyMessage(inner)
		if err != nil {
			break
		}
		w.msgs = append(w.msgs, message(&in, true))
		inner = rest
	}
	return w.msgs
}

func message(m *record.LegacyMessage, crcValid bool) Message {
	return Message{Offset: m.Offset, Magic: m.Magic, Attributes: m.Attributes, Timestamp: m.Timestamp, CRC: m.CRC, CRCValid: crcValid, Size: m.Size()}
}

// Size is the length of b as Kafka's tools print a key's, a value's or a
// header value's: -1 for nil (null).
func Size(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}
