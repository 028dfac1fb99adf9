package retention

import (
	"fmt"
	"math"
	"time"
)

// WarningKind names a kind of Warning.
type WarningKind string

// Kinds of warnings.
const (
	// KindFarPastTimestamp: the segment's records were already older than
	// retention.ms when its file was last written. Records stamped far in
	// the past (a replayed backlog, a producer with a wrong clock, a
	// timestamp of 0) are deleted by the next check, however recently they
	// were written: timestamp-based data loss.
	KindFarPastTimestamp WarningKind = "far-past-timestamp"
	// KindFutureTimestamp: the segment's newest record is stamped after
	// now. The time rule cannot delete it before that timestamp plus
	// retention.ms, and every later segment waits behind it (Kafka logs
	// "contains future timestamp(s), making it ineligible to be deleted").
	KindFutureTimestamp WarningKind = "future-timestamp"
	// KindMtimeFallback: the segment has no record timestamps, so the time
	// rule uses its file's modification time, which copying, restoring
	// or touching the file changes.
	KindMtimeFallback WarningKind = "mtime-fallback"
	// KindOutOfOrder: the segment's newest record is newer than the next
	// segment's, so the next segment cannot go before this one (deletion
	// is a prefix).
	KindOutOfOrder WarningKind = "out-of-order"
)

// Warning flags a segment whose timestamps make retention behave in a way
// an operator would not expect.
type Warning struct {
	BaseOffset int64
	Kind       WarningKind
	Detail     string
}

func (w Warning) String() string {
	return fmt.Sprintf("segment %d: %s: %s", w.BaseOffset, w.Kind, w.Detail)
}

// TimestampWarnings returns the timestamp anomalies of a log's segments as
// seen at now (ms): far-past and future record timestamps, segments whose
// time rule falls back to the file's mtime, and segments newer than their
// successor. Empty segments are skipped. It is what Plan puts in
// Plan.Warnings, and what segviz verify reports.
func TimestampWarnings(st LogState, p Policy, now int64) []Warning {
	var out []Warning
	timeRule := p.timeRule()
	for i, s := range st.Segments {
		if s.Size == 0 {
			continue
		}
		rec := s.LargestRecordTimestamp
		switch {
		case rec < 0:
			out = append(out, Warning{s.BaseOffset, KindMtimeFallback, fmt.Sprintf(
				"no record timestamps: the time rule uses the file's mtime %s, which copying or touching the file changes",
				FormatTime(s.LastModified))})
		case rec > now:
			d := fmt.Sprintf("newest record stamped %s, %s in the future", FormatTime(rec), formatAge(rec, now))
			if timeRule {
				d += fmt.Sprintf(": the time rule cannot delete this segment before %s, and every later segment waits behind it",
					FormatTime(satAdd(satAdd(rec, p.RetentionMs), 1)))
			}
			out = append(out, Warning{s.BaseOffset, KindFutureTimestamp, d})
		case timeRule && s.LastModified <= now && olderThan(now, rec, p.RetentionMs) && olderThan(s.LastModified, rec, p.RetentionMs):
			out = append(out, Warning{s.BaseOffset, KindFarPastTimestamp, fmt.Sprintf(
				"newest record stamped %s, but the file was written at %s: the records were already older than retention.ms %d when written, so the next check deletes them",
				FormatTime(rec), FormatTime(s.LastModified), p.RetentionMs)})
		}
		if timeRule && i+1 < len(st.Segments) {
			n := st.Segments[i+1]
			if n.Size > 0 && s.LargestTimestamp() > n.LargestTimestamp() {
				out = append(out, Warning{n.BaseOffset, KindOutOfOrder, fmt.Sprintf(
					"its largest timestamp %s is older than segment %d's %s: it cannot go before that segment does",
					FormatTime(n.LargestTimestamp()), s.BaseOffset, FormatTime(s.LargestTimestamp()))})
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

// formatAge returns later - earlier as a duration, in words.
func formatAge(later, earlier int64) string {
	if earlier > later {
		return "-" + formatAge(earlier, later)
	}
	d := uint64(later) - uint64(earlier)
	if d > uint64(math.MaxInt64/int64(time.Millisecond)) {
		return fmt.Sprintf("%d days", d/86_400_000)
	}
	return time.Duration(d * uint64(time.Millisecond)).String()
}
