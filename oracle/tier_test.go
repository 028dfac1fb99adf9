package oracle_test

// Tiered storage (KIP-405) on the oracle's broker: Kafka 4.3.1 with its own
// LocalTieredStorage (`broker --tiered-storage DIR`) runs the retention
// article's experiment, and the test reads what the broker uploaded with a
// small parser of LocalTieredStorage's layout. runTieredScenario is the
// part that segkit's tier package can be checked against: the remote
// directory the broker wrote and the records a consumer of the broker got.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

const (
	tierTopic = "tiered-retention"
	// The article's experiment: 4,000 records of 1 KB in 1 MiB segments,
	// local.retention.ms 60000.
	tierRecords      = 4000
	tierValueSize    = 1024
	tierSegmentBytes = 1048576
	tierLocalRetMs   = 60000
	// tierBatch records go in each produce request (one batch each:
	// the producer flushes by hand), so the batches, and so the segments,
	// are the same on every run.
	tierBatch = 10
	// tierBaseTime is the first record's timestamp (2026-01-01T00:00:00Z);
	// record i has tierBaseTime+i. Fixed, and older than local.retention.ms
	// once it is set, so that local retention applies at its next check.
	tierBaseTime int64 = 1767225600000
)

// tierRec is one record as a consumer sees it.
type tierRec struct {
	Offset    int64
	Timestamp int64
	Key       []byte
	Value     []byte
}

func (r tierRec) String() string {
	return fmt.Sprintf("offset %d ts %d key %q value %d bytes %q…", r.Offset, r.Timestamp, r.Key, len(r.Value), r.Value[:min(len(r.Value), 16)])
}

// tierModel is what the test produces: record i at offset i.
func tierModel() []tierRec {
	out := make([]tierRec, tierRecords)
	for i := range out {
		v := make([]byte, tierValueSize)
		copy(v, fmt.Sprintf("record %04d ", i))
		for j := 12; j < len(v); j++ {
			v[j] = 'a' + byte((i+j)%26)
		}
		out[i] = tierRec{Offset: int64(i), Timestamp: tierBaseTime + int64(i), Key: []byte(fmt.Sprintf("k%04d", i)), Value: v}
	}
	return out
}

// tieredRun is what runTieredScenario leaves for later checks (the broker
// has stopped).
type tieredRun struct {
	// Root is the test's temporary directory: Root/kafka is the broker's
	// log directory, Root/remote the --tiered-storage DIR.
	Root string
	// RemoteRoot is DIR/kafka-tiered-storage; RemoteDir the partition's
	// directory in it, <topic>-<partition>-<topicIdBase64>.
	RemoteRoot, RemoteDir string
	Topic                 string
	Partition             int32
	TopicID               string // Kafka's base64 form
	// LocalBefore is a copy of the partition directory taken after the
	// records were produced and before local retention was enabled: the
	// segments as the broker had them before it deleted any. LocalAfter
	// is the broker's partition directory itself, after the broker
	// stopped: the local log retention left.
	LocalBefore, LocalAfter string
	// Earliest, EarliestLocal, LatestTiered and Latest are ListOffsets'
	// answers (timestamps -2, -4, -5 and -1) once local retention was done.
	Earliest, EarliestLocal, LatestTiered, Latest int64
	// Consumed is what a consumer of the broker read from offset 0.
	Consumed []tierRec
	// Produced is what the test produced (tierModel).
	Produced []tierRec
}

// runTieredScenario runs the retention article's experiment on the oracle's
// broker with Kafka's LocalTieredStorage: a topic with
// remote.storage.enable=true, segment.bytes 1 MiB and no retention; 4,000
// records of 1 KB; then local.retention.ms=60000 (the records are older:
// they are all past it). The broker copies the closed segments to the
// remote, deletes them locally once copied, rolls the active segment
// (UnifiedLog.deletableSegments: "Rolling the active segment to make it
// eligible for deletion"), copies and deletes that one too. It returns once
// the local log keeps only its (empty) active segment, after a consumer
// read every record from offset 0 (from the remote) and the broker stopped.
func runTieredScenario(t *testing.T) *tieredRun {
	t.Helper()
	oracle.Require(t)
	root := t.TempDir()
	run := &tieredRun{
		Root: root, Topic: tierTopic, Partition: 0,
		RemoteRoot:  filepath.Join(root, "remote", "kafka-tiered-storage"),
		LocalBefore: filepath.Join(root, "before", tierTopic+"-0"),
		LocalAfter:  filepath.Join(root, "kafka", tierTopic+"-0"),
		Produced:    tierModel(),
	}
	logDir := filepath.Join(root, "kafka")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	port, err := oracle.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	b := startSession(ctx, t, "broker", "--log-dir", logDir, "--port", strconv.Itoa(port),
		"--tiered-storage", filepath.Join(root, "remote"), "--server-log", filepath.Join(root, "logs"))
	var rep struct {
		RemoteDir string `json:"remoteDir"`
	}
	if err := json.Unmarshal(b.s.Report, &rep); err != nil || rep.RemoteDir != run.RemoteRoot {
		t.Fatalf("broker report %s: remoteDir %q, want %q (%v)", b.s.Report, rep.RemoteDir, run.RemoteRoot, err)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.rep.Bootstrap), kgo.DefaultProduceTopic(tierTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ManualFlushing())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	hiCreate(ctx, t, adm, tierTopic, map[string]string{
		"remote.storage.enable": "true",
		"segment.bytes":         strconv.Itoa(tierSegmentBytes),
		"cleanup.policy":        "delete",
		"retention.ms":          "-1",
		"retention.bytes":       "-1",
		"local.retention.ms":    "-2", // = retention.ms until the records are in
		"file.delete.delay.ms":  "100",
	})
	producedAt := time.Now()
	for i := 0; i < tierRecords; i += tierBatch {
		errs := make(chan error, tierBatch)
		for _, m := range run.Produced[i:min(i+tierBatch, tierRecords)] {
			cl.Produce(ctx, &kgo.Record{Partition: 0, Key: m.Key, Value: m.Value, Timestamp: time.UnixMilli(m.Timestamp)},
				func(_ *kgo.Record, err error) { errs <- err })
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		for range min(tierBatch, tierRecords-i) {
			if err := <-errs; err != nil {
				t.Fatalf("produce: %v", err)
			}
		}
	}
	produceTook := time.Since(producedAt)
	bases := logBases(run.LocalAfter)
	if len(bases) < 3 {
		t.Fatalf("the broker rolled %d segments (%v), want several", len(bases), bases)
	}
	// Every record is acknowledged: the segments are complete on disk.
	copyDir(t, run.LocalAfter, run.LocalBefore)
	md, err := checkpoint.ReadPartitionMetadata(vfs.OS(), filepath.ToSlash(run.LocalAfter))
	if err != nil {
		t.Fatal(err)
	}
	run.TopicID = md.TopicID.String()
	run.RemoteDir = filepath.Join(run.RemoteRoot, fmt.Sprintf("%s-%d-%s", tierTopic, 0, run.TopicID))

	// The article's setting: local retention 60 s; every record is older.
	retAt := time.Now()
	res, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "local.retention.ms", Value: kadm.StringPtr(strconv.Itoa(tierLocalRetMs))}}, tierTopic)
	for _, r := range res {
		if err == nil {
			err = r.Err
		}
	}
	if err != nil {
		t.Fatalf("setting local.retention.ms: %v", err)
	}
	tierWaitLocalEmpty(ctx, t, adm, run.LocalAfter, tierRecords)
	retentionTook := time.Since(retAt)
	run.Earliest = tierListOffset(ctx, t, adm.ListStartOffsets)
	run.EarliestLocal = tierListOffset(ctx, t, adm.ListLocalLogStartOffsets)
	run.LatestTiered = tierListOffset(ctx, t, adm.ListLatestRemoteOffsets)
	run.Latest = tierListOffset(ctx, t, adm.ListEndOffsets)

	consumeAt := time.Now()
	run.Consumed = tierConsume(ctx, t, b.rep.Bootstrap, 0, run.Latest)
	consumeTook := time.Since(consumeAt)
	cl.Close()
	b.stop(t)
	if keep := os.Getenv("SEGKIT_TIER_KEEP"); keep != "" {
		// For a look at what the broker did (server.log in logs/), and for
		// segkit's tier package to read: remote/, kafka/, before/.
		if err := os.CopyFS(keep, os.DirFS(root)); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("broker: produced %d records in %v (segments %v); local retention (copies, deletions, the roll) done %v after local.retention.ms was set; consumed %d records from offset 0 in %v",
		tierRecords, produceTook.Round(time.Millisecond), bases, retentionTook.Round(time.Millisecond), len(run.Consumed), consumeTook.Round(time.Millisecond))
	return run
}

// tierWaitLocalEmpty waits until local retention is done: the partition
// directory holds one segment and no .deleted files, and the local log
// start offset is the log end offset leo (the active segment is empty).
func tierWaitLocalEmpty(ctx context.Context, t *testing.T, adm *kadm.Client, dir string, leo int64) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		deleted, _ := filepath.Glob(filepath.Join(dir, "*"+segment.DeletedSuffix))
		bases := logBases(dir)
		var local int64 = -1
		if s, err := adm.ListLocalLogStartOffsets(ctx, tierTopic); err == nil {
			if o, ok := s.Lookup(tierTopic, 0); ok && o.Err == nil {
				local = o.Offset
			}
		}
		if len(deleted) == 0 && len(bases) == 1 && bases[0] == leo && local == leo {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("local retention not done after 90 s: segments %v, %d .deleted files, local log start offset %d (want only an empty active segment at %d)", bases, len(deleted), local, leo)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tierListOffset returns partition 0's answer of one kadm ListOffsets call.
func tierListOffset(ctx context.Context, t *testing.T, list func(context.Context, ...string) (kadm.ListedOffsets, error)) int64 {
	t.Helper()
	s, err := list(ctx, tierTopic)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := s.Lookup(tierTopic, 0)
	if !ok || o.Err != nil {
		t.Fatalf("ListOffsets: %v (found %v)", o.Err, ok)
	}
	return o.Offset
}

// tierConsume reads partition 0 through the broker from offset from until
// the record before end.
func tierConsume(ctx context.Context, t *testing.T, bootstrap string, from, end int64) []tierRec {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{tierTopic: {0: kgo.NewOffset().At(from)}}),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var got []tierRec
	for len(got) == 0 || got[len(got)-1].Offset < end-1 {
		fs := cl.PollFetches(ctx)
		for _, e := range fs.Errors() {
			t.Fatalf("fetch %s[%d]: %v (records so far: %d)", e.Topic, e.Partition, e.Err, len(got))
		}
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, tierRec{Offset: r.Offset, Timestamp: r.Timestamp.UnixMilli(), Key: r.Key, Value: r.Value})
		})
	}
	return got
}

// ---- LocalTieredStorage's layout, read back ----

// remoteNameRE is a LocalTieredStorage file name:
// <20-digit start offset>-<segment uuid, base64>.<type>
// (RemoteLogSegmentFileset.RemoteLogSegmentFileType).
var remoteNameRE = regexp.MustCompile(`^(\d{20})-([A-Za-z0-9_-]{22})\.(log|index|timeindex|txnindex|snapshot|leader_epoch_checkpoint)$`)

// remoteSegment is one segment's file set in a remote partition directory.
type remoteSegment struct {
	StartOffset int64
	UUID        string
	// Files maps a file type (log, index, ...) to its path.
	Files map[string]string
}

// readRemotePartition parses the file names of a LocalTieredStorage
// partition directory into its segments, by start offset. Any other name
// is an error.
func readRemotePartition(dir string) ([]remoteSegment, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	byID := map[string]*remoteSegment{}
	for _, e := range ents {
		m := remoteNameRE.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			return nil, fmt.Errorf("%s: not a LocalTieredStorage segment file", e.Name())
		}
		off, _ := strconv.ParseInt(m[1], 10, 64)
		s := byID[m[2]]
		if s == nil {
			s = &remoteSegment{StartOffset: off, UUID: m[2], Files: map[string]string{}}
			byID[m[2]] = s
		}
		if s.StartOffset != off {
			return nil, fmt.Errorf("segment %s: files at offsets %d and %d", m[2], s.StartOffset, off)
		}
		s.Files[m[3]] = filepath.Join(dir, e.Name())
	}
	var out []remoteSegment
	for _, s := range byID {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b remoteSegment) int { return int(a.StartOffset - b.StartOffset) })
	return out, nil
}

// readLogRecords decodes every record of a .log file (v2 batches) from
// offset from on, checking each batch's CRC.
func readLogRecords(path string, from int64) ([]tierRec, error) {
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []tierRec
	var it record.Iterator
	var r record.Record
	for pos := 0; pos < len(buf); {
		b, rest, err := record.ReadBatch(buf[pos:])
		if err != nil {
			return nil, fmt.Errorf("%s at %d: %v", path, pos, err)
		}
		if got, want := b.ComputeCRC(), b.CRC; got != want {
			return nil, fmt.Errorf("%s at %d: CRC %08x, the batch says %08x", path, pos, got, want)
		}
		it.Reset(&b)
		for it.Next(&r) {
			if r.Offset >= from {
				out = append(out, tierRec{Offset: r.Offset, Timestamp: r.Timestamp, Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value)})
			}
		}
		if err := it.Err(); err != nil {
			return nil, fmt.Errorf("%s at %d: %v", path, pos, err)
		}
		pos = len(buf) - len(rest)
	}
	return out, nil
}

// compareRecs reports how got differs from want (at most 5 lines).
func compareRecs(got, want []tierRec) []string {
	var errs []string
	for i := 0; i < max(len(got), len(want)) && len(errs) < 5; i++ {
		switch {
		case i >= len(got):
			errs = append(errs, fmt.Sprintf("missing %v and %d more", want[i], len(want)-i-1))
		case i >= len(want):
			errs = append(errs, fmt.Sprintf("unexpected %v and %d more", got[i], len(got)-i-1))
		case got[i].Offset != want[i].Offset || got[i].Timestamp != want[i].Timestamp || !bytes.Equal(got[i].Key, want[i].Key) || !bytes.Equal(got[i].Value, want[i].Value):
			errs = append(errs, fmt.Sprintf("%v, want %v", got[i], want[i]))
		}
	}
	return errs
}

// TestTieredStorageMatchesBroker runs runTieredScenario and checks, with
// the parser above, what Kafka's LocalTieredStorage holds:
//   - the article's shape: the broker copied the segments, local retention
//     deleted them, earliest is 0, earliest-local is 4000 (local keeps only
//     the empty active segment), the latest tiered offset 3999;
//   - the remote directory is <topic>-0-<topicId> with exactly one file set
//     (log, index, timeindex, snapshot, leader_epoch_checkpoint; no
//     txnindex: no transactions) per segment the broker had, no other file,
//     and the broker's fetches read their indexes (its RemoteIndexCache);
//   - each remote .log is byte for byte the local segment before the
//     deletion, and each .index/.timeindex the local one (the segment that
//     was active at the copy of the local directory: its entries, trimmed,
//     the time index with at most the one entry Kafka adds at the roll);
//     each .snapshot is the broker's <next segment>.snapshot (the same
//     bytes as the local one where the copy has it) and each
//     leader_epoch_checkpoint the epochs up to the next segment;
//   - the records of the remote .log files from offset 0 on, then of the
//     local segments from the local log start offset, are exactly what the
//     consumer got, and what the test produced (offsets, keys, values,
//     timestamps).
//
// It logs every remote file: name, size, sha256.
func TestTieredStorageMatchesBroker(t *testing.T) {
	t.Parallel() // two at a time: one alone keeps 1.3 of the 2 cores busy
	started := time.Now()
	run := runTieredScenario(t)

	// What the consumer got is what was produced.
	if errs := compareRecs(run.Consumed, run.Produced); len(errs) > 0 {
		t.Errorf("the consumer got %d records from offset 0, want the %d produced:\n  %s", len(run.Consumed), len(run.Produced), strings.Join(errs, "\n  "))
	}
	if run.Earliest != 0 || run.EarliestLocal != tierRecords || run.LatestTiered != tierRecords-1 || run.Latest != tierRecords {
		t.Errorf("ListOffsets: earliest %d, earliest-local %d, latest-tiered %d, latest %d; want 0, %d, %d, %d",
			run.Earliest, run.EarliestLocal, run.LatestTiered, run.Latest, tierRecords, tierRecords-1, tierRecords)
	}

	// The remote root holds the partition's directory only.
	ents, err := os.ReadDir(run.RemoteRoot)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != filepath.Base(run.RemoteDir) {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("%s holds %v, want only %s", run.RemoteRoot, names, filepath.Base(run.RemoteDir))
	}
	segs, err := readRemotePartition(run.RemoteDir)
	if err != nil {
		t.Fatal(err)
	}
	// The file list, for the log.
	var desc []string
	for _, s := range segs {
		for _, typ := range sortedKeys(s.Files) {
			b, err := os.ReadFile(s.Files[typ])
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			desc = append(desc, fmt.Sprintf("%s %d %s", filepath.Base(s.Files[typ]), len(b), hex.EncodeToString(sum[:])))
		}
	}
	t.Logf("remote %s (topic ID %s):\n  %s", run.RemoteDir, run.TopicID, strings.Join(desc, "\n  "))

	// One file set per segment the broker had before local retention:
	// its segments, and the active one (rolled by retention) too.
	before := logBases(run.LocalBefore)
	var starts []int64
	for _, s := range segs {
		starts = append(starts, s.StartOffset)
	}
	if !slices.Equal(starts, before) {
		t.Fatalf("remote segments start at %v, want the broker's segments %v", starts, before)
	}
	wantTypes := []string{"index", "leader_epoch_checkpoint", "log", "snapshot", "timeindex"}
	for i, s := range segs {
		if got := sortedKeys(s.Files); !slices.Equal(got, wantTypes) {
			t.Errorf("segment %d: files %v, want %v", s.StartOffset, got, wantTypes)
			continue
		}
		next := int64(tierRecords)
		if i+1 < len(segs) {
			next = segs[i+1].StartOffset
		}
		last := i == len(segs)-1 // active when the local copy was taken
		read := func(p string) []byte {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		local := func(ext string) []byte { return read(segPath(run.LocalBefore, s.StartOffset, ext)) }

		if !bytes.Equal(read(s.Files["log"]), local(segment.LogSuffix)) {
			t.Errorf("segment %d: the remote .log differs from the local one", s.StartOffset)
		}
		for _, ix := range []struct {
			typ, ext string
			entry    int
		}{{"index", segment.IndexSuffix, 8}, {"timeindex", segment.TimeIndexSuffix, 12}} {
			r, l := read(s.Files[ix.typ]), local(ix.ext)
			if !last {
				if !bytes.Equal(r, l) {
					t.Errorf("segment %d: the remote .%s (%d bytes) differs from the local one (%d bytes)", s.StartOffset, ix.typ, len(r), len(l))
				}
				continue
			}
			// The active segment's index was preallocated: its entries,
			// then zeros. Kafka trims it at the roll, and appends the
			// segment's largest timestamp to the time index then.
			valid := len(l)
			for valid >= ix.entry && bytes.Equal(l[valid-ix.entry:valid], make([]byte, ix.entry)) {
				valid -= ix.entry
			}
			extra := len(r) - valid
			if !bytes.Equal(r[:min(valid, len(r))], l[:valid]) || extra < 0 || (ix.typ == "index" && extra != 0) || extra > ix.entry {
				t.Errorf("segment %d (active at the copy): the remote .%s (%d bytes) is not the local one's %d bytes of entries (plus, for the time index, at most one entry)", s.StartOffset, ix.typ, len(r), valid)
			}
		}

		// The producer snapshot is the one at the next segment's base.
		snap := read(s.Files["snapshot"])
		entries, err := producer.DecodeSnapshot(snap)
		if err != nil {
			t.Errorf("segment %d: snapshot: %v", s.StartOffset, err)
		}
		// The broker's own <next>.snapshot: in the copy for the segments
		// closed then, in the log directory for the last one (the roll at
		// 4000 took it; the broker keeps it).
		lsnap, err := os.ReadFile(filepath.Join(run.LocalBefore, producer.SnapshotFileName(next)))
		if err != nil {
			lsnap, err = os.ReadFile(filepath.Join(run.LocalAfter, producer.SnapshotFileName(next)))
		}
		if err != nil || !bytes.Equal(lsnap, snap) {
			t.Errorf("segment %d: the remote .snapshot differs from the broker's %s (%v)", s.StartOffset, producer.SnapshotFileName(next), err)
		}
		if len(entries) != 1 || entries[0].LastOffset != next-1 || entries[0].Timestamp != tierBaseTime+next-1 {
			t.Errorf("segment %d: snapshot entries %+v, want one producer whose last batch ends at %d (ts %d)", s.StartOffset, entries, next-1, tierBaseTime+next-1)
		}
		epochs, err := checkpoint.ParseLeaderEpochs(read(s.Files["leader_epoch_checkpoint"]))
		if err != nil || len(epochs) != 1 || epochs[0] != (checkpoint.EpochEntry{Epoch: 0, StartOffset: 0}) {
			t.Errorf("segment %d: leader_epoch_checkpoint %q: %v %v, want epoch 0 from offset 0", s.StartOffset, read(s.Files["leader_epoch_checkpoint"]), epochs, err)
		}
		if i == 0 {
			t.Logf("segment %d: snapshot %d bytes, entries %+v; leader_epoch_checkpoint %q", s.StartOffset, len(snap), entries, read(s.Files["leader_epoch_checkpoint"]))
		}
	}

	// The consumer was served from the remote: the broker's
	// RemoteIndexCache (<log dir>/remote-log-index-cache) holds
	// <start offset>_<segment uuid>.index for each remote segment.
	for _, s := range segs {
		if _, err := os.Stat(filepath.Join(run.Root, "kafka", "remote-log-index-cache", fmt.Sprintf("%d_%s.index", s.StartOffset, s.UUID))); err != nil {
			t.Errorf("segment %d: the broker fetched no index of it from the remote: %v", s.StartOffset, err)
		}
	}

	// The remote .log files from offset 0, then the local segments from
	// the local log start offset: what the consumer got.
	var fromFiles []tierRec
	next := int64(0)
	for _, s := range segs {
		recs, err := readLogRecords(s.Files["log"], next)
		if err != nil {
			t.Fatal(err)
		}
		fromFiles = append(fromFiles, recs...)
		if len(recs) > 0 {
			next = recs[len(recs)-1].Offset + 1
		}
	}
	localBases := logBases(run.LocalAfter)
	if len(localBases) != 1 || localBases[0] != run.EarliestLocal {
		t.Errorf("local segments %v after local retention, want only the active one at %d", localBases, run.EarliestLocal)
	}
	if fi, err := os.Stat(segPath(run.LocalAfter, run.EarliestLocal, segment.LogSuffix)); err != nil || fi.Size() != 0 {
		t.Errorf("the active segment %d: %v, want an empty one (every record is in the remote only, so the consumer read them from there)", run.EarliestLocal, err)
	}
	for _, base := range localBases {
		recs, err := readLogRecords(segPath(run.LocalAfter, base, segment.LogSuffix), next)
		if err != nil {
			t.Fatal(err)
		}
		fromFiles = append(fromFiles, recs...)
	}
	if errs := compareRecs(fromFiles, run.Consumed); len(errs) > 0 {
		t.Errorf("the remote and local files hold %d records from offset 0, the consumer got %d:\n  %s", len(fromFiles), len(run.Consumed), strings.Join(errs, "\n  "))
	}
	t.Logf("%d remote segments %v, local log start %d, %d records read from the files equal the consumer's; test %v",
		len(segs), starts, run.EarliestLocal, len(fromFiles), time.Since(started).Round(time.Second))
}
