// Package retentionapply runs one retention check on a partition for real
// and records what it did in the partition's timeline: the code path of
// "segviz retention --apply", in a package so that tests drive it over a
// simulated clock as the command runs it once.
//
//	l, _ := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Locked: true, Clock: clk, Timeline: true})
//	// l.LoadReport().Resolved: what Open did with an interrupted run's instants
//	rep, err := retentionapply.Check(l, l.Timeline(), policy, now)
//	// rep.Plan: what was deleted; rep.Instants: what was recorded
//
// # What a check records
//
// Check plans with retention.Policy.Plan over retention.StateOf(l) and
// carries the plan out as Kafka's UnifiedLog.deleteOldSegments does: each
// rule (log start offset, then retention.bytes, then retention.ms) deletes
// its own prefix with its own deleteSegments, so each rule that deletes is
// one timeline.ActionClean instant, whose timeline.Clean plan names the
// rule, the config in force, the check's time, the segments (base and next
// offsets, sizes, the largest timestamps the time rule compared) and the
// log start offset before and after. Each instant goes
//
//	Begin (REQUESTED, the plan) → Inflight → retention.Apply → Complete (the result)
//
// Inflight is durable before the first file changes, and Complete follows
// Apply's last sync (the log start offset checkpoint, the renames to
// .deleted, the directory sync). When a rule deletes every segment,
// Kafka's deleteSegments rolls first: that roll is its own
// timeline.ActionRoll instant (reason RollReason), completed before the
// clean that follows it begins — noted by the engine (l.RollFor) when tl is
// the log's own timeline, begun and completed around l.Roll otherwise.
//
// # Savepoints
//
// Check plans with the holds in force in tl (timeline.Timeline.Holds):
// the first segment a savepoint pins an offset of stays, and so does
// every later one (Plan.Held names the hold for each). Apply reads the
// holds again and refuses, recording nothing, a plan that deletes a
// pinned offset (retention.ErrHeld). The caller's lock keeps a savepoint
// from being taken between the two. Releasing a savepoint is itself an
// instant; the next Check then deletes as Kafka would.
//
// # The .deleted files
//
// retention.Apply renames the deleted segments' files to .deleted; the
// log removes them once file.delete.delay.ms has passed on its clock, and
// Close removes every one still pending. The package leaves them to the
// log: a caller that closes the log at once (a one-shot command) removes
// them without waiting the delay.
//
// # Interrupted runs
//
// A crash, or an error midway, leaves the instant requested or inflight.
// The next kafkalog.Open of the partition with Options.Timeline (under
// the partition's lock, before the next check) finishes the instants an
// earlier run left (LoadReport.Resolved), from what the loaded log shows:
//
//   - requested: nothing had changed (Inflight precedes the first change),
//     so it is rolled back;
//   - an inflight clean: the first change Apply makes is the durable move
//     of the log start offset, so if the log's start offset is at or past
//     the plan's new one, the deletion took effect (records below it are no
//     longer readable, and segments still on disk are deleted by the next
//     check's log-start-offset rule) and the instant is completed;
//     otherwise nothing had changed and it is rolled back;
//   - an inflight roll: completed if the log has a segment at the roll's
//     new base offset (or its start offset has passed it), rolled back
//     otherwise.
//
// (kafkalog's doc says how it judges the other actions.)
//
// # Concurrency
//
// Like retention.Apply, Check changes the log and must
// not run concurrently with appends to it; the caller holds the
// partition's lock (kafkalog.LockPartition) for the log and the timeline.
package retentionapply
