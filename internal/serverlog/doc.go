// Package serverlog reads the log files of an Apache Kafka 4.3 broker —
// server.log and log-cleaner.log, as Kafka's default config/log4j2.yaml
// writes them — and yields what they say happened to one partition: the
// segment rolls, retention deletions, log start offset increments,
// truncations, recoveries and cleaner passes. `segviz history --import`
// turns the events into imported timeline instants, so that a partition
// segkit never touched still gets its history. The package uses the
// standard library only.
//
//	p := serverlog.NewParser(serverlog.Options{Partition: "payments-0", Location: time.UTC})
//	err := p.Parse(f, "server.log")           // once per file, oldest first
//	for _, ev := range p.Events() { ... }       // in time order
//	st := p.Stats()                             // lines read, used, skipped
//
// A Parser is not safe for concurrent use.
//
// # Lines
//
// Every log line is Kafka's log4j2 layout "[%d] %p %m (%c)%n":
//
//	[2026-03-02 09:00:00,123] INFO [UnifiedLog partition=payments-0, dir=/var/kafka-logs] Incremented log start offset to 37 due to segment deletion (org.apache.kafka.storage.internals.log.UnifiedLog)
//	 ^ time: yyyy-MM-dd HH:mm:ss,SSS, the    ^ level  ^ the message: [logIdent] text                                           ^ the logger
//	   broker JVM's local time, no zone
//
// The time has no zone: it is the broker JVM's default time zone
// (user.timezone, else the host's), which Options.Location must name; a
// time a daylight-saving change makes ambiguous is taken as time.Date
// takes it. A line that does not begin with "[" and such a time, after a
// line that did, continues that line's message (multi-line messages, stack
// traces: the cleaner's statistics); before any, it is skipped and
// counted. A line longer than Options.MaxLineBytes (1 MiB by default) is
// skipped and counted, and so is a message whose continuation lines would
// make it longer; memory stays bounded by that limit, plus the events.
//
// A line is about the partition P (Options.Partition, "topic-N", the
// directory's name) when its logIdent names it ("[UnifiedLog
// partition=P, dir=D]", "[LocalLog partition=P, dir=D/P]", "[LogLoader
// partition=P, dir=D]") or the message names P's directory or log
// ("Log(dir=D/P, ...)", "in log P", "segment D/P/000...log"). With
// Options.Dir set, a line that names a directory must name that log
// directory or the partition directory under it.
//
// # The messages read, and what each yields
//
// Read from Kafka 4.3.1's classes (storage/src/main/java/org/apache/kafka/
// storage/internals/log/UnifiedLog.java, LocalLog.java, LogLoader.java,
// LogSegment.java, Cleaner.java, LogCleaner.java, and core's
// kafka/log/LogManager.scala), checked against the oracle broker's own
// output (testdata/):
//
//	UnifiedLog  Incremented log start offset to N due to R          LogStartOffset (R: "segment deletion",
//	                                                                 "client delete records request", ...)
//	UnifiedLog  Deleting segment S due to log retention time Tms    Deletion, rule "time", RetentionMs T
//	            breach based on the largest record timestamp in the
//	            segment | ... based on the last modified time of the segment
//	UnifiedLog  Deleting segment S due to log retention size B      Deletion, rule "size", RetentionBytes B
//	            breach. Log size after deletion will be M.
//	UnifiedLog  Deleting segments due to log start offset N breach: Deletion, rule "logStartOffset"
//	            S, S, ...
//	            (each also with "local log ...": tiered storage's local retention, Deletion.Local)
//	LocalLog    Rolled new log segment at offset N in T ms.         Roll
//	UnifiedLog  Rolling the active segment to make it eligible for  the next Roll is Requested
//	            deletion
//	UnifiedLog  Truncating to offset N                              Truncation "to"
//	UnifiedLog  Truncating to N has no effect as the largest offset Truncation "no effect" (nothing changed)
//	            in the log is M
//	UnifiedLog  Truncate and start at offset N, logStartOffset: M   Truncation "full"
//	LogManager  Recovering K logs from D since no clean shutdown    the next loads in D are unclean
//	            file was found
//	LogLoader   Recovering unflushed segment N. ...                 Recovery.Recovered
//	LogLoader   Deleting segments as part of log recovery: S, ...   Recovery.Deleted
//	LogLoader   Found log file F from interrupted swap operation,   Recovery.Leftovers
//	            ... / Deleting stray temporary file F / Deleting invalid
//	            swap file F ... / Deleting stray .clean file F
//	LogSegment  Truncated K invalid bytes at the end of segment F   Recovery.BytesTruncated
//	            during recovery
//	LogManager  Completed load of Log(dir=D/P, ..., logStartOffset= ends the Recovery: its offsets
//	            a, logEndOffset=b) with K segments ...
//	Cleaner     Cleaner i: Beginning cleaning of log P              starts a Compaction
//	Cleaner     ... Building offset map for log P for K segments in Compaction.FirstDirtyOffset, EndOffset
//	            offset range [a, b).
//	Cleaner     ... Cleaning log P (cleaning prior to ..., discarding read, not used (Date.toString times,
//	            tombstones prior to upper bound deletion horizon ...)...  to the second)
//	Cleaner     ... Swapping in cleaned segment S for segment(s) [S, ...] Compaction.Sources, Cleaned
//	            in log Log(dir=D/P, ...)
//	CleanerThread  Log cleaner thread i cleaned log P (dirty section ends the Compaction
//	            = [a, b]) and its statistics
//
// where S is LogSegment.toString, "LogSegment(baseOffset=B, size=Z,
// lastModifiedTime=M, largestRecordTimestamp=L)". Every other line is
// read and not used.
//
// # Grouping
//
// One retention check logs, per rule that deletes, "Incremented log start
// offset to N due to segment deletion" and then one "Deleting segment"
// line per segment (UnifiedLog.deleteSegments moves the log start offset
// before it renames the files). The lines of one rule after such an
// increment (within a second of each other: they are logged in one loop)
// are one Deletion, as segkit records one clean instant per
// rule: its NewLogStartOffset is N, its OldLogStartOffset the one before
// (the last increment, load or truncation the lines showed, else the
// first deleted segment's base offset: the log start offset is a
// segment's base unless something moved it, and that would have its own
// line). Each segment's NextOffset is the next deleted segment's base, and
// the last one's is N; without the increment line (it was in an older
// file), those are -1.
//
// # What the lines do not say
//
// Values the lines do not carry are zero or -1 (for offsets and
// timestamps) in the events, and the doc comment of each field says
// which: a deletion's file.delete.delay.ms and the config of the other
// rule; a roll's reason (Kafka logs it at DEBUG) and the closed segment's
// size; a truncation's old log end offset; a recovery's recovery point;
// a cleaner pass's delete.retention.ms and records removed per reason. A
// "Deleting segment" line prints the segment's largestRecordTimestamp
// field as loaded so far: -1 for a segment whose time index the broker
// had not read since it started, unless the time rule (which loads it)
// judged the segment. Deletion segments then carry
// LargestRecordTimestamp -1 for the size and log start offset rules.
package serverlog
