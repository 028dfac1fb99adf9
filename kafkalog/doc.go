// Package kafkalog is segkit's log engine: one Kafka partition directory, read
// and written as a broker reads and writes it.
//
// A partition directory holds segments (see package segment) named by
// their base offsets, a leader-epoch-checkpoint, producer state
// snapshots, and partition.metadata; its parent, the log directory, holds
// the recovery-point and log-start-offset checkpoints of all its
// partitions and the clean-shutdown marker.
//
//	l, err := kafkalog.Open(vfs.OS(), "/var/kafka-logs/orders-0", kafkalog.DefaultConfig(), kafkalog.Options{})
//	...
//	var w record.Builder
//	spec := record.NewBatchSpec(0, compress.Zstd)
//	batch, _ := w.AppendBatch(nil, &spec, recs)
//	res, err := l.Append(batch, 0)          // offsets assigned here
//	rr, err := l.Read(res.FirstOffset, 1<<20, nil, kafkalog.ReadOptions{})
//	err = l.Close()                          // trims, checkpoints, marker
//
// # Loading and recovery
//
// Open follows Kafka's LogLoader: leftovers of deletes (.deleted) and of
// compaction (.cleaned, .swap) are resolved, orphan indexes removed, and
// unless the log directory was shut down cleanly, every segment from the
// recovery point on is validated and its torn or corrupt tail truncated,
// with its indexes rebuilt. A truncation deletes every later segment: no
// record after a hole is ever served. LoadReport says what was done.
//
// # Durability
//
// Appends reach the OS at once; fsync follows flush.messages and flush.ms
// (Kafka's defaults leave flushing to the OS), every roll flushes the
// segment it closes, and Close flushes everything. The recovery point is
// the offset below which everything is durable; checkpoints are written
// through a temporary file, fsync and rename. After a write or sync error
// the log refuses further writes until reopened (as Kafka marks a log
// directory offline): the state on disk is then recovered from what is
// durable.
//
// # The timeline
//
// With Options.Timeline, the engine records its actions on the
// partition's timeline (package timeline, in <dir>/.segkit/timeline, where
// a broker never looks): each roll as a noted roll instant (its reason —
// segment.bytes, segment.ms, index full, time index full, offset overflow
// or requested — the segment it closed and the new base), made durable by
// Flush, MaybeFlush and Close; each TruncateTo as a truncate instant,
// requested and inflight before the first file changes and completed
// after the last sync; and a recovery instant when the load cut,
// deleted or swapped anything, or rechecked segments after an unclean
// shutdown. A writable Open resolves the instants an earlier run left
// pending, from what the loaded log shows (a clean whose
// log start offset move is durable is completed, a truncation whose log
// end offset moved is completed with the end it reached, a compaction
// with the cleaned segments the loader swapped in; anything else is
// rolled back), and records again, as rolls whose reason is
// RollRecovered, the segments whose noted roll a crash lost.
// TestTimelineCrashAtEveryWritePoint crashes a workload of appends, rolls,
// flushes and a truncation at every write and sync and checks that, after
// Open, the timeline and the files agree. A roll with the timeline costs
// one small file, written without a sync by a goroutine of the
// timeline's (BenchmarkRollTimelineRatio: 0.98-1.07x a roll without).
//
// # Concurrency
//
// A Log takes one writer and any number of concurrent readers: Append,
// AppendAsFollower, Roll, TruncateTo, DeleteSegments, Flush and Close take
// an exclusive lock; Read, OffsetForTimestamp and the accessors share it.
// The package starts no goroutines: call MaybeFlush and
// DeletePendingSegments periodically (the retention package's Cleaner
// does the latter).
//
// The package is named log, like the standard library's logger, because
// that is Kafka's name for it; import it under another name (kafkalog) in
// code that also logs.
package kafkalog
