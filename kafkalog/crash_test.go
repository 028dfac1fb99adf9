package kafkalog_test

import (
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

var crashStride = flag.Int("crash-stride", 1, "test every n-th crash point (1 = all)")

// crashWorkload appends 220 batches (1 to 3 records, every codec) to a log
// with small segments, flushing every 25 appends and closing at the end.
// After each step it records the recovery point: everything below it was
// acknowledged as durable. It stops at the first error, which a crash
// injector causes.
type crashWorkload struct {
	written []testRecord // every record given to Append (acknowledged or not)
	durable int64        // highest recovery point seen
	steps   int
}

func (w *crashWorkload) run(t *testing.T, fsys vfs.FS, c *clock) error {
	cfg := smallConfig(t, 1800)
	l, err := kafkalog.Open(fsys, "logs/crash-0", cfg, kafkalog.Options{Clock: c})
	if err != nil {
		return err
	}
	var b record.Builder
	codecs := []compress.Codec{compress.None, compress.Gzip, compress.Snappy, compress.LZ4, compress.Zstd}
	seq := 0
	for i := 0; i < 220; i++ {
		n := 1 + i%3
		batch, recs := buildBatch(t, &b, codecs[i%5], seq, n, c.ms)
		// The records count as written before the call returns: an append
		// cut short by the crash may still have reached the disk.
		for j := range recs {
			recs[j].offset = int64(seq + j)
		}
		w.written = append(w.written, recs...)
		if _, err := l.Append(batch, int32(i/50)); err != nil {
			return err
		}
		seq += n
		c.ms += 7
		if i%25 == 24 {
			if err := l.Flush(); err != nil {
				return err
			}
		}
		w.durable = max(w.durable, l.RecoveryPoint())
		w.steps++
	}
	if err := l.Close(); err != nil {
		return err
	}
	w.durable = int64(seq)
	return nil
}

// TestCrashAtEveryWritePoint crashes the workload at every mutating
// filesystem operation in turn (writes, syncs, truncates, renames,
// creates, removes), takes the crash-aware Mem as a power cut could leave
// it (unsynced data dropped, torn at any byte, or kept in 4 KiB blocks
// with holes; unsynced directory changes undone), reopens it, and checks
// the invariants of RELIABILITY.md: the records read back are a prefix of
// those written (I1) that includes every record below the last recovery
// point, byte-identical (I2); every offset reads from the batch that holds
// it (I3); a second recovery changes nothing and the log takes appends
// that survive a clean reopen (I4); nothing panics (I5).
func TestCrashAtEveryWritePoint(t *testing.T) {
	if testing.Short() {
		*crashStride = max(*crashStride, 7)
	}
	points, crashes := 0, 0
	for k := 0; ; k += *crashStride {
		mem := vfs.NewMem()
		crash := vfs.CrashAfter(k)
		c := &clock{ms: 1_700_000_000_000}
		var w crashWorkload
		err := w.run(t, vfs.WithFaults(mem, crash), c)
		if !crash.Crashed() {
			if err != nil {
				t.Fatalf("workload failed without a crash: %v", err)
			}
			break
		}
		if err != nil && !errors.Is(err, vfs.ErrCrashed) {
			t.Fatalf("crash point %d: the workload failed with %v, not the crash", k, err)
		}
		points++
		for _, mode := range []vfs.CrashConfig{
			{Seed: uint64(k), UnsyncedDataPercent: 0},
			{Seed: uint64(k), UnsyncedDataPercent: 50, TornWrites: true},
			{Seed: uint64(k) * 31, UnsyncedDataPercent: 100, TornWrites: true},
		} {
			crashes++
			checkAfterCrash(t, fmt.Sprintf("crash point %d, %+v", k, mode), mem.CrashClone(mode), c, &w)
		}
	}
	if points**crashStride < 200 {
		t.Fatalf("only %d crash points: the workload is too small", points)
	}
	t.Logf("tested %d crash points (stride %d), %d crash images", points, *crashStride, crashes)
	fmt.Printf("crash test: %d crash points, %d crash images checked\n", points, crashes)
}

func checkAfterCrash(t *testing.T, name string, disk *vfs.Mem, c *clock, w *crashWorkload) {
	t.Helper()
	cfg := smallConfig(t, 1800)
	// A writer's Open cuts only torn tails: it opens the image, or refuses
	// it (a zeroed hole before surviving blocks) without cutting a byte.
	if l, err := kafkalog.Open(disk.CrashClone(vfs.CrashConfig{}), "logs/crash-0", cfg, kafkalog.Options{Clock: c}); err == nil {
		l.Close()
	} else if !errors.Is(err, kafkalog.ErrCorruptLog) {
		t.Fatalf("%s: writer's open: %v", name, err)
	}
	// Recovery as Kafka's LogLoader does it.
	l, err := kafkalog.Open(disk, "logs/crash-0", cfg, kafkalog.Options{Clock: c, TruncateCorrupt: true})
	if err != nil {
		t.Fatalf("%s: reopen: %v", name, err)
	}
	got := readAll(t, l)
	if len(got) > len(w.written) {
		t.Fatalf("%s: %d records read, only %d written", name, len(got), len(w.written))
	}
	for i := range got {
		if got[i] != w.written[i] {
			t.Fatalf("%s: record %d = %+v, want %+v (not a prefix)", name, i, got[i], w.written[i])
		}
	}
	durableRecords := 0
	for _, r := range w.written {
		if r.offset < w.durable {
			durableRecords++
		}
	}
	if len(got) < durableRecords {
		t.Fatalf("%s: %d records survived, but %d were below the recovery point %d", name, len(got), durableRecords, w.durable)
	}
	if l.LogEndOffset() != int64(len(got)) {
		t.Fatalf("%s: log end offset %d with %d records", name, l.LogEndOffset(), len(got))
	}
	// I3: every offset reads from the batch that holds it.
	for off := int64(0); off < l.LogEndOffset(); off += 3 {
		res, err := l.Read(off, 1, nil, kafkalog.ReadOptions{})
		if err != nil {
			t.Fatalf("%s: Read(%d): %v", name, off, err)
		}
		b, _, err := record.ReadBatch(res.Records)
		if err != nil || b.BaseOffset > off || b.LastOffset() < off {
			t.Fatalf("%s: Read(%d) starts at batch %d..%d: %v", name, off, b.BaseOffset, b.LastOffset(), err)
		}
	}
	// I4: appends work and survive a clean reopen, which recovers nothing.
	var bld record.Builder
	batch, recs := buildBatch(t, &bld, compress.None, 9999, 2, c.ms)
	res, err := l.Append(batch, 9)
	if err != nil {
		t.Fatalf("%s: append after recovery: %v", name, err)
	}
	recs[0].offset, recs[1].offset = res.FirstOffset, res.FirstOffset+1
	if err := l.Close(); err != nil {
		t.Fatalf("%s: close: %v", name, err)
	}
	l, err = kafkalog.Open(disk, "logs/crash-0", cfg, kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatalf("%s: clean reopen: %v", name, err)
	}
	defer l.Close()
	if rep := l.LoadReport(); !rep.CleanShutdown || len(rep.Recovered) != 0 {
		t.Fatalf("%s: clean reopen recovered: %+v", name, rep)
	}
	again := readAll(t, l)
	want := append(append([]testRecord(nil), got...), recs...)
	if fmt.Sprint(again) != fmt.Sprint(want) {
		t.Fatalf("%s: after append and clean reopen: %d records, want %d", name, len(again), len(want))
	}
}
