// Package timeline records every action that changes a Kafka partition
// directory — a roll, a retention deletion, a compaction, a truncation, a
// recovery, a savepoint, a restore — as an instant of a timeline, after
// Apache Hudi's: an instant is (instant time, action, state), its state
// goes REQUESTED → INFLIGHT → COMPLETED, and a reader sees only
// completed instants. The timeline lives inside the partition directory,
// where a Kafka broker tolerates it, and moves with it.
//
//	tl, err := timeline.Open(vfs.OS(), "/var/kafka-logs/orders-0", timeline.Options{})
//	tx, err := tl.Begin(timeline.ActionClean, &timeline.Clean{Rule: "time", ...}) // REQUESTED: the plan
//	err = tx.Inflight()                           // INFLIGHT: before the first file changes
//	...                                           // delete the segments, sync
//	err = tx.Complete(&timeline.Clean{...})       // COMPLETED: after the last sync
//	insts, err := tl.Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionClean}})
//
// # Instants and atomicity
//
// An action that changes files writes its instant REQUESTED (Begin, with
// its plan) before it starts, INFLIGHT (Txn.Inflight) before it changes
// the first file, and COMPLETED (Txn.Complete, with its result) after its
// last change is durable. Each of these is one durable file write (a
// temporary file, synced, renamed into place, the directory synced), so
// a crash leaves the instant in the last state whose write completed,
// never between two. An instant that a crash left requested or inflight
// is returned by Pending after Open; the engine's recovery finishes it
// (Complete, when the action's changes are all in place) or rolls it back
// (Txn.Rollback, once they are undone: a requested instant changed
// nothing). That outcome is itself an instant: the completion, or a
// completed ActionRollback instant whose Rollback plan names the instant
// rolled back, its state and why. A rolled-back instant is never
// returned by Instants; its rollback is.
//
// Instant times are epoch milliseconds plus a sequence number (see
// InstantTime): unique, and increasing in the order instants are begun
// and completed, whatever the clock does. Instants orders by the
// requested time; Completed gives the completion order.
//
// # Where it lives, and why there
//
//	<log.dir>/<topic>-<partition>/            the partition directory
//	    00000000000000000000.log ...         Kafka's files
//	    .segkit/timeline/                    DirName: the active timeline
//	        17180000000000000.roll.requested
//	        17180000000000000.roll.inflight
//	        17180000000000000_17180000000050000.roll
//	        history/                         HistoryDirName: the archived timeline
//	            17170000000000000_17179999000000000_1.archive
//	            17179999500000000_17179999990000000_0.archive
//
// Kafka 4.3's LogLoader lists the partition directory and skips every
// entry that is not a regular file (File.isFile in each pass of
// removeTempFilesAndCollectSwapFiles, the swap recovery and
// loadSegmentFiles; ProducerStateManager lists with Files.isRegularFile),
// so it never looks into a subdirectory. Beside the segments, files would
// not be safe: the loader deletes any *.deleted and *.cleaned file, and an
// interrupted swap deletes every file whose name parses to an offset in
// the swapped range (digits up to the first '.', which instant names
// are); files ending in .log, .index, .timeindex, .txnindex or .snapshot
// are taken for segment files. A directory at the log directory's root
// would stop the broker from starting (LogManager.loadLogs takes every
// directory there for a partition). The oracle test
// TestTimelineSurvivesBroker (oracle/timeline_test.go) has a Kafka 4.3.1
// broker load such a partition directory with full recovery, serve it,
// roll it, compact it and delete from it by retention, and checks that
// Kafka's files end up as those of a partition without a timeline and
// the timeline's files as they were. Kafka renames a partition directory
// whole (stray, -delete, -future), so the timeline goes with it; when a
// topic is deleted, it is deleted with it. A replica moved to another log
// directory (ALTER_REPLICA_LOG_DIRS) is refetched into a new directory,
// without it.
//
// # File names
//
// Active files are named so that a listing orders them, as in Hudi's
// layout v2:
//
//	<time>.<action>.requested      requested
//	<time>.<action>.inflight       inflight
//	<time>_<completed>.<action>    completed
//
// where <time> and <completed> are 17-digit instant times (13 digits of
// epoch milliseconds, 4 of sequence) and <action> one of the Action
// names. Archive files are <min>_<max>_<layer>.archive, <min> and <max>
// the first and last instant time they hold and <layer> one digit (Hudi's
// LSM timeline). Names ending in ".tmp" are interrupted writes, removed by
// Open; names that do not start with a digit are not the timeline's and
// are left alone; any other name is an error.
//
// # Record lines
//
// Every file is made of record lines. A record line is
//
//	offset  width  field
//	0       8      CRC-32C (Castagnoli) of the JSON, lowercase hex
//	8       1      ' '
//	9       n      the JSON: one object, no newline in it
//	9+n     1      '\n'
//
// An active file holds exactly one record line, the instant:
//
//	{"v":1,"time":"17180000000000000","action":"clean","state":"completed",
//	 "completed":"17180000000050000","plan":{...},"result":{...}}
//
// "v" is 1; "state" is "requested", "inflight" or "completed"; "completed"
// and "result" are present in completed records only; "plan" is the
// payload Begin was given and "result" the one Complete was given, each
// the JSON of the action's payload type (Roll, Clean, Compaction,
// Truncate, Recovery, Tier, Savepoint, Restore, Rollback) or null. The
// record must agree with its file name. Unknown fields are an error in
// the record and ignored in payloads (later versions may add payload
// fields).
//
// An archive file's first record line is its header,
//
//	{"v":1,"kind":"archive","count":N,"min":"<min>","max":"<max>","layer":L,"maxTime":"<t>"}
//
// (maxTime: the greatest time, requested or completed, of its instants),
// followed by N record lines of completed instants in increasing time,
// the first at min and the last at max: the active files' lines, moved
// verbatim.
//
// Active files over 4 MiB and archive files over 64 MiB are not read.
// Every decoding error is a *format.CorruptionError naming the file and
// the byte, wrapping format.ErrCRC, format.ErrTruncated,
// format.ErrTooLarge or format.ErrInvalid (and ErrUnknownAction for an
// action this version does not know).
//
// # Archival
//
// When a completion leaves more than Options.ArchiveAfter completed
// instants in the active timeline (default 100), the oldest are moved
// into one layer-0 archive file, down to ArchiveAfter/2; archival never
// passes the earliest pending instant, so the archived timeline is a
// prefix of the timeline and the archive files cover disjoint,
// increasing ranges. When a layer holds Options.MergeAfter files (default
// 10), the oldest of them are merged into one file of the next layer,
// unless that file would be over Options.MergeLimitBytes (16 MiB). So the
// active timeline holds at most ArchiveAfter completed instants plus the
// pending ones, and the history a few files per layer. An instant left
// pending holds archival back, as in Hudi: the completed instants after
// it stay active until it is completed or rolled back, which is why the
// engine resolves Pending when it opens the partition. Each step writes
// the new file durably before it removes the files it replaces; Open
// removes what a crash left of them, after checking that the instants are
// in the new file. Readers see the active and archived timelines as one:
// Instants reads only the archive files whose range its Filter may
// choose from.
//
// # Crash safety
//
// The protocol assumes what package vfs's crash model gives: a synced
// file's data and a synced directory's entries survive a power cut, a
// rename is atomic. Once Begin, Inflight, Complete or Rollback returns
// nil, its state survives; a crash before leaves the previous one.
// TestCrashAtEveryWritePoint crashes at every write and sync of a
// workload of begins, completions, rollbacks, archivals and merges and
// checks every image: it opens, no completion that returned is lost,
// nothing not completed is seen, no instant is lost or seen twice. After
// a failed write the Timeline refuses further writes (ErrFailed): what is
// on disk is known again only after Open.
//
// # Noted instants: rolls
//
// A roll happens at every segment.bytes; three durable writes per roll
// would cost more than the roll. Note records a roll completed at once,
// in one file written without a sync — by a goroutine of the timeline's,
// so that the roll does not wait for the filesystem's metadata journal,
// and which stops when it has nothing left to write — made durable by the
// next Sync (the engine's Flush and Close) or before the next durable
// write (Begin, Inflight, Complete, Rollback, Import), which wait for it,
// so a durable instant never follows one a crash can lose. A crash before then may lose a noted
// instant or tear its file; Open removes a noted file that is cut short
// or zero-filled (any other damage is an error) and lists it in Dropped.
// A roll needs no requested or inflight state: the partition's own
// recovery completes or undoes an interrupted roll from its files, and
// the engine (kafkalog, Options.Timeline) records again, as a roll whose
// reason says it was recovered, every segment no roll instant names.
// TestNoteCrashAtEveryWritePoint crashes a workload of notes, syncs and
// durable instants at every write and sync.
//
// # Imported instants
//
// Import records a completed instant that another record of a change
// gives, such as a broker's log line: its instant time is the one the
// record gives (the millisecond, with the first free sequence number),
// and its record carries "imported":true (Instant.Imported). It must come
// after the archived timeline's end. An imported instant is otherwise
// like any other.
//
// # Savepoints and holds
//
// A completed savepoint instant (Savepoint) is a legal hold on the
// offsets FirstOffset to LastOffset: retention and compaction do not
// remove the segments that hold them, nor, since Kafka deletes only a
// prefix of the log, any later segment. A later savepoint instant whose
// Release names it releases the hold. Holds returns the holds in force.
//
// # Concurrency
//
// A Timeline is safe for concurrent use; its mutations are serialised
// and its readers run in parallel. One Timeline writes a partition's
// timeline at a time: the engine holds the partition's lock
// (kafkalog.LockPartition). Other processes may open it ReadOnly while it
// is written: a load that finds a file gone (archived or merged meanwhile)
// loads again. A read-only Timeline shows the timeline as of its last
// load.
package timeline
