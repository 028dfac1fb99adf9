package retention_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/retention"
)

type simCase struct {
	name    string
	props   map[string]string
	broker  config.Broker
	traffic retention.Traffic
	dur     time.Duration
}

var simCases = []simCase{
	{"payments", map[string]string{"retention.ms": "60000", "segment.ms": "180000"}, config.DefaultBroker(),
		retention.Traffic{RecordsPerSecond: 0.2, RecordBytes: 100}, 30 * time.Minute},
	{"orders", map[string]string{"segment.bytes": "1048576", "retention.bytes": "2097152"}, config.DefaultBroker(),
		retention.Traffic{RecordsPerSecond: 1.5, RecordBytes: 1024, BatchRecords: 15}, 3 * time.Hour},
	{"both_rules", map[string]string{"segment.bytes": "20000", "retention.bytes": "50000", "retention.ms": "120000", "segment.ms": "90000"},
		config.Broker{RetentionCheckIntervalMs: 45_000, InitialTaskDelayMs: 1000},
		retention.Traffic{RecordsPerSecond: 3, RecordBytes: 200}, time.Hour},
	{"fast_small_segments", map[string]string{"segment.bytes": "5000", "retention.ms": "30000", "file.delete.delay.ms": "0"},
		config.Broker{RetentionCheckIntervalMs: 7000, InitialTaskDelayMs: 0},
		retention.Traffic{RecordsPerSecond: 20, RecordBytes: 50, BatchRecords: 4}, 20 * time.Minute},
	{"long_delete_delay", map[string]string{"segment.bytes": "8000", "retention.bytes": "10000", "file.delete.delay.ms": "100000"},
		config.Broker{RetentionCheckIntervalMs: 10_000, InitialTaskDelayMs: 5000},
		retention.Traffic{RecordsPerSecond: 10, RecordBytes: 100}, 20 * time.Minute},
	{"retention_zero", map[string]string{"segment.bytes": "8000", "retention.ms": "0", "segment.ms": "10000"},
		config.Broker{RetentionCheckIntervalMs: 10_000, InitialTaskDelayMs: 0},
		retention.Traffic{RecordsPerSecond: 2, RecordBytes: 100}, 10 * time.Minute},
	{"bytes_zero", map[string]string{"segment.bytes": "8000", "retention.bytes": "0"},
		config.Broker{RetentionCheckIntervalMs: 3000, InitialTaskDelayMs: 0},
		retention.Traffic{RecordsPerSecond: 2, RecordBytes: 100}, 5 * time.Minute},
}

func (c simCase) config(t testing.TB, engine bool) retention.SimConfig {
	return retention.SimConfig{
		Config: mustConfig(t, c.props), Broker: c.broker, Traffic: c.traffic,
		Start: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixMilli(), Duration: c.dur.Milliseconds(), Engine: engine,
	}
}

// TestSimulateModelMatchesEngine runs each case through the model and
// through the real engine (kafkalog.Log on vfs.Mem, the Cleaner) and compares
// the timelines event by event.
func TestSimulateModelMatchesEngine(t *testing.T) {
	for _, c := range simCases {
		t.Run(c.name, func(t *testing.T) {
			model, err := retention.Simulate(c.config(t, false))
			if err != nil {
				t.Fatal(err)
			}
			engine, err := retention.Simulate(c.config(t, true))
			if err != nil {
				t.Fatal(err)
			}
			retention.SortEvents(model.Events)
			retention.SortEvents(engine.Events)
			if len(model.Events) < 3 {
				t.Fatalf("only %d events", len(model.Events))
			}
			for i := range max(len(model.Events), len(engine.Events)) {
				var m, e retention.Event
				if i < len(model.Events) {
					m = model.Events[i]
				}
				if i < len(engine.Events) {
					e = engine.Events[i]
				}
				if m.At != e.At || m.Kind != e.Kind || m.BaseOffset != e.BaseOffset || m.Size != e.Size || m.Reason != e.Reason {
					t.Fatalf("event %d: model %+v, engine %+v", i, m, e)
				}
			}
			if model.PeakLogBytes != engine.PeakLogBytes || model.PeakDiskBytes != engine.PeakDiskBytes ||
				model.Checks != engine.Checks || model.Records != engine.Records ||
				model.MaxReadableMs != engine.MaxReadableMs || model.MaxOnDiskMs != engine.MaxOnDiskMs {
				t.Fatalf("summaries differ:\nmodel  %+v\nengine %+v", summary(model), summary(engine))
			}
			if !sameLayout(model.End, engine.End) {
				t.Fatalf("end states differ: model %+v, engine %+v", model.End, engine.End)
			}
			t.Logf("%d events, %s", len(model.Events), summary(model))
		})
	}
}

func summary(tl retention.Timeline) string {
	return fmt.Sprintf("checks %d, records %d, peak log %d, peak disk %d, max readable %d ms, max on disk %d ms",
		tl.Checks, tl.Records, tl.PeakLogBytes, tl.PeakDiskBytes, tl.MaxReadableMs, tl.MaxOnDiskMs)
}

// TestWorstCaseBoundsSimulation checks WorstCase's formulas against the
// simulation: no record lives longer, and the partition never holds more,
// than the formulas say; and they are not loose by much.
func TestWorstCaseBoundsSimulation(t *testing.T) {
	for _, c := range simCases {
		for _, phase := range []int64{0, 1234, 29_999} {
			t.Run(fmt.Sprintf("%s/phase=%d", c.name, phase), func(t *testing.T) {
				sc := c.config(t, false)
				sc.Broker.InitialTaskDelayMs += phase % max(sc.Broker.RetentionCheckIntervalMs, 1)
				tl, err := retention.Simulate(sc)
				if err != nil {
					t.Fatal(err)
				}
				w, err := retention.WorstCase(tl.Policy, c.traffic)
				if err != nil {
					t.Fatal(err)
				}
				if tl.MaxReadableMs > w.ReadableMs || tl.MaxOnDiskMs > w.OnDiskMs ||
					(w.LogBytes >= 0 && tl.PeakLogBytes > w.LogBytes) || (w.DiskBytes >= 0 && tl.PeakDiskBytes > w.DiskBytes) {
					t.Fatalf("simulation beyond the worst case:\n%s\nworst: readable %d ms, on disk %d ms, log %d bytes, disk %d bytes\n%v",
						summary(tl), w.ReadableMs, w.OnDiskMs, w.LogBytes, w.DiskBytes, w.Explanation)
				}
				if float64(tl.MaxReadableMs) < 0.5*float64(w.ReadableMs) || float64(tl.PeakDiskBytes) < 0.5*float64(w.DiskBytes) {
					t.Errorf("worst case loose: %s; worst readable %d ms, disk %d bytes", summary(tl), w.ReadableMs, w.DiskBytes)
				}
				t.Logf("readable %d/%d ms, on disk %d/%d ms, log %d/%d bytes, disk %d/%d bytes",
					tl.MaxReadableMs, w.ReadableMs, tl.MaxOnDiskMs, w.OnDiskMs, tl.PeakLogBytes, w.LogBytes, tl.PeakDiskBytes, w.DiskBytes)
			})
		}
	}
}
