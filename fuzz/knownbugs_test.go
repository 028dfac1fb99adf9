package fuzz

import (
	"flag"
	"strings"
	"testing"

	"github.com/segkit/segkit/inspect"
	kafkalog "github.com/segkit/segkit/log"
	"github.com/segkit/segkit/log/checkpoint"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// Known engine bugs the fuzz targets found, and the harness's workarounds
// for them. Each has a reproducer in the corpus (testdata/fuzz/<Target>/
// bugN-*), which passes with the workaround and fails with -strict. When a
// bug is fixed, delete its workaround: the reproducer stays as a
// regression seed.
var strict = flag.Bool("strict", false, "turn off the workarounds for known engine bugs (knownbugs_test.go), so that their reproducers fail")

// Bug 1: with preallocate=true, Log.Close leaves the active segment's .log
// at its preallocated size: segment.Segment.Close trims the indexes but not
// the .log (only OnBecomeInactive calls trimLog), unlike Kafka, whose
// FileRecords.close trims. The clean-shutdown marker then makes the next
// Open skip recovery, take the zero tail as data, and fail in
// loadAll → ReadNextOffset with "record size 0 is smaller than the minimum
// record overhead": the log cannot be opened after a clean shutdown.
//
// Workaround: just before the marker is written (by the injector hook of
// bug 3) and after each clean close, the harness trims a zero tail off the
// partition's .log files, as Close should have.
func workaroundPreallocatedClose(tb testing.TB, fsys vfs.FS, dir string, prealloc bool) {
	tb.Helper()
	if *strict || !prealloc {
		return
	}
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		tb.Fatalf("workaround 1: %v", err)
	}
	for _, fi := range infos {
		if _, ext, err := segment.ParseFileName(fi.Name()); err != nil || ext != segment.LogSuffix {
			continue
		}
		p := dir + "/" + fi.Name()
		data, err := vfs.ReadFile(fsys, p)
		if err != nil {
			tb.Fatalf("workaround 1: %v", err)
		}
		s := record.NewScanner(data, p, 0)
		for s.Next() {
		}
		if k, _, _ := s.Tail(); s.Err() != nil || k != record.TailZeros {
			continue
		}
		f, err := fsys.OpenFile(p, 2 /* O_RDWR */, 0)
		if err != nil {
			tb.Fatalf("workaround 1: %v", err)
		}
		if err := f.Truncate(int64(s.ValidBytes())); err != nil {
			tb.Fatalf("workaround 1: %v", err)
		}
		if err := f.Sync(); err != nil {
			tb.Fatalf("workaround 1: %v", err)
		}
		f.Close()
	}
}

// Bug 2: opening a segment's index for writing extends any shorter index
// file to segment.index.bytes (index.OpenEntryFile: "an existing one gets
// its room back"), so the first read of an inactive segment after Open
// (segment.loadIndexes, lazily) grows its trimmed .index and .timeindex to
// 10 MiB each, unsynced. Kafka preallocates only newly created index files
// and resizes only the active segment's at load. After a crash that keeps
// the extension, such a segment lies below the recovery point, is not
// recovered, and its zero entries are trusted: the time index's last entry
// becomes (0, base), MaxTimestampSoFar returns 0, and time retention
// deletes the segment at the next check (KAFKA-10207), whatever its
// records' timestamps. The offset index gets (base, 0) entries.
//
// Workaround: in each crash image, the harness cuts the trailing all-zero
// entries off every index file before opening it, as if the extension had
// not happened (the harness never writes a legitimately all-zero entry:
// timestamps are far from 0 and no offset index entry points at
// position 0).
func workaroundIndexPadding(tb testing.TB, fsys vfs.FS, dir string) {
	tb.Helper()
	if *strict {
		return
	}
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		tb.Fatalf("workaround 2: %v", err)
	}
	for _, fi := range infos {
		_, ext, err := segment.ParseFileName(fi.Name())
		size := 0
		switch {
		case err != nil:
		case ext == segment.IndexSuffix:
			size = 8
		case ext == segment.TimeIndexSuffix:
			size = 12
		}
		if size == 0 {
			continue
		}
		p := dir + "/" + fi.Name()
		data, err := vfs.ReadFile(fsys, p)
		if err != nil {
			tb.Fatalf("workaround 2: %v", err)
		}
		n := len(data) - len(data)%size
		for n >= size && allZero(data[n-size:n]) {
			n -= size
		}
		if n == len(data) {
			continue
		}
		f, err := fsys.OpenFile(p, 2 /* O_RDWR */, 0)
		if err != nil {
			tb.Fatalf("workaround 2: %v", err)
		}
		if err := f.Truncate(int64(n)); err != nil {
			tb.Fatalf("workaround 2: %v", err)
		}
		if err := f.Sync(); err != nil {
			tb.Fatalf("workaround 2: %v", err)
		}
		f.Close()
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Bug 3: a roll does not make the segment it closes durable once the
// recovery point already covers that segment. rollLocked changes the old
// segment (OnBecomeInactive: the final time-index entry, trimmed .index
// and .timeindex, the .log trimmed from its preallocated size), then calls
// flushLocked(newBase), which returns at once when newBase <= the recovery
// point, and then creates the new segment durably. The recovery point
// covers the old segment's end whenever:
//
//   - flush.messages (or Flush) just synced everything, so none of the
//     roll's own changes reach the disk (with preallocate=true the .log
//     keeps its preallocated size on disk);
//   - TruncateTo cut the segment (unsynced) and set recoveryPoint =
//     min(recoveryPoint, new log end);
//   - the log start offset moved (IncrementLogStartOffset, retention),
//     which raises the recovery point to it (log.setLogStartOffset, as
//     Kafka's updateLogStartOffset) over unflushed appends.
//
// After a crash, the old segment lies below the recovery point, so it is
// not recovered, and it holds its older synced state: the truncated
// batches, at offsets at or above the next segment's base (OffsetForTimestamp
// then serves a truncated record); a zero tail counted as data; indexes
// without their last entries (or preallocated zeros, see bug 2). It breaks
// rollLocked's own promise that "a new segment on disk then always follows
// complete data".
//
// Workaround: the harness's injector syncs every segment file of the
// partition just before a new .log is created, which is what the fix
// (sync the old segment in rollLocked whatever the recovery point) does.
//
// (The same hook also works around bug 7.)
func (h *harness) workaroundHook(op vfs.Op) {
	if *strict {
		return
	}
	if h.opening && strings.HasPrefix(op.Path, partDir+"/") && op.Kind != vfs.OpSync && op.Kind != vfs.OpMkdir && op.Kind.Mutating() {
		h.workaroundMarkerFirst()
	}
	if op.Kind != vfs.OpCreate {
		return
	}
	if strings.Contains(op.Path, checkpoint.CleanShutdownFile) {
		// Bug 1, for a crash inside Close after the marker is written.
		workaroundPreallocatedClose(h.t, h.mem, partDir, h.cfg.Preallocate)
	}
	if strings.HasSuffix(op.Path, segment.LogSuffix) || strings.Contains(op.Path, checkpoint.CleanShutdownFile) {
		syncSegmentFiles(h.mem, partDir)
	}
}

// syncSegmentFiles syncs every segment file of dir (not .deleted ones, nor
// snapshots).
func syncSegmentFiles(mem *vfs.Mem, dir string) {
	infos, err := vfs.ReadDir(mem, dir)
	if err != nil {
		return // the directory is being created
	}
	for _, fi := range infos {
		if _, ext, err := segment.ParseFileName(fi.Name()); err != nil || strings.HasSuffix(ext, segment.DeletedSuffix) || ext == segment.SnapshotSuffix {
			continue
		}
		f, err := mem.OpenFile(dir+"/"+fi.Name(), 2 /* O_RDWR */, 0)
		if err != nil {
			continue
		}
		f.Sync()
		f.Close()
	}
}

// Bug 4: TruncateTo below the log start offset lowers it in memory
// (logStartOffset = min(logStartOffset, next), as Kafka's truncateTo does)
// but does not write the log-start-offset checkpoint, which every other
// move of the start offset makes durable first. After a crash, Open takes
// the stale, higher start offset from the checkpoint: records appended and
// flushed after the truncation below it are hidden, and when the log end
// offset recovered is below it, loadAll deletes every segment
// (truncateFullyAndStartAt), flushed records included.
//
// Workaround: after a TruncateTo that lowered the log start offset, the
// harness writes the checkpoint itself, as the fix would.
func (h *harness) workaroundTruncateStartOffset(before int64) {
	if *strict || h.l.LogStartOffset() >= before {
		return
	}
	p := logDir + "/" + kafkalog.LogStartOffsetCheckpoint
	m, err := checkpoint.ReadOffsets(h.mem, p)
	if err != nil {
		m = map[checkpoint.TopicPartition]int64{}
	}
	m[h.l.TopicPartition()] = h.l.LogStartOffset()
	if err := checkpoint.WriteOffsets(h.mem, p, m); err != nil {
		h.fatalf("workaround 4: %v", err)
	}
	h.tracef("workaround 4: log start offset %d checkpointed", h.l.LogStartOffset())
}

// Bug 5: TruncateTo is not durable. It cuts the segment holding the offset
// (File.Truncate, index truncation) without syncing, but writes the
// leader-epoch checkpoint (truncated from the end) durably at once
// (afterTruncation). A crash before the next sync of that segment brings
// the truncated batches back (recovery finds them valid), and the log then
// serves batches whose partitionLeaderEpoch disagrees with the epoch
// cache: inspect.Verify reports epoch-mismatch ("entry EpochEntry(epoch=2,
// startOffset=3) starts inside the batches of leader epoch 1"), and
// OffsetsForLeaderEpoch-style fencing would trust the wrong boundary.
// Kafka's truncateTo does not flush either; for segkit the fix is to sync
// the truncated segment before the epoch checkpoint is written.
//
// Workaround: after a TruncateTo, the harness syncs the partition's
// segment files.
func (h *harness) workaroundUnsyncedTruncation() {
	if *strict {
		return
	}
	infos, err := vfs.ReadDir(h.mem, partDir)
	if err != nil {
		h.fatalf("workaround 5: %v", err)
	}
	for _, fi := range infos {
		if _, ext, err := segment.ParseFileName(fi.Name()); err != nil || ext == segment.SnapshotSuffix {
			continue
		}
		f, err := h.mem.OpenFile(partDir+"/"+fi.Name(), 2 /* O_RDWR */, 0)
		if err != nil {
			h.fatalf("workaround 5: %v", err)
		}
		if err := f.Sync(); err != nil {
			h.fatalf("workaround 5: %v", err)
		}
		f.Close()
	}
}

// Bug 6: moving the log start offset writes the leader-epoch checkpoint,
// truncated from the start, before the log-start-offset checkpoint
// (log.setLogStartOffset: epochs.TruncateFromStart + Flush, then
// writeOffsetCheckpoint). A crash between the two leaves the old start
// offset in force with an epoch file that no longer lists the epochs of
// the offsets from it to the new one: the batches there are served, but
// inspect.Verify reports epoch-mismatch ("the batches from offset 0 have
// leader epoch 1, which the checkpoint does not list") and an
// OffsetsForLeaderEpoch answer for that epoch would be wrong. Writing the
// log-start-offset checkpoint first fixes it.
//
// Workaround: after a crash inside an operation that moved the log start
// offset, the harness ignores inspect.Verify's epoch-mismatch findings.
const kindEpochMismatch = "epoch-mismatch"

func (h *harness) workaroundEpochAfterStartMove(p inspect.Problem) bool {
	return !*strict && h.epochMayLag && p.Kind == kindEpochMismatch
}

// Bug 7: Log.Close writes the clean-shutdown marker "last, after
// everything is durable", but what segment.Close does after the log's
// flush is never synced: the indexes are trimmed (EntryFile.Resize, a
// Truncate) and their written-behind entries written, without a Sync.
// A crash after Close keeps the durable marker, so Open skips recovery and
// trusts index files that are still at their preallocated size (zero
// padding: the time index's last entry becomes (0, base) and the segment's
// largest timestamp 0 or none, KAFKA-10207) or miss their last entries.
//
// Workaround: the injector hook above also syncs every segment file
// just before the marker is created, as the fix (sync the indexes in
// segment.Close, or before the marker) would.

// Bug 8: Open removes the clean-shutdown marker at the end of loadAll,
// after loadSegmentFiles may already have written to the directory:
// segments recovered for a missing index or a failed sanity check, or all
// of them with Options.ForceRecovery (which inspect.Recover uses), have
// their indexes reset and rebuilt and their .log truncated; leftovers are
// removed and renamed. A crash in between leaves the marker in place with
// half-written files, and the next Open trusts the marker and recovers
// nothing: found with a crash inside inspect.Recover just after the index
// Reset, leaving segment 0's .timeindex all zeros under the marker (its
// maximum timestamp lost). The package documents the opposite ("the
// marker is removed and the removal made durable before any write"; the
// ForceRecovery doc: "removed before the first write").
//
// The same holds for the recovery point: a recovery of segments below the
// checkpointed recovery point (ForceRecovery, a missing index) rewrites
// them (index Reset zeroes the files) while the durable recovery point
// still covers them, so a crash in the middle leaves zeroed indexes that
// the next Open, recovering only from the recovery point, trusts.
// inspect.Recover's documentation says it "resets the partition's recovery
// point in the recovery-point checkpoint to 0"; the code passes
// log.Options.ForceRecovery instead, which does not.
//
// Workaround: while Open (or inspect.Recover) runs, the injector hook
// removes the marker durably just before the first other write to the
// partition, as the fix would (Open then finds it gone, which it
// accepts), and during inspect.Recover also sets the partition's entry in
// the recovery-point checkpoint to 0 first, as its documentation says.
func (h *harness) workaroundMarkerFirst() {
	p := logDir + "/" + checkpoint.CleanShutdownFile
	if _, err := h.mem.Stat(p); err == nil {
		if err := h.mem.Remove(p); err == nil {
			vfs.SyncDir(h.mem, logDir)
			h.tracef("workaround 8: marker removed before the first write of Open")
		}
	}
	if h.forcing {
		h.forcing = false
		rp := logDir + "/" + kafkalog.RecoveryPointCheckpoint
		m, err := checkpoint.ReadOffsets(h.mem, rp)
		if err != nil {
			m = map[checkpoint.TopicPartition]int64{}
		}
		m[checkpoint.TopicPartition{Topic: "fuzz", Partition: 0}] = 0
		if err := checkpoint.WriteOffsets(h.mem, rp, m); err != nil {
			h.fatalf("workaround 8: %v", err)
		}
		h.tracef("workaround 8: recovery point checkpoint reset to 0 before inspect.Recover writes")
	}
}

// Bug 9: producer snapshots that rebuildProducerState deletes as stale
// (beyond the log end after a TruncateTo, or at Open) are removed without
// a directory sync. A crash brings them back, and once the log end passes
// their offset again, Open loads the newest one as the producer state:
// state built from batches that were truncated away. A snapshot holding an
// open transaction of a producer whose batches were truncated pins the
// last stable offset: read_committed reads return nothing, for good
// (reproduced: producer 7 opens a transaction at 2, roll (snapshot at 3),
// TruncateTo(2), five non-transactional records, Flush, crash: LEO = HW =
// 7, and Read(2, IsolationCommitted) is empty). Kafka's truncateAndReload
// does not sync the directory either; a sync after the removals fixes it.
//
// Workaround: after a TruncateTo and after each Open, the harness syncs
// the partition directory.
func (h *harness) workaroundSnapshotRemoval() {
	if *strict {
		return
	}
	if err := vfs.SyncDir(h.mem, partDir); err != nil {
		h.fatalf("workaround 9: %v", err)
	}
}
