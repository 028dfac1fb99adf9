package retention

import (
	"fmt"
	"math"
	"path"
	"time"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/segment"
)

// The kinds of TimestampWarnings, as finding names them.
const (
	// KindFarPastTimestamp: the segment's records were already older than
	// retention.ms when its file was last written. Records stamped far in
	// the past (a replayed backlog, a producer with a wrong clock, a
	// timestamp of 0) are deleted by the next check, however recently they
	// were written: timestamp-based data loss.
	KindFarPastTimestamp = finding.KindFarPastTimestamp
	// KindFutureTimestamp: the segment's newest record is stamped after
	// now. The time rule cannot delete it before that timestamp plus
	// retention.ms, and every later segment waits behind it (Kafka logs
	// "contains future timestamp(s), making it ineligible to be deleted").
	KindFutureTimestamp = finding.KindFutureTimestamp
	// KindMtimeFallback: the segment has no record timestamps, so the time
	// rule uses its file's modification time, which copying, restoring
	// or touching the file changes.
	KindMtimeFallback = finding.KindMtimeFallback
	// KindOutOfOrder: the segment's newest record is newer than the next
	// segment's, so the next segment cannot go before this one (deletion
	// is a prefix). Before package finding, its name was "out-of-order".
	KindOutOfOrder = finding.KindTimestampOrder
)

// warning is a Warning-level finding about the segment of base offset
// base, named by its .log's file name.
func warning(base int64, kind, detail string) finding.Problem {
	return finding.Problem{File: segment.FileName(base, segment.LogSuffix), Position: -1, Kind: kind, Level: finding.Warning, Detail: detail}
}

// WarningBase returns the base offset of the segment a warning of
// TimestampWarnings is about, from its File.
func WarningBase(w finding.Problem) (int64, bool) {
	base, ext, err := segment.ParseFileName(path.Base(w.File))
	return base, err == nil && ext == segment.LogSuffix
}

// TimestampWarnings returns the timestamp anomalies of a log's segments as
// seen at now (ms), as Warning-level findings whose File is the segment's
// .log file name (relative: join it with the partition directory; see
// WarningBase) and Position -1: far-past and future record timestamps, segments whose
// time rule falls back to the file's mtime, and segments newer than their
// successor. Empty segments are skipped. It is what Plan puts in
// Plan.Warnings, and what segviz verify reports.
func TimestampWarnings(st LogState, p Policy, now int64) []finding.Problem {
	var out []finding.Problem
	timeRule := p.timeRule()
	for i, s := range st.Segments {
		if s.Size == 0 {
			continue
		}
		rec := s.LargestRecordTimestamp
		switch {
		case rec < 0:
			out = append(out, warning(s.BaseOffset, KindMtimeFallback, fmt.Sprintf(
				"no record timestamps: the time rule uses the file's mtime %s, which copying or touching the file changes",
				FormatTime(s.LastModified))))
		case rec > now:
			d := fmt.Sprintf("newest record stamped %s, %s in the future", FormatTime(rec), formatAge(rec, now))
			if timeRule {
				d += fmt.Sprintf(": the time rule cannot delete this segment before %s, and every later segment waits behind it",
					FormatTime(satAdd(satAdd(rec, p.RetentionMs), 1)))
			}
			out = append(out, warning(s.BaseOffset, KindFutureTimestamp, d))
		case timeRule && s.LastModified <= now && olderThan(now, rec, p.RetentionMs) && olderThan(s.LastModified, rec, p.RetentionMs):
			out = append(out, warning(s.BaseOffset, KindFarPastTimestamp, fmt.Sprintf(
				"newest record stamped %s, but the file was written at %s: the records were already older than retention.ms %d when written, so the next check deletes them",
				FormatTime(rec), FormatTime(s.LastModified), p.RetentionMs)))
		}
		if timeRule && i+1 < len(st.Segments) {
			n := st.Segments[i+1]
			if n.Size > 0 && s.LargestTimestamp() > n.LargestTimestamp() {
				out = append(out, warning(n.BaseOffset, KindOutOfOrder, fmt.Sprintf(
					"its largest timestamp %s is older than segment %d's %s: it cannot go before that segment does",
					FormatTime(n.LargestTimestamp()), s.BaseOffset, FormatTime(s.LargestTimestamp()))))
			}
		}
	}
	return out
}

// TimeLayout is how times are printed: RFC 3339 with milliseconds, UTC.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime formats a time in ms since the epoch with TimeLayout, or
// "never" for Never.
func FormatTime(ms int64) string {
	if ms == Never {
		return "never"
	}
	return time.UnixMilli(ms).UTC().Format(TimeLayout)
}

// formatAge returns later - earlier as a duration, in words
// (finding.Duration).
func formatAge(later, earlier int64) string {
	if earlier > later {
		return "-" + formatAge(earlier, later)
	}
	d := uint64(later) - uint64(earlier)
	if d > math.MaxInt64 {
		return fmt.Sprintf("%d d", d/86_400_000)
	}
	return finding.Duration(int64(d))
}
