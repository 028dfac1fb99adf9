package compaction_test

import (
	"fmt"
	"time"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

type exampleClock time.Time

func (c exampleClock) Now() time.Time { return time.Time(c) }

// A compacted topic's partition: user profiles by user id, one of them
// deleted. Plan says what a clean would do; Clean does it.
func Example() {
	fsys := vfs.NewMem() // vfs.OS() for a real log directory
	dir := "/kafka-logs/users-0"
	cfg, _ := kafkalog.ParseConfig(map[string]string{"cleanup.policy": "compact"})
	written := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, _ := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: exampleClock(written)})
	var b record.Builder
	put := func(kvs ...string) {
		var recs []record.Record
		for i := 0; i < len(kvs); i += 2 {
			r := record.Record{Timestamp: written.UnixMilli(), Key: []byte(kvs[i])}
			if kvs[i+1] != "" {
				r.Value = []byte(kvs[i+1])
			}
			recs = append(recs, r)
		}
		spec := record.NewBatchSpec(0, compress.None)
		batch, _ := b.AppendBatch(nil, &spec, recs)
		l.Append(batch, 0)
	}
	put("alice", "v1", "bob", "v1")
	put("alice", "v2", "carol", "v1")
	put("bob", "") // a tombstone: bob is deleted
	l.Roll()       // the active segment is never cleaned
	put("dave", "v1")
	l.Close()

	now := written.Add(time.Hour)
	opt := compaction.Options{Clock: exampleClock(now)}
	plan, _ := compaction.Plan(fsys, dir, cfg, opt)
	fmt.Printf("dirty [%d, %d), ratio %.2f, cleanable: %v\n", plan.FirstDirtyOffset, plan.FirstUncleanableOffset, plan.CleanableRatio, plan.Cleanable)

	rep, _ := compaction.Clean(fsys, dir, cfg, opt)
	fmt.Printf("kept %d of %d records; %d superseded\n", rep.Stats.MessagesWritten, rep.Stats.MessagesRead, rep.Removed.Superseded)
	for _, h := range rep.Horizons {
		fmt.Printf("%d tombstone kept until %s\n", h.Tombstones, time.UnixMilli(h.DeleteHorizonMs).UTC().Format(time.RFC3339))
	}
	fmt.Printf("next clean starts at %d\n", rep.EndOffset)
	// Output:
	// dirty [0, 5), ratio 1.00, cleanable: true
	// kept 3 of 5 records; 2 superseded
	// 1 tombstone kept until 2026-01-02T01:00:00Z
	// next clean starts at 5
}
