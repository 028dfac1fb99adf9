package finding

// Problem kinds: stable names. New kinds may be added; existing ones keep
// their name, level and meaning. Kinds describes each (docs/problems.md is
// generated from it: go test ./finding -run TestKindsDoc -update).
const (
	// Segment files (.log).
	// KindLogCRC (error): A batch (or legacy message) whose checksum fails.
	KindLogCRC = "log-crc"
	// KindLogCorrupt (error): Bytes that are not a valid entry — a length
	// below 14, an unknown magic, a header field out of range, zeros or
	// garbage — followed by a valid entry.
	KindLogCorrupt = "log-corrupt"
	// KindLogInvalidRecords (error): A batch whose CRC verifies but whose
	// records do not decode (counts, lengths, varints, compressed payload).
	KindLogInvalidRecords = "log-invalid-records"
	// KindLogTornTail (warning (error)): A partial entry at the end of the
	// file.
	KindLogTornTail = "log-torn-tail"
	// KindLogZeroTail (warning (error)): Zero bytes at the end of the file
	// (preallocate=true, or a crash after the file grew).
	KindLogZeroTail = "log-zero-tail"
	// KindLogOffsetOrder (error): A batch whose first offset is not above the
	// last offset before it (in its segment or the previous one).
	KindLogOffsetOrder = "log-offset-order"
	// KindLogOffsetRange (error): A batch whose offsets are below its
	// segment's base offset (the file name) or more than 2³¹−1 above it.
	KindLogOffsetRange = "log-offset-out-of-range"
	// KindLogOffsetGap (info (warning)): Offsets missing between two intact
	// batches.
	KindLogOffsetGap = "log-offset-gap"

	// Index files.
	// KindIndexMissing (warning): A non-empty segment without its .index or
	// .timeindex.
	KindIndexMissing = "index-missing"
	// KindZeroPadding (warning): Zero entries at the end of an index that
	// Kafka would trust as entries.
	KindZeroPadding = "zero-padding"
	// KindSanity (error): The index fails Kafka's sanity check (length not a
	// multiple of the entry size, last offset below the base, a partial
	// .txnindex entry, an unknown .txnindex version).
	KindSanity = "sanity-check"
	// KindIndexOffsetOrder (error): An .index entry whose offset is not above
	// the previous one's, or whose position is below it.
	KindIndexOffsetOrder = "index-offset-order"
	// KindIndexPositionPastEnd (error): An .index entry pointing at or past
	// the end of the log's valid batches.
	KindIndexPositionPastEnd = "index-position-past-end"
	// KindIndexNotBatchBoundary (error): An .index entry whose position is not
	// where a batch starts (often.
	KindIndexNotBatchBoundary = "index-not-batch-boundary"
	// KindIndexOffsetBeforeBatch (error): A batch before the entry's position
	// holds the entry's offset or a later one.
	KindIndexOffsetBeforeBatch = "index-offset-before-batch"
	// KindIndexOffsetPastLogEnd (error): An entry whose offset is above the
	// log's last offset.
	KindIndexOffsetPastLogEnd = "index-offset-past-log-end"
	// KindIndexMultiBatchAppend (info): The entry's offset is the last of a
	// follower's multi-batch append that starts at its position
	// (kafka-dump-log calls it a mismatch).
	KindIndexMultiBatchAppend = "index-multi-batch-append"
	// KindIndexOffsetInBatch (info): The entry's offset lies inside the batch
	// at its position (the log cleaner indexed the last offset it kept).
	KindIndexOffsetInBatch = "index-offset-inside-batch"
	// KindTimeOutOfOrder (error): A time index entry whose timestamp is not
	// above the previous one's, or whose offset is below it.
	KindTimeOutOfOrder = "timeindex-out-of-order"
	// KindTimeOffsetMissing (error): No batch of the log holds the entry's
	// offset.
	KindTimeOffsetMissing = "timeindex-offset-missing"
	// KindTimeMismatch (error): The entry's timestamp is not the max timestamp
	// of the batch holding its offset.
	KindTimeMismatch = "timeindex-timestamp-mismatch"
	// KindTimeBehindMax (error): An earlier batch has a larger timestamp than
	// the entry's.
	KindTimeBehindMax = "timeindex-timestamp-behind"
	// KindTimeOffsetInBatch (info): The entry's offset is inside its batch,
	// neither its last offset nor its max-timestamp record's.
	KindTimeOffsetInBatch = "timeindex-offset-inside-batch"
	// KindTimeIndexNoFinal (warning): The time index of a segment that is not
	// the last one lacks the entry a roll writes.
	KindTimeIndexNoFinal = "timeindex-missing-final"
	// KindTxnOrder (error): A .txnindex entry whose last offset is not above
	// the previous one's, or whose first offset is above its last.
	KindTxnOrder = "txnindex-out-of-order"
	// KindTxnBeforeBase (error): An entry whose last offset is below the
	// segment's base offset (Kafka's sanity check).
	KindTxnBeforeBase = "txnindex-offset-before-base"
	// KindTxnNoAbort (error): An entry with no ABORT marker of its producer at
	// its last offset.
	KindTxnNoAbort = "txnindex-no-abort-marker"
	// KindTxnPartialEntry (error): Bytes after the last whole entry.
	KindTxnPartialEntry = "txnindex-partial-entry"
	// KindTxnMissingAbort (error): An ABORT marker in the log whose
	// transaction has no .txnindex entry.
	KindTxnMissingAbort = "txnindex-missing-abort"
	// KindTxnMismatch (error (warning)): An aborted transaction's entry whose
	// first offset or last stable offset differs from the producer-state
	// replay.
	KindTxnMismatch = "txnindex-mismatch"

	// Producer state, leader epochs, metadata.
	// KindSnapshotCorrupt (error): A producer .snapshot that does not decode
	// (short, bad version, a count the bytes cannot hold).
	KindSnapshotCorrupt = "snapshot-corrupt"
	// KindSnapshotCRC (error): A snapshot whose CRC-32C fails.
	KindSnapshotCRC = "snapshot-crc"
	// KindSnapshotMismatch (error): A snapshot entry that disagrees with the
	// producer state replayed from the log up to the snapshot's offset (epoch,
	// last sequence, last offset, offset delta, timestamp.
	KindSnapshotMismatch = "snapshot-mismatch"
	// KindSnapshotProducerAbsent (info): A producer the log shows before the
	// snapshot's offset is not in the snapshot.
	KindSnapshotProducerAbsent = "snapshot-producer-absent"
	// KindSnapshotPastEnd (warning): A snapshot above the log end offset (the
	// log was truncated after it was taken).
	KindSnapshotPastEnd = "snapshot-past-log-end"
	// KindProducerState (warning): A batch the producer state cannot take.
	KindProducerState = "producer-state"
	// KindEpochCorrupt (error): A leader-epoch-checkpoint that does not parse.
	KindEpochCorrupt = "epoch-checkpoint-corrupt"
	// KindEpochMissing (warning): No (or an empty) leader-epoch-checkpoint
	// although batches carry leader epochs.
	KindEpochMissing = "epoch-checkpoint-missing"
	// KindEpochOrder (error): Checkpoint entries whose epochs or start offsets
	// do not strictly increase.
	KindEpochOrder = "epoch-order"
	// KindEpochMismatch (error): The checkpoint maps a batch's offset to
	// another epoch than the batch's partitionLeaderEpoch (each epoch must
	// start at its first batch), lacks an epoch the batches carry, or has an
	// entry past the log end.
	KindEpochMismatch = "epoch-mismatch"
	// KindPartitionMetadata (error): A partition.metadata that does not parse
	// (or holds the zero topic ID).
	KindPartitionMetadata = "partition-metadata-corrupt"

	// The log directory's checkpoints.
	// KindCheckpointCorrupt (error): recovery-point-offset-checkpoint,
	// log-start-offset-checkpoint, replication-offset-checkpoint or
	// cleaner-offset-checkpoint does not parse.
	KindCheckpointCorrupt = "checkpoint-corrupt"
	// KindRecoveryPointPastEnd (error): The recovery point is above the log
	// end offset.
	KindRecoveryPointPastEnd = "recovery-point-past-log-end"
	// KindLogStartBelowSegments (warning): The checkpointed log start offset
	// is below the first segment's base offset (the checkpoint lags a
	// deletion).
	KindLogStartBelowSegments = "log-start-below-first-segment"
	// KindLogStartPastEnd (error): The checkpointed log start offset is above
	// the log end offset.
	KindLogStartPastEnd = "log-start-past-log-end"
	// KindHighWatermarkPastEnd (warning): The checkpointed high watermark is
	// above the log end offset.
	KindHighWatermarkPastEnd = "high-watermark-past-log-end"

	// Directory contents and timestamps.
	// KindNoSegments (warning): A partition directory without any .log.
	KindNoSegments = "no-segments"
	// KindOrphanFile (warning): An index file without its segment's .log.
	KindOrphanFile = "orphan-file"
	// KindLeftoverFile (warning): A .cleaned or .swap file of an
	// interrupted compaction (.deleted files are KindDeletedFile).
	KindLeftoverFile = "leftover-file"
	// KindDeletedFile (info): A .deleted file: a segment retention,
	// DeleteRecords or compaction deleted, whose files wait out
	// file.delete.delay.ms.
	KindDeletedFile = "deleted-file"
	// KindSegmentName (error or warning): A file named like a segment file
	// (.log, an index, .snapshot, or one of those with
	// .deleted/.cleaned/.swap) whose base offset is not 20 digits.
	KindSegmentName = "segment-name"
	// KindSymlink (info): An entry is a symbolic link.
	KindSymlink = "symlink"
	// KindIndexTooLarge (error (over 2 GiB) or warning): An index larger than
	// Kafka could have written.
	KindIndexTooLarge = "index-too-large"
	// KindFarPastTimestamp (warning): The segment's records were already older
	// than retention.ms when its file was last written.
	KindFarPastTimestamp = "far-past-timestamp"
	// KindFutureTimestamp (warning): The segment's newest record is stamped in
	// the future.
	KindFutureTimestamp = "future-timestamp"
	// KindMtimeFallback (warning): The segment has no record timestamps
	// (legacy v0).
	KindMtimeFallback = "mtime-fallback"
	// KindTimestampOrder (warning): The segment's newest record is newer than
	// the next segment's, so the next segment cannot go before it (deletion is
	// a prefix).
	KindTimestampOrder = "timestamp-out-of-order"

	// Tiered storage (segviz verify --remote).
	// KindRemoteGap (error): Offsets between two remote segments, or between
	// the last remote segment and the first local one, that no segment holds.
	KindRemoteGap = "remote-gap"
	// KindRemoteOverlap (error): Two remote segments that are both served
	// hold the same offsets.
	KindRemoteOverlap = "remote-overlap"
	// KindRemoteMetadataMismatch (error): A remote segment's files disagree
	// with its metadata (size, offsets).
	KindRemoteMetadataMismatch = "remote-metadata-mismatch"
	// KindRemoteFileMissing (error): A served remote segment lacks one of
	// its files.
	KindRemoteFileMissing = "remote-file-missing"
	// KindRemoteMetadataCorrupt (error): A remote log metadata file that
	// does not decode.
	KindRemoteMetadataCorrupt = "remote-metadata-corrupt"
	// KindRemoteOrphanFile (warning): A remote file no remote log metadata
	// names.
	KindRemoteOrphanFile = "remote-orphan-file"
	// KindRemoteUnfinished (info): A copy or deletion of a remote segment
	// that began and did not finish.
	KindRemoteUnfinished = "remote-unfinished"
)

// KindInfo describes a problem kind: what docs/problems.md and the web
// page say of it.
type KindInfo struct {
	// Name is the kind, one of the Kind constants.
	Name string
	// Group is the heading it is listed under (the files it is about).
	Group string
	// Levels is the level it is reported at, in words: "error",
	// "warning (error)" when it is an error in some cases.
	Levels string
	// Meaning says what it means, in Markdown.
	Meaning string
	// Do says what to do about it, in Markdown.
	Do string
}

// kinds lists every kind, in the order the documentation lists them.
var kinds = []KindInfo{
	{Name: KindLogCRC, Group: "Segment files (`.log`)", Levels: "error",
		Meaning: "A batch (or legacy message) whose checksum fails. The detail says whether valid batches follow (corruption) or not (a torn write of the last batch, or damage), and which offsets the damaged bytes held.",
		Do:      "`segviz recover` truncates the segment there and deletes every later segment, as Kafka would; `segviz salvage` keeps every valid batch after it. Look for disk or filesystem trouble."},
	{Name: KindLogCorrupt, Group: "Segment files (`.log`)", Levels: "error",
		Meaning: "Bytes that are not a valid entry — a length below 14, an unknown magic, a header field out of range, zeros or garbage — followed by a valid entry; or a complete last entry that fails a header check.",
		Do:      "As `log-crc`."},
	{Name: KindLogInvalidRecords, Group: "Segment files (`.log`)", Levels: "error",
		Meaning: "A batch whose CRC verifies but whose records do not decode (counts, lengths, varints, compressed payload). The writer was wrong; Kafka's recovery does not look at records, consumers fail on it.",
		Do:      "Find the producer or tool that wrote it. `salvage` drops the batch."},
	{Name: KindLogTornTail, Group: "Segment files (`.log`)", Levels: "warning (error)",
		Meaning: "A partial entry at the end of the file: a crash during a write. A warning for the last (active) segment of a log directory without a clean-shutdown marker; an error in an earlier segment (rolled segments are complete), or when the marker is present (Kafka then skips recovery and would append after the partial bytes).",
		Do:      "Kafka's recovery cuts it at the next start; `segviz recover` does the same now."},
	{Name: KindLogZeroTail, Group: "Segment files (`.log`)", Levels: "warning (error)",
		Meaning: "Zero bytes at the end of the file (`preallocate=true`, or a crash after the file grew). Levels as `log-torn-tail`.",
		Do:      "As `log-torn-tail`."},
	{Name: KindLogOffsetOrder, Group: "Segment files (`.log`)", Levels: "error",
		Meaning: "A batch whose first offset is not above the last offset before it (in its segment or the previous one): duplicated or reordered data.",
		Do:      "Kafka's recovery truncates there. Inspect with `segviz dump`."},
	{Name: KindLogOffsetRange, Group: "Segment files (`.log`)", Levels: "error",
		Meaning: "A batch whose offsets are below its segment's base offset (the file name) or more than 2³¹−1 above it: the indexes cannot address it.",
		Do:      "The segment was renamed or written by a broken tool; `salvage` rewrites the batches into well-named segments."},
	{Name: KindLogOffsetGap, Group: "Segment files (`.log`)", Levels: "info (warning)",
		Meaning: "Offsets missing between two intact batches. **Info** in a compacted partition (listed in the log directory's `cleaner-offset-checkpoint`, `__consumer_offsets`, `__transaction_state`, or `--compacted`), where the cleaner removes batches; a **warning** otherwise, where it means lost batches. Gaps next to damage are reported in the damage's detail instead.",
		Do:      "On a delete-policy topic, find where the batches went (a deleted segment file?)."},
	{Name: KindIndexMissing, Group: "Index files", Levels: "warning",
		Meaning: "A non-empty segment without its `.index` or `.timeindex`. Normal for the active segment of a copy of a running broker's files (the 10 MiB preallocated index is often left out); Kafka rebuilds a missing index.",
		Do:      "Nothing, or `segviz recover` to rebuild it."},
	{Name: KindZeroPadding, Group: "Index files", Levels: "warning",
		Meaning: "Zero entries at the end of an index that Kafka would trust as entries: the preallocated index of the active segment (normal while the broker runs), or an untrimmed index of an earlier segment after a crash (KAFKA-10207: retention may read its last timestamp as 0).",
		Do:      "For an earlier segment: `segviz recover`, or delete the index and let Kafka rebuild it."},
	{Name: KindSanity, Group: "Index files", Levels: "error",
		Meaning: "The index fails Kafka's sanity check (length not a multiple of the entry size, last offset below the base, a partial `.txnindex` entry, an unknown `.txnindex` version). Kafka rebuilds it.",
		Do:      "`segviz recover`."},
	{Name: KindIndexOffsetOrder, Group: "Index files", Levels: "error",
		Meaning: "An `.index` entry whose offset is not above the previous one's, or whose position is below it.",
		Do:      "Rebuild the index (`segviz recover`)."},
	{Name: KindIndexPositionPastEnd, Group: "Index files", Levels: "error",
		Meaning: "An `.index` entry pointing at or past the end of the log's valid batches.",
		Do:      "Rebuild the index."},
	{Name: KindIndexNotBatchBoundary, Group: "Index files", Levels: "error",
		Meaning: "An `.index` entry whose position is not where a batch starts (often: the batch there is damaged).",
		Do:      "Rebuild the index, after dealing with the damage."},
	{Name: KindIndexOffsetBeforeBatch, Group: "Index files", Levels: "error",
		Meaning: "A batch before the entry's position holds the entry's offset or a later one: a lookup would skip it.",
		Do:      "Rebuild the index."},
	{Name: KindIndexOffsetPastLogEnd, Group: "Index files", Levels: "error",
		Meaning: "An entry whose offset is above the log's last offset.",
		Do:      "Rebuild the index."},
	{Name: KindIndexMultiBatchAppend, Group: "Index files", Levels: "info",
		Meaning: "The entry's offset is the last of a follower's multi-batch append that starts at its position (`kafka-dump-log` calls it a mismatch); lookups are exact.",
		Do:      "Nothing."},
	{Name: KindIndexOffsetInBatch, Group: "Index files", Levels: "info",
		Meaning: "The entry's offset lies inside the batch at its position (the log cleaner indexed the last offset it kept).",
		Do:      "Nothing."},
	{Name: KindTimeOutOfOrder, Group: "Index files", Levels: "error",
		Meaning: "A time index entry whose timestamp is not above the previous one's, or whose offset is below it.",
		Do:      "Rebuild the index."},
	{Name: KindTimeOffsetMissing, Group: "Index files", Levels: "error",
		Meaning: "No batch of the log holds the entry's offset.",
		Do:      "Rebuild the index."},
	{Name: KindTimeMismatch, Group: "Index files", Levels: "error",
		Meaning: "The entry's timestamp is not the max timestamp of the batch holding its offset.",
		Do:      "Rebuild the index."},
	{Name: KindTimeBehindMax, Group: "Index files", Levels: "error",
		Meaning: "An earlier batch has a larger timestamp than the entry's: a lookup by time could skip it.",
		Do:      "Rebuild the index."},
	{Name: KindTimeOffsetInBatch, Group: "Index files", Levels: "info",
		Meaning: "The entry's offset is inside its batch, neither its last offset nor its max-timestamp record's.",
		Do:      "Nothing."},
	{Name: KindTimeIndexNoFinal, Group: "Index files", Levels: "warning",
		Meaning: "The time index of a segment that is not the last one lacks the entry a roll writes: its last timestamp is below the segment's largest, and time-based retention judges the segment by the older one (it goes too early).",
		Do:      "Rebuild the index (`segviz recover`)."},
	{Name: KindTxnOrder, Group: "Index files", Levels: "error",
		Meaning: "A `.txnindex` entry whose last offset is not above the previous one's, or whose first offset is above its last.",
		Do:      "Rebuild the index (`segviz recover`)."},
	{Name: KindTxnBeforeBase, Group: "Index files", Levels: "error",
		Meaning: "An entry whose last offset is below the segment's base offset (Kafka's sanity check).",
		Do:      "Rebuild the index."},
	{Name: KindTxnNoAbort, Group: "Index files", Levels: "error",
		Meaning: "An entry with no ABORT marker of its producer at its last offset: read_committed consumers would drop committed records.",
		Do:      "Rebuild the index."},
	{Name: KindTxnPartialEntry, Group: "Index files", Levels: "error",
		Meaning: "Bytes after the last whole entry: a torn write.",
		Do:      "Rebuild the index."},
	{Name: KindTxnMissingAbort, Group: "Index files", Levels: "error",
		Meaning: "An ABORT marker in the log whose transaction has no `.txnindex` entry: read_committed consumers would return the aborted records.",
		Do:      "Rebuild the index (`segviz recover`)."},
	{Name: KindTxnMismatch, Group: "Index files", Levels: "error (warning)",
		Meaning: "An aborted transaction's entry whose first offset or last stable offset differs from the producer-state replay. A warning when the log does not reach back to offset 0 (or is compacted): the replay may lack history.",
		Do:      "Rebuild the index."},
	{Name: KindSnapshotCorrupt, Group: "Producer state, leader epochs, metadata", Levels: "error",
		Meaning: "A producer `.snapshot` that does not decode (short, bad version, a count the bytes cannot hold). Kafka deletes it and rebuilds the state from an older snapshot or the log.",
		Do:      "Delete it, or let Kafka. Idempotent producers may see a duplicate-sequence error once."},
	{Name: KindSnapshotCRC, Group: "Producer state, leader epochs, metadata", Levels: "error",
		Meaning: "A snapshot whose CRC-32C fails.",
		Do:      "As `snapshot-corrupt`."},
	{Name: KindSnapshotMismatch, Group: "Producer state, leader epochs, metadata", Levels: "error",
		Meaning: "A snapshot entry that disagrees with the producer state replayed from the log up to the snapshot's offset (epoch, last sequence, last offset, offset delta, timestamp; and, when the log reaches back to offset 0 uncompacted, the coordinator epoch and open transaction), or a producer the log does not show before that offset.",
		Do:      "Delete the snapshot; Kafka rebuilds the state from the log."},
	{Name: KindSnapshotProducerAbsent, Group: "Producer state, leader epochs, metadata", Levels: "info",
		Meaning: "A producer the log shows before the snapshot's offset is not in the snapshot: it expired (`producer.id.expiration.ms`, a day by default), or the snapshot missed it.",
		Do:      "Nothing, unless the producer is active."},
	{Name: KindSnapshotPastEnd, Group: "Producer state, leader epochs, metadata", Levels: "warning",
		Meaning: "A snapshot above the log end offset (the log was truncated after it was taken); Kafka deletes it at load.",
		Do:      "Nothing."},
	{Name: KindProducerState, Group: "Producer state, leader epochs, metadata", Levels: "warning",
		Meaning: "A batch the producer state cannot take: a non-transactional batch from a producer with an open transaction, a control record that is not a transaction marker.",
		Do:      "Inspect the batch with `segviz dump`."},
	{Name: KindEpochCorrupt, Group: "Producer state, leader epochs, metadata", Levels: "error",
		Meaning: "A `leader-epoch-checkpoint` that does not parse. Kafka fails the log directory.",
		Do:      "`segviz recover` rebuilds it from the batches."},
	{Name: KindEpochMissing, Group: "Producer state, leader epochs, metadata", Levels: "warning",
		Meaning: "No (or an empty) `leader-epoch-checkpoint` although batches carry leader epochs.",
		Do:      "`segviz recover` rebuilds it."},
	{Name: KindEpochOrder, Group: "Producer state, leader epochs, metadata", Levels: "error",
		Meaning: "Checkpoint entries whose epochs or start offsets do not strictly increase.",
		Do:      "Rebuild it (`segviz recover`)."},
	{Name: KindEpochMismatch, Group: "Producer state, leader epochs, metadata", Levels: "error",
		Meaning: "The checkpoint maps a batch's offset to another epoch than the batch's `partitionLeaderEpoch` (each epoch must start at its first batch), lacks an epoch the batches carry, or has an entry past the log end. Followers would truncate wrongly.",
		Do:      "Rebuild it (`segviz recover`)."},
	{Name: KindPartitionMetadata, Group: "Producer state, leader epochs, metadata", Levels: "error",
		Meaning: "A `partition.metadata` that does not parse (or holds the zero topic ID). Kafka fails to load the partition.",
		Do:      "Restore it from another replica (the topic ID is in the cluster metadata)."},
	{Name: KindCheckpointCorrupt, Group: "The log directory's checkpoints", Levels: "error",
		Meaning: "`recovery-point-offset-checkpoint`, `log-start-offset-checkpoint`, `replication-offset-checkpoint` or `cleaner-offset-checkpoint` does not parse. Kafka falls back to recovering every partition.",
		Do:      "Delete it (for the recovery point: a full recovery at the next start)."},
	{Name: KindRecoveryPointPastEnd, Group: "The log directory's checkpoints", Levels: "error",
		Meaning: "The recovery point is above the log end offset: records the broker had flushed are missing.",
		Do:      "Find what removed them; `segviz recover` resets the checkpoint."},
	{Name: KindLogStartBelowSegments, Group: "The log directory's checkpoints", Levels: "warning",
		Meaning: "The checkpointed log start offset is below the first segment's base offset (the checkpoint lags a deletion); Kafka uses the base offset.",
		Do:      "Nothing."},
	{Name: KindLogStartPastEnd, Group: "The log directory's checkpoints", Levels: "error",
		Meaning: "The checkpointed log start offset is above the log end offset: Kafka would delete every segment and restart the log there.",
		Do:      "Fix the checkpoint before starting the broker."},
	{Name: KindHighWatermarkPastEnd, Group: "The log directory's checkpoints", Levels: "warning",
		Meaning: "The checkpointed high watermark is above the log end offset: committed records are missing here (or the replica was truncated since).",
		Do:      "Let the broker catch up from the leader; check for lost data."},
	{Name: KindNoSegments, Group: "Directory contents and timestamps", Levels: "warning",
		Meaning: "A partition directory without any `.log`; Kafka creates one at its log start offset. The detail names the offsets its other files refer to (leader epochs, snapshots, recovery point), which tell whether segments went missing; those files are not checked further.",
		Do:      "If the detail names offsets, find the missing segments."},
	{Name: KindOrphanFile, Group: "Directory contents and timestamps", Levels: "warning",
		Meaning: "An index file without its segment's `.log`; Kafka deletes it at load.",
		Do:      "Nothing, or delete it."},
	{Name: KindLeftoverFile, Group: "Directory contents and timestamps", Levels: "warning",
		Meaning: "A `.cleaned` or `.swap` file of an interrupted compaction (or segment replacement); Kafka resolves it at load. (Before segkit 0.x `.deleted` files were reported under this kind too; they are `deleted-file` now.)",
		Do:      "Nothing."},
	{Name: KindDeletedFile, Group: "Directory contents and timestamps", Levels: "info",
		Meaning: "A `.deleted` file: a segment that retention, DeleteRecords or compaction deleted. Its records are no longer readable; Kafka keeps the files `file.delete.delay.ms` (60 s) so that reads in flight can finish, then removes them (or at its next load, if it stopped first).",
		Do:      "Nothing."},
	{Name: KindSegmentName, Group: "Directory contents and timestamps", Levels: "error or warning",
		Meaning: "A file named like a segment file (`.log`, an index, `.snapshot`, or one of those with `.deleted`/`.cleaned`/`.swap`) whose base offset is not 20 digits: `abc.log`, `.log`, `1.log`, `-0000000001.log`. The detail says what Kafka's loader does, as observed with `oracle/kafka recover` (`TestOddSegmentNamesAgreeWithKafka`): letters or nothing → `NumberFormatException`, the partition does not load (error); a number → Kafka opens an empty segment of that base offset under its own name and never reads this file (error for a `.log`, warning for an index or snapshot).",
		Do:      "Rename the file to `%020d.log` of its first offset, or move it out."},
	{Name: KindSymlink, Group: "Directory contents and timestamps", Levels: "info",
		Meaning: "An entry is a symbolic link; segviz follows it to read and copy, as Kafka does.",
		Do:      "Nothing; a copy (`recover --out`, `salvage`) holds the target's bytes."},
	{Name: KindIndexTooLarge, Group: "Directory contents and timestamps", Levels: "error (over 2 GiB) or warning",
		Meaning: "An index larger than Kafka could have written: `segment.index.bytes` is an int, and a closed segment's index needs at most one entry per 26 bytes of `.log` (or a 10 MiB preallocation a crash left). It is not read and not copied; recovery rebuilds it.",
		Do:      "`segviz recover`, or delete the index and let Kafka rebuild it."},
	{Name: KindFarPastTimestamp, Group: "Directory contents and timestamps", Levels: "warning",
		Meaning: "The segment's records were already older than `retention.ms` when its file was last written: the next retention check deletes them, however recently they were written (a replayed backlog, a producer clock set wrong, timestamp 0). Copying files also resets their modification time.",
		Do:      "Raise `retention.ms`, or use `message.timestamp.type=LogAppendTime`, or fix the producer's timestamps. `segviz retention` says when each segment goes."},
	{Name: KindFutureTimestamp, Group: "Directory contents and timestamps", Levels: "warning",
		Meaning: "The segment's newest record is stamped in the future: the time rule cannot delete it before that time plus `retention.ms`, and every later segment waits behind it.",
		Do:      "Fix the producer's clock; `message.timestamp.after.max.ms` bounds it (1 hour in Kafka 4.x)."},
	{Name: KindMtimeFallback, Group: "Directory contents and timestamps", Levels: "warning",
		Meaning: "The segment has no record timestamps (legacy v0): the time rule uses the file's modification time, which copying or touching the file changes.",
		Do:      "Keep modification times when moving files."},
	{Name: KindTimestampOrder, Group: "Directory contents and timestamps", Levels: "warning",
		Meaning: "The segment's newest record is newer than the next segment's, so the next segment cannot go before it (deletion is a prefix).",
		Do:      "Nothing, or fix producer clocks."},

	{Name: KindRemoteGap, Group: "Tiered storage (verify --remote)", Levels: "error",
		Meaning: "Offsets between two served remote segments, or between the last remote segment and the first local segment, that no segment holds: a consumer reading there gets `OFFSET_OUT_OF_RANGE` or skips records. A local segment deleted before its copy finished leaves this.",
		Do:      "Find the missing segment's files (a broker's disk, a backup) and copy them to the remote with `segviz tier upload`; otherwise the offsets are lost."},
	{Name: KindRemoteOverlap, Group: "Tiered storage (verify --remote)", Levels: "error",
		Meaning: "Two served remote segments hold the same offsets (their metadata's start and end offsets overlap): a read is served from one of them, and remote retention may delete the other's records twice.",
		Do:      "Compare the two copies (`segviz dump`); delete the metadata and files of the wrong one."},
	{Name: KindRemoteMetadataMismatch, Group: "Tiered storage (verify --remote)", Levels: "error",
		Meaning: "A remote segment's files disagree with its remote log metadata: the `.log` is not `segmentSizeInBytes` long, or holds offsets outside `startOffset`..`endOffset`. Reads and retention follow the metadata, so records are read wrongly or deleted early.",
		Do:      "Copy the segment again from a local copy, if one is left; otherwise correct the metadata."},
	{Name: KindRemoteFileMissing, Group: "Tiered storage (verify --remote)", Levels: "error",
		Meaning: "A served remote segment lacks one of its files (`.log`, `.index`, `.timeindex`, `.snapshot`, `.leader_epoch_checkpoint`, or the `.txnindex` its metadata says it has): reads of the segment fail, or read_committed misses aborted transactions.",
		Do:      "Copy the segment again from a local copy, if one is left."},
	{Name: KindRemoteMetadataCorrupt, Group: "Tiered storage (verify --remote)", Levels: "error",
		Meaning: "A remote log metadata file (`.segkit-tier/*.rlsm`) that does not decode or names another segment: nothing can say which remote segments are served, so the remote checks stop there.",
		Do:      "Move the file aside; `segviz tier status` then shows the segment's files as unknown."},
	{Name: KindRemoteOrphanFile, Group: "Tiered storage (verify --remote)", Levels: "warning",
		Meaning: "A file in the remote partition directory that no remote log metadata names (another writer's, or a copy whose metadata was lost), or a temporary file of an interrupted metadata write. It holds no served data.",
		Do:      "A temporary file: nothing, the next `segviz tier upload` deletes it. Another file: `tier upload` reports it and leaves it; delete it once you know whose it is."},
	{Name: KindRemoteUnfinished, Group: "Tiered storage (verify --remote)", Levels: "info",
		Meaning: "A remote segment whose copy (`COPY_SEGMENT_STARTED`) or deletion (`DELETE_SEGMENT_STARTED`) began and did not finish: an upload that crashed or failed. It is not served.",
		Do:      "Nothing: the next `segviz tier upload` deletes the copy, or finishes the deletion."},
}

// Kinds returns every problem kind with its description, in the order the
// documentation lists them. The slice is a copy.
func Kinds() []KindInfo { return append([]KindInfo(nil), kinds...) }
