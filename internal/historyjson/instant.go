package historyjson

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
)

// Instant is one line of `segviz history --json`: a completed instant.
// Its field names are part of the command's interface.
type Instant struct {
	// Instant and Completed are the requested and completed instant times,
	// in epoch milliseconds (the sequence number dropped).
	Instant   int64  `json:"instant"`
	Completed int64  `json:"completed"`
	Action    string `json:"action"`
	State     string `json:"state"`
	// Imported marks an instant rebuilt from another record of the change
	// (a broker's log, by `segviz history --import`) rather than written
	// when the change was made: its times are those the record gives.
	Imported bool `json:"imported"`
	// Detail is the instant's recorded result, or its plan when it has
	// none, or {} without either.
	Detail json.RawMessage `json:"detail"`
}

// InstantOf describes an instant: its detail is its result, or its plan
// when it has no result.
func InstantOf(inst timeline.Instant) Instant {
	out := Instant{
		Instant: inst.Time.Millis, Completed: inst.Completed.Millis,
		Action: string(inst.Action), State: inst.State.String(), Imported: inst.Imported,
		Detail: json.RawMessage("{}"),
	}
	if p := PayloadOf(inst); p != nil {
		// A payload that does not marshal to an object (it always does
		// today) keeps the {} rather than breaking the line's shape.
		if b, err := json.Marshal(p); err == nil && len(b) > 0 && b[0] == '{' {
			out.Detail = b
		}
	}
	return out
}

// PayloadOf is an instant's result, or its plan when it has none.
func PayloadOf(inst timeline.Instant) timeline.Payload {
	if inst.Result != nil {
		return inst.Result
	}
	return inst.Plan
}

// Summary says in one line what an instant did: the WHAT column of
// `segviz history` and the lane's label. A payload it has no sentence
// for is printed as its JSON.
func Summary(inst timeline.Instant) string {
	p := PayloadOf(inst)
	switch x := p.(type) {
	case *timeline.Clean:
		var segs []string
		for _, s := range x.Segments {
			segs = append(segs, fmt.Sprintf("%d (%s)", s.BaseOffset, OffsetRange(s.BaseOffset, s.NextOffset)))
		}
		if x.Local {
			return fmt.Sprintf("local retention, %s rule (local.%s): deleted the local copies of segment(s) %s, still in the remote store; local log start offset %d -> %d",
				x.Rule, RuleConfig(x.Rule, x.Config), strings.Join(segs, ", "), x.OldLogStartOffset, x.NewLogStartOffset)
		}
		return fmt.Sprintf("%s rule (%s): deleted segment(s) %s; log start offset %d -> %d",
			x.Rule, RuleConfig(x.Rule, x.Config), strings.Join(segs, ", "), x.OldLogStartOffset, x.NewLogStartOffset)
	case *timeline.Roll:
		s := fmt.Sprintf("%s: new active segment at %d", x.Reason, x.NewBaseOffset)
		if x.Closed != nil {
			s += fmt.Sprintf(", closing segment %d (%s)", x.Closed.BaseOffset, OffsetRange(x.Closed.BaseOffset, x.Closed.NextOffset))
		}
		return s
	case *timeline.Rollback:
		return fmt.Sprintf("rolled back the %s instant %s (%s): %s", x.InstantAction, x.Instant, x.InstantState, x.Reason)
	case *timeline.Savepoint:
		if x.Release != nil {
			return fmt.Sprintf("released the hold of savepoint %q (%s) on offsets %d-%d", x.Label, *x.Release, x.FirstOffset, x.LastOffset)
		}
		return fmt.Sprintf("savepoint %q: a hold on offsets %d-%d (and every later segment)", x.Label, x.FirstOffset, x.LastOffset)
	case *timeline.Truncate:
		return fmt.Sprintf("truncated (%s): log end offset %d -> %d, log start offset %d -> %d", x.Reason, x.OldLogEndOffset, x.NewLogEndOffset, x.OldLogStartOffset, x.NewLogStartOffset)
	case *timeline.Compaction:
		var n int64
		for _, v := range x.RecordsRemoved {
			n += v
		}
		return fmt.Sprintf("compacted %d segment(s) from offset %d to %d: %d record(s) removed", len(x.Sources), x.FirstDirtyOffset, x.EndOffset, n)
	case *timeline.Recovery:
		return fmt.Sprintf("recovered the log (offsets %d to %d): %d segment(s) rechecked, %d bytes truncated, %d segment(s) deleted", x.LogStartOffset, x.LogEndOffset, len(x.Recovered), x.BytesTruncated, len(x.Deleted))
	case *timeline.Restore:
		return fmt.Sprintf("restored to savepoint %s: log end offset %d -> %d", x.Savepoint, x.OldLogEndOffset, x.NewLogEndOffset)
	case *timeline.Tier:
		s := x.Segment
		switch x.Op {
		case timeline.TierCopy:
			return fmt.Sprintf("copied segment %d (%s, %d bytes) to the remote %s", s.BaseOffset, OffsetRange(s.BaseOffset, s.NextOffset), s.Size, x.Remote)
		case timeline.TierDelete:
			return fmt.Sprintf("deleted remote segment %d (%s) from %s by the %s rule", s.BaseOffset, OffsetRange(s.BaseOffset, s.NextOffset), x.Remote, x.Rule)
		}
		return "tiered storage: " + x.Op
	case nil:
		return "-"
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "-"
	}
	return string(b)
}

// OffsetRange prints [base, next) as "offsets base-last", or "empty".
func OffsetRange(base, next int64) string {
	if next <= base {
		return "empty"
	}
	return fmt.Sprintf("offsets %d-%d", base, next-1)
}

// RuleConfig names the setting a Clean's rule applied.
func RuleConfig(rule string, c timeline.RetentionConfig) string {
	switch retention.Reason(rule) {
	case retention.ReasonTime:
		return fmt.Sprintf("retention.ms=%d", c.RetentionMs)
	case retention.ReasonSize:
		return fmt.Sprintf("retention.bytes=%d", c.RetentionBytes)
	case retention.ReasonLogStartOffset:
		return "the log start offset had passed the segment"
	}
	return "retention.ms=" + strconv.FormatInt(c.RetentionMs, 10) + ", retention.bytes=" + strconv.FormatInt(c.RetentionBytes, 10)
}

// Range is a run of offsets an instant touched, [From, To), and how.
type Range struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
	// What is what the instant did to them: "removed" (a clean's or a
	// truncation's, below the new log start offset or above the new log
	// end offset), "closed" (the segment a roll closed), "compacted" (the
	// segments a compaction rewrote: some records in them went), "held"
	// (a savepoint's hold), "released" (a savepoint's release), "copied"
	// (a segment a tier step copied to the remote store; "removed" for a
	// remote deletion) or "remote-only" (the segments whose local copies a
	// tiered partition's local retention deleted: still readable from the
	// remote).
	What string `json:"what"`
}

// Affects lists the offsets an instant touched, by what it did to them,
// from its payload; nil for an instant that names none (a rollback, a
// tier, a recovery that deleted no segment).
func Affects(inst timeline.Instant) []Range {
	var out []Range
	add := func(from, to int64, what string) {
		if to > from {
			out = append(out, Range{From: from, To: to, What: what})
		}
	}
	span := func(segs []timeline.SegmentRef, what string) {
		if len(segs) == 0 {
			return
		}
		lo, hi := segs[0].BaseOffset, segs[0].NextOffset
		for _, s := range segs[1:] {
			lo, hi = min(lo, s.BaseOffset), max(hi, s.NextOffset)
		}
		add(lo, hi, what)
	}
	switch x := PayloadOf(inst).(type) {
	case *timeline.Clean:
		// What became unreadable: the log start offset's move. A clean by
		// the logStartOffset rule removes files of offsets that were
		// already unreadable; it names their segments. A local deletion of
		// a tiered partition only moved the records' copies.
		if x.Local {
			span(x.Segments, "remote-only")
		} else if x.NewLogStartOffset > x.OldLogStartOffset {
			add(x.OldLogStartOffset, x.NewLogStartOffset, "removed")
		} else {
			span(x.Segments, "removed")
		}
	case *timeline.Tier:
		what := "copied"
		if x.Op == timeline.TierDelete {
			what = "removed"
		}
		add(x.Segment.BaseOffset, x.Segment.NextOffset, what)
	case *timeline.Roll:
		if x.Closed != nil {
			end := x.Closed.NextOffset
			if end <= x.Closed.BaseOffset {
				end = x.NewBaseOffset
			}
			add(x.Closed.BaseOffset, end, "closed")
		}
	case *timeline.Truncate:
		add(x.OldLogStartOffset, x.NewLogStartOffset, "removed")
		add(x.NewLogEndOffset, x.OldLogEndOffset, "removed")
	case *timeline.Compaction:
		span(x.Sources, "compacted")
	case *timeline.Savepoint:
		what := "held"
		if x.Release != nil {
			what = "released"
		}
		if x.LastOffset < x.FirstOffset || x.LastOffset == 1<<63-1 {
			break // no range, or one whose end does not fit [From, To)
		}
		add(x.FirstOffset, x.LastOffset+1, what)
	case *timeline.Restore:
		add(x.NewLogEndOffset, x.OldLogEndOffset, "removed")
	case *timeline.Recovery:
		span(x.Deleted, "removed")
	}
	return out
}
