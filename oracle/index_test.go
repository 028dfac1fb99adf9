package oracle_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/segment"
)

// indexCase is one partition whose indexes are compared: want is the
// directory Kafka's recovery rebuilt them in, got segkit's.
type indexCase struct {
	name, kind string
	src        string
	got, out   string
	flags      []string
}

// TestIndexesMatchKafka compares .index and .timeindex files byte for byte
// with the ones Kafka's recovery (LogSegment.recover, then a clean close
// that trims them) rebuilds from the same .log files:
//
//   - written: partitions segkit's engine appended (several codecs and
//     segments, small index.interval.bytes, increasing and non-monotonic
//     timestamps): segkit's own files, as its appends wrote them, against
//     Kafka's rebuild;
//   - kafka-real, kafka-broker: the partitions of ../shared/kafka-real and
//     testdata/kafka-broker, whose indexes are deleted in a copy and
//     rebuilt by segkit's recovery (repair.Recover), against Kafka's
//     rebuild.
func TestIndexesMatchKafka(t *testing.T) {
	t.Parallel() // two at a time: one alone keeps 1.3 of the 2 cores busy
	oracle.Require(t)
	tmp := t.TempDir()
	var cases []indexCase

	specs := []struct {
		name     string
		interval int
		segments int
		bps      int
		maxRecs  int
		vsz      int
		codecs   []compress.Codec
		jitter   bool
	}{
		{"idx-all-codecs-0", 128, 5, 40, 6, 50, allCodecs, false},
		{"idx-all-codecs-jitter-0", 128, 5, 40, 6, 50, allCodecs, true},
		{"idx-none-dense-0", 1, 3, 80, 2, 20, []compress.Codec{compress.None}, true},
		{"idx-gzip-0", 300, 4, 50, 12, 80, []compress.Codec{compress.Gzip}, false},
		{"idx-zstd-lz4-0", 64, 4, 60, 4, 30, []compress.Codec{compress.Zstd, compress.LZ4}, true},
		{"idx-snappy-0", 512, 3, 100, 8, 120, []compress.Codec{compress.Snappy, compress.None}, true},
	}
	for i, sp := range specs {
		rng := rand.New(rand.NewPCG(uint64(i), 99))
		props := map[string]string{"index.interval.bytes": fmt.Sprint(sp.interval)}
		src := filepath.Join(tmp, "written", sp.name, sp.name)
		writeLog(t, src, props, genPlan(rng, sp.segments, sp.bps, sp.maxRecs, sp.vsz, sp.codecs, sp.jitter))
		cases = append(cases, indexCase{name: sp.name, kind: "written", src: src, got: src,
			out: filepath.Join(tmp, "kafka", sp.name, sp.name), flags: recoverySource{props: props}.flags()})
	}

	seen := map[string]bool{}
	for _, d := range append(realPartitions(t), brokerPartitions(t)...) {
		abs, err := filepath.Abs(d)
		if err != nil {
			t.Fatal(err)
		}
		if seen[abs] {
			continue
		}
		seen[abs] = true
		id := fmt.Sprintf("%03d", len(cases))
		got := filepath.Join(tmp, "segkit", id, filepath.Base(d))
		copyDir(t, d, got)
		for _, ext := range []string{segment.IndexSuffix, segment.TimeIndexSuffix} {
			for _, f := range segmentFiles(t, got, ext) {
				if err := os.Remove(filepath.Join(got, f)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, _, err := segkitRecover(got, nil); err != nil {
			t.Errorf("%s: segkit's recovery: %v", shortName(d), err)
			continue
		}
		kind := "kafka-real"
		if strings.Contains(abs, string(filepath.Separator)+"kafka-broker"+string(filepath.Separator)) {
			kind = "kafka-broker"
		}
		cases = append(cases, indexCase{name: shortName(d), kind: kind, src: d, got: got,
			out: filepath.Join(tmp, "kafka", id, filepath.Base(d))})
	}

	var pairs []recoverPair
	for _, c := range cases {
		if err := os.MkdirAll(filepath.Dir(c.out), 0o755); err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, recoverPair{src: c.src, out: c.out, flags: c.flags})
	}
	kafka := kafkaRecoverAll(t, pairs)

	type tally struct{ partitions, files, identical, entries int }
	kinds := []string{"written", "kafka-real", "kafka-broker"}
	tallies := map[string]*tally{}
	for _, k := range kinds {
		tallies[k] = &tally{}
	}
	for _, c := range cases {
		if k := kafka[c.out]; k.Error != "" {
			t.Errorf("%s: Kafka's recovery failed: %s", c.name, k.Error)
			continue
		}
		n, diffs := compareIndexFiles(t, c.out, c.got)
		tl := tallies[c.kind]
		tl.partitions++
		tl.files += n
		tl.identical += n - len(diffs)
		tl.entries += indexEntries(t, c.got)
		for _, d := range diffs {
			t.Errorf("%s (%s): %s", c.name, c.kind, d)
		}
	}
	var b strings.Builder
	for _, kind := range kinds {
		tl := tallies[kind]
		fmt.Fprintf(&b, "  %-12s %3d partitions, %4d index files (%6d entries), %4d byte-identical to Kafka's rebuild\n", kind, tl.partitions, tl.files, tl.entries, tl.identical)
	}
	if tallies["written"].files == 0 || tallies["kafka-real"].files == 0 {
		t.Errorf("nothing compared: %+v", tallies)
	}
	t.Logf("indexes, segkit vs Kafka 4.3.1:\n%s", b.String())
}

// indexEntries counts the entries of the .index and .timeindex files of dir.
func indexEntries(t testing.TB, dir string) int {
	t.Helper()
	n := 0
	for _, suf := range []struct {
		ext  string
		size int64
	}{{segment.IndexSuffix, 8}, {segment.TimeIndexSuffix, 12}} {
		for _, f := range segmentFiles(t, dir, suf.ext) {
			fi, err := os.Stat(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			n += int(fi.Size() / suf.size)
		}
	}
	return n
}
