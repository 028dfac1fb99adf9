package record

import (
	"fmt"

	"github.com/segkit/segkit/format"
)

// ControlType is the type of a control record, stored in its key
// (ControlRecordType.java).
type ControlType int16

// Control record types.
//
// These constants are part of the wire format and should not be changed.
const (
	ControlAbort          ControlType = 0
	ControlCommit         ControlType = 1
	ControlLeaderChange   ControlType = 2
	ControlSnapshotHeader ControlType = 3
	ControlSnapshotFooter ControlType = 4
	ControlKRaftVersion   ControlType = 5
	ControlKRaftVoters    ControlType = 6

	// controlKeySize is version i16 + type i16.
	controlKeySize = 4
	// endTxnMarkerValueSize is version i16 + coordinatorEpoch i32.
	endTxnMarkerValueSize = 6
)

var controlNames = [...]string{"ABORT", "COMMIT", "LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER", "KRAFT_VERSION", "KRAFT_VOTERS"}

// String returns Kafka's name of the type, or "UNKNOWN(n)".
func (t ControlType) String() string {
	if t >= 0 && int(t) < len(controlNames) {
		return controlNames[t]
	}
	return fmt.Sprintf("UNKNOWN(%d)", int16(t))
}

// AppendControlKey appends the key of a control record of type t (version
// 0).
func AppendControlKey(dst []byte, t ControlType) []byte {
	dst = format.AppendInt16(dst, 0)
	return format.AppendInt16(dst, int16(t))
}

// ParseControlKey decodes a control record key. The key must be at least 4
// bytes with version 0; later bytes are ignored, as Kafka ignores them.
func ParseControlKey(key []byte) (ControlType, error) {
	if len(key) < controlKeySize {
		return 0, format.Corruptf("", 0, format.ErrInvalid, "control record key of %d bytes, want at least %d", len(key), controlKeySize)
	}
	if v := format.Int16(key); v != 0 {
		return 0, format.Corruptf("", 0, format.ErrInvalid, "control record key version %d", v)
	}
	return ControlType(format.Int16(key[2:])), nil
}

// EndTxnMarker is the content of a COMMIT or ABORT control record
// (EndTransactionMarker.java).
type EndTxnMarker struct {
	Type             ControlType // ControlCommit or ControlAbort
	CoordinatorEpoch int32
}

// AppendEndTxnMarkerValue appends the value of an end-transaction marker:
// version 0 and the coordinator epoch.
func AppendEndTxnMarkerValue(dst []byte, m EndTxnMarker) []byte {
	dst = format.AppendInt16(dst, 0)
	return format.AppendInt32(dst, m.CoordinatorEpoch)
}

// ParseEndTxnMarker decodes an end-transaction marker from a control
// record's key and value.
func ParseEndTxnMarker(key, value []byte) (EndTxnMarker, error) {
	t, err := ParseControlKey(key)
	if err != nil {
		return EndTxnMarker{}, err
	}
	if t != ControlAbort && t != ControlCommit {
		return EndTxnMarker{}, format.Corruptf("", 2, format.ErrInvalid, "control type %v is not a transaction marker", t)
	}
	if len(value) < endTxnMarkerValueSize {
		return EndTxnMarker{}, format.Corruptf("", 0, format.ErrInvalid, "end transaction marker value of %d bytes, want %d", len(value), endTxnMarkerValueSize)
	}
	if v := format.Int16(value); v < 0 {
		return EndTxnMarker{}, format.Corruptf("", 0, format.ErrInvalid, "end transaction marker version %d", v)
	}
	return EndTxnMarker{Type: t, CoordinatorEpoch: format.Int32(value[2:])}, nil
}

// AppendEndTxnMarker appends a control batch holding one COMMIT or ABORT
// marker for the producer in spec, with the given timestamp, as a
// transaction coordinator writes it. spec's Control and Transactional
// flags are set for the call.
func (w *Builder) AppendEndTxnMarker(dst []byte, spec *BatchSpec, m EndTxnMarker, timestamp int64) ([]byte, error) {
	if m.Type != ControlAbort && m.Type != ControlCommit {
		return dst, format.Corruptf("", 0, format.ErrInvalid, "control type %v is not a transaction marker", m.Type)
	}
	var kv [controlKeySize + endTxnMarkerValueSize]byte
	AppendControlKey(kv[:0], m.Type)
	AppendEndTxnMarkerValue(kv[controlKeySize:controlKeySize], m)
	s := *spec
	s.Control, s.Transactional = true, true
	rec := [1]Record{{Timestamp: timestamp, Key: kv[:controlKeySize], Value: kv[controlKeySize:]}}
	return w.AppendBatch(dst, &s, rec[:])
}
