package oracle_test

// The compaction judge: segkit's compaction.Clean and Kafka 4.3.1's own
// log cleaner (LogCleanerManager + Cleaner, oracle/kafka clean) run on
// copies of the same partitions at the same clock and config, and what
// each left is compared: the cleanable range and dirty ratio, the
// cleaner's stats, the active producers, the segments, every batch byte
// for byte (or, where Kafka recompresses, its header and records), the
// .index/.timeindex/.txnindex files, the delete horizons and the
// cleaner-offset-checkpoint.
//
// Accepted differences (each checked to be only that):
//   - a batch Kafka rewrites compressed is recompressed by Java's codec in
//     Kafka and by Go's in segkit: the bytes (and so the length, the CRC,
//     the positions of the batches after it, the .index entries placed by
//     those positions, the segment's size and the stats' bytesWritten)
//     differ; the header fields and every record are the same, and
//     segkit's indexes are what Kafka's rule makes of segkit's bytes.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

const (
	minute = int64(60_000)
	day    = 24 * hour
)

// generatedCompactCases writes n partitions and one clean of each.
func generatedCompactCases(t *testing.T, root string, n int) []compactCase {
	t.Helper()
	var cases []compactCase
	for i := range n {
		rng := rand.New(rand.NewPCG(uint64(i), 0x5eed))
		name := fmt.Sprintf("c%03d", i)
		dir := filepath.Join(root, "src", name, "keyed-0")
		interval := []int{64, 256, 1024, 4096}[rng.IntN(4)]
		sp := genSpec{
			seed:       uint64(i) + 100,
			appends:    20 + rng.IntN(120),
			keys:       []int{3, 10, 40, 200}[rng.IntN(4)],
			tombstones: []float64{0, 0.1, 0.3}[rng.IntN(3)],
			unkeyed:    []float64{0, 0.03}[rng.IntN(2)],
			codecs:     [][]compress.Codec{allCodecs, {compress.None}, {compress.None, compress.Gzip}, {compress.Zstd, compress.LZ4, compress.Snappy}}[rng.IntN(4)],
			rollEvery:  3 + rng.IntN(15),
			txn:        rng.IntN(3) > 0,
			idem:       rng.IntN(2) == 0,
			openTxn:    rng.IntN(6) == 0,
			props:      map[string]string{config.IndexIntervalBytes: strconv.Itoa(interval)},
		}
		if rng.IntN(10) == 0 {
			sp.props[config.MessageTimestampType] = "LogAppendTime"
		}
		// The clean's clock: soon after the writes (producers active,
		// stamped horizons ahead), or days later.
		now := baseTs + []int64{10 * minute, 2 * hour, 3 * day}[rng.IntN(3)] + rng.Int64N(minute)
		if rng.IntN(3) == 0 {
			sp.horizons = []int64{now - hour, now + hour, now + 5*day}
		}
		writeCompactPartition(t, dir, sp)

		props := map[string]string{
			config.IndexIntervalBytes:     strconv.Itoa(interval),
			config.MinCleanableDirtyRatio: []string{"0.01", "0.3", "0.5", "0.9"}[rng.IntN(4)],
			config.DeleteRetentionMs:      []string{"0", "1000", "3600000", "86400000"}[rng.IntN(4)],
		}
		if v, ok := sp.props[config.MessageTimestampType]; ok {
			props[config.MessageTimestampType] = v
		}
		if rng.IntN(5) == 0 {
			props[config.CleanupPolicy] = "compact,delete"
			props["retention.ms"] = "-1"
		}
		switch rng.IntN(8) {
		case 0:
			props[config.MinCompactionLagMs] = strconv.FormatInt(rng.Int64N(20*minute), 10)
		case 1:
			props[config.MaxCompactionLagMs] = strconv.FormatInt(minute, 10)
			props[config.MinCleanableDirtyRatio] = "0.99"
		}
		if rng.IntN(3) == 0 {
			props[config.InternalSegmentBytes] = strconv.Itoa(2000 + rng.IntN(20000))
		}
		if rng.IntN(4) == 0 {
			// Small indexes (but room for the active segment's entries).
			props[config.SegmentIndexBytes] = strconv.Itoa(max(1024, 12*(activeIndexEntries(t, dir)+2)))
		}
		// The dedupe buffer: small enough to fill, 1 MiB, or Kafka's
		// default of 128 MiB (slow to clear on Kafka's side, so rarer).
		c := compactCase{name: name, src: dir, props: props, now: now, dedupe: 1 << 20}
		switch rng.IntN(7) {
		case 0, 1:
			c.dedupe = int64(compaction24(10 + rng.IntN(80)))
		case 2:
			c.dedupe = 0
		}
		if rng.IntN(4) == 0 {
			c.ioBuffer = 512 + rng.IntN(8192)
		}
		if rng.IntN(8) == 0 {
			c.hw = 1 + rng.Int64N(logEnd(t, dir))
		}
		// The log directory: a cleaner checkpoint, an unclean shutdown,
		// producer snapshots gone.
		switch rng.IntN(6) {
		case 0:
			bases := logBases(dir)
			writeCleanerCheckpoint(t, dir, bases[rng.IntN(len(bases))])
		case 1:
			writeCleanerCheckpoint(t, dir, logEnd(t, dir)+10) // past the end: reset
		}
		if rng.IntN(6) == 0 {
			must(os.Remove(filepath.Join(filepath.Dir(dir), checkpoint.CleanShutdownFile)))
		}
		if rng.IntN(6) == 0 {
			for _, f := range segmentFiles(t, dir, segment.SnapshotSuffix) {
				must(os.Remove(filepath.Join(dir, f)))
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// compaction24 is n offset-map slots' worth of dedupe buffer.
func compaction24(n int) int { return 24 * n }

func activeIndexEntries(t testing.TB, dir string) int {
	bases := logBases(dir)
	fi, err := os.Stat(filepath.Join(dir, segment.FileName(bases[len(bases)-1], segment.TimeIndexSuffix)))
	if err != nil {
		return 0
	}
	return int(fi.Size() / 12)
}

func logEnd(t testing.TB, dir string) int64 {
	o, err := readOutcome(dir)
	if err != nil {
		t.Fatal(err)
	}
	return o.LogEndOffset
}

func writeCleanerCheckpoint(t testing.TB, dir string, offset int64) {
	t.Helper()
	tp, err := checkpoint.ParseDirName(filepath.Base(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.WriteOffsets(vfs.OS(), filepath.ToSlash(filepath.Join(filepath.Dir(dir), checkpoint.CleanerOffsetFile)),
		map[checkpoint.TopicPartition]int64{tp: offset}); err != nil {
		t.Fatal(err)
	}
}

// runCompare cleans every case with both cleaners and fails the test on
// any difference; it returns the tally.
func runCompare(t *testing.T, root string, cases []compactCase) tally {
	t.Helper()
	t0 := time.Now()
	kres := kafkaCleanAll(t, root, cases)
	t.Logf("Kafka's cleaner on %d cases: %v", len(cases), time.Since(t0))
	t0 = time.Now()
	defer func() { t.Logf("segkit's cleaner and the comparison: %v", time.Since(t0)) }()
	var all tally
	failed := 0
	for _, c := range cases {
		rep, err := segkitClean(t, root, c)
		exact := c.ssrc == "" || sameLogs(t, c.src, c.ssrc)
		d, n := compareClean(t, root, c, kres[c.name], rep, err, exact)
		if k := kres[c.name]; k.Error != "" && err != nil {
			t.Logf("%s (%s): both fail: Kafka %s; segkit %v", c.name, shortName(c.src), k.Error, err)
		} else if err == nil {
			t.Logf("%s (%s): %s", c.name, shortName(c.src), oneLine(rep))
		}
		all.add(n)
		if len(d) > 0 {
			failed++
			t.Errorf("%s (%s, now %d, %v, dedupe %d, io %d, hw %d): %d differences:\n  %s", c.name, shortName(c.src), c.now, c.props, c.dedupe, c.ioBuffer, c.hw, len(d), strings.Join(d, "\n  "))
		}
	}
	t.Logf("compared %s; %d cases differ", all, failed)
	return all
}

// TestCompactionGenerated cleans 120 generated partitions with both
// cleaners.
func TestCompactionGenerated(t *testing.T) {
	t.Parallel() // two at a time: one alone keeps 1.3 of the 2 cores busy
	oracle.Require(t)
	root := compactRoot(t)
	t0 := time.Now()
	cases := generatedCompactCases(t, root, 120)
	t.Logf("writing %d partitions: %v", len(cases), time.Since(t0))
	runCompare(t, root, filterCases(cases))
}

// compactRoot is the test's work directory: a temporary one, or
// $SEGKIT_COMPACT_KEEP (kept, to look at the files after a failure).
func compactRoot(t *testing.T) string {
	if d := os.Getenv("SEGKIT_COMPACT_KEEP"); d != "" {
		d = filepath.Join(d, t.Name())
		must(os.RemoveAll(d))
		return d
	}
	return t.TempDir()
}

// filterCases keeps the cases named in $SEGKIT_COMPACT_CASES (comma
// separated), or all of them.
func filterCases(cases []compactCase) []compactCase {
	want := os.Getenv("SEGKIT_COMPACT_CASES")
	if want == "" {
		return cases
	}
	var out []compactCase
	for _, c := range cases {
		if strings.Contains(","+want+",", ","+c.name+",") {
			out = append(out, c)
		}
	}
	return out
}

// sameLogs reports whether two partition directories hold the same .log
// files, byte for byte.
func sameLogs(t testing.TB, a, b string) bool {
	la, lb := segmentFiles(t, a, segment.LogSuffix), segmentFiles(t, b, segment.LogSuffix)
	if !slices.Equal(la, lb) {
		return false
	}
	for _, f := range la {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(b, f))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}

// TestCompactionTwoPass removes tombstones and markers the way Kafka
// does, over three cleans at later clocks: the first stamps delete
// horizons, the second (past them) removes the tombstones and the
// markers of transactions already gone, the third (days later, the
// producers expired) the empty batches kept for them. Each cleaner goes
// on from its own output; the cleaner checkpoint is removed between
// passes so that each pass cleans the whole log.
func TestCompactionTwoPass(t *testing.T) {
	t.Parallel() // two at a time: one alone keeps 1.3 of the 2 cores busy
	oracle.Require(t)
	root := compactRoot(t)
	var cases []compactCase
	for i := range 24 {
		rng := rand.New(rand.NewPCG(uint64(i), 0x2ba55))
		name := fmt.Sprintf("t%02d", i)
		dir := filepath.Join(root, "src", name, "twopass-0")
		codecs := []compress.Codec{compress.None}
		if i%3 == 2 {
			codecs = allCodecs
		}
		writeCompactPartition(t, dir, genSpec{
			seed: uint64(i) + 7000, appends: 30 + rng.IntN(80), keys: []int{5, 20, 60}[rng.IntN(3)],
			tombstones: 0.3, unkeyed: 0.02, codecs: codecs, rollEvery: 4 + rng.IntN(10),
			txn: true, idem: i%2 == 0, props: map[string]string{config.IndexIntervalBytes: "200"},
		})
		props := map[string]string{
			config.IndexIntervalBytes:     "200",
			config.MinCleanableDirtyRatio: "0.01",
			config.DeleteRetentionMs:      []string{"0", "60000", "86400000"}[rng.IntN(3)],
		}
		if i%3 != 2 && rng.IntN(2) == 0 {
			props[config.InternalSegmentBytes] = strconv.Itoa(3000 + rng.IntN(10000))
		}
		cases = append(cases, compactCase{name: name, src: dir, props: props, now: baseTs + 10*minute + rng.Int64N(hour), dedupe: 1 << 20})
	}
	var all tally
	for pass := 1; pass <= 3; pass++ {
		proot := filepath.Join(root, fmt.Sprintf("pass%d", pass))
		n := runCompare(t, proot, cases)
		all.add(n)
		if t.Failed() {
			return
		}
		for i := range cases {
			c := &cases[i]
			kd, sd := kafkaOut(proot, *c), segkitOut(proot, *c)
			for _, d := range []string{kd, sd} {
				if err := os.Remove(filepath.Join(filepath.Dir(d), checkpoint.CleanerOffsetFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					t.Fatal(err)
				}
			}
			c.src, c.ssrc = kd, sd
			retention, _ := strconv.ParseInt(c.props[config.DeleteRetentionMs], 10, 64)
			if pass == 1 {
				c.now += retention + 1
			} else {
				c.now += 3 * day
			}
		}
	}
	t.Logf("three passes: %s", all)
}

// TestCompactionBroker cleans the partitions a Kafka 4.3.1 broker wrote
// (testdata/kafka-broker): compacted-0, which the broker's own cleaner
// compacted (its delete horizons stamped), as it is, from scratch (no
// cleaner checkpoint) before and after those horizons, and every other
// partition as a compacted topic.
func TestCompactionBroker(t *testing.T) {
	oracle.Require(t)
	root := compactRoot(t)
	parts := brokerPartitions(t)
	if len(parts) == 0 {
		t.Skip("no testdata/kafka-broker")
	}
	var cases []compactCase
	add := func(name, src string, now int64, props map[string]string) {
		cases = append(cases, compactCase{name: name, src: src, now: now, props: props, dedupe: 8 << 20})
	}
	for _, d := range parts {
		base := filepath.Base(d)
		if base != "compacted-0" {
			add("broker-"+base, d, brokerNow, map[string]string{config.MinCleanableDirtyRatio: "0.01"})
			add("broker-later-"+base, d, brokerNow+30*day, map[string]string{config.MinCleanableDirtyRatio: "0.01", config.DeleteRetentionMs: "0"})
			continue
		}
		add("compacted-as-is", d, brokerNow, nil)
		cases[len(cases)-1].dedupe = 0 // Kafka's default buffer
		// From scratch: the same files without the cleaner's checkpoint.
		fresh := filepath.Join(root, "src", "fresh", base)
		copyDir(t, d, fresh)
		for _, f := range []string{checkpoint.LogStartOffsetFile, checkpoint.RecoveryPointFile, checkpoint.CleanShutdownFile} {
			if b, err := os.ReadFile(filepath.Join(filepath.Dir(d), f)); err == nil {
				must(os.WriteFile(filepath.Join(filepath.Dir(fresh), f), b, 0o644))
			}
		}
		for i, now := range []int64{brokerNow - 400*day, brokerNow, brokerNow + 30*day} {
			add(fmt.Sprintf("compacted-fresh-%d", i), fresh, now, map[string]string{config.MinCleanableDirtyRatio: "0.01"})
		}
	}
	runCompare(t, root, cases)
}

// brokerNow is a clock after testdata/kafka-broker was written
// (2026-12-01) and its cleaner's delete horizons.
const brokerNow = int64(1_798_761_600_000) // 2027-01-01

// TestCompactionRealData cleans every partition of ../shared/kafka-real
// (and testdata/kafka-broker), the real __consumer_offsets partitions
// among them, as compacted topics, now and a year later: as they are, and
// rolled (an empty segment added at the log end, as a roll leaves it, so
// that a partition of one segment has something to clean) without a
// cleaner checkpoint.
func TestCompactionRealData(t *testing.T) {
	t.Parallel() // two at a time: one alone keeps 1.3 of the 2 cores busy
	oracle.Require(t)
	root := compactRoot(t)
	var cases []compactCase
	for i, d := range realPartitions(t) {
		rolled := filepath.Join(root, "src", fmt.Sprintf("rolled%03d", i), filepath.Base(d))
		copyDir(t, d, rolled)
		for _, f := range []string{checkpoint.LogStartOffsetFile, checkpoint.RecoveryPointFile, checkpoint.CleanShutdownFile} {
			if b, err := os.ReadFile(filepath.Join(filepath.Dir(d), f)); err == nil {
				must(os.WriteFile(filepath.Join(filepath.Dir(rolled), f), b, 0o644))
			}
		}
		if o, err := readOutcome(rolled); err == nil && len(o.Segments) > 0 && o.Segments[len(o.Segments)-1].Size > 0 {
			f, err := os.Create(segPath(rolled, o.LogEndOffset, segment.LogSuffix))
			must(err)
			must(f.Close())
		}
		for j, now := range []int64{brokerNow, brokerNow + 365*day} {
			props := map[string]string{config.MinCleanableDirtyRatio: "0.01"}
			cases = append(cases,
				compactCase{name: fmt.Sprintf("real%03d-%d", i, j), src: d, now: now, props: props, dedupe: 8 << 20},
				compactCase{name: fmt.Sprintf("rolled%03d-%d", i, j), src: rolled, now: now, props: props, dedupe: 8 << 20})
		}
	}
	runCompare(t, root, cases)
}

// oneLine summarises a report for the test log.
func oneLine(r *compaction.Report) string {
	if !r.Cleanable {
		return fmt.Sprintf("[%d, %d) not cleaned: %s", r.FirstDirtyOffset, r.FirstUncleanableOffset, r.Why)
	}
	return fmt.Sprintf("[%d, %d) cleaned to %d: %d of %d records kept, %d groups, %d horizons", r.FirstDirtyOffset, r.FirstUncleanableOffset,
		r.EndOffset, r.Stats.MessagesWritten, r.Stats.MessagesRead, len(r.Groups), len(r.Horizons))
}
