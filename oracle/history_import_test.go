package oracle_test

// "segviz history --import" rebuilds a partition's timeline from the
// broker's own log: the retention deletions a Kafka 4.3.1 broker made
// become the same clean instants segkit records for the same deletions.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/segkit/segkit/internal/retentionapply"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

const (
	hiTopic   = "hi-payments"
	hiCompact = "hi-compacted"
	// hiZone is the broker JVM's time zone (-Duser.timezone): its log
	// lines carry local times without a zone, which --tz must undo. Not
	// UTC, and not a whole hour, so that a wrong zone cannot pass.
	hiZone = "Asia/Kolkata"
	// hiRetentionMs deletes the records produced two hours in the past
	// and keeps those produced now.
	hiRetentionMs = 3600000
	// hiSizeSegments is how many of the old segments retention.bytes
	// deletes, before the time rule deletes the other old ones.
	hiSizeSegments = 2
)

// TestHistoryImportMatchesSegkit has the oracle's broker (its JVM in
// hiZone, writing Kafka's server.log and log-cleaner.log with
// --server-log) roll a partition by segment.bytes as records are
// produced, half of them two hours old, half new; stops it and copies the
// partition; then starts it again and sets retention.ms and
// retention.bytes in one request, so that its next check deletes the old
// segments by time and two more by size. "segviz history --import" of the
// broker's log files, on the directory the broker managed, must record a
// time and a size clean instant (and the broker's rolls) marked imported;
// retentionapply.Check on the copy (segkit's --apply path, at the
// broker's check time, the broker's config) must record the same clean
// instants: the same rule, segments (base and next offsets, sizes,
// largest timestamps), log start offsets and retention config, as far as
// the log line says it. A second import imports nothing.
func TestHistoryImportMatchesSegkit(t *testing.T) {
	oracle.Require(t)
	if _, err := time.LoadLocation(hiZone); err != nil {
		t.Skipf("no time zone data for %s: %v", hiZone, err)
	}
	started := time.Now()
	t.Setenv("ORACLE_JAVA_OPTS", strings.TrimSpace("-Duser.timezone="+hiZone+" "+os.Getenv("ORACLE_JAVA_OPTS")))
	root := t.TempDir()
	logDir, logs := filepath.Join(root, "kafka"), filepath.Join(root, "logs")
	dir := filepath.Join(logDir, hiTopic+"-0")
	copyOf := filepath.Join(root, "copy", hiTopic+"-0")
	bin := buildSegviz(t, root)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	flags := append([]string{"--server-log", logs, "--config", "log.retention.check.interval.ms=200", "--config", "log.initial.task.delay.ms=0"}, brokerCleanerFlags...)
	start := func() *brokerSession {
		port, err := oracle.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		return startSession(ctx, t, append([]string{"broker", "--log-dir", logDir, "--port", strconv.Itoa(port)}, flags...)...)
	}

	// Session 1: the broker rolls the partition as records come.
	b1 := start()
	cl, adm := hiClient(t, b1.rep.Bootstrap)
	hiCreate(ctx, t, adm, hiTopic, map[string]string{
		config.CleanupPolicy: config.CleanupPolicyDelete, "retention.ms": "-1", "retention.bytes": "-1",
		config.InternalSegmentBytes: "2048", "file.delete.delay.ms": "100",
	})
	hiCreate(ctx, t, adm, hiCompact, map[string]string{
		config.CleanupPolicy: config.CleanupPolicyCompact, config.InternalSegmentBytes: "1024", "min.cleanable.dirty.ratio": "0.01",
	})
	now := time.Now().UnixMilli()
	old := now - 2*time.Hour.Milliseconds()
	const batches = 40
	for i := range batches {
		ts := old + int64(i)*1000
		if i >= batches/2 {
			ts = now + int64(i-batches/2)*10
		}
		var recs []*kgo.Record
		for j := range 3 {
			recs = append(recs, &kgo.Record{Topic: hiTopic, Key: []byte(fmt.Sprintf("k%d", j)), Value: []byte(fmt.Sprintf("payment %d.%d %s", i, j, strings.Repeat("p", 120))), Timestamp: time.UnixMilli(ts + int64(j))})
			recs = append(recs, &kgo.Record{Topic: hiCompact, Key: []byte(fmt.Sprintf("k%d", j)), Value: []byte(fmt.Sprintf("v%d %s", i, strings.Repeat("c", 100)))})
		}
		for _, res := range cl.ProduceSync(ctx, recs...) {
			if res.Err != nil {
				t.Fatalf("produce: %v", res.Err)
			}
		}
	}
	// The compacted topic's cleaner runs (log-cleaner.log) before the stop.
	waitCleanerCheckpoint(t, filepath.Join(logDir, hiCompact+"-0"))
	cl.Close()
	b1.stop(t)
	bases := logBases(dir)
	if len(bases) < 6 {
		t.Fatalf("the broker rolled %d segments, want more", len(bases))
	}
	copyDir(t, dir, copyOf)

	// Kafka's check runs the size rule before the time rule
	// (UnifiedLog.deleteOldSegments: log start offset, size, time): the
	// retention.bytes that deletes hiSizeSegments segments is the log's
	// size less theirs; the time rule then deletes the other old ones.
	sizes, firstNew := hiSegments(t, copyOf, now)
	if firstNew <= hiSizeSegments || firstNew >= len(sizes)-1 {
		t.Fatalf("the new records begin at segment %d of %d", firstNew, len(sizes))
	}
	var keepBytes int64
	for _, s := range sizes[hiSizeSegments:] {
		keepBytes += s
	}
	wantStart := bases[firstNew]

	// The broker recovers the partition on its next start (no
	// clean-shutdown marker, recovery point 0): recovery lines to import.
	if err := os.Remove(filepath.Join(logDir, ".kafka_cleanshutdown")); err != nil {
		t.Fatal(err)
	}
	rpPath := filepath.ToSlash(filepath.Join(logDir, checkpoint.RecoveryPointFile))
	rp, err := checkpoint.ReadOffsets(vfs.OS(), rpPath)
	if err != nil {
		t.Fatal(err)
	}
	rp[checkpoint.TopicPartition{Topic: hiTopic, Partition: 0}] = 0
	if err := checkpoint.WriteOffsets(vfs.OS(), rpPath, rp); err != nil {
		t.Fatal(err)
	}

	// Session 2: one request sets both, so one check deletes by both.
	b2 := start()
	cl, adm = hiClient(t, b2.rep.Bootstrap)
	res, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr(strconv.Itoa(hiRetentionMs))},
		{Op: kadm.SetConfig, Name: "retention.bytes", Value: kadm.StringPtr(strconv.FormatInt(keepBytes, 10))},
	}, hiTopic)
	if err == nil {
		for _, r := range res {
			err = r.Err
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	hiWaitStart(ctx, t, adm, wantStart)
	tlWaitNoDeleted(t, dir)
	cl.Close()
	b2.stop(t)
	if keep := os.Getenv("SEGKIT_HISTORY_IMPORT_KEEP"); keep != "" {
		// For a look at what the broker did, and testdata excerpts.
		if err := os.CopyFS(keep, os.DirFS(root)); err != nil {
			t.Fatal(err)
		}
	}

	// The import, on the directory the broker managed.
	files := []string{filepath.Join(logs, "server.log"), filepath.Join(logs, "log-cleaner.log")}
	args := []string{"history", "--json", "--tz", hiZone}
	for _, f := range files {
		args = append(args, "--import", f)
	}
	out, stderr, code := hiRun(t, bin, append(args, dir)...)
	if code != 0 {
		t.Fatalf("segviz %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	imported := hiInstants(t, out)
	var cleans []hiInstant
	rolls, recoveries := 0, 0
	for _, in := range imported {
		if !in.Imported {
			t.Errorf("instant %d %s: imported false", in.Instant, in.Action)
		}
		switch in.Action {
		case "clean":
			cleans = append(cleans, in)
		case "roll":
			rolls++
		case "recovery":
			recoveries++
			var r timeline.Recovery
			if err := json.Unmarshal(in.Detail, &r); err != nil {
				t.Fatal(err)
			}
			if r.CleanShutdown || !slices.Equal(r.Recovered, bases) || r.LogStartOffset != 0 || r.LogEndOffset != 3*batches {
				t.Errorf("imported recovery %s, want an unclean one that rechecked %v, offsets [0, %d)", in.Detail, bases, 3*batches)
			}
		}
	}
	if recoveries != 1 {
		t.Errorf("imported %d recoveries, want 1 (session 2's start; session 1's clean start rechecked nothing)", recoveries)
	}
	if rolls != len(bases)-1 {
		t.Errorf("imported %d rolls, want %d (the broker's: segments %v)", rolls, len(bases)-1, bases)
	}

	// segkit, on the copy, at the broker's check time.
	if len(cleans) == 0 {
		t.Fatalf("no clean instant imported; stderr:\n%s", stderr)
	}
	var first timeline.Clean
	if err := json.Unmarshal(cleans[0].Detail, &first); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{
		"retention.ms": strconv.Itoa(hiRetentionMs), "retention.bytes": strconv.FormatInt(keepBytes, 10),
		config.InternalSegmentBytes: "2048", "file.delete.delay.ms": "100",
	})
	if err != nil {
		t.Fatal(err)
	}
	cdir := filepath.ToSlash(copyOf)
	l, err := kafkalog.Open(vfs.OS(), cdir, cfg, kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tl, err := timeline.Open(vfs.OS(), cdir, timeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := retentionapply.Check(l, tl, retention.PolicyFrom(cfg, config.DefaultBroker()), first.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// The same deletions: the broker kept the segments segkit kept.
	if a, b := logBases(dir), logBases(copyOf); !slices.Equal(a, b) {
		t.Errorf("the broker kept segments %v, segkit's check %v", a, b)
	}
	var want []timeline.Clean
	for _, in := range rep.Instants {
		if c, ok := in.Result.(*timeline.Clean); ok {
			want = append(want, *c)
		}
	}
	var got []timeline.Clean
	for _, in := range cleans {
		var c timeline.Clean
		if err := json.Unmarshal(in.Detail, &c); err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	if rules := hiRules(want); !slices.Equal(rules, []string{"size", "time"}) {
		t.Fatalf("segkit's check recorded the rules %v, want size then time: the scenario is wrong", rules)
	}
	if len(got) != len(want) {
		t.Fatalf("imported %d clean instants %v, segkit recorded %d %v", len(got), hiRules(got), len(want), hiRules(want))
	}
	for i := range want {
		// What a broker's line does not say: file.delete.delay.ms, and
		// the other rule's setting.
		w := want[i]
		w.Config.FileDeleteDelayMs = 0
		switch w.Rule {
		case "time":
			w.Config.RetentionBytes = 0
		case "size":
			w.Config.RetentionMs = 0
		}
		g := got[i]
		g.Now = w.Now // the broker's clock at the check, and segkit's at the first line's
		if a, b := hiJSON(t, g), hiJSON(t, w); a != b {
			t.Errorf("clean %d:\nimported %s\nsegkit   %s", i, a, b)
		}
	}
	if got[len(got)-1].NewLogStartOffset != wantStart {
		t.Errorf("imported log start offset %d, want %d", got[len(got)-1].NewLogStartOffset, wantStart)
	}

	// history on the broker's directory lists them; a second import
	// imports nothing.
	out2, stderr2, code := hiRun(t, bin, append(args, dir)...)
	if code != 0 || len(bytes.TrimSpace(out2)) != 0 {
		t.Errorf("second import: exit %d, printed %q (%s), want nothing new", code, out2, stderr2)
	}
	listed, _, code := hiRun(t, bin, "history", "--json", dir)
	if code != 0 || len(hiInstants(t, listed)) != len(imported) {
		t.Errorf("history after the imports: exit %d, %d instants, want %d", code, len(hiInstants(t, listed)), len(imported))
	}
	t.Logf("broker rolled %d segments; deleted by %v to log start %d; imported %d instants (%d rolls, %d recovery, %d cleans); test %v",
		len(bases), hiRules(got), wantStart, len(imported), rolls, recoveries, len(cleans), time.Since(started).Round(time.Second))
}

// hiInstant is one line of "segviz history --json".
type hiInstant struct {
	Instant   int64           `json:"instant"`
	Completed int64           `json:"completed"`
	Action    string          `json:"action"`
	State     string          `json:"state"`
	Imported  bool            `json:"imported"`
	Detail    json.RawMessage `json:"detail"`
}

func hiInstants(t *testing.T, out []byte) []hiInstant {
	t.Helper()
	var insts []hiInstant
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var in hiInstant
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			t.Fatalf("history --json line %q: %v", sc.Bytes(), err)
		}
		insts = append(insts, in)
	}
	return insts
}

func hiRules(cs []timeline.Clean) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Rule)
	}
	return out
}

func hiJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func hiRun(t *testing.T, bin string, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.Bytes(), e.Bytes(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return o.Bytes(), e.Bytes(), 0
}

func hiClient(t *testing.T, bootstrap string) (*kgo.Client, *kadm.Client) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	return cl, kadm.NewClient(cl)
}

func hiCreate(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, configs map[string]string) {
	t.Helper()
	cfg := map[string]*string{}
	for k, v := range configs {
		cfg[k] = kadm.StringPtr(v)
	}
	res, err := adm.CreateTopic(ctx, 1, 1, cfg, topic)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		e, err := adm.ListEndOffsets(ctx, topic)
		if err == nil {
			if o, ok := e.Lookup(topic, 0); ok && o.Err == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %s has no leader after 30 s", topic)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// hiSegments returns the sizes of the segments of dir, oldest first, and
// the index of the first whose newest record is at or after now.
func hiSegments(t *testing.T, dir string, now int64) ([]int64, int) {
	t.Helper()
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), config.Default(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	st, err := retention.StateOf(l)
	if err != nil {
		t.Fatal(err)
	}
	first := -1
	var sizes []int64
	for i, s := range st.Segments {
		sizes = append(sizes, s.Size)
		if first < 0 && s.LargestRecordTimestamp >= now {
			first = i
		}
	}
	return sizes, first
}

// hiWaitStart waits until ListOffsets answers start as the log start
// offset of hiTopic.
func hiWaitStart(ctx context.Context, t *testing.T, adm *kadm.Client, start int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := adm.ListStartOffsets(ctx, hiTopic)
		if err == nil {
			if o, ok := s.Lookup(hiTopic, 0); ok && o.Err == nil {
				if o.Offset == start {
					return
				}
				if o.Offset > start {
					t.Fatalf("log start offset %d, past the %d expected", o.Offset, start)
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("log start offset not %d after 30 s", start)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
