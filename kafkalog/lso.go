package kafkalog

import (
	"errors"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/record"
)

// lsoFetchBytes is how much ReplayLastStableOffset reads at a time.
const lsoFetchBytes = 1 << 20

// ReplayLastStableOffset returns the last stable offset at the offset hw
// (a high watermark): the first offset of the earliest transaction still
// open at hw, or hw. A read-only Log does not rebuild its producer state,
// so its LastStableOffset is its high watermark; this is what a reader of
// one uses instead. It takes the newest producer snapshot at or below hw
// that decodes (which records each producer's open transaction; a damaged
// one is skipped, as Kafka skips it) and replays the batches from there to
// hw: a transactional batch opens its producer's transaction, its marker
// closes it. With no such snapshot it replays from the log start offset.
func (l *Log) ReplayLastStableOffset(hw int64) (int64, error) {
	fsys, dir := l.fsys, l.dir
	start := l.LogStartOffset()
	open := map[int64]int64{} // producer ID → first offset of its open transaction
	from := start
	snaps, err := producer.ListSnapshots(fsys, dir)
	if err != nil {
		return 0, err
	}
	for i := len(snaps) - 1; i >= 0; i-- {
		off := snaps[i]
		if off > hw || off < start {
			continue
		}
		entries, err := producer.ReadSnapshot(fsys, dir, off)
		if err != nil {
			var ce *format.CorruptionError
			if errors.As(err, &ce) {
				continue // as Kafka: try the next older one
			}
			return 0, err
		}
		for _, e := range entries {
			if e.CurrentTxnFirstOffset >= 0 {
				open[e.ProducerID] = e.CurrentTxnFirstOffset
			}
		}
		from = off
		break
	}
	var (
		buf []byte
		s   record.Scanner
	)
	for next := from; next < hw; {
		res, err := l.Read(next, lsoFetchBytes, buf[:0], ReadOptions{Isolation: IsolationHighWatermark})
		if err != nil {
			return 0, err
		}
		if len(res.Records) == 0 {
			break
		}
		buf = res.Records
		before := next
		s.Reset(res.Records, "", 0)
		for s.Next() {
			e := s.Entry()
			next = max(next, e.LastOffset()+1)
			if e.Magic != record.MagicV2 || e.BaseOffset() >= hw {
				continue
			}
			h := &e.Batch.BatchHeader
			if h.ProducerID == record.NoProducerID || !h.Attributes.IsTransactional() {
				continue
			}
			if h.Attributes.IsControl() {
				delete(open, h.ProducerID) // its marker ends the transaction
			} else if _, ok := open[h.ProducerID]; !ok {
				open[h.ProducerID] = h.BaseOffset
			}
		}
		if err := s.Err(); err != nil {
			return 0, err
		}
		if next == before {
			break
		}
	}
	lso := hw
	for _, first := range open {
		lso = min(lso, first)
	}
	return lso, nil
}
