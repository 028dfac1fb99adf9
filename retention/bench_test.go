package retention_test

import (
	"fmt"
	"testing"

	"github.com/segkit/segkit/retention"
)

// benchState is a log of n one-minute segments, the oldest a week old.
func benchState(n int) retention.LogState {
	const now = 1_772_442_000_000
	var segs []retention.SegmentInfo
	for i := range n {
		ts := int64(now - 7*86_400_000 + i*60_000)
		segs = append(segs, retention.SegmentInfo{BaseOffset: int64(i * 100), Size: 1 << 20, LargestRecordTimestamp: ts, FirstBatchTimestamp: ts - 59_000, LastModified: ts})
	}
	return retention.LogState{Segments: segs, LogEndOffset: int64(n * 100), HighWatermark: int64(n * 100)}
}

func BenchmarkPlan(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("segments=%d", n), func(b *testing.B) {
			st := benchState(n)
			p := retention.DefaultPolicy()
			p.RetentionMs = 3 * 86_400_000
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Plan(st, 1_772_442_000_000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkReadableUntil(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("segments=%d", n), func(b *testing.B) {
			st := benchState(n)
			p := retention.DefaultPolicy()
			p.RetentionMs = 3 * 86_400_000
			b.ReportAllocs()
			for b.Loop() {
				if _, err := retention.ReadableUntil(st, p, p.UnknownSchedule(), 1_772_442_000_000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
