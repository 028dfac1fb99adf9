package oracle_test

// segkit's tiered storage (package tier) judged by the broker's: the same
// scenario as TestTieredStorageMatchesBroker (runTieredScenario), then
//   - reads: tier over the broker's own remote directory and partition
//     directory (both read-only) serves, from offset 0, the records the
//     broker's consumer got, with the broker's ListOffsets answers;
//   - uploads: tier over a copy of the partition directory before local
//     retention uploads, in the same layout, what the broker uploaded,
//     file for file and byte for byte (names aside: the segment uuids).

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

// tierTopicConfig is the topic's configuration at the broker once the
// records were in (runTieredScenario's, with local.retention.ms set).
func tierTopicConfig(t *testing.T) kafkalog.Config {
	t.Helper()
	cfg, err := config.ParseOptions{}.Parse(map[string]string{
		"remote.storage.enable": "true",
		"segment.bytes":         strconv.Itoa(tierSegmentBytes),
		"cleanup.policy":        "delete",
		"retention.ms":          "-1",
		"retention.bytes":       "-1",
		"local.retention.ms":    strconv.Itoa(tierLocalRetMs),
		"file.delete.delay.ms":  "100",
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// treeState is every file under a directory: path, size, mtime, sha256.
func treeState(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v %d %d", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// decodeRecs decodes the v2 batches of b (whole entries), keeping the
// records at or above from.
func decodeRecs(b []byte, from int64) ([]tierRec, error) {
	var out []tierRec
	var it record.Iterator
	var r record.Record
	for len(b) > 0 {
		bt, rest, err := record.ReadBatch(b)
		if err != nil {
			return nil, err
		}
		it.Reset(&bt)
		for it.Next(&r) {
			if r.Offset >= from {
				out = append(out, tierRec{Offset: r.Offset, Timestamp: r.Timestamp, Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value)})
			}
		}
		if err := it.Err(); err != nil {
			return nil, err
		}
		b = rest
	}
	return out, nil
}

// TestTierSegkitMatchesBroker runs runTieredScenario once, then its two
// subtests on the result.
func TestTierSegkitMatchesBroker(t *testing.T) {
	t.Parallel() // two at a time: one alone keeps 1.3 of the 2 cores busy
	started := time.Now()
	run := runTieredScenario(t)
	t.Logf("broker scenario %v", time.Since(started).Round(time.Millisecond))
	t.Run("reads-broker-remote", func(t *testing.T) { tierSegkitReads(t, run) })
	t.Run("uploads-as-broker", func(t *testing.T) { tierSegkitUploads(t, run) })
	t.Run("verifies-broker-remote", func(t *testing.T) { tierSegkitVerifies(t, run) })
}

// tierSegkitVerifies: tier.Verify (segviz verify --remote) over the
// broker's partition directory and its remote reads one log of every
// record from offset 0, the remote segments from their files alone (the
// broker's metadata is in __remote_log_metadata), and finds no error and
// no remote-* warning in what Kafka wrote. Neither directory changes.
func tierSegkitVerifies(t *testing.T, run *tieredRun) {
	fsys := vfs.OS()
	remoteTop := filepath.Dir(run.RemoteRoot)
	beforeLocal, beforeRemote := treeState(t, run.LocalAfter), treeState(t, remoteTop)
	tid, err := checkpoint.ParseUUID(run.TopicID)
	if err != nil {
		t.Fatal(err)
	}
	tp := tier.TopicIDPartition{TopicID: tid, Topic: run.Topic, Partition: run.Partition}
	rep, rr, err := tier.Verify(fsys, filepath.ToSlash(run.LocalAfter), tier.NewDir(fsys, filepath.ToSlash(remoteTop)), tp, inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		if p.Level == finding.Error || strings.HasPrefix(p.Kind, "remote-") {
			t.Errorf("verify of the broker's tiered partition: %s", p)
		} else {
			t.Logf("verify: %s", p)
		}
	}
	pr := rep.Partitions[0]
	if rr.Metadata != "files" || rr.Segments != len(logBases(run.LocalBefore)) || rr.Viewed != rr.Segments || pr.LogStartOffset != run.Earliest || pr.LogEndOffset != run.Latest || pr.Records != int64(len(run.Consumed)) {
		t.Errorf("verify: remote %+v; log %d..%d with %d records; want every remote segment viewed, log %d..%d with the consumer's %d records",
			rr, pr.LogStartOffset, pr.LogEndOffset, pr.Records, run.Earliest, run.Latest, len(run.Consumed))
	}
	if after := treeState(t, run.LocalAfter); !slices.Equal(after, beforeLocal) {
		t.Errorf("the broker's partition directory changed")
	}
	if after := treeState(t, remoteTop); !slices.Equal(after, beforeRemote) {
		t.Errorf("the broker's remote changed")
	}
	t.Logf("verify --remote over the broker's: %d remote segments (%d-%d) and the local ones, %d records, %d problems", rr.Segments, rr.StartOffset, rr.EndOffset, pr.Records, len(rep.Problems))
}

// tierSegkitReads: tier.Open over the broker's partition directory after
// it stopped (kafkalog read-only) and its remote (tier.Dir.Discover, then
// tier.ReadOnly: the broker's metadata is in __remote_log_metadata, and
// nothing may be written there) reads from offset 0 to the log end what
// the broker's consumer got, with the broker's ListOffsets answers. Neither
// directory changes.
func tierSegkitReads(t *testing.T, run *tieredRun) {
	started := time.Now()
	fsys := vfs.OS()
	remoteTop := filepath.Dir(run.RemoteRoot) // rsm.config.dir
	beforeLocal, beforeRemote := treeState(t, run.LocalAfter), treeState(t, remoteTop)

	l, err := kafkalog.Open(fsys, filepath.ToSlash(run.LocalAfter), tierTopicConfig(t), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tid, err := checkpoint.ParseUUID(run.TopicID)
	if err != nil {
		t.Fatal(err)
	}
	tp := tier.TopicIDPartition{TopicID: tid, Topic: run.Topic, Partition: run.Partition}
	d := tier.NewDir(fsys, filepath.ToSlash(remoteTop))
	if got := filepath.FromSlash(d.PartitionDir(tp)); got != run.RemoteDir {
		t.Fatalf("tier.Dir's partition directory %s, the broker's %s", got, run.RemoteDir)
	}
	ms, err := d.Discover(tp)
	if err != nil {
		t.Fatal(err)
	}
	// What the files say of each segment.
	var starts []int64
	for i, m := range ms {
		starts = append(starts, m.StartOffset)
		end := int64(tierRecords) - 1
		if i+1 < len(ms) {
			end = ms[i+1].StartOffset - 1
		}
		fi, err := os.Stat(filepath.FromSlash(d.FilePath(m, tier.FileSegment)))
		if err != nil {
			t.Fatal(err)
		}
		if m.EndOffset != end || m.MaxTimestampMs != tierBaseTime+end || m.SegmentSizeInBytes != fi.Size() || !m.TxnIdxEmpty ||
			!slices.Equal(m.SegmentLeaderEpochs, []checkpoint.EpochEntry{{Epoch: 0, StartOffset: m.StartOffset}}) || m.State != tier.CopySegmentFinished {
			t.Errorf("discovered segment %d: %+v; want end %d, max timestamp %d, size %d, epoch 0 from %d, no aborted transactions, finished", m.StartOffset, m, end, tierBaseTime+end, fi.Size(), m.StartOffset)
		}
	}
	if want := logBases(run.LocalBefore); !slices.Equal(starts, want) {
		t.Fatalf("discovered segments at %v, want the broker's %v", starts, want)
	}

	tr, rep, err := tier.Open(fsys, l, tier.ReadOnly(d, ms), tier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unknown)+len(rep.Missing)+len(rep.CopiesAbandoned)+len(rep.DeletesFinished)+len(rep.TempRemoved)+rep.LocalSegmentsDeleted > 0 {
		t.Errorf("tier.Open's start-up report over the broker's remote: %+v, want nothing to resolve", rep)
	}
	if got := []int64{tr.LogStartOffset(), tr.LocalLogStartOffset(), tr.HighestCopiedOffset(), l.LogEndOffset()}; !slices.Equal(got, []int64{run.Earliest, run.EarliestLocal, run.LatestTiered, run.Latest}) {
		t.Errorf("tier: log start %d, local log start %d, highest copied %d, log end %d; the broker's ListOffsets: earliest %d, earliest-local %d, latest-tiered %d, latest %d",
			got[0], got[1], got[2], got[3], run.Earliest, run.EarliestLocal, run.LatestTiered, run.Latest)
	}

	// Read from 0 to the log end, as a consumer fetches (1 MiB at most).
	var got []tierRec
	reads, remote := 0, 0
	for off := int64(0); off < l.LogEndOffset(); {
		res, err := tr.Read(off, 1<<20)
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		reads++
		if res.Remote {
			remote++
		}
		recs, err := decodeRecs(res.Records, off)
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		if len(recs) == 0 {
			t.Fatalf("Read(%d) returned no records (%d bytes, remote %v)", off, len(res.Records), res.Remote)
		}
		got = append(got, recs...)
		off = recs[len(recs)-1].Offset + 1
	}
	if errs := compareRecs(got, run.Consumed); len(errs) > 0 {
		t.Errorf("tier read %d records from offset 0, the broker's consumer got %d:\n  %s", len(got), len(run.Consumed), strings.Join(errs, "\n  "))
	}
	if errs := compareRecs(got, run.Produced); len(errs) > 0 {
		t.Errorf("tier read %d records from offset 0, the test produced %d:\n  %s", len(got), len(run.Produced), strings.Join(errs, "\n  "))
	}
	// Reads of one entry at every 7th offset (maxBytes 1: the entry
	// holding it, whole), each through the remote offset index to a
	// position inside its segment.
	spot := 0
	for off := int64(0); off < l.LogEndOffset(); off += 7 {
		res, err := tr.Read(off, 1)
		if err != nil {
			t.Fatalf("Read(%d, 1): %v", off, err)
		}
		recs, err := decodeRecs(res.Records, off)
		if err != nil || len(recs) == 0 || recs[0].Offset != off || len(recs) > tierBatch || !res.Remote {
			t.Fatalf("Read(%d, 1): %d records from %v (remote %v), %v; want the one batch holding %d, from the remote", off, len(recs), recs[:min(1, len(recs))], res.Remote, err, off)
		}
		if errs := compareRecs(recs[:1], run.Consumed[off:off+1]); len(errs) > 0 {
			t.Errorf("Read(%d, 1): %s", off, errs[0])
		}
		spot++
	}
	// Past the end, and below nothing: Kafka's OffsetOutOfRange at the end+1.
	var oor *kafkalog.OffsetOutOfRangeError
	if _, err := tr.Read(l.LogEndOffset()+1, 1); !errors.As(err, &oor) {
		t.Errorf("Read(%d): %v, want an OffsetOutOfRangeError", l.LogEndOffset()+1, err)
	}
	// Nothing may be written to the broker's directories.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if after := treeState(t, run.LocalAfter); !slices.Equal(after, beforeLocal) {
		t.Errorf("the broker's partition directory changed:\n  before %v\n  after  %v", beforeLocal, after)
	}
	if after := treeState(t, remoteTop); !slices.Equal(after, beforeRemote) {
		t.Errorf("the broker's remote changed:\n  before %v\n  after  %v", beforeRemote, after)
	}
	t.Logf("tier over the broker's remote: %d segments discovered %v; earliest %d, earliest-local %d, highest copied %d; %d reads of 1 MiB (%d from the remote) returned the consumer's %d records, %d one-entry reads the records at their offsets; %v",
		len(ms), starts, tr.LogStartOffset(), tr.LocalLogStartOffset(), tr.HighestCopiedOffset(), reads, remote, len(got), spot, time.Since(started).Round(time.Millisecond))
}

// tierSegkitUploads: a copy of the partition directory before local
// retention (three closed segments, 0 to 2999, and the active one at 3000
// with 1,000 records), opened writable, with the topic's configuration, and
// tiered to a fresh tier.Dir in the broker's order (its server.log):
// Upload (the closed segments), DeleteLocal, the roll Kafka's local
// retention makes ("Rolling the active segment to make it eligible for
// deletion"; tier has no such roll: Log.Roll), Upload (the segment at
// 3000), DeleteLocal. The result must equal the broker's remote file for
// file: the partition directory's name (topic id from partition.metadata),
// the segments by start offset, the file types, and every file's bytes;
// and the broker's offsets and local directory, with two accepted
// differences of the local directory (see below).
func tierSegkitUploads(t *testing.T, run *tieredRun) {
	started := time.Now()
	fsys := vfs.OS()
	work := t.TempDir()
	local := filepath.Join(work, "kafka", filepath.Base(run.LocalBefore))
	copyDir(t, run.LocalBefore, local)
	remoteTop := filepath.Join(work, "remote")
	if err := os.MkdirAll(remoteTop, 0o755); err != nil {
		t.Fatal(err)
	}
	var have []string
	ents, _ := os.ReadDir(local)
	for _, e := range ents {
		have = append(have, e.Name())
	}
	t.Logf("the partition before local retention: %v", have)

	l, err := kafkalog.Open(fsys, filepath.ToSlash(local), tierTopicConfig(t), kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// The copy was taken from a running broker: no clean-shutdown marker,
	// no recovery point, so the engine recovers it (rebuilding indexes as
	// Kafka's LogLoader would; the closed ones must still equal the
	// broker's uploads).
	if lr := l.LoadReport(); len(lr.Problems) > 0 {
		t.Errorf("loading the copy: %v", lr.Problems)
	} else {
		t.Logf("loaded the copy: clean shutdown %v, recovery point %d, %d segments recovered, %d files deleted", lr.CleanShutdown, lr.RecoveryPoint, len(lr.Recovered), len(lr.Deleted))
	}
	// Recovery rewrote nothing the broker had closed: the files of the
	// closed segments and their snapshots are still the broker's bytes.
	var changed []string
	for _, name := range have {
		a, _ := os.ReadFile(filepath.Join(run.LocalBefore, name))
		b, err := os.ReadFile(filepath.Join(local, name))
		if err != nil || !bytes.Equal(a, b) {
			changed = append(changed, name)
		}
	}
	active := segPath("", logBases(run.LocalBefore)[len(logBases(run.LocalBefore))-1], "")
	if slices.ContainsFunc(changed, func(n string) bool { return !strings.HasPrefix(n, active) }) {
		t.Errorf("loading the copy changed files of the closed segments: %v", changed)
	}
	t.Logf("files loading changed (the active segment's only): %v", changed)
	// One replica: the high watermark is the log end.
	l.SetHighWatermark(l.LogEndOffset())
	d := tier.NewDir(fsys, filepath.ToSlash(remoteTop))
	tr, rep, err := tier.Open(fsys, l, d, tier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unknown)+len(rep.Missing) > 0 {
		t.Errorf("start-up report %+v", rep)
	}
	if l.LogEndOffset() != tierRecords || l.ActiveSegment().BaseOffset() != 3000 {
		t.Fatalf("the copy: log end %d, active segment at %d; want %d, 3000", l.LogEndOffset(), l.ActiveSegment().BaseOffset(), tierRecords)
	}
	// The broker's order (its server.log): the closed segments are
	// copied; local retention rolls the active segment, deletes the
	// copied ones, and the next copy takes the rolled one, which the next
	// retention check deletes.
	up1, err := tr.Upload()
	if err != nil {
		t.Fatal(err)
	}
	// tier's local retention never rolls: it deletes the copied closed
	// segments and stops at the active one, earliest-local 3000 where the
	// broker's roll gets it to 4000 (an accepted difference: the roll is
	// the caller's, Log.Roll).
	n1, err := tr.DeleteLocal()
	if err != nil {
		t.Fatal(err)
	}
	if n, why, _ := tr.LocalPlan(); n1 != 3 || tr.LocalLogStartOffset() != 3000 || n != 0 {
		t.Errorf("tier's local retention before a roll: %d segments deleted, earliest-local %d, then %d more (%v); want 3, 3000, 0", n1, tr.LocalLogStartOffset(), n, why)
	}
	if err := l.Roll(); err != nil { // UnifiedLog: "Rolling the active segment to make it eligible for deletion"
		t.Fatal(err)
	}
	l.SetHighWatermark(l.LogEndOffset())
	up2, err := tr.Upload()
	if err != nil {
		t.Fatal(err)
	}
	n2, err := tr.DeleteLocal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.DeletePendingSegments(); err != nil {
		t.Fatal(err)
	}
	if got := []int64{tr.LogStartOffset(), tr.LocalLogStartOffset(), tr.HighestCopiedOffset(), l.LogEndOffset()}; !slices.Equal(got, []int64{run.Earliest, run.EarliestLocal, run.LatestTiered, run.Latest}) || n2 != 1 {
		t.Errorf("after the roll, upload and local retention: %d deleted; log start %d, local log start %d, highest copied %d, log end %d; the broker's ListOffsets: %d, %d, %d, %d",
			n2, got[0], got[1], got[2], got[3], run.Earliest, run.EarliestLocal, run.LatestTiered, run.Latest)
	}
	var copied []string
	for _, m := range append(up1.Copied, up2.Copied...) {
		copied = append(copied, fmt.Sprintf("%d-%d", m.StartOffset, m.EndOffset))
	}
	t.Logf("tier uploaded %v before the roll, %v after", len(up1.Copied), len(up2.Copied))

	// The local directory left, once closed, is the broker's: the empty
	// segment at 4000, its snapshot, the leader-epoch checkpoint.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{local, run.LocalAfter} {
		var names []string
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Logf("local directory %s: %v", dir, names)
	}
	for _, name := range []string{segPath("", 4000, ".log"), segPath("", 4000, ".snapshot"), "partition.metadata"} {
		a, aerr := os.ReadFile(filepath.Join(local, name))
		b, berr := os.ReadFile(filepath.Join(run.LocalAfter, name))
		if aerr != nil || berr != nil || !bytes.Equal(a, b) {
			t.Errorf("local %s: segkit's %d bytes (%v), the broker's %d (%v)", name, len(a), aerr, len(b), berr)
		}
	}
	// Two accepted differences of the local directory (not of the
	// remote): the empty segment's indexes, which the broker leaves as
	// empty files and the engine does not create until the segment has an
	// entry; and the leader-epoch checkpoint, which the broker keeps from
	// the log start offset (0 0) and the engine truncates to its own start,
	// the local one (0 4000; tier rebuilds the full list for each upload's
	// leader_epoch_checkpoint from the remote metadata).
	for _, ext := range []string{".index", ".timeindex"} {
		a, aerr := os.ReadFile(filepath.Join(local, segPath("", 4000, ext)))
		b, berr := os.ReadFile(filepath.Join(run.LocalAfter, segPath("", 4000, ext)))
		if berr != nil || len(b) != 0 || aerr == nil && len(a) != 0 || aerr != nil && !os.IsNotExist(aerr) {
			t.Errorf("local %s of the empty segment: segkit's %d bytes (%v), the broker's %d (%v); want no file or an empty one, and an empty one", ext, len(a), aerr, len(b), berr)
		}
	}
	a, _ := os.ReadFile(filepath.Join(local, "leader-epoch-checkpoint"))
	b, _ := os.ReadFile(filepath.Join(run.LocalAfter, "leader-epoch-checkpoint"))
	if string(a) != "0\n1\n0 4000\n" || string(b) != "0\n1\n0 0\n" {
		t.Errorf("local leader-epoch-checkpoint: segkit's %q, the broker's %q; want %q and %q", a, b, "0\n1\n0 4000\n", "0\n1\n0 0\n")
	}
	if got, want := logBases(local), logBases(run.LocalAfter); !slices.Equal(got, want) {
		t.Errorf("local segments %v, the broker's %v", got, want)
	}

	// The partition directory: the same name.
	pd := filepath.FromSlash(d.PartitionDir(tr.TopicIDPartition()))
	if filepath.Base(pd) != filepath.Base(run.RemoteDir) {
		t.Errorf("segkit's remote partition directory %s, the broker's %s", filepath.Base(pd), filepath.Base(run.RemoteDir))
	}
	// The remote root holds that directory only.
	if ents, err := os.ReadDir(filepath.Join(remoteTop, tier.RootDirName)); err != nil || len(ents) != 1 {
		t.Errorf("%s: %d entries (%v), want the partition's directory only", tier.RootDirName, len(ents), err)
	}
	mine, err := readRemotePartition(pd)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := readRemotePartition(run.RemoteDir)
	if err != nil {
		t.Fatal(err)
	}
	startsOf := func(ss []remoteSegment) (out []int64) {
		for _, s := range ss {
			out = append(out, s.StartOffset)
		}
		return out
	}
	if !slices.Equal(startsOf(mine), startsOf(theirs)) {
		t.Fatalf("segkit uploaded segments %v (%v), the broker %v", startsOf(mine), copied, startsOf(theirs))
	}
	files, diffs := 0, 0
	for i, s := range mine {
		b := theirs[i]
		if got, want := sortedKeys(s.Files), sortedKeys(b.Files); !slices.Equal(got, want) {
			t.Errorf("segment %d: segkit's files %v, the broker's %v", s.StartOffset, got, want)
			continue
		}
		for _, typ := range sortedKeys(s.Files) {
			files++
			mb, err := os.ReadFile(s.Files[typ])
			if err != nil {
				t.Fatal(err)
			}
			bb, err := os.ReadFile(b.Files[typ])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(mb, bb) {
				diffs++
				at := 0
				for at < min(len(mb), len(bb)) && mb[at] == bb[at] {
					at++
				}
				t.Errorf("segment %d .%s: segkit's %d bytes, the broker's %d; first difference at byte %d (segkit % x, broker % x)",
					s.StartOffset, typ, len(mb), len(bb), at, mb[at:min(at+16, len(mb))], bb[at:min(at+16, len(bb))])
			}
		}
	}
	// segkit's own metadata agrees with what the files say.
	disc, err := d.Discover(tr.TopicIDPartition())
	if err != nil {
		t.Fatal(err)
	}
	meta := tr.Metadata()
	if len(disc) != len(meta) {
		t.Errorf("Discover found %d segments in segkit's upload, its metadata has %d", len(disc), len(meta))
	}
	for i := range min(len(disc), len(meta)) {
		x, y := disc[i], meta[i]
		x.EventTimestampMs, y.EventTimestampMs, x.BrokerID, y.BrokerID = 0, 0, 0, 0
		if fmt.Sprint(x) != fmt.Sprint(y) {
			t.Errorf("segment %d: discovered %+v, recorded %+v", y.StartOffset, disc[i], meta[i])
		}
	}
	t.Logf("segkit's upload (%s) equals the broker's remote (%s): %d segments %v, %d files, %d differ; %v",
		filepath.Base(pd), filepath.Base(run.RemoteDir), len(mine), copied, files, diffs, time.Since(started).Round(time.Millisecond))
}
