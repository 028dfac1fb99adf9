package tier_test

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
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
	benchMiB    = flag.Int("tier.mib", 32, "MiB of segments BenchmarkUploadRatio and BenchmarkRemoteReadRatio write")
	benchSegMiB = flag.Int("tier.segmib", 8, "segment.bytes of the tier benchmarks, in MiB")
)

// benchLog writes about *benchMiB MiB of 1000-byte records, 100 to a
// batch, into a log in dir on the OS filesystem, rolls and flushes it.
func benchLog(b *testing.B, dir string, props map[string]string, c *clock) *kafkalog.Log {
	b.Helper()
	fsys := vfs.OS()
	cfg := tieredConfig(b, *benchSegMiB<<20, props)
	l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		b.Fatal(err)
	}
	if err := checkpoint.WritePartitionMetadata(fsys, dir, testTopicID); err != nil {
		b.Fatal(err)
	}
	var w record.Builder
	recs := make([]record.Record, 100)
	for i := range recs {
		recs[i] = record.Record{Timestamp: t0, Value: make([]byte, 1000)}
	}
	var batch []byte
	for l.LogEndOffset()*1070 < int64(*benchMiB)<<20 {
		spec := record.NewBatchSpec(0, compress.None)
		batch, _ = w.AppendBatch(batch[:0], &spec, recs)
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Roll(); err != nil {
		b.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		b.Fatal(err)
	}
	return l
}

// spread is the median, minimum and maximum of xs.
func spread(xs []float64) (med, lo, hi float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med = s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return med, s[0], s[n-1]
}

// reportSpread reports the median, min and max of the per-round ratios.
func reportSpread(b *testing.B, unit string, xs []float64) {
	med, lo, hi := spread(xs)
	b.ReportMetric(med, unit)
	b.ReportMetric(lo, unit+"-min")
	b.ReportMetric(hi, unit+"-max")
}

// BenchmarkUploadRatio uploads a partition's closed segments to a Dir on
// the OS filesystem and, in the same round, copies the same files as an
// operator would: per closed segment its .log, .index and .timeindex, the
// producer snapshot the upload takes (<next base>.snapshot) and the
// partition's leader-epoch-checkpoint, each os.Open + io.Copy to a new
// file in one directory, then fsync and close, and that directory fsynced
// at the end ("copy"); and the same copy without any fsync ("copy-nosync",
// whose files are fsynced after its clock stops, so that its writeback
// does not land in the next measurement). Each b.Loop iteration is one
// round of the three, in an order that rotates from round to round; the
// metrics are the median, min and max of the per-round ratios. The page
// cache is not dropped (that needs root): the source files are warm for
// all three.
//
//	GOTOOLCHAIN=go1.27.3 go test -run '^$' -bench UploadRatio -benchtime 7x -tier.mib 1024 ./tier/
func BenchmarkUploadRatio(b *testing.B) {
	b.ReportAllocs()
	fsys := vfs.OS()
	root := b.TempDir()
	dir := path.Join(root, "logs", "orders-0")
	c := newClock(t0)
	l := benchLog(b, dir, nil, c)
	defer l.Close()
	segs := l.Segments()
	epochs := path.Join(dir, "leader-epoch-checkpoint")
	if _, err := os.Stat(epochs); err != nil {
		b.Fatal(err)
	}
	var files [][2]string // source, name in the copy's directory
	var bytes int64
	for i, s := range segs[:len(segs)-1] {
		snap := path.Join(dir, fmt.Sprintf("%020d.snapshot", segs[i+1].BaseOffset()))
		for _, f := range []string{s.LogPath(), s.IndexPath(), s.TimeIndexPath(), snap} {
			files = append(files, [2]string{f, path.Base(f)})
		}
		files = append(files, [2]string{epochs, fmt.Sprintf("%020d.leader_epoch_checkpoint", s.BaseOffset())})
		bytes += s.Size()
	}
	var total int64
	for _, f := range files {
		fi, err := os.Stat(f[0])
		if err != nil {
			b.Fatal(err)
		}
		total += fi.Size()
	}
	b.Logf("%d segments, %d files, %d bytes of .log, %d bytes in all", len(segs)-1, len(files), bytes, total)

	upload := func(i int) time.Duration {
		remote := path.Join(root, fmt.Sprint("remote", i))
		start := time.Now()
		tr, _, err := tier.Open(fsys, l, tier.NewDir(fsys, remote), tier.Options{Clock: c})
		if err != nil {
			b.Fatal(err)
		}
		if u, err := tr.Upload(); err != nil || len(u.Copied) != len(segs)-1 {
			b.Fatalf("upload: %d %v", len(u.Copied), err)
		}
		d := time.Since(start)
		os.RemoveAll(remote)
		return d
	}
	cp := func(i int, durable bool) time.Duration {
		plain := path.Join(root, fmt.Sprint("plain", i))
		if err := os.MkdirAll(plain, 0o755); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for _, f := range files {
			if err := copyFile(f[0], path.Join(plain, f[1]), durable); err != nil {
				b.Fatal(err)
			}
		}
		if durable {
			if err := syncDir(plain); err != nil {
				b.Fatal(err)
			}
		}
		d := time.Since(start)
		if !durable { // its writeback is not the next measurement's
			for _, f := range files {
				if err := syncFile(path.Join(plain, f[1])); err != nil {
					b.Fatal(err)
				}
			}
		}
		os.RemoveAll(plain)
		return d
	}
	var vsCopy, vsNosync, upMBps []float64
	var up time.Duration
	for i := 0; b.Loop(); i++ {
		var u, d, n time.Duration
		steps := []func(){
			func() { u = upload(i) },
			func() { d = cp(i, true) },
			func() { n = cp(i, false) },
		}
		for k := range steps {
			steps[(i+k)%len(steps)]()
		}
		up += u
		vsCopy = append(vsCopy, float64(u)/float64(d))
		vsNosync = append(vsNosync, float64(u)/float64(n))
		upMBps = append(upMBps, float64(bytes)/u.Seconds()/1e6)
	}
	b.SetBytes(bytes)
	reportSpread(b, "upload/copy", vsCopy)
	reportSpread(b, "upload/copy-nosync", vsNosync)
	reportSpread(b, "upload-MB/s", upMBps)
}

func copyFile(src, dst string, durable bool) error {
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
	if durable {
		if err := out.Sync(); err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}

func syncFile(name string) error {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// BenchmarkRemoteReadRatio reads a partition's records from offset 0 to
// the end of its closed segments, 1 MiB a read (max.partition.fetch.bytes),
// through Tier.Read from a Dir remote on the OS filesystem ("remote"; the
// local copies deleted by local retention) and, in the same round, with
// kafkalog.Log.Read from a byte-for-byte copy of the same segments
// ("local": a new buffer per read, as Tier.Read's local path calls it;
// "local-reuse": one buffer reused from read to read, which Log.Read
// allows and Tier.Read's API does not). Each b.Loop iteration is one
// round of the three, in an order that rotates from round to round; the
// metrics are the median, min and max of the per-round ratios. The files
// are warm in the page cache for all three.
//
//	GOTOOLCHAIN=go1.27.3 go test -run '^$' -bench RemoteReadRatio -benchtime 15x -tier.mib 1024 ./tier/
func BenchmarkRemoteReadRatio(b *testing.B) {
	b.ReportAllocs()
	const maxBytes = 1 << 20
	fsys := vfs.OS()
	root := b.TempDir()
	dir := path.Join(root, "logs", "orders-0")
	localDir := path.Join(root, "local", "orders-0")
	c := newClock(t0)
	props := map[string]string{"file.delete.delay.ms": "0", "local.retention.ms": "1000"}
	l := benchLog(b, dir, props, c)
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	// The reference: the same segment files, opened as a log of their own.
	if err := os.CopyFS(filepath.FromSlash(localDir), os.DirFS(filepath.FromSlash(dir))); err != nil {
		b.Fatal(err)
	}
	cfg := tieredConfig(b, *benchSegMiB<<20, props)
	ll, err := kafkalog.Open(fsys, localDir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		b.Fatal(err)
	}
	defer ll.Close()
	l, err = kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	tr, _, err := tier.Open(fsys, l, tier.NewDir(fsys, path.Join(root, "remote")), tier.Options{Clock: c})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tr.Upload(); err != nil {
		b.Fatal(err)
	}
	c.advance(3_600_000)
	if _, err := tr.DeleteLocal(); err != nil {
		b.Fatal(err)
	}
	end := l.LogStartOffset() // the remote holds [0, end)
	if end == 0 || tr.LogStartOffset() != 0 {
		b.Fatalf("remote holds [%d, %d)", tr.LogStartOffset(), end)
	}
	var bytes int64
	for _, s := range ll.Segments() {
		if s.BaseOffset() < end {
			bytes += s.Size()
		}
	}
	b.Logf("%d records, %d bytes in the remote", end, bytes)

	var sc record.Scanner
	// next returns the offset after the last entry of recs.
	next := func(recs []byte, at int64) int64 {
		if len(recs) == 0 {
			b.Fatalf("read at %d: nothing", at)
		}
		sc.Reset(recs, "", 0)
		last := at - 1
		for sc.Next() {
			last = sc.Entry().LastOffset()
		}
		if err := sc.Err(); err != nil {
			b.Fatal(err)
		}
		if last < at {
			b.Fatalf("read at %d: no progress", at)
		}
		return last + 1
	}
	remote := func() time.Duration {
		start := time.Now()
		for off := int64(0); off < end; {
			res, err := tr.Read(off, maxBytes)
			if err != nil || !res.Remote {
				b.Fatalf("remote read at %d: %v (remote %v)", off, err, res.Remote)
			}
			off = next(res.Records, off)
		}
		return time.Since(start)
	}
	var dst []byte
	// local reads as Tier.Read does below its local log start's
	// counterpart: a new buffer per read (reuse false), or into one
	// buffer reused from read to read (reuse true), which Log.Read
	// allows and Tier.Read does not.
	local := func(reuse bool) time.Duration {
		start := time.Now()
		for off := int64(0); off < end; {
			var into []byte
			if reuse {
				into = dst[:0]
			}
			res, err := ll.Read(off, maxBytes, into, kafkalog.ReadOptions{})
			if err != nil {
				b.Fatalf("local read at %d: %v", off, err)
			}
			if reuse {
				dst = res.Records
			}
			off = next(res.Records, off)
		}
		return time.Since(start)
	}
	var ratios, reuseRatios, remoteMBps, localMBps []float64
	for i := 0; b.Loop(); i++ {
		var r, lo, lr time.Duration
		steps := []func(){
			func() { r = remote() },
			func() { lo = local(false) },
			func() { lr = local(true) },
		}
		for k := range steps {
			steps[(i+k)%len(steps)]()
		}
		ratios = append(ratios, float64(r)/float64(lo))
		reuseRatios = append(reuseRatios, float64(r)/float64(lr))
		remoteMBps = append(remoteMBps, float64(bytes)/r.Seconds()/1e6)
		localMBps = append(localMBps, float64(bytes)/lo.Seconds()/1e6)
	}
	b.SetBytes(3 * bytes)
	reportSpread(b, "remote/local", ratios)
	reportSpread(b, "remote/local-reuse", reuseRatios)
	reportSpread(b, "remote-MB/s", remoteMBps)
	reportSpread(b, "local-MB/s", localMBps)
}
