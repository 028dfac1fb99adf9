package serverlog

import (
	"fmt"
	"time"
)

// Kind is what an Event says happened.
type Kind uint8

// The kinds of events.
const (
	// KindRoll: the active segment was rolled (Event.Roll).
	KindRoll Kind = iota + 1
	// KindDeletion: retention deleted segments by one rule (Event.Deletion).
	KindDeletion
	// KindLogStartOffset: the log start offset moved without a deletion
	// of its own (a DeleteRecords request, a follower's leader offset,
	// a snapshot; Event.LogStartOffset).
	KindLogStartOffset
	// KindTruncation: the log was truncated, or a truncation had no
	// effect (Event.Truncation).
	KindTruncation
	// KindRecovery: the loader loaded the log (Event.Recovery).
	KindRecovery
	// KindCompaction: one pass of the log cleaner (Event.Compaction).
	KindCompaction
)

var kindNames = [...]string{KindRoll: "roll", KindDeletion: "deletion", KindLogStartOffset: "logStartOffset",
	KindTruncation: "truncation", KindRecovery: "recovery", KindCompaction: "compaction"}

// String returns the kind's name.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Event is one thing the log says happened to the partition. Exactly the
// field of its Kind is set.
type Event struct {
	Kind Kind
	// Time is the time of its first line, End that of its last (the same
	// for a one-line event), in Options.Location's reading.
	Time, End time.Time
	// File and Line say where its first line is (Line counts from 1);
	// Lines is how many log lines it was read from.
	File  string
	Line  int
	Lines int

	Roll           *Roll
	Deletion       *Deletion
	LogStartOffset *LogStartOffset
	Truncation     *Truncation
	Recovery       *Recovery
	Compaction     *Compaction
}

// Where says "file:line".
func (e Event) Where() string { return fmt.Sprintf("%s:%d", e.File, e.Line) }

// Segment is a segment as LogSegment.toString prints it.
type Segment struct {
	BaseOffset int64
	// NextOffset is the offset after its last record: the next segment's
	// base offset. The line does not print it; the parser derives it from
	// the next segment of the same event or the log start offset the event
	// moved to, and leaves -1 when it cannot.
	NextOffset int64
	// Size is its .log's size in bytes, LastModified its modification
	// time (ms) when the line was logged.
	Size         int64
	LastModified int64
	// LargestRecordTimestamp is the largestRecordTimestamp field: -1 when
	// the segment has no record timestamp, or when the broker had not
	// loaded it from the time index since it started (see the package
	// doc).
	LargestRecordTimestamp int64
}

// LargestTimestamp is what Kafka's time rule compares with retention.ms
// (LogSegment.largestTimestamp): the largest record timestamp, or the
// modification time when there is none.
func (s Segment) LargestTimestamp() int64 {
	if s.LargestRecordTimestamp >= 0 {
		return s.LargestRecordTimestamp
	}
	return s.LastModified
}

// The rules of a Deletion: the retention package's Reason strings.
const (
	RuleTime           = "time"
	RuleSize           = "size"
	RuleLogStartOffset = "logStartOffset"
)

// Deletion is one rule's deletion in one retention check
// (UnifiedLog.deleteSegments): the "Deleting segment" lines of the rule
// and the "Incremented log start offset ... due to segment deletion" line
// before them.
type Deletion struct {
	// Rule is RuleTime, RuleSize or RuleLogStartOffset.
	Rule string
	// Local is set for tiered storage's local retention ("local log
	// retention ..."): the segments were deleted from the local disk only.
	Local bool
	// RetentionMs is the retention.ms of a time deletion and
	// RetentionBytes the retention.bytes of a size deletion, as the line
	// prints them; the other is 0 (the line does not say it).
	RetentionMs    int64
	RetentionBytes int64
	// Breach is the log start offset a logStartOffset deletion names, -1
	// for the other rules.
	Breach int64
	// ByLastModified is set when a time deletion judged a segment by its
	// modification time ("based on the last modified time of the
	// segment"): it had no record timestamp.
	ByLastModified bool
	// Segments are the deleted segments, oldest first.
	Segments []Segment
	// OldLogStartOffset and NewLogStartOffset are the log start offset
	// before and after (see the package doc's Grouping); -1 when unknown.
	OldLogStartOffset int64
	NewLogStartOffset int64
}

// LogStartOffset is an "Incremented log start offset to N due to R" line
// that no deletion goes with.
type LogStartOffset struct {
	// Offset is N; Old the log start offset before it, -1 when the lines
	// did not show it.
	Offset, Old int64
	// Reason is R: Kafka's LogStartOffsetIncrementReason ("client delete
	// records request", "leader offset increment", "snapshot generated").
	Reason string
	// Local is set for "Incremented local log start offset".
	Local bool
}

// Roll is a "Rolled new log segment at offset N in T ms." line.
type Roll struct {
	// NewBaseOffset is N, the log end offset at the roll.
	NewBaseOffset int64
	// PreviousBaseOffset is the base offset of the segment the roll
	// closed: the previous roll's NewBaseOffset; -1 when the lines did not
	// show it.
	PreviousBaseOffset int64
	// Requested is set when "Rolling the active segment to make it
	// eligible for deletion" came before it: retention rolled the log to
	// delete every segment. Otherwise the reason is not in the log (Kafka
	// logs it at DEBUG).
	Requested bool
	// ElapsedMs is T.
	ElapsedMs int64
}

// The kinds of truncation.
const (
	// TruncateTo: "Truncating to offset N" (UnifiedLog.truncateTo).
	TruncateTo = "to"
	// TruncateFull: "Truncate and start at offset N, logStartOffset: M"
	// (UnifiedLog.truncateFullyAndStartAt).
	TruncateFull = "full"
	// TruncateNoEffect: "Truncating to N has no effect as the largest
	// offset in the log is M": nothing changed.
	TruncateNoEffect = "no effect"
)

// Truncation is a truncation of the log's tail, or a truncation of the
// whole log to a new start (truncateFullyAndStartAt).
type Truncation struct {
	// How is TruncateTo, TruncateFull or TruncateNoEffect.
	How string
	// Offset is N: the new log end offset.
	Offset int64
	// LogStartOffset is M for TruncateFull, -1 otherwise; Old is the log
	// start offset before, -1 when the lines did not show it.
	LogStartOffset, OldLogStartOffset int64
	// LargestOffset is M for TruncateNoEffect, -1 otherwise.
	LargestOffset int64
}

// Recovery is one load of the log by the LogLoader, from its first
// LogLoader line to LogManager's "Completed load of Log(...)".
type Recovery struct {
	// CleanShutdown is false when LogManager said "Recovering K logs from
	// D since no clean shutdown file was found" for the log's directory
	// at that start.
	CleanShutdown bool
	// Recovered are the base offsets of the segments it rechecked
	// ("Recovering unflushed segment N").
	Recovered []int64
	// Deleted are the segments it deleted ("Deleting segments as part of
	// log recovery"), BytesTruncated the invalid bytes it cut ("Truncated K
	// invalid bytes at the end of segment F during recovery").
	Deleted        []Segment
	BytesTruncated int64
	// Leftovers are the names of the leftover files it resolved (swap,
	// stray temporary and .cleaned files).
	Leftovers []string
	// LogStartOffset and LogEndOffset are those "Completed load" gives.
	LogStartOffset, LogEndOffset int64
	// Segments is the number of segments loaded.
	Segments int64
}

// Changed reports whether the load changed anything, or rechecked
// segments: an unclean shutdown, a recovered or deleted segment, bytes
// cut, a leftover resolved.
func (r *Recovery) Changed() bool {
	return !r.CleanShutdown || len(r.Recovered) > 0 || len(r.Deleted) > 0 || r.BytesTruncated > 0 || len(r.Leftovers) > 0
}

// Compaction is one pass of the log cleaner over the partition, from
// "Beginning cleaning of log P" to "Log cleaner thread i cleaned log P".
type Compaction struct {
	// Cleaner is the cleaner thread's number.
	Cleaner int
	// FirstDirtyOffset and EndOffset are the offset range the pass
	// cleaned ("offset range [a, b)"); -1 when the line was not seen.
	FirstDirtyOffset, EndOffset int64
	// Sources are the segments it replaced and Cleaned those it swapped
	// in ("Swapping in cleaned segment S for segment(s) [...]"), oldest
	// first. A source's or cleaned segment's NextOffset is the next one's
	// base offset, the last one's EndOffset.
	Sources, Cleaned []Segment
}
