package oracle_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// retentionLayout is a partition written for the retention cases: the
// largest timestamp of each segment (or its .log mtime, for a segment
// without timestamps), out of order between segments.
type retentionLayout struct {
	dir     string
	largest []int64 // per segment: what the time rule compares
	sizes   []int64
	bases   []int64
	leo     int64
	// emptyActive: the last segment is empty; noTs: segments without
	// timestamps (judged by mtime).
	emptyActive bool
	noTs        int
}

const hour = int64(3600_000)

// writeRetentionLayout writes layout i: 2 to 6 segments of 1 to 3 batches,
// each segment's records around its own time (±4 h, so that the largest
// timestamps go back and forth between segments); some layouts end with an
// empty active segment, some have a segment, or every segment, without
// timestamps (judged by the .log mtime, set here).
func writeRetentionLayout(t *testing.T, root string, i int) retentionLayout {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(i), 42))
	nseg := 2 + rng.IntN(5)
	noTs := map[int]bool{}
	switch {
	case i%7 == 3:
		for s := range nseg {
			noTs[s] = true
		}
	case i%4 == 1:
		noTs[rng.IntN(nseg)] = true
	}
	var plan [][]batchPlan
	largest := make([]int64, nseg)
	mtimes := map[int]int64{}
	for s := range nseg {
		center := baseTs + int64(s)*3*hour + rng.Int64N(8*hour) - 4*hour
		largest[s] = -1
		var seg []batchPlan
		for range 1 + rng.IntN(3) {
			bp := batchPlan{codec: allCodecs[rng.IntN(len(allCodecs))], valueSize: 10 + rng.IntN(400)}
			for range 1 + rng.IntN(4) {
				ts := center + rng.Int64N(20*60_000) - 10*60_000
				if noTs[s] {
					ts = -1
				}
				largest[s] = max(largest[s], ts)
				bp.timestamps = append(bp.timestamps, ts)
			}
			seg = append(seg, bp)
		}
		if noTs[s] {
			mtimes[s] = center
			largest[s] = center
		}
		plan = append(plan, seg)
	}
	if i%3 == 0 {
		plan = append(plan, nil) // an empty active segment
		largest = append(largest, -1)
	}
	name := fmt.Sprintf("ret-%02d-0", i)
	dir := filepath.Join(root, name, name)
	writeLog(t, dir, nil, plan)
	lay := retentionLayout{dir: dir, largest: largest, emptyActive: i%3 == 0, noTs: len(noTs)}
	for _, f := range segmentFiles(t, dir, segment.LogSuffix) {
		base, _, _ := segment.ParseFileName(f)
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		lay.bases = append(lay.bases, base)
		lay.sizes = append(lay.sizes, fi.Size())
	}
	if len(lay.bases) != len(plan) {
		t.Fatalf("%s: %d segments written, %d planned", dir, len(lay.bases), len(plan))
	}
	for s, m := range mtimes {
		p := filepath.Join(dir, segment.FileName(lay.bases[s], segment.LogSuffix))
		if err := os.Chtimes(p, time.UnixMilli(m), time.UnixMilli(m)); err != nil {
			t.Fatal(err)
		}
	}
	l, err := kafkalog.Open(vfs.OS(), dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	lay.leo = l.LogEndOffset()
	l.Close()
	return lay
}

// retentionCase is one line of `oracle/kafka retention --batch`.
type retentionCase struct {
	ID             string            `json:"id"`
	Src            string            `json:"src"`
	Now            int64             `json:"now"`
	Config         map[string]string `json:"config"`
	HighWatermark  int64             `json:"highWatermark"`
	LogStartOffset int64             `json:"logStartOffset"`
	mode           string
	lay            *retentionLayout
}

// kafkaRetention is Kafka's answer to a retentionCase.
type kafkaRetention struct {
	ID                   string `json:"id"`
	LogStartOffsetBefore int64  `json:"logStartOffsetBefore"`
	LogStartOffset       int64  `json:"logStartOffset"`
	Deleted              []struct {
		BaseOffset int64  `json:"baseOffset"`
		Reason     string `json:"reason"`
		Rule       string `json:"rule"`
	} `json:"deleted"`
	Error string `json:"error"`
}

// retentionOutcome is what is compared: the segments deleted with the rule
// that deleted each, and the new log start offset.
type retentionOutcome struct {
	LogStartBefore int64
	Deleted        []string // "base:rule"
	LogStartOffset int64
}

// ruleName maps segkit's reasons to the oracle's rule names.
var ruleName = map[retention.Reason]string{
	retention.ReasonTime:           "retention.ms",
	retention.ReasonSize:           "retention.bytes",
	retention.ReasonLogStartOffset: "log-start-offset",
}

var retentionModes = []string{"time", "size", "both", "neither", "defaults"}

// makeRetentionCase draws case j of a layout: the rules (mode), the clock
// (near a segment's largest timestamp plus retention.ms, boundaries
// included), retention.bytes (near a boundary between segments or
// anywhere), a high watermark below the log end or not, a log start offset
// inside a segment or not.
func makeRetentionCase(rng *rand.Rand, lay retentionLayout, id, mode string) retentionCase {
	c := retentionCase{ID: id, Src: lay.dir, Config: map[string]string{}, mode: mode, lay: &lay}
	retMs := hour * (1 + rng.Int64N(6))
	var candidates []int64
	for _, ts := range lay.largest {
		if ts >= 0 {
			candidates = append(candidates, ts)
		}
	}
	ref := baseTs
	if len(candidates) > 0 {
		ref = candidates[rng.IntN(len(candidates))]
	}
	delta := []int64{-1, 0, 1, rng.Int64N(4 * hour), -rng.Int64N(4 * hour)}[rng.IntN(5)]
	var total int64
	for _, s := range lay.sizes {
		total += s
	}
	retBytes := rng.Int64N(total + 1)
	if rng.IntN(2) == 0 { // exactly the size of a suffix of segments, ±1
		k := rng.IntN(len(lay.sizes))
		var suffix int64
		for _, s := range lay.sizes[k:] {
			suffix += s
		}
		retBytes = max(0, suffix+int64(rng.IntN(3))-1)
	}
	switch mode {
	case "time":
		c.Config["retention.ms"] = strconv.FormatInt(retMs, 10)
		c.Config["retention.bytes"] = "-1"
	case "size":
		c.Config["retention.ms"] = "-1"
		c.Config["retention.bytes"] = strconv.FormatInt(retBytes, 10)
	case "both":
		c.Config["retention.ms"] = strconv.FormatInt(retMs, 10)
		c.Config["retention.bytes"] = strconv.FormatInt(retBytes, 10)
	case "neither":
		c.Config["retention.ms"] = "-1"
		c.Config["retention.bytes"] = "-1"
	case "defaults": // retention.ms 7 days, retention.bytes -1
		retMs = 7 * 24 * hour
	}
	c.Now = ref + retMs + delta
	c.LogStartOffset = lay.bases[0]
	if rng.IntN(3) == 0 {
		c.LogStartOffset = lay.bases[0] + rng.Int64N(lay.leo-lay.bases[0]+1)
	}
	c.HighWatermark = lay.leo
	if rng.IntN(3) == 0 {
		c.HighWatermark = c.LogStartOffset + rng.Int64N(lay.leo-c.LogStartOffset+1)
	}
	return c
}

// segkitRetention plans the case with retention.Plan on the partition as
// segkit's engine opens it.
func segkitRetention(c retentionCase) (retentionOutcome, error) {
	cfg, err := kafkalog.ParseConfig(c.Config)
	if err != nil {
		return retentionOutcome{}, err
	}
	l, err := kafkalog.Open(vfs.OS(), c.Src, cfg, kafkalog.Options{ReadOnly: true})
	if err != nil {
		return retentionOutcome{}, err
	}
	defer l.Close()
	st, err := retention.StateOf(l)
	if err != nil {
		return retentionOutcome{}, err
	}
	// As UnifiedLog: the log start offset is at least the first base, the
	// high watermark between the log start and end offsets.
	st.LogStartOffset = max(st.LogStartOffset, c.LogStartOffset)
	st.HighWatermark = min(max(c.HighWatermark, st.LogStartOffset), st.LogEndOffset)
	pl, err := retention.PolicyFrom(cfg, config.DefaultBroker()).Plan(st, c.Now)
	if err != nil {
		return retentionOutcome{}, err
	}
	o := retentionOutcome{LogStartBefore: st.LogStartOffset, LogStartOffset: pl.NewLogStartOffset, Deleted: []string{}}
	for _, d := range pl.Deletions {
		o.Deleted = append(o.Deleted, fmt.Sprintf("%d:%s", d.BaseOffset, ruleName[d.Reason]))
	}
	return o, nil
}

// TestRetentionMatchesKafka runs seeded retention checks on segkit-written
// partitions with retention.Plan and with Kafka's
// UnifiedLog.deleteOldSegments (one `oracle/kafka retention --batch` call),
// and requires the same deleted segments, by the same rules, and the same
// new log start offset.
func TestRetentionMatchesKafka(t *testing.T) {
	oracle.Require(t)
	root := t.TempDir()
	const layouts, perLayout = 14, 4
	var cases []retentionCase
	for i := range layouts {
		lay := writeRetentionLayout(t, root, i)
		for j := range perLayout {
			rng := rand.New(rand.NewPCG(uint64(i), uint64(j)))
			mode := retentionModes[(i*perLayout+j)%len(retentionModes)]
			cases = append(cases, makeRetentionCase(rng, lay, fmt.Sprintf("ret-%02d-%d-%s", i, j, mode), mode))
		}
	}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, c := range cases {
		if err := enc.Encode(c); err != nil {
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

	byMode := map[string][2]int{} // cases, deleting something
	agree := 0
	features := map[string]int{}
	rules := map[string]int{}
	for _, c := range cases {
		k, ok := kafka[c.ID]
		switch {
		case !ok:
			t.Fatalf("%s: no answer from Kafka", c.ID)
		case k.Error != "":
			t.Errorf("%s: Kafka failed: %s", c.ID, k.Error)
			continue
		}
		want := retentionOutcome{LogStartBefore: k.LogStartOffsetBefore, LogStartOffset: k.LogStartOffset, Deleted: []string{}}
		for _, d := range k.Deleted {
			want.Deleted = append(want.Deleted, fmt.Sprintf("%d:%s", d.BaseOffset, d.Rule))
		}
		got, err := segkitRetention(c)
		if err != nil {
			t.Errorf("%s: segkit: %v", c.ID, err)
			continue
		}
		if !slices.Contains(c.lay.bases, c.LogStartOffset) {
			features["log start offset inside a segment"]++
		}
		if c.HighWatermark < c.lay.leo {
			features["high watermark below the log end"]++
		}
		if c.lay.emptyActive {
			features["empty active segment"]++
		}
		if c.lay.noTs > 0 {
			features["segments judged by mtime"]++
		}
		for _, d := range k.Deleted {
			rules[d.Rule]++
		}
		m := byMode[c.mode]
		m[0]++
		if len(want.Deleted) > 0 {
			m[1]++
		}
		byMode[c.mode] = m
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (%s, now=%d, config=%v, highWatermark=%d, logStartOffset=%d): retention differs (-Kafka +segkit):\n%s",
				c.ID, c.Src, c.Now, c.Config, c.HighWatermark, c.LogStartOffset, d)
			continue
		}
		agree++
	}
	var b strings.Builder
	for _, m := range retentionModes {
		fmt.Fprintf(&b, "  %-8s %2d cases, %2d deleting segments\n", m, byMode[m][0], byMode[m][1])
	}
	for _, f := range []string{"log start offset inside a segment", "high watermark below the log end", "empty active segment", "segments judged by mtime"} {
		fmt.Fprintf(&b, "  %s: %d cases\n", f, features[f])
		if features[f] == 0 {
			t.Errorf("no case has %s", f)
		}
	}
	for _, r := range []string{"log-start-offset", "retention.bytes", "retention.ms"} {
		fmt.Fprintf(&b, "  segments Kafka deleted by %s: %d\n", r, rules[r])
		if rules[r] == 0 {
			t.Errorf("no segment deleted by %s", r)
		}
	}
	t.Logf("retention, segkit vs Kafka 4.3.1: %d of %d cases agree\n%s", agree, len(cases), b.String())
	if len(cases) < 50 {
		t.Errorf("only %d cases, want at least 50", len(cases))
	}
}
