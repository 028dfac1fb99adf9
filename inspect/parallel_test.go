package inspect_test

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// parallelisms are the Options.Parallelism values compared with 1 (one
// partition at a time, the sequential run): more workers than partitions,
// fewer, and GOMAXPROCS.
var parallelisms = []int{0, 2, 3, 16}

// sameParallel verifies dir of fsys one partition at a time and with each
// of parallelisms, and fails unless every report (and error) is the same.
func sameParallel(t testing.TB, fsys vfs.FS, dir string, opt inspect.Options) inspect.Report {
	t.Helper()
	return sameParallelWith(t, fsys, dir, opt, inspect.Verify)
}

// sameParallelWith is sameParallel with verify in place of Verify.
func sameParallelWith(t testing.TB, fsys vfs.FS, dir string, opt inspect.Options, verify func(vfs.FS, string, inspect.Options) (inspect.Report, error)) inspect.Report {
	t.Helper()
	opt.Parallelism = 1
	want, wantErr := inspect.Verify(fsys, dir, opt)
	for _, n := range parallelisms {
		opt.Parallelism = n
		got, err := verify(fsys, dir, opt)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("Verify(%s) with Parallelism %d: error %v, one at a time %v", dir, n, err, wantErr)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Verify(%s) with Parallelism %d differs from one at a time (-want +got):\n%s", dir, n, d)
		}
	}
	return want
}

// damagedLogDirs builds three log directories of several partitions each
// in one Mem, with the findings the other tests provoke spread over them:
// damage in .log files, a torn tail, invalid records, missing and damaged
// indexes, a transaction, a corrupt checkpoint (its problem belongs to the
// first partition of its directory), a partition without segments.
func damagedLogDirs(t *testing.T) (*vfs.Mem, *clock) {
	t.Helper()
	f := newFixture(t, map[string]string{"segment.bytes": "4000"})
	f.add(t, 7, 10, compress.None, 3)
	f.close(t)
	part := func(dir string, n, k int, codec compress.Codec, epoch int32) *fixture {
		g := &fixture{fs: f.fs, dir: dir, clock: f.clock, cfg: f.cfg}
		g.open(t)
		g.add(t, n, k, codec, epoch)
		g.close(t)
		return g
	}
	edit := func(g *fixture, name string, fn func(b []byte, pos, size []int) []byte) {
		b := g.read(t, name)
		pos, size := batches(t, b)
		g.write(t, g.path(name), fn(b, pos, size))
	}
	for i := range 5 {
		part(fmt.Sprintf("/logs/a-%d", i), 4+i, 10, []compress.Codec{compress.None, compress.LZ4, compress.Zstd, compress.Snappy, compress.Gzip}[i], int32(i))
	}
	edit(part("/logs/crc-0", 6, 10, compress.None, 1), seg0+".log", func(b []byte, pos, size []int) []byte {
		b[pos[1]+record.RecordsOffset+5] ^= 0x40
		return b
	})
	edit(part("/logs/zero-0", 6, 10, compress.None, 1), seg0+".log", func(b []byte, pos, size []int) []byte {
		clear(b[pos[1] : pos[1]+200])
		return b
	})
	edit(part("/logs/torn-0", 4, 10, compress.None, 0), seg0+".log", func(b []byte, pos, size []int) []byte { return b[:len(b)-10] })
	edit(part("/logs/recs-0", 4, 10, compress.None, 0), seg0+".log", func(b []byte, pos, size []int) []byte {
		raw := b[pos[1] : pos[1]+size[1]]
		format.PutInt32(raw[record.RecordsCountOffset:], format.Int32(raw[record.RecordsCountOffset:])+1)
		format.PutInt32(raw[record.LastOffsetDeltaOffset:], format.Int32(raw[record.LastOffsetDeltaOffset:])+1)
		format.PutUint32(raw[record.CRCOffset:], format.CRC32C(raw[record.AttributesOffset:]))
		return b
	})
	edit(part("/logs/back-0", 4, 10, compress.None, 0), seg0+".log", func(b []byte, pos, size []int) []byte {
		format.PutInt64(b[pos[2]:], 1)
		return b
	})
	g := part("/logs/idx-0", 30, 2, compress.None, 0)
	if err := f.fs.Remove(g.path(seg0 + ".timeindex")); err != nil {
		t.Fatal(err)
	}
	g.edit(t, seg0+".index", func(b []byte) []byte {
		if len(b) >= 16 {
			format.PutUint32(b[8:], 1<<20)
		}
		return b
	})

	for i := range 4 {
		part(fmt.Sprintf("/more/b-%d", i), 3, 5, compress.None, 0)
	}
	f.write(t, path.Join("/more", checkpoint.RecoveryPointFile), []byte("0\n2\nb 0 5\n"))
	if err := f.fs.MkdirAll("/more/empty-0", 0o755); err != nil {
		t.Fatal(err)
	}

	tx := txnFixture(t)
	tx.close(t)
	copyTree(t, tx.fs, "/logs/t-0", f.fs, "/txn/t-0")
	copyTree(t, tx.fs, "/logs/t-0", f.fs, "/txn/t-1")
	return f.fs, f.clock
}

// copyTree copies the files of directory src of from to dst of to.
func copyTree(t testing.TB, from *vfs.Mem, src string, to vfs.FS, dst string) {
	t.Helper()
	infos, err := vfs.ReadDir(from, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := to.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, fi := range infos {
		b, err := vfs.ReadFile(from, path.Join(src, fi.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFile(to, path.Join(dst, fi.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestVerifyParallelSameReport: verifying partitions concurrently gives
// the report of one at a time, finding for finding, on log directories
// full of findings, on each of them, and on the tree of all three.
func TestVerifyParallelSameReport(t *testing.T) {
	m, c := damagedLogDirs(t)
	opt := inspect.Options{Now: c.t.UnixMilli()}
	rep := sameParallel(t, m, "/", opt)
	if len(rep.Partitions) < 15 || rep.OK {
		t.Fatalf("%d partitions, OK %v: the fixture is not what it should be\n%s", len(rep.Partitions), rep.OK, dump(rep))
	}
	seen := map[string]bool{}
	for _, p := range rep.Problems {
		seen[p.Kind] = true
	}
	for _, k := range []string{finding.KindLogCRC, finding.KindLogCorrupt, finding.KindLogTornTail, finding.KindLogInvalidRecords, finding.KindLogOffsetOrder, finding.KindCheckpointCorrupt, finding.KindNoSegments, finding.KindIndexMissing} {
		if !seen[k] {
			t.Errorf("no %s finding in the fixture", k)
		}
	}
	for _, dir := range []string{"/logs", "/more", "/txn", "/logs/crc-0"} {
		sameParallel(t, m, dir, opt)
	}
	sameParallel(t, m, "/", inspect.Options{Now: c.t.UnixMilli(), Compacted: true, MaxDecompressed: 512})
}

// TestVerifyParallelChunks: a partition whose entries are decoded
// concurrently in chunks (of the default size, and of tiny ones: one
// entry each), damaged in its second segment, gives the sequential
// report.
func TestVerifyParallelChunks(t *testing.T) {
	f := newFixture(t, map[string]string{"segment.bytes": "60000"})
	f.add(t, 2000, 1, compress.None, 2)
	f.close(t)
	logs := f.logs(t)
	if len(logs) < 4 {
		t.Fatalf("%d segments, want 4 or more", len(logs))
	}
	f.edit(t, logs[1], func(b []byte) []byte {
		pos, _ := batches(t, b)
		b[pos[len(pos)/2]+record.RecordsOffset+3] ^= 1
		return b
	})
	for _, chunk := range []int{64 << 10, 1000, 1} {
		t.Run(fmt.Sprintf("chunk=%d", chunk), func(t *testing.T) {
			rep := sameParallelWith(t, f.fs, f.dir, inspect.Options{Now: f.clock.t.UnixMilli()}, func(fsys vfs.FS, dir string, opt inspect.Options) (inspect.Report, error) {
				return inspect.VerifyChunks(fsys, dir, opt, chunk)
			})
			if rep.Batches < 1990 || rep.OK {
				t.Errorf("%d batches, OK %v", rep.Batches, rep.OK)
			}
		})
	}
}

// TestVerifyParallelError: a partition that cannot be read fails the
// concurrent run with the error of the sequential one, that of the first
// failing partition in order.
func TestVerifyParallelError(t *testing.T) {
	m, c := damagedLogDirs(t)
	for _, glob := range []string{"/logs/idx-0/000000000000000000[1-9]*.log", "/logs/idx-0/*.timeindex", "/logs/a-3/*.log", "/logs/*/*.timeindex", "/more/" + checkpoint.LogStartOffsetFile, "/txn/t-1/*.snapshot"} {
		t.Run(glob, func(t *testing.T) {
			fsys := vfs.WithFaults(m, vfs.EIO(vfs.PathMatch(glob)))
			sameParallel(t, fsys, "/", inspect.Options{Now: c.t.UnixMilli()})
			sameParallel(t, fsys, "/logs/idx-0", inspect.Options{Now: c.t.UnixMilli()})
			opt := inspect.Options{Now: c.t.UnixMilli(), Parallelism: 4}
			if _, err := inspect.Verify(fsys, "/", opt); err == nil {
				t.Errorf("no error with %s unreadable", glob)
			}
		})
	}
}

// TestVerifyParallelProgress: with concurrent partitions, Progress is
// called one call at a time, never goes back, and ends at the total.
func TestVerifyParallelProgress(t *testing.T) {
	m, c := damagedLogDirs(t)
	// The race detector checks that the calls do not overlap.
	checkProgress(t, m, "/", inspect.Options{Now: c.t.UnixMilli(), Parallelism: 4})
	stop := make(chan struct{})
	close(stop)
	if _, err := inspect.Verify(m, "/", inspect.Options{Parallelism: 4, Interrupt: stop}); !errors.Is(err, inspect.ErrInterrupted) {
		t.Errorf("with a closed Interrupt: %v", err)
	}
}

// TestVerifyParallelRealData compares the concurrent and sequential
// reports of every real log directory, and of the whole kafka-real tree.
func TestVerifyParallelRealData(t *testing.T) {
	for _, logDir := range realdata.LogDirs(t) {
		t.Run(realdata.Rel(t, logDir), func(t *testing.T) {
			sameParallel(t, vfs.OS(), filepath.ToSlash(logDir), inspect.Options{Now: realNow})
		})
	}
	for _, dir := range realdata.PartitionDirs(t) {
		sameParallel(t, vfs.OS(), filepath.ToSlash(dir), inspect.Options{Now: realNow})
	}
	for _, root := range realdata.Roots(t) {
		sameParallel(t, vfs.OS(), filepath.ToSlash(root), inspect.Options{Now: realNow})
	}
}

// BenchmarkVerifyParallel verifies a log directory of 200 small
// partitions (128 KiB each, one segment), one partition of 64 MiB in 8
// segments and one of a single 64 MiB segment, at Parallelism 0: run it
// with -cpu 1,2 to compare one core with two. It reports the .log bytes
// checked per second.
func BenchmarkVerifyParallel(b *testing.B) {
	small, n := benchPartition(b, compress.LZ4, 128<<10)
	many := vfs.MemOptions{}.New()
	const parts = 200
	for i := range parts {
		copyTree(b, small, "/logs/bench-0", many, fmt.Sprintf("/logs/p-%d", i))
	}
	big, total := benchPartition(b, compress.LZ4, 64<<20)
	one, oneTotal := benchOneSegment(b, 64<<20)
	for _, bc := range []struct {
		name  string
		fsys  *vfs.Mem
		dir   string
		bytes int64
	}{
		{"partitions=200", many, "/logs", parts * n},
		{"partition=64MiB", big, "/logs/bench-0", total},
		{"segment=64MiB", one, "/logs/bench-0", oneTotal},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(bc.bytes)
			b.ReportAllocs()
			for b.Loop() {
				rep, err := inspect.Verify(bc.fsys, bc.dir, inspect.Options{Now: t0.UnixMilli()})
				if err != nil || !rep.OK {
					b.Fatalf("%v\n%s", err, dump(rep))
				}
			}
		})
	}
}

// benchOneSegment builds a partition of one segment of about size bytes
// of benchPartition's batches (LZ4): the big partition's segments,
// copied one after the other into one .log, with its indexes left out
// (Kafka rebuilds them: a warning, not an error).
func benchOneSegment(b *testing.B, size int64) (*vfs.Mem, int64) {
	b.Helper()
	src, _ := benchPartition(b, compress.LZ4, size)
	infos, err := vfs.ReadDir(src, "/logs/bench-0")
	if err != nil {
		b.Fatal(err)
	}
	var log []byte
	for _, fi := range infos {
		if path.Ext(fi.Name()) == ".log" {
			data, err := vfs.ReadFile(src, path.Join("/logs/bench-0", fi.Name()))
			if err != nil {
				b.Fatal(err)
			}
			log = append(log, data...)
		}
	}
	m := vfs.MemOptions{}.New()
	if err := m.MkdirAll("/logs/bench-0", 0o755); err != nil {
		b.Fatal(err)
	}
	if err := vfs.WriteFile(m, "/logs/bench-0/"+seg0+".log", log, 0o644); err != nil {
		b.Fatal(err)
	}
	return m, int64(len(log))
}
