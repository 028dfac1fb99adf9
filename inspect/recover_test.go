package inspect_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/log/checkpoint"
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
	rep, err := inspect.Recover(f.fs, f.dir, inspect.RecoverOptions{Clock: f.clock})
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
	rep, err := inspect.Recover(f.fs, f.dir, inspect.RecoverOptions{Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	var cut []inspect.RecoveredSegment
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
