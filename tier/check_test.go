package tier_test

import (
	"path"
	"slices"
	"testing"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

// tieredOut is uploaded's state with local retention's deletions done:
// the remote, its partition, the served segments and the clock's time.
func tieredOut(t *testing.T) (vfs.FS, *tier.Dir, tier.TopicIDPartition, []tier.SegmentMetadata, int64) {
	t.Helper()
	fsys, cfg, c, meta := uploaded(t)
	l, err := kafkalog.Open(fsys, logDir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.DeletePendingSegments(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return fsys, tier.NewDir(fsys, remoteDir), meta[0].ID.TopicIDPartition, tier.RemoteLog(meta).Served(), c.millis()
}

// TestVerify: tier.Verify reads a tiered partition as one log and checks
// the remote against its metadata; each damage is found, with its kind,
// in the remote file it is about.
func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, fsys vfs.FS, d *tier.Dir, served []tier.SegmentMetadata) string // the file the problem is in
		kind   string
		level  finding.Level
	}{
		{name: "clean"},
		{"missing offset index", func(t *testing.T, fsys vfs.FS, d *tier.Dir, s []tier.SegmentMetadata) string {
			p := d.FilePath(s[2], tier.FileOffsetIndex)
			must(t, fsys.Remove(p))
			return p
		}, finding.KindRemoteFileMissing, finding.Error},
		{"missing leader epoch checkpoint", func(t *testing.T, fsys vfs.FS, d *tier.Dir, s []tier.SegmentMetadata) string {
			p := d.FilePath(s[0], tier.FileLeaderEpochCheckpoint)
			must(t, fsys.Remove(p))
			return p
		}, finding.KindRemoteFileMissing, finding.Error},
		{"a segment gone", func(t *testing.T, fsys vfs.FS, d *tier.Dir, s []tier.SegmentMetadata) string {
			must(t, d.DeleteLogSegmentData(s[3]))
			must(t, fsys.Remove(d.MetadataPath(s[3])))
			return d.FilePath(s[4], tier.FileSegment)
		}, finding.KindRemoteGap, finding.Error},
		{"the last segment gone", func(t *testing.T, fsys vfs.FS, d *tier.Dir, s []tier.SegmentMetadata) string {
			n := len(s) - 1
			must(t, d.DeleteLogSegmentData(s[n]))
			must(t, fsys.Remove(d.MetadataPath(s[n])))
			return d.FilePath(s[n-1], tier.FileSegment)
		}, finding.KindRemoteGap, finding.Error},
		{"size differs", func(t *testing.T, fsys vfs.FS, d *tier.Dir, s []tier.SegmentMetadata) string {
			m := s[1]
			m.SegmentSizeInBytes++
			must(t, d.PutSegmentMetadata(m))
			return d.FilePath(m, tier.FileSegment)
		}, finding.KindRemoteMetadataMismatch, finding.Error},
		{"offsets differ", func(t *testing.T, fsys vfs.FS, d *tier.Dir, s []tier.SegmentMetadata) string {
			m := s[1]
			m.EndOffset = m.StartOffset // the .log holds more
			must(t, d.PutSegmentMetadata(m))
			return d.FilePath(m, tier.FileSegment)
		}, finding.KindRemoteMetadataMismatch, finding.Error},
		{"overlap", func(t *testing.T, fsys vfs.FS, d *tier.Dir, s []tier.SegmentMetadata) string {
			m := s[1]
			m.EndOffset = s[2].StartOffset + 1
			must(t, d.PutSegmentMetadata(m))
			return d.FilePath(s[2], tier.FileSegment)
		}, finding.KindRemoteOverlap, finding.Error},
		{"a stray file", func(t *testing.T, fsys vfs.FS, d *tier.Dir, s []tier.SegmentMetadata) string {
			p := path.Join(d.PartitionDir(s[0].ID.TopicIDPartition), "stray.txt")
			must(t, vfs.WriteFile(fsys, p, []byte("x"), 0o644))
			return p
		}, finding.KindRemoteOrphanFile, finding.Warning},
		{"corrupt metadata", func(t *testing.T, fsys vfs.FS, d *tier.Dir, s []tier.SegmentMetadata) string {
			p := d.MetadataPath(s[0])
			b, err := vfs.ReadFile(fsys, p)
			must(t, err)
			b[len(b)-1] ^= 1
			must(t, vfs.WriteFile(fsys, p, b, 0o644))
			return p
		}, finding.KindRemoteMetadataCorrupt, finding.Error},
		{"bit flip in a remote .log", func(t *testing.T, fsys vfs.FS, d *tier.Dir, s []tier.SegmentMetadata) string {
			p := d.FilePath(s[1], tier.FileSegment)
			b, err := vfs.ReadFile(fsys, p)
			must(t, err)
			b[200] ^= 0x10
			must(t, vfs.WriteFile(fsys, p, b, 0o644))
			return p
		}, finding.KindLogCRC, finding.Error},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, d, tp, served, now := tieredOut(t)
			want := ""
			if tc.damage != nil {
				want = tc.damage(t, fsys, d, served)
			}
			rep, rr, err := tier.Verify(fsys, logDir, d, tp, inspect.Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			var got []finding.Problem
			for _, p := range rep.Problems {
				if p.Level != finding.Info {
					got = append(got, p)
				}
			}
			if tc.damage == nil {
				if len(got) != 0 || !rep.OK {
					t.Fatalf("problems in a clean tiered partition: %v", got)
				}
				pr := rep.Partitions[0]
				if pr.LogStartOffset != 0 || pr.LogEndOffset != 400 || pr.Records != 400 {
					t.Errorf("log %d..%d, %d records", pr.LogStartOffset, pr.LogEndOffset, pr.Records)
				}
				if rr.Metadata != "segkit" || rr.Segments != len(served) || rr.Viewed != len(served) || rr.StartOffset != 0 || rr.EndOffset+1 != rr.LocalStartOffset {
					t.Errorf("remote report %+v (%d served)", rr, len(served))
				}
				for _, s := range pr.Segments[:len(served)] {
					if !slices.ContainsFunc(served, func(m tier.SegmentMetadata) bool { return d.FilePath(m, tier.FileSegment) == s.File }) {
						t.Errorf("segment %d reported as %s, not its remote file", s.BaseOffset, s.File)
					}
				}
				return
			}
			if rep.OK != (tc.level != finding.Error) {
				t.Errorf("ok %v with a %s", rep.OK, tc.kind)
			}
			if !slices.ContainsFunc(got, func(p finding.Problem) bool { return p.Kind == tc.kind && p.Level == tc.level && p.File == want }) {
				t.Errorf("want %s %s in %s; got %v", tc.level, tc.kind, want, got)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
