package tier_test

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

var (
	benchMiB    = flag.Int("tier.mib", 32, "MiB of segments BenchmarkUploadRatio uploads")
	benchSegMiB = flag.Int("tier.segmib", 8, "segment.bytes of BenchmarkUploadRatio, in MiB")
)

// BenchmarkUploadRatio uploads a partition's closed segments to a Dir on
// the OS filesystem and, in the same run, copies the same files with a
// plain read/write/fsync per file; it reports upload time / copy time.
func BenchmarkUploadRatio(b *testing.B) {
	fsys := vfs.OS()
	root := b.TempDir()
	dir := path.Join(root, "logs", "orders-0")
	cfg := tieredConfig(b, *benchSegMiB<<20, nil)
	c := newClock(t0)
	l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		b.Fatal(err)
	}
	checkpoint.WritePartitionMetadata(fsys, dir, testTopicID)
	var w record.Builder
	recs := make([]record.Record, 100)
	for i := range recs {
		recs[i] = record.Record{Timestamp: t0, Value: make([]byte, 1000)}
	}
	for l.LogEndOffset()*1070 < int64(*benchMiB)<<20 {
		spec := record.NewBatchSpec(0, compress.None)
		batch, _ := w.AppendBatch(nil, &spec, recs)
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	l.Roll()
	l.Flush()
	defer l.Close()
	segs := l.Segments()
	var files []string
	var bytes int64
	for i, s := range segs[:len(segs)-1] {
		files = append(files, s.LogPath(), s.IndexPath(), s.TimeIndexPath(), path.Join(dir, fmt.Sprintf("%020d.snapshot", segs[i+1].BaseOffset())))
		bytes += s.Size()
	}
	var up, cp time.Duration
	tm := &timedRemote{}
	for i := 0; b.Loop(); i++ {
		remote := path.Join(root, fmt.Sprint("remote", i))
		start := time.Now()
		tm.Dir = tier.NewDir(fsys, remote)
		tr, _, err := tier.Open(fsys, l, tm, tier.Options{Clock: c})
		if err != nil {
			b.Fatal(err)
		}
		if u, err := tr.Upload(); err != nil || len(u.Copied) != len(segs)-1 {
			b.Fatalf("upload: %d %v", len(u.Copied), err)
		}
		up += time.Since(start)
		os.RemoveAll(remote)

		plain := path.Join(root, fmt.Sprint("plain", i))
		os.MkdirAll(plain, 0o755)
		start = time.Now()
		for _, f := range files {
			if err := copyFile(f, path.Join(plain, path.Base(f))); err != nil {
				b.Fatal(err)
			}
		}
		cp += time.Since(start)
		os.RemoveAll(plain)
	}
	b.SetBytes(bytes)
	b.ReportMetric(float64(up)/float64(cp), "upload/copy")
	b.ReportMetric(float64(tm.meta)/float64(up), "metadata/upload")
	b.ReportMetric(float64(tm.data)/float64(up), "data/upload")
}

// timedRemote times a Dir's metadata and data writes.
type timedRemote struct {
	*tier.Dir
	meta, data time.Duration
}

func (r *timedRemote) PutSegmentMetadata(m tier.SegmentMetadata) error {
	defer func(t time.Time) { r.meta += time.Since(t) }(time.Now())
	return r.Dir.PutSegmentMetadata(m)
}

func (r *timedRemote) CopyLogSegmentData(m tier.SegmentMetadata, d tier.SegmentData) error {
	defer func(t time.Time) { r.data += time.Since(t) }(time.Now())
	return r.Dir.CopyLogSegmentData(m, d)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
