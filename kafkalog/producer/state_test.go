package producer

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/segkit/segkit/record"
)

// data returns an idempotent (or transactional) data batch.
func data(pid int64, epoch int16, baseSeq int32, base, last int64, ts int64, txn bool) BatchInfo {
	return BatchInfo{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: baseSeq, BaseOffset: base, LastOffset: last, MaxTimestamp: ts, IsTransactional: txn}
}

// marker returns a one-record control batch holding an end marker.
func marker(pid int64, epoch int16, offset int64, ts int64, t record.ControlType, coordEpoch int32) BatchInfo {
	return BatchInfo{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: record.NoSequence, BaseOffset: offset, LastOffset: offset, MaxTimestamp: ts,
		IsTransactional: true, IsControl: true, Marker: &Marker{Type: t, CoordinatorEpoch: coordEpoch}}
}

func entryOf(t *testing.T, s *State, pid int64) Entry {
	t.Helper()
	e, ok := s.LastEntry(pid)
	if !ok {
		t.Fatalf("producer %d unknown", pid)
	}
	return e
}

func TestIdempotentProducer(t *testing.T) {
	s := NewState()
	for i, b := range []BatchInfo{
		data(7, 0, 0, 0, 2, 100, false),    // seq 0..2
		data(7, 0, 3, 3, 3, 110, false),    // seq 3
		data(-1, -1, -1, 4, 9, 120, false), // no producer id: ignored
		data(7, 0, 4, 10, 14, 130, false),  // seq 4..8
	} {
		done, lso, err := s.Replay(b)
		if err != nil || done != nil || lso != 0 {
			t.Fatalf("batch %d: %v %d %v", i, done, lso, err)
		}
	}
	if s.Len() != 1 || s.MapEndOffset() != 15 {
		t.Errorf("Len %d, MapEndOffset %d", s.Len(), s.MapEndOffset())
	}
	want := Entry{ProducerID: 7, Epoch: 0, LastSequence: 8, LastOffset: 14, OffsetDelta: 4, Timestamp: 130, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}
	if got := entryOf(t, s, 7); got != want {
		t.Errorf("entry %+v, want %+v", got, want)
	}
	if _, ok := s.FirstUnstableOffset(); ok {
		t.Error("an idempotent producer made the log unstable")
	}
	// Duplicate detection over the retained batches.
	if m, ok := s.FindDuplicate(data(7, 0, 3, 99, 99, 0, false)); !ok || m.LastOffset != 3 || m.FirstSeq() != 3 || m.FirstOffset() != 3 {
		t.Errorf("retry of seq 3: %+v %v", m, ok)
	}
	if _, ok := s.FindDuplicate(data(7, 0, 3, 99, 100, 0, false)); ok {
		t.Error("a different range matched")
	}
	if _, ok := s.FindDuplicate(data(7, 1, 3, 99, 99, 0, false)); ok {
		t.Error("another epoch matched")
	}
	// Only the last BatchesToRetain batches are kept.
	for i := range int32(10) {
		s.Update(data(7, 0, 9+i, 15+int64(i), 15+int64(i), 200, false))
	}
	if got := s.Batches(7); len(got) != BatchesToRetain || got[0].LastSeq != 14 || got[4].LastSeq != 18 {
		t.Errorf("retained %+v", got)
	}
}

func TestEpochBump(t *testing.T) {
	s := NewState()
	s.Update(data(7, 0, 0, 0, 4, 100, false))
	s.Update(data(7, 1, 0, 5, 5, 110, false)) // new epoch restarts sequences
	if b := s.Batches(7); len(b) != 1 || b[0].LastSeq != 0 {
		t.Errorf("a new epoch kept the old batches: %+v", b)
	}
	if e := entryOf(t, s, 7); e.Epoch != 1 || e.LastSequence != 0 || e.LastOffset != 5 {
		t.Errorf("after bump: %+v", e)
	}
	// Replicated data with an older epoch is applied, not refused (Kafka
	// only warns for REPLICATION origin).
	if _, err := s.Update(data(7, 0, 1, 6, 6, 120, false)); err != nil {
		t.Fatal(err)
	}
	if e := entryOf(t, s, 7); e.Epoch != 0 {
		t.Errorf("older epoch not applied: %+v", e)
	}
	// A marker with a bumped epoch (transactions v2) forgets the batches.
	s.Update(data(8, 3, 0, 10, 10, 130, true))
	s.Replay(marker(8, 4, 11, 140, record.ControlCommit, 2))
	if e := entryOf(t, s, 8); e.Epoch != 4 || e.LastOffset != -1 || e.LastSequence != -1 || e.CoordinatorEpoch != 2 || e.Timestamp != 140 {
		t.Errorf("after a bumping marker: %+v", e)
	}
}

func TestCommittedTransaction(t *testing.T) {
	s := NewState()
	s.Replay(data(1000, 0, 0, 0, 1, 100, true)) // txn begins at 0
	if fu, ok := s.FirstUnstableOffset(); !ok || fu != 0 {
		t.Errorf("FirstUnstableOffset %d %v", fu, ok)
	}
	s.Replay(data(1000, 0, 2, 2, 2, 110, true))
	if e := entryOf(t, s, 1000); e.CurrentTxnFirstOffset != 0 {
		t.Errorf("open txn: %+v", e)
	}
	done, lso, err := s.Replay(marker(1000, 0, 3, 120, record.ControlCommit, 5))
	if err != nil || done == nil || *done != (CompletedTxn{ProducerID: 1000, FirstOffset: 0, LastOffset: 3, IsAborted: false}) || lso != 4 {
		t.Fatalf("commit: %+v %d %v", done, lso, err)
	}
	// Completed, but the marker is not below the high watermark yet.
	if fu, ok := s.FirstUnstableOffset(); !ok || fu != 0 {
		t.Errorf("before the HW passes the marker: %d %v", fu, ok)
	}
	if fu, ok := s.FirstUndecidedOffset(); ok {
		t.Errorf("FirstUndecidedOffset %d after the commit", fu)
	}
	s.OnHighWatermarkUpdated(3)
	if _, ok := s.FirstUnstableOffset(); !ok {
		t.Error("HW 3 does not pass the marker at 3")
	}
	s.OnHighWatermarkUpdated(4)
	if fu, ok := s.FirstUnstableOffset(); ok {
		t.Errorf("still unstable at %d", fu)
	}
	want := Entry{ProducerID: 1000, Epoch: 0, LastSequence: 2, LastOffset: 2, OffsetDelta: 0, Timestamp: 120, CoordinatorEpoch: 5, CurrentTxnFirstOffset: -1}
	if got := entryOf(t, s, 1000); got != want {
		t.Errorf("entry %+v, want %+v", got, want)
	}
	// A marker with no open transaction completes nothing, but records
	// the coordinator epoch and timestamp.
	done, _, err = s.Replay(marker(1000, 0, 4, 130, record.ControlAbort, 6))
	if err != nil || done != nil {
		t.Errorf("marker without a transaction: %+v %v", done, err)
	}
	if e := entryOf(t, s, 1000); e.CoordinatorEpoch != 6 || e.Timestamp != 130 {
		t.Errorf("after a lone marker: %+v", e)
	}
}

// TestAbortInterleaved: producer A's transaction is aborted while B's is
// still open, so the aborted transaction's last stable offset is B's
// first offset, not the marker's next offset.
func TestAbortInterleaved(t *testing.T) {
	const a, b = 1, 2
	s := NewState()
	s.Replay(data(a, 0, 0, 0, 2, 100, true))     // A: 0..2
	s.Replay(data(b, 0, 0, 3, 4, 101, true))     // B: 3..4
	s.Replay(data(-1, -1, -1, 5, 5, 102, false)) // plain data
	s.Replay(data(a, 0, 3, 6, 6, 103, true))     // A: 6
	if got := s.OngoingTxns(); !reflect.DeepEqual(got, []TxnMetadata{{a, 0, -1}, {b, 3, -1}}) {
		t.Errorf("ongoing %+v", got)
	}
	done, lso, err := s.Replay(marker(a, 0, 7, 104, record.ControlAbort, 0))
	if err != nil || done == nil || *done != (CompletedTxn{ProducerID: a, FirstOffset: 0, LastOffset: 7, IsAborted: true}) {
		t.Fatalf("abort: %+v %v", done, err)
	}
	if lso != 3 {
		t.Errorf("LSO of the aborted txn = %d, want 3 (B's first offset)", lso)
	}
	if fu, _ := s.FirstUndecidedOffset(); fu != 3 {
		t.Errorf("FirstUndecidedOffset %d, want 3", fu)
	}
	// A's marker is not below the HW yet, so 0 is still the first unstable.
	if fu, _ := s.FirstUnstableOffset(); fu != 0 {
		t.Errorf("FirstUnstableOffset %d, want 0", fu)
	}
	s.OnHighWatermarkUpdated(8)
	if fu, _ := s.FirstUnstableOffset(); fu != 3 {
		t.Errorf("FirstUnstableOffset %d after HW 8, want 3", fu)
	}
	// A starts a new transaction; B commits: B's LSO skips over A's own
	// (the earliest ongoing of another producer is A's new one at 8).
	s.Replay(data(a, 0, 4, 8, 8, 105, true))
	done, lso, _ = s.Replay(marker(b, 0, 9, 106, record.ControlCommit, 0))
	if done == nil || done.ProducerID != b || done.IsAborted || lso != 8 {
		t.Errorf("B commit: %+v lso %d, want lso 8", done, lso)
	}
	done, lso, _ = s.Replay(marker(a, 0, 10, 107, record.ControlCommit, 0))
	if done == nil || lso != 11 {
		t.Errorf("A commit: %+v lso %d, want 11", done, lso)
	}
	// LastStableOffset ignores the completing producer's own entry.
	s2 := NewState()
	s2.Update(data(a, 0, 0, 0, 0, 1, true))
	if got := s2.LastStableOffset(CompletedTxn{ProducerID: a, FirstOffset: 0, LastOffset: 1}); got != 2 {
		t.Errorf("own transaction counted: %d", got)
	}
}

func TestStateErrors(t *testing.T) {
	s := NewState()
	s.Update(data(1, 0, 0, 0, 0, 1, true))
	before := s.Snapshot()
	// A non-transactional write during an open transaction.
	_, err := s.Update(data(1, 0, 1, 1, 1, 2, false))
	if !errors.Is(err, ErrInvalidTxnState) || !reflect.DeepEqual(s.Snapshot(), before) {
		t.Errorf("non-transactional write: %v; state changed: %v", err, !reflect.DeepEqual(s.Snapshot(), before))
	}
	for name, b := range map[string]BatchInfo{
		"reversed_offsets": data(1, 0, 0, 5, 4, 0, false),
		"marker_on_data":   {ProducerID: 1, BaseOffset: 1, LastOffset: 1, Marker: &Marker{Type: record.ControlCommit}},
		"leader_change":    {ProducerID: 1, BaseOffset: 1, LastOffset: 1, IsControl: true, Marker: &Marker{Type: record.ControlLeaderChange}},
	} {
		if _, err := s.Update(b); !errors.Is(err, ErrInvalidBatch) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := s.CompleteTxn(CompletedTxn{ProducerID: 1, FirstOffset: 99, LastOffset: 100}); !errors.Is(err, ErrTxnNotStarted) {
		t.Errorf("CompleteTxn of an unknown txn: %v", err)
	}
	// An empty control batch (records cleaned away) from an unknown
	// producer adds an empty entry, as Kafka's update does.
	if done, err := s.Update(BatchInfo{ProducerID: 9, ProducerEpoch: 2, BaseOffset: 5, LastOffset: 5, IsControl: true}); err != nil || done != nil {
		t.Fatal(err)
	}
	if e := entryOf(t, s, 9); e != (Entry{ProducerID: 9, Epoch: -1, LastSequence: -1, LastOffset: -1, Timestamp: -1, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}) {
		t.Errorf("empty control batch: %+v", e)
	}
}

func TestSnapshotLoad(t *testing.T) {
	s := NewState()
	s.Replay(data(3000, 0, 0, 0, 1, 100, false))
	s.Replay(data(2000, 1, 5, 2, 2, 101, true)) // open transaction
	s.Replay(data(1001, 0, 0, 3, 3, 102, false))
	snap := s.Snapshot()
	// Java HashMap order with 16 buckets: 2000 (bucket 0), 3000 (8), 1001 (9).
	if ids := []int64{snap[0].ProducerID, snap[1].ProducerID, snap[2].ProducerID}; !slices.Equal(ids, []int64{2000, 3000, 1001}) {
		t.Errorf("snapshot order %v", ids)
	}
	l := NewState()
	l.Load(snap, 4)
	if !reflect.DeepEqual(l.Snapshot(), snap) || l.MapEndOffset() != 4 || l.LastSnapshotOffset() != 4 {
		t.Errorf("Load round trip: %+v", l.Snapshot())
	}
	if fu, ok := l.FirstUnstableOffset(); !ok || fu != 2 {
		t.Errorf("loaded open transaction: %d %v", fu, ok)
	}
	// The loaded state goes on as the original would.
	d1, lso1, _ := s.Replay(marker(2000, 1, 4, 103, record.ControlAbort, 1))
	d2, lso2, _ := l.Replay(marker(2000, 1, 4, 103, record.ControlAbort, 1))
	if *d1 != *d2 || lso1 != lso2 || !reflect.DeepEqual(s.Snapshot(), l.Snapshot()) {
		t.Errorf("diverged: %+v/%d vs %+v/%d", d1, lso1, d2, lso2)
	}
	// Expiry keeps producers with an open transaction.
	l.Replay(data(5, 0, 0, 5, 5, 1000, true))
	l.RemoveExpiredProducers(1100, 500)
	if l.Len() != 1 {
		t.Errorf("after expiry %d producers, want the one with an open transaction", l.Len())
	}
	l.TruncateFullyAndStartAt(50)
	if !l.IsEmpty() || l.MapEndOffset() != 50 || l.LastSnapshotOffset() != 0 {
		t.Errorf("TruncateFullyAndStartAt: %d %d", l.MapEndOffset(), l.LastSnapshotOffset())
	}
	// A snapshot with a duplicate id: the later entry wins, in place.
	d := NewState()
	d.Load([]Entry{{ProducerID: 1, LastOffset: -1, Timestamp: 1, CurrentTxnFirstOffset: -1}, {ProducerID: 17, LastOffset: -1, CurrentTxnFirstOffset: -1}, {ProducerID: 1, LastOffset: -1, Timestamp: 2, CurrentTxnFirstOffset: -1}}, 0)
	if got := d.Snapshot(); len(got) != 2 || got[0].ProducerID != 1 || got[0].Timestamp != 2 || got[1].ProducerID != 17 {
		t.Errorf("duplicate ids: %+v", got)
	}
}

// TestJavaOrder checks the HashMap emulation against orders computed by
// hand from java.util.HashMap's algorithm.
func TestJavaOrder(t *testing.T) {
	ids := func(s *State) []int64 {
		var out []int64
		for _, e := range s.Snapshot() {
			out = append(out, e.ProducerID)
		}
		return out
	}
	add := func(s *State, id ...int64) {
		for _, i := range id {
			s.Update(data(i, 0, 0, 0, 0, 0, false))
		}
	}
	s := NewState()
	add(s, 17, 1, 33, 2)
	// 16 buckets: 17, 1 and 33 share bucket 1 (insertion order), 2 is in 2.
	if got := ids(s); !slices.Equal(got, []int64{17, 1, 33, 2}) {
		t.Errorf("16 buckets: %v", got)
	}
	// The 13th key resizes to 32: 17 and 33 move to bucket 17 and 1 ...
	add(s, 3, 4, 5, 6, 7, 8, 9, 10, 11)
	if got := ids(s); !slices.Equal(got, []int64{1, 33, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 17}) {
		t.Errorf("32 buckets: %v", got)
	}
	// Negative and large ids hash through Long.hashCode.
	if javaHash(-1) != 0 || javaHash(1<<32) != 1 || javaHash(0x10000) != 0x10001 {
		t.Errorf("javaHash: %x %x %x", javaHash(-1), javaHash(1<<32), javaHash(0x10000))
	}
	// A ninth id in one bucket of a table smaller than 64 resizes it
	// instead of making a tree (multiples of 64 stay together in bucket 0
	// of the 32-table).
	t2 := NewState()
	var many []int64
	for i := range int64(9) {
		many = append(many, i*64)
	}
	add(t2, many...)
	if t2.order.capacity != 32 || t2.order.treeified {
		t.Errorf("after 9 colliding ids: capacity %d treeified %v", t2.order.capacity, t2.order.treeified)
	}
	// clear keeps the capacity.
	t2.Load(nil, 0)
	if t2.order.capacity != 32 {
		t.Errorf("clear changed the capacity to %d", t2.order.capacity)
	}
	// Removal keeps the others' order; re-adding goes to the end of its
	// bucket.
	u := NewState()
	add(u, 1, 17, 33)
	u.RemoveExpiredProducers(1<<40, 1) // everything expires
	add(u, 33, 1)
	if got := ids(u); !slices.Equal(got, []int64{33, 1}) {
		t.Errorf("after removal: %v", got)
	}
}
