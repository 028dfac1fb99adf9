package oracle_test

// The broker accepts segkit's compaction: one generated partition is
// compacted twice over, once by a Kafka 4.3.1 broker's own log cleaner and
// once by compaction.Clean, and the broker then serves both; a consumer
// must not be able to tell them apart.
//
// The clocks. A broker cleans at its wall clock, and one pass of its
// cleaner stamps now + delete.retention.ms as the delete horizon of every
// batch it keeps with tombstones (or with the marker of a transaction
// whose data is gone); that is the only trace of the clock it ran at, and
// the test reads it back from the broker's files to run segkit's pass at
// the same clock. The other clock-dependent decisions are made moot: the
// records are written minutes before the test runs, so that no producer
// is idle for producer.id.expiration.ms (1 day) at either cleaner's clock
// (an expired producer loses the empty batch kept for its last sequence),
// and the input has no delete horizons of its own. The comparison is then
// exact: the same segments, batches (byte for byte, or, for those Kafka
// recompresses with Java's codecs, the same header and records), indexes
// and cleaner checkpoint after each pass, and the same records served.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

const (
	// kafkaCleanedTopic holds the input as the broker's cleaner compacts
	// it; segkitCleanedTopic holds segkit's compaction of the same input,
	// which the broker only serves.
	kafkaCleanedTopic  = "compact-by-kafka"
	segkitCleanedTopic = "compact-by-segkit"
	// adoptRetentionMs is the topics' delete.retention.ms: short, so that
	// the second pass, seconds after the first, is past its horizons.
	adoptRetentionMs = 1000
	// adoptDedupe is log.cleaner.dedupe.buffer.size, the broker's and
	// segkit's (one cleaner thread): room for every key.
	adoptDedupe = 8 << 20
)

// TestCompactionAdopt generates a keyed partition (repeated keys,
// tombstones, unkeyed records, committed and aborted transactions,
// idempotent producers, every codec, 17 or so segments), has the oracle's
// broker adopt it as a compacted topic and clean it with its own cleaner,
// twice (the second pass, past the first's delete horizons, removes the
// tombstones), and cleans a copy of the same input with compaction.Clean
// at the clocks the broker's passes ran at. After each pass the two
// directories must agree file by file. Then the broker adopts segkit's
// result as a second topic (recovery point 0: Kafka rechecks every
// segment) and serves both: it must load segkit's segments as they are
// (nothing truncated, the .log files unchanged, no stray directory), give
// the same log start offset, high watermark and last stable offset, and
// serve, read_uncommitted and read_committed, the same records at the same
// offsets, with the same keys, values, headers, timestamps, attributes
// and producers.
func TestCompactionAdopt(t *testing.T) {
	t.Parallel() // two at a time: one alone keeps 1.3 of the 2 cores busy
	oracle.Require(t)
	started := time.Now()
	root := compactRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel) // registered first: it runs after every broker's Stop

	// The input, written minutes ago (see the clocks, above).
	wall := time.Now().UnixMilli()
	src := filepath.Join(root, "src", "input", "keyed-0")
	writeCompactPartition(t, src, genSpec{
		seed: 0xad09, appends: 140, keys: 25, tombstones: 0.25, unkeyed: 0.02,
		codecs: allCodecs, rollEvery: 8, txn: true, idem: true,
		props: map[string]string{config.IndexIntervalBytes: "200"},
		ts:    wall - 20*minute, now: wall - 10*minute,
	})
	inputHorizons := deleteHorizons(t, src)
	if len(inputHorizons) != 0 {
		t.Fatalf("the input carries delete horizons %v; the clocks of the passes could not be read back", inputHorizons)
	}
	// The topic config of both cleaners; internal.segment.bytes makes the
	// cleaners group the segments into several cleaned ones.
	props := map[string]string{
		config.CleanupPolicy:        config.CleanupPolicyCompact,
		config.DeleteRetentionMs:    strconv.Itoa(adoptRetentionMs),
		config.IndexIntervalBytes:   "200",
		config.InternalSegmentBytes: "10000",
	}
	logDir := filepath.Join(root, "kafka")
	kafkaDir := filepath.Join(logDir, kafkaCleanedTopic+"-0")

	// Pass 1 by the broker: adopted (no cleaner checkpoint), the whole
	// log is dirty and the cleaner cleans it up to the active segment.
	b1 := startAdoptSession(ctx, t, logDir, kafkaCleanedTopic, props, src)
	checkAdopted(t, &b1.rep, kafkaCleanedTopic, src, false)
	kend1 := waitCleanerCheckpoint(t, kafkaDir)
	b1.stop(t)
	tb1, ok := brokerClock(t, kafkaDir, inputHorizons)
	if !ok {
		t.Fatalf("the broker's first pass stamped no delete horizon: the input has no tombstone it keeps")
	}
	pass1Horizons := deleteHorizons(t, kafkaDir)

	// Pass 1 by segkit, on a copy of the input, at the broker's clock.
	c1 := compactCase{name: "pass1", src: src, props: props, now: tb1, dedupe: adoptDedupe}
	rep1 := cleanOrFatal(t, root, c1)
	comparePass(t, root, c1, kafkaDir, kend1, rep1)

	// Pass 2: each cleaner goes on from its own output, its cleaner
	// checkpoint removed so that it cleans the whole log again, past the
	// horizons of pass 1 (the broker restarts seconds later).
	removeCleanerCheckpoint(t, logDir, checkpoint.TopicPartition{Topic: kafkaCleanedTopic, Partition: 0})
	removeCleanerCheckpoint(t, filepath.Dir(segkitOut(root, c1)), checkpoint.TopicPartition{Topic: "keyed", Partition: 0})
	for time.Now().UnixMilli() <= tb1+adoptRetentionMs {
		time.Sleep(10 * time.Millisecond)
	}
	restart := time.Now().UnixMilli()
	b2 := startBrokerSession(ctx, t, logDir)
	kend2 := waitCleanerCheckpoint(t, kafkaDir)
	b2.stop(t)
	tb2, readBack := brokerClock(t, kafkaDir, pass1Horizons)
	if !readBack {
		// It stamped nothing new: its pass did not depend on its clock
		// (no producer expires, every horizon of pass 1 is past), and any
		// clock from the restart on is one it could have run at.
		tb2 = restart
	}
	c2 := compactCase{name: "pass2", src: src, ssrc: segkitOut(root, c1), props: props, now: tb2, dedupe: adoptDedupe}
	rep2 := cleanOrFatal(t, root, c2)
	comparePass(t, root, c2, kafkaDir, kend2, rep2)
	// What the two passes exercised, or the comparison proves little.
	if rep1.Removed.Superseded == 0 || rep1.Removed.Aborted == 0 || rep1.Removed.Unkeyed == 0 || rep2.Removed.Tombstones == 0 || len(rep1.Groups) < 2 {
		t.Errorf("the passes did not exercise the cleaner: pass 1 removed %d superseded, %d aborted, %d unkeyed records in %d groups; pass 2 %d tombstones",
			rep1.Removed.Superseded, rep1.Removed.Aborted, rep1.Removed.Unkeyed, len(rep1.Groups), rep2.Removed.Tombstones)
	}
	if t.Failed() {
		return
	}
	// Kafka's result as it is now, to check that serving changes nothing.
	kafkaSnap := filepath.Join(root, "kafka-pass2", kafkaCleanedTopic+"-0")
	copyDir(t, kafkaDir, kafkaSnap)

	// The broker adopts segkit's result beside its own, as a topic it
	// does not clean: it cleans a log whose dirty ratio exceeds
	// min.cleanable.dirty.ratio, and no ratio exceeds 1.
	segkitDir := segkitOut(root, c2)
	sprops := map[string]string{config.MinCleanableDirtyRatio: "1"}
	for k, v := range props {
		sprops[k] = v
	}
	b3 := startAdoptSession(ctx, t, logDir, segkitCleanedTopic, sprops, segkitDir)
	checkAdopted(t, &b3.rep, segkitCleanedTopic, segkitDir, true)
	rp := b3.rep.Partitions[0]
	if rp.LogStartOffset != rep2.LogStartOffset || rp.LogEndOffset != rep2.LogEndOffset {
		t.Errorf("the broker serves segkit's partition at [%d, %d), segkit's clean left [%d, %d)", rp.LogStartOffset, rp.LogEndOffset, rep2.LogStartOffset, rep2.LogEndOffset)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b3.rep.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if !sameListOffsets(ctx, t, kadm.NewClient(cl), rep2) {
		t.FailNow() // a last stable offset short of the end would stall read_committed
	}
	served := map[bool]int{}
	for _, committed := range []bool{false, true} {
		last := map[string]map[int32]int64{kafkaCleanedTopic: {0: rep2.LogEndOffset - 1}, segkitCleanedTopic: {0: rep2.LogEndOffset - 1}}
		got := consumeUntil(ctx, t, b3.rep.Bootstrap, last, committed)
		k, s := got[kafkaCleanedTopic][0], got[segkitCleanedTopic][0]
		compareServed(t, committed, k, s)
		served[committed] = len(s)
	}
	if _, ok := cleanerCheckpoint(filepath.Join(logDir, segkitCleanedTopic+"-0")); ok {
		t.Errorf("the broker cleaned segkit's partition: its cleaner-offset-checkpoint has an entry for it")
	}
	checkBrokerLog(t, b3.s.Stderr())
	b3.stop(t)
	// Serving changed neither partition: no truncation, no clean.
	if !sameLogs(t, segkitDir, filepath.Join(logDir, segkitCleanedTopic+"-0")) {
		t.Errorf("the broker's copy of segkit's partition holds other .log files than segkit wrote")
	}
	if !sameLogs(t, kafkaSnap, kafkaDir) {
		t.Errorf("the broker's own partition changed while it served it")
	}
	checkNoStrayDirs(t, logDir)

	t.Logf("input: %d segments; pass 1 at %d: %s; pass 2 at %d (read back from the broker's horizons: %v): %s; segkit's partition served %d records read_uncommitted, %d read_committed; test %v",
		len(logBases(src)), tb1, oneLine(rep1), tb2, readBack, oneLine(rep2), served[false], served[true], time.Since(started).Round(time.Second))
}

// brokerSession is one broker run by oracle/kafka (adopt or broker).
type brokerSession struct {
	s       *oracle.Server
	rep     adoptReport
	stopped bool
}

// brokerCleanerFlags make the broker's cleaner prompt (it looks for dirty
// logs every 100 ms) with the offset map segkit's cleans get.
var brokerCleanerFlags = []string{"--config", "log.cleaner.backoff.ms=100", "--config", "log.cleaner.dedupe.buffer.size=" + strconv.Itoa(adoptDedupe)}

func startSession(ctx context.Context, t *testing.T, args ...string) *brokerSession {
	t.Helper()
	s, err := oracle.Start(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	b := &brokerSession{s: s}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("broker log of %s (last lines):\n%s", args[0], lastLines(s.Stderr(), 60))
		}
		b.stop(t)
	})
	if err := json.Unmarshal(s.Report, &b.rep); err != nil {
		t.Fatalf("%s report %q: %v", args[0], s.Report, err)
	}
	return b
}

// startAdoptSession has a broker adopt src as partition 0 of a new topic
// with the topic config props, in logDir (formatted on first use, its
// other topics kept), and serve it.
func startAdoptSession(ctx context.Context, t *testing.T, logDir, topic string, props map[string]string, src string) *brokerSession {
	t.Helper()
	port, err := oracle.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"adopt", "--log-dir", logDir, "--topic", topic, "--port", strconv.Itoa(port)}, brokerCleanerFlags...)
	for _, k := range sortedKeys(props) {
		args = append(args, "--topic-config", k+"="+props[k])
	}
	return startSession(ctx, t, append(args, src)...)
}

// startBrokerSession starts a broker on logDir as it is.
func startBrokerSession(ctx context.Context, t *testing.T, logDir string) *brokerSession {
	t.Helper()
	port, err := oracle.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return startSession(ctx, t, append([]string{"broker", "--log-dir", logDir, "--port", strconv.Itoa(port)}, brokerCleanerFlags...)...)
}

// stop shuts the broker down cleanly, once.
func (b *brokerSession) stop(t *testing.T) {
	if b.stopped {
		return
	}
	b.stopped = true
	if err := b.s.Stop(); err != nil {
		t.Errorf("stopping the broker: %v", err)
	}
}

// checkAdopted checks an adopt report of one partition, adopted from src:
// Kafka rechecked every segment, marked no directory stray and serves
// src's offsets, and, when exact (the broker does not clean the partition
// while the report is made), truncated nothing.
func checkAdopted(t *testing.T, rep *adoptReport, topic, src string, exact bool) {
	t.Helper()
	if rep.Topic != topic || rep.TopicID == "" || len(rep.Partitions) != 1 || rep.Partitions[0].Src != src || !rep.Partitions[0].Exists {
		t.Fatalf("adopt report: topic %q (id %q) with partitions %+v, want %q with one, from %s", rep.Topic, rep.TopicID, rep.Partitions, topic, src)
	}
	if len(rep.StrayDirs) != 0 {
		t.Errorf("%s: Kafka marked directories stray: %v", topic, rep.StrayDirs)
	}
	var recovered []int64
	for _, e := range rep.RecoveredSegments {
		m := recoveredRE.FindStringSubmatch(e)
		if m == nil || m[1] != topic || m[2] != "0" {
			t.Errorf("recoveredSegments entry %q: not a segment of %s-0", e, topic)
			continue
		}
		base, _ := strconv.ParseInt(m[3], 10, 64)
		recovered = append(recovered, base)
	}
	slices.Sort(recovered)
	if want := logBases(src); !slices.Equal(recovered, want) {
		t.Errorf("%s: Kafka recovered segments %v, want every segment %v", topic, recovered, want)
	}
	o, err := readOutcome(src)
	if err != nil {
		t.Fatal(err)
	}
	if p := rep.Partitions[0]; p.LogStartOffset != o.LogStartOffset || p.LogEndOffset != o.LogEndOffset {
		t.Errorf("%s: Kafka serves [%d, %d), want [%d, %d)", topic, p.LogStartOffset, p.LogEndOffset, o.LogStartOffset, o.LogEndOffset)
	}
	// Unless the broker does not clean the partition: its cleaner may
	// already have replaced segments when the report compares sizes.
	if p := rep.Partitions[0]; exact && (rep.BytesTruncated != 0 || p.BytesTruncated != 0) {
		t.Errorf("%s: Kafka's recovery truncated %d bytes", topic, p.BytesTruncated)
	}
}

// waitCleanerCheckpoint waits until the broker's cleaner has finished a
// clean of the partition dir (it writes the partition's entry of its
// log directory's cleaner-offset-checkpoint then) and returns the entry.
func waitCleanerCheckpoint(t *testing.T, dir string) int64 {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if v, ok := cleanerCheckpoint(dir); ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the broker's cleaner wrote no checkpoint in a minute", filepath.Base(dir))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// removeCleanerCheckpoint removes tp's entry from logDir's
// cleaner-offset-checkpoint: its next clean starts at the log start.
func removeCleanerCheckpoint(t *testing.T, logDir string, tp checkpoint.TopicPartition) {
	t.Helper()
	p := filepath.ToSlash(filepath.Join(logDir, checkpoint.CleanerOffsetFile))
	m, err := checkpoint.ReadOffsets(vfs.OS(), p)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m[tp]; !ok {
		t.Fatalf("%s has no entry for %s", p, tp)
	}
	delete(m, tp)
	if err := checkpoint.WriteOffsets(vfs.OS(), p, m); err != nil {
		t.Fatal(err)
	}
}

// deleteHorizons returns the distinct delete horizons of the batches of
// dir's .log files, sorted.
func deleteHorizons(t *testing.T, dir string) []int64 {
	t.Helper()
	var out []int64
	for _, f := range segmentFiles(t, dir, segment.LogSuffix) {
		bs, err := readBatches(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			if b.e.Magic == record.MagicV2 && b.e.Batch.Attributes.HasDeleteHorizon() && !slices.Contains(out, b.e.Batch.DeleteHorizonMs()) {
				out = append(out, b.e.Batch.DeleteHorizonMs())
			}
		}
	}
	slices.Sort(out)
	return out
}

// brokerClock reads back the clock a pass of the broker's cleaner ran at
// from the horizon it stamped (its now + delete.retention.ms): the one
// horizon of dir not among before. ok is false if it stamped none.
func brokerClock(t *testing.T, dir string, before []int64) (now int64, ok bool) {
	t.Helper()
	var fresh []int64
	for _, h := range deleteHorizons(t, dir) {
		if !slices.Contains(before, h) {
			fresh = append(fresh, h)
		}
	}
	switch len(fresh) {
	case 0:
		return 0, false
	case 1:
		return fresh[0] - adoptRetentionMs, true
	}
	t.Fatalf("%s: the broker's pass stamped %d delete horizons %v; one pass stamps one", filepath.Base(dir), len(fresh), fresh)
	return 0, false
}

func cleanOrFatal(t *testing.T, root string, c compactCase) *compaction.Report {
	t.Helper()
	rep, err := segkitClean(t, root, c)
	if err != nil {
		t.Fatalf("%s: compaction.Clean: %v", c.name, err)
	}
	if !rep.Cleanable {
		t.Fatalf("%s: compaction.Clean did not clean: %s", c.name, rep.Why)
	}
	return rep
}

// comparePass compares a pass of segkit's cleaner (rep, in segkitOut(root,
// c)) with the broker's pass over the same input at the same clock (in
// kafkaDir, its cleaner checkpoint kend): the checkpoint, and the
// segments file by file as TestCompactionGenerated compares them.
func comparePass(t *testing.T, root string, c compactCase, kafkaDir string, kend int64, rep *compaction.Report) {
	t.Helper()
	if kend != rep.EndOffset {
		t.Errorf("%s: the broker's cleaner checkpoint is %d, segkit's clean ended at %d", c.name, kend, rep.EndOffset)
	}
	if sckpt, ok := cleanerCheckpoint(segkitOut(root, c)); !ok || sckpt != kend {
		t.Errorf("%s: segkit's cleaner checkpoint %d (present %v), the broker's %d", c.name, sckpt, ok, kend)
	}
	d, n, _ := compareSegmentDirs(t, kafkaDir, segkitOut(root, c), c.config(t))
	if len(d) > 0 {
		t.Errorf("%s (now %d): the broker's cleaning and segkit's differ in %d ways:\n  %s", c.name, c.now, len(d), strings.Join(d, "\n  "))
	}
	t.Logf("%s: %d segments, batches %d byte for byte and %d recompressed with the same records, indexes %d byte for byte and %d by Kafka's rule, %d .txnindex, %d horizons",
		c.name, n.segments, n.batchesSame, n.batchesRecords, n.indexesSame, n.indexesRule, n.txnIndexes, n.horizons)
}

// sameListOffsets checks that ListOffsets answers alike for both topics:
// earliest at segkit's log start offset, latest read_uncommitted (the
// high watermark) and read_committed (the last stable offset: no
// transaction is open) at its log end offset.
func sameListOffsets(ctx context.Context, t *testing.T, adm *kadm.Client, rep *compaction.Report) bool {
	t.Helper()
	ok := true
	for _, l := range []struct {
		name string
		list func(context.Context, ...string) (kadm.ListedOffsets, error)
		want int64
	}{
		{"earliest", adm.ListStartOffsets, rep.LogStartOffset},
		{"latest (read_uncommitted)", adm.ListEndOffsets, rep.LogEndOffset},
		{"latest (read_committed)", adm.ListCommittedOffsets, rep.LogEndOffset},
	} {
		offs, err := l.list(ctx, kafkaCleanedTopic, segkitCleanedTopic)
		if err != nil {
			t.Fatalf("ListOffsets %s: %v", l.name, err)
		}
		for _, topic := range []string{kafkaCleanedTopic, segkitCleanedTopic} {
			o, found := offs.Lookup(topic, 0)
			if !found || o.Err != nil || o.Offset != l.want {
				t.Errorf("%s: ListOffsets %s = %d (found %v, %v), want %d", topic, l.name, o.Offset, found, o.Err, l.want)
				ok = false
			}
		}
	}
	return ok
}

// compareServed compares what the broker served from its own cleaning
// (k) and from segkit's (s): the same offsets, in the same order, and at
// each the same record.
func compareServed(t *testing.T, committed bool, k, s []*kgo.Record) {
	t.Helper()
	name := "read_uncommitted"
	if committed {
		name = "read_committed"
	}
	offsets := func(rs []*kgo.Record) []int64 {
		var o []int64
		for _, r := range rs {
			o = append(o, r.Offset)
		}
		return o
	}
	only := func(a, b []int64) []int64 {
		var o []int64
		for _, x := range a {
			if !slices.Contains(b, x) {
				o = append(o, x)
			}
		}
		return o
	}
	var errs []string
	ko, so := offsets(k), offsets(s)
	if !slices.Equal(ko, so) {
		errs = append(errs, fmt.Sprintf("offsets differ: only from Kafka's cleaning %v, only from segkit's %v (in all: Kafka's %v, segkit's %v)", only(ko, so), only(so, ko), ko, so))
	}
	byOffset := map[int64]*kgo.Record{}
	for _, r := range s {
		byOffset[r.Offset] = r
	}
	for _, r := range k {
		if o, ok := byOffset[r.Offset]; ok && len(errs) < 10 {
			if d := diffServed(r, o); d != "" {
				errs = append(errs, fmt.Sprintf("offset %d: %s", r.Offset, d))
			}
		}
	}
	if len(errs) > 0 {
		t.Errorf("%s: the broker serves %d records from its own cleaning, %d from segkit's:\n  %s", name, len(k), len(s), strings.Join(errs, "\n  "))
	}
}

// diffServed says how two served records differ (Kafka's k, segkit's s),
// null and empty told apart.
func diffServed(k, s *kgo.Record) string {
	var d []string
	field := func(what string, kv, sv any) {
		if kv != sv {
			d = append(d, fmt.Sprintf("%s: Kafka's %v, segkit's %v", what, kv, sv))
		}
	}
	field("offset", k.Offset, s.Offset)
	if !sameBytes(k.Key, s.Key) {
		d = append(d, fmt.Sprintf("key: Kafka's %s, segkit's %s", showBytes(k.Key), showBytes(s.Key)))
	}
	if !sameBytes(k.Value, s.Value) {
		d = append(d, fmt.Sprintf("value: Kafka's %s, segkit's %s", showBytes(k.Value), showBytes(s.Value)))
	}
	headers := func(r *kgo.Record) string {
		var hs []string
		for _, h := range r.Headers {
			hs = append(hs, strconv.Quote(h.Key)+"="+showBytes(h.Value))
		}
		return strings.Join(hs, ",")
	}
	field("headers", headers(k), headers(s))
	field("timestamp", k.Timestamp.UnixMilli(), s.Timestamp.UnixMilli())
	field("attributes", fmt.Sprintf("%+v", k.Attrs), fmt.Sprintf("%+v", s.Attrs))
	field("producer", fmt.Sprintf("%d/%d", k.ProducerID, k.ProducerEpoch), fmt.Sprintf("%d/%d", s.ProducerID, s.ProducerEpoch))
	field("leader epoch", k.LeaderEpoch, s.LeaderEpoch)
	return strings.Join(d, "; ")
}

// checkBrokerLog fails on a warning or error the broker logged about
// segkit's partition (Kafka's storage classes log to the oracle's own
// capture, not here: the adopt report's truncation and recovery figures
// stand for their lines).
func checkBrokerLog(t *testing.T, log string) {
	t.Helper()
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, segkitCleanedTopic) && (strings.Contains(l, "] WARN ") || strings.Contains(l, "] ERROR ")) {
			t.Errorf("broker log: %s", l)
		}
	}
}
