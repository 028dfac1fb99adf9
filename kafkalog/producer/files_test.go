package producer

import (
	"errors"
	"reflect"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

func TestTakeSnapshotAndReload(t *testing.T) {
	m := vfs.NewMem()
	must(t, m.MkdirAll("p", 0o755))
	s := NewState()
	if wrote, err := s.TakeSnapshot(m, "p"); wrote || err != nil {
		t.Fatalf("snapshot at 0: %v %v", wrote, err)
	}
	s.Replay(data(1, 0, 0, 0, 9, 100, false))
	if wrote, err := s.TakeSnapshot(m, "p"); !wrote || err != nil {
		t.Fatalf("snapshot at 10: %v %v", wrote, err)
	}
	at10 := s.Snapshot()
	if wrote, _ := s.TakeSnapshot(m, "p"); wrote {
		t.Error("a second snapshot at the same offset")
	}
	s.Replay(data(2, 0, 0, 10, 19, 110, true))
	s.TakeSnapshot(m, "p") // 20
	s.Replay(marker(2, 0, 20, 120, record.ControlAbort, 0))
	s.TakeSnapshot(m, "p") // 21
	if offs, _ := ListSnapshots(m, "p"); !reflect.DeepEqual(offs, []int64{10, 20, 21}) {
		t.Fatalf("snapshots %v", offs)
	}

	// Truncate the log to 15: the snapshots at 20 and 21 go, the one at
	// 10 is loaded; the caller replays 10..15 from the log.
	r := NewState()
	skipped, err := r.TruncateAndReload(m, "p", 0, 15)
	if err != nil || len(skipped) != 0 {
		t.Fatalf("TruncateAndReload: %v %v", skipped, err)
	}
	if offs, _ := ListSnapshots(m, "p"); !reflect.DeepEqual(offs, []int64{10}) {
		t.Errorf("left %v", offs)
	}
	if r.MapEndOffset() != 10 || !reflect.DeepEqual(r.Snapshot(), at10) {
		t.Errorf("loaded %+v at %d", r.Snapshot(), r.MapEndOffset())
	}

	// A corrupt latest snapshot is deleted and the older one used.
	must(t, WriteSnapshot(m, "p", 12, at10))
	must(t, vfs.WriteFile(m, "p/"+SnapshotFileName(14), []byte("\x00\x01garbage!!"), 0o644))
	r2 := NewState()
	skipped, err = r2.TruncateAndReload(m, "p", 0, 15)
	var ce *format.CorruptionError
	if err != nil || len(skipped) != 1 || !errors.As(skipped[0], &ce) {
		t.Fatalf("corrupt snapshot: %v %v", skipped, err)
	}
	if r2.MapEndOffset() != 12 {
		t.Errorf("loaded from %d, want 12", r2.MapEndOffset())
	}
	if offs, _ := ListSnapshots(m, "p"); !reflect.DeepEqual(offs, []int64{10, 12}) {
		t.Errorf("left %v", offs)
	}

	// The log start moved to 12: snapshots at or below it go; with none
	// left the state starts empty at the log start.
	r3 := NewState()
	if _, err := r3.TruncateAndReload(m, "p", 12, 15); err != nil {
		t.Fatal(err)
	}
	if offs, _ := ListSnapshots(m, "p"); len(offs) != 0 || r3.MapEndOffset() != 12 || !r3.IsEmpty() {
		t.Errorf("left %v, state at %d", offs, r3.MapEndOffset())
	}

	// When the state already ends at the log end, only the log start moves.
	r3.UpdateMapEndOffset(15)
	r3.Update(data(5, 0, 0, 12, 14, 1, false))
	if _, err := r3.TruncateAndReload(m, "p", 13, 15); err != nil || r3.Len() != 1 || r3.LastSnapshotOffset() != 13 {
		t.Errorf("no-op reload: %v len %d last snapshot %d", err, r3.Len(), r3.LastSnapshotOffset())
	}
}

// TestFromBatch decodes real-format batches built with record.Builder.
func TestFromBatch(t *testing.T) {
	var w record.Builder
	spec := record.NewBatchSpec(10, 0)
	spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = 42, 3, 7
	spec.Transactional = true
	b, err := w.AppendBatch(nil, &spec, []record.Record{{Value: []byte("a"), Timestamp: 1000}, {Value: []byte("b"), Timestamp: 1005}})
	if err != nil {
		t.Fatalf("record builder: %v", err)
	}
	batch, _, err := record.ReadBatch(b)
	must(t, err)
	var it record.Iterator
	info, err := FromBatch(&batch, &it)
	must(t, err)
	want := BatchInfo{ProducerID: 42, ProducerEpoch: 3, BaseSequence: 7, BaseOffset: 10, LastOffset: 11, IsTransactional: true, MaxTimestamp: 1005}
	if info != want || info.LastSequence() != 8 {
		t.Errorf("FromBatch = %+v, want %+v", info, want)
	}

	mspec := record.NewBatchSpec(12, 0)
	mspec.ProducerID, mspec.ProducerEpoch = 42, 3
	mspec.Transactional, mspec.Control = true, true
	key := record.AppendControlKey(nil, record.ControlAbort)
	val := record.AppendEndTxnMarkerValue(nil, record.EndTxnMarker{Type: record.ControlAbort, CoordinatorEpoch: 9})
	mb, err := w.AppendBatch(nil, &mspec, []record.Record{{Key: key, Value: val, Timestamp: 2000}})
	if err != nil {
		t.Fatalf("record builder (control): %v", err)
	}
	mbatch, _, err := record.ReadBatch(mb)
	must(t, err)
	minfo, err := FromBatch(&mbatch, &it)
	must(t, err)
	if minfo.Marker == nil || *minfo.Marker != (Marker{Type: record.ControlAbort, CoordinatorEpoch: 9}) || minfo.MaxTimestamp != 2000 || !minfo.IsControl {
		t.Errorf("marker FromBatch = %+v %+v", minfo, minfo.Marker)
	}
	s := NewState()
	s.Replay(info)
	done, lso, err := s.Replay(minfo)
	if err != nil || done == nil || !done.IsAborted || done.FirstOffset != 10 || done.LastOffset != 12 || lso != 13 {
		t.Errorf("abort via FromBatch: %+v %d %v", done, lso, err)
	}

	// A control record that is not a marker, from a producer: an error.
	lspec := record.NewBatchSpec(13, 0)
	lspec.ProducerID, lspec.Control = 42, true
	lb, err := w.AppendBatch(nil, &lspec, []record.Record{{Key: record.AppendControlKey(nil, record.ControlLeaderChange), Value: []byte{0, 0}}})
	if err == nil {
		lbatch, _, _ := record.ReadBatch(lb)
		if _, err := FromBatch(&lbatch, &it); !errors.Is(err, ErrInvalidBatch) {
			t.Errorf("leader-change record: %v", err)
		}
	}
}
