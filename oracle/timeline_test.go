package oracle_test

// A partition directory carrying segkit's timeline (package timeline:
// <partition>/.segkit/timeline/, with its history/ subdirectory) is one a
// Kafka 4.3.1 broker loads, serves, rolls, compacts and deletes from by
// retention exactly as it does the same partition without it, and the
// timeline comes out of it untouched.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

const (
	// tlTopic's partition 0 carries the timeline; partition 1, the same
	// records without it, is the control.
	tlTopic = "segkit-timeline"
	// tlKeys keys cycle through the records, so that compaction removes
	// most of them.
	tlKeys = 13
	// tlNew records are produced through the broker after it adopted the
	// partitions: enough for several rolls at tlBrokerSegmentBytes.
	tlNew                = 90
	tlBrokerSegmentBytes = "4096"
	// tlRetentionMs is the retention.ms set for the last phase: the
	// records segkit wrote are two hours old, those produced are new.
	tlRetentionMs = "60000"
)

// tlRec is one record of the model.
type tlRec struct {
	offset    int64
	key       string
	value     string
	timestamp int64
}

// TestTimelineSurvivesBroker writes a keyed partition with segkit (12
// segments, timestamps two hours old) and a copy of it, records a
// timeline beside the first (rolls, a savepoint, a recovery, a
// rolled-back compaction, archived and merged, plus one inflight and one
// requested instant), and has the oracle's broker adopt both as the two
// partitions of a topic. It then puts the timeline into the broker's
// directory of partition 0 and restarts the broker with full recovery
// (no clean-shutdown marker, recovery point 0, a zero tail on both active
// segments for it to cut). The broker must recover, serve, compact (its
// own cleaner, once the topic turns compact), roll (records produced to
// both partitions alike) and delete by retention (retention.ms lowered
// below the old records' age) both partitions alike: the same offsets and
// records served after each phase, the expected ones, and, once it is
// stopped, the same files with the same bytes in both directories. The
// timeline's files must have the bytes and modification times they had,
// and timeline.Open must read back the same instants.
func TestTimelineSurvivesBroker(t *testing.T) {
	oracle.Require(t)
	started := time.Now()
	root := t.TempDir()
	src0 := filepath.Join(root, "src", "with-timeline-0")
	src1 := filepath.Join(root, "src", "control-0")
	model := tlWritePartition(t, src0, time.Now().Add(-2*time.Hour).UnixMilli())
	copyDir(t, src0, src1)
	leo := model[len(model)-1].offset + 1
	wantInsts, wantPending := tlWriteTimeline(t, src0)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel) // registered first: it runs after every broker's Stop
	logDir := filepath.Join(root, "kafka")
	dir0, dir1 := filepath.Join(logDir, tlTopic+"-0"), filepath.Join(logDir, tlTopic+"-1")
	brokerFlags := append([]string{"--config", "log.retention.check.interval.ms=200", "--config", "log.initial.task.delay.ms=0"}, brokerCleanerFlags...)
	props := map[string]string{
		config.CleanupPolicy:        config.CleanupPolicyDelete,
		"retention.ms":              "-1",
		config.InternalSegmentBytes: tlBrokerSegmentBytes,
		"file.delete.delay.ms":      "100",
	}

	// Session 1: the broker adopts both partitions (without the
	// timeline: adopt copies the partition's files only).
	port, err := oracle.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"adopt", "--log-dir", logDir, "--topic", tlTopic, "--port", strconv.Itoa(port)}, brokerFlags...)
	for _, k := range sortedKeys(props) {
		args = append(args, "--topic-config", k+"="+props[k])
	}
	b1 := startSession(ctx, t, append(args, src0, src1)...)
	tlCheckAdopt(t, &b1.rep, leo, len(logBases(src0)))
	b1.stop(t)

	// The timeline goes in beside partition 0's files, and the broker is
	// made to recover both partitions in full on its next start.
	if err := os.CopyFS(filepath.Join(dir0, ".segkit"), os.DirFS(filepath.Join(src0, ".segkit"))); err != nil {
		t.Fatal(err)
	}
	tree := tlTree(t, filepath.Join(dir0, ".segkit"))
	if len(tree) < 4 {
		t.Fatalf("the timeline has %d files", len(tree))
	}
	if err := os.Remove(filepath.Join(logDir, ".kafka_cleanshutdown")); err != nil {
		t.Fatal(err)
	}
	rpPath := filepath.ToSlash(filepath.Join(logDir, checkpoint.RecoveryPointFile))
	rp, err := checkpoint.ReadOffsets(vfs.OS(), rpPath)
	if err != nil {
		t.Fatal(err)
	}
	rp[checkpoint.TopicPartition{Topic: tlTopic, Partition: 0}] = 0
	rp[checkpoint.TopicPartition{Topic: tlTopic, Partition: 1}] = 0
	if err := checkpoint.WriteOffsets(vfs.OS(), rpPath, rp); err != nil {
		t.Fatal(err)
	}
	activeSize := map[string]int64{}
	for _, d := range []string{dir0, dir1} {
		bases := logBases(d)
		p := segment.Path(filepath.ToSlash(d), bases[len(bases)-1], segment.LogSuffix)
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		activeSize[p] = st.Size()
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(make([]byte, 64)); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}

	// Session 2: the broker loads the directory with the timeline in it.
	port, err = oracle.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	// Its log (server.log and log-cleaner.log, as Kafka's own log4j2
	// config writes them) must say of partition 0 what it says of its
	// control partition 1, and nothing of the timeline.
	serverLogs := filepath.Join(root, "broker-logs")
	b2 := startSession(ctx, t, append([]string{"broker", "--log-dir", logDir, "--port", strconv.Itoa(port), "--server-log", serverLogs}, brokerFlags...)...)
	ready := time.Since(started)
	for p, size := range activeSize {
		if st, err := os.Stat(p); err != nil || st.Size() != size {
			t.Errorf("%s: %v bytes after the broker's recovery (%v), want the %d before the zero tail: the loader did not recover it", p, st.Size(), err, size)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b2.rep.Bootstrap), kgo.DefaultProduceTopic(tlTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	tlWaitOffsets(ctx, t, adm, 0, leo)
	got := tlConsume(ctx, t, b2.rep.Bootstrap, 0, leo)
	tlCompare(t, "loaded", got, model)

	// Compaction: the topic turns compact; the broker's cleaner cleans
	// both partitions up to their active segments.
	tlAlter(ctx, t, adm, config.CleanupPolicy, config.CleanupPolicyCompact)
	end0, end1 := waitCleanerCheckpoint(t, dir0), waitCleanerCheckpoint(t, dir1)
	if end0 != end1 || end0 <= 0 || end0 >= leo {
		t.Fatalf("cleaner checkpoints %d and %d, want the same, inside [1, %d)", end0, end1, leo)
	}
	compacted := tlCompacted(model, end0)
	got = tlConsume(ctx, t, b2.rep.Bootstrap, 0, leo)
	tlCompare(t, "compacted", got, compacted)

	// Rolls: the topic turns back to delete (retention.ms -1: nothing
	// goes), and records are produced to both partitions alike, one
	// batch each at a time, with the same timestamps.
	tlAlter(ctx, t, adm, config.CleanupPolicy, config.CleanupPolicyDelete)
	time.Sleep(time.Second) // the broker applies topic config changes asynchronously
	segsBefore := len(logBases(dir0))
	now := time.Now().UnixMilli()
	all := slices.Clone(compacted)
	for i := range tlNew {
		r := tlRec{offset: leo + int64(i), key: fmt.Sprintf("key-%02d", i%tlKeys), value: fmt.Sprintf("new value %d %s", i, strings.Repeat("y", 60)), timestamp: now + int64(i)}
		all = append(all, r)
		var recs []*kgo.Record
		for p := range int32(2) {
			recs = append(recs, &kgo.Record{Partition: p, Key: []byte(r.key), Value: []byte(r.value), Timestamp: time.UnixMilli(r.timestamp)})
		}
		for _, res := range cl.ProduceSync(ctx, recs...) {
			if res.Err != nil || res.Record.Offset != r.offset {
				t.Fatalf("produce %d to partition %d: offset %d, %v; want offset %d", i, res.Record.Partition, res.Record.Offset, res.Err, r.offset)
			}
		}
	}
	newLEO := leo + tlNew
	rolls := len(logBases(dir0)) - segsBefore
	if rolls < 2 || len(logBases(dir1)) != len(logBases(dir0)) {
		t.Errorf("producing %d records rolled partition 0 %d times (%d segments), partition 1 to %d segments; want at least 2 rolls, alike", tlNew, rolls, len(logBases(dir0)), len(logBases(dir1)))
	}
	got = tlConsume(ctx, t, b2.rep.Bootstrap, 0, newLEO)
	tlCompare(t, "rolled", got, all)

	// Retention: retention.ms below the old records' age deletes every
	// segment whose newest record is old, up to the one the new records
	// began in (the old active segment, which starts at the cleaner's end).
	tlAlter(ctx, t, adm, "retention.ms", tlRetentionMs)
	tlWaitOffsets(ctx, t, adm, end0, newLEO)
	tlWaitNoDeleted(t, dir0, dir1)
	var kept []tlRec
	for _, r := range all {
		if r.offset >= end0 {
			kept = append(kept, r)
		}
	}
	got = tlConsume(ctx, t, b2.rep.Bootstrap, end0, newLEO)
	tlCompare(t, "after retention", got, kept)
	for _, d := range []string{dir0, dir1} {
		if v, ok := cleanerCheckpoint(d); !ok || v != end0 {
			t.Errorf("%s: cleaner checkpoint %d (%v), want %d: the cleaner ran again, the phases overlapped", filepath.Base(d), v, ok, end0)
		}
	}
	b2.stop(t)

	// The broker did not complain: no line of its log names the timeline,
	// and its warnings and errors about partition 0 are those about 1.
	tlCheckServerLogs(t, serverLogs)
	// Kafka's files: partition 0's are partition 1's, byte for byte.
	tlCompareDirs(t, dir0, dir1)
	checkNoStrayDirs(t, logDir)
	// The timeline: untouched, and it reads back.
	if after := tlTree(t, filepath.Join(dir0, ".segkit")); !tlSameTree(tree, after) {
		t.Errorf("the timeline's files changed while the broker ran:\nbefore %v\nafter  %v", tlTreeNames(tree), tlTreeNames(after))
	}
	tl, err := timeline.Open(vfs.OS(), filepath.ToSlash(dir0), timeline.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("timeline.Open after the broker: %v", err)
	}
	insts, err := tl.Instants(timeline.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := tlJSON(t, insts), tlJSON(t, wantInsts); a != b {
		t.Errorf("the timeline reads back other instants:\n got %s\nwant %s", a, b)
	}
	if p := tlPending(tl); !slices.Equal(p, wantPending) {
		t.Errorf("pending instants %v, want %v", p, wantPending)
	}
	t.Logf("partition of %d records in %d segments, timeline of %d files (%d completed instants, pending %v); broker ready after %v; compacted to offset %d (%d records served), %d rolls, retention moved the log start to %d; %d records served at the end, alike in both partitions; test %v",
		leo, len(logBases(src0)), len(tree), len(wantInsts), wantPending, ready.Round(time.Second), end0, len(compacted), rolls, end0, len(kept), time.Since(started).Round(time.Second))
}

// tlWritePartition writes a keyed partition with segkit's engine: 240
// records, 4 a batch, three of each four with keys cycling through
// tlKeys, timestamps from ts on, in segments of 2048 bytes. It returns
// the records.
func tlWritePartition(t *testing.T, dir string, ts int64) []tlRec {
	t.Helper()
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{config.SegmentBytes: "2048"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), cfg, kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var model []tlRec
	var bld record.Builder
	for b := range 60 {
		var recs []record.Record
		for range 4 {
			i := len(model)
			// One record of four has a key of its own, which the
			// cleaner keeps: no cleaned segment is empty (an empty one
			// has no largest timestamp, and retention.ms would judge it
			// by its file's modification time, the clean's).
			key := fmt.Sprintf("key-%02d", i%tlKeys)
			if i%4 == 3 {
				key = fmt.Sprintf("own-%03d", i)
			}
			r := tlRec{offset: int64(i), key: key, value: fmt.Sprintf("old value %d %s", i, strings.Repeat("x", i%40)), timestamp: ts + int64(i)}
			recs = append(recs, record.Record{Key: []byte(r.key), Value: []byte(r.value), Timestamp: r.timestamp})
			model = append(model, r)
		}
		spec := record.NewBatchSpec(0, compress.None)
		batch, err := bld.AppendBatch(nil, &spec, recs)
		if err != nil {
			t.Fatal(err)
		}
		res, err := l.Append(batch, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.FirstOffset != int64(b*4) {
			t.Fatalf("batch %d at offset %d", b, res.FirstOffset)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(logBases(dir)); n < 8 {
		t.Fatalf("%d segments, want several", n)
	}
	return model
}

// tlWriteTimeline records a timeline in dir: a roll instant for each
// segment roll, a savepoint, a recovery, a compaction rolled back (with
// ArchiveAfter 4 and MergeAfter 2: some archived and merged), then an
// inflight truncation and a requested restore, left pending. It returns
// the completed instants and the pending ones ("<time> <state>").
func tlWriteTimeline(t *testing.T, dir string) ([]timeline.Instant, []string) {
	t.Helper()
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{config.SegmentBytes: "2048"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), cfg, kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var refs []timeline.SegmentRef
	segs := l.Segments()
	for i, s := range segs {
		next := l.LogEndOffset()
		if i+1 < len(segs) {
			next = segs[i+1].BaseOffset()
		}
		ts, err := s.LargestTimestamp()
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, timeline.SegmentRef{BaseOffset: s.BaseOffset(), NextOffset: next, Size: s.Size(), LargestTimestamp: ts})
	}
	leo := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	tl, err := timeline.Open(vfs.OS(), filepath.ToSlash(dir), timeline.Options{ArchiveAfter: 4, MergeAfter: 2})
	if err != nil {
		t.Fatal(err)
	}
	run := func(a timeline.Action, plan, result timeline.Payload, inflight bool) {
		t.Helper()
		x, err := tl.Begin(a, plan)
		if err == nil && inflight {
			err = x.Inflight()
		}
		if err == nil {
			err = x.Complete(result)
		}
		if err != nil {
			t.Fatalf("recording a %s: %v", a, err)
		}
	}
	for i := 1; i < len(refs); i++ {
		closed := refs[i-1]
		roll := &timeline.Roll{Reason: "segment.bytes", Closed: &closed, NewBaseOffset: refs[i].BaseOffset}
		run(timeline.ActionRoll, roll, roll, true)
	}
	run(timeline.ActionSavepoint, &timeline.Savepoint{Label: "legal-hold", By: "oracle test", LogEndOffset: leo, Segments: refs}, nil, false)
	run(timeline.ActionRecovery, nil, &timeline.Recovery{CleanShutdown: true, LogEndOffset: leo}, false)
	x, err := tl.Begin(timeline.ActionCompaction, &timeline.Compaction{Sources: refs[:3]})
	if err == nil {
		err = x.Inflight()
	}
	if err == nil {
		err = x.Rollback("the test undid it")
	}
	if err != nil {
		t.Fatal(err)
	}
	trunc, err := tl.Begin(timeline.ActionTruncate, &timeline.Truncate{Reason: "divergence", OldLogEndOffset: leo, NewLogEndOffset: leo - 4})
	if err == nil {
		err = trunc.Inflight()
	}
	if err == nil {
		_, err = tl.Begin(timeline.ActionRestore, &timeline.Restore{NewLogEndOffset: leo})
	}
	if err != nil {
		t.Fatal(err)
	}
	insts, err := tl.Instants(timeline.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	hist, _ := filepath.Glob(filepath.Join(timeline.Dir(dir), timeline.HistoryDirName, "*_1.archive"))
	if len(insts) != len(refs)+2 || len(hist) == 0 {
		t.Fatalf("the timeline holds %d instants (want %d) and %d merged archive files (want some)", len(insts), len(refs)+2, len(hist))
	}
	return insts, tlPending(tl)
}

func tlPending(tl *timeline.Timeline) []string {
	var out []string
	for _, x := range tl.Pending() {
		in := x.Instant()
		out = append(out, in.Time.String()+" "+string(in.Action)+" "+in.State.String())
	}
	return out
}

func tlJSON(t *testing.T, insts []timeline.Instant) string {
	t.Helper()
	b, err := json.Marshal(insts)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tlCheckAdopt checks the adopt report: both partitions served at [0,
// leo), every segment rechecked, nothing truncated, nothing stray.
func tlCheckAdopt(t *testing.T, rep *adoptReport, leo int64, segs int) {
	t.Helper()
	if rep.Topic != tlTopic || len(rep.Partitions) != 2 || rep.BytesTruncated != 0 || len(rep.StrayDirs) != 0 {
		t.Fatalf("adopt report: topic %q, %d partitions, %d bytes truncated, stray %v", rep.Topic, len(rep.Partitions), rep.BytesTruncated, rep.StrayDirs)
	}
	for _, p := range rep.Partitions {
		if !p.Exists || p.LogStartOffset != 0 || p.LogEndOffset != leo {
			t.Errorf("adopted partition %d: exists %v, offsets [%d, %d), want [0, %d)", p.Partition, p.Exists, p.LogStartOffset, p.LogEndOffset, leo)
		}
	}
	if len(rep.RecoveredSegments) != 2*segs {
		t.Errorf("Kafka rechecked %d segments, want %d", len(rep.RecoveredSegments), 2*segs)
	}
}

// tlAlter sets a config of tlTopic.
func tlAlter(ctx context.Context, t *testing.T, adm *kadm.Client, name, value string) {
	t.Helper()
	res, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: name, Value: kadm.StringPtr(value)}}, tlTopic)
	if err == nil {
		for _, r := range res {
			if r.Err != nil {
				err = r.Err
			}
		}
	}
	if err != nil {
		t.Fatalf("altering %s=%s: %v", name, value, err)
	}
}

// tlWaitOffsets waits until ListOffsets answers [start, end) for both
// partitions.
func tlWaitOffsets(ctx context.Context, t *testing.T, adm *kadm.Client, start, end int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for {
		s, err1 := adm.ListStartOffsets(ctx, tlTopic)
		e, err2 := adm.ListEndOffsets(ctx, tlTopic)
		ok := err1 == nil && err2 == nil
		last = fmt.Sprintf("%v %v", err1, err2)
		for p := range int32(2) {
			so, f1 := s.Lookup(tlTopic, p)
			eo, f2 := e.Lookup(tlTopic, p)
			ok = ok && f1 && f2 && so.Err == nil && eo.Err == nil && so.Offset == start && eo.Offset == end
			last += fmt.Sprintf(" p%d [%d, %d)", p, so.Offset, eo.Offset)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ListOffsets: %s; want [%d, %d) for both partitions", last, start, end)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tlWaitNoDeleted waits until the directories hold no .deleted file.
func tlWaitNoDeleted(t *testing.T, dirs ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := 0
		for _, d := range dirs {
			m, _ := filepath.Glob(filepath.Join(d, "*"+segment.DeletedSuffix))
			n += len(m)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d .deleted files still there after 30 s", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tlConsume reads both partitions through the broker from offset from
// until the record before end.
func tlConsume(ctx context.Context, t *testing.T, bootstrap string, from, end int64) map[int32][]*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{tlTopic: {0: kgo.NewOffset().At(from), 1: kgo.NewOffset().At(from)}}),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	got := map[int32][]*kgo.Record{}
	done := func() bool {
		for p := range int32(2) {
			if rs := got[p]; len(rs) == 0 || rs[len(rs)-1].Offset < end-1 {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		for _, e := range fs.Errors() {
			t.Fatalf("fetch %s[%d]: %v (records so far: %d, %d)", e.Topic, e.Partition, e.Err, len(got[0]), len(got[1]))
		}
		fs.EachRecord(func(r *kgo.Record) { got[r.Partition] = append(got[r.Partition], r) })
	}
	return got
}

// tlCompare checks that both partitions served exactly want: the same
// offsets, keys, values and timestamps.
func tlCompare(t *testing.T, phase string, got map[int32][]*kgo.Record, want []tlRec) {
	t.Helper()
	for p := range int32(2) {
		rs := got[p]
		var errs []string
		for i := 0; i < max(len(rs), len(want)) && len(errs) < 5; i++ {
			switch {
			case i >= len(rs):
				errs = append(errs, fmt.Sprintf("missing offset %d and %d more", want[i].offset, len(want)-i-1))
			case i >= len(want):
				errs = append(errs, fmt.Sprintf("unexpected offset %d and %d more", rs[i].Offset, len(rs)-i-1))
			case rs[i].Offset != want[i].offset || string(rs[i].Key) != want[i].key || string(rs[i].Value) != want[i].value || rs[i].Timestamp.UnixMilli() != want[i].timestamp:
				errs = append(errs, fmt.Sprintf("offset %d key %q value %q ts %d, want offset %d key %q value %q ts %d", rs[i].Offset, rs[i].Key, showBytes(rs[i].Value), rs[i].Timestamp.UnixMilli(), want[i].offset, want[i].key, want[i].value, want[i].timestamp))
			}
		}
		if len(errs) > 0 {
			t.Errorf("%s: partition %d served %d records, want %d:\n  %s", phase, p, len(rs), len(want), strings.Join(errs, "\n  "))
		}
	}
}

// tlCompacted is what the cleaner leaves of model when it cleans
// [0, end): the last record of each key there, and everything from end.
func tlCompacted(model []tlRec, end int64) []tlRec {
	last := map[string]int64{}
	for _, r := range model {
		if r.offset < end {
			last[r.key] = r.offset
		}
	}
	var out []tlRec
	for _, r := range model {
		if r.offset >= end || last[r.key] == r.offset {
			out = append(out, r)
		}
	}
	return out
}

// tlCompareDirs checks that two partition directories hold the same
// regular files with the same bytes, and that the only subdirectory is
// dir0's .segkit.
func tlCompareDirs(t *testing.T, dir0, dir1 string) {
	t.Helper()
	read := func(dir string) (map[string][]byte, []string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		var dirs []string
		for _, e := range ents {
			if e.IsDir() {
				dirs = append(dirs, e.Name())
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[e.Name()] = b
		}
		return files, dirs
	}
	f0, d0 := read(dir0)
	f1, d1 := read(dir1)
	if !slices.Equal(d0, []string{".segkit"}) || len(d1) != 0 {
		t.Errorf("subdirectories: %v in the partition with the timeline, %v in the control; want [.segkit] and none", d0, d1)
	}
	names := func(m map[string][]byte) []string {
		var out []string
		for n := range m {
			out = append(out, n)
		}
		slices.Sort(out)
		return out
	}
	if n0, n1 := names(f0), names(f1); !slices.Equal(n0, n1) {
		t.Fatalf("the broker left other files beside the timeline:\n  with it  %v\n  control  %v", n0, n1)
	}
	var kinds []string
	for n, b := range f0 {
		if !bytes.Equal(b, f1[n]) {
			t.Errorf("%s: %d bytes beside the timeline, %d in the control, not the same", n, len(b), len(f1[n]))
		}
		if i := strings.IndexByte(n, '.'); i >= 0 && !slices.Contains(kinds, n[i:]) {
			kinds = append(kinds, n[i:])
		}
	}
	slices.Sort(kinds)
	if !slices.Contains(kinds, segment.LogSuffix) || !slices.Contains(kinds, segment.SnapshotSuffix) {
		t.Errorf("compared files of kinds %v, want segments and producer snapshots among them", kinds)
	}
	t.Logf("%d files of kinds %v identical in both partition directories", len(f0), kinds)
}

// tlFile is a file of the timeline's tree: its bytes and modification time.
type tlFile struct {
	data  []byte
	mtime time.Time
}

// tlTree returns the regular files under dir, by path relative to it.
func tlTree(t *testing.T, dir string) map[string]tlFile {
	t.Helper()
	out := map[string]tlFile{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = tlFile{data: b, mtime: fi.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func tlSameTree(a, b map[string]tlFile) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !bytes.Equal(v.data, w.data) || !v.mtime.Equal(w.mtime) {
			return false
		}
	}
	return true
}

func tlTreeNames(m map[string]tlFile) []string {
	var out []string
	for n, f := range m {
		out = append(out, fmt.Sprintf("%s(%d)", n, len(f.data)))
	}
	slices.Sort(out)
	return out
}

// tlCheckServerLogs checks the broker's server.log and log-cleaner.log:
// no line mentions .segkit or the timeline's files, and the WARN and
// ERROR lines about partition 0 (the one with the timeline) are, with the
// partition number changed, the same as those about partition 1.
func tlCheckServerLogs(t *testing.T, dir string) {
	t.Helper()
	var lines []string
	for _, name := range []string{"server.log", "log-cleaner.log"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("the broker's %s: %v", name, err)
		}
		lines = append(lines, strings.Split(string(b), "\n")...)
	}
	if len(lines) < 20 {
		t.Fatalf("the broker's log has %d lines: it was not captured", len(lines))
	}
	p0, p1 := tlTopic+"-0", tlTopic+"-1"
	var warn0, warn1 []string
	for _, line := range lines {
		if strings.Contains(line, ".segkit") || strings.Contains(line, "timeline/") {
			t.Errorf("the broker's log names the timeline: %s", line)
		}
		if !strings.Contains(line, "] WARN ") && !strings.Contains(line, "] ERROR ") {
			continue
		}
		// The message without its timestamp, partition 1's spelled as 0's.
		msg := line
		if i := strings.Index(line, "] "); i >= 0 {
			msg = line[i+2:]
		}
		switch {
		case strings.Contains(msg, p0):
			warn0 = append(warn0, msg)
		case strings.Contains(msg, p1):
			warn1 = append(warn1, strings.ReplaceAll(msg, p1, p0))
		}
	}
	slices.Sort(warn0)
	slices.Sort(warn1)
	if !slices.Equal(warn0, warn1) {
		t.Errorf("the broker warned about partition 0 (with the timeline) otherwise than about partition 1:\n0: %q\n1: %q", warn0, warn1)
	}
	t.Logf("broker log: %d lines, %d warnings or errors about each partition", len(lines), len(warn0))
}
