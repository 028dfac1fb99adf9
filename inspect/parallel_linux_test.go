package inspect_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/internal/maprange"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// osDamagedPartition writes a partition of several segments, two entries
// of its second one damaged (a flipped bit, and zeros over a batch), into
// a directory of the OS: Verify's decoders read its .log files through
// mappings. It returns the FS and the partition's directory in it.
func osDamagedPartition(t *testing.T) (vfs.FS, string, *fixture) {
	t.Helper()
	// Segments of 1 MiB or more: smaller files are read, not mapped
	// (maprange.MinSize).
	f := newFixture(t, map[string]string{"segment.bytes": "1100000"})
	f.add(t, 3000, 8, compress.None, 2)
	f.close(t)
	logs := f.logs(t)
	if len(logs) < 3 {
		t.Fatalf("%d segments, want 3 or more", len(logs))
	}
	if size := len(f.read(t, logs[1])); size < maprange.MinSize {
		t.Fatalf("the damaged segment has %d bytes, fewer than maprange.MinSize: it would not be mapped", size)
	}
	f.edit(t, logs[1], func(b []byte) []byte {
		pos, size := batches(t, b)
		b[pos[len(pos)/3]+record.RecordsOffset+3] ^= 1
		at := pos[2*len(pos)/3]
		clear(b[at : at+size[2*len(pos)/3]])
		return b
	})
	osfs := vfs.Sub(vfs.OS(), t.TempDir())
	copyTree(t, f.fs, f.dir, osfs, "/p-0")
	return osfs, "/p-0", f
}

// TestVerifyParallelMapped: a partition in the OS's files, damaged, its
// entries decoded concurrently from mapped chunks (of several sizes), gives
// the sequential report.
func TestVerifyParallelMapped(t *testing.T) {
	osfs, dir, f := osDamagedPartition(t)
	for _, chunk := range []int{1 << 20, 5000, 1} {
		t.Run(fmt.Sprintf("chunk=%d", chunk), func(t *testing.T) {
			rep := sameParallelWith(t, osfs, dir, inspect.Options{Now: f.clock.t.UnixMilli()}, func(fsys vfs.FS, dir string, opt inspect.Options) (inspect.Report, error) {
				return inspect.VerifyChunks(fsys, dir, opt, chunk)
			})
			if rep.Batches < 2990 || rep.OK || rep.Count(finding.Error) < 2 {
				t.Errorf("%d batches, OK %v, %d errors", rep.Batches, rep.OK, rep.Count(finding.Error))
			}
		})
	}
}

// TestVerifyMappedFileShrinks truncates a .log of one segment of 3 MiB
// while its mapped chunks are decoded (from the progress callback, after
// its first MiB): the reads of whichever goroutine is reading the mapping
// fault (cutting chunks, decoding them, or walking), and Verify reads on
// or fails with a read error naming the file; it does not crash.
func TestVerifyMappedFileShrinks(t *testing.T) {
	f := newFixture(t, map[string]string{"segment.bytes": "8388608"})
	f.add(t, 3000, 10, compress.None, 2)
	f.close(t)
	root := t.TempDir()
	osfs := vfs.Sub(vfs.OS(), root)
	copyTree(t, f.fs, f.dir, osfs, "/p-0")
	name := filepath.Join(root, "p-0", seg0+".log")
	if fi, err := os.Stat(name); err != nil || fi.Size() < 3<<20 {
		t.Fatalf("the .log: %v, %v; want 3 MiB or more", fi, err)
	}
	cut := false
	opt := inspect.Options{Now: f.clock.t.UnixMilli(), Parallelism: 3, Progress: func(done, total int64) {
		if !cut && done > 0 && done < total {
			cut = true
			if err := os.Truncate(name, 100); err != nil {
				t.Error(err)
			}
		}
	}}
	rep, err := inspect.VerifyChunks(osfs, "/p-0", opt, 4096)
	if !cut {
		t.Fatal("the progress callback was not called before the end")
	}
	if err != nil && !strings.Contains(err.Error(), seg0+".log") {
		t.Fatalf("Verify = %v, want a report or a read error naming the .log", err)
	}
	if err == nil && rep.OK {
		t.Errorf("Verify of a .log cut to 100 bytes under it reports OK")
	}
	t.Logf("Verify = %v; %d batches, %d problems", err, rep.Batches, len(rep.Problems))
}

// TestVerifyParallelListing: a log directory of enough partitions that
// they are listed on several workers gives the sequential run's report,
// the listings' findings in order, and, with two partitions that cannot
// be read (a symbolic link to nothing where a segment file is), the
// error of the first of them.
func TestVerifyParallelListing(t *testing.T) {
	root := t.TempDir()
	const n = 300
	write := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		p := fmt.Sprintf("logs/t-%d", i)
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
		write(p + "/00000000000000000000.log")
		if i%7 == 0 {
			write(p + "/00000000000000000000.log.cleaned")
		}
		if i%11 == 0 {
			write(p + "/00000000000000000005.index")
		}
		if i%13 == 0 {
			write(p + "/00000000000000000003.log.deleted")
		}
	}
	osfs := vfs.Sub(vfs.OS(), root)
	opt := inspect.Options{Now: 1}
	rep := sameParallel(t, osfs, "/logs", opt)
	kinds := map[string]int{}
	for _, p := range rep.Problems {
		kinds[p.Kind]++
	}
	want := map[string]int{finding.KindLeftoverFile: (n + 6) / 7, finding.KindOrphanFile: (n + 10) / 11, finding.KindDeletedFile: (n + 12) / 13}
	for k, c := range want {
		if kinds[k] != c {
			t.Errorf("%d problems of kind %s, want %d (all: %v)", kinds[k], k, c, kinds)
		}
	}

	for _, i := range []int{260, 140} {
		if err := os.Symlink("nowhere", filepath.Join(root, fmt.Sprintf("logs/t-%d/00000000000000000009.timeindex", i))); err != nil {
			t.Fatal(err)
		}
	}
	sameParallel(t, osfs, "/logs", opt)
	_, err := inspect.Verify(osfs, "/logs", inspect.Options{Now: 1, Parallelism: 2})
	if err == nil || !strings.Contains(err.Error(), "/logs/t-140/") {
		t.Errorf("Verify with two unreadable partitions: %v, want t-140's error", err)
	}
}
