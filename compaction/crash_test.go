package compaction_test

import (
	"errors"
	"maps"
	"testing"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// TestCrashAtEveryWritePoint crashes a clean at every mutating filesystem
// operation in turn, takes the crash-aware Mem as a power cut could leave
// it (unsynced data and directory changes dropped or kept at random, torn
// writes), and checks that the directory opens, that a read_committed
// consumer sees what it saw before the clean (the old segments or the
// cleaned ones, never a mix that loses or resurrects a record), and that
// a clean after the crash completes and still changes nothing a consumer
// sees.
func TestCrashAtEveryWritePoint(t *testing.T) {
	base := vfs.NewMem()
	dir := "/kafka/crash-0"
	props := map[string]string{"index.interval.bytes": "100", "internal.segment.bytes": "1200", "delete.retention.ms": "0", "segment.index.bytes": "8192"}
	p := newLog(t, base, dir, props)
	for i := range 60 {
		k := string(rune('a' + i%7))
		switch i % 6 {
		case 0:
			p.txn(9, kv{k, "t"})
		case 1:
			p.end(9, []record.ControlType{record.ControlCommit, record.ControlAbort}[i%4/2])
		case 2:
			p.put(compress.None, kv{k, "-"})
		default:
			p.put([]compress.Codec{compress.None, compress.Zstd}[i%2], kv{k, "value"}, kv{"z" + k, "v"})
		}
		if i%8 == 7 {
			p.roll()
		}
	}
	p.close()
	want, wantLEO := committedView(t, base, dir)
	cfg := testConfig(t, props)
	opt := compaction.Options{Clock: clock{t0 + 3*day}}

	stride := 1
	if testing.Short() {
		stride = 7
	}
	points := 0
	for k := 0; ; k += stride {
		m := base.CrashClone(vfs.CrashConfig{}) // the synced state: all of it
		crash := vfs.CrashAfter(k)
		_, err := compaction.Clean(vfs.WithFaults(m, crash), dir, cfg, opt)
		if !crash.Crashed() {
			if err != nil {
				t.Fatalf("no crash, yet: %v", err)
			}
			break
		}
		if err == nil || !errors.Is(err, vfs.ErrCrashed) && !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("crash after %d operations: Clean returned %v", k, err)
		}
		points++
		for seed := range uint64(3) {
			after := m.CrashClone(vfs.CrashConfig{Seed: seed + uint64(k)*7, UnsyncedDataPercent: []int{0, 50, 100}[seed], TornWrites: seed == 1})
			l, err := kafkalog.Open(after, dir, cfg, kafkalog.Options{})
			if err != nil {
				t.Fatalf("crash after %d operations (seed %d): open: %v", k, seed, err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			got, gotLEO := committedView(t, after, dir)
			if gotLEO != wantLEO || !maps.Equal(got, want) {
				t.Fatalf("crash after %d operations (seed %d): the committed view changed:\nwant %v (LEO %d)\n got %v (LEO %d)", k, seed, want, wantLEO, got, gotLEO)
			}
			if _, err := compaction.Clean(after, dir, cfg, opt); err != nil {
				t.Fatalf("crash after %d operations (seed %d): clean after the crash: %v", k, seed, err)
			}
			if got, _ := committedView(t, after, dir); !maps.Equal(got, want) {
				t.Fatalf("crash after %d operations (seed %d): the clean after the crash changed the view", k, seed)
			}
		}
	}
	if points < 20 {
		t.Fatalf("only %d crash points", points)
	}
	t.Logf("%d crash points, 3 power cuts each", points)
}
