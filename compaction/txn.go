package compaction

import (
	"cmp"
	"slices"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/record"
)

// txnState is Kafka's CleanedTransactionMetadata: the transactions the
// cleaner is inside of while it walks the log in offset order, fed with
// the aborted transactions of the segments it reads.
//
// A data batch of a producer whose aborted transaction has begun is
// discardable. An ABORT marker is kept (and its transaction re-recorded
// in the cleaned segment's .txnindex) while a batch of its transaction
// was seen in this pass; a COMMIT marker likewise. An empty control batch
// (a marker already emptied) is discardable.
type txnState struct {
	pending   []index.AbortedTxn // by FirstOffset: aborted transactions not begun yet
	aborted   map[int64]*abortedTxn
	committed map[int64]bool
	// cleaned, when set, receives the aborted transactions whose ABORT
	// marker is kept, for the cleaned segment's .txnindex.
	cleaned *[]index.AbortedTxn
}

type abortedTxn struct {
	txn  index.AbortedTxn
	seen bool // a batch of the transaction was read (lastObservedBatchOffset)
}

func newTxnState() *txnState {
	return &txnState{aborted: map[int64]*abortedTxn{}, committed: map[int64]bool{}}
}

// add queues aborted transactions (addAbortedTransactions).
func (t *txnState) add(txns []index.AbortedTxn) {
	if len(txns) == 0 {
		return
	}
	t.pending = append(t.pending, txns...)
	// A stable sort stands in for the priority queue: Kafka polls every
	// entry up to an offset at once, so only the order among equal first
	// offsets could differ, and equal first offsets are the same
	// transaction collected twice.
	slices.SortStableFunc(t.pending, func(a, b index.AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
}

// consumeUpTo begins the aborted transactions that start at or before
// offset (consumeAbortedTxnsUpTo).
func (t *txnState) consumeUpTo(offset int64) {
	n := 0
	for n < len(t.pending) && t.pending[n].FirstOffset <= offset {
		a := t.pending[n]
		if _, ok := t.aborted[a.ProducerID]; !ok {
			t.aborted[a.ProducerID] = &abortedTxn{txn: a}
		}
		n++
	}
	if n > 0 {
		t.pending = t.pending[n:]
	}
}

// onBatch is onBatchRead: it reports whether a data batch belongs to an
// aborted transaction.
func (t *txnState) onBatch(h *record.BatchHeader) bool {
	t.consumeUpTo(h.LastOffset())
	if !h.Attributes.IsTransactional() {
		return false
	}
	if a, ok := t.aborted[h.ProducerID]; ok {
		a.seen = true
		return true
	}
	t.committed[h.ProducerID] = true
	return false
}

// onControl is onControlBatchRead for a control batch whose first record
// has type typ (hasRecord false for an emptied batch): it reports whether
// the batch can be discarded.
func (t *txnState) onControl(h *record.BatchHeader, typ record.ControlType, hasRecord bool) bool {
	t.consumeUpTo(h.LastOffset())
	if !hasRecord {
		return true
	}
	switch typ {
	case record.ControlAbort:
		a, ok := t.aborted[h.ProducerID]
		delete(t.aborted, h.ProducerID)
		if ok && a.seen {
			if t.cleaned != nil {
				*t.cleaned = append(*t.cleaned, a.txn)
			}
			return false
		}
		return true
	case record.ControlCommit:
		seen := t.committed[h.ProducerID]
		delete(t.committed, h.ProducerID)
		return !seen
	}
	return false
}
