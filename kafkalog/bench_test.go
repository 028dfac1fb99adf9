package kafkalog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// batch16K is an uncompressed batch of 16 records of 1 KiB.
func batch16K(b testing.TB) []byte {
	recs := make([]record.Record, 16)
	for i := range recs {
		v := make([]byte, 1000)
		for j := range v {
			v[j] = byte('a' + (i+j)%26)
		}
		recs[i] = record.Record{Timestamp: 1_700_000_000_000 + int64(i), Key: []byte(fmt.Sprintf("key-%02d", i)), Value: v}
	}
	spec := record.NewBatchSpec(0, compress.None)
	out, err := record.AppendBatch(nil, &spec, recs)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

const appendBenchBytes = 64 << 20

// BenchmarkAppendOS appends 64 MiB of 16 KiB batches (1 KiB records) to a
// log on the OS filesystem, with Kafka's default flush policy (the OS
// flushes), and BenchmarkRawWriteOS writes the same bytes with os.File.
// The ratio is the engine's overhead: offsets, validation, indexes.
func BenchmarkAppendOS(b *testing.B) {
	batch := batch16K(b)
	n := appendBenchBytes / len(batch)
	cfg := kafkalog.DefaultConfig()
	b.SetBytes(int64(n * len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(filepath.Join(dir, "bench-0")), cfg, kafkalog.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for i := 0; i < n; i++ {
			// Append rewrites the batch's offsets in place: the same bytes
			// serve every append.
			if _, err := l.Append(batch, 0); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		l.Close()
		b.StartTimer()
	}
}

func BenchmarkRawWriteOS(b *testing.B) {
	batch := batch16K(b)
	n := appendBenchBytes / len(batch)
	b.SetBytes(int64(n * len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		f, err := os.Create(filepath.Join(b.TempDir(), "raw.log"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for i := 0; i < n; i++ {
			if _, err := f.Write(batch); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		f.Close()
		b.StartTimer()
	}
}

// BenchmarkAppendVsRawOS alternates, in each iteration, 64 MiB appended
// to a log on the OS filesystem and the same bytes written with
// os.File.Write to a file beside it, timing each, so that drift in the
// machine's load hits both alike. It reports the engine's throughput and
// its ratio to raw writes (the target is at least 0.8).
func BenchmarkAppendVsRawOS(b *testing.B) {
	batch := batch16K(b)
	n := appendBenchBytes / len(batch)
	cfg := kafkalog.DefaultConfig()
	var engine, raw time.Duration
	b.SetBytes(int64(n * len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		dir := b.TempDir()
		f, err := os.Create(filepath.Join(dir, "raw.log"))
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for i := 0; i < n; i++ {
			if _, err := f.Write(batch); err != nil {
				b.Fatal(err)
			}
		}
		raw += time.Since(start)
		f.Close()
		l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(filepath.Join(dir, "bench-0")), cfg, kafkalog.Options{})
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		for i := 0; i < n; i++ {
			if _, err := l.Append(batch, 0); err != nil {
				b.Fatal(err)
			}
		}
		engine += time.Since(start)
		l.Close()
	}
	b.ReportMetric(float64(raw)/float64(engine), "engine/raw")
	b.ReportMetric(float64(b.N)*float64(n*len(batch))/engine.Seconds()/1e6, "engine-MB/s")
	b.ReportMetric(float64(b.N)*float64(n*len(batch))/raw.Seconds()/1e6, "raw-MB/s")
}

// BenchmarkRead reads a 64 MiB log from start to end in 1 MiB fetches.
func BenchmarkRead(b *testing.B) {
	batch := batch16K(b)
	n := appendBenchBytes / len(batch)
	fsys := vfs.NewMem()
	l, err := kafkalog.Open(fsys, "d/r-0", kafkalog.DefaultConfig(), kafkalog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := l.Append(append([]byte(nil), batch...), 0); err != nil {
			b.Fatal(err)
		}
	}
	dst := make([]byte, 2<<20)
	b.SetBytes(int64(n * len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		for off := int64(0); off < l.LogEndOffset(); {
			res, err := l.Read(off, 1<<20, dst, kafkalog.ReadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			off = lastOffsetOfBatches(res.Records) + 1
		}
	}
}

func lastOffsetOfBatches(b []byte) int64 {
	var last int64
	for len(b) > 0 {
		bt, rest, err := record.ReadBatch(b)
		if err != nil {
			panic(err)
		}
		last, b = bt.LastOffset(), rest
	}
	return last
}

// BenchmarkRecover256MiB recovers one 256 MiB segment (every batch's
// checksum checked, indexes rebuilt) on Mem: MB/s of recovery.
func BenchmarkRecover256MiB(b *testing.B) {
	batch := batch16K(b)
	const size = 256 << 20
	n := size / len(batch)
	fsys := vfs.NewMem()
	fsys.MkdirAll("d/r-0", 0o755)
	s, err := segment.Create(fsys, "d/r-0", 0, segment.DefaultConfig(), nil)
	if err != nil {
		b.Fatal(err)
	}
	buf := append([]byte(nil), batch...)
	for i := 0; i < n; i++ {
		bt, _, _ := record.ReadBatch(buf)
		_ = bt
		// Rebase the batch: offsets are outside the checksum.
		putBase(buf, int64(i*16))
		info, err := segment.Describe(buf)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Append(buf, info); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(n * len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := s.Recover(segment.RecoverHooks{})
		if err != nil || res.Truncated != 0 || res.Entries != n {
			b.Fatalf("recover: %+v %v", res, err)
		}
	}
}

func putBase(b []byte, base int64) {
	for i := 7; i >= 0; i-- {
		b[i] = byte(base)
		base >>= 8
	}
}

// BenchmarkOpen10000Segments opens a cleanly shut down partition of
// 10,000 segments: loading must not read every index (they load lazily).
func BenchmarkOpen10000Segments(b *testing.B) {
	fsys := vfs.NewMem()
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{"segment.bytes": "20000", "segment.index.bytes": "1024"})
	if err != nil {
		b.Fatal(err)
	}
	l, err := kafkalog.Open(fsys, "d/many-0", cfg, kafkalog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	batch := batch16K(b)
	for len(l.Segments()) < 10000 {
		if _, err := l.Append(append([]byte(nil), batch...), 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	ffs := vfs.WithFaults(fsys, nil)
	b.ReportAllocs()
	for b.Loop() {
		l, err := kafkalog.Open(ffs, "d/many-0", cfg, kafkalog.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(l.Segments()); n != 10000 {
			b.Fatalf("%d segments", n)
		}
		l.Close()
	}
	// Count index files opened: only the last segment's.
	opened := 0
	for _, op := range ffs.Log() {
		if op.Kind == vfs.OpOpen && filepath.Ext(op.Path) == ".index" {
			opened++
		}
	}
	b.ReportMetric(float64(opened)/float64(b.N), "index-opens/op")
}

// BenchmarkForceRecovery64Segments recovers a 256 MiB partition of 64
// segments on Mem, as repair.Recover does (ForceRecovery: every segment
// validated, its indexes and transaction index rebuilt from the producer
// state replayed up to it), with and without its indexes: MB/s of .log
// recovered. The producer state is carried from one segment to the next,
// so the time grows with the log, not with its square.
func BenchmarkForceRecovery64Segments(b *testing.B) {
	for _, deleteIndexes := range []bool{false, true} {
		b.Run(fmt.Sprintf("deleteIndexes=%v", deleteIndexes), func(b *testing.B) {
			batch := batch16K(b)
			fsys := vfs.NewMem()
			cfg, err := config.ParseOptions{}.Parse(map[string]string{"segment.bytes": fmt.Sprint(4 << 20)})
			if err != nil {
				b.Fatal(err)
			}
			const dir = "d/r-0"
			l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{})
			if err != nil {
				b.Fatal(err)
			}
			n := (256 << 20) / len(batch)
			for range n {
				if _, err := l.Append(batch, 0); err != nil {
					b.Fatal(err)
				}
			}
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(n * len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				if deleteIndexes {
					b.StopTimer()
					files, err := vfs.ReadDir(fsys, dir)
					if err != nil {
						b.Fatal(err)
					}
					for _, fi := range files {
						if _, ext, err := segment.ParseFileName(fi.Name()); err == nil && ext != segment.LogSuffix {
							if err := fsys.Remove(dir + "/" + fi.Name()); err != nil {
								b.Fatal(err)
							}
						}
					}
					b.StartTimer()
				}
				l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{ForceRecovery: true})
				if err != nil {
					b.Fatal(err)
				}
				if got := len(l.Segments()); got < 64 {
					b.Fatalf("%d segments, want 64 and more", got)
				}
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
