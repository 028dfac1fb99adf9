package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/retentionapply"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

const retentionHelp = `Usage: segviz retention [flags] DIR
       segviz retention --apply [--now T] [flags] DIR
       segviz retention --what-if [--rate R] [--record-size B] [--batch N] [--duration D] [flags]

Kafka deletes whole segments, so a record outlives retention.ms by up to
segment.ms plus a retention check interval. This command says when.

For a partition directory DIR it prints the plan of a retention check at
--now (the segments Kafka would delete, oldest first, each with the rule
that deletes it and the timestamp that decided, and the new log start
offset) and, for every segment, the latest time its records can still be
read: "readable until". The rules are Kafka's (UnifiedLog.deleteOldSegments):

  1. log start offset: a segment whose successor starts at or below the log
     start offset goes (after a DeleteRecords, or an interrupted deletion);
  2. retention.bytes: the oldest segments go while the log stays at least
     retention.bytes without them (so a partition keeps up to
     retention.bytes + one segment: a floor, not a cap);
  3. retention.ms: a segment goes once its newest record is more than
     retention.ms old (its file's mtime when it has no timestamps).

Each rule deletes only from the oldest segment on, stops at the first it
keeps, never passes the high watermark, and never deletes the empty active
segment; when every segment qualifies the log rolls first. The checks run
every log.retention.check.interval.ms (5 min), the first
log.initial.task.delay.ms (30 s) after the broker starts; the files stay
on disk as .deleted for file.delete.delay.ms (60 s) more.

Savepoints ("segviz savepoint") are legal holds: the first segment
holding an offset a savepoint pins is not deleted by any rule, and neither
is any later one (Kafka deletes only a prefix). The plan lists each kept
segment with the savepoint that keeps it and the rule it stops; the held
segments' bytes still count toward retention.bytes. Their readable-until
is "never" while the hold is in force, with when they would go were it
released now. Once released, the next check deletes as Kafka would.

A tiered topic (remote.storage.enable=true; KIP-405) follows other rules:
its local segments go by local.retention.ms/bytes, and only once copied
to the remote; retention.ms/bytes then apply to the remote. For it this
command prints what "segviz tier status [--remote URI]" prints: the next
check, and per segment "on local disk until" and "readable until"; its
--apply is refused (exit 2): the check is "segviz tier upload".

Without --apply, DIR is opened read-only: nothing in it is ever written.

--apply runs the check for real: it takes Kafka's lock of the log
directory (an flock of its .lock, as a broker holds it; if a broker or
another segviz holds it, the command stops before writing anything, exit
3), opens the partition as a writer (cutting only a torn tail, refusing
damage), makes the same plan and carries it out as Kafka does: the log
start offset moves to the first segment kept, durably, then the deleted
segments' files are renamed .deleted; when every segment goes, the log
rolls a new active segment first. Each rule that deletes is recorded as a
"clean" instant of the partition's timeline (DIR/.segkit/timeline; see
"segviz history"), the roll as a "roll" instant, stamped with --now.
Kafka removes the .deleted files file.delete.delay.ms later, so that
reads in flight can finish; this command cannot wait: it removes them
when it closes the partition, at its end (no broker runs while it holds
the lock), and says so. If it is killed first, the next open of the
partition (Kafka's or segkit's) removes them. Instants an interrupted
--apply left pending are resolved first (completed if their change is in
place, rolled back if not).

A partition
directory carries no topic config, so unset settings are Kafka's defaults;
set them with the flags below, --config key=value (repeatable; topic or
broker property names) or --config-file (a .properties file). Without
--broker-start the phase of the checks is unknown, and each readable-until
time is the latest the check can be: the instant the segment qualifies
plus the check interval. The high watermark is read from the log
directory's replication-offset-checkpoint when there is one; otherwise it
is the log end offset.

--what-if simulates a steady traffic under the config (no DIR) and prints
the timeline of rolls, deletions and removals, the disk use it saw and the
worst case by formula: lifetime = min(segment.ms, time to fill
segment.bytes) + retention.ms + check interval (+ file.delete.delay.ms on
disk); disk per partition ≤ retention.bytes + one segment + one interval's
traffic, or the traffic of one lifetime.

Times are RFC 3339 with milliseconds, UTC; --json prints one object with
times in epoch milliseconds:

  {"now", "logStartOffset", "newLogStartOffset",
   "deletions": [{"baseOffset", "reason": "time"|"size"|"logStartOffset", "largestTimestamp"}],
   "segments":  [{"baseOffset", "size", "largestTimestamp", "readableUntil",
                  "ifAppendsContinue", "heldBy", "ifReleased"}],
   "holds":     [{"savepoint", "takenAt", "label", "firstOffset", "lastOffset"}],
   "held":      [{"baseOffset", "savepoint", "label", "pinned", "blocked", "explanation"}]}

("readableUntil" is null for a segment no rule will delete. "holds" are the
savepoints in force; "held" the segments they keep, "pinned" when the
segment holds an offset of the savepoint itself, "blocked" the rule the
hold stops, or null; "heldBy" is the savepoint keeping the segment, or
null, and "ifReleased" its readable-until were the holds released now.)
With --apply
the object is the plan carried out ("segments": the log as it was left)
plus "applied", "instants" (the instants recorded, as "segviz history
--json" prints them), "resolved", "removedFiles" and "keptDeleted"; see
docs/history.md.

Exit status: 0 when the plan was made, warnings included (timestamps that
put records at risk: stamped in the future, which blocks the time rule, or
written already older than retention.ms, which the next check deletes), 1
when damage in the partition (corruption) stopped it, 2 for a bad command
line, 3 when DIR could not be read. With --apply: 0 when nothing was
deleted, 1 when segments were, 2 for a bad command line or a DIR that is
not a partition directory, 3 when the command failed (the log directory
locked by a broker or another segviz, or damage a writer will not cut:
nothing written; or I/O, the timeline unreadable, a deletion that failed
midway, which the next --apply resolves).

Examples:
  segviz retention /var/kafka-logs/payments-0
  segviz retention --retention.ms 60000 --segment.ms 180000 --now 2026-03-02T09:06:01Z payments-0
  segviz retention --apply --retention.ms 60000 payments-0
  segviz retention --config-file payments.properties --broker-start 2026-03-02T08:55:31Z --json payments-0 | jq .
  segviz retention --what-if --retention.ms 60000 --segment.ms 180000 --rate 0.2 --duration 30m
  segviz retention --what-if --segment.bytes 1048576 --retention.bytes 2097152 --rate 1.5 --record-size 1024 --batch 15 --duration 4h
`

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// retentionOpts are the parsed flags.
type retentionOpts struct {
	topic, broker map[string]string
	now           int64
	brokerStart   int64
	hasStart      bool
	json          bool
	whatIf        bool
	rate          float64
	recordSize    int
	batch         int
	duration      int64
	engine        bool
	apply         bool
}

func runRetention(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("retention", retentionHelp, stderr)
	// Topic settings, with Kafka's names; unset ones keep the defaults.
	topicFlags := []struct{ name, usage string }{
		{config.RetentionMs, "retention.ms: delete segments whose newest record is older (default 604800000, 7 days; -1 disables)"},
		{config.RetentionBytes, "retention.bytes: delete the oldest segments while the log stays at least this large (default -1, disabled)"},
		{config.SegmentMs, "segment.ms: roll the active segment once a record is this much newer than its first (default 604800000)"},
		{config.SegmentBytes, "segment.bytes: roll before a segment would pass this size (default 1073741824)"},
		{config.FileDeleteDelayMs, "file.delete.delay.ms: how long deleted segments stay as .deleted (default 60000)"},
		{config.CleanupPolicy, "cleanup.policy: delete, compact, or compact,delete (default delete)"},
	}
	topicVals := map[string]*string{}
	for _, f := range topicFlags {
		topicVals[f.name] = fs.String(f.name, "", f.usage)
	}
	checkInterval := fs.String(config.LogRetentionCheckIntervalMs, "", "log.retention.check.interval.ms: time between checks (default 300000)")
	initialDelay := fs.String(config.LogInitialTaskDelayMs, "", "log.initial.task.delay.ms: delay of the first check after the broker starts (default 30000)")
	var cfgPairs multiFlag
	fs.Var(&cfgPairs, "config", "a topic or broker setting `key=value` (repeatable)")
	cfgFile := fs.String("config-file", "", "a .properties `file` of topic or broker settings")
	nowFlag := fs.String("now", "", "the time of the check, epoch ms or RFC 3339 (default: the current time)")
	startFlag := fs.String("broker-start", "", "when the broker started, epoch ms or RFC 3339: fixes the phase of the checks")
	var o retentionOpts
	fs.BoolVar(&o.json, "json", false, "print one JSON object")
	fs.BoolVar(&o.whatIf, "what-if", false, "simulate a traffic instead of reading DIR")
	fs.Float64Var(&o.rate, "rate", 1, "--what-if: records per second")
	fs.IntVar(&o.recordSize, "record-size", 1024, "--what-if: bytes of each record's value")
	fs.IntVar(&o.batch, "batch", 1, "--what-if: records per batch")
	durFlag := fs.String("duration", "", "--what-if: how long to simulate (Go duration such as 90m or 36h, Nd for days, or ms; default: twice the worst-case lifetime, at most 30 days)")
	fs.BoolVar(&o.engine, "engine", false, "--what-if: run segkit's log engine in memory instead of the model (small configs only)")
	fs.BoolVar(&o.apply, "apply", false, "run the check for real, under Kafka's lock, and record it in the partition's timeline")
	remoteFlag := fs.String("remote", "", "a tiered topic's remote store, file://`DIR` (see segviz tier)")
	if code := parseFlags(fs, args, stdout); code >= 0 {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "segviz retention: "+format+"\n", a...)
		return exitUsage
	}

	// Settings: the file, then --config, then the named flags.
	o.topic, o.broker = map[string]string{}, map[string]string{}
	set := func(k, v string) {
		if k == config.LogRetentionCheckIntervalMs || k == config.LogInitialTaskDelayMs || k == config.RemoteLogManagerTaskIntervalMs {
			o.broker[k] = v
		} else {
			o.topic[k] = v
		}
	}
	if bad, err := applyConfig(*cfgFile, cfgPairs, set); err != nil {
		fmt.Fprintf(stderr, "segviz retention: %v\n", err)
		return exitFailure
	} else if bad != "" {
		return fail("--config %q: want key=value", bad)
	}
	fs.Visit(func(f *flag.Flag) {
		if v, ok := topicVals[f.Name]; ok {
			set(f.Name, *v)
		}
	})
	if *checkInterval != "" {
		set(config.LogRetentionCheckIntervalMs, *checkInterval)
	}
	if *initialDelay != "" {
		set(config.LogInitialTaskDelayMs, *initialDelay)
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(o.topic)
	if err != nil {
		return fail("%v", err)
	}
	broker, err := config.ParseBroker(o.broker)
	if err != nil {
		return fail("%v", err)
	}
	o.now = time.Now().UnixMilli()
	if *nowFlag != "" {
		if o.now, err = parseTimeFlag(*nowFlag); err != nil {
			return fail("--now: %v", err)
		}
	}
	if *startFlag != "" {
		if o.brokerStart, err = parseTimeFlag(*startFlag); err != nil {
			return fail("--broker-start: %v", err)
		}
		o.hasStart = true
	}

	if o.whatIf && o.apply {
		return fail("--what-if simulates and --apply deletes: give one of them")
	}
	if o.whatIf {
		if fs.NArg() != 0 {
			return fail("--what-if takes no DIR")
		}
		if *durFlag != "" {
			if o.duration, err = parseDurationFlag(*durFlag); err != nil {
				return fail("--duration: %v", err)
			}
		}
		return whatIf(cfg, broker, o, stdout, stderr)
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "segviz retention: want one partition directory")
		fs.Usage()
		return exitUsage
	}
	if cfg.RemoteStorageEnable {
		// A tiered topic: local segments go by local.retention.* and
		// only once copied, total retention applies to the remote. The
		// plan and forecast are tier status's; the check is tier upload.
		if o.apply {
			return fail("remote.storage.enable is true: a tiered topic's local segments may be deleted only once copied, so its check is \"segviz tier upload --remote URI %s\", which copies, then applies local and total retention", fs.Arg(0))
		}
		return retentionTiered(fs.Arg(0), cfg, broker, o, *remoteFlag, stdout, stderr)
	}
	if *remoteFlag != "" {
		return fail("--remote is for a tiered topic (remote.storage.enable=true)")
	}
	if o.apply {
		return retentionApply(fs.Arg(0), cfg, broker, o, stdout, stderr)
	}
	return retentionDir(fs.Arg(0), cfg, broker, o, stdout, stderr)
}

// retentionTiered is "segviz retention" on a tiered topic: the plan and
// the forecast of "segviz tier status".
func retentionTiered(dir string, cfg config.Config, broker config.Broker, o retentionOpts, uri string, stdout, stderr io.Writer) int {
	name := "retention"
	t := tierOpts{sub: "status", uri: uri, now: o.now, json: o.json, cfg: cfg, broker: broker, brokerStart: o.brokerStart, hasStart: o.hasStart}
	if cfg.Compact() {
		fmt.Fprintf(stderr, "segviz %s: %s has cleanup.policy %v: compacted topics are not tiered (Kafka's rule, KAFKA-19273)\n", name, dir, cfg.CleanupPolicy)
		return exitUsage
	}
	if uri != "" {
		var err error
		if t.remote, err = parseTierRemote(uri); err != nil {
			fmt.Fprintf(stderr, "segviz %s: %v\n", name, err)
			return exitUsage
		}
	}
	d, code := osDir(name, dir, stderr)
	if code >= 0 {
		return code
	}
	t.dir = d
	if code := checkPartition(name, vfs.OS(), d, stderr); code >= 0 {
		return code
	}
	if !o.json {
		fmt.Fprintln(stdout, "remote.storage.enable is true: the topic is tiered. Local segments are deleted by local.retention.ms/bytes (-2: retention.ms/bytes), and only once copied to the remote; retention.ms/bytes then apply to the remote plus the local-only bytes. The same as \"segviz tier status\":")
	}
	return tierStatus(t, stdout, stderr)
}

// fixedClock is the clock of a read-only open: now, always.
type fixedClock int64

func (c fixedClock) Now() time.Time { return time.UnixMilli(int64(c)) }

func retentionDir(dir string, cfg config.Config, broker config.Broker, o retentionOpts, stdout, stderr io.Writer) int {
	st, err := os.Stat(dir)
	if err != nil {
		fmt.Fprintf(stderr, "segviz retention: %v\n", err)
		return exitFailure
	}
	if !st.IsDir() {
		fmt.Fprintf(stderr, "segviz retention: %s is not a directory\n", dir)
		return exitUsage
	}
	dir = filepath.ToSlash(filepath.Clean(dir))
	fsys := vfs.OS()
	l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{ReadOnly: true, Clock: fixedClock(o.now)})
	if err != nil {
		fmt.Fprintf(stderr, "segviz retention: %v\n", err)
		return retentionErrCode(err)
	}
	defer l.Close()
	state, err := retention.StateOf(l)
	if err != nil {
		fmt.Fprintf(stderr, "segviz retention: %s: %v\n", dir, err)
		return retentionErrCode(err)
	}
	// The savepoints in force: read-only, so that the dry run plans what
	// --apply, which reads them under the lock, carries out.
	tl, err := timeline.Open(fsys, dir, timeline.Options{ReadOnly: true})
	if err == nil {
		var holds []timeline.Hold
		if holds, err = tl.Holds(); err == nil {
			state.Holds = retention.MergeHolds(state.Holds, holds)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "segviz retention: the timeline of %s cannot be read, so its savepoints are unknown and no plan is made: %v\n", dir, err)
		return retentionErrCode(err)
	}
	hwFrom := "the log end offset (no replication-offset-checkpoint entry)"
	if m, err := checkpoint.ReadOffsets(fsys, path.Join(path.Dir(dir), "replication-offset-checkpoint")); err == nil {
		if hw, ok := m[l.TopicPartition()]; ok {
			state.HighWatermark = min(max(hw, state.LogStartOffset), state.LogEndOffset)
			hwFrom = "replication-offset-checkpoint"
		}
	}
	p := retention.PolicyFrom(cfg, broker)
	sched := p.UnknownSchedule()
	if o.hasStart {
		sched = p.NewSchedule(o.brokerStart)
	}
	plan, err := p.Plan(state, o.now)
	if err != nil {
		fmt.Fprintf(stderr, "segviz retention: %v\n", err)
		return retentionErrCode(err)
	}
	fc, err := retention.ReadableUntil(state, p, sched, o.now)
	if err != nil {
		fmt.Fprintf(stderr, "segviz retention: %v\n", err)
		return retentionErrCode(err)
	}
	// Warnings (future or far-past timestamps) are printed and pass, as
	// in verify: the plan was computed.
	if o.json {
		if err := writeRetentionJSON(stdout, plan, fc, state); err != nil {
			fmt.Fprintf(stderr, "segviz retention: %v\n", err)
			return exitFailure
		}
		for _, w := range plan.Warnings {
			fmt.Fprintf(stderr, "segviz retention: %s\n", w)
		}
		return exitOK
	}
	printRetention(stdout, dir, l, state, hwFrom, p, sched, plan, fc)
	return exitOK
}

// retentionErrCode is the exit status of an error that stopped the plan:
// 1 for damage in the partition, 3 for a failure to read it.
func retentionErrCode(err error) int {
	var ce *format.CorruptionError
	if errors.As(err, &ce) {
		return exitProblem
	}
	return exitFailure
}

// retentionJSON is the --json object; its field names are part of the
// command's interface.
type retentionJSON struct {
	Now               int64              `json:"now"`
	LogStartOffset    int64              `json:"logStartOffset"`
	NewLogStartOffset int64              `json:"newLogStartOffset"`
	Deletions         []deletionJSON     `json:"deletions"`
	Segments          []segmentBoundJSON `json:"segments"`
	// Holds are the savepoints in force, Held the segments they keep.
	Holds []holdJSON `json:"holds"`
	Held  []heldJSON `json:"held"`
}

// holdJSON is a savepoint in force: "savepoint" is its instant time as
// "segviz savepoint --release" takes it, "takenAt" the same in epoch ms.
type holdJSON struct {
	Savepoint   string `json:"savepoint"`
	TakenAt     int64  `json:"takenAt"`
	Label       string `json:"label"`
	FirstOffset int64  `json:"firstOffset"`
	LastOffset  int64  `json:"lastOffset"`
}

func holdJSONOf(h timeline.Hold) holdJSON {
	return holdJSON{Savepoint: h.Savepoint.String(), TakenAt: h.Savepoint.Millis, Label: h.Label, FirstOffset: h.FirstOffset, LastOffset: h.LastOffset}
}

// heldJSON is a segment a savepoint keeps.
type heldJSON struct {
	BaseOffset  int64   `json:"baseOffset"`
	Savepoint   string  `json:"savepoint"`
	Label       string  `json:"label"`
	Pinned      bool    `json:"pinned"`
	Blocked     *string `json:"blocked"`
	Explanation string  `json:"explanation"`
}

type deletionJSON struct {
	BaseOffset       int64  `json:"baseOffset"`
	Reason           string `json:"reason"`
	LargestTimestamp int64  `json:"largestTimestamp"`
}

type segmentBoundJSON struct {
	BaseOffset       int64  `json:"baseOffset"`
	Size             int64  `json:"size"`
	LargestTimestamp int64  `json:"largestTimestamp"`
	ReadableUntil    *int64 `json:"readableUntil"`
	// IfAppendsContinue is the worst case should records keep being
	// appended; it differs from ReadableUntil only for an active segment
	// the check now deletes.
	IfAppendsContinue *int64 `json:"ifAppendsContinue"`
	// HeldBy is the savepoint that keeps the segment (null: none);
	// IfReleased its readable-until were every hold released now.
	HeldBy     *holdJSON `json:"heldBy"`
	IfReleased *int64    `json:"ifReleased"`
}

func writeRetentionJSON(w io.Writer, plan retention.Plan, fc retention.Forecast, st retention.LogState) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(retentionJSONOf(plan, fc, st))
}

// retentionJSONOf is the --json object of a plan and a forecast.
func retentionJSONOf(plan retention.Plan, fc retention.Forecast, st retention.LogState) retentionJSON {
	out := retentionJSON{
		Now: plan.Now, LogStartOffset: st.LogStartOffset, NewLogStartOffset: plan.NewLogStartOffset,
		Deletions: []deletionJSON{}, Segments: []segmentBoundJSON{}, Holds: []holdJSON{}, Held: []heldJSON{},
	}
	for _, h := range plan.Holds {
		out.Holds = append(out.Holds, holdJSONOf(h))
	}
	for _, h := range plan.Held {
		j := heldJSON{BaseOffset: h.BaseOffset, Savepoint: h.Hold.Savepoint.String(), Label: h.Hold.Label, Pinned: h.Pinned, Explanation: h.Explanation}
		if h.Blocked != "" {
			r := string(h.Blocked)
			j.Blocked = &r
		}
		out.Held = append(out.Held, j)
	}
	for _, d := range plan.Deletions {
		out.Deletions = append(out.Deletions, deletionJSON{d.BaseOffset, string(d.Reason), d.LargestTimestamp})
	}
	for _, b := range fc.Segments {
		s := segmentBoundJSON{BaseOffset: b.BaseOffset, Size: b.Size, LargestTimestamp: b.LargestTimestamp}
		if b.ReadableUntil != retention.Never {
			v := b.ReadableUntil
			s.ReadableUntil = &v
		}
		if b.IfAppendsContinue != retention.Never {
			v := b.IfAppendsContinue
			s.IfAppendsContinue = &v
		}
		if b.HeldBy != nil {
			h := holdJSONOf(*b.HeldBy)
			s.HeldBy = &h
		}
		if b.IfReleased != retention.Never {
			v := b.IfReleased
			s.IfReleased = &v
		}
		out.Segments = append(out.Segments, s)
	}
	return out
}

func printRetention(w io.Writer, dir string, l *kafkalog.Log, st retention.LogState, hwFrom string, p retention.Policy, sched retention.Schedule, plan retention.Plan, fc retention.Forecast) {
	printRetentionHeader(w, dir, st, hwFrom, p, sched, plan.Now)
	printPlan(w, plan)
	printForecast(w, p, fc)
	if len(plan.Warnings) > 0 {
		fmt.Fprintln(w, "\nwarnings:")
		for _, x := range plan.Warnings {
			fmt.Fprintf(w, "  %s\n", x)
		}
	}
}

// printRetentionHeader prints the partition, its offsets, the config and
// the check's time.
func printRetentionHeader(w io.Writer, dir string, st retention.LogState, hwFrom string, p retention.Policy, sched retention.Schedule, now int64) {
	fmt.Fprintf(w, "partition %s\n", dir)
	fmt.Fprintf(w, "  log start offset %d, log end offset %d, high watermark %d (%s); %d segments, %d bytes\n",
		st.LogStartOffset, st.LogEndOffset, st.HighWatermark, hwFrom, len(st.Segments), st.Size())
	fmt.Fprintf(w, "  %s=%d %s=%d %s=%s %s=%d %s=%d; %s\n",
		config.RetentionMs, p.RetentionMs, config.RetentionBytes, p.RetentionBytes, config.CleanupPolicy, strings.Join(p.CleanupPolicy, ","),
		config.SegmentMs, p.SegmentMs, config.FileDeleteDelayMs, p.FileDeleteDelayMs, sched)
	fmt.Fprintf(w, "  now %s (%d)\n\n", retention.FormatTime(now), now)
}

// printPlan prints what a check deletes (or, applied, deleted).
func printPlan(w io.Writer, plan retention.Plan) {
	if len(plan.Deletions) == 0 {
		fmt.Fprintf(w, "plan: a check now deletes nothing (log start offset stays %d)\n", plan.NewLogStartOffset)
	} else {
		roll := ""
		if plan.RollFirst {
			roll = ", rolling a new active segment first"
		}
		fmt.Fprintf(w, "plan: a check now deletes %d segment(s), %d bytes%s; log start offset %d -> %d\n",
			len(plan.Deletions), plan.Bytes(), roll, plan.LogStartOffset, plan.NewLogStartOffset)
		for _, d := range plan.Deletions {
			fmt.Fprintf(w, "  %d (%s): %s\n", d.BaseOffset, d.Reason, d.Explanation)
		}
	}
	printHeld(w, plan)
}

// printHeld lists the segments savepoints keep, and what they stop.
func printHeld(w io.Writer, plan retention.Plan) {
	if len(plan.Held) == 0 {
		return
	}
	stopped := 0
	for _, h := range plan.Held {
		if h.Blocked != "" {
			stopped++
		}
	}
	first := plan.Held[0]
	stops := "without the holds this check would delete nothing more"
	if stopped > 0 {
		stops = "without the holds this check would also delete " + plural(stopped, "segment")
	}
	fmt.Fprintf(w, "held: segment %d and the %s after it stay while %s is in force (Kafka deletes only a prefix); %s\n",
		first.BaseOffset, plural(len(plan.Held)-1, "segment"), first.Hold, stops)
	for _, h := range plan.Held {
		fmt.Fprintf(w, "  %d (%s): %s\n", h.BaseOffset, offsetRange(h.BaseOffset, h.NextOffset), h.Explanation)
	}
}

// printForecast prints until when each segment can be read.
func printForecast(w io.Writer, p retention.Policy, fc retention.Forecast) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEGMENT\tOFFSETS\tBYTES\tLARGEST TIMESTAMP\tREADABLE UNTIL\tON DISK UNTIL\tRULE")
	for _, b := range fc.Segments {
		offs := "-"
		if b.NextOffset > b.BaseOffset {
			offs = fmt.Sprintf("%d-%d", b.BaseOffset, b.NextOffset-1)
		}
		rule := string(b.Reason)
		if rule == "" {
			rule = "-"
		}
		if b.HeldBy != nil {
			rule = "held"
		}
		if b.Active {
			rule += " (active)"
		}
		ts := retention.FormatTime(b.LargestTimestamp)
		if b.Size == 0 {
			ts = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\n", b.BaseOffset, offs, b.Size, ts,
			retention.FormatTime(b.ReadableUntil), retention.FormatTime(b.OnDiskUntil), rule)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nwhy:")
	for _, b := range fc.Segments {
		fmt.Fprintf(w, "  %d: %s\n", b.BaseOffset, b.Explanation)
		if b.IfAppendsContinue != b.ReadableUntil {
			fmt.Fprintf(w, "  %d: if appends continue (not what the plan above assumes): readable until %s, on disk until %s\n", b.BaseOffset,
				retention.FormatTime(b.IfAppendsContinue), retention.FormatTime(satAddMs(b.IfAppendsContinue, p.FileDeleteDelayMs)))
		}
	}
}

// whatIf runs the --what-if simulation.
func whatIf(cfg config.Config, broker config.Broker, o retentionOpts, stdout, stderr io.Writer) int {
	traffic := retention.Traffic{RecordsPerSecond: o.rate, RecordBytes: o.recordSize, BatchRecords: o.batch}
	p := retention.PolicyFrom(cfg, broker)
	worst, err := retention.WorstCase(p, traffic)
	if err != nil {
		fmt.Fprintf(stderr, "segviz retention: %v\n", err)
		return exitUsage
	}
	dur := o.duration
	if dur == 0 {
		dur = 7 * 24 * 3600 * 1000
		if worst.OnDiskMs != retention.Never {
			dur = min(2*worst.OnDiskMs, 30*24*3600*1000)
		}
	}
	tl, err := retention.Simulate(retention.SimConfig{Config: cfg, Broker: broker, Traffic: traffic, Start: o.now, Duration: dur, Engine: o.engine})
	if err != nil {
		fmt.Fprintf(stderr, "segviz retention: %v\n", err)
		if errors.Is(err, retention.ErrSimTooLarge) || errors.Is(err, retention.ErrInvalidTraffic) {
			return exitUsage
		}
		return exitFailure
	}
	retention.SortEvents(tl.Events)
	if o.json {
		return whatIfJSON(stdout, stderr, tl, worst)
	}
	w := stdout
	fmt.Fprintf(w, "what-if: %g records/s of %d-byte values, %d a batch (%d bytes a batch, %.0f bytes/s), for %s\n",
		o.rate, o.recordSize, max(o.batch, 1), worst.BatchBytes, worst.BytesPerSecond, finding.Duration(dur))
	fmt.Fprintf(w, "  segment.bytes=%d segment.ms=%d retention.ms=%d retention.bytes=%d cleanup.policy=%s file.delete.delay.ms=%d\n",
		cfg.SegmentBytes, cfg.SegmentMs, p.RetentionMs, p.RetentionBytes, strings.Join(p.CleanupPolicy, ","), p.FileDeleteDelayMs)
	how := "the model (Plan over the log's state, with the engine's roll rule)"
	if o.engine {
		how = "segkit's log engine on an in-memory filesystem, with the Cleaner"
	}
	fmt.Fprintf(w, "  checks every %s, the first %s after the start; simulated by %s\n\n", finding.Duration(p.RetentionCheckIntervalMs), finding.Duration(p.InitialTaskDelayMs), how)
	const maxLines = 500
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tEVENT\tSEGMENT\tBYTES\tWHY")
	counts := map[retention.EventKind]int{}
	for i, e := range tl.Events {
		counts[e.Kind]++
		if i < maxLines {
			why := e.Detail
			if e.Kind == retention.EventDelete {
				why = string(e.Reason) + ": " + why
			}
			fmt.Fprintf(tw, "+%s\t%s\t%d\t%d\t%s\n", relTime(e.At-o.now), e.Kind, e.BaseOffset, e.Size, why)
		}
	}
	tw.Flush()
	if len(tl.Events) > maxLines {
		fmt.Fprintf(w, "... %d more events\n", len(tl.Events)-maxLines)
	}
	fmt.Fprintf(w, "\nsummary: %d records in %d batches; %d checks; %d rolls, %d deletions, %d removals\n",
		tl.Records, tl.Batches, tl.Checks, counts[retention.EventRoll], counts[retention.EventDelete], counts[retention.EventRemove])
	fmt.Fprintf(w, "  peak log size %d bytes (%s), on disk with .deleted files %d bytes (%s); at the end %d and %d bytes\n",
		tl.PeakLogBytes, mib(tl.PeakLogBytes), tl.PeakDiskBytes, mib(tl.PeakDiskBytes), tl.EndLogBytes, tl.EndDiskBytes)
	fmt.Fprintf(w, "  longest a record stayed readable: %s; on disk: %s\n",
		finding.Duration(tl.MaxReadableMs), finding.Duration(tl.MaxOnDiskMs))
	fmt.Fprintf(w, "worst case (formula): readable ≤ %s, on disk ≤ %s, log ≤ %s, disk ≤ %s\n",
		msText(worst.ReadableMs), msText(worst.OnDiskMs), bytesText(worst.LogBytes), bytesText(worst.DiskBytes))
	for _, x := range worst.Explanation {
		fmt.Fprintf(w, "  %s\n", x)
	}
	return exitOK
}

func whatIfJSON(stdout, stderr io.Writer, tl retention.Timeline, worst retention.Worst) int {
	type event struct {
		At         int64  `json:"at"`
		Kind       string `json:"kind"`
		BaseOffset int64  `json:"baseOffset"`
		Size       int64  `json:"size"`
		Reason     string `json:"reason,omitempty"`
		Detail     string `json:"detail"`
	}
	out := struct {
		Events        []event `json:"events"`
		Records       int64   `json:"records"`
		Checks        int     `json:"checks"`
		PeakLogBytes  int64   `json:"peakLogBytes"`
		PeakDiskBytes int64   `json:"peakDiskBytes"`
		MaxReadableMs int64   `json:"maxReadableMs"`
		MaxOnDiskMs   int64   `json:"maxOnDiskMs"`
		WorstCase     struct {
			ReadableMs *int64 `json:"readableMs"`
			OnDiskMs   *int64 `json:"onDiskMs"`
			LogBytes   *int64 `json:"logBytes"`
			DiskBytes  *int64 `json:"diskBytes"`
		} `json:"worstCase"`
	}{Events: []event{}, Records: tl.Records, Checks: tl.Checks, PeakLogBytes: tl.PeakLogBytes, PeakDiskBytes: tl.PeakDiskBytes,
		MaxReadableMs: tl.MaxReadableMs, MaxOnDiskMs: tl.MaxOnDiskMs}
	for _, e := range tl.Events {
		out.Events = append(out.Events, event{e.At, string(e.Kind), e.BaseOffset, e.Size, string(e.Reason), e.Detail})
	}
	opt := func(v, none int64) *int64 {
		if v == none {
			return nil
		}
		return &v
	}
	out.WorstCase.ReadableMs = opt(worst.ReadableMs, retention.Never)
	out.WorstCase.OnDiskMs = opt(worst.OnDiskMs, retention.Never)
	out.WorstCase.LogBytes = opt(worst.LogBytes, -1)
	out.WorstCase.DiskBytes = opt(worst.DiskBytes, -1)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "segviz retention: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func relTime(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	h := int64(d / time.Hour)
	return fmt.Sprintf("%d:%02d:%02d.%03d", h, int64(d/time.Minute)%60, int64(d/time.Second)%60, ms%1000)
}

func msText(ms int64) string {
	if ms == retention.Never {
		return "unbounded"
	}
	return finding.Duration(ms)
}

func bytesText(n int64) string {
	if n < 0 {
		return "unbounded"
	}
	return fmt.Sprintf("%d bytes (%s)", n, mib(n))
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

// parseTimeFlag reads epoch milliseconds or an RFC 3339 time.
func parseTimeFlag(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither epoch milliseconds nor an RFC 3339 time", s)
	}
	return t.UnixMilli(), nil
}

// parseDurationFlag reads a Go duration, Nd (days) or milliseconds.
func parseDurationFlag(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms > 0 {
		return ms, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseFloat(d, 64); err == nil && n > 0 && n < 1e5 {
			return int64(n * 86_400_000), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration (90m, 36h, 7d or milliseconds)", s)
	}
	return d.Milliseconds(), nil
}

// readProperties reads a Java .properties file's key=value (or key:value)
// lines; # and ! start comments. Continuation lines and escapes are not
// supported.
// applyConfig calls set with each setting of the properties file cfgFile
// (if any), then of each --config key=value pair, in that order, so that a
// pair overrides the file. It returns the first pair without "=", or an
// error reading the file.
func applyConfig(cfgFile string, pairs []string, set func(k, v string)) (bad string, err error) {
	if cfgFile != "" {
		props, err := readProperties(cfgFile)
		if err != nil {
			return "", err
		}
		for k, v := range props {
			set(k, v)
		}
	}
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return kv, nil
		}
		set(strings.TrimSpace(k), v)
	}
	return "", nil
}

func readProperties(name string) (map[string]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	props := map[string]string{}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			return nil, fmt.Errorf("%s:%d: want key=value", name, n)
		}
		props[strings.TrimSpace(line[:i])] = strings.TrimSpace(line[i+1:])
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return props, nil
}

// satAddMs adds a delay to a time, staying at retention.Never.
func satAddMs(t, d int64) int64 {
	if t == retention.Never || d <= 0 {
		return t
	}
	if t > retention.Never-d {
		return retention.Never
	}
	return t + d
}

// retentionApplyJSON is the --apply --json object: the dry run's fields
// for the plan carried out (segments: the log as the check left it), and
// what was recorded and removed. Its field names are part of the
// command's interface.
type retentionApplyJSON struct {
	retentionJSON
	// Applied says the plan was carried out.
	Applied bool `json:"applied"`
	// Instants are the instants recorded, as "segviz history --json"
	// prints them.
	Instants []instantJSON `json:"instants"`
	// Resolved are the instants an interrupted run had left pending.
	Resolved []resolvedJSON `json:"resolved"`
	// RemovedFiles are the files of the partition directory the command
	// removed (the deleted segments' files, producer snapshots below the
	// new log start offset); KeptDeleted the .deleted files it could not
	// remove, which the next open removes.
	RemovedFiles []string `json:"removedFiles"`
	KeptDeleted  []string `json:"keptDeleted"`
}

type resolvedJSON struct {
	Instant   int64  `json:"instant"`
	Action    string `json:"action"`
	Completed bool   `json:"completed"`
	Why       string `json:"why"`
}

// retentionApply runs --apply: one retention check for real, under the
// log directory's lock, recorded in the partition's timeline.
func retentionApply(name string, cfg config.Config, broker config.Broker, o retentionOpts, stdout, stderr io.Writer) int {
	dir, code := osDir("retention", name, stderr)
	if code >= 0 {
		return code
	}
	fsys := vfs.OS()
	if code := checkPartition("retention", fsys, dir, stderr); code >= 0 {
		return code
	}
	p := retention.PolicyFrom(cfg, broker)
	sched := p.UnknownSchedule()
	if o.hasStart {
		sched = p.NewSchedule(o.brokerStart)
	}
	lock, err := kafkalog.LockPartition(fsys, dir)
	if err != nil {
		if code := writerError("retention", err, stderr); code >= 0 {
			return code
		}
		fmt.Fprintf(stderr, "segviz retention: %v\n", err)
		return exitFailure
	}
	defer lock.Close() // after the log's Close: the lock goes last
	clk := fixedClock(o.now)
	// The timeline is checked first: a damaged one stops the command
	// before the log is opened for writing (which records on it, and
	// resolves what an interrupted run left pending).
	if _, err := timeline.Open(fsys, dir, timeline.Options{ReadOnly: true}); err != nil {
		fmt.Fprintf(stderr, "segviz retention: the timeline of %s cannot be read, so nothing was deleted: %v\n", dir, err)
		return exitFailure
	}
	l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Locked: true, Clock: clk, Timeline: true})
	if err != nil {
		if code := writerError("retention", err, stderr); code >= 0 {
			return code
		}
		fmt.Fprintf(stderr, "segviz retention: %v\n", err)
		return exitFailure
	}
	tl := l.Timeline()
	if later, err := tl.Instants(timeline.Filter{Since: timeline.InstantTime{Millis: o.now + 1}}); err == nil && len(later) > 0 {
		last := later[len(later)-1]
		fmt.Fprintf(stderr, "segviz retention: warning: the timeline has an instant at %s, after --now %s: instant times only increase, so this check's instants are stamped after it\n",
			retention.FormatTime(last.Time.Millis), retention.FormatTime(o.now))
	}
	closed := false
	defer func() {
		if !closed {
			l.Close()
		}
	}()
	printRemoved(stderr, "retention", l.LoadReport())
	before, err := vfs.ReadDir(fsys, dir) // after the load's own removals
	if err != nil {
		fmt.Fprintf(stderr, "segviz retention: %v\n", err)
		return exitFailure
	}
	// The engine's Open resolved the instants an interrupted run left.
	resolved := l.LoadReport().Resolved
	for _, r := range resolved {
		what := "rolled back"
		if r.Completed {
			what = "completed"
		}
		fmt.Fprintf(stderr, "segviz retention: %s the %s instant %s an interrupted run left %s: %s\n", what, r.Instant.Action, r.Instant.Time, r.Instant.State, r.Why)
	}
	hwFrom := "the log end offset (no replication-offset-checkpoint entry)"
	if m, err := checkpoint.ReadOffsets(fsys, path.Join(path.Dir(dir), checkpoint.ReplicationOffsetFile)); err == nil {
		if hw, ok := m[l.TopicPartition()]; ok {
			l.SetHighWatermark(hw)
			hwFrom = checkpoint.ReplicationOffsetFile
		}
	}
	rep, checkErr := retentionapply.Check(l, tl, p, o.now)
	var fc retention.Forecast
	if checkErr == nil {
		after, err := retention.StateOf(l)
		after.Holds = retention.MergeHolds(after.Holds, rep.Plan.Holds)
		if err == nil {
			fc, err = retention.ReadableUntil(after, p, sched, o.now)
		}
		if err != nil {
			checkErr = err
		}
	}
	closed = true
	closeErr := l.Close()
	removed, kept := removedFiles(fsys, dir, before)

	for _, w := range rep.Plan.Warnings {
		fmt.Fprintf(stderr, "segviz retention: %s\n", w)
	}
	if o.json {
		out := retentionApplyJSON{retentionJSON: retentionJSONOf(rep.Plan, fc, rep.State), Applied: checkErr == nil,
			Instants: []instantJSON{}, Resolved: []resolvedJSON{}, RemovedFiles: []string{}, KeptDeleted: []string{}}
		out.LogStartOffset = rep.Plan.LogStartOffset
		out.NewLogStartOffset = rep.LogStartOffset
		for _, inst := range rep.Instants {
			out.Instants = append(out.Instants, instantJSONOf(inst))
		}
		for _, r := range resolved {
			out.Resolved = append(out.Resolved, resolvedJSON{r.Instant.Time.Millis, string(r.Instant.Action), r.Completed, r.Why})
		}
		for _, f := range removed {
			out.RemovedFiles = append(out.RemovedFiles, f.Name())
		}
		out.KeptDeleted = append(out.KeptDeleted, kept...)
		if !report(stdout, stderr, "retention", true, out, nil) {
			return exitFailure
		}
	} else {
		printApply(stdout, dir, hwFrom, p, sched, rep, removed, kept)
	}
	switch {
	case checkErr != nil:
		fmt.Fprintf(stderr, "segviz retention: %v\n", checkErr)
		return exitFailure
	case closeErr != nil:
		fmt.Fprintf(stderr, "segviz retention: the check is done and recorded, but closing the partition failed: %v\n", closeErr)
		return exitFailure
	case len(rep.Plan.Deletions) > 0:
		return exitProblem
	}
	return exitOK
}

// removedFiles returns the regular files of before that dir no longer
// holds, and the .deleted files it still holds.
func removedFiles(fsys vfs.FS, dir string, before []fs.FileInfo) (removed []fs.FileInfo, kept []string) {
	now, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		return nil, nil
	}
	has := map[string]bool{}
	for _, fi := range now {
		has[fi.Name()] = true
		if !fi.IsDir() && strings.HasSuffix(fi.Name(), segment.DeletedSuffix) {
			kept = append(kept, fi.Name())
		}
	}
	for _, fi := range before {
		if !fi.IsDir() && !has[fi.Name()] {
			removed = append(removed, fi)
		}
	}
	return removed, kept
}

// printApply says what --apply did.
func printApply(w io.Writer, dir, hwFrom string, p retention.Policy, sched retention.Schedule, rep retentionapply.Report, removed []fs.FileInfo, kept []string) {
	plan := rep.Plan
	printRetentionHeader(w, dir, rep.State, hwFrom, p, sched, plan.Now)
	if len(plan.Deletions) == 0 {
		fmt.Fprintf(w, "applied: the check deleted nothing (log start offset stays %d); nothing recorded\n", rep.LogStartOffset)
		printHeld(w, plan)
		return
	}
	roll := ""
	if plan.RollFirst {
		roll = ", rolling a new active segment first"
	}
	fmt.Fprintf(w, "applied: the check deleted %d segment(s), %d bytes%s; log start offset %d -> %d\n",
		len(plan.Deletions), plan.Bytes(), roll, plan.LogStartOffset, rep.LogStartOffset)
	for _, d := range plan.Deletions {
		fmt.Fprintf(w, "  %d (%s, %s): %s\n", d.BaseOffset, offsetRange(d.BaseOffset, d.NextOffset), d.Reason, d.Explanation)
	}
	printHeld(w, plan)
	if len(rep.Instants) > 0 {
		fmt.Fprintf(w, "recorded in %s/%s (see \"segviz history %s\"):\n", dir, timeline.DirName, dir)
		for _, inst := range rep.Instants {
			fmt.Fprintf(w, "  %s %s, completed %s: %s\n", inst.Time, inst.Action, inst.Completed, instantSummary(inst))
		}
	}
	if len(removed) > 0 {
		fmt.Fprintf(w, "removed %d file(s): the deleted segments' files were renamed .deleted, then removed when the command closed the partition, without waiting %s=%d ms (Kafka waits for reads in flight; none runs while the lock is held)\n",
			len(removed), config.FileDeleteDelayMs, p.FileDeleteDelayMs)
		for _, fi := range removed {
			why := "a deleted segment's file"
			if strings.HasSuffix(fi.Name(), segment.SnapshotSuffix) {
				why = "a producer snapshot below the new log start offset, as Kafka deletes it"
			}
			fmt.Fprintf(w, "  %s (%d bytes): %s\n", fi.Name(), fi.Size(), why)
		}
	}
	if len(kept) > 0 {
		fmt.Fprintf(w, "left on disk: %s (the next open of the partition, Kafka's or segkit's, removes them)\n", strings.Join(kept, ", "))
	}
}
