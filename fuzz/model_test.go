package fuzz

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"github.com/segkit/segkit/record"
)

// mrec is one record of the reference model.
type mrec struct {
	off, ts  int64
	key, val []byte // nil: null
	hdrs     []record.Header
}

func (r *mrec) equal(o *mrec) bool {
	if r.off != o.off || r.ts != o.ts || !bytesEqualNull(r.key, o.key) || !bytesEqualNull(r.val, o.val) || len(r.hdrs) != len(o.hdrs) {
		return false
	}
	for i := range r.hdrs {
		if !bytes.Equal(r.hdrs[i].Key, o.hdrs[i].Key) || !bytesEqualNull(r.hdrs[i].Value, o.hdrs[i].Value) {
			return false
		}
	}
	return true
}

func (r *mrec) String() string {
	return fmt.Sprintf("{off %d ts %d key %q val %d bytes, %d headers}", r.off, r.ts, r.key, len(r.val), len(r.hdrs))
}

func bytesEqualNull(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// mbatch is one batch of the model: its exact bytes in the log and its
// records.
type mbatch struct {
	base, last int64
	maxTs      int64
	raw        []byte
	recs       []mrec
	// appendLast is the last offset of the append that wrote this batch
	// when the batch came first in a multi-batch follower append (the
	// offset index may then hold appendLast at this batch's position);
	// otherwise it equals last.
	appendLast int64
	control    bool
	abort      bool // an ABORT marker
	txn        bool
	pid        int64
}

// model is the reference partition: the batches physically in the log
// (from the first segment's base offset), the offsets, and what the log
// promised to keep across a crash.
type model struct {
	batches []*mbatch
	lso     int64
	leo     int64
	// durable is the highest recovery point the log reported, lowered by
	// truncation: every record below it must survive a crash.
	durable int64
	// cand holds, for each offset, every record ever given to the log
	// there (acknowledged or not, truncated or not): after a crash, a
	// record read at an offset must be one of them.
	cand map[int64][]mrec
	// txnLost is set once retention deleted a transactional or control
	// batch: the model no longer knows every transaction.
	txnLost bool
}

// firstUnstable returns the first offset of the earliest open
// transaction (MaxInt64 when none), replaying the batches as the
// engine's producer state does, and false when the model cannot know it:
// a transaction's batches were deleted, or transactional batches lie
// below the log start offset (from which the engine rebuilds its producer
// state after a truncation, as Kafka does).
//
// A transaction whose marker lies at or above the high watermark hw is
// complete but not yet replicated: it holds the last stable offset back
// until the high watermark passes the marker (Kafka's
// ProducerStateManager.onHighWatermarkUpdated). Whether the engine still
// remembers it depends on history (a reopen or truncation rebuilds
// producer state from a snapshot, which forgets completed transactions),
// so unreplicated reports that one exists and first is only a bound.
func (m *model) firstUnstable(hw int64) (first int64, known, unreplicated bool) {
	if m.txnLost {
		return 0, false, false
	}
	open := map[int64]int64{}
	for _, b := range m.batches {
		if b.base < m.lso && (b.txn || b.control) {
			return 0, false, false
		}
		if b.control {
			if _, ok := open[b.pid]; ok && b.base >= hw {
				unreplicated = true
			}
			delete(open, b.pid)
		} else if _, ok := open[b.pid]; b.txn && !ok {
			open[b.pid] = b.base
		}
	}
	first = math.MaxInt64
	for _, o := range open {
		first = min(first, o)
	}
	return first, true, unreplicated
}

func newModel() model { return model{cand: map[int64][]mrec{}} }

func (m *model) addCandidates(b *mbatch) {
	for i := range b.recs {
		r := b.recs[i]
		if !m.isCandidate(&r) {
			m.cand[r.off] = append(m.cand[r.off], r)
		}
	}
}

func (m *model) isCandidate(r *mrec) bool {
	return slices.ContainsFunc(m.cand[r.off], func(c mrec) bool { return r.equal(&c) })
}

// visible returns the records readers see: offsets from the log start.
func (m *model) visible() []mrec {
	var out []mrec
	for _, b := range m.batches {
		if b.last < m.lso {
			continue
		}
		for _, r := range b.recs {
			if r.off >= m.lso {
				out = append(out, r)
			}
		}
	}
	return out
}

// batchesIn returns the model's batches whose base lies in [from, to).
func (m *model) batchesIn(from, to int64) []*mbatch {
	var out []*mbatch
	for _, b := range m.batches {
		if b.base >= from && b.base < to {
			out = append(out, b)
		}
	}
	return out
}

// decodeBatch reads one whole v2 batch and copies its records out.
func decodeBatch(raw []byte, it *record.Iterator) (*mbatch, error) {
	b, rest, err := record.ReadBatch(raw)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%d bytes after the batch", len(rest))
	}
	if err := it.Validate(&b); err != nil {
		return nil, err
	}
	mb := &mbatch{base: b.BaseOffset, last: b.LastOffset(), maxTs: b.MaxTimestamp, raw: slices.Clone(raw),
		control: b.Attributes.IsControl(), txn: b.Attributes.IsTransactional(), pid: b.ProducerID}
	mb.appendLast = mb.last
	var r record.Record
	it.Reset(&b)
	for it.Next(&r) {
		mr := mrec{off: r.Offset, ts: r.Timestamp, key: cloneNull(r.Key), val: cloneNull(r.Value)}
		for _, h := range r.Headers {
			mr.hdrs = append(mr.hdrs, record.Header{Key: slices.Clone(h.Key), Value: cloneNull(h.Value)})
		}
		if mb.control {
			if m, err := record.ParseEndTxnMarker(r.Key, r.Value); err == nil && m.Type == record.ControlAbort {
				mb.abort = true
			}
		}
		mb.recs = append(mb.recs, mr)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return mb, nil
}

func cloneNull(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}
