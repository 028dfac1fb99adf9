package kafkalog

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"path"
	"sort"
	"strings"

	"github.com/segkit/segkit/finding"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// LoadReport says what Open found in the directory and what it did.
type LoadReport struct {
	// CleanShutdown is true when the log directory had Kafka's
	// clean-shutdown marker: recovery was skipped.
	CleanShutdown bool
	// RecoveryPoint is the checkpointed recovery point (0 if none).
	RecoveryPoint int64
	// Deleted lists the leftover files Open removed: .deleted files,
	// .cleaned files, incomplete .swap files, orphan indexes, segments
	// dropped after a truncating recovery, and every segment of a log that
	// ends below its checkpointed log start offset (not the files a
	// completed swap replaced: see Replaced).
	Deleted []string
	// Renamed lists .swap files completed into their normal names.
	Renamed []string
	// Replaced lists the files a completed .swap replaced: those of the
	// segments whose base offsets fall in the range the swap covers (a
	// compaction's output takes their place; nothing was truncated).
	Replaced []string
	// Recovered lists the segments that were recovered and what recovery
	// cut from each.
	Recovered []RecoveredSegment
	// Resolved lists what Open did with the timeline's instants that an
	// earlier run left pending (Options.Timeline), oldest first.
	Resolved []Resolution
	// Problems lists what could not be trusted but did not stop loading
	// (an unreadable checkpoint, a corrupt snapshot, a batch the producer
	// state refused), each a finding.Warning naming the file and, where
	// it is about one batch, the batch's byte position.
	Problems []finding.Problem
}

// RecoveredSegment is the outcome of recovering one segment.
type RecoveredSegment struct {
	BaseOffset int64
	// Reason for recovering: "unclean shutdown", "missing index",
	// "missing time index", "sanity check: ...", or, with
	// Options.ForceRecovery, "forced, after a clean shutdown" in a log
	// directory with the clean-shutdown marker and "forced, below the
	// recovery point" for a segment an unclean load would have skipped.
	Why    string
	Result segment.RecoverResult
}

// Open opens the partition directory dir on fsys, creating it if needed,
// as Kafka's LogLoader does:
//
//  1. .deleted files are removed; .cleaned and .swap leftovers of an
//     interrupted compaction are resolved (incomplete swaps dropped,
//     complete ones renamed into place, replacing the segments they cover).
//  2. Index files without a .log are removed as orphans.
//  3. Each segment is opened; indexes load lazily. A segment without its
//     .index is recovered.
//  4. Without the log directory's clean-shutdown marker, every segment
//     from the checkpointed recovery point on is recovered: entries are
//     validated, a torn or corrupt tail is truncated, indexes are rebuilt,
//     and after a truncation the later segments are deleted.
//  5. The log start offset comes from the log directory's checkpoint (or
//     the first segment), the leader epoch cache and producer state from
//     their files, rebuilt where needed.
//
// The recovery point and log start offset are read from the parent
// directory's checkpoint files, as a broker keeps them per log directory.
//
// A writable Open first locks the partition (LockPartition: the log
// directory's .lock, unless Options.Locked), and fails with a *LockError
// if a broker or another writer holds it. Without Options.TruncateCorrupt
// it truncates only what is proved torn, and fails with a
// *CorruptLogError on corruption.
func Open(fsys vfs.FS, dir string, cfg Config, opt Options) (*Log, error) {
	if err := cfg.Validate(); err != nil {
		// A log opened with a config ParseConfig accepted under relaxed
		// options must still be structurally usable.
		if cfg.SegmentBytes < record.MinLegacyEntrySize || cfg.SegmentIndexBytes < 8 {
			return nil, err
		}
	}
	l := &Log{fsys: fsys, dir: path.Clean(dir), cfg: cfg, opt: opt, clock: opt.Clock, rng: opt.Rand}
	if l.clock == nil {
		l.clock = segment.SystemClock{}
	}
	if l.rng == nil {
		l.rng = rand.New(rand.NewPCG(uint64(len(dir)), 0x5e9))
	}
	if tp, err := checkpoint.ParseDirName(path.Base(l.dir)); err == nil {
		l.tp = tp
	} else {
		l.tp = checkpoint.TopicPartition{Topic: path.Base(l.dir), Partition: -1}
	}
	if !opt.ReadOnly {
		// The log directory's lock comes before any write to it (the
		// directory itself may have to be created first, which no other
		// writer can have locked).
		if !opt.Locked {
			if err := mkdirDurable(fsys, l.parentDir()); err != nil {
				return nil, err
			}
			lk, err := LockPartition(fsys, l.dir)
			if err != nil {
				return nil, err
			}
			l.dirLock = lk
		}
		if err := mkdirDurable(fsys, l.dir); err != nil {
			l.unlockDir()
			return nil, err
		}
	}
	if err := l.openTimeline(); err != nil {
		l.unlockDir()
		return nil, err
	}
	if err := l.loadAll(); err != nil {
		l.closeSegments()
		l.unlockDir()
		return nil, err
	}
	if err := l.afterLoad(); err != nil {
		l.closeSegments()
		l.unlockDir()
		return nil, err
	}
	l.lastFlushMs = l.nowMs()
	return l, nil
}

func (l *Log) loadAll() error {
	// Per-log-dir state: the clean-shutdown marker and the checkpoints.
	clean, _, err := checkpoint.ReadCleanShutdown(l.fsys, l.parentDir())
	if err != nil {
		l.loadProblem(path.Join(l.parentDir(), checkpoint.CleanShutdownFile), -1, finding.KindCheckpointCorrupt, "%v (treated as unclean)", err)
		clean = false
	}
	l.load.CleanShutdown = clean
	recoveryPoint := int64(0)
	if m, err := checkpoint.ReadOffsets(l.fsys, path.Join(l.parentDir(), checkpoint.RecoveryPointFile)); err == nil {
		recoveryPoint = m[l.tp]
	} else if !errors.Is(err, fs.ErrNotExist) {
		l.loadProblem(path.Join(l.parentDir(), checkpoint.RecoveryPointFile), -1, finding.KindCheckpointCorrupt, "%v (recovering from 0)", err)
		clean = false
	}
	l.load.RecoveryPoint = recoveryPoint
	if !l.opt.ReadOnly && l.load.CleanShutdown {
		// From the first write on, the directory is no longer cleanly shut
		// down (C9): the marker goes, durably, before anything else is
		// touched — recovery included — so that a crash during Open never
		// leaves half-written files under a marker that says to trust them.
		if err := checkpoint.RemoveCleanShutdown(l.fsys, l.parentDir()); err != nil {
			return err
		}
	}
	if l.opt.ForceRecovery {
		clean, recoveryPoint = false, 0
		// Likewise the recovery point: segments below it are about to be
		// rewritten, so a crash must make the next Open recover them too.
		if err := l.lowerRecoveryPoint(0); err != nil {
			return err
		}
	}
	checkpointedStart := int64(0)
	if m, err := checkpoint.ReadOffsets(l.fsys, path.Join(l.parentDir(), checkpoint.LogStartOffsetFile)); err == nil {
		checkpointedStart = m[l.tp]
	} else if !errors.Is(err, fs.ErrNotExist) {
		l.loadProblem(path.Join(l.parentDir(), checkpoint.LogStartOffsetFile), -1, finding.KindCheckpointCorrupt, "%v (log start offset from the segments)", err)
	}

	epochPath := path.Join(l.dir, checkpoint.LeaderEpochFile)
	epochs, err := checkpoint.LoadLeaderEpochCache(l.fsys, epochPath)
	if err != nil {
		l.loadProblem(epochPath, -1, finding.KindEpochCorrupt, "%v (rebuilt from the batches)", err)
		epochs = checkpoint.NewLeaderEpochCache()
		clean = false // rebuild it by recovering
		recoveryPoint = 0
	}
	l.epochs = epochs
	l.producers = producer.NewState()

	if err := l.loadSegmentFiles(clean, recoveryPoint); err != nil {
		return err
	}
	if len(l.segs) == 0 {
		if l.opt.ReadOnly {
			return fmt.Errorf("log: %s holds no segment", l.dir)
		}
		s, err := segment.Create(l.fsys, l.dir, checkpointedStart, l.segConfig(), l.clock)
		if err != nil {
			return err
		}
		l.segs = []*segment.Segment{s}
		if err := vfs.SyncDir(l.fsys, l.dir); err != nil {
			return err
		}
	}
	next, err := l.segs[len(l.segs)-1].ReadNextOffset()
	if err != nil {
		return err
	}
	l.nextOffset = next
	// If every record is below the checkpointed start (retention moved it
	// and crashed before deleting), the segments go and the log restarts
	// at the checkpointed offset (deleteSegmentsIfLogStartGreaterThanLogEnd).
	if checkpointedStart > l.nextOffset && !l.opt.ReadOnly {
		var doomed []string
		for _, s := range l.segs {
			if d := l.opt.BeforeDiscard; d != nil {
				if err := d(s.LogPath(), 0); err != nil {
					return err
				}
			}
			doomed = append(doomed, path.Base(s.LogPath()))
		}
		if err := l.truncateFullyAndStartAt(checkpointedStart); err != nil {
			return err
		}
		l.load.Deleted = append(l.load.Deleted, doomed...)
	}
	l.logStartOffset = max(checkpointedStart, l.segs[0].BaseOffset())
	if l.logStartOffset > l.nextOffset {
		l.logStartOffset = l.nextOffset
	}
	l.highWatermark = l.nextOffset
	if clean {
		l.recoveryPoint = l.nextOffset
	} else {
		l.recoveryPoint = min(recoveryPoint, l.nextOffset)
	}
	if l.opt.ReadOnly {
		return nil
	}
	l.epochs.TruncateFromEnd(l.nextOffset)
	l.epochs.TruncateFromStart(l.logStartOffset)
	if err := l.epochs.Flush(l.fsys, epochPath); err != nil {
		return err
	}
	l.epochsDirty = false
	if err := l.rebuildProducerState(); err != nil {
		return err
	}
	// The active segment's indexes get their preallocated size back.
	if err := l.segs[len(l.segs)-1].ResizeIndexes(int(l.cfg.SegmentIndexBytes)); err != nil {
		return err
	}
	return nil
}

// lowerRecoveryPoint lowers this partition's entry in the log directory's
// recovery-point checkpoint to offset, durably, if it is above it: done
// before rewriting segments below the checkpointed point, so that a crash
// in the middle makes the next Open recover them again.
func (l *Log) lowerRecoveryPoint(offset int64) error {
	p := path.Join(l.parentDir(), checkpoint.RecoveryPointFile)
	m, err := checkpoint.ReadOffsets(l.fsys, p)
	if err != nil {
		return nil // none, or corrupt: recovery starts from 0 anyway
	}
	if rp, ok := m[l.tp]; !ok || rp <= offset {
		return nil
	}
	m[l.tp] = offset
	return checkpoint.WriteOffsets(l.fsys, p, m)
}

// dirEntry is a file of the partition directory, parsed.
type dirEntry struct {
	name string
	base int64
	ext  string // ".log", ".index.swap", ...
}

// loadSegmentFiles runs the load state machine over the directory.
func (l *Log) loadSegmentFiles(clean bool, recoveryPoint int64) error {
	infos, err := vfs.ReadDir(l.fsys, l.dir)
	if err != nil {
		if l.opt.ReadOnly && errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return err
	}
	var files []dirEntry
	minCleaned := int64(math.MaxInt64)
	for _, fi := range infos {
		if fi.IsDir() {
			continue
		}
		base, ext, err := segment.ParseFileName(fi.Name())
		if err != nil {
			continue // checkpoints, partition.metadata, KRaft snapshots ...
		}
		files = append(files, dirEntry{fi.Name(), base, ext})
		if strings.HasSuffix(ext, segment.CleanedSuffix) && base < minCleaned {
			minCleaned = base
		}
	}
	remove := func(name string) error {
		if l.opt.ReadOnly {
			return nil
		}
		if err := l.fsys.Remove(path.Join(l.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		l.load.Deleted = append(l.load.Deleted, name)
		return nil
	}

	// Step 1 and 2: .deleted go; .swap at or above the smallest .cleaned
	// (an incomplete split) go; all .cleaned go.
	var kept, swaps []dirEntry
	for _, f := range files {
		switch {
		case strings.HasSuffix(f.ext, segment.DeletedSuffix):
			if err := remove(f.name); err != nil {
				return err
			}
		case strings.HasSuffix(f.ext, segment.CleanedSuffix):
			if err := remove(f.name); err != nil {
				return err
			}
		case strings.HasSuffix(f.ext, segment.SwapSuffix):
			if f.base >= minCleaned {
				if err := remove(f.name); err != nil {
					return err
				}
			} else {
				swaps = append(swaps, f)
			}
		default:
			kept = append(kept, f)
		}
	}

	// Step 3 and 4: each .swap log covers [base, next offset); the normal
	// files in that range are replaced, then the .swap suffix is dropped.
	if len(swaps) > 0 && !l.opt.ReadOnly {
		if kept, err = l.completeSwaps(swaps, kept); err != nil {
			return err
		}
	}

	// Step 5: orphan indexes go; segments load in order.
	logs := map[int64]bool{}
	for _, f := range kept {
		if f.ext == segment.LogSuffix {
			logs[f.base] = true
		}
	}
	hasIndex := map[int64]bool{}
	hasTimeIndex := map[int64]bool{}
	for _, f := range kept {
		switch f.ext {
		case segment.IndexSuffix, segment.TimeIndexSuffix, segment.TxnIndexSuffix:
			if !logs[f.base] {
				if err := remove(f.name); err != nil {
					return err
				}
				continue
			}
			if f.ext == segment.IndexSuffix {
				hasIndex[f.base] = true
			}
			if f.ext == segment.TimeIndexSuffix {
				hasTimeIndex[f.base] = true
			}
		}
	}
	bases := make([]int64, 0, len(logs))
	for b := range logs {
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	var cur producerCursor // the producer state of the segments recovered here
	for _, b := range bases {
		s, err := segment.Open(l.fsys, l.dir, b, l.segConfig(), segment.OpenOptions{Clock: l.clock, ReadOnly: l.opt.ReadOnly})
		if err != nil {
			return err
		}
		l.segs = append(l.segs, s)
		if l.opt.ReadOnly {
			continue
		}
		// LogSegment.sanityCheck's NoSuchFileException: recover. A
		// missing .timeindex beside a non-empty .log is rebuilt too, where
		// Kafka (for segments older than 0.10) starts an empty one: renames
		// in one directory are unordered until it is synced, so a crash
		// while a segment was being deleted can take its .timeindex alone,
		// and an empty time index would hide its timestamps from
		// retention and from lookups by timestamp.
		reason := ""
		switch {
		case !hasIndex[b]:
			reason = "missing index"
		case !hasTimeIndex[b] && s.Size() > 0:
			reason = "missing time index"
		}
		if reason != "" {
			if err := l.lowerRecoveryPoint(b); err != nil {
				return err
			}
			if err := l.recoverSegment(s, len(l.segs)-1, reason, &cur); err != nil {
				return err
			}
			continue
		}
		if err := s.SanityCheck(!hasTimeIndex[b]); err != nil {
			if err := l.lowerRecoveryPoint(b); err != nil {
				return err
			}
			if err := l.recoverSegment(s, len(l.segs)-1, fmt.Sprintf("sanity check: %v", err), &cur); err != nil {
				return err
			}
		}
	}
	if l.opt.ReadOnly || clean {
		return nil
	}
	return l.recoverLog(recoveryPoint)
}

// completeSwaps finishes an interrupted segment replacement.
func (l *Log) completeSwaps(swaps, kept []dirEntry) ([]dirEntry, error) {
	for _, sw := range swaps {
		if sw.ext != segment.LogSuffix+segment.SwapSuffix {
			continue
		}
		// Read-only: reading the swap's next offset must not create (and
		// leave behind, preallocated) index files of its own.
		s, err := segment.Open(l.fsys, l.dir, sw.base, l.segConfig(), segment.OpenOptions{Suffix: segment.SwapSuffix, Clock: l.clock, ReadOnly: true})
		if err != nil {
			return nil, err
		}
		next, err := s.ReadNextOffset()
		if err != nil {
			s.CloseHandlers()
			return nil, err
		}
		if err := s.CloseHandlers(); err != nil {
			return nil, err
		}
		// Delete the normal files whose base falls in the swap's range.
		var out []dirEntry
		for _, f := range kept {
			if f.base >= sw.base && f.base < next {
				if err := l.fsys.Remove(path.Join(l.dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return nil, err
				}
				l.load.Replaced = append(l.load.Replaced, f.name)
				continue
			}
			out = append(out, f)
		}
		kept = out
	}
	for _, sw := range swaps {
		to := strings.TrimSuffix(sw.name, segment.SwapSuffix)
		if err := l.fsys.Rename(path.Join(l.dir, sw.name), path.Join(l.dir, to)); err != nil {
			return nil, err
		}
		l.load.Renamed = append(l.load.Renamed, sw.name)
		kept = append(kept, dirEntry{to, sw.base, strings.TrimSuffix(sw.ext, segment.SwapSuffix)})
	}
	if err := vfs.SyncDir(l.fsys, l.dir); err != nil {
		return nil, err
	}
	return kept, nil
}

// recoverLog recovers the segments from the one holding the recovery
// point on (LogLoader.recoverLog). The first segment that loses bytes
// stops it: every later segment was written after the hole and is
// deleted, so that no record after a hole is ever served.
func (l *Log) recoverLog(recoveryPoint int64) error {
	start := max(l.floorSegment(recoveryPoint), 0)
	// A segment loadSegmentFiles recovered in this load (a missing index,
	// a failed sanity check) holds only valid entries now, with its
	// indexes, transaction index and epochs rebuilt from them: recovering
	// it again (as Kafka's LogLoader does) would read it twice more to cut
	// nothing and rebuild the same. It is reported for this reason too,
	// with what that recovery would have found: every entry valid.
	recovered := map[int64]segment.RecoverResult{}
	for _, r := range l.load.Recovered {
		recovered[r.BaseOffset] = r.Result
	}
	var cur producerCursor
	for i := start; i < len(l.segs); i++ {
		s := l.segs[i]
		if prev, ok := recovered[s.BaseOffset()]; ok {
			l.load.Recovered = append(l.load.Recovered, RecoveredSegment{BaseOffset: s.BaseOffset(), Why: l.recoveryReason(s),
				Result: segment.RecoverResult{ValidBytes: prev.ValidBytes, Entries: prev.Entries, NextOffset: prev.NextOffset}})
			continue
		}
		res, err := l.recoverSegmentResult(s, i, l.recoveryReason(s), l.segs[i+1:], &cur)
		if err != nil {
			return err
		}
		if res.Truncated > 0 && i+1 < len(l.segs) {
			later := append([]*segment.Segment(nil), l.segs[i+1:]...)
			l.segs = l.segs[:i+1]
			for _, d := range later {
				l.load.Deleted = append(l.load.Deleted, path.Base(d.LogPath()))
				if err := d.DeleteIfExists(); err != nil {
					return err
				}
			}
			break
		}
	}
	return vfs.SyncDir(l.fsys, l.dir)
}

// recoveryReason says why recoverLog recovers s: an unclean shutdown, or
// only Options.ForceRecovery.
func (l *Log) recoveryReason(s *segment.Segment) string {
	switch {
	case !l.opt.ForceRecovery:
		return "unclean shutdown"
	case l.load.CleanShutdown:
		return "forced, after a clean shutdown"
	case l.segmentEnd(s) <= l.load.RecoveryPoint:
		return "forced, below the recovery point"
	}
	return "unclean shutdown"
}

// recoverSegment recovers l.segs[i], s, with the producer state of cur.
func (l *Log) recoverSegment(s *segment.Segment, i int, why string, cur *producerCursor) error {
	_, err := l.recoverSegmentResult(s, i, why, nil, cur)
	return err
}

// recoverSegmentResult recovers one segment, l.segs[i], rebuilding its
// transaction index from the producer state replayed up to its base
// offset (cur's, advanced to it), and the leader epoch cache from its
// batches. doomed are the segments a truncation of s deletes.
func (l *Log) recoverSegmentResult(s *segment.Segment, i int, why string, doomed []*segment.Segment, cur *producerCursor) (segment.RecoverResult, error) {
	ps, err := l.producersBefore(cur, i)
	if err != nil {
		return segment.RecoverResult{}, err
	}
	hooks := segment.RecoverHooks{OnBatch: func(e *record.Entry) ([]index.AbortedTxn, error) {
		if e.Magic != record.MagicV2 {
			return nil, nil
		}
		return l.observeBatch(ps, &e.Batch, s.LogPath(), e.Position)
	}}
	refuse, discard := !l.opt.TruncateCorrupt, l.opt.BeforeDiscard
	if refuse || discard != nil {
		hooks.BeforeTruncate = func(c segment.Cut) error {
			if refuse {
				if err := refuseUnprovenCut(c, doomed); err != nil {
					return err
				}
			}
			if discard == nil {
				return nil
			}
			if err := discard(c.Path, c.ValidBytes); err != nil {
				return err
			}
			for _, d := range doomed {
				if err := discard(d.LogPath(), 0); err != nil {
					return err
				}
			}
			return nil
		}
	}
	res, err := s.Recover(hooks)
	if err != nil {
		cur.ps = nil
		return res, err
	}
	// ps now holds s's valid entries too, the last of them below
	// res.NextOffset (recovery keeps offsets increasing).
	cur.next, cur.end = i+1, max(cur.end, res.NextOffset)
	l.load.Recovered = append(l.load.Recovered, RecoveredSegment{BaseOffset: s.BaseOffset(), Why: why, Result: res})
	return res, nil
}

// refuseUnprovenCut returns a *CorruptLogError for a cut that is not
// proved torn: one whose bytes hold a valid entry, or that deletes
// non-empty later segments (doomed). Anything else (a partial entry or
// damage in which no valid entry starts, with nothing after it) is a torn
// write, which a writer may cut.
func refuseUnprovenCut(c segment.Cut, doomed []*segment.Segment) error {
	later := 0
	for _, d := range doomed {
		if d.Size() > 0 {
			later++
		}
	}
	if c.NextValid < 0 && later == 0 {
		return nil
	}
	return &CorruptLogError{Path: c.Path, Position: c.ValidBytes, Size: c.Size, NextValid: c.NextValid, LaterSegments: later, Reason: c.Reason}
}

// loadProblem records what Open could not trust but loaded anyway.
func (l *Log) loadProblem(file string, pos int64, kind, format string, args ...any) {
	l.load.Problems = append(l.load.Problems, finding.Problem{File: file, Position: pos, Kind: kind, Level: finding.Warning, Detail: fmt.Sprintf(format, args...)})
}

// observeBatch feeds a v2 batch to the leader epoch cache and producer
// state, and returns the aborted transaction it completes, if any.
func (l *Log) observeBatch(ps *producer.State, b *record.Batch, file string, pos int64) ([]index.AbortedTxn, error) {
	if b.PartitionLeaderEpoch >= 0 {
		if latest, ok := l.epochs.LatestEpoch(); !ok || b.PartitionLeaderEpoch > latest {
			if changed, err := l.epochs.Assign(b.PartitionLeaderEpoch, b.BaseOffset); err != nil {
				l.loadProblem(file, pos, finding.KindEpochOrder, "leader epoch %d at offset %d: %v", b.PartitionLeaderEpoch, b.BaseOffset, err)
			} else if changed {
				l.epochsDirty = true
			}
		}
	}
	aborted, err := updateProducers(ps, b, &l.it)
	if err != nil {
		l.loadProblem(file, pos, finding.KindProducerState, "batch at offset %d: %v", b.BaseOffset, err)
	}
	return aborted, nil
}

// updateProducers applies a batch to the producer state and returns the
// aborted transaction it completes, if any, for the transaction index. A
// batch the producer state cannot take (a control record that is not a
// marker, a marker for a transaction never started) is reported, not
// fatal: the data is in the log either way, and Kafka applies replicated
// batches without the producer checks of the leader path.
func updateProducers(ps *producer.State, b *record.Batch, it *record.Iterator) ([]index.AbortedTxn, error) {
	if b.ProducerID < 0 && !b.Attributes.IsControl() {
		// No producer: only the map end offset moves (Kafka's
		// updateProducerState without hasProducerId).
		ps.UpdateMapEndOffset(b.LastOffset() + 1)
		return nil, nil
	}
	info, err := producer.FromBatch(b, it)
	if err != nil {
		return nil, err
	}
	done, lso, err := ps.Replay(info)
	if err != nil || done == nil || !done.IsAborted {
		return nil, err
	}
	return []index.AbortedTxn{{ProducerID: done.ProducerID, FirstOffset: done.FirstOffset, LastOffset: done.LastOffset, LastStableOffset: lso}}, nil
}

// producerCursor is the producer state of a load that recovers segment
// after segment, kept from one to the next. Each recovery starts from the
// state replayProducers gives up to its segment's base offset (Kafka's
// LogLoader rebuilds it from the latest snapshot below); replaying from the
// first segment for each would read a log of n segments n²/2 times, so the
// state is carried on instead, and only the segments it has not seen yet
// are replayed into it.
type producerCursor struct {
	// ps is, when not nil, the state of the entries of l.segs[:next],
	// each segment's whole (no entry of them at or above end).
	ps   *producer.State
	next int
	end  int64 // the offset after the last entry in ps
}

// producersBefore returns the producer state replayProducers would give
// for recovering l.segs[i] (every entry below its base offset, from the
// segments before it), advancing cur to it: it replays only the segments
// cur has not seen, or all of them from a fresh state when cur cannot be
// advanced (it is at or past i, or holds entries at or above the base).
// The state it returns is cur's, which the recovery of l.segs[i] then
// advances.
func (l *Log) producersBefore(cur *producerCursor, i int) (*producer.State, error) {
	upTo := l.segs[i].BaseOffset()
	if cur.ps == nil || cur.next > i || cur.end > upTo {
		*cur = producerCursor{ps: producer.NewState()}
	}
	for ; cur.next < i; cur.next++ {
		end, whole, err := l.replaySegment(cur.ps, l.segs[cur.next], upTo)
		if err != nil {
			cur.ps = nil
			return nil, err
		}
		cur.end = max(cur.end, end)
		if !whole {
			// It stopped at upTo: a later target would need more of it,
			// so the state serves this recovery only.
			ps, from := cur.ps, cur.next+1
			*cur = producerCursor{}
			for j := from; j < i; j++ {
				if _, _, err := l.replaySegment(ps, l.segs[j], upTo); err != nil {
					return nil, err
				}
			}
			return ps, nil
		}
	}
	return cur.ps, nil
}

// replayProducers rebuilds producer state up to offset `upTo` (exclusive)
// from the segments already loaded below it.
func (l *Log) replayProducers(ps *producer.State, upTo int64) error {
	for _, s := range l.segs {
		if s.BaseOffset() >= upTo {
			break
		}
		if _, _, err := l.replaySegment(ps, s, upTo); err != nil {
			return err
		}
	}
	return nil
}

// replaySegment applies the entries of s below upTo to ps, up to the
// first that does not read (recovery of that segment reports it). It
// returns the offset after the last entry applied, and whether it stopped
// at the segment's end or its damage rather than at upTo.
func (l *Log) replaySegment(ps *producer.State, s *segment.Segment, upTo int64) (end int64, whole bool, err error) {
	size := s.Size()
	var rs record.ReaderScanner
	rs.Reset(segmentReader{s}, size, s.LogPath(), 0)
	whole = true
	for rs.Next() {
		e := rs.Entry()
		if e.LastOffset() >= upTo {
			whole = false
			break
		}
		end = max(end, e.LastOffset()+1)
		if e.Magic == record.MagicV2 {
			updateProducers(ps, &e.Batch, &l.it) // problems are reported by recovery
		}
	}
	if err := rs.Err(); err != nil {
		var ce *format.CorruptionError
		if errors.As(err, &ce) {
			return end, whole, nil // recovery of that segment will report it
		}
		return end, whole, err
	}
	return end, whole, nil
}

// segmentReader adapts a segment to io.ReaderAt.
type segmentReader struct{ s *segment.Segment }

func (r segmentReader) ReadAt(p []byte, off int64) (int, error) { return r.s.ReadAt(p, off) }

// rebuildProducerState loads the latest producer snapshot at or below the
// log end offset, if any, and replays the batches after it.
func (l *Log) rebuildProducerState() (err error) {
	ps := producer.NewState()
	from := l.logStartOffset
	snaps, err := producer.ListSnapshots(l.fsys, l.dir)
	if err != nil {
		return err
	}
	removed := false
	defer func() {
		// Removals are made durable, or a crash would bring back a
		// stale snapshot that a later Open loads (state built from
		// batches that were truncated away).
		if removed && !l.opt.ReadOnly {
			if serr := vfs.SyncDir(l.fsys, l.dir); serr != nil && err == nil {
				err = serr
			}
		}
	}()
	for i := len(snaps) - 1; i >= 0; i-- {
		if snaps[i] > l.nextOffset {
			// A snapshot beyond the log end is stale (truncated log).
			if err := l.fsys.Remove(segment.Path(l.dir, snaps[i], segment.SnapshotSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			removed = true
			continue
		}
		entries, err := producer.ReadSnapshot(l.fsys, l.dir, snaps[i])
		if err != nil {
			// Kafka deletes a corrupt snapshot and tries the next older one.
			l.loadProblem(segment.Path(l.dir, snaps[i], segment.SnapshotSuffix), -1, finding.KindSnapshotCorrupt, "%v (deleted; the producer state is rebuilt from an older snapshot or the batches)", err)
			if err := l.fsys.Remove(segment.Path(l.dir, snaps[i], segment.SnapshotSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			removed = true
			continue
		}
		ps.Load(entries, snaps[i])
		from = snaps[i]
		break
	}
	for _, s := range l.segs {
		if next := l.segmentEnd(s); next <= from || from >= l.nextOffset {
			// Nothing after the snapshot: with one at the log end (a
			// clean shutdown, a recovery's close), no batch is read at all,
			// as Kafka's rebuildProducerState reads none
			// (lastOffset > startOffset).
			continue
		}
		var rs record.ReaderScanner
		rs.Reset(segmentReader{s}, s.Size(), s.LogPath(), 0)
		for rs.Next() {
			e := rs.Entry()
			if e.LastOffset() < from || e.Magic != record.MagicV2 {
				continue
			}
			if _, err := updateProducers(ps, &e.Batch, &l.it); err != nil {
				l.loadProblem(s.LogPath(), e.Position, finding.KindProducerState, "batch at offset %d: %v", e.BaseOffset(), err)
			}
		}
		if err := rs.Err(); err != nil {
			var ce *format.CorruptionError
			if !errors.As(err, &ce) {
				return err
			}
			// Without recovery (a clean shutdown) the log may hold a bad
			// batch; producer state stops there, and reads report it.
			l.loadProblem(ce.Path, ce.Offset, finding.KindProducerState, "producer state rebuild stopped: %v", ce.Err)
			break
		}
	}
	l.producers = ps
	// Transactions completed below the high watermark no longer hold the
	// last stable offset back.
	ps.OnHighWatermarkUpdated(l.highWatermark)
	return nil
}

// segmentEnd is the base offset of the segment after s, or the log end.
func (l *Log) segmentEnd(s *segment.Segment) int64 {
	for i, x := range l.segs {
		if x == s && i+1 < len(l.segs) {
			return l.segs[i+1].BaseOffset()
		}
	}
	return math.MaxInt64
}

func (l *Log) closeSegments() {
	for _, s := range l.segs {
		s.CloseHandlers()
	}
	l.segs = nil
}

// mkdirDurable creates dir and any missing parents, and syncs the
// directory that holds each one it created, so that a new partition
// directory survives a crash (LogManager.createLog flushes the log
// directory).
func mkdirDurable(fsys vfs.FS, dir string) error {
	var created []string
	for d := dir; ; d = path.Dir(d) {
		if _, err := fsys.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		created = append(created, d)
		if path.Dir(d) == d {
			break
		}
	}
	if len(created) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(created) - 1; i >= 0; i-- {
		if err := vfs.SyncDir(fsys, path.Dir(created[i])); err != nil {
			return err
		}
	}
	return nil
}
