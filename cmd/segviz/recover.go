package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/repair"
	"github.com/segkit/segkit/vfs"
)

const recoverHelp = `Usage: segviz recover --out DIR2 [--json] DIR
       segviz recover --in-place [--json] DIR

Runs Kafka's log recovery (as a broker does after an unclean shutdown) on
every segment of the partition directory DIR, and reports exactly what it
truncated and deleted, and why: for each segment, the bytes cut and the
position and cause of the first bad batch; the later segments deleted
because a truncation left a hole; and, read past the damage, the valid
batches the cut dropped (which "segviz salvage" would keep).

Recovery validates every batch (size, magic, CRC, header fields, offsets
increasing and within the segment), truncates the segment at the first bad
one, rebuilds its .index, .timeindex and .txnindex, deletes every later
segment, and rebuilds the leader-epoch-checkpoint and producer state. A
broker skips it when the log directory has a clean-shutdown marker and
starts at its recovery point; this command recovers every segment either
way.

  --out DIR2   copy DIR to DIR2 (a new directory; name it like DIR, as the
               topic and partition are read from the name) and recover the
               copy: DIR is only read. DIR's log start offset is copied to
               DIR2's parent's log-start-offset-checkpoint, and the
               recovered log, closed cleanly, writes its checkpoints and a
               clean-shutdown marker there, as a broker's log directory
               holds them: do not put DIR2 inside a broker's log directory.
  --in-place   recover DIR itself. This is the consent: the command prints
               what it will do, sets aside the log directory's clean-
               shutdown marker (until it is put back, a broker would recover
               every partition of that directory: safe, slower), resets the
               partition's recovery point to 0, recovers, and puts the
               marker back. Stop the broker first.

Symbolic links in DIR are followed, as Kafka follows them: a linked file
is read, and with --out copied, as the file it points to, and the report
names each link. An index larger than Kafka could have written (a sparse
1 TiB .timeindex, say) is neither read nor copied: recovery rebuilds it
(with --in-place it is removed first), and the report says so. A FIFO, a
device, a socket or a dangling link named as a partition's file stops the
command (exit 3) before it writes anything: reading a FIFO would wait for a
writer forever. In --json, "findings" lists the links and oversized indexes
(as verify's problems: file, kind, level, detail).

DIR (and DIR2) must be a partition directory: named <topic>-<partition>,
holding no partition directories (that is a log directory), inside a
directory that is not itself a partition; DIR2 must be outside DIR. Nothing
is written outside the partition but the log directory's checkpoints, its
clean-shutdown marker and its .lock, which the command holds locked (as a
broker does) from start to end: if a broker or another segviz holds it, the
command stops before writing anything.

Exit status: 0 when the log was already clean (nothing truncated or
deleted; rebuilt indexes do not count), 1 when recovery truncated or
deleted something, 2 for a bad command line or a DIR (or DIR2) that is not
a partition directory, 3 when the command failed (the log directory locked
by a broker or another segviz, nothing written; or I/O: with --in-place,
DIR is then as the engine left it and a broker's own recovery will complete
the job).

Examples:
  segviz recover --out /tmp/orders-0 /var/kafka-logs/orders-0
  segviz recover --in-place /var/kafka-logs/orders-0
  segviz recover --json --out /tmp/orders-0 orders-0 | jq '.segments[] | select(.truncated > 0)'
`

func runRecover(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("recover", recoverHelp, stderr)
	out := fs.String("out", "", "recover a copy of DIR made at `DIR2`")
	inPlace := fs.Bool("in-place", false, "recover DIR itself")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	if code := parseFlags(fs, args, stdout); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "segviz recover: want one partition directory")
		fs.Usage()
		return exitUsage
	}
	if (*out == "") == !*inPlace {
		fmt.Fprintln(stderr, "segviz recover: give --out DIR2 (recover a copy) or --in-place (recover DIR itself)")
		return exitUsage
	}
	src, code := osDir("recover", fs.Arg(0), stderr)
	if code >= 0 {
		return code
	}
	fsys := vfs.OS()
	if code := checkPartition("recover", fsys, src, stderr); code >= 0 {
		return code
	}
	target := src
	var copied []finding.Problem // findings of the copy (--out)
	if *out != "" {
		abs, err := filepath.Abs(*out)
		if err != nil {
			fmt.Fprintf(stderr, "segviz recover: %v\n", err)
			return exitFailure
		}
		target = filepath.ToSlash(abs)
		if target == src {
			fmt.Fprintln(stderr, "segviz recover: --out must differ from DIR (use --in-place to recover DIR itself)")
			return exitUsage
		}
		if strings.HasPrefix(target, src+"/") {
			fmt.Fprintln(stderr, "segviz recover: --out must be outside DIR")
			return exitUsage
		}
		if code := checkPartition("recover", fsys, target, stderr); code >= 0 {
			return code
		}
		if copied, err = copyPartition(fsys, src, target); err != nil {
			fmt.Fprintf(stderr, "segviz recover: %v\n", err)
			if errors.Is(err, errNotEmpty) {
				return exitUsage
			}
			return exitFailure
		}
		fmt.Fprintf(stderr, "segviz recover: copied %s to %s; recovering the copy\n", src, target)
	} else {
		// Refuse a FIFO or a dangling link before saying what will be
		// done: Recover would refuse it too, having done nothing.
		if _, err := inspect.ListPartition(fsys, src); err != nil {
			fmt.Fprintf(stderr, "segviz recover: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stderr, "segviz recover: recovering %s in place: the clean-shutdown marker of %s (if any) is set aside and put back after, the recovery point of the partition is reset to 0, and every segment is validated; bad tails are truncated and later segments deleted\n",
			src, path.Dir(src))
	}
	rep, err := repair.Recover(fsys, target, repair.RecoverOptions{})
	if len(copied) > 0 {
		rep.Findings = append(copied, rep.Findings...)
	}
	if err != nil {
		if code := writerError("recover", err, stderr); code >= 0 {
			return code
		}
		fmt.Fprintf(stderr, "segviz recover: %v\n", err)
		return exitFailure
	}
	if !report(stdout, stderr, "recover", *jsonOut, rep, func() { printRecover(stdout, rep, src) }) {
		return exitFailure
	}
	if rep.Changed {
		return exitProblem
	}
	return exitOK
}

func printRecover(w io.Writer, rep repair.RecoverReport, src string) {
	if rep.Dir == src {
		fmt.Fprintf(w, "recovered %s in place\n", rep.Dir)
	} else {
		fmt.Fprintf(w, "recovered %s (a copy of %s)\n", rep.Dir, src)
	}
	if rep.CleanShutdown {
		fmt.Fprintln(w, "  the log directory had a clean-shutdown marker (a broker would have skipped recovery): set aside, and put back after")
	}
	if rep.RecoveryPoint > 0 {
		fmt.Fprintf(w, "  the checkpointed recovery point was %d (a broker would have recovered only from there): reset to 0\n", rep.RecoveryPoint)
	}
	printFindings(w, rep.Findings)
	var cut int64
	var deleted int
	for _, s := range rep.Segments {
		fmt.Fprintf(w, "segment %s (%s): ", path.Base(s.File), s.Why)
		if s.Truncated == 0 {
			fmt.Fprintf(w, "%d bytes, %s, nothing cut\n", s.SizeAfter, plural(s.Entries, "batch"))
			continue
		}
		cut += s.Truncated
		fmt.Fprintf(w, "%d -> %d bytes: %d bytes cut at position %d, keeping %s\n", s.SizeBefore, s.SizeAfter, s.Truncated, s.SizeAfter, plural(s.Entries, "batch"))
		fmt.Fprintf(w, "    why: %s (position %d)\n", s.Reason, s.ReasonPosition)
		if s.LostEntries > 0 {
			fmt.Fprintf(w, "    the cut bytes held %s past the damage (%s, offsets %s): recovery drops them; segviz salvage keeps them\n",
				plural(s.LostEntries, "valid batch"), plural(s.LostRecords, "record"), s.LostOffsets)
		}
	}
	for _, d := range rep.Deleted {
		if d.WholeSegment {
			deleted++
			fmt.Fprintf(w, "deleted %s: a later segment after a truncation (%d bytes, %d valid batches, %d records", path.Base(d.File), d.Size, d.Entries, d.Records)
			if d.Entries > 0 {
				fmt.Fprintf(w, ", offsets %s", d.Offsets)
			}
			fmt.Fprintln(w, ")")
			continue
		}
		fmt.Fprintf(w, "deleted %s: a leftover or orphan file\n", path.Base(d.File))
	}
	for _, r := range rep.Renamed {
		fmt.Fprintf(w, "renamed %s: an interrupted compaction completed\n", r)
	}
	for _, r := range rep.Replaced {
		fmt.Fprintf(w, "replaced %s: the completed compaction's output took its place (not a truncation)\n", r)
	}
	fmt.Fprintf(w, "log end offset: %d before (counting batches past damage), %d after\n", rep.LogEndBefore, rep.LogEndAfter)
	if !rep.Changed {
		fmt.Fprintln(w, "result: the log was clean; nothing truncated or deleted")
		return
	}
	fmt.Fprintf(w, "result: %d bytes truncated, %s deleted, %s removed\n", cut, plural(deleted, "segment"), plural(len(rep.Deleted)-deleted, "other file"))
}

// errNotEmpty is returned by copyPartition for an output that has files.
var errNotEmpty = errors.New("output directory exists and is not empty")

// copyPartition copies the files of partition directory src to a new
// directory dst (which must not exist or be empty), keeping their
// modification times, as repair.CopyPartitionFiles does (links followed,
// indexes too large left out, special files refused), and copies src's log
// start offset into dst's parent's log-start-offset-checkpoint. It returns
// CopyPartitionFiles' findings.
func copyPartition(fsys vfs.FS, src, dst string) ([]finding.Problem, error) {
	if infos, err := vfs.ReadDir(fsys, dst); err == nil && len(infos) > 0 {
		return nil, fmt.Errorf("%s: %w", dst, errNotEmpty)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	findings, err := repair.CopyPartitionFiles(fsys, src, dst)
	if err != nil {
		return nil, err
	}
	if err := copyCleanShutdown(fsys, src, dst); err != nil {
		return nil, err
	}
	srcTP, err := checkpoint.ParseDirName(path.Base(src))
	if err != nil {
		return findings, nil
	}
	starts, err := checkpoint.ReadOffsets(fsys, path.Join(path.Dir(src), checkpoint.LogStartOffsetFile))
	if err != nil {
		return findings, nil // none, or unreadable: the copy starts at its first segment
	}
	start, ok := starts[srcTP]
	if !ok {
		return findings, nil
	}
	dstTP, err := checkpoint.ParseDirName(path.Base(dst))
	if err != nil {
		dstTP = checkpoint.TopicPartition{Topic: path.Base(dst), Partition: -1}
	}
	out := path.Join(path.Dir(dst), checkpoint.LogStartOffsetFile)
	m, err := checkpoint.ReadOffsets(fsys, out)
	if err != nil {
		m = map[checkpoint.TopicPartition]int64{}
	}
	m[dstTP] = start
	return findings, checkpoint.WriteOffsets(fsys, out, m)
}

// copyCleanShutdown gives dst's log directory the clean-shutdown marker of
// src's, as it is, so that the copy is recovered (and reported) as the
// source would be: the recovered copy, closed cleanly, writes one there at
// the end anyway. It does not when dst's log directory holds other
// partitions, whose state the marker would misstate, or a marker already.
func copyCleanShutdown(fsys vfs.FS, src, dst string) error {
	marker, err := vfs.ReadFile(fsys, path.Join(path.Dir(src), checkpoint.CleanShutdownFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	to := path.Join(path.Dir(dst), checkpoint.CleanShutdownFile)
	if _, err := fsys.Stat(to); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	infos, err := vfs.ReadDir(fsys, path.Dir(dst))
	if err != nil {
		return err
	}
	for _, fi := range infos {
		if fi.IsDir() && fi.Name() != path.Base(dst) {
			return nil
		}
	}
	return vfs.WriteFileAtomic(fsys, to, marker, 0o644)
}

// printFindings prints what recover or salvage found about the files of
// the partition (links followed, indexes too large), one a line, as verify
// prints its problems.
func printFindings(w io.Writer, ps []finding.Problem) {
	for _, p := range ps {
		fmt.Fprintf(w, "  %-7s %s: %s: %s\n", p.Level, p.File, p.Kind, p.Detail)
	}
}
