package tier_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

type fixedClock struct{ t *time.Time }

func (c fixedClock) Now() time.Time { return *c.t }

// Tier a partition: copy its closed segments to a LocalTieredStorage
// directory, let local retention keep only the active segment, and read
// from offset 0, which now comes from the remote.
func Example() {
	fsys := vfs.NewMem()
	now := time.UnixMilli(1_700_000_000_000)
	clk := fixedClock{&now}
	cfg, _ := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{
		"segment.bytes": "2048", "segment.index.bytes": "4096", "remote.storage.enable": "true", "local.retention.ms": "60000",
	})
	dir := "/var/kafka-logs/orders-0"
	l, _ := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: clk})
	checkpoint.WritePartitionMetadata(fsys, dir, checkpoint.UUID{15: 42})
	var w record.Builder
	for i := range 40 {
		spec := record.NewBatchSpec(0, compress.None)
		b, _ := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: now.UnixMilli(), Value: []byte(strings.Repeat("x", 100) + fmt.Sprint(i))}})
		l.Append(b, 0)
	}
	t, _, err := tier.Open(fsys, l, tier.NewDir(fsys, "/tiered"), tier.Options{Clock: clk})
	if err != nil {
		panic(err)
	}
	up, _ := t.Upload()
	fmt.Println("copied", len(up.Copied), "segments, up to offset", t.HighestCopiedOffset())

	now = now.Add(2 * time.Minute) // past local.retention.ms
	n, _ := t.DeleteLocal()
	fmt.Println("deleted", n, "local segments; earliest", t.LogStartOffset(), "earliest-local", t.LocalLogStartOffset())

	res, _ := t.Read(0, 1)
	s := record.NewScanner(res.Records, "", 0)
	s.Next()
	fmt.Println("offset 0 from the remote:", res.Remote, "batch", s.Entry().BaseOffset(), "to", s.Entry().LastOffset())
	// Output:
	// copied 3 segments, up to offset 32
	// deleted 3 local segments; earliest 0 earliest-local 33
	// offset 0 from the remote: true batch 0 to 0
}
