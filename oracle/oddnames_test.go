package oracle_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/vfs"
)

// TestOddSegmentNamesAgreeWithKafka puts a file named like a segment file
// but not as Kafka names one (a 21-digit offset, a sign, letters, nothing)
// beside a broker-written segment, and checks both sides: segkit's verify
// names it in a segment-name finding of the expected level, and Kafka's
// recovery (LogLoader) does what that finding's detail says it does.
func TestOddSegmentNamesAgreeWithKafka(t *testing.T) {
	oracle.Require(t)
	src := filepath.Join("..", "testdata", "kafka-broker", "codec-none-0")
	const seg0, seg1 = "00000000000000000000", "00000000000000001137"
	// What Kafka does with the file, as the finding's detail says.
	const (
		fails    = "NumberFormatException" // the log does not load
		newSeg   = "opens"                 // an empty segment at its offset; the file unread
		deleted  = "deletes"               // the file is gone after the load
		renamed  = "renaming"              // a .swap renamed, then as a .log
		loadedOK = "snapshot"              // read as a producer snapshot
	)
	cases := []struct {
		name   string
		level  finding.Level
		kafka  string
		offset int64 // of the segment Kafka opens, for newSeg and renamed
	}{
		{"000000000000000000001.log", finding.Error, newSeg, 1},
		{"1.log", finding.Error, newSeg, 1},
		{"9223372036854775807.log", finding.Error, newSeg, 9223372036854775807},
		{"-0000000001.log", finding.Error, newSeg, -1},
		{"99999999999999999999.log", finding.Error, fails, 0},
		{"abc.log", finding.Error, fails, 0},
		{".log", finding.Error, fails, 0},
		{"abc.index", finding.Error, fails, 0},
		{"abc.txnindex", finding.Error, fails, 0},
		{"abc.snapshot", finding.Error, fails, 0},
		{"abc.log.swap", finding.Error, fails, 0},
		{"1137.log.swap", finding.Error, renamed, 1137},
		{"000000000000000000001.index", finding.Warning, deleted, 0},
		{"1137.timeindex", finding.Warning, deleted, 0},
		{"1137.snapshot", finding.Warning, loadedOK, 0},
		{"abc.log.deleted", finding.Warning, deleted, 0},
	}
	tmp := t.TempDir()
	var pairs []recoverPair
	for i, c := range cases {
		dir := filepath.Join(tmp, "in", strings.Repeat("x", i+1), "t-0")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := seg1 + ".log"
		switch {
		case strings.Contains(c.name, ".snapshot"):
			body = seg1 + ".snapshot"
		case strings.Contains(c.name, "index"):
			body = seg1 + ".index"
		}
		for _, n := range []string{seg0 + ".log", seg0 + ".index", seg0 + ".timeindex", "leader-epoch-checkpoint", "partition.metadata"} {
			copyFile(t, filepath.Join(src, n), filepath.Join(dir, n))
		}
		copyFile(t, filepath.Join(src, body), filepath.Join(dir, c.name))
		pairs = append(pairs, recoverPair{src: dir, out: filepath.Join(tmp, "out", strings.Repeat("x", i+1), "t-0")})
	}
	res := kafkaRecoverAll(t, pairs)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := inspect.Verify(vfs.OS(), pairs[i].src, inspect.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var found *finding.Problem
			for j, p := range rep.Problems {
				if p.Kind == finding.KindSegmentName && filepath.Base(p.File) == c.name {
					found = &rep.Problems[j]
				}
			}
			if found == nil {
				t.Fatalf("segkit: no %s finding for %s:\n%v", finding.KindSegmentName, c.name, rep.Problems)
			}
			if found.Level != c.level || !strings.Contains(found.Detail, c.kafka) {
				t.Errorf("segkit: %s, want level %s and a detail saying %q", found, c.level, c.kafka)
			}

			k := res[pairs[i].out]
			var bases []int64
			for _, s := range k.Segments {
				bases = append(bases, s.BaseOffset)
			}
			_, statErr := os.Stat(filepath.Join(pairs[i].out, c.name))
			switch c.kafka {
			case fails:
				if !strings.Contains(k.Error, "NumberFormatException") {
					t.Errorf("Kafka loaded it: %+v", k)
				}
			case newSeg, renamed:
				if k.Error != "" || !slices.Contains(bases, c.offset) || k.LogEndOffset < c.offset {
					t.Errorf("Kafka: %+v; want a segment at %d and a log end offset of at least %d", k, c.offset, c.offset)
				}
				for _, s := range k.Segments {
					if s.BaseOffset == c.offset && s.Size != 0 {
						t.Errorf("Kafka's segment %d holds %d bytes; want the empty one it created", c.offset, s.Size)
					}
				}
			case deleted:
				if k.Error != "" || statErr == nil {
					t.Errorf("Kafka: %+v; the file is still there (%v)", k, statErr)
				}
			case loadedOK:
				if k.Error != "" {
					t.Errorf("Kafka: %+v", k)
				}
			}
		})
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTornNewestSnapshotAgreesWithKafka: the newest producer snapshot left
// empty by a crash while it was written (the kill -9 campaign met it) is a
// warning in segkit's verify after an unclean shutdown, because Kafka's
// load deletes it and rebuilds the state: recovery succeeds and keeps
// every segment and offset.
func TestTornNewestSnapshotAgreesWithKafka(t *testing.T) {
	oracle.Require(t)
	src := filepath.Join("..", "testdata", "kafka-broker", "codec-none-0")
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "in", "t-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	newest := ""
	for _, e := range ents {
		copyFile(t, filepath.Join(src, e.Name()), filepath.Join(dir, e.Name()))
		if strings.HasSuffix(e.Name(), ".snapshot") {
			newest = e.Name() // ReadDir sorts by name: the last is the newest
		}
	}
	if newest == "" {
		t.Fatal("no snapshot in the source")
	}
	if err := os.WriteFile(filepath.Join(dir, newest), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := inspect.Verify(vfs.OS(), filepath.ToSlash(dir), inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range rep.Problems {
		if p.Kind == finding.KindSnapshotCorrupt && filepath.Base(p.File) == newest {
			found = p.Level == finding.Warning
		}
	}
	if !found || !rep.OK {
		t.Errorf("segkit: want a snapshot-corrupt warning and OK:\n%v", rep.Problems)
	}
	out := filepath.Join(tmp, "out", "t-0")
	k := kafkaRecoverAll(t, []recoverPair{{src: dir, out: out}})[out]
	leo := rep.Partitions[0].LogEndOffset
	if k.Error != "" || k.LogEndOffset != leo || k.BytesTruncated != 0 || len(k.SegmentsDeleted) != 0 {
		t.Errorf("Kafka: %+v; want a load with nothing lost (log end %d)", k, leo)
	}
}

// TestActiveTimeIndexPaddingAgreesWithKafka: the active segment's
// .timeindex ending in preallocated zero entries (a writer killed before
// it trimmed them) fails Kafka's sanity check, and Kafka's load rebuilds
// the index with nothing lost: segkit's verify calls it a warning.
func TestActiveTimeIndexPaddingAgreesWithKafka(t *testing.T) {
	oracle.Require(t)
	src := filepath.Join("..", "testdata", "kafka-broker", "codec-none-0")
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "in", "t-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	active := ""
	for _, e := range ents {
		copyFile(t, filepath.Join(src, e.Name()), filepath.Join(dir, e.Name()))
		if strings.HasSuffix(e.Name(), ".timeindex") {
			active = e.Name()
		}
	}
	ti := filepath.Join(dir, active)
	b, err := os.ReadFile(ti)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ti, append(b, make([]byte, 10*12)...), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := inspect.Verify(vfs.OS(), filepath.ToSlash(dir), inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sanity := false
	for _, p := range rep.Problems {
		if p.Kind == "sanity-check" && filepath.Base(p.File) == active {
			sanity = p.Level == finding.Warning
		}
	}
	if !sanity || !rep.OK {
		t.Errorf("segkit: want a sanity-check warning and OK:\n%v", rep.Problems)
	}
	out := filepath.Join(tmp, "out", "t-0")
	k := kafkaRecoverAll(t, []recoverPair{{src: dir, out: out}})[out]
	if leo := rep.Partitions[0].LogEndOffset; k.Error != "" || k.LogEndOffset != leo || k.BytesTruncated != 0 {
		t.Errorf("Kafka: %+v; want a load with nothing lost (log end %d)", k, leo)
	}
	rebuilt, err := os.ReadFile(filepath.Join(out, active))
	if err != nil || len(rebuilt)%12 != 0 || len(rebuilt) >= len(b)+10*12 {
		t.Errorf("Kafka's rebuilt %s: %d bytes, %v; want the padding gone", active, len(rebuilt), err)
	}
}
