package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/compactjson"
	"github.com/segkit/segkit/internal/historyjson"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

const compactHelp = `Usage: segviz compact --dry-run [--now T] [--config key=value ...] [--offset N] [--json] DIR
       segviz compact [--out DIR2] [--now T] [--config key=value ...] [--offset N] [--json] DIR

Runs Kafka's log cleaner (the rules of Kafka 4.3's LogCleanerManager,
Cleaner and MemoryRecords.filterTo) once on the partition directory DIR,
as a broker's cleaner thread does when it picks the partition, and says
exactly what it removed.

--dry-run writes nothing: it says what a clean now would do. Otherwise the
clean runs: on a copy with --out DIR2 (DIR is only read), or on DIR itself.
Either way the report has:

  - the cleanable range [first dirty, first uncleanable) and the dirty
    ratio, or why the log is not cleanable. The first dirty offset is the
    partition's entry of the log directory's cleaner-offset-checkpoint (or
    the log start offset); the range ends at the lowest of the last stable
    offset, the active segment (never cleaned: lower segment.ms or
    segment.bytes if compaction "isn't happening") and, with
    min.compaction.lag.ms, the first segment still within the lag. The log
    is cleanable when its dirty ratio is above min.cleanable.dirty.ratio
    (0.5), or a dirty segment is older than max.compaction.lag.ms;
  - the records and bytes removed, per segment and by reason: superseded
    (a later record of the key is in the cleaned range), tombstones past
    their delete horizon, unkeyed records, aborted transactions' records,
    transaction markers;
  - the tombstones and markers kept, and until when: a clean stamps a
    kept tombstone's batch with a delete horizon, now + delete.retention.ms
    (1 day), and the first clean after it removes it (KIP-534: two passes);
  - where the next clean starts (the new checkpoint: the end of the
    range, or where the offset map filled).

Savepoints ("segviz savepoint") are legal holds: the cleanable range ends
at the base of the first segment holding an offset a savepoint pins, so no
clean rewrites that segment or any later one, and the report names the
savepoint; a hold below the first dirty offset stops every clean (each
rewrites the log from its start). The holds are DIR's (with --out, the
copy is cleaned under DIR's holds too). Once released, the next clean runs
as Kafka's would.

A real run that rewrites segments records the clean on the partition's
timeline (DIR/.segkit/timeline, or DIR2's with --out: the copy does not
take DIR's timeline, whose history is DIR's, and starts its own) as one
compaction instant: requested with the segments it will replace, inflight
before the first cleaned file is written, completed with the segments
written and the records removed by reason once everything is durable.
The report names it ("segviz history" lists it); a clean that rewrites
nothing records nothing. A clean that fails before its first rename rolls
its instant back; a crash, or a later failure, leaves it inflight, and
the next open of the partition with its timeline for writing (the next
compact, retention --apply or restore --apply) completes it with the
groups swapped in, or rolls it back.

The dry run's numbers are what the real run then does, record for record.
The dry run reads the files as they are (it checks CRCs, not what only
recovery checks, such as a damaged base offset, which no CRC covers: see
"segviz verify"); a real run first opens the log as a writer (cutting only
a torn tail, resolving an interrupted clean's .cleaned/.swap files, as
Kafka's load does, and refusing damage).

--offset N adds, for the record at offset N, until when it can still be
read (after the clean, for a real run): a superseded value goes at the
first clean that covers its successor — which waits for the successor's
segment to roll, for min.compaction.lag.ms, for the last stable offset and
for the dirty ratio, unless max.compaction.lag.ms forces a clean; a
tombstone goes after its delete horizon; the latest value of a key is kept
by compaction forever (with cleanup.policy=compact,delete, retention still
deletes it).

A partition directory carries no topic config: settings are Kafka's
defaults, except cleanup.policy, which is compact unless set. Set them with
--config key=value (repeatable) or --config-file (a .properties file):
topic settings (cleanup.policy, min.cleanable.dirty.ratio,
delete.retention.ms, min.compaction.lag.ms, max.compaction.lag.ms,
segment.bytes, segment.ms, ...) and the broker's cleaner settings
log.cleaner.dedupe.buffer.size, log.cleaner.threads,
log.cleaner.io.buffer.size, log.cleaner.io.buffer.load.factor,
message.max.bytes and producer.id.expiration.ms. The high watermark (the
cleaner never cleans past it) is read from the log directory's
replication-offset-checkpoint when it has an entry for the partition;
otherwise it is the log end offset. --now sets the clean's clock (delete
horizons, compaction lags, producer expiry); the default is the current
time.

The real run writes DIR (or DIR2), the log directory's
cleaner-offset-checkpoint and, while it writes, sets aside its clean-
shutdown marker. It holds Kafka's lock of the log directory (an flock of
its .lock, as a broker holds it) for its whole run: if a broker or another
segviz holds it, it stops before writing anything (exit 3). A crash at any
point leaves a directory that Kafka's loader (or segkit's) brings to the
old segments or the cleaned ones, group by group. With --out, DIR2 must be
a new partition directory named like DIR, outside DIR; DIR's log start
offset and cleaner-offset-checkpoint entry are copied to DIR2's parent:
do not put DIR2 inside a broker's log directory.

Text goes to stdout; progress lines go to stderr only when it is a
terminal. --json prints one object (see docs/cli.md, "segviz compact").

Exit status: 0 when the report was made (cleanable or not) or the clean
ran; 1 when damage in the partition (corruption) stopped it, nothing
written; 2 for a bad command line, a DIR (or DIR2) that is not a partition
directory, or a DIR2 that is not empty; 3 when the command could not run:
the log directory locked by a broker or another segviz (nothing written),
or an I/O error or failed clean (groups already swapped in stay; the rest
is as it was).

Examples:
  segviz compact --dry-run /var/kafka-logs/users-0
  segviz compact --dry-run --config min.cleanable.dirty.ratio=0.1 --now 2026-03-02T09:00:00Z users-0
  segviz compact --out /tmp/users-0 --json /var/kafka-logs/users-0 | jq .removed
  segviz compact --dry-run --offset 1234 --config cleanup.policy=compact,delete users-0
  segviz compact /var/kafka-logs/users-0        # in place: stop the broker first
`

// cleanerKeys are the broker settings compact takes besides topic config.
var cleanerKeys = map[string]bool{
	"log.cleaner.dedupe.buffer.size": true, "log.cleaner.threads": true, "log.cleaner.io.buffer.size": true,
	"log.cleaner.io.buffer.load.factor": true, "message.max.bytes": true, "producer.id.expiration.ms": true,
}

func runCompact(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("compact", compactHelp, stderr)
	dryRun := fs.Bool("dry-run", false, "say what a clean now would do; write nothing")
	out := fs.String("out", "", "clean a copy of DIR made at `DIR2` (DIR is only read)")
	nowFlag := fs.String("now", "", "the clean's clock, epoch ms or RFC 3339 (default: the current time)")
	var cfgPairs multiFlag
	fs.Var(&cfgPairs, "config", "a topic or cleaner setting `key=value` (repeatable)")
	cfgFile := fs.String("config-file", "", "a .properties `file` of topic or cleaner settings")
	offsetFlag := fs.String("offset", "", "also say until when the record at offset `N` can still be read")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	if code := parseFlags(fs, args, stdout); code >= 0 {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "segviz compact: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "segviz compact: want one partition directory")
		fs.Usage()
		return exitUsage
	}
	if *dryRun && *out != "" {
		return usageErr("--dry-run writes nothing: it takes no --out")
	}
	offset := int64(-1)
	if *offsetFlag != "" {
		n, err := strconv.ParseInt(*offsetFlag, 10, 64)
		if err != nil || n < 0 {
			return usageErr("--offset %q: want an offset, 0 or more", *offsetFlag)
		}
		offset = n
	}
	now := time.Now().UnixMilli()
	if *nowFlag != "" {
		n, err := parseTimeFlag(*nowFlag)
		if err != nil {
			return usageErr("--now: %v", err)
		}
		now = n
	}

	// Settings: the file, then --config; cleanup.policy is compact unless
	// set.
	topic, cleaner := map[string]string{}, map[string]string{}
	set := func(k, v string) {
		if cleanerKeys[k] {
			cleaner[k] = v
		} else {
			topic[k] = v
		}
	}
	if bad, err := applyConfig(*cfgFile, cfgPairs, set); err != nil {
		fmt.Fprintf(stderr, "segviz compact: %v\n", err)
		return exitFailure
	} else if bad != "" {
		return usageErr("--config %q: want key=value", bad)
	}
	if _, ok := topic[config.CleanupPolicy]; !ok {
		topic[config.CleanupPolicy] = config.CleanupPolicyCompact
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(topic)
	if err != nil {
		return usageErr("%v", err)
	}
	opt, err := cleanerOptions(cleaner)
	if err != nil {
		return usageErr("%v", err)
	}
	opt.Clock = fixedClock(now)

	src, code := osDir("compact", fs.Arg(0), stderr)
	if code >= 0 {
		return code
	}
	fsys := vfs.OS()
	if code := checkPartition("compact", fsys, src, stderr); code >= 0 {
		return code
	}
	hw, hwFrom := highWatermark(fsys, src)
	if hw > 0 {
		opt.HighWatermark = hw
	}
	// DIR's savepoints: compaction reads the target's own timeline too
	// (under the lock, for a real run); a copy made with --out has none,
	// and is cleaned under DIR's.
	tl, err := timeline.Open(fsys, src, timeline.Options{ReadOnly: true})
	if err == nil {
		opt.Holds, err = tl.Holds()
	}
	if err != nil {
		fmt.Fprintf(stderr, "segviz compact: the timeline of %s cannot be read, so its savepoints are unknown and nothing was written: %v\n", src, err)
		return retentionErrCode(err)
	}
	progress := isTerminal(stderr)

	// A log that is not compacted is never cleaned: the command says why,
	// and writes nothing (not even a copy).
	planOnly := *dryRun || !cfg.Compact()
	target := src
	if *out != "" && !planOnly {
		abs, err := filepath.Abs(*out)
		if err != nil {
			fmt.Fprintf(stderr, "segviz compact: %v\n", err)
			return exitFailure
		}
		target = filepath.ToSlash(abs)
		if target == src {
			return usageErr("--out must differ from DIR (leave it out to clean DIR itself)")
		}
		if strings.HasPrefix(target, src+"/") {
			return usageErr("--out must be outside DIR")
		}
		if code := checkPartition("compact", fsys, target, stderr); code >= 0 {
			return code
		}
		findings, err := copyPartition(fsys, src, target)
		if err == nil {
			err = copyCleanerCheckpoint(fsys, src, target)
		}
		if err != nil {
			fmt.Fprintf(stderr, "segviz compact: %v\n", err)
			if errors.Is(err, errNotEmpty) {
				return exitUsage
			}
			return exitFailure
		}
		if progress {
			printFindings(stderr, findings)
			fmt.Fprintf(stderr, "segviz compact: copied %s to %s; cleaning the copy\n", src, target)
		}
	} else if !planOnly && progress {
		fmt.Fprintf(stderr, "segviz compact: cleaning %s in place, holding the lock of %s\n", src, path.Dir(src))
	}

	sizes := segmentSizes(fsys, target)
	var rep *compaction.Report
	cleaned := false
	if planOnly {
		rep, err = compaction.Plan(fsys, target, cfg, opt)
	} else {
		rep, err = compaction.Clean(fsys, target, cfg, opt)
		cleaned = err == nil && rep.Cleanable
	}
	if err != nil {
		return compactError(err, stderr)
	}
	var until *compaction.RecordBound
	if offset >= 0 {
		b, err := compaction.ReadableUntil(fsys, target, cfg, opt, offset)
		if err != nil {
			return compactError(err, stderr)
		}
		until = &b
	}
	res := compactResult{dryRun: *dryRun, cleaned: cleaned, source: src, hwFrom: hwFrom, cfg: cfg, rep: rep, sizes: sizes, until: until}
	if !report(stdout, stderr, "compact", *jsonOut, res.json(), func() { res.print(stdout) }) {
		return exitFailure
	}
	return exitOK
}

// compactError reports an error that stopped the plan or the clean and
// returns its exit status: 1 for damage in the partition, 2 for an
// offset map too small for one key (a setting), 3 otherwise (the lock,
// I/O, a failed clean).
func compactError(err error, stderr io.Writer) int {
	var cle *kafkalog.CorruptLogError
	var ce *format.CorruptionError
	switch {
	case errors.As(err, &cle):
		writerError("compact", err, stderr) // says what is damaged, and how to repair it
		return exitProblem
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "segviz compact: %v\n", err)
		fmt.Fprintln(stderr, `segviz compact: the partition is damaged, nothing was written; see "segviz verify" and "segviz recover"`)
		return exitProblem
	case errors.Is(err, compaction.ErrMapTooSmall):
		fmt.Fprintf(stderr, "segviz compact: %v: raise log.cleaner.dedupe.buffer.size (or lower log.cleaner.threads)\n", err)
		return exitUsage
	}
	if code := writerError("compact", err, stderr); code >= 0 {
		return code
	}
	fmt.Fprintf(stderr, "segviz compact: %v\n", err)
	return exitFailure
}

// cleanerOptions maps the broker's cleaner settings to compaction
// options, as LogCleaner divides them among its threads.
func cleanerOptions(props map[string]string) (compaction.Options, error) {
	var o compaction.Options
	num := func(k string, lo int64) (int64, bool, error) {
		v, ok := props[k]
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < lo {
			//lint:ignore ST1005 Kafka's wording, as kafkalog/config has it
			return 0, false, fmt.Errorf("Invalid value %s for configuration %s: want an integer, at least %d", v, k, lo)
		}
		return n, true, nil
	}
	threads, ok, err := num("log.cleaner.threads", 1)
	if err != nil {
		return o, err
	}
	if !ok {
		threads = 1
	}
	if n, ok, err := num("log.cleaner.dedupe.buffer.size", 1); err != nil {
		return o, err
	} else if ok {
		o.DedupeBufferSize = min(n/threads, math.MaxInt32)
	}
	if n, ok, err := num("log.cleaner.io.buffer.size", 2); err != nil {
		return o, err
	} else if ok {
		o.IOBufferSize = int(min(n/threads/2, math.MaxInt32))
	}
	if n, ok, err := num("message.max.bytes", 0); err != nil {
		return o, err
	} else if ok {
		o.MaxIOBufferSize = int(min(n, math.MaxInt32))
	}
	if n, ok, err := num("producer.id.expiration.ms", 1); err != nil {
		return o, err
	} else if ok {
		o.ProducerIDExpirationMs = n
	}
	if v, ok := props["log.cleaner.io.buffer.load.factor"]; ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f > 0 && f <= 1) {
			//lint:ignore ST1005 Kafka's wording, as kafkalog/config has it
			return o, fmt.Errorf("Invalid value %s for configuration log.cleaner.io.buffer.load.factor: want a number in (0, 1]", v)
		}
		o.LoadFactor = f
	}
	return o, nil
}

// highWatermark reads the partition's high watermark from its log
// directory's replication-offset-checkpoint, and says where it came from.
func highWatermark(fsys vfs.FS, dir string) (int64, string) {
	none := "the log end offset: no replication-offset-checkpoint entry"
	tp, err := checkpoint.ParseDirName(path.Base(dir))
	if err != nil {
		return 0, none
	}
	m, err := checkpoint.ReadOffsets(fsys, path.Join(path.Dir(dir), checkpoint.ReplicationOffsetFile))
	if err != nil {
		return 0, none
	}
	hw, ok := m[tp]
	if !ok {
		return 0, none
	}
	if hw <= 0 {
		// compaction.Options takes a high watermark ≤ 0 as the log end.
		return 0, "the log end offset: the replication-offset-checkpoint says 0, which is not applied"
	}
	return hw, checkpoint.ReplicationOffsetFile
}

// copyCleanerCheckpoint gives the copy dst the cleaner position of src:
// its entry of src's log directory's cleaner-offset-checkpoint goes into
// dst's, under dst's name, so that the copy is cleaned from where DIR's
// next clean would start.
func copyCleanerCheckpoint(fsys vfs.FS, src, dst string) error {
	srcTP, err := checkpoint.ParseDirName(path.Base(src))
	if err != nil {
		return nil
	}
	m, err := checkpoint.ReadOffsets(fsys, path.Join(path.Dir(src), compaction.CleanerCheckpointFile))
	if err != nil {
		return nil // none, or unreadable: the copy is cleaned from its log start offset
	}
	at, ok := m[srcTP]
	if !ok {
		return nil
	}
	dstTP, err := checkpoint.ParseDirName(path.Base(dst))
	if err != nil {
		return nil
	}
	p := path.Join(path.Dir(dst), compaction.CleanerCheckpointFile)
	out, err := checkpoint.ReadOffsets(fsys, p)
	if err != nil {
		out = map[checkpoint.TopicPartition]int64{}
	}
	out[dstTP] = at
	return checkpoint.WriteOffsets(fsys, p, out)
}

// segmentSizes returns the size of each segment's .log in dir, by base
// offset, before the clean rewrites them.
func segmentSizes(fsys vfs.FS, dir string) map[int64]int64 {
	sizes := map[int64]int64{}
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		return sizes
	}
	for _, fi := range infos {
		if base, ext, err := segment.ParseFileName(fi.Name()); err == nil && ext == ".log" {
			sizes[base] = fi.Size()
		}
	}
	return sizes
}

// compactResult is what the command prints.
type compactResult struct {
	dryRun, cleaned bool
	source, hwFrom  string
	cfg             config.Config
	rep             *compaction.Report
	sizes           map[int64]int64
	until           *compaction.RecordBound
}

// The --json object; its field names are part of the command's
// interface (docs/cli.md, "segviz compact"). The report's own fields are
// compactjson's, the visualiser's names for the same things.
type (
	compactJSON struct {
		Dir     string `json:"dir"`
		Source  string `json:"source"`
		DryRun  bool   `json:"dryRun"`
		Cleaned bool   `json:"cleaned"`
		compactjson.Report
		Segments []segmentCleanJSON `json:"segments"`
		// Instant is the compaction instant the clean recorded on the
		// partition's timeline, as "segviz history --json" prints it; null
		// for a dry run and a clean that rewrote nothing.
		Instant *historyjson.Instant `json:"instant"`
	}
	segmentCleanJSON struct {
		BaseOffset int64               `json:"baseOffset"`
		Into       int64               `json:"into"`
		SizeBefore int64               `json:"sizeBefore"`
		SizeAfter  int64               `json:"sizeAfter"`
		Removed    compactjson.Removal `json:"removed"`
	}
)

// segmentsCleaned lists the source segments of the groups with what the
// clean removed from each: their .log size before (as read before the
// clean) and after.
func (c *compactResult) segmentsCleaned() []segmentCleanJSON {
	out := []segmentCleanJSON{}
	for _, g := range c.rep.Groups {
		for i, base := range g.Sources {
			s := segmentCleanJSON{BaseOffset: base, Into: g.BaseOffset, SizeBefore: c.sizes[base]}
			if len(g.Removed) == len(g.Sources) {
				s.Removed = compactjson.RemovalOf(g.Removed[i])
			}
			s.SizeAfter = s.SizeBefore - s.Removed.Bytes
			out = append(out, s)
		}
	}
	return out
}

func (c *compactResult) json() compactJSON {
	j := compactJSON{Dir: c.rep.Dir, Source: c.source, DryRun: c.dryRun, Cleaned: c.cleaned,
		Report: compactjson.FromReport(c.rep, c.until), Segments: c.segmentsCleaned()}
	if inst := c.rep.Instant; inst != nil {
		h := historyjson.InstantOf(*inst)
		j.Instant = &h
	}
	return j
}

func (c *compactResult) print(w io.Writer) {
	r, cfg := c.rep, c.cfg
	t := retention.FormatTime
	copyOf := ""
	if r.Dir != c.source {
		copyOf = fmt.Sprintf(" (a copy of %s)", c.source)
	}
	switch {
	case c.dryRun:
		fmt.Fprintf(w, "dry run: what a clean of %s at %s would do (nothing written)\n", r.Dir, t(r.Now))
	case c.cleaned && copyOf == "":
		fmt.Fprintf(w, "cleaned %s in place at %s\n", r.Dir, t(r.Now))
	case c.cleaned:
		fmt.Fprintf(w, "cleaned %s%s at %s\n", r.Dir, copyOf, t(r.Now))
	default:
		fmt.Fprintf(w, "no clean of %s%s at %s: it is not cleanable\n", r.Dir, copyOf, t(r.Now))
	}
	fmt.Fprintf(w, "  log start offset %d, log end offset %d, high watermark %d (%s), last stable offset %d\n",
		r.LogStartOffset, r.LogEndOffset, r.HighWatermark, c.hwFrom, r.LastStableOffset)
	fmt.Fprintf(w, "  cleanup.policy=%s min.cleanable.dirty.ratio=%g delete.retention.ms=%d min.compaction.lag.ms=%d max.compaction.lag.ms=%d\n",
		strings.Join(cfg.CleanupPolicy, ","), cfg.MinCleanableDirtyRatio, cfg.DeleteRetentionMs, cfg.MinCompactionLagMs, cfg.MaxCompactionLagMs)
	from := "the log start offset: no cleaner-offset-checkpoint entry"
	switch {
	case r.CheckpointReset:
		from = fmt.Sprintf("the log start offset: the cleaner-offset-checkpoint's %d is outside the log, and is reset", r.Checkpoint)
	case r.HasCheckpoint:
		from = "the cleaner-offset-checkpoint"
	}
	fmt.Fprintf(w, "range: first dirty offset %d (%s), first uncleanable offset %d (%s", r.FirstDirtyOffset, from, r.FirstUncleanableOffset, r.UncleanableBy)
	if r.FirstUncleanableDirtyOffset != r.FirstUncleanableOffset {
		fmt.Fprintf(w, " at %d, rounded down to its segment", r.FirstUncleanableDirtyOffset)
	}
	fmt.Fprintln(w, ")")
	if h := r.HeldBy; h != nil {
		fmt.Fprintf(w, "held: segment %d and every later one stay as they are while %s is in force (it pins offsets %d-%d): no clean rewrites them\n",
			r.HeldBase, h, h.FirstOffset, h.LastOffset)
	}
	ratio := fmt.Sprintf("%.4f", r.CleanableRatio)
	if math.IsNaN(r.CleanableRatio) {
		ratio = "-"
	}
	fmt.Fprintf(w, "dirty ratio: %d dirty of %d bytes = %s (min.cleanable.dirty.ratio %g)", r.CleanableBytes, r.TotalBytes, ratio, r.MinCleanableRatio)
	if r.NeedCompactionNow {
		fmt.Fprintf(w, "; a dirty segment is %d ms past max.compaction.lag.ms, which forces a clean", r.MaxCompactionDelayMs)
	}
	fmt.Fprintln(w)
	if !r.Cleanable {
		fmt.Fprintf(w, "not cleanable: %s\n", r.Why)
		if r.CheckpointReset && !c.dryRun && c.cfg.Compact() {
			fmt.Fprintf(w, "the cleaner-offset-checkpoint entry was reset to %d, as Kafka resets it\n", r.FirstDirtyOffset)
		}
		c.printUntil(w)
		fmt.Fprintln(w, "result: nothing to clean; nothing removed")
		return
	}
	verb, verbed := "removes", "removed"
	if c.dryRun {
		verb, verbed = "would remove", "would be removed"
	}
	fmt.Fprintf(w, "clean: the offset map holds %d keys (capacity %d)", r.MapEntries, r.MapCapacity)
	if r.MapFull {
		fmt.Fprintf(w, "; it fills at offset %d, where the clean stops: the next clean goes on from there", r.EndOffset)
	}
	fmt.Fprintf(w, "; read %d bytes, %d records; wrote %d bytes, %d records\n", r.Stats.BytesRead, r.Stats.MessagesRead, r.Stats.BytesWritten, r.Stats.MessagesWritten)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEGMENT\tINTO\tBYTES BEFORE\tBYTES AFTER\tRECORDS REMOVED\tSUPERSEDED\tTOMBSTONES\tUNKEYED\tABORTED\tMARKERS")
	for _, s := range c.segmentsCleaned() {
		x := s.Removed
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", s.BaseOffset, s.Into, s.SizeBefore, s.SizeAfter, x.Records, x.Superseded, x.Tombstones, x.Unkeyed, x.Aborted, x.Markers)
	}
	tw.Flush()
	for _, g := range r.Groups {
		src := make([]string, len(g.Sources))
		for i, s := range g.Sources {
			src[i] = strconv.FormatInt(s, 10)
		}
		fmt.Fprintf(w, "segment %d: %s into one, %d -> %d bytes\n", g.BaseOffset, plural(len(g.Sources), "segment")+" ("+strings.Join(src, ", ")+")", g.SizeBefore, g.SizeAfter)
	}
	x := r.Removed
	fmt.Fprintf(w, "%s %s, %d bytes: %d superseded, %d tombstones past their delete horizon, %d unkeyed, %d of aborted transactions, %d transaction markers\n",
		plural(x.Records, "record"), verbed, x.Bytes, x.Superseded, x.Tombstones, x.Unkeyed, x.Aborted, x.Markers)
	fmt.Fprintf(w, "batches: %d dropped, %d emptied (kept as 61-byte batches: a producer's last, or the round's last), %d rewritten, %d copied as they were\n",
		x.Batches, x.BatchesEmptied, x.BatchesRewritten, x.BatchesCopied)
	for _, h := range r.Horizons {
		how := "their batches' delete horizon"
		if h.New {
			how = "the delete horizon this clean stamps (now + delete.retention.ms)"
		}
		var what []string
		if h.Tombstones > 0 {
			what = append(what, plural(h.Tombstones, "tombstone"))
		}
		if h.Markers > 0 {
			what = append(what, plural(h.Markers, "transaction marker"))
		}
		fmt.Fprintf(w, "kept: %s in %s until %s, %s; the first clean after it removes them\n",
			strings.Join(what, " and "), plural(h.Batches, "batch"), t(h.DeleteHorizonMs), how)
	}
	end := fmt.Sprintf("the next clean starts at offset %d", r.EndOffset)
	if !c.dryRun {
		end = fmt.Sprintf("the cleaner-offset-checkpoint now says %d: the next clean starts there", r.EndOffset)
	}
	fmt.Fprintln(w, end)
	if inst := r.Instant; inst != nil {
		fmt.Fprintf(w, "timeline: recorded instant %s (%s) on the timeline of %s: segviz history lists it\n", inst, historyjson.Summary(*inst), r.Dir)
	}
	c.printUntil(w)
	fmt.Fprintf(w, "result: %s %s (%d bytes) of the %s in the segments it rewrites\n", verb, plural(x.Records, "record"), x.Bytes, plural(x.Records+r.Stats.MessagesWritten, "record"))
}

// printUntil prints the --offset answer.
func (c *compactResult) printUntil(w io.Writer) {
	b := c.until
	if b == nil {
		return
	}
	t := retention.FormatTime
	what := string(b.Kind)
	if b.Key != nil {
		what += fmt.Sprintf(", key %q", b.Key)
	}
	if b.Successor >= 0 {
		what += fmt.Sprintf(", superseded by offset %d", b.Successor)
	}
	fmt.Fprintf(w, "offset %d (%s):\n", b.Offset, what)
	if b.Kind == compaction.KindAbsent {
		fmt.Fprintf(w, "  %s\n", b.Explanation)
		return
	}
	fmt.Fprintf(w, "  readable until: %s (at the latest, if nothing more is appended and the cleaner keeps up)\n", t(b.ReadableUntil))
	if b.IfAppendsContinue != b.ReadableUntil {
		fmt.Fprintf(w, "  if appends continue: %s\n", t(b.IfAppendsContinue))
	}
	fmt.Fprintf(w, "  compaction removes it no sooner than: %s\n", t(b.NotBefore))
	if b.Retention != nil {
		fmt.Fprintf(w, "  retention deletes its segment by: %s\n", t(b.Retention.ReadableUntil))
	}
	if b.HeldBy != nil {
		fmt.Fprintf(w, "  held by: %s, which pins offsets %d-%d: not removed while the hold is in force\n", b.HeldBy, b.HeldBy.FirstOffset, b.HeldBy.LastOffset)
	}
	for _, d := range b.DependsOn {
		fmt.Fprintf(w, "  waits for: %s\n", d)
	}
	fmt.Fprintf(w, "  why: %s\n", b.Explanation)
}
