package retention_test

import (
	"fmt"
	"strings"

	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/retention"
)

// The payments log at 6:01: segment 37's newest record (offset 72) was
// written at 2:55.105, more than retention.ms = 1 minute ago.
func ExamplePolicy_Plan() {
	cfg, _ := config.Parse(map[string]string{"retention.ms": "60000", "segment.ms": "180000"})
	p := retention.PolicyFrom(cfg, config.DefaultBroker())
	t0 := int64(1772442000000) // 2026-03-02T09:00:00Z, 0:00
	st := retention.LogState{
		Segments: []retention.SegmentInfo{
			{BaseOffset: 37, Size: 2808, LargestRecordTimestamp: t0 + 175105, FirstBatchTimestamp: t0, LastModified: t0 + 175105},
			{BaseOffset: 73, Size: 2808, LargestRecordTimestamp: t0 + 355213, FirstBatchTimestamp: t0 + 180108, LastModified: t0 + 355213},
			{BaseOffset: 109, Size: 78, LargestRecordTimestamp: t0 + 360216, FirstBatchTimestamp: t0 + 360216, LastModified: t0 + 360216},
		},
		LogStartOffset: 37, LogEndOffset: 110, HighWatermark: 110,
	}
	plan, _ := p.Plan(st, t0+361000)
	for _, d := range plan.Deletions {
		fmt.Printf("delete %d (%s): %s\n", d.BaseOffset, d.Reason, d.Explanation)
	}
	fmt.Println("new log start offset:", plan.NewLogStartOffset)
	// Output:
	// delete 37 (time): newest record 2026-03-02T09:02:55.105Z is 3 m 5.895 s old, more than retention.ms 60000
	// new log start offset: 73
}

// At 0:00 offset 37 has just opened segment 37. With checks at 1:01, 6:01,
// ... its records are readable until 6:01: the segment takes appends until
// 3:00 (segment.ms after its first batch), its newest record is then more
// than a minute old from 4:00, and the next check is at 6:01.
func ExampleReadableUntil() {
	cfg, _ := config.Parse(map[string]string{"retention.ms": "60000", "segment.ms": "180000"})
	p := retention.PolicyFrom(cfg, config.DefaultBroker())
	t0 := int64(1772442000000) // 2026-03-02T09:00:00Z, 0:00
	st := retention.LogState{
		Segments: []retention.SegmentInfo{
			{BaseOffset: 0, Size: 2876, LargestRecordTimestamp: t0 - 5003, FirstBatchTimestamp: t0 - 184108, LastModified: t0 - 5003},
			{BaseOffset: 37, Size: 78, LargestRecordTimestamp: t0, FirstBatchTimestamp: t0, LastModified: t0},
		},
		LogEndOffset: 38, HighWatermark: 38,
	}
	brokerStart := t0 - 269000 // -4:29: first check 30 s later, at -3:59
	f, _ := retention.ReadableUntil(st, p, p.NewSchedule(brokerStart), t0)
	for _, b := range f.Segments {
		fmt.Printf("segment %d: readable until %s (if idle %s), on disk until %s\n",
			b.BaseOffset, retention.FormatTime(b.ReadableUntil), retention.FormatTime(b.IfIdle), retention.FormatTime(b.OnDiskUntil))
	}
	b, _ := f.ForOffset(37)
	fmt.Println(b.Explanation[:strings.Index(b.Explanation, ". If")])
	// Output:
	// segment 0: readable until 2026-03-02T09:01:01.000Z (if idle 2026-03-02T09:01:01.000Z), on disk until 2026-03-02T09:02:01.000Z
	// segment 37: readable until 2026-03-02T09:06:01.000Z (if idle 2026-03-02T09:01:01.000Z), on disk until 2026-03-02T09:07:01.000Z
	// active segment: takes appends until its first batch 2026-03-02T09:00:00.000Z + segment.ms 180000 = 2026-03-02T09:03:00.000Z, so its newest record can be as late as 2026-03-02T09:03:00.000Z; + retention.ms 60000: qualifies from 2026-03-02T09:04:00.001Z; deleted by the check at 2026-03-02T09:06:01.000Z (checks every 5 m from 2026-03-02T08:56:01.000Z)
}

// The orders topic: 1 KiB records in 1 MiB segments with retention.bytes
// 2 MiB keep about 3 MiB per partition.
func ExampleWorstCase() {
	cfg, _ := config.Parse(map[string]string{"segment.bytes": "1048576", "retention.bytes": "2097152"})
	p := retention.PolicyFrom(cfg, config.DefaultBroker())
	w, _ := retention.WorstCase(p, retention.Traffic{RecordsPerSecond: 1.5, RecordBytes: 1024, BatchRecords: 15})
	fmt.Printf("segments of %d bytes; readable for at most %d ms; at most %d bytes per partition\n", w.SegmentMaxBytes, w.ReadableMs, w.LogBytes)
	// Output:
	// segments of 1042252 bytes; readable for at most 2310000 ms; at most 3608992 bytes per partition
}
