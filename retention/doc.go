// Package retention deletes old segments from a log as Kafka's time, size
// and log-start-offset retention does, and answers the question Kafka
// itself does not: until when can a record still be read?
//
// Kafka deletes whole segments, so a record outlives retention.ms by up to
// segment.ms (the time its segment keeps taking appends) plus a retention
// check interval; on a quiet topic that can be a week. Plan says what a
// check does now, ReadableUntil when each segment (and so each offset)
// stops being readable, and WorstCase what a topic config allows at a
// given traffic: the date by which a record is gone, and the disk a
// partition can take.
//
//	p := retention.PolicyFrom(l.Config(), config.DefaultBroker())
//	st, _ := retention.StateOf(l)                   // or a LogState built by hand
//	plan, _ := p.Plan(st, now)                      // pure: what a check at now deletes
//	err := retention.Apply(l, plan)                 // moves the start offset, renames to .deleted
//	f, _ := retention.ReadableUntil(st, p, p.NewSchedule(brokerStart), now)
//	b, _ := f.ForOffset(72)                         // b.ReadableUntil, b.Explanation
//
// A Cleaner runs the checks on schedule for a set of logs, on an injectable
// clock; Simulate runs a steady traffic through the model (or the engine)
// and returns the timeline of rolls and deletions.
//
// ApplyRecorded carries a plan out as Apply does and records it on a
// partition's timeline (package timeline): one clean instant per rule
// that deletes — requested with its plan, inflight before the first file
// changes, completed after the last sync — and the roll before deleting
// every segment. A Cleaner records its checks this way for each log
// opened with its timeline (kafkalog Options.Timeline), as "segviz
// retention --apply" does.
//
// # The rules
//
// Kafka's UnifiedLog.deleteOldSegments (core/src/main/scala/kafka/log/
// UnifiedLog.scala, now storage/src/main/java/org/apache/kafka/storage/
// internals/log/UnifiedLog.java) runs, at each check:
//
//  1. deleteLogStartOffsetBreachedSegments, always: a segment goes when the
//     next segment's base offset is at or below the log start offset (moved
//     by DeleteRecords, or checkpointed by a deletion a crash cut short).
//  2. deleteRetentionSizeBreachedSegments, when cleanup.policy has delete
//     and retention.bytes ≥ 0: if the log (the sum of its segments' sizes,
//     taken once) is at least retention.bytes, segments go from the oldest
//     while size − retention.bytes − (what went) − segment ≥ 0. What stays
//     is at least retention.bytes: the rule is a floor, and a partition
//     holds up to retention.bytes plus one segment.
//  3. deleteRetentionMsBreachedSegments, when cleanup.policy has delete and
//     retention.ms ≥ 0: a segment goes when now − its largest timestamp >
//     retention.ms. The largest timestamp is the largest record timestamp
//     (the time index's last entry), or the .log file's mtime when the
//     segment has no timestamps.
//
// Each rule runs on what the previous one left, through deletableSegments:
//
//  4. segments go only as a prefix: the walk from the oldest stops at the
//     first segment the rule keeps;
//  5. only while the high watermark reaches the segment's upper bound (the
//     next segment's base, or the log end offset for the active segment),
//     so the log start offset never passes the high watermark;
//  6. the empty active segment is never deleted; when every segment goes,
//     the log rolls a new active segment first (deleteSegments);
//  7. a negative retention.ms or retention.bytes disables that rule; a
//     cleanup.policy without delete (compact, or empty) leaves only rule 1.
//
// Deletion (UnifiedLog.deleteSegments, LocalLog.removeAndDeleteSegments):
// the log start offset moves to the first segment kept, and is
// checkpointed, before any file goes; the segment files are renamed to
// .deleted and removed file.delete.delay.ms (60 s) later; the producer
// snapshots below the new start go too. Apply does this through
// log.DeleteSegments, so a crash at any point leaves a log that opens
// (stray .deleted files are removed at open, and a checkpointed start
// offset hides segments the next check then deletes by rule 1).
//
// Scheduling (LogManager.startup): the "kafka-log-retention" task runs
// cleanupLogs first log.initial.task.delay.ms (30 s) after the broker
// starts, then every log.retention.check.interval.ms (5 min) at a fixed
// rate. Compacted logs are skipped there; the log cleaner's thread applies
// the same rules to compact,delete logs.
//
// # Readable until
//
// A segment other than the active one has a final largest timestamp L: it
// goes at the first check after L + retention.ms, and not before the
// segments ahead of it (rule 4). The active segment can still take
// records until a new one is more than segment.ms newer than its first
// batch, so its newest record can be as late as that; then it rolls and
// the same holds. Hence, for records stamped when written, the lifetime of
// a record is at most
//
//	min(segment.ms, time to fill segment.bytes) + retention.ms + check interval
//
// and its bytes stay on disk file.delete.delay.ms longer. ReadableUntil
// computes each segment's time by running Plan check after check; it is
// exact for a log nothing more is appended to (IfIdle), and an upper bound
// otherwise (IfAppendsContinue), with one exception that keeps it in
// agreement with Plan: an active segment that a check now deletes is
// readable until the next check, which deletes it unless records reach it
// first; IfAppendsContinue and the explanation give the later time they
// would keep it to. An active segment whose first batch is more than
// segment.ms old takes no more records (the next one rolls a new
// segment), so appends cannot keep it. Records stamped far in the past go
// at the next check, however recently they were written; records stamped
// in the future make their segment, and every later one, wait:
// TimestampWarnings flags both.
//
// # Worked example: the payments topic
//
// retention.ms=60000, segment.ms=180000, one record every 5 s (plus a few
// ms of producer skew); the broker checks at 1:01, 6:01, 11:01, ...
//
//	0:00   offset 37 is written and opens segment 37
//	       (ReadableUntil: 3:00 + 1:00 → first check after 4:00 = 6:01)
//	2:55   offset 72 is written: the segment's newest record
//	3:00   offset 73 is more than segment.ms after offset 37: segment 37 rolls
//	3:55   offset 72 is one minute old: segment 37 qualifies
//	6:01   the check deletes segment 37: log start offset 73, files .deleted
//	7:01   file.delete.delay.ms later the files are removed
//
// Offset 37 was written at 0:00 with retention.ms of one minute, and was
// readable until 6:01.
//
// # Savepoints (legal holds)
//
// A savepoint of the partition's timeline (timeline.Savepoint, listed by
// timeline.Timeline.Holds) pins a range of offsets. LogState.Holds
// carries the holds in force, and every rule stops at the first segment
// holding a pinned offset: that segment is not deleted, and since Kafka
// deletes only a prefix of the log, neither is any later one. Plan.Held
// lists them all, each naming its hold (`held by savepoint "L" (T)`, or
// `kept: segment B before it is held by savepoint "L" (T)`) and the rule
// the hold stops. The size rule still counts the held segments' bytes:
// it deletes what it would before the hold and nothing from it on, so a
// held log may stay above retention.bytes. ReadableUntil gives the held
// segments Never, with HeldBy and the time they would go if the holds
// were released now (IfReleased). Once a hold is released, the next check
// deletes what a plan without it deletes. Apply refuses a plan that
// deletes a pinned offset (ErrHeld); a Cleaner reads holds through
// SetHolds (HoldsFromTimeline), and StateOf from a log opened with its
// timeline.
//
// # Concurrency
//
// Policy, LogState, Plan, Forecast and the functions over them are plain
// values and safe for concurrent use. Apply and a Cleaner's checks delete
// from a log: like Kafka, which plans and deletes under the log's lock,
// they must not run concurrently with appends to that log (the engine's
// single-writer contract). A Cleaner's methods may be called from any
// goroutine; it starts none itself.
package retention
