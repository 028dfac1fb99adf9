package kafkalog_test

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

func rollsOf(t testing.TB, tl *timeline.Timeline) []*timeline.Roll {
	t.Helper()
	insts, err := tl.Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionRoll}})
	if err != nil {
		t.Fatal(err)
	}
	var out []*timeline.Roll
	for _, in := range insts {
		out = append(out, in.Result.(*timeline.Roll))
	}
	return out
}

// TestTimelineRecordsRollsAndTruncations: with Options.Timeline, every
// roll is a roll instant naming its reason, the segment it closed and the
// new base; a TruncateTo is a truncate instant saying what it cut; both
// survive a clean reopen; and a log without the option writes no
// timeline.
func TestTimelineRecordsRollsAndTruncations(t *testing.T) {
	m := vfs.NewMem()
	c := &clock{ms: 1_700_000_000_000}
	cfg := smallConfig(t, 1000)
	l, err := kafkalog.Open(m, "logs/t-0", cfg, kafkalog.Options{Clock: c, Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	var b record.Builder
	for i := range 30 {
		batch, _ := buildBatch(t, &b, compress.None, i*3, 3, c.ms)
		if _, err := l.Append(batch, 0); err != nil {
			t.Fatal(err)
		}
		c.ms += 10
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	segs := l.Segments()
	if len(segs) < 5 {
		t.Fatalf("only %d segments", len(segs))
	}
	var want []*timeline.Roll
	for i := 1; i < len(segs); i++ {
		p := segs[i-1]
		ts, _ := p.LargestTimestamp()
		reason := segment.RollSegmentBytes
		if i == len(segs)-1 {
			reason = kafkalog.RollRequested
		}
		want = append(want, &timeline.Roll{Reason: reason, NewBaseOffset: segs[i].BaseOffset(),
			Closed: &timeline.SegmentRef{BaseOffset: p.BaseOffset(), NextOffset: segs[i].BaseOffset(), Size: p.Size(), LargestTimestamp: ts}})
	}
	if diff := cmp.Diff(want, rollsOf(t, l.Timeline())); diff != "" {
		t.Fatalf("roll instants (-want +got):\n%s", diff)
	}
	// Truncate into the third segment: the later ones go whole.
	to := segs[2].BaseOffset() + 2
	oldEnd := l.LogEndOffset()
	sizeBefore := segs[2].Size()
	if err := l.TruncateTo(to); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = kafkalog.Open(m, "logs/t-0", cfg, kafkalog.Options{Clock: c, Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if diff := cmp.Diff(want, rollsOf(t, l.Timeline())); diff != "" {
		t.Fatalf("roll instants after reopen (-want +got):\n%s", diff)
	}
	insts, err := l.Timeline().Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionTruncate}})
	if err != nil || len(insts) != 1 {
		t.Fatalf("truncate instants %v, %v", insts, err)
	}
	got := insts[0].Result.(*timeline.Truncate)
	var deleted []int64
	for _, d := range got.Deleted {
		deleted = append(deleted, d.BaseOffset)
	}
	var wantDeleted []int64
	for _, s := range segs[3:] {
		wantDeleted = append(wantDeleted, s.BaseOffset())
	}
	if got.Reason != kafkalog.TruncateRequested || got.OldLogEndOffset != oldEnd || got.NewLogEndOffset != l.LogEndOffset() ||
		got.BytesTruncated != sizeBefore-l.Segments()[2].Size() || got.BytesTruncated <= 0 || !cmp.Equal(deleted, wantDeleted) {
		t.Fatalf("truncate instant %+v (deleted %v, want %v; log end %d)", got, deleted, wantDeleted, l.LogEndOffset())
	}
	if rep := l.LoadReport(); len(rep.Resolved) != 0 {
		t.Fatalf("a clean reopen resolved %v", rep.Resolved)
	}

	// Without the option, nothing under .segkit.
	m2 := vfs.NewMem()
	l2, err := kafkalog.Open(m2, "logs/t-0", cfg, kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		batch, _ := buildBatch(t, &b, compress.None, i*3, 3, c.ms)
		if _, err := l2.Append(batch, 0); err != nil {
			t.Fatal(err)
		}
	}
	l2.Close()
	if _, err := m2.Stat("logs/t-0/.segkit"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a log without Options.Timeline has .segkit: %v", err)
	}
}

// TestTimelineResolvesPending: an instant a crash left inflight is
// completed when its change is in place and rolled back when it is not,
// as Open finds the log.
func TestTimelineResolvesPending(t *testing.T) {
	m := vfs.NewMem()
	c := &clock{ms: 1_700_000_000_000}
	cfg := smallConfig(t, 1000)
	l, err := kafkalog.Open(m, "logs/p-0", cfg, kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	var b record.Builder
	for i := range 20 {
		batch, _ := buildBatch(t, &b, compress.None, i*3, 3, c.ms)
		if _, err := l.Append(batch, 0); err != nil {
			t.Fatal(err)
		}
	}
	end := l.LogEndOffset()
	second := l.Segments()[1].BaseOffset()
	if _, err := l.DeleteSegments(1); err != nil {
		t.Fatal(err)
	}
	l.Close()
	tl, err := timeline.Open(m, "logs/p-0", timeline.Options{Clock: timelineClock{c}})
	if err != nil {
		t.Fatal(err)
	}
	inflight := func(a timeline.Action, p timeline.Payload) {
		x, err := tl.Begin(a, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Inflight(); err != nil {
			t.Fatal(err)
		}
	}
	inflight(timeline.ActionClean, &timeline.Clean{Rule: "time", NewLogStartOffset: second})        // done
	inflight(timeline.ActionClean, &timeline.Clean{Rule: "size", NewLogStartOffset: end})           // not begun
	inflight(timeline.ActionTruncate, &timeline.Truncate{OldLogEndOffset: end, NewLogEndOffset: 4}) // not done
	if _, err := tl.Begin(timeline.ActionRoll, &timeline.Roll{NewBaseOffset: second}); err != nil { // requested only
		t.Fatal(err)
	}
	l, err = kafkalog.Open(m, "logs/p-0", cfg, kafkalog.Options{Clock: c, Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var got []string
	for _, r := range l.LoadReport().Resolved {
		got = append(got, fmt.Sprintf("%s %v", r.Instant.Action, r.Completed))
	}
	if diff := cmp.Diff([]string{"clean true", "clean false", "truncate false", "roll false"}, got); diff != "" {
		t.Fatalf("resolutions (-want +got):\n%s", diff)
	}
	if p := l.Timeline().Pending(); len(p) != 0 {
		t.Fatalf("still pending: %v", p)
	}
	insts, _ := l.Timeline().Instants(timeline.Filter{})
	var actions []string
	for _, in := range insts {
		actions = append(actions, string(in.Action))
	}
	if diff := cmp.Diff([]string{"clean", "rollback", "rollback", "rollback"}, actions); diff != "" {
		t.Fatalf("instants (-want +got):\n%s", diff)
	}
}

type timelineClock struct{ c *clock }

func (c timelineClock) Now() time.Time { return c.c.Now() }

// timelineWorkload appends to a log with a timeline and small segments,
// flushing every 20 appends and truncating once; it remembers the roll
// instants a Flush made durable. The timeline holds prefilled instants
// first, so that the workload's own make it archive.
type timelineWorkload struct {
	durable   map[timeline.InstantTime]bool // roll instants acknowledged durable
	truncated bool                          // TruncateTo returned
	flushedTo int64                         // the recovery point before the truncation
}

const afterTruncation = 10_000 // the key numbers appended after the truncation

// tlSegmentBytes rolls every sixth append or so.
const tlSegmentBytes = 1200

// prefilled is how many completed instants the timeline holds before the
// workload: just under timeline.DefaultArchiveAfter, so that the
// workload's rolls make it archive. They are tier instants, which no code
// acts on.
const prefilled = timeline.DefaultArchiveAfter - 5

// prefill writes the prefilled instants into a new partition directory.
func prefill(t *testing.T, m *vfs.Mem) {
	t.Helper()
	if err := m.MkdirAll("logs/tl-0", 0o755); err != nil {
		t.Fatal(err)
	}
	tl, err := timeline.Open(m, "logs/tl-0", timeline.Options{Clock: timelineClock{&clock{ms: 1_600_000_000_000}}})
	if err != nil {
		t.Fatal(err)
	}
	for range prefilled {
		x, err := tl.Begin(timeline.ActionTier, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Complete(nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{".", "logs", "logs/tl-0"} {
		if err := vfs.SyncDir(m, d); err != nil {
			t.Fatal(err)
		}
	}
}

func (w *timelineWorkload) run(t *testing.T, fsys vfs.FS, c *clock) error {
	w.durable = map[timeline.InstantTime]bool{}
	cfg := smallConfig(t, tlSegmentBytes)
	l, err := kafkalog.Open(fsys, "logs/tl-0", cfg, kafkalog.Options{Clock: c, Timeline: true})
	if err != nil {
		return err
	}
	var b record.Builder
	seq := 0
	for i := range 90 {
		if i == 60 {
			if err := l.TruncateTo(l.LogEndOffset() - 7); err != nil {
				return err
			}
			w.truncated = true
			seq = afterTruncation
		}
		batch, _ := buildBatch(t, &b, compress.None, seq, 2, c.ms)
		if _, err := l.Append(batch, 0); err != nil {
			return err
		}
		seq += 2
		c.ms += 5
		if i%20 == 19 {
			if err := l.Flush(); err != nil {
				return err
			}
			insts, err := l.Timeline().Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionRoll}})
			if err != nil {
				return err
			}
			for _, in := range insts {
				w.durable[in.Time] = true
			}
			if !w.truncated {
				w.flushedTo = l.RecoveryPoint()
			}
		}
	}
	return l.Close()
}

// TestTimelineCrashAtEveryWritePoint crashes the workload at every
// mutating filesystem operation, takes each disk as three power cuts
// leave it, opens it with Options.Timeline as a restart does, and checks
// that the timeline and the files agree: nothing is left pending; every
// segment after the first recorded roll is named by a roll instant (a
// roll whose noted instant was lost is recorded again); every roll
// instant's segment is there unless a later truncation or recovery
// removed it; the records appended after the truncation are there only
// with a completed truncate instant, and with one, no record from before
// it remains at or past its new end, and without one every record
// flushed before it is there; every roll instant a Flush made durable is
// there. The workload's rolls make the timeline archive its oldest
// instants, so crashes in the middle of archival are among the points.
func TestTimelineCrashAtEveryWritePoint(t *testing.T) {
	stride := *crashStride
	if testing.Short() {
		stride = max(stride, 7)
	}
	points, images, recovered := 0, 0, 0
	base := vfs.NewMem()
	prefill(t, base)
	archived := false
	for k := 0; ; k += stride {
		mem := base.CrashClone(vfs.CrashConfig{})
		crash := vfs.CrashAfter(k)
		c := &clock{ms: 1_700_000_000_000}
		var w timelineWorkload
		err := w.run(t, vfs.WithFaults(mem, crash), c)
		if !crash.Crashed() {
			if err != nil {
				t.Fatalf("workload failed without a crash: %v", err)
			}
			break
		}
		if !errors.Is(err, vfs.ErrCrashed) {
			t.Fatalf("crash point %d: the workload failed with %v, not the crash", k, err)
		}
		if hist, _ := vfs.ReadDir(mem, "logs/tl-0/.segkit/timeline/history"); len(hist) > 0 {
			archived = true
		}
		points++
		for _, mode := range []vfs.CrashConfig{
			{Seed: uint64(k), UnsyncedDataPercent: 0},
			{Seed: uint64(k), UnsyncedDataPercent: 50, TornWrites: true},
			{Seed: uint64(k) * 31, UnsyncedDataPercent: 100, TornWrites: true},
		} {
			images++
			recovered += checkTimelineImage(t, fmt.Sprintf("crash point %d, %+v", k, mode), mem.CrashClone(mode), c, &w)
		}
	}
	if points*stride < 300 || recovered == 0 || !archived {
		t.Fatalf("%d crash points, %d lost rolls recorded again, archived %v: the workload does not exercise the timeline", points, recovered, archived)
	}
	t.Logf("%d crash points (stride %d), %d images, %d lost rolls recorded again", points, stride, images, recovered)
}

func checkTimelineImage(t *testing.T, name string, disk *vfs.Mem, c *clock, w *timelineWorkload) (recovered int) {
	t.Helper()
	l, err := kafkalog.Open(disk, "logs/tl-0", smallConfig(t, tlSegmentBytes), kafkalog.Options{Clock: c, Timeline: true, TruncateCorrupt: true})
	if err != nil {
		t.Fatalf("%s: open: %v", name, err)
	}
	defer l.Close()
	tl := l.Timeline()
	if p := tl.Pending(); len(p) != 0 {
		t.Fatalf("%s: pending after open: %v", name, p)
	}
	insts, err := tl.Instants(timeline.Filter{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	have := map[timeline.InstantTime]bool{}
	named := map[int64]bool{}
	first := int64(-1)
	var trunc *timeline.Truncate
	for i, in := range insts {
		have[in.Time] = true
		switch p := in.Result.(type) {
		case *timeline.Roll:
			named[p.NewBaseOffset] = true
			if first < 0 {
				first = p.NewBaseOffset
			}
			if p.Reason == kafkalog.RollRecovered {
				recovered++
			}
			if p.NewBaseOffset < l.LogStartOffset() || p.NewBaseOffset >= l.LogEndOffset() {
				continue
			}
			found := false
			for _, s := range l.Segments() {
				found = found || s.BaseOffset() == p.NewBaseOffset
			}
			removedLater := false
			for _, later := range insts[i+1:] {
				if later.Action == timeline.ActionTruncate || later.Action == timeline.ActionRecovery {
					removedLater = true
				}
			}
			if !found && !removedLater {
				t.Fatalf("%s: roll instant %s names a segment at %d the log does not have", name, in.Time, p.NewBaseOffset)
			}
		case *timeline.Truncate:
			if trunc != nil {
				t.Fatalf("%s: two truncate instants", name)
			}
			trunc = p
		}
	}
	for tm := range w.durable {
		if !have[tm] {
			t.Fatalf("%s: roll instant %s, durable after a Flush, is lost", name, tm)
		}
	}
	segs := l.Segments()
	for i, s := range segs {
		if i > 0 && first >= 0 && s.BaseOffset() > first && !named[s.BaseOffset()] {
			t.Fatalf("%s: segment %d has no roll instant", name, s.BaseOffset())
		}
	}
	recs := readAll(t, l)
	if trunc == nil && int64(len(recs)) < w.flushedTo {
		t.Fatalf("%s: %d records, fewer than the %d flushed, and no truncate instant", name, len(recs), w.flushedTo)
	}
	for _, r := range recs {
		n, err := strconv.Atoi(strings.TrimPrefix(r.key, "k"))
		if err != nil {
			t.Fatalf("%s: key %q", name, r.key)
		}
		after := n >= afterTruncation
		if after && trunc == nil {
			t.Fatalf("%s: record %d from after the truncation, and no truncate instant", name, r.offset)
		}
		if !after && trunc != nil && r.offset >= trunc.NewLogEndOffset {
			t.Fatalf("%s: record %d from before the truncation at or past its new end %d", name, r.offset, trunc.NewLogEndOffset)
		}
	}
	return recovered
}

// BenchmarkRoll measures Append of a 16 KiB batch followed by a roll on
// the OS filesystem, without and with the timeline (a noted roll instant
// per roll). Compare the two in one run:
//
//	go test -run XXX -bench 'Roll$' -count 6 ./kafkalog/
func BenchmarkRoll(b *testing.B) {
	for _, withTimeline := range []bool{false, true} {
		name := "plain"
		if withTimeline {
			name = "timeline"
		}
		b.Run(name, func(b *testing.B) {
			batch := batch16K(b)
			dir := filepath.ToSlash(filepath.Join(b.TempDir(), "bench-0"))
			l, err := kafkalog.Open(vfs.OS(), dir, kafkalog.DefaultConfig(), kafkalog.Options{Timeline: withTimeline})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.Append(batch, 0); err != nil {
					b.Fatal(err)
				}
				if err := l.Roll(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRollTimelineRatio times, in one run, rolls of two logs side by
// side — one without a timeline, one with — alternating which goes first,
// and reports the median ratio of the timeline's roll to the plain one's
// with its 10th and 90th percentiles and the ratio of the totals (rolls
// on a shared disk vary more than the timeline costs; pairs taken
// together cancel the drift). Two kinds of roll:
//
//   - segment.bytes: the append that rolls a full segment of 1 MiB, the
//     smallest segment.bytes Kafka 4 accepts (KIP-1030): the roll flushes
//     the segment it closes, writes the producer snapshot and creates the
//     new segment, and, with the timeline, notes a roll instant;
//
//   - after-one-batch: an explicit Roll after a single 16 KiB batch, the
//     smallest roll there is, where the roll instant's file weighs most;
//
//   - append-path: every append of a 1 MiB segment, the one that rolls
//     included: the timeline's cost on the append path, per segment.
//
//     go test -run XXX -bench RollTimelineRatio -benchtime 200x ./kafkalog/
func BenchmarkRollTimelineRatio(b *testing.B) {
	batch := batch16K(b)
	for _, kind := range []string{"segment.bytes", "after-one-batch", "append-path"} {
		b.Run(kind, func(b *testing.B) {
			cfg := kafkalog.DefaultConfig()
			cfg.SegmentBytes = 1 << 20
			logs := make([]*kafkalog.Log, 2)
			for i := range logs {
				dir := filepath.ToSlash(filepath.Join(b.TempDir(), "bench-0"))
				l, err := kafkalog.Open(vfs.OS(), dir, cfg, kafkalog.Options{Timeline: i == 1})
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				logs[i] = l
			}
			roll := func(l *kafkalog.Log) time.Duration {
				if kind == "after-one-batch" {
					start := time.Now()
					if _, err := l.Append(batch, 0); err != nil {
						b.Fatal(err)
					}
					if err := l.Roll(); err != nil {
						b.Fatal(err)
					}
					return time.Since(start)
				}
				fill := time.Now()
				for {
					start := time.Now()
					res, err := l.Append(batch, 0)
					if err != nil {
						b.Fatal(err)
					}
					if res.Rolled {
						if kind == "append-path" {
							return time.Since(fill)
						}
						return time.Since(start)
					}
				}
			}
			var ratios []float64
			var total [2]time.Duration
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				var d [2]time.Duration
				if i%2 == 0 {
					d[0], d[1] = roll(logs[0]), roll(logs[1])
				} else {
					d[1], d[0] = roll(logs[1]), roll(logs[0])
				}
				i++
				total[0] += d[0]
				total[1] += d[1]
				ratios = append(ratios, float64(d[1])/float64(d[0]))
			}
			slices.Sort(ratios)
			q := func(p float64) float64 { return ratios[int(p*float64(len(ratios)-1))] }
			b.ReportMetric(q(0.5), "ratio-median")
			b.ReportMetric(q(0.1), "ratio-p10")
			b.ReportMetric(q(0.9), "ratio-p90")
			b.ReportMetric(float64(total[1])/float64(total[0]), "ratio-total")
			b.ReportMetric(float64(total[0].Microseconds())/float64(i), "plain-us/roll")

		})
	}
}
