package kafkalog_test

import (
	"fmt"
	"path"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// TestRecoveryReadsEachSegmentOnce: recovering every segment of a
// partition (ForceRecovery, as repair.Recover runs it, with and without
// its indexes) rebuilds each segment's transaction index from the
// producer state replayed up to its base offset. Replaying from the first
// segment for each would read a log of n segments n²/2 times; the load
// carries the state from one segment to the next, so each .log is read a
// bounded number of times (validation, the index rebuild, the producer
// state at the end), and the rebuilt transaction indexes are those the
// writer made: aborted transactions that span segments included.
func TestRecoveryReadsEachSegmentOnce(t *testing.T) {
	const dir = "data/orders-0"
	cfg := smallConfig(t, 2048)
	for _, deleteIndexes := range []bool{false, true} {
		t.Run(fmt.Sprintf("deleteIndexes=%v", deleteIndexes), func(t *testing.T) {
			fsys := vfs.NewMem()
			c := &clock{ms: 1_700_000_000_000}
			recoveryWorkload(t, fsys, dir, cfg, c)
			checkRecoveryReads(t, fsys, dir, cfg, c, deleteIndexes)
		})
	}
}

// recoveryWorkload writes a partition of 30 segments and more, with
// transactions that span segments, some aborted.
func recoveryWorkload(t *testing.T, fsys vfs.FS, dir string, cfg kafkalog.Config, c *clock) {
	l := mustOpen(t, fsys, dir, cfg, c)
	var w record.Builder
	appendSpec := func(spec record.BatchSpec, n int) {
		t.Helper()
		recs := make([]record.Record, n)
		for i := range recs {
			recs[i] = record.Record{Timestamp: c.ms, Key: []byte(fmt.Sprint(i)), Value: []byte(strings.Repeat("v", 40))}
		}
		b, err := w.AppendBatch(nil, &spec, recs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, 1); err != nil {
			t.Fatal(err)
		}
		c.ms++
	}
	marker := func(pid int64, typ record.ControlType) {
		t.Helper()
		spec := record.NewBatchSpec(0, compress.None)
		spec.ProducerID, spec.ProducerEpoch, spec.Transactional, spec.Control, spec.BaseSequence = pid, 0, true, true, record.NoSequence
		b, err := w.AppendEndTxnMarker(nil, &spec, record.EndTxnMarker{Type: typ}, c.ms)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, 1); err != nil {
			t.Fatal(err)
		}
	}
	seq := map[int64]int32{}
	txn := func(pid int64, n int) {
		spec := record.NewBatchSpec(0, compress.None)
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence, spec.Transactional = pid, 0, seq[pid], true
		seq[pid] += int32(n)
		appendSpec(spec, n)
	}
	// Two transactional producers interleaved, each transaction spanning
	// several segments; every third one aborted.
	for round := range 40 {
		for _, pid := range []int64{7, 8} {
			txn(pid, 5)
			appendSpec(record.NewBatchSpec(0, compress.Zstd), 3)
			txn(pid, 4)
		}
		for _, pid := range []int64{7, 8} {
			typ := record.ControlCommit
			if (round+int(pid))%3 == 0 {
				typ = record.ControlAbort
			}
			marker(pid, typ)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkRecoveryReads recovers the partition dir of fsys with
// ForceRecovery, its indexes deleted or not, and checks what it read and
// the transaction indexes it rebuilt.
func checkRecoveryReads(t *testing.T, fsys vfs.FS, dir string, cfg kafkalog.Config, c *clock, deleteIndexes bool) {
	files, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	var logBytes int64
	txnIndexes := map[string]string{}
	var segments, aborted int
	for _, fi := range files {
		_, ext, err := segment.ParseFileName(fi.Name())
		switch {
		case err != nil:
		case ext == segment.LogSuffix:
			logBytes += fi.Size()
			segments++
		case ext == segment.TxnIndexSuffix:
			b, err := vfs.ReadFile(fsys, path.Join(dir, fi.Name()))
			if err != nil {
				t.Fatal(err)
			}
			txnIndexes[fi.Name()] = string(b)
			aborted += len(b) / index.AbortedTxnSize
		}
	}
	if segments < 30 || aborted < 20 {
		t.Fatalf("the workload made %d segments and %d aborted transactions: too few to test", segments, aborted)
	}

	for _, fi := range files {
		_, ext, err := segment.ParseFileName(fi.Name())
		if err == nil && ext != segment.LogSuffix && (deleteIndexes || ext == segment.TxnIndexSuffix) {
			if err := fsys.Remove(path.Join(dir, fi.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	counted, read := countLogReads(fsys)
	l, err := kafkalog.Open(counted, dir, cfg, kafkalog.Options{Clock: c, ForceRecovery: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Validation and the index rebuild read each segment once
	// each, the producer state at the end once more; reads ahead
	// of a scanner's buffer add a little.
	if got, limit := read.Load(), 4*logBytes; got > limit {
		t.Errorf("recovering %d segments (%d bytes of .log) read %d bytes of them (%.1f times the log): more than %d", segments, logBytes, got, float64(got)/float64(logBytes), limit)
	}
	t.Logf("%d segments, %d bytes of .log: recovery read %d bytes (%.2f times the log)", segments, logBytes, read.Load(), float64(read.Load())/float64(logBytes))
	got := map[string]string{}
	for name := range txnIndexes {
		b, err := vfs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got[name] = string(b)
	}
	if diff := cmp.Diff(txnIndexes, got); diff != "" {
		t.Errorf("the rebuilt transaction indexes differ from the writer's (-writer +recovery):\n%s", diff)
	}
}

// TestOpenWithSnapshotAtEndReadsNoBatch: a cleanly closed log has a
// producer snapshot at its log end; opening it again (after a clean
// shutdown, or to recover it with its indexes intact) loads the producer
// state from that snapshot and reads no batch of the active segment for
// it, as Kafka's rebuildProducerState reads none.
func TestOpenWithSnapshotAtEndReadsNoBatch(t *testing.T) {
	const dir = "data/orders-0"
	cfg := smallConfig(t, 1<<20)
	fsys := vfs.NewMem()
	c := &clock{ms: 1_700_000_000_000}
	recoveryWorkload(t, fsys, dir, cfg, c)
	files, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	var logs, snaps []string
	var logBytes int64
	for _, fi := range files {
		switch _, ext, _ := segment.ParseFileName(fi.Name()); ext {
		case segment.LogSuffix:
			logs = append(logs, fi.Name())
			logBytes = fi.Size()
		case segment.SnapshotSuffix:
			snaps = append(snaps, fi.Name())
		}
	}
	if len(logs) != 1 || len(snaps) == 0 {
		t.Fatalf("the workload left %v and %v: want one segment and a snapshot", logs, snaps)
	}
	counted, read := countLogReads(fsys)
	l, err := kafkalog.Open(counted, dir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Reading the next offset scans from the last index entry: about
	// one index.interval.bytes of batches (256 bytes here).
	if got := read.Load(); got > logBytes/8 {
		t.Errorf("opening a cleanly closed log read %d bytes of its %d-byte .log", got, logBytes)
	}
	// The state came from the snapshot: both producers are known.
	for _, pid := range []int64{7, 8} {
		if _, ok := kafkalog.ProducerEntry(l, pid); !ok {
			t.Errorf("producer %d is not in the loaded producer state", pid)
		}
	}
}

// countLogReads returns fsys with the bytes asked of its .log files by
// reads counted into the counter it returns.
func countLogReads(fsys vfs.FS) (vfs.FS, *atomic.Int64) {
	read := new(atomic.Int64)
	return vfs.WithFaults(fsys, vfs.InjectorFunc(func(op vfs.Op) error {
		if (op.Kind == vfs.OpReadAt || op.Kind == vfs.OpRead) && strings.HasSuffix(op.Path, segment.LogSuffix) {
			read.Add(op.Len)
		}
		return nil
	})), read
}
