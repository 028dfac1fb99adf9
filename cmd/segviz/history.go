package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

const historyHelp = `Usage: segviz history [--json] DIR
       segviz history --since T [--json] DIR
       segviz history --time T [--json] DIR
       segviz history --offset N [--json] DIR

Prints the timeline of the partition directory DIR: every change segkit
made to it and recorded in DIR/.segkit/timeline (today: the deletions and
rolls of "segviz retention --apply"), one completed instant a line, in the
order they were begun, with what each did.

  --since T    only the instants begun at or after T
  --time T     only the instants begun in the millisecond T (the times
               --offset names)
  --offset N   whether offset N can still be read and, if not, which
               instant removed it, by which rule and config, and when;
               and which recorded roll closed its segment

T is epoch milliseconds or an RFC 3339 time. Instants left requested or
inflight by an interrupted run are not listed (the next "segviz retention
--apply" resolves them); the text says how many there are.

For an offset below the log start offset that no instant removed, the
answer is that something segkit did not record removed it: a broker's
retention, a DeleteRecords request, or a deletion before the timeline
began. An offset within the log whose record is gone was removed by
compaction.

--json prints one JSON object a line: for each instant
  {"instant", "completed", "action", "state", "imported", "detail": {...}}
("instant" and "completed" in epoch milliseconds, "detail" the instant's
recorded result, or its plan when it has none), and for --offset one
  {"offset", "readable", "writtenBy", "removedBy", "rule", "at"}
(instant times in epoch ms; null when there is none: "removedBy" while the
offset is readable, or when no instant recorded its removal).

history only reads: it takes no lock, creates nothing (a partition without
a timeline has an empty one) and may run beside a broker or a writer.

Exit status: 0 when the history was printed; 1 when the timeline (or, for
--offset, the log) is damaged; 2 for a bad command line or a DIR that is
not a partition directory; 3 when DIR could not be read.

Examples:
  segviz history /var/kafka-logs/payments-0
  segviz history --since 2026-03-02T09:00:00Z --json payments-0 | jq .detail.rule
  segviz history --offset 40 payments-0
`

func runHistory(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("history", historyHelp, stderr)
	sinceFlag := fs.String("since", "", "only instants begun at or after `T` (epoch ms or RFC 3339)")
	timeFlag := fs.String("time", "", "only instants begun in the millisecond `T` (epoch ms or RFC 3339)")
	offsetFlag := fs.String("offset", "", "say whether offset `N` is readable, and what removed it")
	jsonOut := fs.Bool("json", false, "print one JSON object a line")
	if code := parseFlags(fs, args, stdout); code >= 0 {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "segviz history: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "segviz history: want one partition directory")
		fs.Usage()
		return exitUsage
	}
	given := 0
	for _, f := range []string{*sinceFlag, *timeFlag, *offsetFlag} {
		if f != "" {
			given++
		}
	}
	if given > 1 {
		return usageErr("give at most one of --since, --time and --offset")
	}
	var filter timeline.Filter
	if *sinceFlag != "" {
		ms, err := parseTimeFlag(*sinceFlag)
		if err != nil || ms < 0 || ms > timeline.MaxMillis {
			return usageErr("--since: %v", timeFlagErr(*sinceFlag, err))
		}
		filter.Since = timeline.InstantTime{Millis: ms}
	}
	if *timeFlag != "" {
		ms, err := parseTimeFlag(*timeFlag)
		if err != nil || ms < 0 || ms > timeline.MaxMillis {
			return usageErr("--time: %v", timeFlagErr(*timeFlag, err))
		}
		filter.Since, filter.Until = timeline.InstantTime{Millis: ms}, timeline.InstantTime{Millis: ms + 1}
	}
	offset := int64(-1)
	if *offsetFlag != "" {
		n, err := strconv.ParseInt(*offsetFlag, 10, 64)
		if err != nil || n < 0 {
			return usageErr("--offset %q: want an offset, 0 or more", *offsetFlag)
		}
		offset = n
	}
	dir, code := osDir("history", fs.Arg(0), stderr)
	if code >= 0 {
		return code
	}
	fsys := vfs.OS()
	if code := checkPartition("history", fsys, dir, stderr); code >= 0 {
		return code
	}
	tl, err := timeline.Open(fsys, dir, timeline.Options{ReadOnly: true})
	if err != nil {
		return historyErr(err, stderr)
	}
	insts, err := tl.Instants(filter)
	if err != nil {
		return historyErr(err, stderr)
	}
	pending := len(tl.Pending())
	if offset >= 0 {
		return historyOffset(fsys, dir, offset, insts, *jsonOut, stdout, stderr)
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		for _, inst := range insts {
			if err := enc.Encode(instantJSONOf(inst)); err != nil {
				fmt.Fprintf(stderr, "segviz history: %v\n", err)
				return exitFailure
			}
		}
		if pending > 0 {
			fmt.Fprintf(stderr, "segviz history: %s left requested or inflight by an interrupted run, not listed: the next \"segviz retention --apply\" resolves them\n", plural(pending, "instant"))
		}
		return exitOK
	}
	printHistory(stdout, dir, insts, pending, filter)
	return exitOK
}

// timeFlagErr says why a time flag was refused.
func timeFlagErr(s string, err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%q is outside the times an instant can have (1970 to 2286)", s)
}

// historyErr reports an error reading the timeline or the log: exit 1 for
// damage, 3 otherwise.
func historyErr(err error, stderr io.Writer) int {
	fmt.Fprintf(stderr, "segviz history: %v\n", err)
	var ce *format.CorruptionError
	if errors.As(err, &ce) {
		return exitProblem
	}
	return exitFailure
}

// instantJSON is one line of "segviz history --json"; its field names are
// part of the command's interface.
type instantJSON struct {
	Instant   int64  `json:"instant"`
	Completed int64  `json:"completed"`
	Action    string `json:"action"`
	State     string `json:"state"`
	// Imported marks an instant rebuilt from another record (a broker's
	// log) rather than written when the change was made. Nothing imports
	// yet: it is false.
	Imported bool            `json:"imported"`
	Detail   json.RawMessage `json:"detail"`
}

// instantJSONOf describes a completed instant: its detail is its result,
// or its plan when it has no result.
func instantJSONOf(inst timeline.Instant) instantJSON {
	out := instantJSON{
		Instant: inst.Time.Millis, Completed: inst.Completed.Millis,
		Action: string(inst.Action), State: inst.State.String(), Detail: json.RawMessage("{}"),
	}
	p := inst.Result
	if p == nil {
		p = inst.Plan
	}
	if p != nil {
		if b, err := json.Marshal(p); err == nil && len(b) > 0 && b[0] == '{' {
			out.Detail = b
		}
	}
	return out
}

// printHistory prints the instants as a table.
func printHistory(w io.Writer, dir string, insts []timeline.Instant, pending int, f timeline.Filter) {
	which := ""
	switch {
	case !f.Until.IsZero():
		which = " begun in the millisecond " + retention.FormatTime(f.Since.Millis)
	case !f.Since.IsZero():
		which = " begun at or after " + retention.FormatTime(f.Since.Millis)
	}
	fmt.Fprintf(w, "timeline of %s (%s): %s%s\n", dir, timeline.DirName, plural(len(insts), "instant"), which)
	if len(insts) == 0 && f.Since.IsZero() {
		fmt.Fprintln(w, "  segkit has recorded no change to this partition: the timeline begins with the first \"segviz retention --apply\"")
	}
	if len(insts) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tINSTANT\tACTION\tCOMPLETED\tWHAT")
		for _, inst := range insts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", retention.FormatTime(inst.Time.Millis), inst.Time, inst.Action,
				inst.Completed, instantSummary(inst))
		}
		tw.Flush()
	}
	if pending > 0 {
		fmt.Fprintf(w, "%s left requested or inflight by an interrupted run, not listed: the next \"segviz retention --apply\" resolves them\n", plural(pending, "instant"))
	}
}

// instantSummary says in one line what an instant did.
func instantSummary(inst timeline.Instant) string {
	p := inst.Result
	if p == nil {
		p = inst.Plan
	}
	switch x := p.(type) {
	case *timeline.Clean:
		var segs []string
		for _, s := range x.Segments {
			segs = append(segs, fmt.Sprintf("%d (%s)", s.BaseOffset, offsetRange(s.BaseOffset, s.NextOffset)))
		}
		return fmt.Sprintf("%s rule (%s): deleted segment(s) %s; log start offset %d -> %d",
			x.Rule, ruleConfig(x.Rule, x.Config), strings.Join(segs, ", "), x.OldLogStartOffset, x.NewLogStartOffset)
	case *timeline.Roll:
		s := fmt.Sprintf("%s: new active segment at %d", x.Reason, x.NewBaseOffset)
		if x.Closed != nil {
			s += fmt.Sprintf(", closing segment %d (%s)", x.Closed.BaseOffset, offsetRange(x.Closed.BaseOffset, x.Closed.NextOffset))
		}
		return s
	case *timeline.Rollback:
		return fmt.Sprintf("rolled back the %s instant %s (%s): %s", x.InstantAction, x.Instant, x.InstantState, x.Reason)
	case nil:
		return "-"
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "-"
	}
	return string(b)
}

// offsetRange prints [base, next) as "base-last", or "empty".
func offsetRange(base, next int64) string {
	if next <= base {
		return "empty"
	}
	return fmt.Sprintf("offsets %d-%d", base, next-1)
}

// ruleConfig names the setting a Clean's rule applied.
func ruleConfig(rule string, c timeline.RetentionConfig) string {
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

// logFacts is what --offset reads from the log itself.
type logFacts struct {
	logStartOffset, logEndOffset, activeBase int64
	// present says a record with the offset is in the log, and
	// timestamp is its timestamp.
	present   bool
	timestamp int64
}

// offsetAnswer is what the timeline and the log say about one offset.
type offsetAnswer struct {
	offset   int64
	readable bool
	// written is the roll that closed the offset's segment, if recorded.
	written *timeline.Instant
	// removed is the instant that made the offset unreadable, if
	// recorded; rule its rule; why says how the answer was reached.
	removed *timeline.Instant
	rule    string
	why     string
}

// offsetJSON is "segviz history --offset N --json"; its field names are
// part of the command's interface.
type offsetJSON struct {
	Offset    int64   `json:"offset"`
	Readable  bool    `json:"readable"`
	WrittenBy *int64  `json:"writtenBy"`
	RemovedBy *int64  `json:"removedBy"`
	Rule      *string `json:"rule"`
	At        *int64  `json:"at"`
}

func (a offsetAnswer) json() offsetJSON {
	out := offsetJSON{Offset: a.offset, Readable: a.readable}
	if a.written != nil {
		v := a.written.Time.Millis
		out.WrittenBy = &v
	}
	if a.removed != nil {
		v, at, rule := a.removed.Time.Millis, a.removed.Completed.Millis, a.rule
		out.RemovedBy, out.At, out.Rule = &v, &at, &rule
	}
	return out
}

// payloadOf is an instant's result, or its plan when it has none.
func payloadOf(inst timeline.Instant) timeline.Payload {
	if inst.Result != nil {
		return inst.Result
	}
	return inst.Plan
}

// lookupOffset answers --offset n from the completed instants (in time
// order) and the log's state.
func lookupOffset(n int64, insts []timeline.Instant, f logFacts) offsetAnswer {
	a := offsetAnswer{offset: n, readable: f.present}
	found := func(i int, rule, why string) {
		a.removed, a.rule, a.why = &insts[i], rule, why
	}
	switch {
	case f.present:
		a.why = fmt.Sprintf("readable: the log holds offsets %d to %d", f.logStartOffset, f.logEndOffset-1)
	case n < f.logStartOffset:
		// The instant that moved the log start offset past n.
		for i, inst := range insts {
			switch x := payloadOf(inst).(type) {
			case *timeline.Clean:
				if x.OldLogStartOffset <= n && n < x.NewLogStartOffset {
					found(i, x.Rule, cleanWhy(x, inst))
				}
			case *timeline.Truncate:
				if x.OldLogStartOffset <= n && n < x.NewLogStartOffset {
					found(i, "truncate", fmt.Sprintf("the log was truncated (%s): log start offset %d -> %d", x.Reason, x.OldLogStartOffset, x.NewLogStartOffset))
				}
			}
			if a.removed != nil {
				break
			}
		}
		if a.removed != nil {
			break
		}
		// Or the one that deleted its segment once the log start offset
		// had passed it by a change segkit did not record.
		for i, inst := range insts {
			if x, ok := payloadOf(inst).(*timeline.Clean); ok && cleanCovers(x, n) {
				found(i, x.Rule, cleanWhy(x, inst)+fmt.Sprintf("; the log start offset was already %d, past offset %d, moved by a change the timeline does not hold (a DeleteRecords request, a broker, or a deletion before the timeline began): the offset was not readable before this instant either", x.OldLogStartOffset, n))
				break
			}
		}
		if a.removed == nil {
			a.why = fmt.Sprintf("below the log start offset %d, and no instant of the timeline removed it: it was removed by something segkit did not record (a broker's retention, a DeleteRecords request, or a deletion before the timeline began)", f.logStartOffset)
		}
	case n >= f.logEndOffset:
		for i := len(insts) - 1; i >= 0; i-- {
			if x, ok := payloadOf(insts[i]).(*timeline.Truncate); ok && x.NewLogEndOffset <= n && n < x.OldLogEndOffset {
				found(i, "truncate", fmt.Sprintf("the log was truncated (%s): log end offset %d -> %d", x.Reason, x.OldLogEndOffset, x.NewLogEndOffset))
				break
			}
		}
		if a.removed == nil {
			a.why = fmt.Sprintf("past the log end offset %d: not written yet (or cut by a truncation the timeline does not hold)", f.logEndOffset)
		}
	default:
		var by []string
		for _, inst := range insts {
			if x, ok := payloadOf(inst).(*timeline.Compaction); ok {
				for _, s := range x.Sources {
					if s.BaseOffset <= n && n < s.NextOffset {
						by = append(by, inst.Time.String())
						break
					}
				}
			}
		}
		a.why = fmt.Sprintf("within the log (offsets %d to %d), but no record has offset %d: compaction removed it", f.logStartOffset, f.logEndOffset-1, n)
		if len(by) > 0 {
			a.why += "; the compaction instants that covered it: " + strings.Join(by, ", ") + " (which one removed it is not recorded)"
		} else {
			a.why += ", a compaction the timeline does not hold"
		}
	}
	// The roll that closed its segment: the last before its removal.
	for i, inst := range insts {
		if a.removed != nil && inst.Time.Compare(a.removed.Time) > 0 {
			break
		}
		if x, ok := payloadOf(inst).(*timeline.Roll); ok && x.Closed != nil {
			end := x.Closed.NextOffset
			if end <= x.Closed.BaseOffset {
				end = x.NewBaseOffset
			}
			if x.Closed.BaseOffset <= n && n < end {
				a.written = &insts[i]
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

// cleanWhy says what a Clean did, naming the segment that held n if any.
func cleanWhy(c *timeline.Clean, inst timeline.Instant) string {
	var segs []string
	for _, s := range c.Segments {
		segs = append(segs, fmt.Sprintf("segment %d (%s, %d bytes, largest timestamp %s)", s.BaseOffset, offsetRange(s.BaseOffset, s.NextOffset), s.Size, retention.FormatTime(s.LargestTimestamp)))
	}
	return fmt.Sprintf("the retention check at %s (rule %s: %s; config in force: retention.ms=%d retention.bytes=%d file.delete.delay.ms=%d) deleted %s; log start offset %d -> %d",
		retention.FormatTime(c.Now), c.Rule, ruleConfig(c.Rule, c.Config), c.Config.RetentionMs, c.Config.RetentionBytes, c.Config.FileDeleteDelayMs,
		strings.Join(segs, ", "), c.OldLogStartOffset, c.NewLogStartOffset)
}

// historyOffset answers --offset: it reads the log read-only for its
// offsets and whether a record has offset n.
func historyOffset(fsys vfs.FS, dir string, n int64, insts []timeline.Instant, asJSON bool, stdout, stderr io.Writer) int {
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		return historyErr(err, stderr)
	}
	defer l.Close()
	f := logFacts{logStartOffset: l.LogStartOffset(), logEndOffset: l.LogEndOffset(), activeBase: l.ActiveSegment().BaseOffset()}
	if f.logStartOffset <= n && n < f.logEndOffset {
		for r, err := range l.Records(n) {
			if err != nil {
				return historyErr(err, stderr)
			}
			f.present, f.timestamp = r.Offset == n, r.Timestamp
			break
		}
	}
	a := lookupOffset(n, insts, f)
	if asJSON {
		if err := json.NewEncoder(stdout).Encode(a.json()); err != nil {
			fmt.Fprintf(stderr, "segviz history: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	w := stdout
	switch {
	case a.readable:
		ts := "its record has no timestamp"
		if f.timestamp >= 0 {
			ts = "its record's timestamp is " + retention.FormatTime(f.timestamp)
		}
		fmt.Fprintf(w, "offset %d of %s: readable (log start offset %d, log end offset %d); %s\n",
			n, dir, f.logStartOffset, f.logEndOffset, ts)
	case a.removed != nil:
		fmt.Fprintf(w, "offset %d of %s: not readable: removed by instant %s (%s, completed %s at %s), rule %s\n",
			n, dir, a.removed.Time, a.removed.Action, a.removed.Completed, retention.FormatTime(a.removed.Completed.Millis), a.rule)
	default:
		fmt.Fprintf(w, "offset %d of %s: not readable; no instant recorded its removal\n", n, dir)
	}
	if !a.readable {
		fmt.Fprintf(w, "  %s\n", a.why)
	}
	switch {
	case a.written != nil:
		r := payloadOf(*a.written).(*timeline.Roll)
		fmt.Fprintf(w, "  written before %s: the roll of instant %s (%s) closed its segment %d\n",
			retention.FormatTime(a.written.Time.Millis), a.written.Time, r.Reason, r.Closed.BaseOffset)
	case a.readable && n >= f.activeBase:
		fmt.Fprintf(w, "  written into the active segment %d, which still takes appends\n", f.activeBase)
	case a.readable || a.removed != nil:
		fmt.Fprintln(w, "  the roll that closed its segment is not recorded (the engine's own rolls, at segment.bytes or segment.ms, are not in the timeline)")
	}
	return exitOK
}
