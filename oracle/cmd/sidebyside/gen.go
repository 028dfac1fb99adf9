package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// wallClock is the engine's clock while it writes: the generation time, so
// that record timestamps (one hour earlier on) raise no retention warning.
type wallClock struct{ t time.Time }

func (c wallClock) Now() time.Time { return c.t }

// textPool is JSON-like text the record values are cut from: printable, so
// that --print-data-log decodes them as a real payload, and compressible
// about 3×.
var textPool = func() []byte {
	rng := rand.New(rand.NewPCG(7, 7))
	fields := []string{"id", "amount", "currency", "status", "ts", "merchant", "country", "note"}
	var b []byte
	for len(b) < 1<<20 {
		b = fmt.Appendf(b, "{%q:%d,%q:%q},", fields[rng.IntN(len(fields))], rng.Uint32(),
			fields[rng.IntN(len(fields))], strings.Repeat("x", rng.IntN(12)))
	}
	return b
}()

// genPartition writes the partition directory dir with segkit's engine
// (leader appends, one batch per append) until its .log holds at least size
// bytes, in one segment, and closes it cleanly. Batches hold 1 to 100
// records of mixed sizes (60% 10–100 B, 30% 100 B–1 KiB, 10% 1–8 KiB
// values; some null keys, some headers); about half of them are compressed
// with codec, the others not. A partition already in dir is removed
// first. It returns the .log's size.
func genPartition(fsys vfs.FS, dir string, size int64, codec compress.Codec, seed uint64) (int64, error) {
	props := map[string]string{"segment.bytes": "2147483647"}
	if size < 64<<20 {
		// A small preallocation (a vfs.Mem holds it all); the indexes are
		// trimmed at Close either way.
		props["segment.index.bytes"] = "1048576"
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(props)
	if err != nil {
		return 0, err
	}
	// A partition left by an earlier run in the same -dir is written
	// again, not appended to (it would grow by size each run).
	if err := fsys.RemoveAll(dir); err != nil {
		return 0, err
	}
	if err := fsys.MkdirAll(path.Dir(dir), 0o755); err != nil {
		return 0, err
	}
	now := time.Now()
	l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: wallClock{now}})
	if err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	ts := now.Add(-time.Hour).UnixMilli()
	var (
		bld   record.Builder
		buf   []byte
		recs  []record.Record
		total int64
		n     int
	)
	hdrs := []record.Header{{Key: []byte("trace-id"), Value: []byte("4bf92f3577b34da6a3ce929d0e0e4736")}}
	for total < size {
		recs = recs[:0]
		nrec := 1 + rng.IntN(100)
		for range nrec {
			var vs int
			switch p := rng.IntN(10); {
			case p < 6:
				vs = 10 + rng.IntN(90)
			case p < 9:
				vs = 100 + rng.IntN(924)
			default:
				vs = 1024 + rng.IntN(7*1024)
			}
			off := rng.IntN(len(textPool) - vs)
			r := record.Record{Timestamp: ts, Value: textPool[off : off+vs]}
			if rng.IntN(8) != 0 {
				r.Key = fmt.Appendf(nil, "user-%06d", rng.IntN(1_000_000))
			}
			if rng.IntN(16) == 0 {
				r.Headers = hdrs
			}
			recs = append(recs, r)
			ts++
			n++
		}
		c := compress.None
		if rng.IntN(2) == 0 {
			c = codec
		}
		spec := record.NewBatchSpec(0, c)
		if buf, err = bld.AppendBatch(buf[:0], &spec, recs); err != nil {
			l.Close()
			return 0, err
		}
		if _, err := l.Append(buf, 0); err != nil {
			l.Close()
			return 0, fmt.Errorf("%s: append: %w", dir, err)
		}
		total += int64(len(buf))
	}
	if err := l.Close(); err != nil {
		return 0, err
	}
	fi, err := fsys.Stat(path.Join(dir, logName))
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// logName is the one segment's .log (base offset 0).
const logName = "00000000000000000000.log"

// makeUnclean makes dst (a partition directory in a new log directory with
// no clean-shutdown marker and no checkpoints) from the clean partition
// src: its .log hard-linked (both recoveries only read it: they recover a
// copy), its other files copied, its .index and .timeindex left out so
// that recovery rebuilds them.
func makeUnclean(src, dst string) error {
	return copyFiles(src, dst, func(name string) fileAction {
		switch {
		case strings.HasSuffix(name, ".index"), strings.HasSuffix(name, ".timeindex"):
			return skipFile
		case strings.HasSuffix(name, ".log"):
			return linkFile
		}
		return copyFileAction
	})
}

// copyDir copies the regular files of src into a new directory dst.
func copyDir(src, dst string) error {
	return copyFiles(src, dst, func(string) fileAction { return copyFileAction })
}

// fileAction is what copyFiles does with one file.
type fileAction int

const (
	copyFileAction fileAction = iota
	linkFile
	skipFile
)

// copyFiles puts the regular files of src into a new directory dst, each as
// how says: copied, hard-linked or left out.
func copyFiles(src, dst string, how func(name string) fileAction) error {
	// A directory left by an earlier run in the same -dir is made again.
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		switch how(e.Name()) {
		case linkFile:
			err = os.Link(from, to)
		case copyFileAction:
			err = copyFile(from, to)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// logFiles returns the .log files under root (any depth) and their total size.
func logFiles(root string) ([]string, int64, error) {
	var files []string
	var total int64
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, ".log") {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			files = append(files, p)
			total += fi.Size()
		}
		return nil
	})
	return files, total, err
}

// export writes the tree under dir in fsys to the OS directory dst.
func export(fsys vfs.FS, dir, dst string) error {
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, fi := range infos {
		src, to := path.Join(dir, fi.Name()), filepath.Join(dst, fi.Name())
		if fi.IsDir() {
			if err := export(fsys, src, to); err != nil {
				return err
			}
			continue
		}
		b, err := vfs.ReadFile(fsys, src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// exportLogDir writes the log directory dir of fsys to dst: its partition
// directories as they are, and the entries of its checkpoint files (Kafka's
// "0", count, entries text) appended to merged, by file name, for the
// caller to write once every partition is out.
func exportLogDir(fsys vfs.FS, dir, dst string, merged map[string][]string) error {
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, fi := range infos {
		src := path.Join(dir, fi.Name())
		if fi.IsDir() {
			if err := export(fsys, src, filepath.Join(dst, fi.Name())); err != nil {
				return err
			}
			continue
		}
		b, err := vfs.ReadFile(fsys, src)
		if err != nil {
			return err
		}
		if !strings.HasSuffix(fi.Name(), "-checkpoint") {
			if err := os.WriteFile(filepath.Join(dst, fi.Name()), b, 0o644); err != nil {
				return err
			}
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) < 2 || lines[0] != "0" {
			return fmt.Errorf("%s: not a version-0 checkpoint: %q", src, b)
		}
		merged[fi.Name()] = append(merged[fi.Name()], lines[2:]...)
	}
	return nil
}
