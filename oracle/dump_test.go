package oracle_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/timeindex"
)

// dumpRun is one comparison: both tools dump files with flags, in one
// call each (a JVM start costs ~0.4 s).
type dumpRun struct {
	name  string
	flags []string
	// kafkaFlags, when set, are the flags Kafka's tool runs with instead
	// (an equivalent set whose output another run already has).
	kafkaFlags []string
	files      []string
	// stderrDiffers names the files whose standard-error lines
	// legitimately differ, with the reason; their lines are left out of
	// the stderr comparison (stdout is always compared in full).
	stderrDiffers map[string]string
}

// slowTimeIndex is the size above which a .timeindex is compared on a
// prefix of its segment (see segmentPrefix): Kafka's check reads every
// batch after each entry's position, 20 s for the 523 entries of
// RaviAzzuraPutra's 29,500-batch metadata log.
const slowTimeIndex = 4 << 10

// slowPrefixBytes is how much of such a segment's log the prefix keeps.
const slowPrefixBytes = 128 << 10

// TestDumpTextMatchesKafka runs segviz dump and Kafka 4.3.1's
// DumpLogSegments with the same flags on every file of ../shared/kafka-real
// and testdata/kafka-broker that Kafka's tool dumps (.log, KRaft
// .checkpoint snapshots, .index, .timeindex, .txnindex, producer
// .snapshot, and a file of an unknown kind), and requires the same
// standard output, byte for byte, and the same standard error.
func TestDumpTextMatchesKafka(t *testing.T) {
	oracle.Require(t)
	utf8Stdout(t)
	var logs, indexes, slow, brokerLogs []string
	roots := realdata.Roots(t)
	for i, root := range roots {
		for _, pattern := range []string{"*.log", "*.checkpoint"} {
			for _, f := range realdata.GlobUnder(t, root, pattern) {
				logs = append(logs, f)
				if i == 1 && pattern == "*.log" {
					brokerLogs = append(brokerLogs, f)
				}
			}
		}
		for _, pattern := range []string{"*.index", "*.timeindex", "*.txnindex", "*.snapshot"} {
			for _, f := range realdata.GlobUnder(t, root, pattern) {
				if st, err := os.Stat(f); err == nil && strings.HasSuffix(f, ".timeindex") && st.Size() > slowTimeIndex {
					slow = append(slow, f)
					continue
				}
				indexes = append(indexes, f)
			}
		}
	}
	// Kafka's tool ignores (on stderr) a file of an unknown suffix.
	if meta := realdata.GlobUnder(t, roots[0], "partition.metadata"); len(meta) > 0 {
		indexes = append(indexes, meta[0])
	}
	runs := []dumpRun{
		{name: "log", files: logs},
		{name: "log --deep-iteration", flags: []string{"--deep-iteration"}, files: logs},
		{name: "log --deep-iteration --print-data-log", flags: []string{"--deep-iteration", "--print-data-log"}, files: logs},
		// Kafka's --print-data-log implies --deep-iteration: the same
		// output, checked as such on the broker's files (a run of its own
		// on all of them would cost 10 s).
		{name: "log --print-data-log", flags: []string{"--print-data-log"}, kafkaFlags: []string{"--deep-iteration", "--print-data-log"}, files: logs},
		{name: "broker log --print-data-log", flags: []string{"--print-data-log"}, files: brokerLogs},
		{name: "log --print-data-log --skip-record-metadata", flags: []string{"--print-data-log", "--skip-record-metadata"}, files: brokerLogs},
		{name: "log --deep-iteration --max-bytes", flags: []string{"--deep-iteration", "--max-bytes", "5000"}, files: brokerLogs},
		{name: "index", files: indexes},
		{name: "index --index-sanity-check", flags: []string{"--index-sanity-check"}, files: slices.Concat(indexes, slow)},
		{name: "index --verify-index-only", flags: []string{"--verify-index-only"}, files: indexes},
	}
	var prefixes []string
	for _, f := range slow {
		base := strings.TrimSuffix(f, ".timeindex")
		p := segmentPrefix(t, base, filepath.Join(t.TempDir(), filepath.Base(filepath.Dir(f))), slowPrefixBytes)
		prefixes = append(prefixes, p+".timeindex", p+".index")
	}
	runs = append(runs, dumpRun{name: "large time index prefix", files: prefixes},
		dumpRun{name: "large time index prefix --verify-index-only", flags: []string{"--verify-index-only"}, files: prefixes})
	segviz := buildSegviz(t, t.TempDir())
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			compareDumps(t, segviz, r)
		})
	}
}

// TestDumpTextMatchesKafkaDamaged compares the two tools on damaged
// copies of real files: a torn last batch, a short zero tail, a flipped
// bit in a batch header (the CRC fails), and an index and a time index
// with zero padding (a broker's preallocated files). Where Kafka's tool
// stops at an exception (a zero tail longer than a header, an undecodable
// batch, a failed sanity check) segviz goes on: not compared here.
func TestDumpTextMatchesKafkaDamaged(t *testing.T) {
	oracle.Require(t)
	utf8Stdout(t)
	src := filepath.Join(realdata.Dir(t), "macsakini__KafkaCluster", "kafka", "data", "test-0", "00000000000000000000")
	read := func(ext string) []byte {
		b, err := os.ReadFile(src + ext)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	log := read(".log")
	dir := t.TempDir()
	write := func(part, ext string, b []byte) string {
		p := filepath.Join(dir, part, "00000000000000000000"+ext)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The low byte of the first batch's base timestamp: the CRC fails, the
	// records still decode (a timestamp 1 ms off).
	crc := bytes.Clone(log)
	crc[27+7] ^= 0x01
	files := []string{
		write("torn", ".log", log[:len(log)-7]),
		write("zeros", ".log", append(bytes.Clone(log), make([]byte, 10)...)),
		write("crc", ".log", crc),
		write("padded", ".index", append(read(".index"), make([]byte, 80)...)),
		write("padded", ".timeindex", append(read(".timeindex"), make([]byte, 120)...)),
	}
	write("padded", ".log", log)
	differs := map[string]string{files[2]: "segviz adds an Error line with the checksums; Kafka prints only isvalid: false"}
	segviz := buildSegviz(t, t.TempDir())
	for _, flags := range [][]string{nil, {"--deep-iteration", "--print-data-log"}} {
		t.Run(strings.Join(append([]string{"damaged"}, flags...), " "), func(t *testing.T) {
			compareDumps(t, segviz, dumpRun{flags: flags, files: files, stderrDiffers: differs})
		})
	}
}

// segmentPrefix copies into dir the first batches of the segment base
// (its .log up to the last batch ending within max bytes, the .index
// entries pointing into that, the .timeindex entries of its offsets) and
// returns the copy's base path.
func segmentPrefix(t *testing.T, base, dir string, max int64) string {
	t.Helper()
	read := func(ext string) []byte {
		b, err := os.ReadFile(base + ext)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	log, idx, tix := read(".log"), read(".index"), read(".timeindex")
	baseOffset, err := strconv.ParseInt(filepath.Base(base), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	var rs record.ReaderScanner
	rs.Reset(bytes.NewReader(log), int64(len(log)), base+".log", 0)
	end, last := int64(0), baseOffset-1
	for rs.Next() && rs.ValidEnd() <= max {
		end, last = rs.ValidEnd(), rs.Entry().LastOffset()
	}
	n := 0
	for ; (n+1)*index.EntrySize <= len(idx) && int64(index.DecodeEntry(idx[n*index.EntrySize:], baseOffset).Position) < end; n++ {
	}
	m := 0
	for ; (m+1)*timeindex.EntrySize <= len(tix) && timeindex.DecodeEntry(tix[m*timeindex.EntrySize:], baseOffset).Offset <= last; m++ {
	}
	out := filepath.Join(dir, filepath.Base(base))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for ext, b := range map[string][]byte{".log": log[:end], ".index": idx[:n*index.EntrySize], ".timeindex": tix[:m*timeindex.EntrySize]} {
		if err := os.WriteFile(out+ext, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// utf8Stdout makes Java print UTF-8 whatever the locale, as segviz does.
func utf8Stdout(t *testing.T) {
	t.Setenv("JAVA_TOOL_OPTIONS", strings.TrimSpace(os.Getenv("JAVA_TOOL_OPTIONS")+" -Dstdout.encoding=UTF-8 -Dstderr.encoding=UTF-8"))
}

// compareDumps runs both tools and compares their outputs.
func compareDumps(t *testing.T, segviz string, r dumpRun) {
	t.Helper()
	if len(r.files) == 0 {
		t.Skip("no files")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string{"--files", strings.Join(r.files, ",")}, r.flags...)
	kafkaArgs := args
	if r.kafkaFlags != nil {
		kafkaArgs = append([]string{"--files", strings.Join(r.files, ",")}, r.kafkaFlags...)
	}
	kOut, kErr, err := kafkaDump(ctx, kafkaArgs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, segviz, append([]string{"dump"}, args...)...)
	var sOut, sErr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &sOut, &sErr
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok { // a non-zero exit reports problems found
			t.Fatal(err)
		}
	}
	if !bytes.Equal(kOut, sOut.Bytes()) {
		reportDumpDiff(t, r.files, kOut, sOut.Bytes())
	}
	want, got := kafkaStderr(kErr), sErr.String()
	for f, reason := range r.stderrDiffers {
		var kept []string
		for _, l := range strings.SplitAfter(got, "\n") {
			if !strings.HasPrefix(l, "Error: "+f+":") {
				kept = append(kept, l)
			}
		}
		got = strings.Join(kept, "")
		t.Logf("stderr of %s not compared: %s", filepath.Base(filepath.Dir(f)), reason)
	}
	if want != got {
		i := firstDiff([]byte(want), []byte(got))
		t.Errorf("standard error differs at byte %d:\nKafka:  %q\nsegviz: %q", i, excerpt(want, i), excerpt(got, i))
	}
	t.Logf("%d files: %d stdout lines and %d stderr lines equal to Kafka's", len(r.files), bytes.Count(kOut, []byte("\n")), strings.Count(want, "\n"))
}

// kafkaDumps memoizes Kafka's dumps: runs with equivalent flags share one.
var kafkaDumps sync.Map // args joined by NUL → *kafkaDumpResult

type kafkaDumpResult struct {
	once           sync.Once
	stdout, stderr []byte
	err            error
}

// kafkaDump runs DumpLogSegments with args, once per args.
func kafkaDump(ctx context.Context, args []string) (stdout, stderr []byte, err error) {
	v, _ := kafkaDumps.LoadOrStore(strings.Join(args, "\x00"), &kafkaDumpResult{})
	r := v.(*kafkaDumpResult)
	r.once.Do(func() { r.stdout, r.stderr, r.err = oracle.RunSplit(ctx, append([]string{"dump-log"}, args...)...) })
	return r.stdout, r.stderr, r.err
}

// reportDumpDiff names the first file whose dump differs and its first
// differing lines.
func reportDumpDiff(t *testing.T, files []string, kafka, segviz []byte) {
	t.Helper()
	k, s := splitDumps(kafka), splitDumps(segviz)
	for _, f := range files {
		kl, sl := k[f], s[f]
		for i := 0; i < max(len(kl), len(sl)); i++ {
			if i < len(kl) && i < len(sl) && kl[i] == sl[i] {
				continue
			}
			var b strings.Builder
			for j := i; j < min(i+3, max(len(kl), len(sl))); j++ {
				fmt.Fprintf(&b, "line %d\n  Kafka:  %s\n  segviz: %s\n", j+1, lineAt(kl, j), lineAt(sl, j))
			}
			t.Fatalf("%s: the dumps differ:\n%s", f, b.String())
		}
	}
	t.Fatalf("the outputs differ (%d and %d bytes) outside the files' sections", len(kafka), len(segviz))
}

func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(none)"
}

func excerpt(s string, i int) string {
	return s[max(0, i-80):min(len(s), i+160)]
}

// kafkaStderr drops the JVM's own lines from Kafka's standard error: the
// SLF4J warnings and the notice of JAVA_TOOL_OPTIONS.
func kafkaStderr(b []byte) string {
	var kept []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(l, "SLF4J") && !strings.HasPrefix(l, "Picked up JAVA_TOOL_OPTIONS") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}
