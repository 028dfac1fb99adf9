// Package compaction is Kafka's log cleaner, for one partition directory:
// it keeps the latest record of every key and drops the rest, with the
// rules of Kafka 4.3's LogCleaner, LogCleanerManager, Cleaner,
// SkimpyOffsetMap and MemoryRecords.filterTo, so that a directory it
// cleaned holds what Kafka's cleaner would have left, batch for batch.
//
//	cfg, _ := kafkalog.ParseConfig(map[string]string{"cleanup.policy": "compact"})
//	plan, err := compaction.Plan(vfs.OS(), "/var/kafka-logs/users-0", cfg, compaction.Options{})
//	fmt.Println(plan)                 // the range, the dirty ratio, what would go, until when
//	if plan.Cleanable {
//		rep, err := compaction.Clean(vfs.OS(), "/var/kafka-logs/users-0", cfg, compaction.Options{})
//		...                           // rep.Removed, rep.Horizons, rep.Stats
//	}
//
// Plan is a dry run: it reads the partition and computes everything a
// clean would do, in memory, and writes nothing. Clean does it. Both
// return a Report: the cleanable range and why the log is or is not
// cleanable, Kafka's CleanerStats, the groups of segments rewritten, what
// was removed and why, and the delete horizons of the tombstones and
// markers kept.
//
// # Choosing the range (LogCleanerManager)
//
// The first dirty offset is the partition's entry of the log directory's
// cleaner-offset-checkpoint, or the log start offset; an entry below the
// log start offset or past the log end is reset to the log start offset
// (and Clean writes the reset entry even when it does not clean). The
// first uncleanable offset is the lowest of the last stable offset (the
// first offset of an undecided transaction, at most the high watermark),
// the active segment's base offset (the active segment is never cleaned)
// and, with min.compaction.lag.ms, the base of the first dirty segment
// whose largest timestamp is within the lag of now; it is then rounded
// down to a segment's base. The dirty ratio is the bytes of the dirty
// segments over those of the whole range [log start, first uncleanable).
// The log is cleanable when cleanup.policy has compact, it holds bytes,
// and its ratio is above min.cleanable.dirty.ratio — or, whatever the
// ratio, when a dirty segment's first batch is older than
// max.compaction.lag.ms and something is dirty.
//
// # The offset map (Cleaner.buildOffsetMap, SkimpyOffsetMap)
//
// The map holds the latest offset of every key of the dirty section,
// reading it from the offset index's entry for the first dirty offset on.
// A key is its MD5 hash. Records of aborted transactions (per the
// segments' .txnindex) are left out, and so are control batches. The map
// has DedupeBufferSize/24 slots and stops taking keys at slots × 0.9
// (log.cleaner.io.buffer.load.factor): a dirty section with more keys is
// cleaned up to the record where the map filled, and the next clean goes
// on from there. The end of the clean — the new checkpoint — is one past
// the map's latest offset: the end of the dirty section, or of where the
// map filled.
//
// # Memory and speed
//
// The map's table grows with the keys it holds, up to Slots slots of 20
// bytes (a key's hash and its offset less the first one's, 24 bytes once
// the offsets span more than 2^32−2): at most 5/6 of DedupeBufferSize,
// where Kafka allocates all of it when its cleaner starts. Growing moves
// the keys a chunk of the old table at a time and reuses each emptied
// chunk, so the old and the new table are never whole together. Besides
// the map a clean holds buffers of one batch's size or of the IO buffer
// (a read chunk of IOBufferSize, at least 64 KiB; a 256 KiB write
// buffer; the records of the batch being decided) and a few hundred
// bytes a segment, and allocates nothing per record (TestCleanAllocsPerRecord).
// A batch's records are decoded first, their keys hashed together — on
// amd64 with AVX2 eight at a time, one per vector lane; crypto/md5
// otherwise — and their slots prefetched together, then decided in order:
// the cache misses of a batch's lookups overlap. docs/performance.md has
// the figures against Kafka's cleaner.
//
// # What stays (Cleaner.cleanInto, MemoryRecords.filterTo)
//
// Every segment below the end is rewritten, the clean section included:
// that is how tombstones and markers there are stamped and later dropped.
// A batch is, in Kafka's order:
//
//  1. kept, empty if need be, when it is the last batch of an active
//     producer (it holds the producer's last sequence number; for a
//     producer whose last entry is a marker, a control batch of its
//     epoch), or when it ends the cleaning round (its next offset is the
//     first uncleanable offset: the offset information is not lost);
//  2. dropped whole when its records are discardable: a data batch of an
//     aborted transaction, or a transaction marker whose transaction has
//     no batch left in this pass and whose delete horizon has passed;
//  3. otherwise filtered record by record, and dropped if none stays.
//
// A record stays when it is a control record of a kept marker; or lies
// past the map's latest offset; or has a key, is the latest for it, and
// has a value or is a tombstone whose batch's delete horizon has not
// passed (v0/v1: whose segment was modified after the legacy horizon,
// the last clean segment's mtime minus delete.retention.ms). A record
// without a key goes (Stats.InvalidMessagesRead).
//
// Producers are active as the broker's producer state has them when the
// cleaner runs: the state Kafka's LogLoader rebuilds (the latest usable
// snapshot and the batches after it; after a clean shutdown without a
// snapshot, none), less the producers idle longer than
// producer.id.expiration.ms at now. A marker's transaction is "seen" when
// a batch of it was read in this pass, even one emptied or dropped.
//
// # How kept batches are written
//
// A v2 batch whose records all stay, and that needs no delete horizon, is
// copied byte for byte. One that lost records, or holds tombstones (or is
// a marker of a transaction now gone) without a horizon yet, is rewritten
// as MemoryRecordsBuilder writes it: the same base offset, last offset
// (so the last sequence survives), codec, timestamp type (LogAppendTime
// keeps maxTimestamp), producer id, epoch, base sequence, transactional
// and control flags and partition leader epoch; record attributes 0;
// header keys as Java's UTF-8 re-encodes them. A new delete horizon is
// now + delete.retention.ms, written as KIP-534 does:
//
//	attributes   bit 6 (0x40) set: the batch carries a delete horizon
//	baseTimestamp  = the delete horizon; record timestamp deltas are
//	                 relative to it (so record timestamps are unchanged)
//
// The tombstones and markers of such a batch go at the first clean after
// the horizon: removal takes two passes. A batch that must stay but keeps
// no record is written as Kafka's 61-byte empty batch
// (DefaultRecordBatch.writeEmptyHeader):
//
//	baseOffset, lastOffsetDelta   kept (the range is not lost)
//	attributes                    no codec, no horizon; timestamp type,
//	                              transactional and control flags kept
//	baseTimestamp                 -1
//	maxTimestamp                  kept
//	producerId, producerEpoch,
//	baseSequence, leader epoch    kept
//	recordCount                   0
//
// A v0/v1 entry is never copied: what stays of it becomes a v2 batch
// (Kafka 4 writes only the current magic), without producer fields; when
// such an entry ends the cleaning round and none of its records stays,
// the clean fails as Kafka's does (ErrEmptyLegacyBatch).
//
// A batch Kafka would recompress is recompressed by segkit's codecs,
// which make different bytes than Java's: its records and header fields
// are Kafka's, its length, CRC and compressed bytes are not, and neither
// are the positions (and so the .index entries) of the batches after it.
//
// # Segments, indexes and the swap (Cleaner.groupSegmentsBySize, LocalLog.replaceSegments)
//
// The segments below the end are grouped: consecutive segments merge
// while the group's .log bytes stay within segment.bytes, its .index and
// .timeindex bytes within segment.index.bytes, and its offsets within
// 2^31 of the group's base. Each group is written into one segment named
// by its first segment's base offset, as
// <base>.log.cleaned (.index.cleaned, .timeindex.cleaned, and
// .txnindex.cleaned when an aborted transaction's marker stays), with the
// index rules of LogSegment.append applied batch by batch, the final time
// index entry, the indexes trimmed, everything synced, and the last source
// segment's modification time. Then, as LocalLog.replaceSegments does:
//
//  1. the directory is synced (the .cleaned files' creation durable), the
//     cleaned files are renamed .cleaned → .swap, and the directory synced;
//  2. the source segments' files are renamed to .deleted, and the
//     directory synced;
//  3. the .swap suffix is dropped, and the directory synced;
//  4. the .deleted files are removed (Kafka removes them
//     file.delete.delay.ms later), with the producer snapshots at the
//     base offsets of the sources not replaced.
//
// The directory syncs before steps 1 and 3 are segkit's: Kafka renames
// without them, so that a power cut can keep a lone index .swap (its
// .log.cleaned not durable yet), which the loader renames over the source
// segment's index, or a cleaned segment beside a source whose rename to
// .deleted was lost (oracle TestCompactionCrashMatchesKafka).
//
// A crash leaves a directory that kafkalog.Open (or Kafka's LogLoader)
// resolves: before step 1 completes, the .cleaned files are deleted and
// the old segments stay; after it, the .swap segment replaces the files
// in its range. The clean-shutdown marker of the log directory is removed
// while the clean writes, and put back when it is done. At the end the
// partition's cleaner-offset-checkpoint entry becomes Report.EndOffset
// (the other entries are kept), or, if the clean failed, the first dirty
// offset, as the cleaner thread's finally block writes it.
//
// # The timeline
//
// Clean records each clean that rewrites segments on the partition's
// timeline (package timeline; Kafka has no such record) as one
// timeline.ActionCompaction instant, Report.Instant. It opens the log with
// kafkalog.Options.Timeline, under its lock, so that the open first
// completes or rolls back what an interrupted run left pending, and a
// timeline that cannot be read stops it before it changes anything. Once
// the offset map and the groups are known (only read so far), it writes
// the instant REQUESTED with its plan — Now, FirstDirtyOffset, EndOffset,
// delete.retention.ms and the Sources: every segment of every group — and
// INFLIGHT, both before the clean-shutdown marker is set aside and the
// first .cleaned file is created (the timeline's rule, INFLIGHT before the
// first file changes, kept literally: a requested instant has written
// nothing). It writes COMPLETED after the last sync of the last swap and
// the cleaner-offset-checkpoint, and before the marker is put back, with
// the result: the Sources, the Cleaned segments written (base offset,
// next offset, size and largest timestamp, as the log describes them
// once swapped in), EndOffset, and RecordsRemoved by reason
// ("superseded", "tombstone", "aborted", "unkeyed", "marker": the
// Report's Removed counts). A clean that finds nothing cleanable, or
// rewrites no group, records nothing. A clean that fails before its first
// rename (.cleaned → .swap) rolls the instant back: it changed nothing a
// loader keeps. One that fails later leaves it inflight, and the next
// writable kafkalog.Open with Options.Timeline completes it with the
// sources the swaps replaced (the groups are swapped in one by one) or
// rolls it back if none was. TestCleanTimelineCrash crashes a clean at
// every mutating operation and checks, on every image, that after that
// open nothing is pending and a completed compaction instant exists
// exactly when a source segment was replaced, naming those sources and
// cleaned segments that are in the log. Plan records nothing.
//
// # Where segkit differs from Kafka
//
//   - Recompressed batches: Go's codecs, not Java's (above).
//   - The cleaner-offset-checkpoint keeps the entries of other partitions;
//     Kafka's LogCleanerManager rewrites it with the partitions its broker
//     holds.
//   - The .deleted files of a clean are removed at its end rather than
//     file.delete.delay.ms later; a broker's reads of the old segments
//     cannot be in flight, as Clean holds the partition's lock.
//   - The offset map grows with the keys it holds, up to 5/6 of its
//     budget, instead of allocating all of it up front; where a key sits
//     in it differs from Kafka's probe sequence, which no answer depends
//     on.
//   - Savepoints (legal holds, which Kafka does not have): see below.
//
// # Savepoints (legal holds)
//
// A savepoint of the partition's timeline (timeline.Savepoint) pins a
// range of offsets. Plan, Clean and ReadableUntil read the holds in force
// from the partition's timeline (Clean under its lock, so none is taken
// meanwhile), plus Options.Holds, and end the cleanable range at the base
// of the first segment holding a pinned offset: a clean rewrites every
// segment below the end of its range, so none from there on, and
// UncleanableBy names the savepoint (Report.HeldBy, HeldBase). A held
// segment below the first dirty offset stops every clean, each rewriting
// the log from its start (Report.Why says so). ReadableUntil gives a
// record the hold keeps Never, with HeldBy and "held by savepoint ..." in
// the explanation. Once released, the next clean runs as Kafka's would.
//
// # Concurrency
//
// Clean is a writer: it holds the partition's lock (kafkalog.LockPartition)
// from before it opens the log until it is done, so it fails with a
// *kafkalog.LockError while a broker or another writer holds the log
// directory. Plan takes no lock and may run beside anything, reading
// whatever state the files are in. Neither starts goroutines. An
// OffsetMap is not safe for concurrent use.
package compaction
