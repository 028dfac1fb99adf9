package compaction_test

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

const day = int64(24 * 3600_000)

func clean(t *testing.T, fsys vfs.FS, dir string, props map[string]string, now int64) *compaction.Report {
	t.Helper()
	rep, err := compaction.Clean(fsys, dir, testConfig(t, props), compaction.Options{Clock: clock{now}})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Only the latest value of each key stays; the active segment is left
// alone (testCleanSegments).
func TestLatestValuePerKey(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/kafka/orders-0"
	p := newLog(t, fsys, dir, nil)
	p.put(compress.None, kv{"a", "1"}, kv{"b", "1"}, kv{"a", "2"})
	p.put(compress.Gzip, kv{"c", "1"}, kv{"b", "2"})
	p.roll()
	p.put(compress.None, kv{"a", "3"}, kv{"d", "1"})
	p.roll()
	p.put(compress.None, kv{"a", "4"}) // the active segment
	p.close()

	rep := clean(t, fsys, dir, nil, t0+day)
	if !rep.Cleanable || rep.FirstDirtyOffset != 0 || rep.FirstUncleanableOffset != 7 || rep.EndOffset != 7 {
		t.Fatalf("range: %+v", rep)
	}
	want := []string{"3:c=1", "4:b=2", "5:a=3", "6:d=1", "7:a=4"}
	if got := contents(t, fsys, dir); !slices.Equal(got, want) {
		t.Fatalf("after the clean:\n got %v\nwant %v", got, want)
	}
	if rep.Removed.Superseded != 3 || rep.Stats.MessagesRead != 7 || rep.Stats.MessagesWritten != 4 {
		t.Errorf("removed %+v, stats %+v", rep.Removed, rep.Stats)
	}
	// The checkpoint now says the next clean starts at 7: nothing is dirty.
	m, err := checkpoint.ReadOffsets(fsys, "/kafka/"+compaction.CleanerCheckpointFile)
	if err != nil || m[checkpoint.TopicPartition{Topic: "orders", Partition: 0}] != 7 {
		t.Fatalf("checkpoint %v, %v", m, err)
	}
	again := clean(t, fsys, dir, nil, t0+day)
	if again.Cleanable || !strings.Contains(again.Why, "nothing is dirty") {
		t.Fatalf("second clean: %s", again)
	}
}

// A tombstone stays until delete.retention.ms past the clean that stamped
// its batch's delete horizon, and goes at the first clean after it: two
// passes (KIP-534, testCleanTombstone).
func TestTombstoneTwoPasses(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/kafka/t-0"
	props := map[string]string{"delete.retention.ms": "1000"}
	p := newLog(t, fsys, dir, props)
	p.put(compress.None, kv{"a", "1"}, kv{"b", "1"})
	p.put(compress.None, kv{"a", "-"})
	p.roll()
	p.put(compress.None, kv{"z", "1"})
	p.close()

	now := t0 + day
	first := clean(t, fsys, dir, props, now)
	if got, want := contents(t, fsys, dir), []string{"1:b=1", "2:a=-", "3:z=1"}; !slices.Equal(got, want) {
		t.Fatalf("first pass: got %v want %v", got, want)
	}
	if len(first.Horizons) != 1 || first.Horizons[0].DeleteHorizonMs != now+1000 || !first.Horizons[0].New || first.Horizons[0].Tombstones != 1 {
		t.Fatalf("horizons %+v", first.Horizons)
	}
	checkHorizon(t, fsys, dir, 2, now+1000)

	// Before the horizon the tombstone stays (the checkpoint is removed so
	// that the whole log is dirty again).
	fsys.Remove("/kafka/" + compaction.CleanerCheckpointFile)
	clean(t, fsys, dir, props, now+999)
	if got := contents(t, fsys, dir); !slices.Contains(got, "2:a=-") {
		t.Fatalf("tombstone gone before its horizon: %v", got)
	}
	fsys.Remove("/kafka/" + compaction.CleanerCheckpointFile)
	second := clean(t, fsys, dir, props, now+1000)
	// The batch ending the round stays, empty, "so that last offset
	// information is not lost".
	if got, want := contents(t, fsys, dir), []string{"1:b=1", "2:<empty>", "3:z=1"}; !slices.Equal(got, want) {
		t.Fatalf("second pass: got %v want %v", got, want)
	}
	if second.Removed.Tombstones != 1 {
		t.Errorf("removed %+v", second.Removed)
	}
}

// checkHorizon checks that the batch at offset carries the delete horizon
// bit with baseTimestamp = horizon.
func checkHorizon(t *testing.T, fsys vfs.FS, dir string, offset, horizon int64) {
	t.Helper()
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	res, err := l.Read(offset, 1<<20, nil, kafkalog.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := record.ReadBatch(res.Records)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Attributes.HasDeleteHorizon() || b.DeleteHorizonMs() != horizon {
		t.Fatalf("batch at %d: attributes %#x, baseTimestamp %d; want the horizon %d", b.BaseOffset, b.Attributes, b.BaseTimestamp, horizon)
	}
}

// Aborted records go whatever their key; markers stay while a batch of
// their transaction does, then until their horizon; the .txnindex is
// rebuilt (testAbortMarkerRemoval, testCommitMarkerRemoval).
func TestTransactions(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/kafka/txn-0"
	props := map[string]string{"delete.retention.ms": "0"}
	p := newLog(t, fsys, dir, props)
	p.txn(10, kv{"a", "aborted"}) // 0
	p.put(compress.None, kv{"b", "1"})
	p.end(10, record.ControlAbort)     // 2
	p.txn(11, kv{"c", "committed"})    // 3
	p.end(11, record.ControlCommit)    // 4
	p.put(compress.None, kv{"c", "2"}) // 5: supersedes 3
	p.roll()
	p.put(compress.None, kv{"x", "1"})
	p.close()

	// Days later: the producers have expired, nothing is kept for them.
	now := t0 + 3*day
	rep := clean(t, fsys, dir, props, now)
	// Both markers stay, stamped: a batch of each transaction was read in
	// this pass (the aborted one at 0, the committed one at 3, superseded).
	// The aborted transaction is still in the .txnindex.
	want := []string{"1:b=1", "2:<marker>", "4:<marker>", "5:c=2", "6:x=1"}
	if got := contents(t, fsys, dir); !slices.Equal(got, want) {
		t.Fatalf("first pass: got %v want %v", got, want)
	}
	if rep.Removed.Aborted != 1 {
		t.Errorf("removed %+v", rep.Removed)
	}
	txns := txnIndex(t, fsys, dir, 0)
	if len(txns) != 1 || txns[0].ProducerID != 10 || txns[0].FirstOffset != 0 || txns[0].LastOffset != 2 {
		t.Fatalf(".txnindex %+v", txns)
	}
	// Second pass: no batch of either transaction is left, so the markers
	// may go once a horizon has passed — but they have none yet: this pass
	// stamps it (now+1 + delete.retention.ms 0). The aborted transaction is
	// no longer kept in the .txnindex.
	fsys.Remove("/kafka/" + compaction.CleanerCheckpointFile)
	rep = clean(t, fsys, dir, props, now+1)
	if got := contents(t, fsys, dir); !slices.Equal(got, want) {
		t.Fatalf("second pass: got %v want %v (%+v)", got, want, rep.Removed)
	}
	if len(rep.Horizons) != 1 || rep.Horizons[0].Markers != 2 || rep.Horizons[0].DeleteHorizonMs != now+1 {
		t.Fatalf("horizons %+v", rep.Horizons)
	}
	if txns := txnIndex(t, fsys, dir, 0); len(txns) != 0 {
		t.Fatalf(".txnindex after the second pass: %+v", txns)
	}
	// Third pass, past the horizon: the markers go.
	fsys.Remove("/kafka/" + compaction.CleanerCheckpointFile)
	rep = clean(t, fsys, dir, props, now+2)
	if got, want := contents(t, fsys, dir), []string{"1:b=1", "5:c=2", "6:x=1"}; !slices.Equal(got, want) {
		t.Fatalf("third pass: got %v want %v (%+v)", got, want, rep.Removed)
	}
	if rep.Removed.Markers != 2 {
		t.Errorf("removed %+v", rep.Removed)
	}
}

func txnIndex(t *testing.T, fsys vfs.FS, dir string, base int64) []struct{ ProducerID, FirstOffset, LastOffset int64 } {
	t.Helper()
	s, err := segment.Open(fsys, dir, base, segment.DefaultConfig(), segment.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.CloseHandlers()
	x, err := s.TransactionIndex()
	if err != nil {
		t.Fatal(err)
	}
	var out []struct{ ProducerID, FirstOffset, LastOffset int64 }
	for _, a := range x.All() {
		out = append(out, struct{ ProducerID, FirstOffset, LastOffset int64 }{a.ProducerID, a.FirstOffset, a.LastOffset})
	}
	return out
}

// The last batch of an active producer stays, emptied to its 61-byte
// header, so that its sequence number survives
// (testLogCleanerRetainsProducerLastSequence).
func TestLastBatchOfProducerKept(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/kafka/idem-0"
	p := newLog(t, fsys, dir, nil)
	p.idem(7, kv{"a", "1"})
	p.idem(7, kv{"a", "2"}, kv{"b", "1"})
	p.put(compress.None, kv{"a", "3"}, kv{"b", "2"})
	p.roll()
	p.put(compress.None, kv{"z", "1"})
	p.close()

	rep := clean(t, fsys, dir, nil, t0+10_000) // the producer is active
	if got, want := contents(t, fsys, dir), []string{"1:<empty>", "3:a=3", "4:b=2", "5:z=1"}; !slices.Equal(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	if rep.Removed.BatchesEmptied != 1 || len(rep.ActiveProducers) != 1 || rep.ActiveProducers[0].LastDataOffset != 2 {
		t.Fatalf("report %+v", rep)
	}
	// A day later the producer has expired: the empty batch goes.
	fsys.Remove("/kafka/" + compaction.CleanerCheckpointFile)
	rep = clean(t, fsys, dir, nil, t0+2*day)
	if got, want := contents(t, fsys, dir), []string{"3:a=3", "4:b=2", "5:z=1"}; !slices.Equal(got, want) {
		t.Fatalf("after expiry: got %v want %v (%+v)", got, want, rep.ActiveProducers)
	}
}

// A record without a key is dropped and counted as invalid
// (testCleaningWithUnkeyedMessages).
func TestUnkeyed(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/kafka/u-0"
	p := newLog(t, fsys, dir, nil)
	p.put(compress.None, kv{"", "x"}, kv{"a", "1"}, kv{"", "y"})
	p.roll()
	p.put(compress.None, kv{"z", "1"})
	p.close()
	rep := clean(t, fsys, dir, nil, t0+day)
	if rep.Stats.InvalidMessagesRead != 2 || rep.Removed.Unkeyed != 2 {
		t.Fatalf("stats %+v removed %+v", rep.Stats, rep.Removed)
	}
}

// A small offset map cleans the dirty section in several rounds
// (testPartialSegmentClean, testBuildPartialOffsetMap).
func TestMapFull(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/kafka/m-0"
	p := newLog(t, fsys, dir, nil)
	for i := range 4 {
		p.put(compress.None, kv{string(rune('a' + 2*i)), "1"}, kv{string(rune('b' + 2*i)), "1"})
		p.roll()
	}
	p.close()
	// 4 slots at 0.9: 3 keys per round.
	opt := compaction.Options{Clock: clock{t0 + day}, DedupeBufferSize: 4 * compaction.BytesPerEntry}
	rep, err := compaction.Clean(fsys, dir, testConfig(t, nil), opt)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.MapFull || rep.MapCapacity != 3 || rep.MapEntries != 3 || rep.EndOffset != 3 {
		t.Fatalf("first round: %+v", rep)
	}
	rep, err = compaction.Clean(fsys, dir, testConfig(t, nil), opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.FirstDirtyOffset != 3 || rep.EndOffset != 6 {
		t.Fatalf("second round: %s", rep)
	}
	if _, err := compaction.NewOffsetMap(24, 0.9); !errors.Is(err, compaction.ErrMapTooSmall) {
		t.Fatalf("a one-slot map: %v", err)
	}
}

// The range rules: the dirty ratio against min.cleanable.dirty.ratio,
// max.compaction.lag.ms forcing a clean, min.compaction.lag.ms holding
// young segments back, and cleanup.policy.
func TestRange(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/kafka/r-0"
	p := newLog(t, fsys, dir, nil)
	p.put(compress.None, kv{"a", "1"})
	p.roll()
	p.put(compress.None, kv{"a", "2"})
	p.roll()
	p.put(compress.None, kv{"a", "3"})
	p.close()
	now := t0 + 10*60_000
	plan := func(props map[string]string) *compaction.Report {
		t.Helper()
		rep, err := compaction.Plan(fsys, dir, testConfig(t, props), compaction.Options{Clock: clock{now}})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if r := plan(map[string]string{"min.cleanable.dirty.ratio": "1"}); r.Cleanable || r.CleanableRatio != 1 || !strings.Contains(r.Why, "not above") {
		t.Errorf("ratio 1: %s", r)
	}
	if r := plan(map[string]string{"min.cleanable.dirty.ratio": "1", "max.compaction.lag.ms": "60000"}); !r.Cleanable || !r.NeedCompactionNow {
		t.Errorf("max lag: %s", r)
	}
	if r := plan(map[string]string{"min.compaction.lag.ms": "600000"}); r.FirstUncleanableOffset != 1 || !strings.Contains(r.UncleanableBy, "min.compaction.lag.ms") {
		t.Errorf("min lag: %+v", r)
	}
	if r := plan(map[string]string{"cleanup.policy": "delete"}); r.Cleanable || !strings.Contains(r.Why, "cleanup.policy") {
		t.Errorf("delete policy: %s", r)
	}
	if _, err := compaction.Clean(fsys, dir, testConfig(t, map[string]string{"cleanup.policy": "delete"}), compaction.Options{}); !errors.Is(err, compaction.ErrNotCompacted) {
		t.Errorf("Clean of a delete topic: %v", err)
	}
}

// Plan changes nothing; it reports what Clean then does.
func TestPlanWritesNothing(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/kafka/p-0"
	p := newLog(t, fsys, dir, nil)
	p.put(compress.Zstd, kv{"a", "1"}, kv{"a", "2"}, kv{"b", "-"})
	p.txn(3, kv{"c", "1"})
	p.end(3, record.ControlAbort)
	p.roll()
	p.put(compress.None, kv{"z", "1"})
	p.close()
	before := snapshotFS(t, fsys, "/kafka")
	plan, err := compaction.Plan(fsys, dir, testConfig(t, nil), compaction.Options{Clock: clock{t0 + day}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, snapshotFS(t, fsys, "/kafka")); d != "" {
		t.Fatalf("Plan changed the directory:\n%s", d)
	}
	done := clean(t, fsys, dir, nil, t0+day)
	// Only Clean records an instant (TestCleanRecordsInstant checks it).
	if plan.Instant != nil || done.Instant == nil {
		t.Fatalf("instants: plan %v, clean %v", plan.Instant, done.Instant)
	}
	done.Instant = nil
	if d := cmp.Diff(plan, done); d != "" {
		t.Fatalf("Plan and Clean disagree:\n%s", d)
	}
}

// snapshotFS maps every file under root to its bytes.
func snapshotFS(t *testing.T, fsys vfs.FS, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(d string)
	walk = func(d string) {
		infos, err := vfs.ReadDir(fsys, d)
		if err != nil {
			t.Fatal(err)
		}
		for _, fi := range infos {
			p := path.Join(d, fi.Name())
			if fi.IsDir() {
				walk(p)
				continue
			}
			b, err := vfs.ReadFile(fsys, p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = string(b)
		}
	}
	walk(root)
	return out
}

// Clean is a writer: it takes the partition's lock, and fails while
// another writer has the partition open.
func TestCleanLocks(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/kafka/l-0"
	p := newLog(t, fsys, dir, nil)
	p.put(compress.None, kv{"a", "1"})
	p.roll()
	// p.l is still open for writing.
	_, err := compaction.Clean(fsys, dir, testConfig(t, nil), compaction.Options{Clock: clock{t0 + day}})
	var le *kafkalog.LockError
	if !errors.As(err, &le) {
		t.Fatalf("Clean beside an open writer: %v", err)
	}
	p.close()
	clean(t, fsys, dir, nil, t0+day)
}

// The files a clean leaves: the cleaned segment under the first source's
// name, no .cleaned, .swap or .deleted leftovers, indexes trimmed, and
// the clean-shutdown marker back in place.
func TestSwapLeavesNoLeftovers(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/kafka/s-0"
	props := map[string]string{"index.interval.bytes": "64"}
	p := newLog(t, fsys, dir, props)
	for i := range 30 {
		p.put(compress.None, kv{string(rune('a' + i%5)), strings.Repeat("v", 50)})
		if i%10 == 9 {
			p.roll()
		}
	}
	p.close()
	rep := clean(t, fsys, dir, props, t0+day)
	if len(rep.Groups) != 1 || !slices.Equal(rep.Groups[0].Sources, []int64{0, 10, 20}) {
		t.Fatalf("groups %+v", rep.Groups)
	}
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fi := range infos {
		names = append(names, fi.Name())
		if strings.HasSuffix(fi.Name(), segment.CleanedSuffix) || strings.HasSuffix(fi.Name(), segment.SwapSuffix) || strings.HasSuffix(fi.Name(), segment.DeletedSuffix) {
			t.Errorf("leftover %s", fi.Name())
		}
	}
	for _, want := range []string{"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex", "00000000000000000030.log"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s in %v", want, names)
		}
	}
	if ok, _, _ := checkpoint.ReadCleanShutdown(fsys, "/kafka"); !ok {
		t.Error("the clean-shutdown marker is gone")
	}
	// The cleaned segment opens and reads back after a reload.
	if got := contents(t, fsys, dir); len(got) != 5 {
		t.Fatalf("after the clean: %v", got)
	}
}
