package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/segkit/segkit/internal/historyjson"
	"github.com/segkit/segkit/internal/retentionapply"
	"github.com/segkit/segkit/internal/serverlog"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// The reasons of imported instants for what a broker's log does not say.
const (
	// importNotLogged is the Roll reason of a broker's roll (Kafka logs
	// the condition at DEBUG only) and the Truncate reason of its
	// truncateTo (a follower's divergence or high watermark: the line
	// does not say which).
	importNotLogged = "not logged"
	// importFull is the Truncate reason of truncateFullyAndStartAt, as
	// the engine records it.
	importFull = "full"
)

// historyImportOpts are the flags of "segviz history --import".
type historyImportOpts struct {
	files     []string
	loc       *time.Location
	brokerDir string
	json      bool
}

// importCandidate is one event of the broker's log as an instant, or why
// it is not one.
type importCandidate struct {
	ev      serverlog.Event
	action  timeline.Action
	payload timeline.Payload
	// skip says why the event is not an instant ("" when it is one).
	skip string
}

// historyImport runs "segviz history --import": it checks the flags and
// DIR, then imports.
func historyImport(name string, files []string, tz, brokerDir string, jsonOut bool, stdout, stderr io.Writer) int {
	o := historyImportOpts{files: files, loc: time.UTC, brokerDir: brokerDir, json: jsonOut}
	if tz != "" {
		loc, err := parseZone(tz)
		if err != nil {
			fmt.Fprintf(stderr, "segviz history: --tz: %v\n", err)
			return exitUsage
		}
		o.loc = loc
	}
	if brokerDir != "" && !strings.HasPrefix(brokerDir, "/") {
		fmt.Fprintf(stderr, "segviz history: --broker-dir %q: want the absolute path the broker's log lines name\n", brokerDir)
		return exitUsage
	}
	dir, code := osDir("history", name, stderr)
	if code >= 0 {
		return code
	}
	fsys := vfs.OS()
	if code := checkPartition("history", fsys, dir, stderr); code >= 0 {
		return code
	}
	return runHistoryImport(fsys, dir, o, stdout, stderr)
}

// runHistoryImport imports the broker log files o.files into the timeline
// of the partition directory dir (already checked): it parses them, takes
// the partition's lock, and imports the events not on the timeline yet.
func runHistoryImport(fsys vfs.FS, dir string, o historyImportOpts, stdout, stderr io.Writer) int {
	name := path.Base(dir)
	p := serverlog.NewParser(serverlog.Options{Partition: name, Dir: o.brokerDir, Location: o.loc})
	for _, f := range o.files {
		if err := p.ParseFile(f); err != nil {
			fmt.Fprintf(stderr, "segviz history: %v; nothing was imported\n", err)
			if errors.Is(err, serverlog.ErrNoPartition) {
				return exitUsage
			}
			return exitFailure
		}
	}
	events, st := p.Events(), p.Stats()
	if len(st.Dirs) > 2 && o.brokerDir == "" {
		fmt.Fprintf(stderr, "segviz history: warning: the lines about %s name several directories (%s): more than one log directory or broker may be mixed; --broker-dir chooses one\n", name, strings.Join(st.Dirs, ", "))
	}

	lock, err := kafkalog.LockPartition(fsys, dir)
	if err != nil {
		if code := writerError("history", err, stderr); code >= 0 {
			return code
		}
		fmt.Fprintf(stderr, "segviz history: %v\n", err)
		return exitFailure
	}
	defer lock.Close()
	tl, err := timeline.Open(fsys, dir, timeline.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "segviz history: the timeline of %s cannot be read, so nothing was imported: %v\n", dir, err)
		return historyErr(err, io.Discard)
	}
	existing, err := tl.Instants(timeline.Filter{})
	if err != nil {
		fmt.Fprintf(stderr, "segviz history: the timeline of %s cannot be read, so nothing was imported: %v\n", dir, err)
		return historyErr(err, io.Discard)
	}

	var done []timeline.Instant
	skipped := map[string]int{}
	for _, c := range importCandidates(events) {
		if c.skip != "" {
			skipped[c.skip]++
			continue
		}
		if why := alreadyRecorded(existing, c); why != "" {
			skipped[why]++
			continue
		}
		inst, err := tl.Import(c.action, c.ev.Time, c.payload)
		if errors.Is(err, timeline.ErrTimeRange) {
			skipped["at a time the timeline cannot take (before the end of its archived part, which is not reordered, or before 1970)"]++
			continue
		}
		if err != nil {
			fmt.Fprintf(stderr, "segviz history: importing the %s of %s: %v (%s imported before it)\n", c.action, c.ev.Where(), err, plural(len(done), "instant"))
			printImported(stdout, stderr, dir, o, done, skipped, st)
			return exitFailure
		}
		done = append(done, inst)
		existing = append(existing, inst)
	}
	if !printImported(stdout, stderr, dir, o, done, skipped, st) {
		return exitFailure
	}
	return exitOK
}

// importCandidates maps the parser's events to timeline payloads.
func importCandidates(events []serverlog.Event) []importCandidate {
	var out []importCandidate
	for _, ev := range events {
		c := importCandidate{ev: ev}
		switch ev.Kind {
		case serverlog.KindRoll:
			x := ev.Roll
			r := &timeline.Roll{Reason: importNotLogged, NewBaseOffset: x.NewBaseOffset}
			if x.Requested {
				// The roll segkit's own check makes first, for the same
				// reason (deleteSegments rolls to delete every segment).
				r.Reason = retentionapply.RollReason
			}
			if x.PreviousBaseOffset >= 0 && x.PreviousBaseOffset < x.NewBaseOffset {
				// The closed segment's size and timestamps are not logged.
				r.Closed = &timeline.SegmentRef{BaseOffset: x.PreviousBaseOffset, NextOffset: x.NewBaseOffset, LargestTimestamp: -1}
			}
			c.action, c.payload = timeline.ActionRoll, r
		case serverlog.KindDeletion:
			x := ev.Deletion
			if x.Local {
				c.skip = "tiered storage's local retention (the offsets stay readable from remote storage)"
				break
			}
			cl := &timeline.Clean{
				Rule:   x.Rule,
				Config: timeline.RetentionConfig{RetentionMs: x.RetentionMs, RetentionBytes: x.RetentionBytes},
				Now:    ev.Time.UnixMilli(), OldLogStartOffset: x.OldLogStartOffset, NewLogStartOffset: x.NewLogStartOffset,
			}
			for _, s := range x.Segments {
				// The time rule compared LargestTimestamp; for the other
				// rules a -1 in the line may mean "not loaded yet", so it
				// stays -1 rather than becoming the modification time.
				ts := s.LargestRecordTimestamp
				if x.Rule == serverlog.RuleTime {
					ts = s.LargestTimestamp()
				}
				cl.Segments = append(cl.Segments, timeline.SegmentRef{BaseOffset: s.BaseOffset, NextOffset: s.NextOffset, Size: s.Size, LargestTimestamp: ts})
			}
			c.action, c.payload = timeline.ActionClean, cl
		case serverlog.KindLogStartOffset:
			x := ev.LogStartOffset
			if x.Local {
				c.skip = "tiered storage's local log start offset (the offsets stay readable from remote storage)"
				break
			}
			// A move of the log start offset with no deletion of its own
			// (DeleteRecords, a follower following its leader) cuts the
			// log's head: a truncation of the start, not of the end.
			c.action, c.payload = timeline.ActionTruncate, &timeline.Truncate{Reason: x.Reason,
				OldLogEndOffset: -1, NewLogEndOffset: -1, OldLogStartOffset: x.Old, NewLogStartOffset: x.Offset}
		case serverlog.KindTruncation:
			x := ev.Truncation
			tr := &timeline.Truncate{Reason: importNotLogged, OldLogEndOffset: -1, NewLogEndOffset: x.Offset,
				OldLogStartOffset: x.OldLogStartOffset, NewLogStartOffset: x.OldLogStartOffset}
			switch x.How {
			case serverlog.TruncateNoEffect:
				c.skip = "a truncation that had no effect"
			case serverlog.TruncateFull:
				tr.Reason, tr.NewLogStartOffset = importFull, x.LogStartOffset
			}
			c.action, c.payload = timeline.ActionTruncate, tr
		case serverlog.KindRecovery:
			x := ev.Recovery
			if !x.Changed() {
				c.skip = "a load after a clean shutdown that rechecked nothing"
				break
			}
			rec := &timeline.Recovery{CleanShutdown: x.CleanShutdown, RecoveryPoint: -1, LogStartOffset: x.LogStartOffset,
				LogEndOffset: x.LogEndOffset, Recovered: x.Recovered, BytesTruncated: x.BytesTruncated, Leftovers: x.Leftovers}
			for _, s := range x.Deleted {
				rec.Deleted = append(rec.Deleted, importRef(s))
			}
			c.action, c.payload = timeline.ActionRecovery, rec
		case serverlog.KindCompaction:
			x := ev.Compaction
			if len(x.Sources) == 0 {
				c.skip = "a cleaner pass that swapped nothing in"
				break
			}
			cp := &timeline.Compaction{Now: ev.Time.UnixMilli(), FirstDirtyOffset: x.FirstDirtyOffset, EndOffset: x.EndOffset}
			for _, s := range x.Sources {
				cp.Sources = append(cp.Sources, importRef(s))
			}
			for _, s := range x.Cleaned {
				cp.Cleaned = append(cp.Cleaned, importRef(s))
			}
			c.action, c.payload = timeline.ActionCompaction, cp
		default:
			c.skip = "an event of a kind this segviz does not import"
		}
		out = append(out, c)
	}
	return out
}

// importRef is a segment of a line as the timeline describes segments.
func importRef(s serverlog.Segment) timeline.SegmentRef {
	return timeline.SegmentRef{BaseOffset: s.BaseOffset, NextOffset: s.NextOffset, Size: s.Size, LargestTimestamp: s.LargestRecordTimestamp}
}

// alreadyRecorded says why c is on the timeline already ("" if it is
// not):
//
//   - an instant of the same action, begun in the same millisecond, with
//     the same payload: this import, run before (imports are idempotent);
//   - an instant segkit recorded itself (not imported) with the same
//     effect: a clean of the same rule and segments, a roll to the same
//     base offset, a compaction of the same sources and end offset. A
//     broker and segkit do not both make one change, so the same effect
//     is the same change, whenever it was stamped. Truncations and
//     recoveries are only matched the first way: the same effect happens
//     again (every unclean restart recovers the same segments).
func alreadyRecorded(existing []timeline.Instant, c importCandidate) string {
	want, err := json.Marshal(c.payload)
	if err != nil {
		return ""
	}
	ms := c.ev.Time.UnixMilli()
	for _, inst := range existing {
		if inst.Action != c.action {
			continue
		}
		p := historyjson.PayloadOf(inst)
		if inst.Time.Millis == ms {
			if got, err := json.Marshal(p); err == nil && string(got) == string(want) {
				return "already on the timeline (imported before)"
			}
		}
		if inst.Imported {
			continue
		}
		if sameEffect(p, c.payload) {
			return "already on the timeline (recorded by segkit)"
		}
	}
	return ""
}

// sameEffect reports whether two payloads record the same change.
func sameEffect(a, b timeline.Payload) bool {
	switch x := a.(type) {
	case *timeline.Clean:
		y, ok := b.(*timeline.Clean)
		return ok && x.Rule == y.Rule && slices.Equal(bases(x.Segments), bases(y.Segments))
	case *timeline.Roll:
		y, ok := b.(*timeline.Roll)
		return ok && x.NewBaseOffset == y.NewBaseOffset
	case *timeline.Compaction:
		y, ok := b.(*timeline.Compaction)
		return ok && x.EndOffset == y.EndOffset && slices.Equal(bases(x.Sources), bases(y.Sources))
	}
	return false
}

func bases(segs []timeline.SegmentRef) []int64 {
	out := make([]int64, len(segs))
	for i, s := range segs {
		out[i] = s.BaseOffset
	}
	return out
}

// printImported prints what the import did: the instants (a table, or
// their JSON lines with --json) on stdout, the counts on stderr with
// --json and after the table without. It reports whether stdout took it.
func printImported(stdout, stderr io.Writer, dir string, o historyImportOpts, done []timeline.Instant, skipped map[string]int, st serverlog.Stats) bool {
	var names []string
	for _, f := range o.files {
		names = append(names, path.Base(f))
	}
	counts := stderr
	if o.json {
		enc := json.NewEncoder(stdout)
		for _, inst := range done {
			if err := enc.Encode(historyjson.InstantOf(inst)); err != nil {
				fmt.Fprintf(stderr, "segviz history: %v\n", err)
				return false
			}
		}
	} else {
		counts = stdout
		fmt.Fprintf(stdout, "imported %s into %s from %s (partition %s, times read in %s):\n",
			plural(len(done), "instant"), path.Join(path.Base(dir), timeline.DirName), strings.Join(names, ", "), path.Base(dir), o.loc)
		if len(done) > 0 {
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "  TIME\tINSTANT\tACTION\tWHAT")
			for _, inst := range done {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", retention.FormatTime(inst.Time.Millis), inst.Time, inst.Action, historyjson.Summary(inst))
			}
			tw.Flush()
		}
	}
	var why []string
	for w := range skipped {
		why = append(why, w)
	}
	slices.Sort(why)
	for _, w := range why {
		fmt.Fprintf(counts, "skipped %s: %s\n", plural(skipped[w], "event"), w)
	}
	fmt.Fprintf(counts, "read %s (%s about %s, %d of them used); skipped %s that did not parse, %s too long\n",
		plural(st.Lines, "line"), plural(st.About, "log line"), path.Base(dir), st.Used, plural(st.Unparsed, "line"), plural(st.TooLong, "line"))
	switch {
	case st.About == 0:
		fmt.Fprintf(counts, "no line is about %s: is it the broker's log of this partition (its directory's name), and are the files server.log and log-cleaner.log?\n", path.Base(dir))
	case st.Used == 0 && o.brokerDir != "" && len(st.Dirs) > 0:
		fmt.Fprintf(counts, "no line about %s names the log directory %s (--broker-dir); they name %s\n", path.Base(dir), o.brokerDir, strings.Join(st.Dirs, ", "))
	}
	return true
}

// reOffsetZone is a fixed zone: [UTC|GMT]±hh[:mm].
var reOffsetZone = regexp.MustCompile(`^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$`)

// parseZone reads --tz: an IANA zone name ("Europe/Berlin", "UTC",
// "Local") or a fixed offset ("+05:30", "UTC-8").
func parseZone(s string) (*time.Location, error) {
	if m := reOffsetZone.FindStringSubmatch(s); m != nil {
		h, _ := strconv.Atoi(m[2])
		mins := 0
		if m[3] != "" {
			mins, _ = strconv.Atoi(m[3])
		}
		if h > 14 || mins > 59 {
			return nil, fmt.Errorf("%q is not a UTC offset", s)
		}
		off := h*3600 + mins*60
		if m[1] == "-" {
			off = -off
		}
		return time.FixedZone(s, off), nil
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		return nil, fmt.Errorf("%q is neither a time zone this system knows nor a UTC offset (+05:30): %v", s, err)
	}
	return loc, nil
}
