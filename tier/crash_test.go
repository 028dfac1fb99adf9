package tier_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

const crashRecords = 200

// crashSetup prefills a partition and returns it with the config and time
// of a workload in which upload, local retention (60 s, all closed
// segments past it) and total retention (retention.ms that two segments
// pass) all act.
func crashSetup(t *testing.T) (base *vfs.Mem, cfg kafkalog.Config, now int64, closed int) {
	base = vfs.NewMem()
	c := newClock(t0)
	cfg0 := tieredConfig(t, 4096, map[string]string{"file.delete.delay.ms": "0"})
	fill(t, base, cfg0, c, crashRecords)
	l, err := kafkalog.Open(base, logDir, cfg0, kafkalog.Options{ReadOnly: true, Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	segs := l.Segments()
	ts1, err := segs[1].LargestTimestamp()
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	now = c.millis() + 100_000
	cfg = tieredConfig(t, 4096, map[string]string{"file.delete.delay.ms": "0", "local.retention.ms": "60000",
		"retention.ms": fmt.Sprint(now - ts1)})
	return base, cfg, now, len(segs) - 1
}

// crashWorkload opens, applies local retention (which must wait for the
// uploads), uploads, applies local then total retention, and closes.
func crashWorkload(fsys vfs.FS, cfg kafkalog.Config, now int64) error {
	return runWorkload(fsys, cfg, now, false)
}

// runWorkload is crashWorkload; with remoteFirst, total retention runs
// before local retention, so that it deletes copies still on local disk.
func runWorkload(fsys vfs.FS, cfg kafkalog.Config, now int64, remoteFirst bool) error {
	c := newClock(now)
	l, err := kafkalog.Open(fsys, logDir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		return err
	}
	tr, _, err := tier.Open(fsys, l, tier.NewDir(fsys, remoteDir), tier.Options{Clock: c})
	if err == nil {
		// Local retention first: it must wait for the uploads.
		_, err = tr.DeleteLocal()
	}
	if err == nil {
		_, err = tr.Upload()
	}
	if err == nil && remoteFirst {
		_, err = tr.DeleteRemote()
	}
	if err == nil {
		_, err = tr.DeleteLocal()
	}
	if err == nil && !remoteFirst {
		_, err = tr.DeleteRemote()
	}
	return errors.Join(err, l.Close())
}

// checkImage reopens a disk image, runs the start-up resolution and checks
// the invariants; then finishes the workload on it and checks that it
// reaches the end state a run without a crash reaches. It returns what
// the start-up resolution cleaned.
func checkImage(t *testing.T, name string, disk *vfs.Mem, cfg kafkalog.Config, now int64, closed int, wantStart int64) tier.StartReport {
	t.Helper()
	c := newClock(now)
	l, err := kafkalog.Open(disk, logDir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatalf("%s: open log: %v", name, err)
	}
	tr, rep, err := tier.Open(disk, l, tier.NewDir(disk, remoteDir), tier.Options{Clock: c})
	if err != nil {
		t.Fatalf("%s: open tier: %v", name, err)
	}
	first := rep
	if len(rep.Unknown) != 0 || len(rep.Missing) != 0 {
		t.Fatalf("%s: unknown remote files %v, missing %v", name, rep.Unknown, rep.Missing)
	}
	// The partition directory holds only LocalTieredStorage names, and no
	// temporary file is left.
	files, err := tier.NewDir(disk, remoteDir).Files(tr.TopicIDPartition())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.ID.IsZero() {
			t.Fatalf("%s: %s left in the remote", name, f.Name)
		}
	}
	ms := tr.Metadata()
	var prevEnd int64 = -1
	for _, m := range ms {
		if m.State == tier.CopySegmentStarted || m.State == tier.DeleteSegmentStarted {
			t.Fatalf("%s: %s left in %v after start-up", name, m.ID.ID, m.State)
		}
		if m.State == tier.CopySegmentFinished {
			if m.StartOffset <= prevEnd {
				t.Fatalf("%s: remote segments overlap at %d", name, m.StartOffset)
			}
			prevEnd = m.EndOffset
		}
	}
	// No local segment went before its upload finished, no record was
	// lost or served twice: every offset from the log start offset to the
	// end, once, in order, with its value.
	start := tr.LogStartOffset()
	if l.LogEndOffset() != crashRecords || start > wantStart {
		t.Fatalf("%s: offsets %d..%d (local from %d)", name, start, l.LogEndOffset(), tr.LocalLogStartOffset())
	}
	if start != 0 && start != wantStart && !isRemoteBoundary(ms, start) {
		t.Fatalf("%s: log start offset %d is no deleted segment's end", name, start)
	}
	total, _, err := collect(t, tr, 2000)
	if err != nil || total != crashRecords-start {
		t.Fatalf("%s: %d records from %d, %v", name, total, start, err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("%s: close: %v", name, err)
	}
	// Resume: the workload finishes from here.
	if err := crashWorkload(disk, cfg, now); err != nil {
		t.Fatalf("%s: resumed workload: %v", name, err)
	}
	l, tr, rep = mustOpen(t, disk, cfg, c)
	defer l.Close()
	if got := len(l.Segments()); got != 1 || tr.LogStartOffset() != wantStart || len(rep.Unknown) != 0 {
		t.Fatalf("%s: after resuming: %d local segments, log start %d (want %d), unknown %v", name, got, tr.LogStartOffset(), wantStart, rep.Unknown)
	}
	if total, _, err := collect(t, tr, 2000); err != nil || total != crashRecords-wantStart {
		t.Fatalf("%s: after resuming: %d records, %v", name, total, err)
	}
	return first
}

func isRemoteBoundary(ms []tier.SegmentMetadata, off int64) bool {
	for _, m := range ms {
		if m.EndOffset+1 == off {
			return true
		}
	}
	return false
}

// TestCrashAtEveryWritePoint crashes the upload + local deletion + remote
// deletion workload after every mutating operation, takes three crash
// images of each point (only what was synced; half of the rest, torn; all
// of it), and checks each (checkImage).
func TestCrashAtEveryWritePoint(t *testing.T) {
	t.Run("local_first", func(t *testing.T) { crashSweep(t, false) })
	t.Run("remote_first", func(t *testing.T) { crashSweep(t, true) })
}

func crashSweep(t *testing.T, remoteFirst bool) {
	base, cfg, now, closed := crashSetup(t)
	// The run without a crash, for the op count and the end state.
	ref := vfs.WithFaults(base.CrashClone(vfs.CrashConfig{}), vfs.CrashAfter(1<<30))
	if err := runWorkload(ref, cfg, now, remoteFirst); err != nil {
		t.Fatal(err)
	}
	ops := 0
	for _, op := range ref.Log() {
		if op.Kind.Mutating() {
			ops++
		}
	}
	// The end state: segments 0 and 1 deleted by total retention.
	l, err := kafkalog.Open(base, logDir, cfg, kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	wantStart := l.Segments()[2].BaseOffset()
	l.Close()

	stride := 1
	if testing.Short() {
		stride = 5
	}
	points, images, cleaned, abandoned, redeleted, temps, localBelow := 0, 0, 0, 0, 0, 0, 0
	for k := 0; ; k += stride {
		mem := base.CrashClone(vfs.CrashConfig{})
		crash := vfs.CrashAfter(k)
		err := runWorkload(vfs.WithFaults(mem, crash), cfg, now, remoteFirst)
		if !crash.Crashed() {
			if err != nil {
				t.Fatalf("workload failed without a crash: %v", err)
			}
			break
		}
		if !isCrash(err) {
			t.Fatalf("crash point %d: the workload failed with %v, not the crash", k, err)
		}
		points++
		for _, mode := range []vfs.CrashConfig{
			{Seed: uint64(k), UnsyncedDataPercent: 0},
			{Seed: uint64(k), UnsyncedDataPercent: 50, TornWrites: true},
			{Seed: uint64(k) * 31, UnsyncedDataPercent: 100, TornWrites: true},
		} {
			images++
			rep := checkImage(t, fmt.Sprintf("crash point %d, %+v", k, mode), mem.CrashClone(mode), cfg, now, closed, wantStart)
			if len(rep.CopiesAbandoned)+len(rep.DeletesFinished)+len(rep.TempRemoved)+rep.LocalSegmentsDeleted > 0 {
				cleaned++
			}
			abandoned += len(rep.CopiesAbandoned)
			redeleted += len(rep.DeletesFinished)
			temps += len(rep.TempRemoved)
			localBelow += rep.LocalSegmentsDeleted
		}
	}
	if points*stride < ops/2 || cleaned == 0 {
		t.Fatalf("%d crash points of %d mutating operations, %d images with leftovers: the sweep does not cover the workload", points, ops, cleaned)
	}
	if abandoned == 0 || redeleted == 0 || temps == 0 || remoteFirst && localBelow == 0 {
		t.Fatalf("the sweep never met a leftover copy (%d), deletion (%d), temporary file (%d) or local segment below the log start (%d)", abandoned, redeleted, temps, localBelow)
	}
	t.Logf("%d mutating operations in the workload (%d closed segments), %d crash points (stride %d), %d images, %d of them with leftovers the start-up cleaned "+
		"(%d STARTED copies deleted, %d STARTED deletions finished, %d temporary files, %d local segments below the log start offset); 0 records lost or served twice",
		ops, closed, points, stride, images, cleaned, abandoned, redeleted, temps, localBelow)
}

// TestErrorAtEveryWritePoint fails each mutating operation once with EIO
// (the run goes on with the error returned), then reopens the same disk
// and checks the invariants as after a crash.
func TestErrorAtEveryWritePoint(t *testing.T) {
	base, cfg, now, closed := crashSetup(t)
	l, err := kafkalog.Open(base, logDir, cfg, kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	wantStart := l.Segments()[2].BaseOffset()
	l.Close()
	stride := 1
	if testing.Short() {
		stride = 5
	}
	injected, surfaced := 0, 0
	for k := 0; ; k += stride {
		mem := base.CrashClone(vfs.CrashConfig{})
		hit := false
		n := 0
		fsys := vfs.WithFaults(mem, vfs.InjectorFunc(func(op vfs.Op) error {
			if !op.Kind.Mutating() {
				return nil
			}
			n++
			if n-1 == k {
				hit = true
				return &vfs.Fault{Err: syscall.EIO}
			}
			return nil
		}))
		err := crashWorkload(fsys, cfg, now)
		if !hit {
			break
		}
		injected++
		if err != nil {
			surfaced++
		}
		checkImage(t, fmt.Sprintf("EIO at mutating op %d", k), mem, cfg, now, closed, wantStart)
	}
	if injected < 50 {
		t.Fatalf("only %d injection points", injected)
	}
	t.Logf("%d injected EIO failures (stride %d), %d surfaced as errors; every disk reopened consistent", injected, stride, surfaced)
}

// TestDamagedMetadata: a damaged metadata file stops Open with a typed
// error naming the file and byte.
func TestDamagedMetadata(t *testing.T) {
	fsys := vfs.NewMem()
	c := newClock(t0)
	cfg := tieredConfig(t, 4096, nil)
	fill(t, fsys, cfg, c, 100)
	l, tr, _ := mustOpen(t, fsys, cfg, c)
	up, err := tr.Upload()
	if err != nil || len(up.Copied) == 0 {
		t.Fatal(err)
	}
	l.Close()
	p := tier.NewDir(fsys, remoteDir).MetadataPath(up.Copied[0])
	b, _ := vfs.ReadFile(fsys, p)
	b[len(b)-3] ^= 0x20
	if err := vfs.WriteFile(fsys, p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err = kafkalog.Open(fsys, logDir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, _, err = tier.Open(fsys, l, tier.NewDir(fsys, remoteDir), tier.Options{})
	var ce *format.CorruptionError
	if !errors.As(err, &ce) || !errors.Is(err, format.ErrCRC) || ce.Path != p || ce.Offset != 28 {
		t.Fatalf("damaged metadata: %v", err)
	}
	if !strings.Contains(err.Error(), ".rlsm") {
		t.Errorf("error does not name the file: %v", err)
	}
}
