package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/historyjson"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

const historyHelp = `Usage: segviz history [--json] DIR
       segviz history --since T [--json] DIR
       segviz history --time T [--json] DIR
       segviz history --offset N [--json] DIR
       segviz history --import FILE [--import FILE]... [--tz ZONE] [--broker-dir D] [--json] DIR

Prints the timeline of the partition directory DIR: every change segkit
made to it and recorded in DIR/.segkit/timeline — the rolls of "segviz
append" and of the engine (kafkalog with its timeline), the deletions of
"segviz retention --apply", the cleans of "segviz compact", truncations,
recoveries, savepoints and restores, and what --import brought in from a
broker's log — one completed instant a line, in the order they were
begun, with what each did.

  --since T    only the instants begun at or after T
  --time T     only the instants begun in the millisecond T (the times
               --offset names)
  --offset N   whether offset N can still be read and, if not, which
               instant removed it, by which rule and config, and when;
               and which recorded roll closed its segment

T is epoch milliseconds or an RFC 3339 time. Instants left requested or
inflight by an interrupted run are not listed (the next segviz command
that writes the partition resolves them); the text says how many there
are.

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

Without --import, history only reads: it takes no lock, creates nothing
(a partition without a timeline has an empty one) and may run beside a
broker or a writer.

--import FILE reads a Kafka broker's log files (server.log, then
log-cleaner.log; rotated ones oldest first) and records what they say
happened to this partition (DIR's name, topic-N) as completed instants
marked imported: rolls, retention deletions (one clean instant per rule
of a check, as segviz retention --apply records them), moves of the log
start offset, truncations, recoveries and cleaner passes. It takes the
partition's lock (stop the broker first), skips what the timeline already
holds (an earlier import of the same lines, or the same change recorded
by segkit), and prints the instants it imported (--json: their JSON
lines) and what it skipped. The lines' times have no zone: --tz names the
broker JVM's time zone (default UTC; an IANA name or an offset like
+05:30). --broker-dir D keeps only the lines that name the log directory
D (the broker's path of DIR's parent), when one log holds several.

Exit status: 0 when the history was printed (or the import done, whether
or not it found anything new); 1 when the timeline (or, for --offset, the
log) is damaged; 2 for a bad command line or a DIR that is not a
partition directory; 3 when DIR or a log file could not be read, the
partition is locked (a broker or another segviz runs on it), or writing
the timeline failed.

Examples:
  segviz history /var/kafka-logs/payments-0
  segviz history --since 2026-03-02T09:00:00Z --json payments-0 | jq .detail.rule
  segviz history --offset 40 payments-0
  segviz history --import /var/log/kafka/server.log --import /var/log/kafka/log-cleaner.log --tz Europe/Berlin payments-0
`

func runHistory(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("history", historyHelp, stderr)
	sinceFlag := fs.String("since", "", "only instants begun at or after `T` (epoch ms or RFC 3339)")
	timeFlag := fs.String("time", "", "only instants begun in the millisecond `T` (epoch ms or RFC 3339)")
	offsetFlag := fs.String("offset", "", "say whether offset `N` is readable, and what removed it")
	jsonOut := fs.Bool("json", false, "print one JSON object a line")
	var imports multiFlag
	fs.Var(&imports, "import", "import the broker log `FILE` (repeatable: oldest first) into the timeline")
	tzFlag := fs.String("tz", "", "with --import: the broker's time `ZONE` (IANA name or +hh:mm; default UTC)")
	brokerDir := fs.String("broker-dir", "", "with --import: only lines naming the log directory `D`")
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
	if len(imports) == 0 && (*tzFlag != "" || *brokerDir != "") {
		return usageErr("--tz and --broker-dir go with --import")
	}
	if len(imports) > 0 {
		if given > 0 {
			return usageErr("--import records instants; list them (--since, --time, --offset) in another run")
		}
		return historyImport(fs.Arg(0), imports, *tzFlag, *brokerDir, *jsonOut, stdout, stderr)
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
			fmt.Fprintf(stderr, "segviz history: %s left requested or inflight by an interrupted run, not listed: the next segviz command that writes the partition resolves them\n", plural(pending, "instant"))
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

// instantJSON is one line of "segviz history --json": historyjson's, the
// visualiser's timeline lane's too.
type instantJSON = historyjson.Instant

// instantJSONOf describes a completed instant (historyjson.InstantOf).
func instantJSONOf(inst timeline.Instant) instantJSON { return historyjson.InstantOf(inst) }

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
		fmt.Fprintf(w, "%s left requested or inflight by an interrupted run, not listed: the next segviz command that writes the partition resolves them\n", plural(pending, "instant"))
	}
}

// instantSummary says in one line what an instant did
// (historyjson.Summary, the lane's label too).
func instantSummary(inst timeline.Instant) string { return historyjson.Summary(inst) }

// offsetRange prints [base, next) as "offsets base-last", or "empty".
func offsetRange(base, next int64) string { return historyjson.OffsetRange(base, next) }

// logFacts is what --offset reads from the log itself
// (historyjson.Facts).
type logFacts struct {
	logStartOffset, logEndOffset, activeBase int64
	// present says a record with the offset is in the log, and
	// timestamp is its timestamp.
	present   bool
	timestamp int64
}

// offsetAnswer is historyjson's answer for one offset; why is its Why.
type offsetAnswer struct {
	historyjson.Answer
	why string
}

// offsetJSON is "segviz history --offset N --json": historyjson.Offset,
// whose field names are part of the command's interface. It is a type of
// this package, not an alias, so that its tests may spell it unkeyed.
type offsetJSON struct {
	Offset    int64   `json:"offset"`
	Readable  bool    `json:"readable"`
	WrittenBy *int64  `json:"writtenBy"`
	RemovedBy *int64  `json:"removedBy"`
	Rule      *string `json:"rule"`
	At        *int64  `json:"at"`
}

func (a offsetAnswer) json() offsetJSON { return offsetJSON(a.JSON()) }

// lookupOffset answers --offset n from the completed instants (in time
// order) and the log's state, as the visualiser's "why is this gone" does
// (historyjson.Lookup).
func lookupOffset(n int64, insts []timeline.Instant, f logFacts) offsetAnswer {
	a := historyjson.Lookup(n, insts, historyjson.Facts{LogStartOffset: f.logStartOffset, LogEndOffset: f.logEndOffset,
		ActiveBase: f.activeBase, Present: f.present, Timestamp: f.timestamp})
	return offsetAnswer{Answer: a, why: a.Why}
}

// historyOffset answers --offset: it reads the log read-only for its
// offsets and whether a record has offset n.
func historyOffset(fsys vfs.FS, dir string, n int64, insts []timeline.Instant, asJSON bool, stdout, stderr io.Writer) int {
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		return historyErr(err, stderr)
	}
	defer l.Close()
	f, err := historyjson.ReadFacts(l, n, 0)
	if err != nil {
		return historyErr(err, stderr)
	}
	a := historyjson.Lookup(n, insts, f)
	if asJSON {
		if err := json.NewEncoder(stdout).Encode(a.JSON()); err != nil {
			fmt.Fprintf(stderr, "segviz history: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	io.WriteString(stdout, a.Text(dir))
	return exitOK
}
