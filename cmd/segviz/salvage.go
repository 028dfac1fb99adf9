package main

import (
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/segkit/segkit/repair"
	"github.com/segkit/segkit/vfs"
)

const salvageHelp = `Usage: segviz salvage --out DIR2 [--json] DIR

Copies every valid batch of the partition directory DIR to a new partition
directory DIR2, past corruption, and reports the byte ranges lost.

This goes beyond Kafka. Kafka's recovery truncates a segment at its first
corrupt batch and deletes every later segment (it cannot serve records
after a hole), so one flipped bit can cost a partition everything after it.
Salvage reads each .log byte by byte past a damaged region: it looks for
the next position where a batch with a plausible header and a verifying
CRC starts (the magic byte and the length are checked before the CRC, so
garbage and zeros are skipped quickly), and goes on from there. Every valid
batch whose offsets follow the ones kept is appended to DIR2 unchanged —
same bytes, same offsets — with Kafka's follower append path; its indexes,
leader-epoch-checkpoint and producer state are built as Kafka builds them.
A new segment starts at each segment of DIR.

The report lists, for each .log, the batches kept and each lost byte range
(start, end, length, and what was wrong there); the offsets the lost ranges
held; and valid batches dropped because their offsets do not follow (a
duplicate, or a batch stored inside a damaged batch's value). DIR is only
read. DIR2 must not exist or be empty; name it like DIR (topic-partition);
its parent receives the checkpoints and clean-shutdown marker of a closed
log, as a broker's log directory does, so do not put DIR2 inside a running
broker's log directory.

Symbolic links in DIR are followed: a linked .log is read as the file it
points to, and the report names each link. Salvage reads no index (it
builds DIR2's from the batches kept); one larger than Kafka could have
written is reported. A FIFO, a device, a socket or a dangling link named as
a partition's file stops the command (exit 3) before it writes anything.
In --json, "findings" lists the links and oversized indexes.

Exit status: 0 when nothing was lost (DIR2 holds every batch of DIR), 1 when
bytes were lost or batches dropped, 2 for a bad command line or a DIR2 that
is not empty, 3 when the command failed (I/O).

Examples:
  segviz salvage --out /tmp/orders-0 /var/kafka-logs/orders-0
  segviz salvage --json --out /tmp/orders-0 orders-0 | jq '.files[].lost'
  segviz salvage --out /tmp/orders-0 orders-0 && segviz verify /tmp/orders-0
`

func runSalvage(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("salvage", salvageHelp, stderr)
	out := fs.String("out", "", "the new partition `DIR2` to write")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	if code := parseFlags(fs, args, stdout); code >= 0 {
		return code
	}
	if fs.NArg() != 1 || *out == "" {
		fmt.Fprintln(stderr, "segviz salvage: want --out DIR2 and one partition directory")
		fs.Usage()
		return exitUsage
	}
	src, code := osDir("salvage", fs.Arg(0), stderr)
	if code >= 0 {
		return code
	}
	abs, err := filepath.Abs(*out)
	if err != nil {
		fmt.Fprintf(stderr, "segviz salvage: %v\n", err)
		return exitFailure
	}
	dst := filepath.ToSlash(abs)
	if dst == src || strings.HasPrefix(dst, src+"/") {
		fmt.Fprintln(stderr, "segviz salvage: --out must be outside DIR")
		return exitUsage
	}
	m := newMeter(stderr, "salvage")
	rep, err := repair.Salvage(vfs.OS(), src, vfs.OS(), dst, repair.SalvageOptions{Progress: m.update})
	m.finish()
	if err != nil {
		fmt.Fprintf(stderr, "segviz salvage: %v\n", err)
		if errors.Is(err, repair.ErrOutputExists) {
			return exitUsage
		}
		return exitFailure
	}
	if !report(stdout, stderr, "salvage", *jsonOut, rep, func() { printSalvage(stdout, rep) }) {
		return exitFailure
	}
	if rep.BytesLost > 0 || len(rep.Dropped) > 0 {
		return exitProblem
	}
	return exitOK
}

func printSalvage(w io.Writer, rep repair.SalvageReport) {
	fmt.Fprintf(w, "salvaged %s into %s\n", rep.Dir, rep.OutDir)
	printFindings(w, rep.Findings)
	for _, f := range rep.Files {
		fmt.Fprintf(w, "  %s: %d bytes; kept %s (%s, %d bytes)", path.Base(f.File), f.Size, plural(f.Batches, "batch"), plural(f.Records, "record"), f.BytesKept)
		if len(f.Lost) == 0 {
			fmt.Fprintln(w, "; nothing lost")
			continue
		}
		fmt.Fprintf(w, "; lost %d bytes in %s:\n", f.BytesLost, plural(len(f.Lost), "range"))
		for _, l := range f.Lost {
			fmt.Fprintf(w, "    bytes %d..%d (%d bytes): %s\n", l.Start, l.End, l.Length, l.Reason)
		}
	}
	for _, d := range rep.Dropped {
		fmt.Fprintf(w, "  dropped %s:%d (%d bytes, offsets %d..%d): %s\n", d.File, d.Position, d.Size, d.FirstOffset, d.LastOffset, d.Reason)
	}
	if len(rep.MissingOffsets) > 0 {
		var rs []string
		for _, r := range rep.MissingOffsets {
			rs = append(rs, r.String())
		}
		fmt.Fprintf(w, "offsets lost with the damaged bytes: %s\n", strings.Join(rs, ", "))
	}
	if rep.FirstOffset >= 0 {
		fmt.Fprintf(w, "output: offsets %d..%d\n", rep.FirstOffset, rep.NextOffset-1)
	} else {
		fmt.Fprintln(w, "output: empty")
	}
	if rep.BytesLost == 0 && len(rep.Dropped) == 0 {
		fmt.Fprintf(w, "result: nothing lost; %s, %s kept\n", plural(rep.Batches, "batch"), plural(rep.Records, "record"))
		return
	}
	fmt.Fprintf(w, "result: kept %s (%s, %d bytes); lost %d bytes of damage, dropped %s (%d bytes)\n",
		plural(rep.Batches, "batch"), plural(rep.Records, "record"), rep.BytesKept, rep.BytesLost, plural(len(rep.Dropped), "batch"), rep.BytesDropped)
}
