package timeline_test

import (
	"fmt"
	"time"

	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// tick is a clock that advances one second each time it is read.
type tick struct{ now time.Time }

func (c *tick) Now() time.Time {
	c.now = c.now.Add(time.Second)
	return c.now
}

// A retention deletion recorded as an instant: planned, inflight while
// the segments go, completed once they are gone. Readers see it only
// then.
func Example() {
	fsys := vfs.NewMem()
	dir := "/kafka-logs/orders-0"
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		panic(err)
	}
	clock := &tick{now: time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)}
	tl, err := timeline.Open(fsys, dir, timeline.Options{Clock: clock})
	if err != nil {
		panic(err)
	}
	old := []timeline.SegmentRef{{BaseOffset: 0, NextOffset: 120, Size: 1 << 20, LargestTimestamp: 1717000000000}}
	plan := &timeline.Clean{Rule: "time", Config: timeline.RetentionConfig{RetentionMs: 86400000, RetentionBytes: -1},
		Now: clock.now.UnixMilli(), Segments: old, OldLogStartOffset: 0, NewLogStartOffset: 120}
	tx, err := tl.Begin(timeline.ActionClean, plan)
	if err != nil {
		panic(err)
	}
	if err := tx.Inflight(); err != nil {
		panic(err)
	}
	insts, _ := tl.Instants(timeline.Filter{})
	fmt.Println("completed while inflight:", len(insts))
	// ... the segments are renamed .deleted and removed ...
	if err := tx.Complete(plan); err != nil {
		panic(err)
	}

	// Another reader, later: it sees the completed instant only.
	tl, err = timeline.Open(fsys, dir, timeline.Options{ReadOnly: true})
	if err != nil {
		panic(err)
	}
	insts, _ = tl.Instants(timeline.Filter{})
	for _, in := range insts {
		c := in.Result.(*timeline.Clean)
		fmt.Printf("%s: rule %s deleted %d segment(s), log start %d -> %d\n", in, c.Rule, len(c.Segments), c.OldLogStartOffset, c.NewLogStartOffset)
	}
	fmt.Println("pending:", len(tl.Pending()))
	files, _ := vfs.ReadDir(fsys, timeline.Dir(dir))
	for _, fi := range files {
		fmt.Println(timeline.DirName + "/" + fi.Name())
	}
	// Output:
	// completed while inflight: 0
	// 17172432010000000 clean completed at 17172432020000000: rule time deleted 1 segment(s), log start 0 -> 120
	// pending: 0
	// .segkit/timeline/17172432010000000_17172432020000000.clean
	// .segkit/timeline/history
}
