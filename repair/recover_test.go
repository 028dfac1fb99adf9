package repair_test

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/repair"
	"github.com/segkit/segkit/vfs"
)

// TestRecoverClean: a clean log loses nothing, and recovery still runs on
// every segment although the directory was shut down cleanly; the marker
// is put back as it was.
func TestRecoverClean(t *testing.T) {
	f := threeSegments(t)
	// A second partition in the log directory: the engine alone would not
	// write the marker back at close.
	g := &fixture{fs: f.fs, dir: "/logs/u-0", clock: f.clock, cfg: f.cfg}
	g.open(t)
	g.add(t, 1, 1, compress.None, 0)
	g.close(t)
	marker := []byte(`{"version":0,"brokerEpoch":77}`)
	f.write(t, "/logs/"+checkpoint.CleanShutdownFile, marker)
	rep, err := repair.Recover(f.fs, f.dir, repair.RecoverOptions{Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Changed || !rep.CleanShutdown || rep.RecoveryPoint != 70 || rep.LogEndBefore != 70 || rep.LogEndAfter != 70 {
		t.Errorf("report %+v", rep)
	}
	if len(rep.Segments) != 3 {
		t.Errorf("%d segments recovered, want all 3", len(rep.Segments))
	}
	got, err := vfs.ReadFile(f.fs, "/logs/"+checkpoint.CleanShutdownFile)
	if err != nil || string(got) != string(marker) {
		t.Errorf("marker after recovery: %q, %v; want %q", got, err, marker)
	}
	if rep := f.verify(t); !rep.OK || len(rep.Problems) != 0 {
		t.Errorf("problems after recovery:\n%s", dump(rep))
	}
}

// TestRecoverTornTail: a torn tail is cut and reported with its position.
func TestRecoverTornTail(t *testing.T) {
	f := threeSegments(t)
	infos, _ := vfs.ReadDir(f.fs, f.dir)
	var last string
	for _, fi := range infos {
		if strings.HasSuffix(fi.Name(), ".log") {
			last = fi.Name()
		}
	}
	var size int
	f.edit(t, last, func(b []byte) []byte {
		size = len(b)
		return append(b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18)
	})
	if err := f.fs.Remove("/logs/" + checkpoint.CleanShutdownFile); err != nil {
		t.Fatal(err)
	}
	rep, err := repair.Recover(f.fs, f.dir, repair.RecoverOptions{Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	var cut []repair.RecoveredSegment
	for _, s := range rep.Segments {
		if s.Truncated > 0 {
			cut = append(cut, s)
		}
	}
	if !rep.Changed || len(cut) != 1 || cut[0].Truncated != 18 || cut[0].SizeAfter != int64(size) || cut[0].ReasonPosition != int64(size) || cut[0].LostEntries != 0 {
		t.Errorf("report %+v", rep)
	}
	if _, err := f.fs.Stat("/logs/" + checkpoint.CleanShutdownFile); err == nil {
		// The engine writes the marker when its partition is the only one:
		// that is its own rule, not Recover's.
		t.Log("the engine wrote a marker at close (the only partition of the directory)")
	} else if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}

// growIndex makes the named file of f's partition size bytes long, as a
// sparse file or a broker that never trimmed it would leave it.
func growIndex(t *testing.T, f *fixture, name string, size int64) {
	t.Helper()
	h, err := f.fs.OpenFile(f.path(name), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
}

// tooLarge is the size given to the first segment's .timeindex: over the
// 10 MiB a broker preallocates, for a segment of a few KiB.
const tooLarge = 10<<20 + 12

// TestRecoverIndexTooLarge: an index larger than Kafka could have written
// is reported, removed unread and rebuilt by the recovery; it is not a
// change (recovery rebuilds indexes anyway).
func TestRecoverIndexTooLarge(t *testing.T) {
	f := threeSegments(t)
	name := seg0 + ".timeindex"
	growIndex(t, f, name, tooLarge)
	rep, err := repair.Recover(f.fs, f.dir, repair.RecoverOptions{Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	want := []finding.Problem{{File: f.path(name), Position: -1, Kind: finding.KindIndexTooLarge, Level: finding.Warning}}
	if diff := cmp.Diff(want, rep.Findings, cmpopts.IgnoreFields(finding.Problem{}, "Detail")); diff != "" {
		t.Fatalf("findings (-want +got):\n%s", diff)
	}
	if d := rep.Findings[0].Detail; !strings.Contains(d, "10485772 bytes, over the 10485760 bytes") || !strings.HasSuffix(d, "not read: removed, and rebuilt by the recovery") {
		t.Errorf("detail %q", d)
	}
	if rep.Changed || len(rep.Deleted) != 0 {
		t.Errorf("changed %v, deleted %v: want nothing (an index rebuilt is not a change)", rep.Changed, rep.Deleted)
	}
	fi, err := f.fs.Stat(f.path(name))
	if err != nil || fi.Size() >= tooLarge || fi.Size()%12 != 0 {
		t.Errorf("rebuilt %s: %v, %v", name, fi, err)
	}
	if rep := f.verify(t); !rep.OK {
		t.Errorf("problems after recovery:\n%s", dump(rep))
	}
}

// TestCopyPartitionFiles: the copy Recover's caller makes (segviz recover
// --out) leaves out an index too large, and says so; every other file is
// copied with its modification time.
func TestCopyPartitionFiles(t *testing.T) {
	f := threeSegments(t)
	name := seg0 + ".timeindex"
	growIndex(t, f, name, tooLarge)
	mtime := t0.Add(-time.Hour)
	if err := f.fs.Chtimes(f.path(seg0+".log"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	findings, err := repair.CopyPartitionFiles(f.fs, f.dir, "/copy/t-0")
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 1 || findings[0].Kind != finding.KindIndexTooLarge || findings[0].File != f.path(name) ||
		!strings.HasSuffix(findings[0].Detail, "not copied: recovering the copy rebuilds it") {
		t.Errorf("findings %v", findings)
	}
	src, _ := vfs.ReadDir(f.fs, f.dir)
	dst, _ := vfs.ReadDir(f.fs, "/copy/t-0")
	var want, got []string
	for _, fi := range src {
		if fi.Name() != name {
			want = append(want, fi.Name())
		}
	}
	for _, fi := range dst {
		got = append(got, fi.Name())
		if fi.Name() == seg0+".log" && !fi.ModTime().Equal(mtime) {
			t.Errorf("%s: mtime %v, want %v", fi.Name(), fi.ModTime(), mtime)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("copied (-want +got):\n%s", diff)
	}
}

// TestListPartitionLimits: the bound of each index kind, for the active
// segment and the others.
func TestListPartitionLimits(t *testing.T) {
	f := threeSegments(t)
	infos, _ := vfs.ReadDir(f.fs, f.dir)
	var last string
	for _, fi := range infos {
		if strings.HasSuffix(fi.Name(), ".log") {
			last = strings.TrimSuffix(fi.Name(), ".log")
		}
	}
	for _, tc := range []struct {
		name string
		size int64
		too  bool
	}{
		{seg0 + ".index", 10 << 20, false}, // a broker's preallocation
		{seg0 + ".index", 10<<20 + 8, true},
		{seg0 + ".txnindex", 10<<20 + 34, true},
		{last + ".timeindex", 64 << 20, false}, // the active segment: up to 2 GiB
	} {
		growIndex(t, f, tc.name, tc.size)
		entries, err := inspect.ListPartition(f.fs, f.dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() == tc.name && (e.TooLarge != "") != tc.too {
				t.Errorf("%s of %d bytes: TooLarge %q, want too large %v", tc.name, tc.size, e.TooLarge, tc.too)
			}
		}
		growIndex(t, f, tc.name, 0)
	}
}
