package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

const savepointHelp = `Usage: segviz savepoint [--label L] [--from N] [--to N] [--by WHO] [--comment TEXT] [--now T] [--json] DIR
       segviz savepoint --list [--json] DIR
       segviz savepoint --release T [--by WHO] [--comment TEXT] [--now T] [--json] DIR

A savepoint is a legal hold on a range of offsets of the partition
directory DIR: while it is in force, neither retention ("segviz retention
--apply") nor compaction ("segviz compact") removes a record of the
segments holding those offsets. Kafka deletes only a prefix of the log,
and the cleaner rewrites the log from its start, so a hold also keeps
every segment after the first one it pins: the plans of both commands say
so, segment by segment, naming the savepoint ('held by savepoint "L" (T)',
'kept: segment B before it is held by savepoint "L" (T)'). Release it and
the next check deletes as Kafka would have, all at once.

The savepoint is an instant of the partition's timeline (DIR/.segkit/
timeline, see "segviz history"), with who took it, why, the offsets held
and the log's segments at that moment. Releasing one records a second
savepoint instant naming the first; the hold ends, the record of it stays.

  (no flag)     take a hold. --from N and --to N choose the offsets held,
                inclusive (default: the whole log as it is now, its log
                start offset to its log end offset - 1); a range outside
                the log is refused. --label names it (default "hold"),
                --by says who takes it (default $USER), --comment why.
  --list        the savepoints, in force and released, oldest first; only
                reads: no lock, creates nothing, may run beside a broker.
  --release T   end the hold of the savepoint whose instant time is T, as
                --list and the take print it (17 digits; its epoch
                milliseconds alone do when no other savepoint shares them).

Taking and releasing write: they take Kafka's lock of the log directory
(an flock of its .lock, as a broker holds it; if a broker or another
segviz holds it, the command stops before writing anything, exit 3), and
write nothing but the timeline: the segment files are only read. A broker
does not know about savepoints: run retention and compaction through
segviz (or stop the broker) for a hold to mean anything. --now stamps the
instant (default: the current time).

Text goes to stdout. --json prints one object: for a take or a release
  {"savepoint", "takenAt", "label", "by", "comment", "firstOffset",
   "lastOffset", "inForce", "release"}
(the savepoint taken, or the one released; "savepoint" is the instant time
as --release takes it, "takenAt" the same in epoch ms; "release" is null
while in force, else {"savepoint", "at", "by", "comment"} of the release),
and for --list {"savepoints": [...]}, one such object each.

Exit status: 0 when the hold was taken, released or listed; 1 when the
timeline is damaged; 2 for a bad command line, a DIR that is not a
partition directory, a range outside the log, or --release of a savepoint
not in force; 3 when the command could not run (the log directory locked
by a broker or another segviz: nothing written; I/O).

Examples:
  segviz savepoint --label case-7 --by legal --comment "litigation hold, case 7" /var/kafka-logs/payments-0
  segviz savepoint --label audit-q1 --from 1200 --to 1299 payments-0
  segviz savepoint --list payments-0
  segviz retention payments-0          # the plan names the hold
  segviz savepoint --release 17728320000000000 payments-0
`

// savepointJSON is one savepoint of the --json output; its field names
// are part of the command's interface.
type savepointJSON struct {
	Savepoint   string       `json:"savepoint"`
	TakenAt     int64        `json:"takenAt"`
	Label       string       `json:"label"`
	By          string       `json:"by"`
	Comment     string       `json:"comment"`
	FirstOffset int64        `json:"firstOffset"`
	LastOffset  int64        `json:"lastOffset"`
	InForce     bool         `json:"inForce"`
	Release     *releaseJSON `json:"release"`
}

// releaseJSON is the release of a savepoint.
type releaseJSON struct {
	Savepoint string `json:"savepoint"`
	At        int64  `json:"at"`
	By        string `json:"by"`
	Comment   string `json:"comment"`
}

// savepointEntry is a savepoint that takes a hold, and its release.
type savepointEntry struct {
	inst    timeline.Instant
	sp      *timeline.Savepoint
	release *timeline.Instant
	rel     *timeline.Savepoint
}

func (e savepointEntry) json() savepointJSON {
	j := savepointJSON{Savepoint: e.inst.Time.String(), TakenAt: e.inst.Time.Millis, Label: e.sp.Label, By: e.sp.By, Comment: e.sp.Comment,
		FirstOffset: e.sp.FirstOffset, LastOffset: e.sp.LastOffset, InForce: e.release == nil}
	if e.release != nil {
		j.Release = &releaseJSON{Savepoint: e.release.Time.String(), At: e.release.Time.Millis, By: e.rel.By, Comment: e.rel.Comment}
	}
	return j
}

// savepointOf returns the savepoint payload of a completed instant.
func savepointOf(inst timeline.Instant) *timeline.Savepoint {
	if sp, ok := inst.Result.(*timeline.Savepoint); ok {
		return sp
	}
	sp, _ := inst.Plan.(*timeline.Savepoint)
	return sp
}

// savepoints pairs the hold-taking savepoint instants of insts with
// their releases, oldest first (the rule of timeline.HoldsOf: a release
// ends the hold it names, if that hold is in force).
func savepoints(insts []timeline.Instant) []savepointEntry {
	var out []savepointEntry
	for _, inst := range insts {
		sp := savepointOf(inst)
		if inst.Action != timeline.ActionSavepoint || inst.State != timeline.Completed || sp == nil {
			continue
		}
		if sp.Release == nil {
			out = append(out, savepointEntry{inst: inst, sp: sp})
			continue
		}
		for i := range out {
			if out[i].inst.Time == *sp.Release && out[i].release == nil {
				r := inst
				out[i].release, out[i].rel = &r, sp
				break
			}
		}
	}
	return out
}

func runSavepoint(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("savepoint", savepointHelp, stderr)
	label := fs.String("label", "hold", "the savepoint's `name`")
	fromFlag := fs.String("from", "", "the first offset `N` held (default: the log start offset)")
	toFlag := fs.String("to", "", "the last offset `N` held, inclusive (default: the log end offset - 1)")
	by := fs.String("by", os.Getenv("USER"), "`who` takes (or releases) it (default $USER)")
	comment := fs.String("comment", "", "why: a `text` kept with the savepoint")
	nowFlag := fs.String("now", "", "the instant's time, epoch ms or RFC 3339 (default: the current time)")
	list := fs.Bool("list", false, "list the savepoints, in force and released (read-only)")
	releaseFlag := fs.String("release", "", "release the savepoint with instant time `T`")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	if code := parseFlags(fs, args, stdout); code >= 0 {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "segviz savepoint: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "segviz savepoint: want one partition directory")
		fs.Usage()
		return exitUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *list && *releaseFlag != "" {
		return usageErr("give at most one of --list and --release")
	}
	if *list || *releaseFlag != "" {
		for _, name := range []string{"label", "from", "to"} {
			if set[name] {
				return usageErr("--%s is for taking a savepoint, not with --list or --release", name)
			}
		}
	}
	if *list {
		for _, name := range []string{"by", "comment", "now"} {
			if set[name] {
				return usageErr("--%s is for taking or releasing a savepoint, not with --list", name)
			}
		}
	}
	offsetFlag := func(name, s string) (int64, bool, error) {
		if s == "" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("--%s %q: want an offset, 0 or more", name, s)
		}
		return n, true, nil
	}
	from, hasFrom, err := offsetFlag("from", *fromFlag)
	if err != nil {
		return usageErr("%v", err)
	}
	to, hasTo, err := offsetFlag("to", *toFlag)
	if err != nil {
		return usageErr("%v", err)
	}
	if hasFrom && hasTo && from > to {
		return usageErr("--from %d is after --to %d: give the first and the last offset held", from, to)
	}
	now := time.Now().UnixMilli()
	if *nowFlag != "" {
		ms, err := parseTimeFlag(*nowFlag)
		if err != nil || ms < 0 || ms > timeline.MaxMillis {
			return usageErr("--now: %v", timeFlagErr(*nowFlag, err))
		}
		now = ms
	}
	dir, code := osDir("savepoint", fs.Arg(0), stderr)
	if code >= 0 {
		return code
	}
	fsys := vfs.OS()
	if code := checkPartition("savepoint", fsys, dir, stderr); code >= 0 {
		return code
	}
	if *list {
		return savepointList(fsys, dir, *jsonOut, stdout, stderr)
	}
	w := savepointWriter{fsys: fsys, dir: dir, by: *by, comment: *comment, now: now, json: *jsonOut, stdout: stdout, stderr: stderr}
	if *releaseFlag != "" {
		return w.run(func(tl *timeline.Timeline) int { return w.release(tl, *releaseFlag) })
	}
	return w.run(func(tl *timeline.Timeline) int { return w.take(tl, *label, from, hasFrom, to, hasTo) })
}

// savepointErr reports an error reading or writing the timeline: exit 1
// for damage, 3 otherwise.
func savepointErr(err error, stderr io.Writer) int {
	fmt.Fprintf(stderr, "segviz savepoint: %v\n", err)
	var ce *format.CorruptionError
	if errors.As(err, &ce) {
		return exitProblem
	}
	return exitFailure
}

// savepointList prints the savepoints: read-only, no lock.
func savepointList(fsys vfs.FS, dir string, asJSON bool, stdout, stderr io.Writer) int {
	tl, err := timeline.Open(fsys, dir, timeline.Options{ReadOnly: true})
	if err != nil {
		return savepointErr(err, stderr)
	}
	insts, err := tl.Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionSavepoint}})
	if err != nil {
		return savepointErr(err, stderr)
	}
	entries := savepoints(insts)
	pending := 0
	for _, x := range tl.Pending() {
		if x.Instant().Action == timeline.ActionSavepoint {
			pending++
		}
	}
	if pending > 0 {
		fmt.Fprintf(stderr, "segviz savepoint: %s left requested or inflight by an interrupted run: it takes no hold (the next take or release rolls it back)\n", plural(pending, "savepoint instant"))
	}
	out := struct {
		Savepoints []savepointJSON `json:"savepoints"`
	}{Savepoints: []savepointJSON{}}
	for _, e := range entries {
		out.Savepoints = append(out.Savepoints, e.json())
	}
	text := func() {
		inForce := 0
		for _, e := range entries {
			if e.release == nil {
				inForce++
			}
		}
		fmt.Fprintf(stdout, "savepoints of %s: %d in force, %d released\n", dir, inForce, len(entries)-inForce)
		if len(entries) == 0 {
			return
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SAVEPOINT\tTAKEN\tLABEL\tOFFSETS\tBY\tSTATE\tCOMMENT")
		for _, e := range entries {
			state := "in force"
			if e.release != nil {
				state = fmt.Sprintf("released %s (instant %s)", retention.FormatTime(e.release.Time.Millis), e.release.Time)
				if e.rel.By != "" {
					state += " by " + e.rel.By
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d-%d\t%s\t%s\t%s\n", e.inst.Time, retention.FormatTime(e.inst.Time.Millis), e.sp.Label,
				e.sp.FirstOffset, e.sp.LastOffset, dash(e.sp.By), state, dash(e.sp.Comment))
		}
		tw.Flush()
	}
	if !report(stdout, stderr, "savepoint", asJSON, out, text) {
		return exitFailure
	}
	return exitOK
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// savepointWriter takes or releases a savepoint under the partition's
// lock.
type savepointWriter struct {
	fsys           vfs.FS
	dir            string
	by, comment    string
	now            int64
	json           bool
	stdout, stderr io.Writer
}

// run takes the lock, opens the timeline for writing, rolls back the
// savepoint instants an interrupted run left pending (a savepoint changes
// no file of the partition, and one not completed takes no hold), and
// calls do.
func (w *savepointWriter) run(do func(*timeline.Timeline) int) int {
	lock, err := kafkalog.LockPartition(w.fsys, w.dir)
	if err != nil {
		if code := writerError("savepoint", err, w.stderr); code >= 0 {
			return code
		}
		fmt.Fprintf(w.stderr, "segviz savepoint: %v\n", err)
		return exitFailure
	}
	defer lock.Close()
	tl, err := timeline.Open(w.fsys, w.dir, timeline.Options{Clock: fixedClock(w.now)})
	if err != nil {
		fmt.Fprintf(w.stderr, "segviz savepoint: the timeline of %s cannot be read, so nothing was written\n", w.dir)
		return savepointErr(err, w.stderr)
	}
	for _, x := range tl.Pending() {
		inst := x.Instant()
		if inst.Action != timeline.ActionSavepoint {
			continue
		}
		if err := x.Rollback("an interrupted savepoint: it took no hold"); err != nil {
			return savepointErr(err, w.stderr)
		}
		fmt.Fprintf(w.stderr, "segviz savepoint: rolled back the savepoint instant %s an interrupted run left %s: it took no hold\n", inst.Time, inst.State)
	}
	return do(tl)
}

// record writes a savepoint instant: requested, inflight, completed.
func (w *savepointWriter) record(tl *timeline.Timeline, sp *timeline.Savepoint) (timeline.Instant, error) {
	x, err := tl.Begin(timeline.ActionSavepoint, sp)
	if err != nil {
		return timeline.Instant{}, err
	}
	if err := x.Inflight(); err != nil {
		return timeline.Instant{}, err
	}
	if err := x.Complete(sp); err != nil {
		return timeline.Instant{}, err
	}
	return x.Instant(), nil
}

// take records a hold on [from, to] (defaults: the whole log).
func (w *savepointWriter) take(tl *timeline.Timeline, label string, from int64, hasFrom bool, to int64, hasTo bool) int {
	// Read-only: a savepoint changes none of Kafka's files, not even a
	// torn tail a writer's open would cut.
	l, err := kafkalog.Open(w.fsys, w.dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true, Clock: fixedClock(w.now)})
	if err != nil {
		fmt.Fprintf(w.stderr, "segviz savepoint: %v\n", err)
		return retentionErrCode(err)
	}
	defer l.Close()
	start, end := l.LogStartOffset(), l.LogEndOffset()
	if start >= end {
		fmt.Fprintf(w.stderr, "segviz savepoint: %s holds no record (log start offset %d, log end offset %d): there is nothing to hold\n", w.dir, start, end)
		return exitUsage
	}
	if !hasFrom {
		from = start
	}
	if !hasTo {
		to = end - 1
	}
	switch {
	case to < start:
		fmt.Fprintf(w.stderr, "segviz savepoint: --to %d is below the log start offset %d: offsets below it are gone and cannot be held; the log holds offsets %d-%d\n", to, start, start, end-1)
		return exitUsage
	case from < start:
		fmt.Fprintf(w.stderr, "segviz savepoint: --from %d is below the log start offset %d: offsets below it are gone and cannot be held; the log holds offsets %d-%d\n", from, start, start, end-1)
		return exitUsage
	case to >= end:
		fmt.Fprintf(w.stderr, "segviz savepoint: --to %d is at or past the log end offset %d: offsets not written yet cannot be held; the log holds offsets %d-%d\n", to, end, start, end-1)
		return exitUsage
	case from > to:
		fmt.Fprintf(w.stderr, "segviz savepoint: the range %d-%d is empty: --from must be at most --to (the log holds offsets %d-%d)\n", from, to, start, end-1)
		return exitUsage
	}
	sp := &timeline.Savepoint{Label: label, By: w.by, Comment: w.comment, FirstOffset: from, LastOffset: to, LogStartOffset: start, LogEndOffset: end}
	segs := l.Segments()
	var first, last int64 = -1, -1
	for i, s := range segs {
		next := end
		if i+1 < len(segs) {
			next = segs[i+1].BaseOffset()
		}
		ts, err := s.LargestTimestamp()
		if err != nil {
			ts = -1
		}
		sp.Segments = append(sp.Segments, timeline.SegmentRef{BaseOffset: s.BaseOffset(), NextOffset: next, Size: s.Size(), LargestTimestamp: ts})
		if s.BaseOffset() < next && from < next && to >= s.BaseOffset() {
			if first < 0 {
				first = s.BaseOffset()
			}
			last = s.BaseOffset()
		}
	}
	inst, err := w.record(tl, sp)
	if err != nil {
		return savepointErr(err, w.stderr)
	}
	e := savepointEntry{inst: inst, sp: sp}
	text := func() {
		segs := fmt.Sprintf("segments %d to %d", first, last)
		if first == last {
			segs = fmt.Sprintf("segment %d", first)
		}
		fmt.Fprintf(w.stdout, "took %s: it holds offsets %d-%d of %s (%s)\n", timeline.Hold{Savepoint: inst.Time, Label: label}, from, to, w.dir, segs)
		fmt.Fprintf(w.stdout, "  retention and compaction keep segment %d and every later one while it is in force\n", first)
		fmt.Fprintf(w.stdout, "  recorded in %s/%s; release it with: segviz savepoint --release %s %s\n", w.dir, timeline.DirName, inst.Time, w.dir)
	}
	if !report(w.stdout, w.stderr, "savepoint", w.json, e.json(), text) {
		return exitFailure
	}
	return exitOK
}

// release ends the hold of the savepoint at instant time t.
func (w *savepointWriter) release(tl *timeline.Timeline, t string) int {
	insts, err := tl.Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionSavepoint}})
	if err != nil {
		return savepointErr(err, w.stderr)
	}
	entries := savepoints(insts)
	var match []savepointEntry
	if it, err := timeline.ParseInstantTime(t); err == nil {
		for _, e := range entries {
			if e.inst.Time == it {
				match = append(match, e)
			}
		}
	} else if ms, err := strconv.ParseInt(t, 10, 64); err == nil {
		for _, e := range entries {
			if e.inst.Time.Millis == ms {
				match = append(match, e)
			}
		}
	} else {
		fmt.Fprintf(w.stderr, "segviz savepoint: --release %q: want a savepoint's instant time (17 digits, as --list prints it)\n", t)
		return exitUsage
	}
	switch {
	case len(match) == 0:
		fmt.Fprintf(w.stderr, "segviz savepoint: no savepoint of %s was taken at %s; \"segviz savepoint --list %s\" lists them\n", w.dir, t, w.dir)
		return exitUsage
	case len(match) > 1:
		fmt.Fprintf(w.stderr, "segviz savepoint: %d savepoints were taken in the millisecond %s: give the instant time in full (17 digits, as --list prints it)\n", len(match), t)
		return exitUsage
	case match[0].release != nil:
		fmt.Fprintf(w.stderr, "segviz savepoint: %s was already released at %s (instant %s): nothing to do\n",
			timeline.Hold{Savepoint: match[0].inst.Time, Label: match[0].sp.Label}, retention.FormatTime(match[0].release.Time.Millis), match[0].release.Time)
		return exitUsage
	}
	e := match[0]
	rt := e.inst.Time
	// The release records the log as it is when the hold ends.
	l, err := kafkalog.Open(w.fsys, w.dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true, Clock: fixedClock(w.now)})
	if err != nil {
		fmt.Fprintf(w.stderr, "segviz savepoint: %v\n", err)
		return retentionErrCode(err)
	}
	rel := &timeline.Savepoint{Label: e.sp.Label, By: w.by, Comment: w.comment, FirstOffset: e.sp.FirstOffset, LastOffset: e.sp.LastOffset, Release: &rt,
		LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset()}
	l.Close()
	inst, err := w.record(tl, rel)
	if err != nil {
		return savepointErr(err, w.stderr)
	}
	e.release, e.rel = &inst, rel
	text := func() {
		fmt.Fprintf(w.stdout, "released %s (offsets %d-%d) by instant %s\n", timeline.Hold{Savepoint: rt, Label: e.sp.Label}, e.sp.FirstOffset, e.sp.LastOffset, inst.Time)
		fmt.Fprintf(w.stdout, "  the next retention check or clean of %s deletes as Kafka would, the segments it kept included\n", w.dir)
	}
	if !report(w.stdout, w.stderr, "savepoint", w.json, e.json(), text) {
		return exitFailure
	}
	return exitOK
}
