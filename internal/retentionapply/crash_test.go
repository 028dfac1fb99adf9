package retentionapply_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/retentionapply"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// crashConfig rolls every 2.5 s of record time and keeps 6 s.
func crashConfig(t *testing.T) kafkalog.Config {
	t.Helper()
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{
		config.SegmentMs: "2500", config.RetentionMs: "6000", config.FileDeleteDelayMs: "0",
		// Small indexes: the sweep opens thousands of images in memory.
		config.SegmentIndexBytes: "4096",
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.MessageTimestampAfterMaxMs = math.MaxInt64
	return cfg
}

// cleanWorkload appends a record a second for 30 s to a log with the
// engine's timeline and runs a retention check every 2 s through Check;
// it remembers the clean instants Check reported completed.
type cleanWorkload struct {
	acked []timeline.InstantTime
}

func (w *cleanWorkload) run(t *testing.T, fsys vfs.FS) error {
	cfg := crashConfig(t)
	clk := &clock{ms: t0}
	l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: clk, Timeline: true})
	if err != nil {
		return err
	}
	p := retention.PolicyFrom(cfg, config.DefaultBroker())
	var b record.Builder
	for i := range 30 {
		clk.ms = t0 + int64(i)*1000
		spec := record.NewBatchSpec(0, compress.None)
		batch, err := b.AppendBatch(nil, &spec, []record.Record{{Timestamp: clk.ms, Value: fmt.Appendf(nil, "v%d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(batch, 0); err != nil {
			return err
		}
		if i%2 == 1 {
			rep, err := retentionapply.Check(l, l.Timeline(), p, clk.ms)
			if err != nil {
				return err
			}
			for _, in := range rep.Instants {
				if in.Action == timeline.ActionClean {
					w.acked = append(w.acked, in.Time)
				}
			}
		}
	}
	return l.Close()
}

// TestCleanCrashAtEveryWritePoint crashes the workload at every mutating
// filesystem operation — the appends, the engine's rolls, and each
// check's instants, checkpoint, renames and removals — takes each disk as
// three power cuts leave it, opens it with the engine's timeline as a
// restart does, and checks that the timeline and the files agree: no
// instant is left pending; the log start offset is one a completed clean
// instant moved it to (or the first segment's, if none did), so no
// deletion took effect without its instant; every completed clean's new
// log start offset has been reached, so no instant claims a deletion that
// did not happen; and every clean Check reported done is there.
func TestCleanCrashAtEveryWritePoint(t *testing.T) {
	stride := 1
	if testing.Short() {
		stride = 5
	}
	points, images, cleans := 0, 0, 0
	for k := 0; ; k += stride {
		mem := vfs.NewMem()
		crash := vfs.CrashAfter(k)
		var w cleanWorkload
		err := w.run(t, vfs.WithFaults(mem, crash))
		if !crash.Crashed() {
			if err != nil {
				t.Fatalf("the workload fails without a crash: %v", err)
			}
			if len(w.acked) < 3 {
				t.Fatalf("the workload's checks deleted %d times", len(w.acked))
			}
			break
		}
		if !errors.Is(err, vfs.ErrCrashed) {
			t.Fatalf("crash point %d: the workload failed with %v, not the crash", k, err)
		}
		points++
		for _, mode := range []vfs.CrashConfig{
			{Seed: uint64(k), UnsyncedDataPercent: 0},
			{Seed: uint64(k), UnsyncedDataPercent: 50, TornWrites: true},
			{Seed: uint64(k) * 31, UnsyncedDataPercent: 100, TornWrites: true},
		} {
			images++
			cleans += checkCleanImage(t, fmt.Sprintf("crash point %d, %+v", k, mode), mem.CrashClone(mode), &w)
		}
	}
	if points*stride < 300 || cleans == 0 {
		t.Fatalf("%d crash points, %d clean instants seen: the workload is too small", points, cleans)
	}
	t.Logf("%d crash points (stride %d), %d images, %d clean instants checked", points, stride, images, cleans)
}

func checkCleanImage(t *testing.T, name string, disk *vfs.Mem, w *cleanWorkload) int {
	t.Helper()
	clk := &clock{ms: t0 + 60_000}
	l, err := kafkalog.Open(disk, dir, crashConfig(t), kafkalog.Options{Clock: clk, Timeline: true, TruncateCorrupt: true})
	if err != nil {
		t.Fatalf("%s: open: %v", name, err)
	}
	defer l.Close()
	tl := l.Timeline()
	if p := tl.Pending(); len(p) != 0 {
		t.Fatalf("%s: pending after open: %v", name, p)
	}
	insts, err := tl.Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionClean}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	have := map[timeline.InstantTime]bool{}
	moved := map[int64]bool{}
	for _, in := range insts {
		have[in.Time] = true
		c := in.Result.(*timeline.Clean)
		moved[c.NewLogStartOffset] = true
		if l.LogStartOffset() < c.NewLogStartOffset {
			t.Fatalf("%s: clean instant %s moved the log start offset to %d, the log's is %d", name, in.Time, c.NewLogStartOffset, l.LogStartOffset())
		}
	}
	if start := l.LogStartOffset(); start != l.Segments()[0].BaseOffset() && !moved[start] {
		t.Fatalf("%s: log start offset %d (first segment %d), which no clean instant moved it to", name, start, l.Segments()[0].BaseOffset())
	}
	if start := l.LogStartOffset(); start > 0 && !moved[start] && start == l.Segments()[0].BaseOffset() {
		// The segments below were deleted: by a clean instant that moved
		// the start at least this far.
		found := false
		for m := range moved {
			found = found || m >= start
		}
		if !found {
			t.Fatalf("%s: the segments below %d are gone, and no clean instant deleted them", name, start)
		}
	}
	for _, tm := range w.acked {
		if !have[tm] {
			t.Fatalf("%s: clean instant %s, reported completed, is lost", name, tm)
		}
	}
	return len(insts)
}
