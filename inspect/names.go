package inspect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/segment"
)

// kafkaName says what Kafka's LogLoader does with a file of a partition
// directory whose name ends like a segment file's (.log, .index,
// .timeindex, .txnindex, .snapshot, or one of those with .deleted,
// .cleaned or .swap) but is not one segment.ParseFileName accepts: a base
// offset of other than 20 digits, a sign, letters, nothing. ok is false for
// a name Kafka does not look at (a .LOG, a .log.bak).
//
// Kafka picks files by suffix and reads the base offset as
// Long.parseLong of the name up to its first '.' (LogFileUtils.offsetFromFile),
// then opens the segment under its own name for that offset, "%020d.log".
// What follows was observed with oracle/kafka recover (Kafka 4.3.1), and
// TestOddSegmentNamesAgreeWithKafka replays it:
//   - a name whose prefix is not a long ("abc.log", ".log", "abc.index",
//     "abc.snapshot", "abc.log.swap"): a NumberFormatException; the log
//     does not load, and the broker takes the log directory offline;
//   - "1.log" or "000000000000000000001.log": Kafka opens (and creates,
//     empty) 00000000000000000001.log as the segment of base offset 1;
//     this file's bytes are never read, and the log end offset moves to at
//     least 1 — the records it holds are invisible;
//   - a .swap: renamed to its name without .swap, then as above;
//   - an index whose offset has no %020d.log: deleted at load, as an
//     orphan; a snapshot: read as the producer snapshot of its offset;
//   - a .deleted file: deleted at load, unread; a .cleaned one too.
func kafkaName(name string) (level finding.Level, detail string, ok bool) {
	if _, _, err := segment.ParseFileName(name); err == nil {
		return 0, "", false
	}
	prefix := name
	if i := strings.IndexByte(name, '.'); i >= 0 {
		prefix = name[:i]
	}
	offset, perr := strconv.ParseInt(prefix, 10, 64)
	nfe := func() (finding.Level, string, bool) {
		return finding.Error, fmt.Sprintf("Kafka reads the base offset of %q as Long.parseLong(%q), which fails (NumberFormatException): the broker cannot load this partition and takes its log directory offline; rename or remove the file", name, prefix), true
	}
	switch {
	case strings.HasSuffix(name, segment.DeletedSuffix):
		if !hasSegmentSuffix(strings.TrimSuffix(name, segment.DeletedSuffix)) {
			return 0, "", false
		}
		return finding.Warning, "a file left by a deletion; Kafka deletes it, unread, when it loads the log", true
	case strings.HasSuffix(name, segment.CleanedSuffix):
		if !hasSegmentSuffix(strings.TrimSuffix(name, segment.CleanedSuffix)) {
			return 0, "", false
		}
		if perr != nil {
			return nfe()
		}
		return finding.Warning, "a file left by an interrupted compaction; Kafka deletes it when it loads the log", true
	case strings.HasSuffix(name, segment.SwapSuffix):
		to := strings.TrimSuffix(name, segment.SwapSuffix)
		if !hasSegmentSuffix(to) {
			return 0, "", false
		}
		if perr != nil {
			return nfe()
		}
		level, detail, _ := numericName(to, offset)
		return level, fmt.Sprintf("Kafka completes the swap by renaming it to %s; then: %s", to, detail), true
	case !hasSegmentSuffix(name):
		return 0, "", false
	case perr != nil:
		return nfe()
	}
	return numericName(name, offset)
}

// numericName is kafkaName for a name whose prefix is the long offset.
func numericName(name string, offset int64) (finding.Level, string, bool) {
	own := func(ext string) string { return segment.FileName(offset, ext) }
	switch {
	case strings.HasSuffix(name, segment.LogSuffix):
		return finding.Error, fmt.Sprintf("not Kafka's name for a segment: Kafka reads it as the segment of base offset %d and opens (creating it empty if missing) %s instead; this file's bytes are never read, so its records are invisible, and the log end offset moves to at least %d", offset, own(segment.LogSuffix), offset), true
	case strings.HasSuffix(name, segment.SnapshotSuffix):
		return finding.Warning, fmt.Sprintf("not Kafka's name for a snapshot: Kafka reads it as the producer snapshot at offset %d (%s)", offset, own(segment.SnapshotSuffix)), true
	}
	return finding.Warning, fmt.Sprintf("not Kafka's name for an index: Kafka takes it for an index of the segment of base offset %d, deletes it as an orphan when %s is missing, and otherwise never reads it", offset, own(segment.LogSuffix)), true
}

// hasSegmentSuffix reports whether name ends with the suffix of a segment
// file kind Kafka's loader picks: .log, .index, .timeindex, .txnindex or
// .snapshot.
func hasSegmentSuffix(name string) bool {
	for _, s := range []string{segment.LogSuffix, segment.IndexSuffix, segment.TimeIndexSuffix, segment.TxnIndexSuffix, segment.SnapshotSuffix} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}
