package tier_test

import (
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

func TestPlanCopy(t *testing.T) {
	bases := []int64{0, 100, 200, 300} // 300 is the active segment
	for _, tt := range []struct {
		name               string
		copied, start, lso int64
		want               []tier.Candidate
	}{
		{"all_closed", -1, 0, 350, []tier.Candidate{{0, 100}, {100, 200}, {200, 300}}},
		{"lso_at_active_base", -1, 0, 300, []tier.Candidate{{0, 100}, {100, 200}, {200, 300}}},
		{"lso_inside_last_closed", -1, 0, 299, []tier.Candidate{{0, 100}, {100, 200}}},
		{"lso_at_next_base", -1, 0, 100, []tier.Candidate{{0, 100}}},
		{"lso_below_next_base", -1, 0, 99, nil},
		{"lso_zero", -1, 0, 0, nil},
		{"resume_after_copied", 99, 0, 350, []tier.Candidate{{100, 200}, {200, 300}}},
		{"all_copied", 299, 0, 350, nil},
		{"copied_reaches_lso", 299, 0, 299, nil},
		{"log_start_above_copied", -1, 150, 350, []tier.Candidate{{100, 200}, {200, 300}}},
		{"log_start_at_base", 99, 200, 350, []tier.Candidate{{200, 300}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tier.PlanCopy(bases, tt.copied, tt.start, tt.lso)
			if !slices.Equal(got, tt.want) {
				t.Errorf("PlanCopy = %v, want %v", got, tt.want)
			}
		})
	}
	if got := tier.PlanCopy([]int64{0}, -1, 0, 50); got != nil {
		t.Errorf("active only: %v", got)
	}
}

func TestPlanLocal(t *testing.T) {
	now := int64(1_000_000)
	segs := []tier.LocalSegment{
		{BaseOffset: 0, Size: 1000, LargestTimestamp: now - 90_000},
		{BaseOffset: 100, Size: 1000, LargestTimestamp: now - 70_000},
		{BaseOffset: 200, Size: 1000, LargestTimestamp: now - 10_000},
		{BaseOffset: 300, Size: 500, LargestTimestamp: now}, // active
	}
	base := tier.LocalParams{NowMs: now, LogEndOffset: 350, HighWatermark: 350, HighestCopiedOffset: 299, RetentionMs: -1, RetentionBytes: -1}
	for _, tt := range []struct {
		name string
		p    func(p *tier.LocalParams)
		want int
		why  []string
	}{
		{"no_limits", func(p *tier.LocalParams) {}, 0, nil},
		{"time", func(p *tier.LocalParams) { p.RetentionMs = 60_000 }, 2, []string{"local.retention.ms", "local.retention.ms"}},
		{"time_exact_not_past", func(p *tier.LocalParams) { p.RetentionMs = 70_000 }, 1, []string{"local.retention.ms"}},
		{"time_but_not_copied", func(p *tier.LocalParams) { p.RetentionMs = 60_000; p.HighestCopiedOffset = 98 }, 0, nil},
		{"time_copied_one", func(p *tier.LocalParams) { p.RetentionMs = 60_000; p.HighestCopiedOffset = 99 }, 1, []string{"local.retention.ms"}},
		{"nothing_copied", func(p *tier.LocalParams) { p.RetentionMs = 0; p.HighestCopiedOffset = -1 }, 0, nil},
		{"hw_below_end", func(p *tier.LocalParams) { p.RetentionMs = 0; p.HighWatermark = 150 }, 1, []string{"local.retention.ms"}},
		{"never_active", func(p *tier.LocalParams) { p.RetentionMs = 0; p.HighestCopiedOffset = 1 << 40 }, 3, nil},
		{"bytes", func(p *tier.LocalParams) { p.RetentionBytes = 1500 }, 2, []string{"local.retention.bytes", "local.retention.bytes"}},
		{"bytes_exact", func(p *tier.LocalParams) { p.RetentionBytes = 3500 }, 0, nil},
		{"bytes_one", func(p *tier.LocalParams) { p.RetentionBytes = 2500 }, 1, []string{"local.retention.bytes"}},
		{"bytes_not_copied", func(p *tier.LocalParams) { p.RetentionBytes = 0; p.HighestCopiedOffset = 150 }, 1, []string{"local.retention.bytes"}},
		{"time_then_bytes", func(p *tier.LocalParams) { p.RetentionMs = 80_000; p.RetentionBytes = 1000 }, 2, []string{"local.retention.ms", "local.retention.bytes"}},
		{"below_log_start", func(p *tier.LocalParams) { p.HighestCopiedOffset = -1; p.LogStartOffset = 200 }, 2, []string{"log start offset", "log start offset"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := base
			tt.p(&p)
			n, why := tier.PlanLocal(segs, p)
			if n != tt.want || (tt.why != nil && !slices.Equal(why, tt.why)) {
				t.Errorf("PlanLocal = %d %v, want %d %v", n, why, tt.want, tt.why)
			}
		})
	}
}

func TestPlanRemote(t *testing.T) {
	now := int64(1_000_000)
	seg := func(start, size, ts int64) tier.SegmentMetadata {
		return tier.SegmentMetadata{StartOffset: start, EndOffset: start + 99, SegmentSizeInBytes: size, MaxTimestampMs: ts}
	}
	segs := []tier.SegmentMetadata{seg(0, 1000, now-50_000), seg(100, 1000, now-40_000), seg(200, 1000, now-100)}
	for _, tt := range []struct {
		name string
		p    tier.RemoteParams
		want int
	}{
		{"none", tier.RemoteParams{NowMs: now, RetentionMs: -1, RetentionBytes: -1}, 0},
		{"time", tier.RemoteParams{NowMs: now, RetentionMs: 45_000, RetentionBytes: -1}, 1},
		{"time_inclusive", tier.RemoteParams{NowMs: now, RetentionMs: 40_000, RetentionBytes: -1}, 2},
		{"bytes_counts_local", tier.RemoteParams{NowMs: now, OnlyLocalSize: 600, RetentionMs: -1, RetentionBytes: 2000}, 1},
		{"bytes_not_enough", tier.RemoteParams{NowMs: now, OnlyLocalSize: 600, RetentionMs: -1, RetentionBytes: 2700}, 0},
		{"bytes_all", tier.RemoteParams{NowMs: now, OnlyLocalSize: 500, RetentionMs: -1, RetentionBytes: 0}, 3},
		{"time_then_bytes", tier.RemoteParams{NowMs: now, OnlyLocalSize: 1000, RetentionMs: 45_000, RetentionBytes: 2000}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if n, why := tier.PlanRemote(segs, tt.p); n != tt.want {
				t.Errorf("PlanRemote = %d %v, want %d", n, why, tt.want)
			}
		})
	}
}

// TestTieredLifecycle is the experiment at a small scale: copy,
// local retention leaving only the active segment, reads from offset 0
// served by the remote with the records a local read returned, then total
// retention.
func TestTieredLifecycle(t *testing.T) {
	fsys := vfs.NewMem()
	c := newClock(t0)
	cfg := tieredConfig(t, 4096, map[string]string{"local.retention.ms": "60000"})
	fill(t, fsys, cfg, c, 400)

	l, tr, rep := mustOpen(t, fsys, cfg, c)
	if len(rep.CopiesAbandoned)+len(rep.DeletesFinished)+len(rep.Unknown)+len(rep.Missing) != 0 {
		t.Fatalf("fresh start-up did something: %+v", rep)
	}
	localTotal, _, err := collect(t, tr, 1500)
	if err != nil || localTotal != 400 {
		t.Fatalf("local read: %d records, %v", localTotal, err)
	}
	segs := l.Segments()
	closed := len(segs) - 1
	if closed < 4 {
		t.Fatalf("only %d closed segments", closed)
	}
	// Nothing may go before the upload.
	c.advance(120_000)
	if n, err := tr.DeleteLocal(); err != nil || n != 0 {
		t.Fatalf("local deletion before any upload: %d %v", n, err)
	}
	up, err := tr.Upload()
	if err != nil {
		t.Fatal(err)
	}
	if len(up.Copied) != closed || up.LastStableOffset != 400 {
		t.Fatalf("copied %d of %d closed segments, lso %d", len(up.Copied), closed, up.LastStableOffset)
	}
	for i, m := range up.Copied {
		if m.StartOffset != segs[i].BaseOffset() || m.EndOffset != segs[i+1].BaseOffset()-1 || m.State != tier.CopySegmentFinished || m.SegmentSizeInBytes != segs[i].Size() {
			t.Errorf("copy %d: %+v", i, m)
		}
	}
	if again, err := tr.Upload(); err != nil || len(again.Copied) != 0 {
		t.Fatalf("second upload: %d %v", len(again.Copied), err)
	}
	// The layout: six files per segment (no txn index: no aborts), the
	// epoch checkpoint as Kafka writes it, and the metadata beside.
	pd := path.Join(remoteDir, "kafka-tiered-storage", "orders-0-"+testTopicID.String())
	infos, err := vfs.ReadDir(fsys, pd)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 5*closed {
		t.Errorf("%d files in %s for %d segments", len(infos), pd, closed)
	}
	first := up.Copied[0]
	ep, err := vfs.ReadFile(fsys, path.Join(pd, tier.SegmentFileName(first.StartOffset, first.ID.ID, tier.FileLeaderEpochCheckpoint)))
	if err != nil || string(ep) != "0\n1\n0 0\n" {
		t.Errorf("first segment's leader_epoch_checkpoint %q %v", ep, err)
	}
	last := up.Copied[len(up.Copied)-1]
	ep, _ = vfs.ReadFile(fsys, path.Join(pd, tier.SegmentFileName(last.StartOffset, last.ID.ID, tier.FileLeaderEpochCheckpoint)))
	if !strings.HasPrefix(string(ep), "0\n2\n0 0\n3 ") {
		t.Errorf("last segment's leader_epoch_checkpoint %q", ep)
	}
	logBytes, _ := vfs.ReadFile(fsys, segs[0].LogPath())
	remoteLog, _ := vfs.ReadFile(fsys, path.Join(pd, tier.SegmentFileName(0, first.ID.ID, tier.FileSegment)))
	if string(logBytes) != string(remoteLog) {
		t.Error("remote .log differs from the local one")
	}
	_, err = tier.NewDir(fsys, remoteDir).FetchIndex(first, tier.IndexTransaction)
	var nf *tier.NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, tier.ErrNotFound) {
		t.Errorf("missing txn index: %v", err)
	}

	// Local retention: everything copied and older than 60 s goes.
	n, err := tr.DeleteLocal()
	if err != nil || n != closed {
		t.Fatalf("local deletion: %d of %d, %v", n, closed, err)
	}
	if _, err := l.DeletePendingSegments(); err != nil {
		t.Fatal(err)
	}
	active := l.ActiveSegment().BaseOffset()
	if got := len(l.Segments()); got != 1 {
		t.Errorf("%d local segments left", got)
	}
	if tr.LogStartOffset() != 0 || tr.LocalLogStartOffset() != active {
		t.Errorf("earliest %d earliest-local %d, want 0 and %d", tr.LogStartOffset(), tr.LocalLogStartOffset(), active)
	}
	total, remote, err := collect(t, tr, 1500)
	if err != nil || total != 400 || remote != active {
		t.Fatalf("read after local deletion: %d records (%d remote, want %d), %v", total, remote, active, err)
	}
	res, err := tr.Read(0, 1)
	if err != nil || !res.Remote || len(res.Records) == 0 {
		t.Fatalf("read at 0: remote %v, %d bytes, %v", res.Remote, len(res.Records), err)
	}
	if _, err := tr.Read(-1, 100); !errors.Is(err, kafkalog.ErrOffsetOutOfRange) {
		t.Errorf("read below the log start: %v", err)
	}
	// The engine's epoch cache now starts at the local log start offset;
	// the next upload's leader_epoch_checkpoint still starts where
	// Kafka's would, at the log start offset.
	if e := l.LeaderEpochs(); e[0].StartOffset != active {
		t.Logf("engine epochs %v", e)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	more, err := tr.Upload()
	if err != nil || len(more.Copied) != 1 {
		t.Fatalf("upload of the rolled segment: %+v %v", more.Copied, err)
	}
	m := more.Copied[0]
	ep, _ = vfs.ReadFile(fsys, path.Join(pd, tier.SegmentFileName(m.StartOffset, m.ID.ID, tier.FileLeaderEpochCheckpoint)))
	if want := fmt.Sprintf("0\n2\n0 0\n%d %d\n", up.Copied[len(up.Copied)-1].SegmentLeaderEpochs[len(up.Copied[len(up.Copied)-1].SegmentLeaderEpochs)-1].Epoch, epochStart(up.Copied)); string(ep) != want {
		t.Errorf("leader_epoch_checkpoint after local deletion %q, want %q", ep, want)
	}
	if len(m.SegmentLeaderEpochs) != 1 || m.SegmentLeaderEpochs[0] != (checkpoint.EpochEntry{Epoch: 3, StartOffset: active}) {
		t.Errorf("segmentLeaderEpochs %v", m.SegmentLeaderEpochs)
	}
	closed++
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopen: nothing to resolve; then total retention of 2 segments' age.
	cfg2 := tieredConfig(t, 4096, map[string]string{"local.retention.ms": "60000", "retention.ms": fmt.Sprint(c.millis() - up.Copied[1].MaxTimestampMs)})
	l, tr, rep = mustOpen(t, fsys, cfg2, c)
	defer l.Close()
	if len(rep.CopiesAbandoned)+len(rep.DeletesFinished)+len(rep.Unknown)+len(rep.Missing) != 0 {
		t.Fatalf("start-up after a clean run: %+v", rep)
	}
	gone, err := tr.DeleteRemote()
	if err != nil || gone != 2 {
		t.Fatalf("remote retention deleted %d, %v", gone, err)
	}
	if want := up.Copied[1].EndOffset + 1; tr.LogStartOffset() != want {
		t.Errorf("log start after remote retention %d, want %d", tr.LogStartOffset(), want)
	}
	total, _, err = collect(t, tr, 4096)
	if err != nil || total != 400-tr.LogStartOffset() {
		t.Fatalf("after remote retention: %d records, %v", total, err)
	}
	if infos, _ := vfs.ReadDir(fsys, pd); len(infos) != 5*(closed-2) {
		t.Errorf("%d remote files left", len(infos))
	}
}

func TestCompactedRefused(t *testing.T) {
	fsys := vfs.NewMem()
	c := newClock(t0)
	cfg := tieredConfig(t, 4096, nil)
	fill(t, fsys, cfg, c, 10)
	cfg.CleanupPolicy = []string{"compact"}
	l, err := kafkalog.Open(fsys, logDir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, _, err := tier.Open(fsys, l, tier.NewDir(fsys, remoteDir), tier.Options{}); !errors.Is(err, tier.ErrCompactedTopic) {
		t.Fatalf("compacted topic: %v", err)
	}
}

func TestRemoteStorageDisabled(t *testing.T) {
	fsys := vfs.NewMem()
	c := newClock(t0)
	cfg := tieredConfig(t, 4096, map[string]string{"remote.storage.enable": "false"})
	fill(t, fsys, cfg, c, 100)
	l, tr, _ := mustOpen(t, fsys, cfg, c)
	defer l.Close()
	if _, err := tr.Upload(); !errors.Is(err, tier.ErrRemoteStorageDisabled) {
		t.Fatalf("upload without remote.storage.enable: %v", err)
	}
}

// TestFailedCopyIsDeleted injects an error in the middle of a copy: Kafka
// deletes the failed copy, and so does Upload; the next Upload copies the
// segment again under a new id.
func TestFailedCopyIsDeleted(t *testing.T) {
	mem := vfs.NewMem()
	c := newClock(t0)
	cfg := tieredConfig(t, 4096, nil)
	fill(t, mem, cfg, c, 200)
	fail := true
	fsys := vfs.WithFaults(mem, vfs.Inject(errors.New("injected"), func(op vfs.Op) bool {
		return fail && op.Kind == vfs.OpRename && strings.HasSuffix(op.Path, ".timeindex.tmp")
	}))
	l, tr, _ := mustOpen(t, fsys, cfg, c)
	defer l.Close()
	if _, err := tr.Upload(); err == nil {
		t.Fatal("upload did not fail")
	}
	ms := tr.Metadata()
	if len(ms) != 1 || ms[0].State != tier.DeleteSegmentFinished || !ms[0].Abandoned {
		t.Fatalf("after the failed copy: %+v", ms)
	}
	fail = false
	up, err := tr.Upload()
	if err != nil || len(up.Copied) == 0 || up.Copied[0].StartOffset != 0 || up.Copied[0].ID == ms[0].ID {
		t.Fatalf("retry: %+v %v", up.Copied, err)
	}
	files, _ := tier.NewDir(mem, remoteDir).Files(tr.TopicIDPartition())
	for _, f := range files {
		if f.ID == ms[0].ID.ID {
			t.Errorf("file %s of the failed copy remains", f.Name)
		}
	}
}

// TestFetchRange checks FetchLogSegment's bounds.
func TestFetchRange(t *testing.T) {
	fsys := vfs.NewMem()
	c := newClock(t0)
	cfg := tieredConfig(t, 4096, nil)
	fill(t, fsys, cfg, c, 100)
	l, tr, _ := mustOpen(t, fsys, cfg, c)
	defer l.Close()
	up, err := tr.Upload()
	if err != nil || len(up.Copied) == 0 {
		t.Fatal(err)
	}
	d := tier.NewDir(fsys, remoteDir)
	m := up.Copied[0]
	rc, err := d.FetchLogSegment(m, 10, 30)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	whole, _ := vfs.ReadFile(fsys, l.Segments()[0].LogPath())
	if string(b) != string(whole[10:30]) {
		t.Error("range differs")
	}
	if _, err := d.FetchLogSegment(m, m.SegmentSizeInBytes+1, -1); err == nil {
		t.Error("a range past the end was served")
	}
	m.ID.ID = segUUID
	if _, err := d.FetchLogSegment(m, 0, -1); !errors.Is(err, tier.ErrNotFound) {
		t.Errorf("unknown segment: %v", err)
	}
	if err := d.DeleteLogSegmentData(m); err != nil {
		t.Errorf("deleting an unknown segment: %v", err)
	}
}

// TestUnknownRemoteFiles: files in the partition directory that no
// metadata knows are reported at start-up and left alone.
func TestUnknownRemoteFiles(t *testing.T) {
	fsys := vfs.NewMem()
	c := newClock(t0)
	cfg := tieredConfig(t, 4096, nil)
	fill(t, fsys, cfg, c, 100)
	l, tr, _ := mustOpen(t, fsys, cfg, c)
	if _, err := tr.Upload(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	pd := tier.NewDir(fsys, remoteDir).PartitionDir(tr.TopicIDPartition())
	stray := []string{tier.SegmentFileName(5, segUUID, tier.FileSegment), "README", "x.tmp"}
	for _, name := range stray {
		if err := vfs.WriteFile(fsys, path.Join(pd, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, _, rep := mustOpen(t, fsys, cfg, c)
	defer l.Close()
	slices.Sort(rep.Unknown)
	slices.Sort(stray)
	if !slices.Equal(rep.Unknown, stray) || len(rep.Missing) != 0 {
		t.Fatalf("unknown %v, missing %v", rep.Unknown, rep.Missing)
	}
	for _, name := range stray {
		if _, err := fsys.Stat(path.Join(pd, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
}

// epochStart is where epoch 3 began, from the copies' segmentLeaderEpochs.
func epochStart(ms []tier.SegmentMetadata) int64 {
	for _, m := range ms {
		for _, e := range m.SegmentLeaderEpochs {
			if e.Epoch == 3 {
				return e.StartOffset
			}
		}
	}
	return -1
}

// TestRemoteRetentionMovesLocal: total retention deletes copied segments
// still on local disk (local.retention.ms -2 = retention.ms, remote
// retention run first); the local segments below the new log start
// offset go with them, and a reopen finds nothing left to do.
func TestRemoteRetentionMovesLocal(t *testing.T) {
	fsys := vfs.NewMem()
	c := newClock(t0)
	cfg0 := tieredConfig(t, 4096, nil)
	fill(t, fsys, cfg0, c, 300)
	l, tr, _ := mustOpen(t, fsys, cfg0, c)
	if _, err := tr.Upload(); err != nil {
		t.Fatal(err)
	}
	ts1, _ := l.Segments()[1].LargestTimestamp()
	next2 := l.Segments()[2].BaseOffset()
	l.Close()
	c.advance(100_000)
	cfg := tieredConfig(t, 4096, map[string]string{"retention.ms": fmt.Sprint(c.millis() - ts1), "file.delete.delay.ms": "0"})
	l, tr, _ = mustOpen(t, fsys, cfg, c)
	n, err := tr.DeleteRemote()
	if err != nil || n != 2 {
		t.Fatalf("remote retention: %d %v", n, err)
	}
	if tr.LogStartOffset() != next2 || tr.LocalLogStartOffset() != next2 || l.Segments()[0].BaseOffset() != next2 {
		t.Fatalf("log start %d, local %d, first local segment %d; want %d", tr.LogStartOffset(), tr.LocalLogStartOffset(), l.Segments()[0].BaseOffset(), next2)
	}
	if total, remote, err := collect(t, tr, 3000); err != nil || total != 300-next2 || remote != 0 {
		t.Fatalf("read: %d (%d remote) %v", total, remote, err)
	}
	l.Close()
	l, tr, rep := mustOpen(t, fsys, cfg, c)
	defer l.Close()
	if rep.LocalSegmentsDeleted != 0 || tr.LogStartOffset() != next2 {
		t.Fatalf("reopen: %+v, log start %d", rep, tr.LogStartOffset())
	}
}
