package inspect

import (
	"fmt"

	"github.com/segkit/segkit/index"
)

// Level says how serious a Problem is: Info, Warning or Error. It is
// index.Level, so that the findings of the index verifiers pass through
// unchanged; in JSON it is "info", "warning" or "error".
type Level = index.Level

// Levels.
const (
	// Info: a fact worth knowing that is not a defect (a follower's
	// multi-batch index entry, an offset gap in a compacted log).
	Info = index.Info
	// Warning: not a defect of the data, but a state to know about (the
	// preallocated index of the active segment, a torn tail that recovery
	// will cut, timestamps that make retention delete early).
	Warning = index.Warning
	// Error: something is wrong: a read, a lookup or Kafka's recovery
	// would lose or misplace data. Report.OK is false.
	Error = index.Error
)

// Problem is one finding of Verify.
type Problem struct {
	// File is the file the problem is in, as fsys names it (dir joined
	// with the file's name).
	File string `json:"file"`
	// Position is the byte position in File the problem is about: the
	// start of the entry, index entry, checkpoint line or snapshot entry
	// at fault; -1 when it is about the file as a whole (a missing file,
	// a segment's timestamps).
	Position int64 `json:"position"`
	// Kind is one of the Kind constants of this package or of package
	// index: a stable name (the README's "Problem kinds" lists them).
	Kind  string `json:"kind"`
	Level Level  `json:"level"`
	// Detail says what was found, in words, with the values involved.
	Detail string `json:"detail"`
}

// String formats p as "level file:position: kind: detail".
func (p Problem) String() string {
	if p.Position < 0 {
		return fmt.Sprintf("%s %s: %s: %s", p.Level, p.File, p.Kind, p.Detail)
	}
	return fmt.Sprintf("%s %s:%d: %s: %s", p.Level, p.File, p.Position, p.Kind, p.Detail)
}

// Problem kinds of Verify, besides the index.Kind* constants, which it
// reports as they are for the .index, .timeindex and .txnindex files
// (index-offset-order, timeindex-timestamp-mismatch, zero-padding,
// sanity-check, ...). Like those, they are a stable interface: new kinds may
// be added; existing ones keep their names, levels and meaning.
// The README's "Problem kinds" lists them all with what to do about each.
const (
	// Segment files (.log).

	// KindLogCRC (error): an entry whose checksum fails. Position is the
	// entry's start, where Kafka's recovery would truncate the segment.
	KindLogCRC = "log-crc"
	// KindLogCorrupt (error): bytes that are not a valid entry (a length
	// below the minimum, an unknown magic, a header field out of range,
	// zeros or garbage) with valid entries after them, or a complete last
	// entry that fails its checks.
	KindLogCorrupt = "log-corrupt"
	// KindLogInvalidRecords (error): an entry whose checksum verifies but
	// whose records do not decode (counts, lengths, varints, compressed
	// payload): the writer was wrong; consumers fail on it.
	KindLogInvalidRecords = "log-invalid-records"
	// KindLogTornTail (warning in the active segment without a
	// clean-shutdown marker, else error): a partial entry at the end of the
	// file, as a crash during a write leaves it. Kafka's recovery cuts it.
	KindLogTornTail = "log-torn-tail"
	// KindLogZeroTail (warning or error, as KindLogTornTail): zero bytes at
	// the end of the file (preallocate=true, or a crash-extended file).
	KindLogZeroTail = "log-zero-tail"
	// KindLogOffsetOrder (error): an entry whose first offset is not above
	// the last offset of the entry before it (in the segment or the
	// previous segment). Kafka's recovery truncates there.
	KindLogOffsetOrder = "log-offset-order"
	// KindLogOffsetRange (error): an entry whose offsets are below its
	// segment's base offset or more than MaxInt32 above it, which the
	// segment's indexes cannot hold.
	KindLogOffsetRange = "log-offset-out-of-range"
	// KindLogOffsetGap (info in a compacted partition, else warning):
	// offsets missing between two consecutive entries.
	KindLogOffsetGap = "log-offset-gap"

	// Files of the partition directory.

	// KindIndexMissing (warning): a non-empty segment without its .index
	// or .timeindex. Kafka rebuilds it; the active segment's preallocated
	// indexes are often missing from copies of a running broker's files.
	KindIndexMissing = "index-missing"
	// KindTimeIndexNoFinal (warning): the time index of a segment that is
	// not the last one lacks its final entry: its last timestamp is below
	// the segment's largest, and time-based retention judges the segment
	// by the older one.
	KindTimeIndexNoFinal = "timeindex-missing-final"
	// KindOrphanFile (warning): an index file or snapshot without its
	// segment's .log; Kafka deletes index orphans at load.
	KindOrphanFile = "orphan-file"
	// KindLeftoverFile (warning): a .deleted, .cleaned or .swap file left
	// by an interrupted deletion or compaction; Kafka resolves it at load.
	KindLeftoverFile = "leftover-file"
	// KindNoSegments (warning): a partition directory without any .log.
	KindNoSegments = "no-segments"
	// KindIndexTooLarge (error for an index over 2 GiB, warning for one
	// larger than its segment's .log could need): an index file larger
	// than Kafka could have written. It is neither read nor copied;
	// Kafka, and Recover, rebuild it.
	KindIndexTooLarge = "index-too-large"
	// KindSymlink (info): an entry of the partition directory is a
	// symbolic link. segkit follows it, for reading and copying, as Kafka
	// does: the finding names the link so that a copy is not a surprise.
	KindSymlink = "symlink"
	// KindSegmentName (error or warning, as Kafka's loader treats the
	// name): a file ending in .log, .index, .timeindex, .txnindex or
	// .snapshot whose name is not a 20-digit base offset. The detail says
	// what Kafka's loader does with it.
	KindSegmentName = "segment-name"

	// Transaction index against the log.

	// KindTxnMissingAbort (error): an ABORT marker in the log whose
	// transaction has no entry in the segment's .txnindex: read_committed
	// consumers would see the aborted records.
	KindTxnMissingAbort = "txnindex-missing-abort"
	// KindTxnMismatch (error, warning when the log does not reach back to
	// offset 0): an aborted transaction's entry whose first offset or last
	// stable offset differs from the one replayed from the log.
	KindTxnMismatch = "txnindex-mismatch"

	// Producer state.

	// KindSnapshotCorrupt (error): a producer .snapshot that does not
	// decode (short, bad version, bad count). Kafka deletes it and
	// rebuilds the state from an older snapshot or the log.
	KindSnapshotCorrupt = "snapshot-corrupt"
	// KindSnapshotCRC (error): a producer .snapshot whose CRC-32C fails.
	KindSnapshotCRC = "snapshot-crc"
	// KindSnapshotMismatch (error): a snapshot entry that disagrees with
	// the producer state replayed from the log up to the snapshot's offset.
	KindSnapshotMismatch = "snapshot-mismatch"
	// KindSnapshotProducerAbsent (info): a producer the log shows before
	// the snapshot's offset is not in the snapshot: it expired
	// (producer.id.expiration.ms) or the snapshot is wrong.
	KindSnapshotProducerAbsent = "snapshot-producer-absent"
	// KindSnapshotPastEnd (warning): a snapshot above the log end offset;
	// Kafka deletes it at load.
	KindSnapshotPastEnd = "snapshot-past-log-end"
	// KindProducerState (warning): a batch the producer state cannot take:
	// a non-transactional batch from a producer with an open transaction,
	// a control record that is not a transaction marker.
	KindProducerState = "producer-state"

	// Leader epochs.

	// KindEpochCorrupt (error): a leader-epoch-checkpoint that does not
	// parse.
	KindEpochCorrupt = "epoch-checkpoint-corrupt"
	// KindEpochMissing (warning): no leader-epoch-checkpoint although
	// batches carry leader epochs.
	KindEpochMissing = "epoch-checkpoint-missing"
	// KindEpochOrder (error): checkpoint entries whose epochs or start
	// offsets do not strictly increase.
	KindEpochOrder = "epoch-order"
	// KindEpochMismatch (error): the checkpoint maps a batch's offset to
	// another epoch than the batch's partitionLeaderEpoch, or an entry
	// starts past the log end.
	KindEpochMismatch = "epoch-mismatch"

	// Partition metadata and the log directory's checkpoints.

	// KindPartitionMetadata (error): a partition.metadata that does not
	// parse.
	KindPartitionMetadata = "partition-metadata-corrupt"
	// KindCheckpointCorrupt (error): a checkpoint file of the log directory
	// (recovery-point-offset-checkpoint, log-start-offset-checkpoint,
	// replication-offset-checkpoint, cleaner-offset-checkpoint) that does
	// not parse.
	KindCheckpointCorrupt = "checkpoint-corrupt"
	// KindRecoveryPointPastEnd (error): the recovery point is above the log
	// end offset: records the broker had flushed are gone.
	KindRecoveryPointPastEnd = "recovery-point-past-log-end"
	// KindLogStartBelowSegments (warning): the checkpointed log start
	// offset is below the first segment's base offset.
	KindLogStartBelowSegments = "log-start-below-first-segment"
	// KindLogStartPastEnd (error): the checkpointed log start offset is
	// above the log end offset: Kafka would delete every segment.
	KindLogStartPastEnd = "log-start-past-log-end"
	// KindHighWatermarkPastEnd (warning): the replication-offset-checkpoint
	// high watermark is above the log end offset: committed records are
	// missing.
	KindHighWatermarkPastEnd = "high-watermark-past-log-end"

	// Timestamps (retention.TimestampWarnings).

	// KindFarPastTimestamp (warning): the segment's records were already
	// older than retention.ms when its file was last written: the next
	// retention check deletes them.
	KindFarPastTimestamp = "far-past-timestamp"
	// KindFutureTimestamp (warning): the segment's newest record is stamped
	// in the future: the time rule cannot delete it, nor any later segment.
	KindFutureTimestamp = "future-timestamp"
	// KindMtimeFallback (warning): the segment has no record timestamps:
	// the time rule uses the file's modification time.
	KindMtimeFallback = "mtime-fallback"
	// KindTimestampOrder (warning): the segment's newest record is newer
	// than the next segment's, which then waits for it.
	KindTimestampOrder = "timestamp-out-of-order"
)
