package kafkalog_test

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/verify"
	"github.com/segkit/segkit/vfs"
)

// brokerSegmentBytes is the segment.bytes each real set was written with,
// where it was not the default: dipendrasaini used 1 MB (decimal). The
// rolls in both of its partitions bound it to [999904, 1000541).
var brokerSegmentBytes = map[string]string{
	"dipendrasaini__kafka-learnning-series": "1000000",
	// testdata/kafka-broker: internal.segment.bytes per topic (its
	// PROVENANCE.md, oracle/.../Generate.java).
	"kafka-broker/codec-none-0":    "65536",
	"kafka-broker/codec-gzip-0":    "12288",
	"kafka-broker/codec-snappy-0":  "12288",
	"kafka-broker/codec-lz4-0":     "12288",
	"kafka-broker/codec-zstd-0":    "12288",
	"kafka-broker/txn-0":           "16384",
	"kafka-broker/logappendtime-0": "32768",
}

// notReplayable names the partitions whose segment boundaries a replay by
// size cannot reproduce, and why.
var notReplayable = map[string]string{
	"kafka-broker/segment-ms-0": "rolled by segment.ms (wall-clock time between bursts)",
	"kafka-broker/compacted-0":  "rewritten by the log cleaner (segments grouped, batches removed)",
}

// TestReplayRealPartitions appends every real partition's entries, one
// per append, with AppendAsFollower into a fresh log on Mem with the
// broker's config, closes it, and compares the files: every .log must be
// byte-identical to the broker's, with the same segment boundaries. The
// .index and .timeindex files must equal what Kafka's rules give for
// one-entry appends (verify.RebuildOffsetIndex, timeindex.Rebuild with the
// batch-last-offset rule of followers and Kafka 3.8+); they equal the
// broker's own files wherever the broker appended one batch at a time
// without restarting, and the test counts those. The others differ for
// reasons the .log cannot reveal (a follower's multi-batch appends, a
// restart's close entry, a pre-3.8 leader's record-offset time index),
// which the index package's reconstruction test pins entry by entry.
func TestReplayRealPartitions(t *testing.T) {
	root := realdata.Dir(t)
	var logsSame, idxSame, idxTotal, tidxSame, tidxTotal int
	for _, dir := range realdata.PartitionDirs(t) {
		rel := realdata.Rel(t, dir)
		set := strings.SplitN(rel, "/", 2)[0]
		props := map[string]string{}
		if sb, ok := brokerSegmentBytes[set]; ok {
			props["segment.bytes"] = sb
		}
		if sb, ok := brokerSegmentBytes[rel]; ok {
			props["segment.bytes"] = sb
		}
		if why, ok := notReplayable[rel]; ok {
			t.Logf("%s: not replayed: %s", rel, why)
			continue
		}
		cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(props)
		if err != nil {
			t.Fatal(err)
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		sort.Strings(logs)
		if len(logs) == 0 {
			continue
		}
		first, _, _ := segment.ParseFileName(filepath.Base(logs[0]))
		t.Run(rel, func(t *testing.T) {
			mem := vfs.NewMem()
			// The first segment's base offset comes from the log start
			// offset checkpoint when the broker had moved it.
			if err := mem.MkdirAll("logdir", 0o755); err != nil {
				t.Fatal(err)
			}
			tp := filepath.Base(dir)
			ckpt := fmt.Sprintf("0\n1\n%s %d\n", tpTopic(tp), first)
			vfs.WriteFile(mem, "logdir/log-start-offset-checkpoint", []byte(ckpt), 0o644)
			l, err := kafkalog.Open(mem, "logdir/"+tp, cfg, kafkalog.Options{Clock: &clock{ms: 1}})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, p := range logs {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, filepath.Base(p))
				for s := record.NewScanner(data, p, 0); s.Next(); {
					if _, err := l.AppendAsFollower(s.Entry().Raw()); err != nil {
						t.Fatalf("%s at %d: %v", p, s.Entry().Position, err)
					}
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			var got []string
			infos, _ := vfs.ReadDir(mem, "logdir/"+tp)
			for _, fi := range infos {
				if strings.HasSuffix(fi.Name(), ".log") {
					got = append(got, fi.Name())
				}
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("segments %v, the broker had %v", got, want)
			}
			for _, p := range logs {
				name := filepath.Base(p)
				orig, _ := os.ReadFile(p)
				ours, err := vfs.ReadFile(mem, path.Join("logdir", tp, name))
				if err != nil || !bytes.Equal(orig, ours) {
					t.Fatalf("%s: replayed .log differs (%d vs %d bytes, %v)", name, len(ours), len(orig), err)
				}
				logsSame++
				base, _, _ := segment.ParseFileName(name)
				sum, err := verify.SummarizeLog(bytes.NewReader(orig), int64(len(orig)), p)
				if err != nil || sum.Err != nil {
					t.Fatalf("%s: %v %v", name, err, sum.Err)
				}
				wantIdx, err := verify.RebuildOffsetIndex(nil, base, sum.Entries, int(cfg.IndexIntervalBytes))
				if err != nil {
					t.Fatal(err)
				}
				wantTidx, err := verify.RebuildTimeIndex(nil, base, sum.Entries, int(cfg.IndexIntervalBytes), verify.ShallowOffsets)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range []struct {
					ext         string
					want        []byte
					same, total *int
				}{
					{segment.IndexSuffix, wantIdx, &idxSame, &idxTotal},
					{segment.TimeIndexSuffix, wantTidx, &tidxSame, &tidxTotal},
				} {
					ours, err := vfs.ReadFile(mem, path.Join("logdir", tp, segment.FileName(base, c.ext)))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(ours, c.want) {
						t.Fatalf("%s%s: %d bytes written, Kafka's rules give %d", name, c.ext, len(ours), len(c.want))
					}
					broker, err := os.ReadFile(strings.TrimSuffix(p, ".log") + c.ext)
					if err != nil {
						continue // not collected (an active segment's preallocated index)
					}
					*c.total++
					if bytes.Equal(ours, broker) {
						*c.same++
					}
				}
			}
		})
	}
	t.Logf(".log files byte-identical: %d; .index identical to the broker's: %d of %d; .timeindex: %d of %d",
		logsSame, idxSame, idxTotal, tidxSame, tidxTotal)
	fmt.Printf("replay: %d .log byte-identical; .index %d/%d and .timeindex %d/%d identical to the broker's\n",
		logsSame, idxSame, idxTotal, tidxSame, tidxTotal)
	_ = root
}

// tpTopic returns the topic and partition of a directory name as the
// checkpoint line wants them ("topic partition").
func tpTopic(dir string) string {
	i := strings.LastIndexByte(dir, '-')
	return dir[:i] + " " + dir[i+1:]
}
