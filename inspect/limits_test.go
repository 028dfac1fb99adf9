package inspect_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/vfs"
)

// TestVerifyActiveTimeIndexPadding: after kill -9 of an append into an
// existing segment, the active segment's .timeindex ends in preallocated
// zero entries, whose timestamp 0 is below the first: Kafka's sanity check
// fails and its load rebuilds the index. Verify called that an error (19
// of 150 kill -9 runs) while calling the padding normal in the same
// report; it is a warning for the active segment, and stays an error for
// a segment that is not the last.
func TestVerifyActiveTimeIndexPadding(t *testing.T) {
	f := threeSegments(t)
	segs := f.verify(t).Partitions[0].Segments
	pad := func(b []byte) []byte { return append(b, make([]byte, 10*12)...) }
	name := func(i int) string { return filepath.Base(segs[i].File[:len(segs[i].File)-len(".log")]) + ".timeindex" }
	f.edit(t, name(len(segs)-1), pad)
	rep := f.verify(t)
	if !rep.OK {
		t.Fatalf("the active segment's padding is an error:\n%s", dump(rep))
	}
	if p := find(t, rep, "sanity-check"); p.Level != finding.Warning || !strings.Contains(p.Detail, "rebuilds") {
		t.Errorf("got %s", p)
	}
	f.edit(t, name(0), pad)
	rep = f.verify(t)
	if p := find(t, rep, "sanity-check"); rep.OK || p.Level != finding.Error {
		t.Errorf("padding in a closed segment: %s", p)
	}
}

// TestVerifyIndexTooLarge: a sparse 1 TiB .timeindex is reported, not
// read in full (before, Verify paged through all of it).
func TestVerifyIndexTooLarge(t *testing.T) {
	src := filepath.Join("..", "testdata", "kafka-broker", "codec-none-0")
	dir := filepath.Join(t.TempDir(), "codec-none-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	grow := func(name string, size int64) {
		if err := os.Truncate(filepath.Join(dir, name), size); err != nil {
			t.Fatal(err)
		}
	}
	grow("00000000000000000000.timeindex", 1<<40) // closed segment: over 2 GiB
	grow("00000000000000001137.index", 1<<40)     // active segment: over 2 GiB
	grow("00000000000000000000.index", 20<<20)    // closed: more than its 64 KB .log can need
	start := time.Now()
	rep, err := inspect.Verify(vfs.OS(), filepath.ToSlash(dir), inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("Verify took %v", d) // a read of 1 TiB would take hours
	}
	want := map[string]finding.Level{
		"00000000000000000000.timeindex": finding.Error,
		"00000000000000001137.index":     finding.Error,
		"00000000000000000000.index":     finding.Warning,
	}
	for _, p := range rep.Problems {
		if p.Kind != finding.KindIndexTooLarge {
			if p.Level == finding.Error {
				t.Errorf("other error: %s", p)
			}
			continue
		}
		base := filepath.Base(p.File)
		if l, ok := want[base]; !ok || l != p.Level {
			t.Errorf("%s, want level %v", p, l)
		}
		delete(want, base)
	}
	if len(want) > 0 {
		t.Errorf("not reported: %v\n%s", want, dump(rep))
	}
}

// TestVerifyTornNewestSnapshot: kill -9 of an append while the engine
// wrote the snapshot of a roll leaves the newest .snapshot empty. Without a
// clean-shutdown marker that is a crash artefact Kafka repairs (it deletes
// the snapshot and rebuilds the state; oracle/kafka recover of the
// campaign's repro loads it with nothing lost): a warning. With the
// marker, or for an older snapshot, it stays an error.
func TestVerifyTornNewestSnapshot(t *testing.T) {
	f := threeSegments(t)
	rep := f.verify(t)
	leo := rep.Partitions[0].LogEndOffset
	name := fmt.Sprintf("%020d.snapshot", leo+1000) // above every other snapshot
	f.write(t, f.path(name), nil)
	marker := "/logs/.kafka_cleanshutdown"
	if _, err := f.fs.Stat(marker); err != nil {
		t.Fatalf("the fixture has no clean-shutdown marker: %v", err)
	}
	if p := find(t, f.verify(t), finding.KindSnapshotCorrupt); p.Level != finding.Error {
		t.Errorf("with a clean shutdown: %s", p)
	}
	if err := f.fs.Remove(marker); err != nil {
		t.Fatal(err)
	}
	if p := find(t, f.verify(t), finding.KindSnapshotCorrupt); p.Level != finding.Warning {
		t.Errorf("after an unclean shutdown: %s", p)
	}
}
