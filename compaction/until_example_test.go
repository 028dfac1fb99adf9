package compaction_test

import (
	"fmt"
	"time"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/vfs"
)

// Until when can a user's old profile, and the tombstone of a deleted
// user, still be read? The old profile goes at the next clean; the
// tombstone stays a day (delete.retention.ms) past the clean that stamps
// its delete horizon; the latest profile stays for good.
func ExampleReadableUntil() {
	fsys := vfs.NewMem()
	dir := "/kafka-logs/users-0"
	cfg, _ := kafkalog.ParseConfig(map[string]string{"cleanup.policy": "compact"})
	written := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, _ := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: exampleClock(written)})
	var b record.Builder
	put := func(key, value string) {
		r := record.Record{Timestamp: written.UnixMilli(), Key: []byte(key)}
		if value != "" {
			r.Value = []byte(value)
		}
		spec := record.NewBatchSpec(0, compress.None)
		batch, _ := b.AppendBatch(nil, &spec, []record.Record{r})
		l.Append(batch, 0)
	}
	put("alice", "v1") // 0
	put("bob", "v1")   // 1
	put("alice", "v2") // 2
	put("bob", "")     // 3: bob is deleted
	l.Roll()
	put("carol", "v1") // 4, in the active segment
	l.Close()

	opt := compaction.Options{Clock: exampleClock(written.Add(time.Hour))}
	for _, offset := range []int64{0, 3, 2} {
		u, _ := compaction.ReadableUntil(fsys, dir, cfg, opt, offset)
		fmt.Printf("offset %d (%s): removed by a clean now %v, not before %s, readable until %s\n",
			offset, u.Kind, u.RemovedByCleanNow, retention.FormatTime(u.NotBefore), retention.FormatTime(u.ReadableUntil))
	}
	// Output:
	// offset 0 (superseded): removed by a clean now true, not before 2026-01-01T01:00:00.000Z, readable until 2026-01-01T01:00:15.000Z
	// offset 3 (tombstone): removed by a clean now false, not before 2026-01-02T01:00:00.000Z, readable until never
	// offset 2 (latest): removed by a clean now false, not before never, readable until never
}
