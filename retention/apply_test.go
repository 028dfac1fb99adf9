package retention_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/vfs"
)

// armed is an injector that does nothing until armed, so that a crash
// point counts only the operations of the step under test.
type armed struct {
	mu  sync.Mutex
	inj vfs.Injector
}

func (a *armed) arm(inj vfs.Injector) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inj = inj
}

func (a *armed) MaybeError(op vfs.Op) error {
	a.mu.Lock()
	inj := a.inj
	a.mu.Unlock()
	if inj == nil {
		return nil
	}
	return inj.MaybeError(op)
}

// layout describes a log to build: one entry per segment, the timestamps
// of its records (an empty last entry leaves an empty active segment).
type layout struct {
	segs [][]int64
	lso  int64 // DeleteRecords to this offset first, if > 0
	hw   int64 // SetHighWatermark, if > 0
}

const applyDir = "logs/orders-0"

// build makes the log of lay on fsys, flushed so that every record is
// durable before the step under test.
func (lay layout) build(t testing.TB, fsys vfs.FS, clk *clock, cfg kafkalog.Config) *kafkalog.Log {
	t.Helper()
	l, err := kafkalog.Open(fsys, applyDir, cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	n := 0
	for i, tss := range lay.segs {
		if i > 0 {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
		for _, ts := range tss {
			appendRecord(t, l, &w, ts, fmt.Sprintf("r%d", n))
			n++
			clk.ms++
		}
	}
	if lay.lso > 0 {
		if err := l.IncrementLogStartOffset(lay.lso); err != nil {
			t.Fatal(err)
		}
	}
	if lay.hw > 0 {
		l.SetHighWatermark(lay.hw)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	return l
}

func applyConfig(t testing.TB, retMs, retBytes string) kafkalog.Config {
	return mustConfig(t, map[string]string{
		config.RetentionMs: retMs, config.RetentionBytes: retBytes,
		config.SegmentBytes: "100000", config.SegmentIndexBytes: "4096", config.FileDeleteDelayMs: "60000",
	})
}

var applyScenarios = []struct {
	name             string
	lay              layout
	retMs, retBytes  string
	wantDel          int
	wantRoll         bool
	wantLSO          int64
	now              int64
	clockAfterCrashM int64
}{
	{name: "time_prefix", lay: layout{segs: [][]int64{{100, 200}, {300}, {400, 500}, {9000}}}, retMs: "1000", retBytes: "-1", now: 2000, wantDel: 3, wantLSO: 5},
	{name: "roll_first", lay: layout{segs: [][]int64{{100}, {200, 300}, {400}}}, retMs: "1000", retBytes: "-1", now: 5000, wantDel: 3, wantRoll: true, wantLSO: 4},
	{name: "lso_and_size", lay: layout{segs: [][]int64{{100, 101}, {200, 201}, {300, 301}, {400}}, lso: 3}, retMs: "-1", retBytes: "150", now: 5000, wantDel: 2, wantLSO: 4},
	{name: "empty_active", lay: layout{segs: [][]int64{{100}, {200}, {}}}, retMs: "10", retBytes: "-1", now: 5000, wantDel: 2, wantLSO: 2},
	{name: "hw_limits", lay: layout{segs: [][]int64{{100}, {200}, {300}, {400}}, hw: 2}, retMs: "10", retBytes: "-1", now: 5000, wantDel: 2, wantLSO: 2},
}

// TestApply checks each scenario's plan and its application: the log
// start offset moved, the records below it unreadable, the rest intact,
// and a second plan at the same time empty.
func TestApply(t *testing.T) {
	for _, sc := range applyScenarios {
		t.Run(sc.name, func(t *testing.T) {
			clk := &clock{ms: 1}
			mem := vfs.MemOptions{Clock: clk.Now}.New()
			cfg := applyConfig(t, sc.retMs, sc.retBytes)
			l := sc.lay.build(t, mem, clk, cfg)
			defer l.Close()
			before := readAll(t, l)
			p := retention.PolicyFrom(cfg, config.DefaultBroker())
			st, err := retention.StateOf(l)
			if err != nil {
				t.Fatal(err)
			}
			clk.ms = sc.now
			pl, err := p.Plan(st, sc.now)
			if err != nil {
				t.Fatal(err)
			}
			if len(pl.Deletions) != sc.wantDel || pl.RollFirst != sc.wantRoll || pl.NewLogStartOffset != sc.wantLSO {
				t.Fatalf("plan: %v", pl)
			}
			if err := retention.Apply(l, pl); err != nil {
				t.Fatal(err)
			}
			if l.LogStartOffset() != sc.wantLSO {
				t.Fatalf("log start offset %d, want %d", l.LogStartOffset(), sc.wantLSO)
			}
			checkSuffix(t, readAll(t, l), before, sc.wantLSO)
			st2, err := retention.StateOf(l)
			if err != nil {
				t.Fatal(err)
			}
			// The pure model of the applied plan matches the engine.
			want := st.After(pl)
			if !sameLayout(st2, want) {
				t.Fatalf("engine state %+v, model %+v", st2, want)
			}
			if again, _ := p.Plan(st2, sc.now); len(again.Deletions) != 0 {
				t.Fatalf("second plan deletes: %v", again)
			}
			// A stale plan is refused.
			if len(pl.Deletions) > 0 {
				if err := retention.Apply(l, pl); !errors.Is(err, retention.ErrStalePlan) {
					t.Fatalf("stale plan: %v", err)
				}
			}
		})
	}
}

// sameLayout compares the segments (bases and sizes) and offsets.
func sameLayout(a, b retention.LogState) bool {
	if a.LogStartOffset != b.LogStartOffset || a.LogEndOffset != b.LogEndOffset || len(a.Segments) != len(b.Segments) {
		return false
	}
	for i := range a.Segments {
		if a.Segments[i].BaseOffset != b.Segments[i].BaseOffset || a.Segments[i].Size != b.Segments[i].Size {
			return false
		}
	}
	return true
}

// checkSuffix checks that got is exactly the records of before from
// offset from on.
func checkSuffix(t testing.TB, got, before []readRecord, from int64) {
	t.Helper()
	var want []readRecord
	for _, r := range before {
		if r.Offset >= from {
			want = append(want, r)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("read %d records (%v), want the %d from offset %d", len(got), got, len(want), from)
	}
}

// TestApplyCrash crashes Apply at every mutating filesystem operation in
// turn, takes the disk as a power cut could leave it, and checks that the
// log opens, that its log start offset lies between the old and the new
// one and exposes no gap (the records read are exactly those at or above
// it), that the log end offset is unchanged, and that the next check
// finishes the job (RELIABILITY C6, C10).
func TestApplyCrash(t *testing.T) {
	total := 0
	for _, sc := range applyScenarios {
		t.Run(sc.name, func(t *testing.T) {
			points := 0
			for k := 0; ; k++ {
				clk := &clock{ms: 1}
				mem := vfs.MemOptions{Clock: clk.Now}.New()
				inj := &armed{}
				cfg := applyConfig(t, sc.retMs, sc.retBytes)
				l := sc.lay.build(t, vfs.WithFaults(mem, inj), clk, cfg)
				before := readAll(t, l)
				st, err := retention.StateOf(l)
				if err != nil {
					t.Fatal(err)
				}
				p := retention.PolicyFrom(cfg, config.DefaultBroker())
				clk.ms = sc.now
				pl, err := p.Plan(st, sc.now)
				if err != nil {
					t.Fatal(err)
				}
				crash := vfs.CrashAfter(k)
				inj.arm(crash)
				err = retention.Apply(l, pl)
				if !crash.Crashed() {
					if err != nil {
						t.Fatalf("no crash, but Apply failed: %v", err)
					}
					l.Close()
					break
				}
				if err != nil && !errors.Is(err, vfs.ErrCrashed) {
					t.Fatalf("crash point %d: Apply failed with %v, not the crash", k, err)
				}
				points++
				for _, mode := range []vfs.CrashConfig{
					{Seed: uint64(k), UnsyncedDataPercent: 0},
					{Seed: uint64(k), UnsyncedDataPercent: 50, TornWrites: true},
					{Seed: uint64(k) * 7, UnsyncedDataPercent: 100, TornWrites: true},
				} {
					name := fmt.Sprintf("crash point %d %+v", k, mode)
					checkCrashed(t, name, mem.CrashClone(mode), clk, cfg, p, st, pl, before)
				}
			}
			if points < 3 {
				t.Fatalf("only %d crash points", points)
			}
			total += points
			t.Logf("%d crash points", points)
		})
	}
	t.Logf("%d crash points in all", total)
}

func checkCrashed(t *testing.T, name string, disk *vfs.Mem, clk *clock, cfg kafkalog.Config, p retention.Policy, st retention.LogState, pl retention.Plan, before []readRecord) {
	t.Helper()
	l, err := kafkalog.Open(disk, applyDir, cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatalf("%s: reopen: %v", name, err)
	}
	defer l.Close()
	lso := l.LogStartOffset()
	if lso < st.LogStartOffset || lso > pl.NewLogStartOffset {
		t.Fatalf("%s: log start offset %d outside [%d, %d]", name, lso, st.LogStartOffset, pl.NewLogStartOffset)
	}
	if l.LogEndOffset() != st.LogEndOffset {
		t.Fatalf("%s: log end offset %d, want %d", name, l.LogEndOffset(), st.LogEndOffset)
	}
	checkSuffix(t, readAll(t, l), before, lso)
	// The next check at the same time finishes what the crash cut short.
	st2, err := retention.StateOf(l)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if pl.LogEndOffset == st2.LogEndOffset {
		st2.HighWatermark = min(st2.HighWatermark, st.HighWatermark)
		l.SetHighWatermark(st.HighWatermark)
	}
	pl2, err := p.Plan(st2, pl.Now)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := retention.Apply(l, pl2); err != nil {
		t.Fatalf("%s: second apply: %v", name, err)
	}
	if l.LogStartOffset() != pl.NewLogStartOffset {
		t.Fatalf("%s: after the next check the log start offset is %d, want %d (%v)", name, l.LogStartOffset(), pl.NewLogStartOffset, pl2)
	}
	checkSuffix(t, readAll(t, l), before, pl.NewLogStartOffset)
}
