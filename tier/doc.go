// Package tier is KIP-405 tiered storage for a kafkalog.Log: closed
// segments copied to a remote, local and total retention, and reads below
// the local log start offset served from the remote.
//
//	l, _ := kafkalog.Open(fsys, "/var/kafka-logs/orders-0", cfg, kafkalog.Options{})
//	t, rep, err := tier.Open(fsys, l, tier.NewDir(remoteFS, "/tiered"), tier.Options{})
//	up, err := t.Upload()         // copy what Kafka's rules allow
//	n, err := t.DeleteLocal()     // local.retention.ms/bytes, only what is copied
//	n, err = t.DeleteRemote()     // retention.ms/bytes over remote + local-only data
//	res, err := t.Read(0, 1<<20)  // from the remote below earliest-local
//
// # The SPI
//
// RemoteStorageManager mirrors Kafka's interface of that name
// (copyLogSegmentData, fetchLogSegment, fetchIndex, deleteLogSegmentData);
// SegmentMetadata is RemoteLogSegmentMetadata, SegmentState
// RemoteLogSegmentState, SegmentData LogSegmentData, IndexType
// RemoteStorageManager.IndexType. MetadataManager is the part of
// RemoteLogMetadataManager this package uses. Dir implements both over a
// vfs directory; an S3 remote belongs in a separate module.
//
// # The rules (Kafka 4.x sources)
//
//   - Copy (RemoteLogManager.RLMCopyTask, candidateLogSegments;
//     PlanCopy): from the segment holding max(highest copied offset + 1,
//     log start offset), every segment whose next segment's base offset is
//     at or below the last stable offset (kafkalog.Log.LastStableOffset:
//     the first open transaction's offset, or the high watermark); never
//     the active segment. Per segment, oldest first: COPY_SEGMENT_STARTED
//     (durable), the files, COPY_SEGMENT_FINISHED (durable). The remote
//     end offset is the next segment's base - 1; the leader-epoch file
//     holds every epoch from the log start offset to below the next base
//     (epochEntriesAsByteBuffer) — rebuilt from the remote segments'
//     segmentLeaderEpochs and the engine's cache, which starts at the
//     local log start offset;
//     the producer snapshot is <nextBase>.snapshot, which the roll writes.
//     A failed copy is deleted at once, as Kafka does.
//   - Compacted topics are not tiered (KAFKA-19273): Open refuses them
//     (ErrCompactedTopic); Upload also needs remote.storage.enable and no
//     remote.log.copy.disable.
//   - Local retention (UnifiedLog.deletableSegments; PlanLocal): only
//     segments wholly in remote storage (or below the log start offset)
//     whose end the high watermark passed, by local.retention.ms then
//     local.retention.bytes (-2: retention.ms/bytes).
//   - Total retention (RLMExpirationTask; PlanRemote): retention.ms on a
//     remote segment's max timestamp, retention.bytes over the remote
//     size plus the local-only size, oldest first, stopping at the first
//     segment kept. DELETE_SEGMENT_STARTED (durable) → files →
//     DELETE_SEGMENT_FINISHED; local segments below the new log start
//     offset go after.
//   - Read (RemoteLogManager.read): the remote segment holding the
//     offset, the position from its remote offset index, then whole
//     entries from the first whose last offset reaches the offset.
//
// # Two start offsets
//
// Kafka's earliest (log start offset) and earliest-local (local log start
// offset) are two numbers; the engine keeps one. With tiering the engine's
// is the local one — local retention moves it with Log.DeleteSegments — and
// the log start offset is derived from the remote metadata (see
// Tier.LogStartOffset), so no crash can leave them disagreeing.
//
// # Layout
//
// Dir writes Kafka's LocalTieredStorage layout (rsm.config.dir = the
// directory), byte for byte the files a broker's LocalTieredStorage
// writes, and keeps its metadata beside it, where LocalTieredStorage
// (which lists only kafka-tiered-storage/ and the partition directories
// in it, and throws on any name there that is not a segment file) never
// looks:
//
//	<dir>/kafka-tiered-storage/<topic>-<partition>-<topicId>/
//	    <20-digit start offset>-<segment uuid>.log
//	    …-<uuid>.index  .timeindex  .txnindex (only when the segment has one)
//	    …-<uuid>.leader_epoch_checkpoint  .snapshot
//	<dir>/.segkit-tier/<topic>-<partition>-<topicId>/
//	    <20-digit start offset>-<segment uuid>.rlsm   one per segment copy
//	    *.tmp                                          interrupted writes
//
// Uuids are Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, no
// padding. The topic id comes from partition.metadata. Kafka 3.9+ pads
// the offset to 20 digits (LogFileUtils.filenamePrefixFromOffset); older
// LocalTieredStorage versions wrote it unpadded, which
// ParseSegmentFileName also accepts.
//
// A directory a broker's LocalTieredStorage wrote has no metadata beside
// it (the broker's is in its __remote_log_metadata topic): Dir.Discover
// builds it from the files alone — the names give each segment's start
// offset and id, the .log's batch headers its end offset, largest
// timestamp and size, its leader_epoch_checkpoint the epochs — and
// refuses what it would have to guess (a stray name, an unfinished file
// set, overlapping segments, a torn .log). ReadOnly(dir, discovered) is a
// Remote over it that Open can tie the broker's partition to and that
// refuses every change (ErrReadOnly).
//
// Each data file is written to <dir>/.segkit-tier/…/<name>.tmp, synced,
// and renamed into the partition directory; the two directories are
// synced after the segment's last rename. So a partition directory only
// ever holds whole files, and a crash leaves only .tmp files, which Open
// removes.
//
// # Metadata file format
//
// One file per segment copy holds its latest state, replaced atomically
// (vfs.WriteFileAtomic: temp file, sync, rename, directory sync). A
// 28-byte text header, then a JSON body:
//
//	offset  width  field
//	0       8      magic "SKTIER1 "
//	8       8      CRC-32C (Castagnoli) of the body, lower-case hex
//	16      1      ' '
//	17      10     body length in bytes, decimal, zero-padded
//	27      1      '\n'
//	28      len    body: one JSON object and '\n'
//
// The body's fields (Kafka's RemoteLogSegmentMetadata names):
//
//	{"version":1, "topicId":"<uuid>", "topic":"orders", "partition":0,
//	 "id":"<segment uuid>", "startOffset":0, "endOffset":99,
//	 "maxTimestampMs":…, "brokerId":0, "eventTimestampMs":…,
//	 "segmentSizeInBytes":…, "segmentLeaderEpochs":[{"epoch":0,"startOffset":0}],
//	 "txnIdxEmpty":true, "state":"COPY_SEGMENT_FINISHED", "abandoned":true}
//
// state is one of COPY_SEGMENT_STARTED, COPY_SEGMENT_FINISHED,
// DELETE_SEGMENT_STARTED, DELETE_SEGMENT_FINISHED, and moves only as
// Kafka's RemoteLogSegmentState allows. abandoned (omitted when false)
// marks a copy deleted before it finished: its deletion does not move the
// log start offset. Unknown JSON fields are ignored. A file larger than
// MaxMetadataFileSize, torn, with a bad magic, length, CRC or body, or
// whose name or partition disagree with its body is a
// *format.CorruptionError naming the file and byte (ErrTooLarge,
// ErrTruncated, ErrCRC, ErrInvalid); Open then fails rather than guess.
// Metadata of deleted segments is kept (a few hundred bytes each).
//
// # Crash safety
//
// A state is acted on only once durable: a local segment is deleted only
// after its COPY_SEGMENT_FINISHED is durable; a remote segment stops being
// served once its DELETE_SEGMENT_STARTED is. Open resolves leftovers: a
// COPY_SEGMENT_STARTED segment's files are deleted and it is marked
// deleted (abandoned); a DELETE_SEGMENT_STARTED one is deleted again;
// .tmp files are removed; remote files no metadata knows are reported
// (StartReport.Unknown), not removed; local segments below a log start
// offset that remote retention moved are deleted. TestCrashAtEveryWritePoint
// and TestErrorAtEveryWritePoint check it at every mutating operation.
//
// # Concurrency
//
// A Tier is driven by one goroutine, the log's writer; Read may run
// concurrently with other reads. Dir's methods are safe for concurrent
// use. The package starts no goroutines; Options.OnEvent sees every
// durable step (the seam for the timeline).
package tier
