package producer

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/segkit/segkit/record"
)

// The record format's sentinels (record.NoProducerID, record.NoProducerEpoch,
// record.NoSequence, record.NoTimestamp) mean here what they mean in a batch: a producer
// not seen yet has epoch record.NoProducerEpoch and timestamp
// record.NoTimestamp.
const (
	// NoTxn is Entry.CurrentTxnFirstOffset when no transaction is open.
	NoTxn = -1

	// BatchesToRetain is how many recent batches are kept per producer
	// for duplicate detection (ProducerStateEntry.NUM_BATCHES_TO_RETAIN).
	BatchesToRetain = 5
)

// Errors of the state machine.
var (
	// ErrInvalidBatch is returned by Update for a BatchInfo that no log
	// holds: a last offset below the base offset, a marker on a data
	// batch, or a control record that is not ABORT or COMMIT.
	ErrInvalidBatch = errors.New("producer: invalid batch")
	// ErrInvalidTxnState is returned by Update for a non-transactional
	// data batch from a producer with an open transaction
	// (InvalidTxnStateException); the state is left unchanged.
	ErrInvalidTxnState = errors.New("producer: invalid transaction state")
	// ErrTxnNotStarted is returned by CompleteTxn for a transaction that
	// is not ongoing.
	ErrTxnNotStarted = errors.New("producer: transaction not started")
)

// Marker is the content of an end-transaction control record.
type Marker struct {
	Type             record.ControlType // record.ControlCommit or record.ControlAbort
	CoordinatorEpoch int32
}

// BatchInfo is what the producer state needs from a v2 batch: its header
// fields and, for a control batch, the marker it holds.
type BatchInfo struct {
	ProducerID      int64
	ProducerEpoch   int16
	BaseSequence    int32
	BaseOffset      int64
	LastOffset      int64 // baseOffset + lastOffsetDelta
	IsTransactional bool
	IsControl       bool
	// MaxTimestamp is the batch's max timestamp. For a control batch it
	// must be the marker record's timestamp, which Kafka records as the
	// producer's last timestamp; for a one-record control batch the two
	// are the same.
	MaxTimestamp int64
	// Marker is the first control record of a control batch, decoded; nil
	// for a control batch whose records compaction removed (which then
	// changes nothing), and for data batches.
	Marker *Marker
}

// LastSequence returns the sequence number of the batch's last record:
// baseSequence + lastOffsetDelta, wrapping past MaxInt32 to 0, or
// record.NoSequence (DefaultRecordBatch.lastSequence).
func (b *BatchInfo) LastSequence() int32 {
	if b.BaseSequence == record.NoSequence {
		return record.NoSequence
	}
	return incrementSequence(b.BaseSequence, int32(b.LastOffset-b.BaseOffset))
}

func incrementSequence(seq, inc int32) int32 {
	if int64(seq) > int64(math.MaxInt32)-int64(inc) {
		return inc - (math.MaxInt32 - seq) - 1
	}
	return seq + inc
}

func decrementSequence(seq, dec int32) int32 {
	if seq < dec {
		return math.MaxInt32 - (dec - seq) + 1
	}
	return seq - dec
}

// FromHeader returns the BatchInfo of a v2 batch header, without a marker.
func FromHeader(h *record.BatchHeader) BatchInfo {
	return BatchInfo{
		ProducerID:      h.ProducerID,
		ProducerEpoch:   h.ProducerEpoch,
		BaseSequence:    h.BaseSequence,
		BaseOffset:      h.BaseOffset,
		LastOffset:      h.LastOffset(),
		IsTransactional: h.Attributes.IsTransactional(),
		IsControl:       h.Attributes.IsControl(),
		MaxTimestamp:    h.MaxTimestamp,
	}
}

// FromBatch returns the BatchInfo of a v2 batch. For a control batch with
// a producer id it decodes the first record with it (an Iterator the
// caller reuses) as an end-transaction marker, whose timestamp becomes
// MaxTimestamp, as ProducerAppendInfo.append reads it. A control record
// that is not a marker is an error wrapping ErrInvalidBatch.
func FromBatch(b *record.Batch, it *record.Iterator) (BatchInfo, error) {
	info := FromHeader(&b.BatchHeader)
	if !info.IsControl || info.ProducerID < 0 {
		return info, nil
	}
	var r record.Record
	it.Reset(b)
	if !it.Next(&r) {
		return info, it.Err() // no record: compaction emptied the batch
	}
	m, err := record.ParseEndTxnMarker(r.Key, r.Value)
	if err != nil {
		return info, fmt.Errorf("%w: control batch at offset %d: %w", ErrInvalidBatch, b.BaseOffset, err)
	}
	info.Marker = &Marker{Type: m.Type, CoordinatorEpoch: m.CoordinatorEpoch}
	info.MaxTimestamp = r.Timestamp
	return info, nil
}

// BatchMetadata describes one retained batch of a producer
// (BatchMetadata.java).
type BatchMetadata struct {
	LastSeq     int32
	LastOffset  int64
	OffsetDelta int32 // lastOffset - firstOffset
	Timestamp   int64
}

// FirstSeq returns the batch's first sequence number.
func (m BatchMetadata) FirstSeq() int32 { return decrementSequence(m.LastSeq, m.OffsetDelta) }

// FirstOffset returns the batch's first offset.
func (m BatchMetadata) FirstOffset() int64 { return m.LastOffset - int64(m.OffsetDelta) }

// CompletedTxn is a transaction that a COMMIT or ABORT marker ended
// (CompletedTxn.java). The engine appends aborted ones to the
// transaction index as index.AbortedTxn{ProducerID, FirstOffset,
// LastOffset, LastStableOffset} with the LastStableOffset it gets from
// State.LastStableOffset before calling State.CompleteTxn.
type CompletedTxn struct {
	ProducerID  int64
	FirstOffset int64 // offset of the transaction's first data batch
	LastOffset  int64 // offset of the marker
	IsAborted   bool
}

// TxnMetadata is an ongoing, or completed but not yet replicated,
// transaction (TxnMetadata.java). LastOffset is -1 while it is ongoing.
type TxnMetadata struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64
}

// producerEntry is ProducerStateEntry.
type producerEntry struct {
	id                    int64
	epoch                 int16
	coordinatorEpoch      int32
	lastTimestamp         int64
	currentTxnFirstOffset int64
	batches               []BatchMetadata // oldest first, at most BatchesToRetain
	seq                   uint64          // insertion order, for javaOrder
}

func newEntry(id int64) *producerEntry {
	return &producerEntry{id: id, epoch: record.NoProducerEpoch, coordinatorEpoch: -1, lastTimestamp: record.NoTimestamp, currentTxnFirstOffset: NoTxn}
}

func (e *producerEntry) maybeUpdateEpoch(epoch int16) {
	if e.epoch != epoch {
		e.batches = e.batches[:0]
		e.epoch = epoch
	}
}

func (e *producerEntry) addBatch(m BatchMetadata) {
	if len(e.batches) == BatchesToRetain {
		copy(e.batches, e.batches[1:])
		e.batches = e.batches[:BatchesToRetain-1]
	}
	e.batches = append(e.batches, m)
}

func (e *producerEntry) snapshotEntry() Entry {
	s := Entry{
		ProducerID: e.id, Epoch: e.epoch, LastSequence: record.NoSequence, LastOffset: -1, OffsetDelta: 0,
		Timestamp: e.lastTimestamp, CoordinatorEpoch: e.coordinatorEpoch, CurrentTxnFirstOffset: e.currentTxnFirstOffset,
	}
	if n := len(e.batches); n > 0 {
		last := e.batches[n-1]
		s.LastSequence, s.LastOffset, s.OffsetDelta = last.LastSeq, last.LastOffset, last.OffsetDelta
	}
	return s
}

// State is the producer state of one partition (ProducerStateManager,
// without its file handling): per producer id, the epoch, the last
// batches, the coordinator epoch and the open transaction; the ongoing
// transactions in first-offset order; the completed ones whose markers
// are not yet below the high watermark; and the offset the state is
// valid up to (MapEndOffset).
//
// Update applies batches with the rules Kafka uses for replicated and
// recovered data: nothing is refused for an epoch or sequence number, as
// the leader validated them.
//
// A State is not safe for concurrent use.
type State struct {
	producers      map[int64]*producerEntry
	ongoing        []TxnMetadata // by FirstOffset
	unreplicated   []TxnMetadata // by FirstOffset
	mapEndOffset   int64
	lastSnapOffset int64
	order          javaOrder
}

// NewState returns an empty state valid from offset 0.
func NewState() *State {
	return &State{producers: map[int64]*producerEntry{}}
}

// Update applies one batch, as ProducerStateManager.prepareUpdate,
// ProducerAppendInfo.append and ProducerStateManager.update do together.
// A batch without a producer id changes nothing. A data batch records a
// new last batch (a new epoch forgets the older batches) and opens a
// transaction if it is transactional and none is open. A control batch
// with a marker closes the open transaction, returning it as a
// CompletedTxn (nil when no transaction was open: such a marker has no
// effect on the last stable offset), and records the marker's epoch,
// coordinator epoch and timestamp.
//
// Update does not complete the transaction it returns, nor move
// MapEndOffset: call LastStableOffset, append an aborted transaction to
// the index, then CompleteTxn, as Kafka does; or use Replay for all of
// it.
func (s *State) Update(b BatchInfo) (*CompletedTxn, error) {
	if b.ProducerID < 0 {
		return nil, nil
	}
	if b.LastOffset < b.BaseOffset || b.LastOffset-b.BaseOffset > math.MaxInt32 {
		return nil, fmt.Errorf("%w: offsets %d..%d", ErrInvalidBatch, b.BaseOffset, b.LastOffset)
	}
	if b.Marker != nil && !b.IsControl {
		return nil, fmt.Errorf("%w: a marker on a data batch at offset %d", ErrInvalidBatch, b.BaseOffset)
	}
	e := s.producers[b.ProducerID]
	isNew := e == nil
	if isNew {
		e = newEntry(b.ProducerID)
	}
	var done *CompletedTxn
	switch {
	case b.IsControl && b.Marker == nil:
		// An empty control batch: its transaction was cleaned away.
	case b.IsControl:
		if t := b.Marker.Type; t != record.ControlAbort && t != record.ControlCommit {
			return nil, fmt.Errorf("%w: control record %v at offset %d is not a transaction marker", ErrInvalidBatch, t, b.BaseOffset)
		}
		if e.currentTxnFirstOffset != NoTxn {
			done = &CompletedTxn{ProducerID: b.ProducerID, FirstOffset: e.currentTxnFirstOffset, LastOffset: b.BaseOffset, IsAborted: b.Marker.Type == record.ControlAbort}
		}
		e.maybeUpdateEpoch(b.ProducerEpoch)
		e.coordinatorEpoch = b.Marker.CoordinatorEpoch
		e.currentTxnFirstOffset = NoTxn
		e.lastTimestamp = b.MaxTimestamp
	default:
		if e.currentTxnFirstOffset != NoTxn && !b.IsTransactional {
			return nil, fmt.Errorf("%w: Expected transactional write from producer %d at offset %d", ErrInvalidTxnState, b.ProducerID, b.BaseOffset)
		}
		e.maybeUpdateEpoch(b.ProducerEpoch)
		e.addBatch(BatchMetadata{LastSeq: b.LastSequence(), LastOffset: b.LastOffset, OffsetDelta: int32(b.LastOffset - b.BaseOffset), Timestamp: b.MaxTimestamp})
		e.lastTimestamp = b.MaxTimestamp
		if e.currentTxnFirstOffset == NoTxn && b.IsTransactional {
			e.currentTxnFirstOffset = b.BaseOffset
			s.ongoing = insertTxn(s.ongoing, TxnMetadata{ProducerID: b.ProducerID, FirstOffset: b.BaseOffset, LastOffset: -1})
		}
	}
	if isNew {
		s.put(e)
	}
	return done, nil
}

// Replay applies one batch of the log as recovery does
// (LogSegment.updateProducerState): Update, then, when the batch
// completes a transaction, its last stable offset is computed and the
// transaction completed; finally MapEndOffset moves past the batch. It
// returns the completed transaction (nil if none) and, with it, the last
// stable offset to record in the transaction index if it was aborted.
func (s *State) Replay(b BatchInfo) (*CompletedTxn, int64, error) {
	done, err := s.Update(b)
	if err != nil {
		return nil, 0, err
	}
	var lso int64
	if done != nil {
		lso = s.LastStableOffset(*done)
		if err := s.CompleteTxn(*done); err != nil {
			return nil, 0, err
		}
	}
	s.mapEndOffset = b.LastOffset + 1
	return done, lso, nil
}

// LastStableOffset returns the last stable offset once t completes: the
// first offset of the earliest ongoing transaction of another producer,
// or t.LastOffset+1 when there is none
// (ProducerStateManager.lastStableOffset). Call it before CompleteTxn.
func (s *State) LastStableOffset(t CompletedTxn) int64 {
	for _, o := range s.ongoing {
		if o.ProducerID != t.ProducerID {
			return o.FirstOffset
		}
	}
	return t.LastOffset + 1
}

// CompleteTxn moves t from the ongoing transactions to the completed ones
// that wait for the high watermark to pass their marker
// (ProducerStateManager.completeTxn). A transaction that is not ongoing is
// an error wrapping ErrTxnNotStarted.
func (s *State) CompleteTxn(t CompletedTxn) error {
	i, ok := findTxn(s.ongoing, t.FirstOffset)
	if !ok {
		return fmt.Errorf("%w: Attempted to complete transaction %+v which was not started", ErrTxnNotStarted, t)
	}
	txn := s.ongoing[i]
	s.ongoing = slices.Delete(s.ongoing, i, i+1)
	txn.LastOffset = t.LastOffset
	s.unreplicated = insertTxn(s.unreplicated, txn)
	return nil
}

func findTxn(txns []TxnMetadata, first int64) (int, bool) {
	return slices.BinarySearchFunc(txns, first, func(t TxnMetadata, f int64) int {
		switch {
		case t.FirstOffset < f:
			return -1
		case t.FirstOffset > f:
			return 1
		}
		return 0
	})
}

// insertTxn puts t in first-offset order, replacing one with the same
// first offset, as TreeMap.put does.
func insertTxn(txns []TxnMetadata, t TxnMetadata) []TxnMetadata {
	i, ok := findTxn(txns, t.FirstOffset)
	if ok {
		txns[i] = t
		return txns
	}
	return slices.Insert(txns, i, t)
}

// FirstUnstableOffset returns the first offset of the earliest
// transaction that is ongoing, or completed with its marker not yet below
// the high watermark (ProducerStateManager.firstUnstableOffset). The last
// stable offset is min(this, high watermark).
func (s *State) FirstUnstableOffset() (int64, bool) {
	switch {
	case len(s.ongoing) == 0 && len(s.unreplicated) == 0:
		return 0, false
	case len(s.unreplicated) == 0:
		return s.ongoing[0].FirstOffset, true
	case len(s.ongoing) == 0:
		return s.unreplicated[0].FirstOffset, true
	}
	return min(s.ongoing[0].FirstOffset, s.unreplicated[0].FirstOffset), true
}

// FirstUndecidedOffset returns the first offset of the earliest ongoing
// transaction.
func (s *State) FirstUndecidedOffset() (int64, bool) {
	if len(s.ongoing) == 0 {
		return 0, false
	}
	return s.ongoing[0].FirstOffset, true
}

// OngoingTxns returns the ongoing transactions, by first offset.
func (s *State) OngoingTxns() []TxnMetadata { return slices.Clone(s.ongoing) }

// OnHighWatermarkUpdated forgets the completed transactions whose marker
// is below hw, letting the first unstable offset advance.
func (s *State) OnHighWatermarkUpdated(hw int64) { s.removeUnreplicated(hw) }

func (s *State) removeUnreplicated(offset int64) {
	s.unreplicated = slices.DeleteFunc(s.unreplicated, func(t TxnMetadata) bool { return t.LastOffset < offset })
}

// OnLogStartOffsetIncremented forgets completed transactions below the new
// log start offset and moves MapEndOffset up to it if it was below
// (ProducerStateManager.onLogStartOffsetIncremented; the caller also sets
// the last snapshot offset with SetLastSnapshotOffset if it tracks files).
func (s *State) OnLogStartOffsetIncremented(logStartOffset int64) {
	s.removeUnreplicated(logStartOffset)
	if s.mapEndOffset < logStartOffset {
		s.mapEndOffset = logStartOffset
	}
}

// MapEndOffset returns the offset up to which (exclusive) the state
// reflects the log.
func (s *State) MapEndOffset() int64 { return s.mapEndOffset }

// UpdateMapEndOffset sets MapEndOffset; the append path calls it with the
// offset after each appended batch.
func (s *State) UpdateMapEndOffset(offset int64) { s.mapEndOffset = offset }

// LastSnapshotOffset returns the offset of the last snapshot taken or
// loaded (0 for none); TakeSnapshot writes one only above it.
func (s *State) LastSnapshotOffset() int64 { return s.lastSnapOffset }

// SetLastSnapshotOffset records that the latest snapshot on disk is at
// offset.
func (s *State) SetLastSnapshotOffset(offset int64) { s.lastSnapOffset = offset }

// Len returns the number of producers.
func (s *State) Len() int { return len(s.producers) }

// IsEmpty reports whether the state has no producers and no completed
// transactions waiting for the high watermark.
func (s *State) IsEmpty() bool { return len(s.producers) == 0 && len(s.unreplicated) == 0 }

// LastEntry returns producer id's state as a snapshot entry.
func (s *State) LastEntry(id int64) (Entry, bool) {
	e, ok := s.producers[id]
	if !ok {
		return Entry{}, false
	}
	return e.snapshotEntry(), true
}

// Batches returns the retained batches of producer id, oldest first.
func (s *State) Batches(id int64) []BatchMetadata {
	if e, ok := s.producers[id]; ok {
		return slices.Clone(e.batches)
	}
	return nil
}

// FindDuplicate returns the retained batch of b's producer with b's epoch
// and sequence range, if any: b is then a retry of a batch already in the
// log (ProducerStateEntry.findDuplicateBatch).
func (s *State) FindDuplicate(b BatchInfo) (BatchMetadata, bool) {
	e, ok := s.producers[b.ProducerID]
	if !ok || b.ProducerEpoch != e.epoch {
		return BatchMetadata{}, false
	}
	first, last := b.BaseSequence, b.LastSequence()
	for _, m := range e.batches {
		if m.FirstSeq() == first && m.LastSeq == last {
			return m, true
		}
	}
	return BatchMetadata{}, false
}

// Snapshot returns every producer's state as snapshot entries, in the
// order Kafka (3.5 and later) writes them: the iteration order of the
// java.util.HashMap its ProducerStateManager keeps them in, which
// javaOrder reproduces from the ids and the order they were added. So a
// state built from the same log as a broker's, or loaded from a snapshot
// it wrote, encodes to the same bytes. (Kafka 3.4 and earlier used a
// Scala map with another order; any order reads back the same.)
func (s *State) Snapshot() []Entry {
	es := make([]*producerEntry, 0, len(s.producers))
	for _, e := range s.producers {
		es = append(es, e)
	}
	s.order.sort(es)
	out := make([]Entry, len(es))
	for i, e := range es {
		out[i] = e.snapshotEntry()
	}
	return out
}

// Load replaces the state with the entries of a snapshot taken at offset,
// as ProducerStateManager.loadFromSnapshot does after clearing it: each
// entry becomes a producer (in file order; a later duplicate id replaces
// the earlier one), with its last batch if LastOffset ≥ 0, and its open
// transaction, if any, becomes ongoing. MapEndOffset and the last
// snapshot offset become offset. Kafka also drops producers that have
// expired; call RemoveExpiredProducers for that.
func (s *State) Load(entries []Entry, offset int64) {
	s.clear()
	for _, se := range entries {
		e := &producerEntry{
			id: se.ProducerID, epoch: se.Epoch, coordinatorEpoch: se.CoordinatorEpoch,
			lastTimestamp: se.Timestamp, currentTxnFirstOffset: NoTxn,
		}
		if se.LastOffset >= 0 {
			e.batches = []BatchMetadata{{LastSeq: se.LastSequence, LastOffset: se.LastOffset, OffsetDelta: se.OffsetDelta, Timestamp: se.Timestamp}}
		}
		if se.CurrentTxnFirstOffset >= 0 {
			e.currentTxnFirstOffset = se.CurrentTxnFirstOffset
			s.ongoing = insertTxn(s.ongoing, TxnMetadata{ProducerID: se.ProducerID, FirstOffset: se.CurrentTxnFirstOffset, LastOffset: -1})
		}
		if old, ok := s.producers[se.ProducerID]; ok {
			e.seq = old.seq // HashMap.put of an existing key keeps its place
			s.producers[se.ProducerID] = e
			continue
		}
		s.put(e)
	}
	s.mapEndOffset, s.lastSnapOffset = offset, offset
}

// TruncateFullyAndStartAt empties the state, which then starts at offset
// (ProducerStateManager.truncateFullyAndStartAt, without deleting the
// snapshot files, which is the caller's job).
func (s *State) TruncateFullyAndStartAt(offset int64) {
	s.clear()
	s.lastSnapOffset, s.mapEndOffset = 0, offset
}

// RemoveExpiredProducers removes the producers with no open transaction
// whose last timestamp is at least expirationMs before nowMs (Kafka's
// producer.id.expiration.ms, one day by default).
func (s *State) RemoveExpiredProducers(nowMs, expirationMs int64) {
	for id, e := range s.producers {
		if e.currentTxnFirstOffset == NoTxn && nowMs-e.lastTimestamp >= expirationMs {
			delete(s.producers, id)
			s.order.remove(id)
		}
	}
}

func (s *State) put(e *producerEntry) {
	e.seq = s.order.insert(e.id, s.producers)
	s.producers[e.id] = e
}

// clear empties the state; like HashMap.clear, it keeps the table size
// that decides the snapshot order.
func (s *State) clear() {
	clear(s.producers)
	s.order.clear()
	s.ongoing, s.unreplicated = s.ongoing[:0], s.unreplicated[:0]
}
