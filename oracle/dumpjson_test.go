package oracle_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/oracle"
)

// kafkaFields reads the "name: value" pairs of one line of Kafka's
// DumpLogSegments: the batch line ("baseOffset: 0 lastOffset: 0 count: 1 …
// CreateTime: 1728489054309 size: 78 …"), a legacy entry ("offset: 5 …") or
// a record line ("| offset: 0 CreateTime: … keySize: -1 valueSize: 10 …").
// The timestamp type is its own key ("CreateTime", "LogAppendTime",
// "NoTimestampType"), as Kafka prints it. Only the fields before the
// payload are read: keys and values may hold anything.
var kafkaField = regexp.MustCompile(`(\w+): (\S*)`)

func kafkaFields(line string) map[string]string {
	if i := strings.Index(line, " key: "); i >= 0 {
		line = line[:i]
	}
	if i := strings.Index(line, " payload: "); i >= 0 {
		line = line[:i]
	}
	if i := strings.Index(line, " headerKeys: "); i >= 0 {
		line = line[:i]
	}
	m := map[string]string{}
	for _, f := range kafkaField.FindAllStringSubmatch(line, -1) {
		if _, dup := m[f[1]]; !dup {
			m[f[1]] = f[2]
		}
	}
	return m
}

// TestDumpJSONMatchesKafka checks segviz dump --json --deep, field by field,
// against Kafka's DumpLogSegments --deep-iteration on every .log of
// ../shared/kafka-real and testdata/kafka-broker: the same batches (offsets,
// count, producer fields, leader epoch, flags, position, timestamp type and
// max timestamp, size, magic, codec, CRC and its validity) and the same
// records (offset, timestamp, key and value sizes), in the same order.
func TestDumpJSONMatchesKafka(t *testing.T) {
	t.Parallel() // two at a time: one alone keeps 1.3 of the 2 cores busy
	oracle.Require(t)
	var files []string
	for _, root := range realdata.Roots(t) {
		files = append(files, realdata.GlobUnder(t, root, "*.log")...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, _, err := oracle.RunSplit(ctx, "dump-log", "--deep-iteration", "--files", strings.Join(files, ","))
	if err != nil {
		t.Fatal(err)
	}
	kafka := splitDumps(out)
	segviz := buildSegviz(t, t.TempDir())
	batches, records := 0, 0
	for _, f := range files {
		t.Run(realdata.Rel(t, f), func(t *testing.T) {
			want, ok := kafka[f]
			if !ok {
				t.Fatalf("Kafka's dump has no section for %s", f)
			}
			cmd := exec.CommandContext(ctx, segviz, "dump", "--json", "--deep", f)
			got, err := cmd.Output()
			if err != nil {
				t.Fatalf("segviz dump --json --deep %s: %v", f, err)
			}
			b, r := compareDumpJSON(t, want, got)
			batches += b
			records += r
		})
	}
	t.Logf("%d files, %d batch and %d record lines equal to Kafka's DumpLogSegments", len(files), batches, records)
}

// splitDumps cuts Kafka's output of several files at its "Dumping FILE"
// lines.
func splitDumps(out []byte) map[string][]string {
	m := map[string][]string{}
	var cur string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if f, ok := strings.CutPrefix(line, "Dumping "); ok {
			cur = f
			m[cur] = []string{}
			continue
		}
		if cur != "" {
			m[cur] = append(m[cur], line)
		}
	}
	return m
}

// compareDumpJSON compares Kafka's batch and record lines of one file with
// segviz's JSON lines and returns how many of each it compared.
func compareDumpJSON(t *testing.T, kafka []string, segviz []byte) (batches, records int) {
	t.Helper()
	var want []map[string]string
	for _, l := range kafka {
		if strings.HasPrefix(l, "baseOffset: ") || strings.HasPrefix(l, "offset: ") || strings.HasPrefix(l, "| offset: ") {
			want = append(want, kafkaFields(l))
		}
	}
	var got []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(segviz), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("segviz line %q: %v", l, err)
		}
		if m["type"] == "batch" || m["type"] == "record" {
			got = append(got, m)
		}
	}
	if len(got) != len(want) {
		t.Errorf("segviz printed %d batch and record lines, Kafka %d", len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		w, g := want[i], got[i]
		var pairs [][2]string // Kafka's field, segviz's field
		tsType := ""
		for _, k := range []string{"CreateTime", "LogAppendTime", "NoTimestampType"} {
			if _, ok := w[k]; ok {
				tsType = k
			}
		}
		if _, isRecord := w["keySize"]; isRecord || g["type"] == "record" {
			if g["type"] != "record" {
				t.Fatalf("line %d: Kafka has a record, segviz %v", i, g)
			}
			records++
			pairs = [][2]string{{"offset", "offset"}, {tsType, "timestamp"}, {"keySize", "keySize"}, {"valueSize", "valueSize"}}
		} else {
			if g["type"] != "batch" {
				t.Fatalf("line %d: Kafka has a batch, segviz %v", i, g)
			}
			batches++
			if g["timestampType"] != tsType {
				t.Errorf("line %d: timestamp type %v, Kafka %s", i, g["timestampType"], tsType)
			}
			pairs = [][2]string{{"position", "position"}, {tsType, "maxTimestamp"}, {"size", "size"}, {"magic", "magic"},
				{"compresscodec", "compression"}, {"crc", "crc"}, {"isvalid", "crcValid"}}
			if _, v2 := w["baseOffset"]; v2 {
				pairs = append(pairs, [][2]string{{"baseOffset", "baseOffset"}, {"lastOffset", "lastOffset"}, {"count", "count"},
					{"baseSequence", "baseSequence"}, {"producerId", "producerId"}, {"producerEpoch", "producerEpoch"},
					{"partitionLeaderEpoch", "partitionLeaderEpoch"}, {"isTransactional", "isTransactional"}, {"isControl", "isControl"}}...)
			} else {
				pairs = append(pairs, [2]string{"offset", "lastOffset"})
			}
		}
		for _, p := range pairs {
			kv, ok := w[p[0]]
			if !ok {
				t.Errorf("line %d: Kafka's line has no %s: %v", i, p[0], w)
				continue
			}
			if gv := jsonText(g[p[1]]); gv != kv {
				t.Errorf("line %d (offset %v): %s = %s, Kafka's %s = %s", i, g["offset"], p[1], gv, p[0], kv)
			}
		}
		if t.Failed() {
			return
		}
	}
	return batches, records
}

// jsonText prints a decoded JSON value as Kafka prints the same field.
func jsonText(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}
