package inspect

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/resync"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/vfs"
)

// This file checks the partition's state files against its log: the
// producer snapshots and the leader-epoch-checkpoint.

// readSnapshots decodes every producer snapshot of p; the ones that decode
// are compared with the replayed state as the log is read. clean says
// whether the log directory has a clean-shutdown marker.
func (v *verifier) readSnapshots(p *partition, clean bool) error {
	kept := p.snaps[:0]
	for i, off := range p.snaps {
		file := path.Join(p.dir, producer.SnapshotFileName(off))
		entries, err := producer.ReadSnapshot(v.fsys, p.dir, off)
		if err != nil {
			var ce *format.CorruptionError
			if !errors.As(err, &ce) {
				return err
			}
			kind := finding.KindSnapshotCorrupt
			if errors.Is(err, format.ErrCRC) {
				kind = finding.KindSnapshotCRC
			}
			// The newest snapshot of a log without a clean shutdown may be
			// the one a writer was writing when it was killed (Kafka, like
			// segkit, writes it in place): a crash artefact, as a torn tail
			// is, that the load repairs without loss.
			level, note := finding.Error, ""
			if !clean && i == len(p.snaps)-1 {
				level, note = finding.Warning, " (the newest snapshot after an unclean shutdown: a crash while it was written leaves it so)"
			}
			p.add(file, ce.Offset, kind, level, "%s; Kafka deletes it and rebuilds the producer state from an older snapshot or the log%s", resync.Describe(err), note)
			continue
		}
		p.snapEntries[off] = entries
		kept = append(kept, off)
	}
	p.snaps = kept
	return nil
}

// compareSnapshot compares the snapshot at offset off with the producer
// state replayed from the log so far (every batch below off).
//
// The replay starts from an empty state at the log's first entry. A
// snapshot entry whose last batch is below that is history the log no
// longer holds, and is skipped. For the others the fields a producer's last
// batch determines (epoch, last sequence, last offset, offset delta,
// timestamp) must match; the coordinator epoch and the open transaction
// depend on older markers, and are compared only when the log reaches back
// to offset 0 and is not compacted.
func (v *verifier) compareSnapshot(p *partition, off int64) {
	entries, ok := p.snapEntries[off]
	if !ok {
		return
	}
	file := path.Join(p.dir, producer.SnapshotFileName(off))
	inSnap := make(map[int64]bool, len(entries))
	for i, e := range entries {
		inSnap[e.ProducerID] = true
		pos := int64(producer.SnapshotHeaderSize + i*producer.EntrySize)
		if !p.full && (p.replayFrom < 0 || e.LastOffset < p.replayFrom) {
			continue
		}
		r, ok := p.ps.LastEntry(e.ProducerID)
		if !ok {
			p.add(file, pos, finding.KindSnapshotMismatch, finding.Error,
				"producer %d (last offset %d, epoch %d) is in the snapshot, but the log below offset %d has no batch of it", e.ProducerID, e.LastOffset, e.Epoch, off)
			continue
		}
		var diffs []string
		diff := func(name string, got, want int64) {
			if got != want {
				diffs = append(diffs, fmt.Sprintf("%s %d, replayed %d", name, got, want))
			}
		}
		diff("epoch", int64(e.Epoch), int64(r.Epoch))
		diff("lastSequence", int64(e.LastSequence), int64(r.LastSequence))
		diff("lastOffset", e.LastOffset, r.LastOffset)
		diff("offsetDelta", int64(e.OffsetDelta), int64(r.OffsetDelta))
		diff("timestamp", e.Timestamp, r.Timestamp)
		if p.full {
			diff("coordinatorEpoch", int64(e.CoordinatorEpoch), int64(r.CoordinatorEpoch))
			diff("currentTxnFirstOffset", e.CurrentTxnFirstOffset, r.CurrentTxnFirstOffset)
		}
		if len(diffs) > 0 {
			p.add(file, pos, finding.KindSnapshotMismatch, finding.Error, "producer %d: snapshot has %s (replaying the log below offset %d)", e.ProducerID, strings.Join(diffs, ", "), off)
		}
	}
	for _, r := range p.ps.Snapshot() {
		if !inSnap[r.ProducerID] {
			p.add(file, -1, finding.KindSnapshotProducerAbsent, finding.Info,
				"producer %d (last batch at offset %d, timestamp %s) is in the log below offset %d but not in the snapshot: it expired (producer.id.expiration.ms), or the snapshot missed it", r.ProducerID, r.LastOffset, finding.Timestamp(r.Timestamp), off)
		}
	}
}

// readEpochs reads the leader-epoch-checkpoint: its entries, the byte
// position of each entry's line, and the file's path; nil entries when it
// is missing or does not parse (reported).
func (v *verifier) readEpochs(p *partition) ([]checkpoint.EpochEntry, []int64, string) {
	file := path.Join(p.dir, checkpoint.LeaderEpochFile)
	b, err := vfs.ReadFile(v.fsys, file)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			p.add(file, -1, finding.KindEpochCorrupt, finding.Error, "%v", err)
			return nil, nil, ""
		}
		return nil, nil, file
	}
	entries, err := checkpoint.ParseLeaderEpochs(b)
	if err != nil {
		p.add(file, resync.CorruptionOffset(err, -1), finding.KindEpochCorrupt, finding.Error, "%s (Kafka fails the log directory on it)", resync.Describe(err))
		return nil, nil, ""
	}
	lines := lineStarts(b)
	pos := make([]int64, len(entries))
	for i := range entries {
		pos[i] = -1
		if i+2 < len(lines) {
			pos[i] = lines[i+2]
		}
	}
	for i := 1; i < len(entries); i++ {
		if entries[i].Epoch <= entries[i-1].Epoch || entries[i].StartOffset <= entries[i-1].StartOffset {
			p.add(file, pos[i], finding.KindEpochOrder, finding.Error, "entry %v follows %v: epochs and start offsets must strictly increase", entries[i], entries[i-1])
		}
	}
	if entries == nil {
		entries = []checkpoint.EpochEntry{}
	}
	return entries, pos, file
}

// checkEpochs checks that the checkpoint maps every batch's offset to the
// batch's partitionLeaderEpoch (each epoch's start offset is the first
// batch of that epoch), and that no entry starts past the log end.
func (v *verifier) checkEpochs(p *partition, entries []checkpoint.EpochEntry, pos []int64, file string, leo int64) {
	if file == "" {
		return
	}
	if entries == nil {
		if len(p.epochRuns) > 0 {
			p.add(file, -1, finding.KindEpochMissing, finding.Warning,
				"no leader-epoch-checkpoint, but batches carry leader epochs (the first, %d, at offset %d): Kafka rebuilds it only for the segments it recovers", p.epochRuns[0].epoch, p.epochRuns[0].firstBase)
		}
		return
	}
	if len(entries) == 0 {
		if len(p.epochRuns) > 0 {
			p.add(file, -1, finding.KindEpochMissing, finding.Warning,
				"the leader-epoch-checkpoint is empty, but batches carry leader epochs (the first, %d, at offset %d)", p.epochRuns[0].epoch, p.epochRuns[0].firstBase)
		}
		return
	}
	for i, e := range entries {
		if e.StartOffset > leo {
			p.add(file, pos[i], finding.KindEpochMismatch, finding.Error, "entry %v starts past the log end offset %d", e, leo)
		}
	}
	// epochFor is EpochForOffset over the file's entries, in file order:
	// the index of the entry offset belongs to, -1 before the first.
	epochFor := func(off int64) int {
		return sort.Search(len(entries), func(i int) bool { return entries[i].StartOffset > off }) - 1
	}
	start := p.rep.LogStartOffset
	for _, r := range p.epochRuns {
		if r.lastBase < start {
			continue
		}
		first := max(r.firstBase, start)
		k := slices.IndexFunc(entries, func(e checkpoint.EpochEntry) bool { return e.Epoch == r.epoch })
		i, j := epochFor(first), epochFor(r.lastBase)
		switch {
		case k < 0:
			at := pos[0]
			if i >= 0 {
				at = pos[i]
			}
			p.add(file, at, finding.KindEpochMismatch, finding.Error,
				"the batches from offset %d (%s:%d) have leader epoch %d, which the checkpoint does not list: a follower asking for that epoch's end offset gets a wrong answer", first, r.file, r.pos, r.epoch)
		case i != k:
			p.add(file, pos[k], finding.KindEpochMismatch, finding.Error,
				"entry %v: the batch at offset %d (%s:%d) already has leader epoch %d", entries[k], first, r.file, r.pos, r.epoch)
		case j != k:
			p.add(file, pos[j], finding.KindEpochMismatch, finding.Error,
				"entry %v starts inside the batches of leader epoch %d (offsets %d..%d, from %s:%d)", entries[j], r.epoch, first, r.lastBase, r.file, r.pos)
		}
	}
}
