package tier_test

import (
	"fmt"
	"testing"

	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

// TestForecastMatchesEngine judges the forecast by the engine: after the
// forecast at now, a fake clock runs the remote log manager's tasks
// (Upload, then DeleteRemote) and the retention checks (DeleteLocal) on
// their schedules for two hours, and each segment's local deletion and
// end of readability are where the forecast put them. The one accepted
// difference: segkit deletes local segments below a moved log start
// offset in the same run as the remote deletion, where Kafka waits for
// the next retention check (the forecast gives Kafka's time), so for
// that reason the engine may be earlier, never later.
func TestForecastMatchesEngine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]string
		// rules lists the reasons the forecast must give at least once.
		rules []string
	}{
		{"time", map[string]string{"local.retention.ms": "60000", "retention.ms": "900000"},
			[]string{tier.ReasonLocalMs, tier.ReasonRetentionMs}},
		{"bytes", map[string]string{"local.retention.bytes": "12000", "retention.bytes": "40000"},
			[]string{tier.ReasonLocalBytes, tier.ReasonRetentionBytes, tier.ReasonLogStartOffset}},
		{"local time, total bytes", map[string]string{"local.retention.ms": "100000", "retention.bytes": "30000"},
			[]string{tier.ReasonLocalMs, tier.ReasonRetentionBytes}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			c := newClock(t0)
			cfg := tieredConfig(t, 4096, tc.props)
			fill(t, fsys, cfg, c, 400)
			l, tr, _ := mustOpen(t, fsys, cfg, c)
			defer l.Close()
			now := c.millis()
			tasks := retention.Schedule{First: now + 1000, Interval: 30_000}
			checks := retention.Schedule{First: now + 15_000, Interval: 300_000}
			fc, err := tr.Forecast(checks, tasks)
			if err != nil {
				t.Fatal(err)
			}
			if len(fc.Segments) != len(l.Segments()) || fc.LogStartOffset != 0 || fc.LocalLogStartOffset != 0 {
				t.Fatalf("forecast of %d segments (log start %d, local %d) for %d local ones", len(fc.Segments), fc.LogStartOffset, fc.LocalLogStartOffset, len(l.Segments()))
			}
			gotLocal := map[int64]int64{} // base → when it left local disk
			gotRead := map[int64]int64{}  // base → when it stopped being readable
			observe := func(at int64) {
				local := map[int64]bool{}
				for _, s := range l.Segments() {
					local[s.BaseOffset()] = true
				}
				for _, s := range fc.Segments {
					if _, done := gotLocal[s.BaseOffset]; !done && !local[s.BaseOffset] {
						gotLocal[s.BaseOffset] = at
					}
					if _, done := gotRead[s.BaseOffset]; !done && tr.LogStartOffset() > s.BaseOffset {
						gotRead[s.BaseOffset] = at
					}
				}
			}
			end := now + 2*3600_000
			nt, nc := tasks.First, checks.First
			for min(nt, nc) <= end {
				if nt < nc {
					c.set(nt)
					if _, err := tr.Upload(); err != nil {
						t.Fatal(err)
					}
					if _, err := tr.DeleteRemote(); err != nil {
						t.Fatal(err)
					}
					observe(nt)
					nt += tasks.Interval
					continue
				}
				c.set(nc)
				if _, err := tr.DeleteLocal(); err != nil {
					t.Fatal(err)
				}
				observe(nc)
				nc += checks.Interval
			}
			seen := map[string]bool{}
			for _, s := range fc.Segments {
				seen[s.LocalReason], seen[s.Reason] = true, true
				want := func(m map[int64]int64) int64 {
					if v, ok := m[s.BaseOffset]; ok {
						return v
					}
					return retention.Never
				}
				horizon := func(v int64) int64 {
					if v > end {
						return retention.Never
					}
					return v
				}
				if got, fr := want(gotRead), horizon(s.ReadableUntil); got != fr {
					t.Errorf("segment %d: readable until %s, forecast %s (%s)", s.BaseOffset, retention.FormatTime(got), retention.FormatTime(fr), s.Explanation)
				}
				got, fl := want(gotLocal), horizon(s.LocalUntil)
				if got != fl && !(s.LocalReason == tier.ReasonLogStartOffset && got < fl) {
					t.Errorf("segment %d: on local disk until %s, forecast %s (%s: %s)", s.BaseOffset, retention.FormatTime(got), retention.FormatTime(fl), s.LocalReason, s.Explanation)
				}
				if s.LocalUntil != retention.Never && s.ReadableUntil < s.LocalUntil && s.LocalReason != tier.ReasonLogStartOffset {
					t.Errorf("segment %d: readable until %d before its local deletion %d", s.BaseOffset, s.ReadableUntil, s.LocalUntil)
				}
			}
			for _, r := range tc.rules {
				if !seen[r] {
					t.Errorf("no segment's forecast names %s; reasons seen: %v", r, fmt.Sprint(seen))
				}
			}
			last := fc.Segments[len(fc.Segments)-1]
			if !last.Active || last.LocalUntil != retention.Never || last.ReadableUntil != retention.Never || last.CopiedBy != retention.Never {
				t.Errorf("the active segment: %+v", last)
			}
		})
	}
}
