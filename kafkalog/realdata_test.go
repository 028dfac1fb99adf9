package kafkalog_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// copyPartition copies a real partition directory, and its log
// directory's own files (checkpoints, clean-shutdown marker), into a Mem
// as logdir/<partition>. It returns the Mem path of the partition.
func copyPartition(t testing.TB, dir string) (*vfs.Mem, string) {
	t.Helper()
	mem := vfs.NewMem()
	parent := filepath.Dir(dir)
	name := filepath.Base(dir)
	if err := mem.MkdirAll("logdir/"+name, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFiles := func(from, to string) {
		entries, err := os.ReadDir(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			data, err := os.ReadFile(filepath.Join(from, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := vfs.WriteFile(mem, to+"/"+e.Name(), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	copyFiles(parent, "logdir")
	copyFiles(dir, "logdir/"+name)
	return mem, "logdir/" + name
}

// straightRecords decodes every record of a partition's .log files with
// the record package alone, in offset order.
func straightRecords(t testing.TB, dir string) []testRecord {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	sort.Strings(logs)
	var out []testRecord
	var it record.EntryIterator
	var r record.Record
	for _, p := range logs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := record.NewScanner(data, p, 0)
		for s.Next() {
			e := s.Entry()
			it.Reset(e)
			for it.Next(&r) {
				out = append(out, testRecord{r.Offset, r.Timestamp, string(r.Key), string(r.Value)})
			}
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
		}
		if s.Err() != nil {
			t.Fatal(s.Err())
		}
	}
	return out
}

// TestRealPartitions opens every partition written by a real broker —
// read-only in place, and writable on a copy — reads back every record
// from the log start offset, and compares it with a straight decode of the
// files; then checks OffsetForTimestamp for every timestamp present.
func TestRealPartitions(t *testing.T) {
	dirs := realdata.PartitionDirs(t)
	if len(dirs) < 40 {
		t.Fatalf("only %d partitions found", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(realdata.Rel(t, dir), func(t *testing.T) {
			all := straightRecords(t, dir)
			cfg := kafkalog.DefaultConfig()

			// Read-only, in place: must not write a byte.
			before := snapshotDir(t, dir)
			ro, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), cfg, kafkalog.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			checkRealLog(t, ro, all)
			if err := ro.Close(); err != nil {
				t.Fatal(err)
			}
			if after := snapshotDir(t, dir); after != before {
				t.Fatal("a read-only open changed the directory")
			}

			// Writable, on a copy with the log directory's checkpoints.
			mem, p := copyPartition(t, dir)
			l, err := kafkalog.Open(mem, p, cfg, kafkalog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep := l.LoadReport(); len(rep.Problems) > 0 {
				t.Logf("load problems: %v", rep.Problems)
			}
			checkRealLog(t, l, all)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func checkRealLog(t *testing.T, l *kafkalog.Log, all []testRecord) {
	t.Helper()
	var want []testRecord
	for _, r := range all {
		if r.offset >= l.LogStartOffset() {
			want = append(want, r)
		}
	}
	equalRecords(t, readAll(t, l), want)
	if len(want) > 0 && l.LogEndOffset() != want[len(want)-1].offset+1 && !strings.Contains(l.Dir(), "__consumer_offsets-17") {
		t.Fatalf("log end offset %d, last record %d", l.LogEndOffset(), want[len(want)-1].offset)
	}
	seen := map[int64]bool{}
	for _, r := range want {
		if r.ts < 0 || seen[r.ts] {
			continue
		}
		seen[r.ts] = true
		for _, target := range []int64{r.ts, r.ts + 1} {
			var exp int64 = -1
			for _, x := range want {
				if x.ts >= target {
					exp = x.offset
					break
				}
			}
			got, found, err := l.OffsetForTimestamp(target)
			if err != nil {
				t.Fatalf("OffsetForTimestamp(%d): %v", target, err)
			}
			if (exp >= 0) != found || (found && got.Offset != exp) {
				t.Fatalf("OffsetForTimestamp(%d) = %+v found=%v; want offset %d", target, got, found, exp)
			}
		}
	}
}

// snapshotDir summarises a directory's files (names, sizes, mtimes).
func snapshotDir(t *testing.T, dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d %d\n", e.Name(), fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String()
}

// flipConfig is Kafka's default topic config with indexes of 64 KiB, room
// for 8,192 entries where the flipped segment's (231 KB, an entry per
// 4 KiB) need 57: an active segment's indexes are resized to
// segment.index.bytes at every open, which a Mem file holds as zeros, and
// 10 MiB twice over at each of the campaigns' 5,300 opens was half of
// their time, and the collector's work most of the rest.
func flipConfig() kafkalog.Config {
	cfg := kafkalog.DefaultConfig()
	cfg.SegmentIndexBytes = 64 << 10
	return cfg
}

// TestRealBitFlips flips one byte at a time in a real segment, at 5,000
// seeded positions, and opens and reads the partition each time: nothing
// panics, every record returned equals the original at its offset, and a
// flip inside a batch is found and reported with the file and position.
func TestRealBitFlips(t *testing.T) {
	dir := filepath.Join(realdata.Dir(t), "macsakini__KafkaCluster/kafka/data/test-0")
	logName := "00000000000000000000.log"
	cfg := flipConfig()
	orig, err := os.ReadFile(filepath.Join(dir, logName))
	if err != nil {
		t.Fatal(err)
	}
	all := straightRecords(t, dir)
	byOffset := map[int64]testRecord{}
	for _, r := range all {
		byOffset[r.offset] = r
	}
	// The batch boundaries, to check that a reported position lies in the
	// batch that holds the flipped byte.
	var starts []int64
	for s := record.NewScanner(orig, "", 0); s.Next(); {
		starts = append(starts, s.Entry().Position)
	}
	batchOf := func(pos int64) (int64, int64) {
		i := sort.Search(len(starts), func(i int) bool { return starts[i] > pos }) - 1
		end := int64(len(orig))
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		return starts[i], end
	}
	n := 5000
	if testing.Short() {
		n = 500
	}
	rng := rand.New(rand.NewPCG(42, 7))
	reported, unseenEpoch, unseenBase := 0, 0, 0
	for i := 0; i < n; i++ {
		pos := rng.IntN(len(orig))
		mem, p := copyPartition(t, dir)
		// Unclean, so that recovery runs: remove the marker.
		mem.Remove("logdir/.kafka_cleanshutdown")
		data := append([]byte(nil), orig...)
		data[pos] ^= byte(1 << rng.IntN(8))
		if err := vfs.WriteFile(mem, path.Join(p, logName), data, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := kafkalog.Open(mem, p, cfg, kafkalog.Options{TruncateCorrupt: true})
		if err != nil {
			t.Fatalf("flip at %d: open: %v", pos, err)
		}
		for _, r := range readAll(t, l) {
			if r != byOffset[r.offset] {
				t.Fatalf("flip at %d: record %d read back with key %q, was %q", pos, r.offset, r.key, byOffset[r.offset].key)
			}
		}
		rep := l.LoadReport()
		found := false
		for _, rs := range rep.Recovered {
			var ce *format.CorruptionError
			if rs.Result.Truncated > 0 {
				if !errors.As(rs.Result.Reason, &ce) && rs.Result.Tail == record.TailNone {
					t.Fatalf("flip at %d: truncated without a reason", pos)
				}
				if ce != nil {
					lo, hi := batchOf(int64(pos))
					if !strings.HasSuffix(ce.Path, logName) || ce.Offset < lo || ce.Offset >= hi {
						t.Fatalf("flip at %d (batch %d..%d): reported at %s:%d", pos, lo, hi, ce.Path, ce.Offset)
					}
					reported++
					found = true
				}
			}
		}
		if !found {
			// A flip nothing reports must be in a field no checksum
			// covers and that changes no record as read: a batch's
			// partitionLeaderEpoch, or a baseOffset whose new value still
			// fits between its neighbours (the last batch's, raised).
			lo, _ := batchOf(int64(pos))
			switch rel := int64(pos) - lo; {
			case rel >= record.PartitionLeaderEpochOffset && rel < record.MagicOffset:
				unseenEpoch++
			case rel < record.LengthOffset:
				unseenBase++
			default:
				t.Fatalf("flip at %d (byte %d of the batch at %d) went unreported", pos, rel, lo)
			}
		}
		l.Close()
	}
	if reported < n*9/10 {
		t.Fatalf("only %d of %d flips were reported as corruption", reported, n)
	}
	t.Logf("%d flips: %d reported with file and position; unreported: %d in a partitionLeaderEpoch, %d in a baseOffset", n, reported, unseenEpoch, unseenBase)
}

// TestRealBitFlipsCleanShutdown: with the clean-shutdown marker there is
// no recovery, so a flipped byte stays on disk; reads must never return
// it, and must report it. Bytes 0..12 of a batch (baseOffset and length)
// and its partitionLeaderEpoch are outside the checksum: a flip in the
// length still breaks the batch, but a flipped baseOffset or leader epoch
// is invisible to any reader without recovery (Kafka serves it too), so
// those positions are left to TestRealBitFlips, where recovery sees the
// offsets against their neighbours.
func TestRealBitFlipsCleanShutdown(t *testing.T) {
	dir := filepath.Join(realdata.Dir(t), "macsakini__KafkaCluster/kafka/data/test-0")
	logName := "00000000000000000000.log"
	cfg := flipConfig()
	orig, err := os.ReadFile(filepath.Join(dir, logName))
	if err != nil {
		t.Fatal(err)
	}
	all := straightRecords(t, dir)
	byOffset := map[int64]testRecord{}
	for _, r := range all {
		byOffset[r.offset] = r
	}
	uncovered := map[int]bool{}
	for s := record.NewScanner(orig, "", 0); s.Next(); {
		p := int(s.Entry().Position)
		for i := 0; i < 8; i++ {
			uncovered[p+i] = true // baseOffset
		}
		for i := 12; i < 16; i++ {
			uncovered[p+i] = true // partitionLeaderEpoch
		}
	}
	rng := rand.New(rand.NewPCG(9, 9))
	reported := 0
	for i := 0; i < 300; i++ {
		pos := rng.IntN(len(orig))
		if uncovered[pos] {
			continue
		}
		mem, p := copyPartition(t, dir)
		data := append([]byte(nil), orig...)
		data[pos] ^= 0x40
		vfs.WriteFile(mem, path.Join(p, logName), data, 0o644)
		l, err := kafkalog.Open(mem, p, cfg, kafkalog.Options{TruncateCorrupt: true})
		if err != nil {
			t.Fatalf("flip at %d: open: %v", pos, err)
		}
		if !l.LoadReport().CleanShutdown {
			t.Fatal("the copy lost its clean-shutdown marker")
		}
		var it record.Iterator
		var rec record.Record
		for off := l.LogStartOffset(); off < l.LogEndOffset(); {
			res, err := l.Read(off, 1<<20, nil, kafkalog.ReadOptions{})
			if err != nil {
				var ce *format.CorruptionError
				if !errors.As(err, &ce) || !strings.HasSuffix(ce.Path, logName) {
					t.Fatalf("flip at %d: read error %v is not a located CorruptionError", pos, err)
				}
				reported++
				break
			}
			next := off
			s := record.NewScanner(res.Records, "", 0)
			for s.Next() {
				b := s.Entry().Batch
				it.Reset(&b)
				for it.Next(&rec) {
					if got := (testRecord{rec.Offset, rec.Timestamp, string(rec.Key), string(rec.Value)}); got != byOffset[rec.Offset] {
						t.Fatalf("flip at %d: record %d corrupt but returned", pos, rec.Offset)
					}
				}
				if it.Err() != nil {
					t.Fatalf("flip at %d: a returned batch does not decode: %v", pos, it.Err())
				}
				next = b.LastOffset() + 1
			}
			if next <= off {
				// Nothing more can be read: the flipped length hid the
				// rest of the segment as a partial entry.
				break
			}
			off = next
		}
		l.Close()
	}
	t.Logf("%d flips reported by a read", reported)
}
