package oracle_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/internal/retentionapply"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// heldCase is one partition taken through a hold and its release.
type heldCase struct {
	c        retentionCase
	dir      string // the partition segkit checks twice
	free     []string
	held     []string // what the check under the hold deleted
	released retentionOutcome
}

// TestRetentionAfterReleaseMatchesKafka: on seeded retention cases where a
// check would delete at least two segments, a savepoint on the middle one
// of them stops segkit's check (retentionapply.Check, what "segviz
// retention --apply" runs) at that segment; once it is released, segkit's
// next check deletes what Kafka 4.3.1's UnifiedLog.deleteOldSegments
// deletes from the same partition, by the same rules, to the same log
// start offset.
func TestRetentionAfterReleaseMatchesKafka(t *testing.T) {
	oracle.Require(t)
	root := t.TempDir()
	var cases []*heldCase
	for i := range 14 {
		lay := writeRetentionLayout(t, root, i)
		for j, mode := range []string{"time", "size", "both"} {
			rng := rand.New(rand.NewPCG(uint64(i), uint64(100+j)))
			c := makeRetentionCase(rng, lay, fmt.Sprintf("held-%02d-%s", i, mode), mode)
			// The log start and high watermark as the engine keeps them, so
			// that the engine's check and Kafka's start from the same state.
			c.LogStartOffset, c.HighWatermark = lay.bases[0], lay.leo
			free, err := segkitRetention(c)
			if err != nil {
				t.Fatal(err)
			}
			if len(free.Deleted) < 2 {
				continue // a hold could not stop a deletion and leave one
			}
			dir := filepath.Join(root, c.ID, filepath.Base(lay.dir))
			copyDir(t, lay.dir, dir)
			cases = append(cases, &heldCase{c: c, dir: dir, free: free.Deleted})
		}
	}
	if len(cases) < 10 {
		t.Fatalf("only %d cases delete two segments or more, want at least 10", len(cases))
	}

	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, hc := range cases {
		c := hc.c
		cfg, err := kafkalog.ParseConfig(c.Config)
		if err != nil {
			t.Fatal(err)
		}
		clk := fixedClock{c.Now}
		p := retention.PolicyFrom(cfg, config.DefaultBroker())
		k := len(hc.free) / 2 // hold the middle segment of those the check deletes
		heldBase := hc.c.lay.bases[k]

		// The check under the hold.
		l, err := kafkalog.Open(vfs.OS(), hc.dir, cfg, kafkalog.Options{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		tl, err := timeline.Open(vfs.OS(), hc.dir, timeline.Options{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		taken := recordSavepoint(t, tl, &timeline.Savepoint{Label: "oracle", FirstOffset: heldBase, LastOffset: heldBase})
		rep, err := retentionapply.Check(l, tl, p, c.Now)
		if err != nil {
			t.Fatalf("%s: held check: %v", c.ID, err)
		}
		for _, d := range rep.Plan.Deletions {
			hc.held = append(hc.held, fmt.Sprintf("%d:%s", d.BaseOffset, ruleName[d.Reason]))
		}
		if !slices.Equal(hc.held, hc.free[:k]) || len(rep.Plan.Held) == 0 || rep.Plan.Held[0].BaseOffset != heldBase {
			t.Fatalf("%s: under a hold on segment %d the check deleted %v (held %v), want %v", c.ID, heldBase, hc.held, rep.Plan.Held, hc.free[:k])
		}
		recordSavepoint(t, tl, &timeline.Savepoint{Label: "oracle", FirstOffset: heldBase, LastOffset: heldBase, Release: &taken})
		lso := l.LogStartOffset()
		if err := l.Close(); err != nil { // removes the .deleted files
			t.Fatal(err)
		}

		// Kafka checks a copy of the partition as the held check left it.
		kdir := filepath.Join(root, c.ID+"-kafka", filepath.Base(hc.dir))
		copyDir(t, hc.dir, kdir)
		kc := retentionCase{ID: c.ID, Src: kdir, Now: c.Now, Config: c.Config, HighWatermark: c.lay.leo, LogStartOffset: lso}
		if err := enc.Encode(kc); err != nil {
			t.Fatal(err)
		}

		// segkit's next check, the hold released.
		l, err = kafkalog.Open(vfs.OS(), hc.dir, cfg, kafkalog.Options{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		rep, err = retentionapply.Check(l, tl, p, c.Now)
		if err != nil {
			t.Fatalf("%s: released check: %v", c.ID, err)
		}
		hc.released = retentionOutcome{LogStartBefore: lso, LogStartOffset: rep.LogStartOffset, Deleted: []string{}}
		for _, d := range rep.Plan.Deletions {
			hc.released.Deleted = append(hc.released.Deleted, fmt.Sprintf("%d:%s", d.BaseOffset, ruleName[d.Reason]))
		}
		if len(rep.Plan.Held) != 0 {
			t.Errorf("%s: the released check still holds %v", c.ID, rep.Plan.Held)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := oracle.Run(ctx, in.Bytes(), "retention", "--batch")
	if err != nil {
		t.Fatal(err)
	}
	kafka := map[string]kafkaRetention{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var k kafkaRetention
		if err := json.Unmarshal(sc.Bytes(), &k); err != nil {
			t.Fatalf("oracle output %q: %v", sc.Text(), err)
		}
		kafka[k.ID] = k
	}
	agree, deleting := 0, 0
	for _, hc := range cases {
		k, ok := kafka[hc.c.ID]
		switch {
		case !ok:
			t.Fatalf("%s: no answer from Kafka", hc.c.ID)
		case k.Error != "":
			t.Errorf("%s: Kafka failed: %s", hc.c.ID, k.Error)
			continue
		}
		want := retentionOutcome{LogStartBefore: k.LogStartOffsetBefore, LogStartOffset: k.LogStartOffset, Deleted: []string{}}
		for _, d := range k.Deleted {
			want.Deleted = append(want.Deleted, fmt.Sprintf("%d:%s", d.BaseOffset, d.Rule))
		}
		if len(want.Deleted) > 0 {
			deleting++
		}
		if d := cmp.Diff(want, hc.released); d != "" {
			t.Errorf("%s (now=%d, config=%v; held check deleted %v): after the release, segkit's check differs from Kafka's (-Kafka +segkit):\n%s",
				hc.c.ID, hc.c.Now, hc.c.Config, hc.held, d)
			continue
		}
		agree++
	}
	t.Logf("after a savepoint's release, segkit vs Kafka 4.3.1: %d of %d cases agree, %d of them deleting what the hold had kept", agree, len(cases), deleting)
	if deleting == 0 {
		t.Errorf("Kafka deleted nothing in any case: the hold kept nothing a check would delete")
	}
}

// recordSavepoint records a completed savepoint instant and returns its
// time.
func recordSavepoint(t *testing.T, tl *timeline.Timeline, sp *timeline.Savepoint) timeline.InstantTime {
	t.Helper()
	x, err := tl.Begin(timeline.ActionSavepoint, sp)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Complete(sp); err != nil {
		t.Fatal(err)
	}
	return x.Instant().Time
}
