package tier_test

import (
	"errors"
	"io/fs"
	"path"
	"testing"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

// TestView: after the copy and local retention, a View of the partition
// directory with the served remote segments is one log from offset 0 to
// the end: inspect.Verify finds nothing wrong in it, a read-only
// kafkalog.Open reads every record once, damage in a remote file is
// reported under the view's name (which View.Remote maps to the remote
// file), and nothing can write through it.
func TestView(t *testing.T) {
	fsys, d, _, served, now := tieredOut(t)
	cfg := tieredConfig(t, 4096, nil)
	v, err := d.NewView(fsys, logDir, served)
	if err != nil {
		t.Fatal(err)
	}
	logs := 0
	for _, f := range v.Files() {
		if f.Type == tier.FileSegment {
			logs++
		}
	}
	if logs != len(served) || len(v.Files()) < 3*len(served) {
		t.Errorf("the view shows %d remote files, %d .log, for %d segments", len(v.Files()), logs, len(served))
	}

	rep, err := inspect.Verify(v, logDir, inspect.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		if p.Level != finding.Info {
			t.Errorf("verify of the view: %s", p)
		}
	}
	pr := rep.Partitions[0]
	if pr.LogStartOffset != 0 || pr.LogEndOffset != 400 || pr.Records != 400 || len(pr.Segments) != len(served)+1 {
		t.Errorf("view: log %d..%d, %d records, %d segments (remote %d, local from %d)", pr.LogStartOffset, pr.LogEndOffset, pr.Records, len(pr.Segments), len(served), served[len(served)-1].EndOffset+1)
	}

	rl, err := kafkalog.Open(v, logDir, cfg, kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	next := int64(0)
	for r, err := range rl.Records(0) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Offset != next || string(r.Value) != string(value(next)) {
			t.Fatalf("record %d read as offset %d", next, r.Offset)
		}
		next++
	}
	rl.Close()
	if next != 400 {
		t.Errorf("read %d records through the view", next)
	}

	// Damage in the second remote .log: reported at the view's name.
	m := served[1]
	p := d.FilePath(m, tier.FileSegment)
	b, err := vfs.ReadFile(fsys, p)
	if err != nil {
		t.Fatal(err)
	}
	b[100] ^= 0xff
	if err := vfs.WriteFile(fsys, p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err = inspect.Verify(v, logDir, inspect.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, pb := range rep.Problems {
		if pb.Level == finding.Error {
			f, ok := v.Remote(pb.File)
			if !ok || f.Path != p || f.Type != tier.FileSegment {
				t.Errorf("error in %s, not mapped to the remote %s: %s", pb.File, p, pb)
			}
			found = true
		}
	}
	if rep.OK || !found {
		t.Errorf("damage in %s not found: %+v", p, rep.Problems)
	}

	// Read-only.
	for _, err := range []error{
		func() error { _, err := v.Create(path.Join(logDir, "x")); return err }(),
		v.Remove(path.Join(logDir, path.Base(p))),
		v.Rename(path.Join(logDir, "00000000000000000000.log"), path.Join(logDir, "y")),
		func() error { _, err := v.Lock(path.Join(path.Dir(logDir), ".lock")); return err }(),
	} {
		if !errors.Is(err, fs.ErrPermission) {
			t.Errorf("a write through the view: %v", err)
		}
	}
	if f, err := v.Open(path.Join(logDir, "00000000000000000000.log")); err != nil {
		t.Fatal(err)
	} else {
		if _, err := f.Write([]byte("x")); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("write to a remote file through the view: %v", err)
		}
		f.Close()
	}
}
