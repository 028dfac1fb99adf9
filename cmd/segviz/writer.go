package main

import (
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/vfs"
)

// checkPartition checks that dir can be written as a partition directory
// (inspect.CheckPartitionDir) and returns -1 if so, else reports why and
// returns the exit code: 2 for a directory that is not a partition's, as
// verify gives, 3 when it could not be read.
func checkPartition(cmd string, fsys vfs.FS, dir string, stderr io.Writer) int {
	err := inspect.CheckPartitionDir(fsys, dir)
	if err == nil {
		return -1
	}
	fmt.Fprintf(stderr, "segviz %s: %v\n", cmd, err)
	if errors.Is(err, inspect.ErrNotPartition) {
		fmt.Fprintf(stderr, "segviz %s: give a partition directory, named <topic>-<partition> inside the log directory (e.g. /var/kafka-logs/orders-0)\n", cmd)
		return exitUsage
	}
	return exitFailure
}

// writerError reports the errors a command that writes a partition meets
// before it writes — the log directory locked, the partition corrupt — and
// returns exit 3, or -1 for any other error.
func writerError(cmd string, err error, stderr io.Writer) int {
	var le *kafkalog.LockError
	var ce *kafkalog.CorruptLogError
	switch {
	case errors.As(err, &le) && errors.Is(err, vfs.ErrLocked):
		fmt.Fprintf(stderr, "segviz %s: %s is locked: a Kafka broker or another segviz may be running on this log directory; stop it first (nothing was written)\n", cmd, le.Path)
		fmt.Fprintf(stderr, "segviz %s: %v\n", cmd, err)
	case errors.As(err, &le):
		fmt.Fprintf(stderr, "segviz %s: cannot lock %s, so nothing was written: %v\n", cmd, le.Path, le.Err)
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "segviz %s: %s is damaged at byte %d, and opening it for writing would truncate valid data: nothing was written\n", cmd, ce.Path, ce.Position)
		fmt.Fprintf(stderr, "segviz %s: %v\n", cmd, err)
		dir := path.Dir(ce.Path)
		fmt.Fprintf(stderr, "segviz %s: see what is damaged with \"segviz verify %s\"; then \"segviz salvage --out DIR2 %s\" copies every valid batch past the damage, or \"segviz recover --out DIR2 %s\" (or --in-place) truncates as Kafka's recovery would\n", cmd, dir, dir, dir)
	default:
		return -1
	}
	return exitFailure
}

// printRemoved says what opening a partition for writing removed: a torn
// tail cut, leftover files deleted.
func printRemoved(w io.Writer, cmd string, lr kafkalog.LoadReport) {
	for _, r := range lr.Recovered {
		if r.Result.Truncated == 0 {
			continue
		}
		why := r.Result.Tail.String()
		if r.Result.Reason != nil {
			why = r.Result.Reason.Error()
		}
		fmt.Fprintf(w, "segviz %s: cut %d bytes at position %d of segment %d (%s): a torn write of a crash, which Kafka's recovery cuts too\n",
			cmd, r.Result.Truncated, r.Result.ValidBytes, r.BaseOffset, why)
	}
	for _, name := range lr.Deleted {
		fmt.Fprintf(w, "segviz %s: deleted %s (as Kafka's load does: a leftover of an interrupted operation, an orphan index, or an empty segment after a cut)\n", cmd, name)
	}
	for _, name := range lr.Renamed {
		fmt.Fprintf(w, "segviz %s: renamed %s into place (an interrupted compaction completed, as Kafka's load does)\n", cmd, name)
	}
}
