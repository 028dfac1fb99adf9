package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

const verifyHelp = `Usage: segviz verify [--json] [--retention.ms MS] [--now TIME] [--compacted] [--remote URI] DIR

Checks a Kafka partition directory — or every partition directory of a log
directory — in one pass, without writing a byte to it:

  - every batch of every .log: size, magic, CRC, header fields and every
    record (decompressed), offsets increasing within and across segments;
    damage is told apart from a torn tail (bad bytes followed by valid
    batches are corruption; a partial batch at the end of the active
    segment is what a crash leaves, and recovery cuts it), and reading
    resumes after damage, so every damaged region is reported;
  - each .index and .timeindex against its .log (every entry, Kafka's
    sanity checks, zero padding, the time index's final entry), and each
    .txnindex against the ABORT markers of the log, both ways;
  - each producer .snapshot (decodes, CRC, and agrees with the producer
    state replayed from the log), the leader-epoch-checkpoint against the
    batches' leader epochs, partition.metadata;
  - the log directory's checkpoints: recovery point and high watermark not
    past the log end, log start offset not below the first segment;
  - record timestamps that make retention delete records at the next check
    (stamped further in the past than retention.ms when written) or never
    (stamped in the future).

With --remote file://R (a tiered partition: DIR is one partition
directory, R the directory of its LocalTieredStorage remote, as for
segviz read --remote), the remote segments below the first local segment
are verified with the local ones as one log (every check above, across
both: offsets, leader epochs, producer snapshots), and the remote against
its remote log metadata: files a served segment lacks, a .log whose size
or offsets are not its metadata's, offsets no segment holds (between two
remote segments, or between the remote and local disk), overlapping
segments, files no metadata names, copies and deletions that did not
finish, and metadata files that do not decode (the remote-* kinds). A
problem in a remote file names the remote file. A remote a broker wrote
(its metadata is in __remote_log_metadata) is read from its files alone.

The report lists one line per segment, then each problem as
"level file:position: kind: detail", where position is the byte the
problem is at (the start of the bad batch, index entry or checkpoint
line). Kinds are stable names, each documented under "Problem kinds" in
docs/problems.md (finding.Kinds). Levels: error (data is wrong or would be lost or misplaced),
warning (a state to know about: an untrimmed or missing index of the
active segment, a torn tail recovery will cut, timestamps retention will
act on), info (facts, such as a follower's multi-batch index entries). Progress goes to stderr
when it is a terminal; the report to stdout.

--json prints one object instead:

  {"ok": bool, "segments": N, "batches": N, "records": N,
   "problems": [{"file", "position", "kind", "level", "detail"}],
   "partitions": [{"dir", "topic", "partition", "logStartOffset",
                   "logEndOffset", "segments": [...], ...}]}

and with --remote also
  "remote": {"partitionDir", "topicId", "metadata": "segkit"|"files"|"corrupt",
             "segments", "startOffset", "endOffset", "viewed", "localStartOffset"}

(position is -1 for a problem about a file as a whole.)

Exit status: 0 when no problem is an error (warnings are printed but pass),
1 when any is, 2 for a bad command line or a DIR that is not a partition or
log directory, 3 when a file could not be read.

Examples:
  segviz verify /var/kafka-logs/orders-0
  segviz verify /var/kafka-logs                  # every partition
  segviz verify --json orders-0 | jq '.problems[] | select(.level == "error")'
  segviz verify --retention.ms 86400000 orders-0 # warn about records a 1-day retention deletes at once
  segviz verify --remote file:///var/kafka-tiered orders-0
`

func runVerify(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("verify", verifyHelp, stderr)
	jsonOut := fs.Bool("json", false, "print one JSON object")
	retentionMs := fs.String(config.RetentionMs, "", "retention.ms the timestamp warnings assume (default 604800000, 7 days)")
	nowFlag := fs.String("now", "", "the time timestamps are judged at, epoch ms or RFC 3339 (default: now)")
	compacted := fs.Bool("compacted", false, "treat the partitions as compacted: offset gaps are info, not warnings")
	remoteURI := fs.String("remote", "", "verify the partition with its remote segments: file://DIR, a LocalTieredStorage directory")
	if code := parseFlags(fs, args, stdout); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "segviz verify: want one directory")
		fs.Usage()
		return exitUsage
	}
	opt := inspect.Options{Compacted: *compacted}
	if *retentionMs != "" {
		cfg, err := config.Parse(map[string]string{config.RetentionMs: *retentionMs})
		if err != nil {
			fmt.Fprintf(stderr, "segviz verify: %v\n", err)
			return exitUsage
		}
		p := retention.PolicyFrom(cfg, config.DefaultBroker())
		opt.Policy = &p
	}
	if *nowFlag != "" {
		now, err := parseTimeFlag(*nowFlag)
		if err != nil {
			fmt.Fprintf(stderr, "segviz verify: --now: %v\n", err)
			return exitUsage
		}
		opt.Now = now
	}
	dir, code := osDir("verify", fs.Arg(0), stderr)
	if code >= 0 {
		return code
	}
	if *remoteURI != "" {
		return verifyRemote(*remoteURI, dir, opt, *jsonOut, stdout, stderr)
	}
	m := newMeter(stderr, "verify")
	opt.Progress = m.update
	rep, err := inspect.Verify(vfs.OS(), dir, opt)
	m.finish()
	if err != nil {
		fmt.Fprintf(stderr, "segviz verify: %v\n", err)
		if errors.Is(err, inspect.ErrNoPartition) {
			return exitUsage
		}
		return exitFailure
	}
	if !report(stdout, stderr, "verify", *jsonOut, rep, func() { printVerify(stdout, rep) }) {
		return exitFailure
	}
	if !rep.OK {
		return exitProblem
	}
	return exitOK
}

// verifyJSON is verify --remote's JSON: the report and the remote's.
type verifyJSON struct {
	inspect.Report
	Remote tier.RemoteReport `json:"remote"`
}

// verifyRemote is verify --remote: the partition directory dir with its
// remote segments, as one log (tier.Verify).
func verifyRemote(uri, dir string, opt inspect.Options, asJSON bool, stdout, stderr io.Writer) int {
	rdir, err := parseTierRemote(uri)
	if err != nil {
		fmt.Fprintf(stderr, "segviz verify: %v\n", err)
		return exitUsage
	}
	fsys := vfs.OS()
	if parts, err := inspect.FindPartitions(fsys, dir); err != nil || len(parts) != 1 || parts[0].Dir != dir {
		fmt.Fprintf(stderr, "segviz verify: --remote takes one partition directory; %s is not one\n", dir)
		return exitUsage
	}
	if st, err := os.Stat(filepath.FromSlash(rdir)); err != nil || !st.IsDir() {
		fmt.Fprintf(stderr, "segviz verify: --remote %s: not a directory\n", uri)
		return exitFailure
	}
	tp, err := remotePartition(fsys, rdir, dir)
	if err != nil {
		fmt.Fprintf(stderr, "segviz verify: --remote %s: %v\n", uri, err)
		return exitFailure
	}
	m := newMeter(stderr, "verify")
	opt.Progress = m.update
	rep, rr, err := tier.Verify(fsys, dir, tier.NewDir(fsys, rdir), tp, opt)
	m.finish()
	if err != nil {
		fmt.Fprintf(stderr, "segviz verify: %v\n", err)
		return exitFailure
	}
	if !report(stdout, stderr, "verify", asJSON, verifyJSON{rep, rr}, func() {
		printRemote(stdout, rr)
		printVerify(stdout, rep)
	}) {
		return exitFailure
	}
	if !rep.OK {
		return exitProblem
	}
	return exitOK
}

// printRemote prints what verify --remote read of the remote.
func printRemote(w io.Writer, rr tier.RemoteReport) {
	what := map[string]string{"segkit": "segkit's remote log metadata", "files": "its files alone (no remote log metadata beside them)", "corrupt": "no metadata: a metadata file is corrupt"}[rr.Metadata]
	if rr.Metadata == "" {
		what = "nothing: the remote holds no segment of the partition"
	}
	held := "no offsets"
	if rr.Segments > 0 {
		held = fmt.Sprintf("offsets %d-%d", rr.StartOffset, rr.EndOffset)
	}
	fmt.Fprintf(w, "remote %s (topic id %s): %s, %s, from %s; %d below the local segments, verified with them\n",
		rr.PartitionDir, rr.TopicID, plural(rr.Segments, "served segment"), held, what, rr.Viewed)
}

// osDir checks that name is a directory and returns it as an absolute
// slash path for vfs.OS, or an exit code.
func osDir(cmd, name string, stderr io.Writer) (string, int) {
	st, err := os.Stat(name)
	if err != nil {
		fmt.Fprintf(stderr, "segviz %s: %v\n", cmd, err)
		return "", exitFailure
	}
	if !st.IsDir() {
		fmt.Fprintf(stderr, "segviz %s: %s is not a directory\n", cmd, name)
		return "", exitUsage
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		fmt.Fprintf(stderr, "segviz %s: %v\n", cmd, err)
		return "", exitFailure
	}
	return filepath.ToSlash(abs), -1
}

func printVerify(out io.Writer, rep inspect.Report) {
	// Buffered: a log directory of 1,000 partitions is 3,000 lines, and
	// a write each took as long as a tenth of verifying them on two
	// cores.
	w := bufio.NewWriterSize(out, 64<<10)
	defer w.Flush()
	for _, p := range rep.Partitions {
		state := "unclean shutdown (or a running broker)"
		if p.CleanShutdown {
			state = "clean shutdown"
		}
		fmt.Fprintf(w, "partition %s: log start offset %d, log end offset %d, %s, %s; %s\n",
			p.Dir, p.LogStartOffset, p.LogEndOffset, plural(p.Batches, "batch"), plural(p.Records, "record"), state)
		if len(p.Segments) == 0 {
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  SEGMENT\tOFFSETS\tBATCHES\tRECORDS\tBYTES\tSTATUS")
		for _, s := range p.Segments {
			offs := "-"
			if s.FirstOffset >= 0 {
				offs = fmt.Sprintf("%d-%d", s.FirstOffset, s.LastOffset)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%s\n", path.Base(s.File), offs, s.Batches, s.Records, s.Size, status(s.Errors, s.Warnings))
		}
		tw.Flush()
	}
	if len(rep.Problems) > 0 {
		fmt.Fprintln(w, "\nproblems:")
		for _, p := range rep.Problems {
			where := p.File
			if p.Position >= 0 {
				where += ":" + strconv.FormatInt(p.Position, 10)
			}
			fmt.Fprintf(w, "  %-7s %s: %s: %s\n", p.Level, where, p.Kind, p.Detail)
		}
	}
	verdict := "OK"
	if !rep.OK {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "\n%s: %s, %s, %s in %s (%s, %s, %s)\n", verdict,
		plural(rep.Count(finding.Error), "error"), plural(rep.Count(finding.Warning), "warning"), plural(rep.Count(finding.Info), "note"),
		plural(len(rep.Partitions), "partition"), plural(rep.Segments, "segment"), plural(rep.Batches, "batch"), plural(rep.Records, "record"))
}

func status(errs, warns int) string {
	switch {
	case errs > 0 && warns > 0:
		return plural(errs, "error") + ", " + plural(warns, "warning")
	case errs > 0:
		return plural(errs, "error")
	case warns > 0:
		return "ok, " + plural(warns, "warning")
	}
	return "ok"
}

// plural returns "1 batch", "2 batches", "0 errors".
func plural[N int | int64](n N, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	if strings.HasSuffix(noun, "ch") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// meter shows progress on stderr when it is a terminal, and nothing
// otherwise (quiet when piped or captured).
type meter struct {
	w            io.Writer
	label        string
	start, shown time.Time
	drawn        bool
}

// newMeter returns a meter for w, or nil when w is not a terminal. The
// methods of a nil meter do nothing.
func newMeter(w io.Writer, label string) *meter {
	if !isTerminal(w) {
		return nil
	}
	return &meter{w: w, label: label, start: time.Now()}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// update draws done of total bytes, once the run has lasted half a second,
// at most ten times a second.
func (m *meter) update(done, total int64) {
	if m == nil {
		return
	}
	now := time.Now()
	if now.Sub(m.start) < 500*time.Millisecond || now.Sub(m.shown) < 100*time.Millisecond {
		return
	}
	m.shown, m.drawn = now, true
	pct := 100.0
	if total > 0 {
		pct = 100 * float64(done) / float64(total)
	}
	fmt.Fprintf(m.w, "\r%s: %.1f of %.1f MiB (%.0f%%) ", m.label, float64(done)/(1<<20), float64(total)/(1<<20), pct)
}

// finish erases the progress line.
func (m *meter) finish() {
	if m == nil || !m.drawn {
		return
	}
	fmt.Fprint(m.w, "\r\033[K")
}
