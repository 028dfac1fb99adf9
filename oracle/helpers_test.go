package oracle_test

// Helpers shared by the recovery, retention and index comparisons with
// Kafka: writing partitions with segkit's engine, copying directories,
// running segkit's recovery and Kafka's (oracle/kafka recover) and reading
// what each left.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/repair"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// baseTs is the first record timestamp of generated partitions
// (2025-11-14T22:13:20Z); writeNow is the engine's clock while it writes
// them, later than every record timestamp they hold.
const (
	baseTs   = int64(1_763_158_400_000)
	writeNow = baseTs + 30*24*3600*1000
)

type fixedClock struct{ ms int64 }

func (c fixedClock) Now() time.Time { return time.UnixMilli(c.ms) }

// batchPlan is one batch a generated partition holds: one record per
// timestamp (record.NoTimestamp for none), values of valueSize bytes.
type batchPlan struct {
	codec      compress.Codec
	timestamps []int64
	valueSize  int
}

// writeLog writes a partition directory dir with segkit's engine (leader
// appends, one batch per append), rolling explicitly after each segment of
// segs; an empty last segment leaves an empty active segment. props is the
// topic config (segment.bytes defaults to 1 GiB here, so that only the
// plan rolls). The log is closed cleanly.
func writeLog(t testing.TB, dir string, props map[string]string, segs [][]batchPlan) {
	t.Helper()
	p := map[string]string{"segment.bytes": "1073741824"}
	for k, v := range props {
		p[k] = v
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := kafkalog.Open(vfs.OS(), dir, cfg, kafkalog.Options{Clock: fixedClock{writeNow}})
	if err != nil {
		t.Fatal(err)
	}
	var bld record.Builder
	var buf []byte
	n := 0
	for si, seg := range segs {
		if si > 0 {
			if err := l.Roll(); err != nil {
				t.Fatalf("%s: roll before segment %d: %v", dir, si, err)
			}
		}
		for _, b := range seg {
			recs := make([]record.Record, len(b.timestamps))
			for i, ts := range b.timestamps {
				v := bytes.Repeat([]byte{byte('a' + n%26)}, b.valueSize)
				recs[i] = record.Record{Timestamp: ts, Key: fmt.Appendf(nil, "k%d", n), Value: v}
				n++
			}
			spec := record.NewBatchSpec(0, b.codec)
			if buf, err = bld.AppendBatch(buf[:0], &spec, recs); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Append(buf, 0); err != nil {
				t.Fatalf("%s: append: %v", dir, err)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

var allCodecs = []compress.Codec{compress.None, compress.Gzip, compress.Snappy, compress.LZ4, compress.Zstd}

// genPlan returns segments of batches with codecs cycled from codecs and
// 1..maxRecs records per batch. With jitter, timestamps go back and forth
// (non-monotonic within and between batches); otherwise they increase.
func genPlan(rng interface{ IntN(int) int }, segments, batchesPerSeg, maxRecs, valueSize int, codecs []compress.Codec, jitter bool) [][]batchPlan {
	var out [][]batchPlan
	ts, k := baseTs, 0
	for s := 0; s < segments; s++ {
		var seg []batchPlan
		for b := 0; b < batchesPerSeg; b++ {
			nrec := 1 + rng.IntN(maxRecs)
			bp := batchPlan{codec: codecs[k%len(codecs)], valueSize: valueSize + rng.IntN(valueSize+1)}
			k++
			for r := 0; r < nrec; r++ {
				ts += 1000
				v := ts
				if jitter {
					v += int64(rng.IntN(20_000)) - 10_000
				}
				bp.timestamps = append(bp.timestamps, v)
			}
			seg = append(seg, bp)
		}
		out = append(out, seg)
	}
	return out
}

// copyDir copies the regular files of src into a new directory dst,
// writable, keeping modification times.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(dst, e.Name())
		if err := os.WriteFile(d, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(d, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
}

// segInfo is one segment as a recovery left it.
type segInfo struct {
	BaseOffset int64 `json:"baseOffset"`
	Size       int64 `json:"size"`
}

// outcome is what a recovery left: the figures compared with Kafka's.
type outcome struct {
	LogStartOffset int64
	LogEndOffset   int64
	Segments       []segInfo
}

func (o outcome) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "logStart=%d logEnd=%d segments=[", o.LogStartOffset, o.LogEndOffset)
	for i, s := range o.Segments {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%d", s.BaseOffset, s.Size)
	}
	b.WriteByte(']')
	return b.String()
}

// kafkaResult is one line of `oracle/kafka recover`.
type kafkaResult struct {
	Src             string    `json:"src"`
	Out             string    `json:"out"`
	SegmentsBefore  []int64   `json:"segmentsBefore"`
	LogStartOffset  int64     `json:"logStartOffset"`
	LogEndOffset    int64     `json:"logEndOffset"`
	Segments        []segInfo `json:"segments"`
	SegmentsDeleted []int64   `json:"segmentsDeleted"`
	BytesTruncated  int64     `json:"bytesTruncated"`
	Error           string    `json:"error"`
}

func (k kafkaResult) outcome() outcome {
	return outcome{LogStartOffset: k.LogStartOffset, LogEndOffset: k.LogEndOffset, Segments: k.Segments}
}

// recoverPair is one SRC OUT pair for Kafka, with the call's flags (pairs
// with the same flags share a JVM).
type recoverPair struct {
	src, out string
	flags    []string // --config k=v, --log-start-offset N
}

// kafkaRecoverAll runs Kafka's recovery on every pair, grouped by flags and
// split over two JVMs at a time, and returns the results by OUT path.
func kafkaRecoverAll(t testing.TB, pairs []recoverPair) map[string]kafkaResult {
	t.Helper()
	groups := map[string][]recoverPair{}
	var keys []string
	for _, p := range pairs {
		k := strings.Join(p.flags, "\x00")
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], p)
	}
	type call struct{ args []string }
	var calls []call
	for _, k := range keys {
		g := groups[k]
		chunk := (len(g) + 1) / 2
		if len(g) < 40 {
			chunk = len(g)
		}
		for i := 0; i < len(g); i += chunk {
			args := append([]string{"recover"}, g[0].flags...)
			for _, p := range g[i:min(i+chunk, len(g))] {
				args = append(args, p.src, p.out)
			}
			calls = append(calls, call{args})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var mu sync.Mutex
	res := map[string]kafkaResult{}
	var errs []string
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out, err := oracle.Run(ctx, nil, c.args...)
			mu.Lock()
			defer mu.Unlock()
			n := 0
			sc := bufio.NewScanner(bytes.NewReader(out))
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				var r kafkaResult
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					errs = append(errs, fmt.Sprintf("oracle output %q: %v", sc.Text(), err))
					continue
				}
				res[r.Out] = r
				n++
			}
			// Exit status 3 means some pair reported an error (kept in
			// its line); anything else without every line is a failure.
			if want := (len(c.args) - 1 - len(groupFlags(c.args))) / 2; err != nil && n != want {
				errs = append(errs, err.Error())
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("oracle/kafka recover:\n%s", strings.Join(errs, "\n"))
	}
	for _, p := range pairs {
		if _, ok := res[p.out]; !ok {
			t.Fatalf("oracle/kafka recover printed nothing for %s", p.out)
		}
	}
	return res
}

// groupFlags returns the flag arguments of a recover call (after "recover").
func groupFlags(args []string) []string {
	var f []string
	for i := 1; i+1 < len(args) && strings.HasPrefix(args[i], "--"); i += 2 {
		f = append(f, args[i], args[i+1])
	}
	return f
}

// segkitRecover runs segkit's recovery (repair.Recover: Kafka's loader
// with every segment recovered) on dir in place and returns what it left.
func segkitRecover(dir string, cfg *kafkalog.Config) (outcome, repair.RecoverReport, error) {
	rep, err := repair.Recover(vfs.OS(), dir, repair.RecoverOptions{Config: cfg})
	if err != nil {
		return outcome{}, rep, err
	}
	o, err := readOutcome(dir)
	return o, rep, err
}

// readOutcome opens a cleanly closed partition read-only and returns its
// log start and end offsets and its segments as the directory holds them.
func readOutcome(dir string) (outcome, error) {
	l, err := kafkalog.Open(vfs.OS(), dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		return outcome{}, err
	}
	o := outcome{LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset()}
	l.Close()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return outcome{}, err
	}
	for _, e := range ents {
		base, ext, err := segment.ParseFileName(e.Name())
		if err != nil || ext != segment.LogSuffix {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return outcome{}, err
		}
		o.Segments = append(o.Segments, segInfo{BaseOffset: base, Size: fi.Size()})
	}
	sort.Slice(o.Segments, func(i, j int) bool { return o.Segments[i].BaseOffset < o.Segments[j].BaseOffset })
	return o, nil
}

// realPartitions returns the partition directories of ../shared/kafka-real
// (skipping without it, failing under CI=true) whose name is a
// topic-partition, as Kafka's loader requires.
func realPartitions(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, d := range realdata.PartitionDirs(t) {
		if topicPartition(filepath.Base(d)) {
			out = append(out, d)
		}
	}
	return out
}

// brokerPartitions returns the partition directories under
// testdata/kafka-broker of the repository, if it exists.
func brokerPartitions(t testing.TB) []string {
	t.Helper()
	root := filepath.Join("..", "testdata", "kafka-broker")
	if _, err := os.Stat(root); err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, segment.LogSuffix) {
			dir := filepath.Dir(p)
			if !seen[dir] && topicPartition(filepath.Base(dir)) {
				seen[dir] = true
				out = append(out, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func topicPartition(name string) bool {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || i == len(name)-1 {
		return false
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// shortName names a partition directory for test output: its path below
// kafka-real or testdata, else its base name.
func shortName(dir string) string {
	for _, marker := range []string{"kafka-real" + string(filepath.Separator), "kafka-broker" + string(filepath.Separator)} {
		if i := strings.Index(dir, marker); i >= 0 {
			return dir[i+len(marker):]
		}
	}
	return filepath.Base(dir)
}

// segmentFiles returns the files of dir with the given suffix (".index",
// ".log" …), sorted.
func segmentFiles(t testing.TB, dir, suffix string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if _, ext, err := segment.ParseFileName(e.Name()); err == nil && ext == suffix {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

// firstDiff returns the first byte position where a and b differ, or -1.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// compareIndexFiles compares the .index and .timeindex files of two
// partition directories byte for byte. It returns the number of files
// compared and a description of each difference (file, length, first
// differing entry).
func compareIndexFiles(t testing.TB, want, got string) (compared int, diffs []string) {
	t.Helper()
	for _, suf := range []struct {
		ext   string
		entry int
	}{{segment.IndexSuffix, 8}, {segment.TimeIndexSuffix, 12}} {
		wf, gf := segmentFiles(t, want, suf.ext), segmentFiles(t, got, suf.ext)
		if !slices.Equal(wf, gf) {
			diffs = append(diffs, fmt.Sprintf("%s files: Kafka has %v, segkit %v", suf.ext, wf, gf))
		}
		for _, name := range wf {
			if !slices.Contains(gf, name) {
				continue
			}
			a, err := os.ReadFile(filepath.Join(want, name))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(got, name))
			if err != nil {
				t.Fatal(err)
			}
			compared++
			if p := firstDiff(a, b); p >= 0 {
				e := p / suf.entry
				diffs = append(diffs, fmt.Sprintf("%s: Kafka %d bytes (%d entries), segkit %d bytes (%d entries); first difference in entry %d (byte %d): Kafka %x, segkit %x",
					name, len(a), len(a)/suf.entry, len(b), len(b)/suf.entry, e, p, entryAt(a, e, suf.entry), entryAt(b, e, suf.entry)))
			}
		}
	}
	return compared, diffs
}

func entryAt(b []byte, e, size int) []byte {
	lo := e * size
	if lo >= len(b) {
		return nil
	}
	return b[lo:min(lo+size, len(b))]
}
