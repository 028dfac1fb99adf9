package historyjson

import (
	"fmt"
	"strings"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
)

// Facts is what an offset's answer reads from the log itself.
type Facts struct {
	LogStartOffset, LogEndOffset int64
	// ActiveBase is the active segment's base offset.
	ActiveBase int64
	// Present says a record with the offset is in the log; Timestamp is
	// its timestamp (or the next record's when it is not present; -1 when
	// no record was read).
	Present   bool
	Timestamp int64
}

// readBytes is the size of the Reads ReadFacts makes, kafkalog.Records'.
const readBytes = 1 << 20

// ReadFacts reads the log's offsets and whether a record has offset n:
// the records from n's entry on, until the first at or above n, as
// kafkalog.Log.Records(n) yields them. maxDecompressed bounds the
// decompressed size of one batch (0: record.DefaultMaxDecompressed, what
// Records allows), so that a caller with a memory budget can keep to it.
func ReadFacts(l *kafkalog.Log, n int64, maxDecompressed int) (Facts, error) {
	f := Facts{LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset(), ActiveBase: l.ActiveSegment().BaseOffset(), Timestamp: -1}
	if n < f.LogStartOffset || n >= f.LogEndOffset {
		return f, nil
	}
	var (
		buf  []byte
		s    record.Scanner
		it   record.EntryIterator
		r    record.Record
		next = n
	)
	it.V2.MaxDecompressed, it.Legacy.MaxDecompressed = maxDecompressed, maxDecompressed
	for next < l.LogEndOffset() {
		res, err := l.Read(next, readBytes, buf[:0], kafkalog.ReadOptions{})
		if err != nil {
			return f, err
		}
		if len(res.Records) == 0 {
			return f, nil
		}
		buf = res.Records
		before := next
		s.Reset(res.Records, "", 0)
		for s.Next() {
			e := s.Entry()
			it.Reset(e)
			for it.Next(&r) {
				if r.Offset >= n {
					f.Present, f.Timestamp = r.Offset == n, r.Timestamp
					return f, nil
				}
			}
			if err := it.Err(); err != nil {
				return f, err
			}
			next = max(next, e.LastOffset()+1)
		}
		if err := s.Err(); err != nil {
			return f, err
		}
		if next == before {
			return f, nil // no whole entry at or above next
		}
	}
	return f, nil
}

// Offset is `segviz history --offset N --json`; its field names are part
// of the command's interface. Instant times are epoch milliseconds; a
// pointer is null when there is none: RemovedBy, Rule and At while the
// offset is readable or when no instant recorded its removal, WrittenBy
// when no recorded roll closed its segment.
type Offset struct {
	Offset    int64   `json:"offset"`
	Readable  bool    `json:"readable"`
	WrittenBy *int64  `json:"writtenBy"`
	RemovedBy *int64  `json:"removedBy"`
	Rule      *string `json:"rule"`
	At        *int64  `json:"at"`
}

// Answer is what the timeline and the log say about one offset.
type Answer struct {
	Offset   int64
	Readable bool
	// Written is the roll that closed the offset's segment, if recorded.
	Written *timeline.Instant
	// Removed is the instant that made the offset unreadable, if
	// recorded, and Rule its rule ("time", "size", "logStartOffset",
	// "truncate").
	Removed *timeline.Instant
	Rule    string
	// Why says in words how the answer was reached.
	Why string
	// Facts are the log's, which the answer was reached from.
	Facts Facts
}

// JSON returns the answer as `segviz history --offset N --json` prints it.
func (a Answer) JSON() Offset {
	out := Offset{Offset: a.Offset, Readable: a.Readable}
	if a.Written != nil {
		v := a.Written.Time.Millis
		out.WrittenBy = &v
	}
	if a.Removed != nil {
		v, at, rule := a.Removed.Time.Millis, a.Removed.Completed.Millis, a.Rule
		out.RemovedBy, out.At, out.Rule = &v, &at, &rule
	}
	return out
}

// Lookup answers for offset n from the completed instants insts (in time
// order) and the log's facts f. The instants it names point into insts.
func Lookup(n int64, insts []timeline.Instant, f Facts) Answer {
	a := Answer{Offset: n, Readable: f.Present, Facts: f}
	found := func(i int, rule, why string) {
		a.Removed, a.Rule, a.Why = &insts[i], rule, why
	}
	switch {
	case f.Present:
		a.Why = fmt.Sprintf("readable: the log holds offsets %d to %d", f.LogStartOffset, f.LogEndOffset-1)
	case n < f.LogStartOffset:
		// The instant that moved the log start offset past n.
		for i, inst := range insts {
			switch x := PayloadOf(inst).(type) {
			case *timeline.Clean:
				// A local deletion of a tiered partition left the records
				// readable from the remote: it removed nothing.
				if !x.Local && x.OldLogStartOffset <= n && n < x.NewLogStartOffset {
					found(i, x.Rule, cleanWhy(x))
				}
			case *timeline.Truncate:
				if x.OldLogStartOffset <= n && n < x.NewLogStartOffset {
					found(i, "truncate", fmt.Sprintf("the log was truncated (%s): log start offset %d -> %d", x.Reason, x.OldLogStartOffset, x.NewLogStartOffset))
				}
			case *timeline.Tier:
				// Tiered storage: the local copy went by local retention
				// while the record stayed readable from the remote; the
				// remote deletion is what made it unreadable.
				if s := x.Segment; x.Op == timeline.TierDelete && s.BaseOffset <= n && n < s.NextOffset {
					found(i, x.Rule, fmt.Sprintf("total retention (rule %s) deleted remote segment %d (%s) from %s", x.Rule, s.BaseOffset, OffsetRange(s.BaseOffset, s.NextOffset), x.Remote))
				}
			}
			if a.Removed != nil {
				break
			}
		}
		if a.Removed != nil {
			break
		}
		// Or the one that deleted its segment once the log start offset
		// had passed it by a change segkit did not record.
		for i, inst := range insts {
			if x, ok := PayloadOf(inst).(*timeline.Clean); ok && !x.Local && cleanCovers(x, n) {
				found(i, x.Rule, cleanWhy(x)+fmt.Sprintf("; the log start offset was already %d, past offset %d, moved by a change the timeline does not hold (a DeleteRecords request, a broker, or a deletion before the timeline began): the offset was not readable before this instant either", x.OldLogStartOffset, n))
				break
			}
		}
		if a.Removed == nil {
			a.Why = fmt.Sprintf("below the log start offset %d, and no instant of the timeline removed it: it was removed by something segkit did not record (a broker's retention, a DeleteRecords request, or a deletion before the timeline began)", f.LogStartOffset)
		}
	case n >= f.LogEndOffset:
		for i := len(insts) - 1; i >= 0; i-- {
			if x, ok := PayloadOf(insts[i]).(*timeline.Truncate); ok && x.NewLogEndOffset <= n && n < x.OldLogEndOffset {
				found(i, "truncate", fmt.Sprintf("the log was truncated (%s): log end offset %d -> %d", x.Reason, x.OldLogEndOffset, x.NewLogEndOffset))
				break
			}
		}
		if a.Removed == nil {
			a.Why = fmt.Sprintf("past the log end offset %d: not written yet (or cut by a truncation the timeline does not hold)", f.LogEndOffset)
		}
	default:
		var by []string
		for _, inst := range insts {
			if x, ok := PayloadOf(inst).(*timeline.Compaction); ok {
				for _, s := range x.Sources {
					if s.BaseOffset <= n && n < s.NextOffset {
						by = append(by, inst.Time.String())
						break
					}
				}
			}
		}
		a.Why = fmt.Sprintf("within the log (offsets %d to %d), but no record has offset %d: compaction removed it", f.LogStartOffset, f.LogEndOffset-1, n)
		if len(by) > 0 {
			a.Why += "; the compaction instants that covered it: " + strings.Join(by, ", ") + " (which one removed it is not recorded)"
		} else {
			a.Why += ", a compaction the timeline does not hold"
		}
	}
	// The roll that closed its segment: the last before its removal.
	for i, inst := range insts {
		if a.Removed != nil && inst.Time.Compare(a.Removed.Time) > 0 {
			break
		}
		if x, ok := PayloadOf(inst).(*timeline.Roll); ok && x.Closed != nil {
			end := x.Closed.NextOffset
			if end <= x.Closed.BaseOffset {
				end = x.NewBaseOffset
			}
			if x.Closed.BaseOffset <= n && n < end {
				a.Written = &insts[i]
			}
		}
	}
	return a
}

// cleanCovers reports whether one of a Clean's segments held offset n.
func cleanCovers(c *timeline.Clean, n int64) bool {
	for _, s := range c.Segments {
		if s.BaseOffset <= n && n < s.NextOffset {
			return true
		}
	}
	return false
}

// cleanWhy says what a Clean did: the check, its rule and config, the
// segments it deleted and the log start offset it moved.
func cleanWhy(c *timeline.Clean) string {
	var segs []string
	for _, s := range c.Segments {
		segs = append(segs, fmt.Sprintf("segment %d (%s, %d bytes, largest timestamp %s)", s.BaseOffset, OffsetRange(s.BaseOffset, s.NextOffset), s.Size, retention.FormatTime(s.LargestTimestamp)))
	}
	return fmt.Sprintf("the retention check at %s (rule %s: %s; config in force: retention.ms=%d retention.bytes=%d file.delete.delay.ms=%d) deleted %s; log start offset %d -> %d",
		retention.FormatTime(c.Now), c.Rule, RuleConfig(c.Rule, c.Config), c.Config.RetentionMs, c.Config.RetentionBytes, c.Config.FileDeleteDelayMs,
		strings.Join(segs, ", "), c.OldLogStartOffset, c.NewLogStartOffset)
}

// Text is the answer as `segviz history --offset N` prints it for the
// partition directory dir: a headline, the why (for an offset no longer
// readable) and where it was written, one line each, each ending in a
// newline.
func (a Answer) Text(dir string) string {
	var b strings.Builder
	n, f := a.Offset, a.Facts
	switch {
	case a.Readable:
		ts := "its record has no timestamp"
		if f.Timestamp >= 0 {
			ts = "its record's timestamp is " + retention.FormatTime(f.Timestamp)
		}
		fmt.Fprintf(&b, "offset %d of %s: readable (log start offset %d, log end offset %d); %s\n",
			n, dir, f.LogStartOffset, f.LogEndOffset, ts)
	case a.Removed != nil:
		fmt.Fprintf(&b, "offset %d of %s: not readable: removed by instant %s (%s, completed %s at %s), rule %s\n",
			n, dir, a.Removed.Time, a.Removed.Action, a.Removed.Completed, retention.FormatTime(a.Removed.Completed.Millis), a.Rule)
	default:
		fmt.Fprintf(&b, "offset %d of %s: not readable; no instant recorded its removal\n", n, dir)
	}
	if !a.Readable {
		fmt.Fprintf(&b, "  %s\n", a.Why)
	}
	roll, _ := a.writtenRoll()
	switch {
	case roll != nil:
		fmt.Fprintf(&b, "  written before %s: the roll of instant %s (%s) closed its segment %d\n",
			retention.FormatTime(a.Written.Time.Millis), a.Written.Time, roll.Reason, roll.Closed.BaseOffset)
	case a.Readable && n >= f.ActiveBase:
		fmt.Fprintf(&b, "  written into the active segment %d, which still takes appends\n", f.ActiveBase)
	case a.Readable || a.Removed != nil:
		fmt.Fprintln(&b, "  the roll that closed its segment is not recorded (it was made by a broker, or by a writer that kept no timeline, or before the timeline began)")
	}
	return b.String()
}

// writtenRoll is the Roll payload of a.Written (Lookup sets Written only
// to such a roll, with its Closed segment).
func (a Answer) writtenRoll() (*timeline.Roll, bool) {
	if a.Written == nil {
		return nil, false
	}
	r, ok := PayloadOf(*a.Written).(*timeline.Roll)
	if !ok || r.Closed == nil {
		return nil, false
	}
	return r, true
}
