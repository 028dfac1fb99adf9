package compaction

import (
	"errors"
	"slices"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// Producer is an active producer as the cleaner sees it
// (UnifiedLog.lastRecordsOfActiveProducers): the batch holding its last
// data offset — or, when it has none, its last transaction marker of the
// same epoch — is kept, emptied if need be, so that its sequence numbers
// and epoch survive compaction.
type Producer struct {
	ProducerID int64
	Epoch      int16
	// LastDataOffset is the last offset of its last data batch, or -1.
	LastDataOffset int64
}

// producerView is the producer state a broker holds for the log when its
// cleaner runs: the state Kafka's LogLoader builds (the latest usable
// snapshot and the batches after it), minus the producers expired at now.
type producerView struct {
	active map[int64]Producer
	state  *producer.State
}

// segReader is the part of a segment the producer replay reads.
type segReader interface {
	BaseOffset() int64
	Size() int64
	ReadAt(p []byte, off int64) (int, error)
}

// loadProducers rebuilds the producer state as Kafka's LogLoader does
// (ProducerStateManager.removeStraySnapshots, truncateAndReload,
// UnifiedLog.rebuildProducerState), reading the snapshots in dir and
// replaying segs from the snapshot used to logEnd:
//
//   - snapshots not at a segment's base offset are strays: only the
//     largest is kept, and only if it is above every segment's base;
//   - after a clean shutdown with no snapshot left, Kafka skips the
//     rebuild: the state is empty;
//   - otherwise the latest snapshot in (logStart, logEnd] that decodes is
//     loaded, without the producers it holds that have expired at now,
//     and the batches from it to the log end are replayed;
//   - after an unclean shutdown, recovery leaves a snapshot at the log
//     end, which the state is loaded from: completed transactions are not
//     kept waiting for the high watermark.
//
// Then the producers expired at now go too, as the broker's periodic
// check (producer.id.expiration.check.interval.ms) would have removed
// them. expirationMs < 0 keeps every producer.
func loadProducers(fsys vfs.FS, dir string, segs []segReader, logStart, logEnd int64, cleanShutdown bool, now, expirationMs int64) (*producerView, error) {
	ps := producer.NewState()
	snaps, err := producer.ListSnapshots(fsys, dir)
	if err != nil {
		return nil, err
	}
	snaps = withoutStrays(snaps, segs)
	v := &producerView{state: ps}
	if len(snaps) == 0 && cleanShutdown {
		v.active = map[int64]Producer{}
		return v, nil
	}
	from := logStart
	for i := len(snaps) - 1; i >= 0; i-- {
		off := snaps[i]
		if off > logEnd || off <= logStart {
			continue
		}
		entries, err := producer.ReadSnapshot(fsys, dir, off)
		if err != nil {
			var ce *format.CorruptionError
			if errors.As(err, &ce) {
				continue // Kafka deletes it and tries the next older one
			}
			return nil, err
		}
		if expirationMs >= 0 {
			entries = slices.DeleteFunc(entries, func(e producer.Entry) bool {
				return e.CurrentTxnFirstOffset < 0 && now-e.Timestamp >= expirationMs
			})
		}
		ps.Load(entries, off)
		from = off
		break
	}
	if from < logEnd {
		if err := replay(ps, segs, from, logStart, logEnd); err != nil {
			return nil, err
		}
	}
	if !cleanShutdown {
		// Kafka's recovery takes a snapshot at the end of every segment it
		// recovers, the last one included, and the state is then loaded
		// from the one at the log end: a snapshot holds no completed
		// transaction, so none waits for the high watermark.
		ps.OnHighWatermarkUpdated(logEnd)
	}
	if expirationMs >= 0 {
		ps.RemoveExpiredProducers(now, expirationMs)
	}
	v.active = map[int64]Producer{}
	for _, e := range ps.Snapshot() {
		v.active[e.ProducerID] = Producer{ProducerID: e.ProducerID, Epoch: e.Epoch, LastDataOffset: e.LastOffset}
	}
	return v, nil
}

// withoutStrays drops the snapshots removeStraySnapshots deletes.
func withoutStrays(snaps []int64, segs []segReader) []int64 {
	if len(segs) == 0 {
		return snaps
	}
	bases := map[int64]bool{}
	maxBase := int64(-1)
	for _, s := range segs {
		bases[s.BaseOffset()] = true
		maxBase = max(maxBase, s.BaseOffset())
	}
	var out []int64
	stray := int64(-1)
	for _, off := range snaps {
		if bases[off] {
			out = append(out, off)
		} else {
			stray = off // the largest stray, in the end
		}
	}
	if stray >= 0 && stray >= maxBase {
		out = append(out, stray)
		slices.Sort(out)
	}
	return out
}

// replay applies the v2 batches with a producer id from offset from to
// logEnd, as LogLoader's rebuild does (batches from the first one whose
// last offset reaches max(segment base, from, logStart)).
func replay(ps *producer.State, segs []segReader, from, logStart, logEnd int64) error {
	var it record.Iterator
	var rs record.ReaderScanner
	for i, s := range segs {
		next := logEnd
		if i+1 < len(segs) {
			next = segs[i+1].BaseOffset()
		}
		if next <= from || s.BaseOffset() >= logEnd {
			continue
		}
		start := max(s.BaseOffset(), from, logStart)
		rs.Reset(readerAt{s}, s.Size(), "", 0)
		for rs.Next() {
			e := rs.Entry()
			if e.LastOffset() < start {
				continue
			}
			if e.LastOffset() >= logEnd {
				break
			}
			if e.Magic != record.MagicV2 || e.Batch.ProducerID < 0 {
				continue
			}
			info, err := producer.FromBatch(&e.Batch, &it)
			if err != nil {
				continue // not a marker: Kafka's replay would fail the load; the engine reports it
			}
			ps.Replay(info) // errors are the engine's to report; the state stays as Kafka's
		}
		if err := rs.Err(); err != nil {
			return err
		}
	}
	ps.UpdateMapEndOffset(logEnd)
	return nil
}

// readerAt adapts a segment to io.ReaderAt.
type readerAt struct{ s segReader }

func (r readerAt) ReadAt(p []byte, off int64) (int, error) { return r.s.ReadAt(p, off) }

var _ segReader = (*segment.Segment)(nil)
