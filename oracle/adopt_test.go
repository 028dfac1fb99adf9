package oracle_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// adoptTopic is the topic the adopted partitions become.
const adoptTopic = "segkit-adopt"

// adoptSegmentBytes is the segment.bytes the partitions are written with:
// small, so that each has several segments (and transactions span rolls).
const adoptSegmentBytes = 1024

// TestAdoptServesSegkitPartitions writes partitions with segviz append and
// with the library (every codec; null, empty and set keys, values and header
// values; several segments; committed and aborted transactions), has a Kafka
// 4.3.1 broker adopt them all (recovery point 0, no clean-shutdown marker:
// Kafka rechecks every segment), and consumes every partition through the
// broker with franz-go, read_uncommitted and read_committed. The broker must
// serve exactly the records of the Go-side model, truncate nothing, mark no
// directory stray, and rebuild the same .txnindex files segkit wrote.
func TestAdoptServesSegkitPartitions(t *testing.T) {
	t.Parallel() // two at a time: one alone keeps 1.3 of the 2 cores busy
	oracle.Require(t)
	started := time.Now()
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	bin := buildSegviz(t, tmp)
	base := time.Now().Add(-time.Hour).UnixMilli()

	var parts []*adoptPartition
	codecs := []compress.Codec{compress.None, compress.Gzip, compress.Snappy, compress.LZ4, compress.Zstd}
	for i, c := range codecs {
		p := newAdoptPartition(len(parts), filepath.Join(src, fmt.Sprintf("cli-%d", i)), "segviz", c, base)
		writeWithSegviz(t, bin, p, 80, []int{1, 3, 7, 5, 10}[i])
		parts = append(parts, p)
	}
	for i, c := range codecs {
		p := newAdoptPartition(len(parts), filepath.Join(src, fmt.Sprintf("lib-%d", i)), "library", c, base)
		writeWithLibrary(t, p, 4)
		parts = append(parts, p)
	}
	for _, p := range parts {
		p.checkSource(t)
	}

	// Cancelled last, after Stop: the context kills the broker when done.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	port, err := oracle.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(tmp, "kafka")
	args := []string{"adopt", "--log-dir", logDir, "--topic", adoptTopic, "--port", strconv.Itoa(port)}
	for _, p := range parts {
		args = append(args, p.dir)
	}
	s, err := oracle.Start(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping the broker: %v", err)
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("broker log (last lines):\n%s", lastLines(s.Stderr(), 80))
		}
	})
	ready := time.Since(started)

	var rep adoptReport
	if err := json.Unmarshal(s.Report, &rep); err != nil {
		t.Fatalf("adopt report %q: %v", s.Report, err)
	}
	checkReport(t, &rep, parts, logDir)
	checkNoStrayDirs(t, logDir)

	cl, err := kgo.NewClient(kgo.SeedBrokers(rep.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	checkListOffsets(ctx, t, kadm.NewClient(cl), parts)

	for _, committed := range []bool{false, true} {
		got := consumeAll(ctx, t, rep.Bootstrap, parts, committed)
		for _, p := range parts {
			p.compare(t, got[p.id], committed)
		}
	}
	txnFiles := compareTxnIndexes(t, parts, logDir)

	var records, aborted, abortedRecs, segs int
	for _, p := range parts {
		records += len(p.recs)
		aborted += p.abortedTxns
		segs += len(p.segments)
		for _, r := range p.recs {
			if r.aborted {
				abortedRecs++
			}
		}
	}
	t.Logf("adopted %d partitions (%d by segviz append, %d by the library), %d segments, %d records, codecs %v, %d transactions aborted (%d records, %d .txnindex files identical to Kafka's rebuild); broker ready after %v, test %v",
		len(parts), len(codecs), len(codecs), segs, records, codecs, aborted, abortedRecs, txnFiles, ready.Round(time.Second), time.Since(started).Round(time.Second))
}

// adoptPartition is one partition directory written for the test and the
// model of what it holds.
type adoptPartition struct {
	id     int32 // partition number in the adopted topic
	dir    string
	writer string // "segviz" or "library"
	codec  compress.Codec
	next   int   // records generated so far
	ts     int64 // timestamp base of the generated records

	recs        []modelRecord // every data record, in offset order
	controls    []int64       // offsets of the control (marker) records
	abortedTxns int
	abortSegs   map[int64]bool // base offsets of segments holding an ABORT marker
	leo         int64
	segments    []int64 // base offsets, from the files
}

type modelRecord struct {
	offset    int64
	timestamp int64
	key       []byte
	value     []byte
	headers   []record.Header
	pid       int64
	txn       bool
	aborted   bool
}

func newAdoptPartition(id int, dir, writer string, codec compress.Codec, ts int64) *adoptPartition {
	return &adoptPartition{id: int32(id), dir: dir, writer: writer, codec: codec, ts: ts, abortSegs: map[int64]bool{}}
}

// gen returns the next record of the partition. Keys, values and header
// values cycle through null, empty and set; timestamps are not monotonic
// within a batch.
func (p *adoptPartition) gen() record.Record {
	i := p.next
	p.next++
	r := record.Record{Timestamp: p.ts + int64(i)*13 - int64(i%3)*5}
	switch i % 5 {
	case 0: // null key
	case 1:
		r.Key = []byte{}
	default:
		r.Key = fmt.Appendf(nil, "key-%d-%d", p.id, i)
	}
	switch i % 7 {
	case 0: // null value
	case 3:
		r.Value = []byte{}
	default:
		// Text and random bytes: compressed batches stay large enough
		// for the segments to roll.
		r.Value = []byte(strings.Repeat(fmt.Sprintf("partition %d record %d; ", p.id, i), 1+i%9))
		rng := rand.New(rand.NewPCG(uint64(p.id), uint64(i)))
		for range 16 + i%32 {
			r.Value = append(r.Value, byte(rng.Uint32()))
		}
	}
	switch i % 4 {
	case 0: // no headers
	case 1:
		r.Headers = []record.Header{{Key: []byte("trace"), Value: nil}}
	case 2:
		r.Headers = []record.Header{{Key: []byte(""), Value: []byte{}}, {Key: []byte("h"), Value: []byte("x")}}
	case 3:
		r.Headers = []record.Header{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("b"), Value: nil}, {Key: []byte("a"), Value: fmt.Appendf(nil, "%d", i)}}
	}
	return r
}

func (p *adoptPartition) add(offset int64, r record.Record, pid int64, txn bool) int {
	p.recs = append(p.recs, modelRecord{offset: offset, timestamp: r.Timestamp, key: r.Key, value: r.Value, headers: r.Headers, pid: pid, txn: txn})
	return len(p.recs) - 1
}

// buildSegviz builds the segviz binary of the main module into dir.
func buildSegviz(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "segviz")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/segkit/segkit/cmd/segviz")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build segviz: %v\n%s", err, out)
	}
	return bin
}

type jsonHeader struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

type jsonLine struct {
	Key       *string      `json:"key"`
	Value     *string      `json:"value"`
	Headers   []jsonHeader `json:"headers,omitempty"`
	Timestamp int64        `json:"timestamp"`
}

func b64(b []byte) *string {
	if b == nil {
		return nil
	}
	s := base64.StdEncoding.EncodeToString(b)
	return &s
}

// writeWithSegviz appends n records to p with `segviz append`, batchRecords
// records a batch.
func writeWithSegviz(t *testing.T, bin string, p *adoptPartition, n, batchRecords int) {
	t.Helper()
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for i := 0; i < n; i++ {
		r := p.gen()
		l := jsonLine{Key: b64(r.Key), Value: b64(r.Value), Timestamp: r.Timestamp}
		for _, h := range r.Headers {
			l.Headers = append(l.Headers, jsonHeader{Key: string(h.Key), Value: b64(h.Value)})
		}
		if err := enc.Encode(l); err != nil {
			t.Fatal(err)
		}
		p.add(int64(i), r, -1, false)
	}
	cmd := exec.Command(bin, "append", "--compression", p.codec.String(), "--batch-records", strconv.Itoa(batchRecords),
		"--segment.bytes", strconv.Itoa(adoptSegmentBytes), p.dir)
	cmd.Stdin = &in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("segviz append %s: %v\n%s", p.dir, err, stderr.Bytes())
	}
	var next int64
	for sc := bufio.NewScanner(&stdout); sc.Scan(); {
		var b struct{ FirstOffset, LastOffset int64 }
		if err := json.Unmarshal(sc.Bytes(), &b); err != nil {
			t.Fatalf("segviz append output %q: %v", sc.Bytes(), err)
		}
		if b.FirstOffset != next || b.LastOffset-b.FirstOffset+1 != int64(min(batchRecords, n-int(next))) {
			t.Fatalf("segviz append %s: batch %d-%d, want it to start at %d with %d records", p.dir, b.FirstOffset, b.LastOffset, next, min(batchRecords, n-int(next)))
		}
		next = b.LastOffset + 1
	}
	if next != int64(n) {
		t.Fatalf("segviz append %s: %d records appended, want %d", p.dir, next, n)
	}
	p.leo = next
}

// libWriter appends to a partition through the library as a leader does,
// keeping the model up to date.
type libWriter struct {
	t    *testing.T
	l    *kafkalog.Log
	p    *adoptPartition
	b    record.Builder
	seq  map[int64]int32 // next sequence of each producer
	open map[int64][]int // model indexes of each producer's ongoing transaction
}

// Producers of the library partitions: two transactional ones and an
// idempotent one.
const (
	pidA, epochA = 1000, 0
	pidB, epochB = 1001, 5
	pidC, epochC = 3000, 1
)

func (w *libWriter) append(b []byte) kafkalog.AppendResult {
	w.t.Helper()
	res, err := w.l.Append(b, 0)
	if err != nil {
		w.t.Fatalf("%s: append at %d: %v", w.p.dir, w.p.leo, err)
	}
	if res.FirstOffset != w.p.leo {
		w.t.Fatalf("%s: append got offset %d, want the log end offset %d", w.p.dir, res.FirstOffset, w.p.leo)
	}
	w.p.leo = res.LastOffset + 1
	return res
}

// data appends a batch of n records: plain (pid -1), idempotent or
// transactional.
func (w *libWriter) data(pid int64, epoch int16, txn bool, n int) {
	w.t.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = w.p.gen()
	}
	spec := record.NewBatchSpec(0, w.p.codec)
	if pid >= 0 {
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = pid, epoch, w.seq[pid]
		w.seq[pid] += int32(n)
	}
	spec.Transactional = txn
	b, err := w.b.AppendBatch(nil, &spec, recs)
	if err != nil {
		w.t.Fatal(err)
	}
	res := w.append(b)
	for i, r := range recs {
		idx := w.p.add(res.FirstOffset+int64(i), r, pid, txn)
		if txn {
			w.open[pid] = append(w.open[pid], idx)
		}
	}
}

// marker appends a COMMIT or ABORT control batch for a producer, as the
// transaction coordinator writes it (uncompressed, no sequence).
func (w *libWriter) marker(pid int64, epoch int16, typ record.ControlType) {
	w.t.Helper()
	spec := record.NewBatchSpec(0, compress.None)
	spec.ProducerID, spec.ProducerEpoch = pid, epoch
	b, err := w.b.AppendEndTxnMarker(nil, &spec, record.EndTxnMarker{Type: typ, CoordinatorEpoch: 7}, w.p.ts+int64(w.p.next)*13)
	if err != nil {
		w.t.Fatal(err)
	}
	at := w.p.leo
	w.append(b)
	w.p.controls = append(w.p.controls, at)
	if typ == record.ControlAbort {
		if len(w.open[pid]) > 0 {
			w.p.abortedTxns++
			segs := w.l.Segments()
			w.p.abortSegs[segs[len(segs)-1].BaseOffset()] = true
		}
		for _, i := range w.open[pid] {
			w.p.recs[i].aborted = true
		}
	}
	delete(w.open, pid)
}

// writeWithLibrary writes rounds of interleaved transactions of two
// producers (committed and aborted, across segment rolls), plain and
// idempotent batches, through package kafkalog's leader append path.
func writeWithLibrary(t *testing.T, p *adoptPartition, rounds int) {
	t.Helper()
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{config.SegmentBytes: strconv.Itoa(adoptSegmentBytes)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(p.dir), cfg, kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := &libWriter{t: t, l: l, p: p, seq: map[int64]int32{}, open: map[int64][]int{}}
	for r := 0; r < rounds; r++ {
		first, second := record.ControlCommit, record.ControlAbort
		if r%2 == 1 {
			first, second = second, first
		}
		w.data(-1, -1, false, 3)
		w.data(pidA, epochA, true, 4)
		w.data(pidB, epochB, true, 2)
		w.data(-1, -1, false, 2)
		w.data(pidA, epochA, true, 3)
		w.marker(pidA, epochA, first)
		if r == 1 {
			w.marker(pidA, epochA, record.ControlAbort) // no transaction open: no .txnindex entry
		}
		w.data(pidB, epochB, true, 3)
		w.marker(pidB, epochB, second)
		w.data(pidC, epochC, false, 4)
		w.data(pidA, epochA, true, 2)
		w.data(-1, -1, false, 1)
		w.data(pidB, epochB, true, 1)
		w.marker(pidA, epochA, record.ControlAbort)
		w.marker(pidB, epochB, record.ControlCommit)
	}
	w.data(-1, -1, false, 2) // the last offset is a visible record in both isolation levels
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkSource lists p's segments and checks the .txnindex files segkit
// wrote: one, not empty, for exactly the segments holding an ABORT marker
// of a transaction.
func (p *adoptPartition) checkSource(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		t.Fatal(err)
	}
	txn := map[int64]bool{}
	for _, e := range entries {
		base, ext, err := segment.ParseFileName(e.Name())
		if err != nil {
			continue
		}
		switch ext {
		case segment.LogSuffix:
			p.segments = append(p.segments, base)
		case segment.TxnIndexSuffix:
			if fi, err := e.Info(); err == nil && fi.Size() > 0 {
				txn[base] = true
			}
		}
	}
	slices.Sort(p.segments)
	if len(p.segments) < 3 {
		t.Errorf("%s: %d segments, want several (segment.bytes %d)", p.dir, len(p.segments), adoptSegmentBytes)
	}
	for base := range p.abortSegs {
		if !txn[base] {
			t.Errorf("%s: segment %d holds an ABORT marker but has no .txnindex", p.dir, base)
		}
	}
	for base := range txn {
		if !p.abortSegs[base] {
			t.Errorf("%s: segment %d has a .txnindex but no ABORT marker", p.dir, base)
		}
	}
}

// adoptReport is the JSON line `oracle/kafka adopt` prints when ready.
type adoptReport struct {
	Bootstrap  string `json:"bootstrap"`
	LogDir     string `json:"logDir"`
	Topic      string `json:"topic"`
	TopicID    string `json:"topicId"`
	Partitions []struct {
		Partition      int32  `json:"partition"`
		Src            string `json:"src"`
		Dir            string `json:"dir"`
		LogStartOffset int64  `json:"logStartOffset"`
		LogEndOffset   int64  `json:"logEndOffset"`
		BytesTruncated int64  `json:"bytesTruncated"`
		Exists         bool   `json:"exists"`
	} `json:"partitions"`
	BytesTruncated    int64    `json:"bytesTruncated"`
	RecoveredSegments []string `json:"recoveredSegments"`
	StrayDirs         []string `json:"strayDirs"`
}

// recoveredRE parses a recoveredSegments entry: the LogLoader's log prefix
// ("LogLoader partition=T-P, dir=D") and the segment's base offset.
var recoveredRE = regexp.MustCompile(`^LogLoader partition=(.+)-(\d+), dir=.* (\d+)$`)

func checkReport(t *testing.T, rep *adoptReport, parts []*adoptPartition, logDir string) {
	t.Helper()
	if rep.Topic != adoptTopic || rep.TopicID == "" || len(rep.Partitions) != len(parts) {
		t.Fatalf("adopt report: topic %q id %q with %d partitions, want %q with an id and %d partitions", rep.Topic, rep.TopicID, len(rep.Partitions), adoptTopic, len(parts))
	}
	if rep.BytesTruncated != 0 {
		t.Errorf("Kafka's recovery truncated %d bytes in all", rep.BytesTruncated)
	}
	if len(rep.StrayDirs) != 0 {
		t.Errorf("Kafka marked directories stray: %v", rep.StrayDirs)
	}
	for i, rp := range rep.Partitions {
		p := parts[i]
		if rp.Partition != p.id || rp.Src != p.dir {
			t.Fatalf("report partition %d: %d from %s, want %d from %s", i, rp.Partition, rp.Src, p.id, p.dir)
		}
		if rp.BytesTruncated != 0 || !rp.Exists || rp.LogStartOffset != 0 || rp.LogEndOffset != p.leo {
			t.Errorf("partition %d (%s, %s): Kafka truncated %d bytes, directory exists %v, offsets [%d, %d); want 0 bytes, true, [0, %d)",
				p.id, p.writer, p.codec, rp.BytesTruncated, rp.Exists, rp.LogStartOffset, rp.LogEndOffset, p.leo)
		}
	}
	recovered := map[int32][]int64{}
	for _, e := range rep.RecoveredSegments {
		m := recoveredRE.FindStringSubmatch(e)
		if m == nil || m[1] != adoptTopic {
			t.Errorf("recoveredSegments entry %q: not a segment of %s", e, adoptTopic)
			continue
		}
		part, _ := strconv.ParseInt(m[2], 10, 32)
		base, _ := strconv.ParseInt(m[3], 10, 64)
		recovered[int32(part)] = append(recovered[int32(part)], base)
	}
	for _, p := range parts {
		got := recovered[p.id]
		slices.Sort(got)
		if !slices.Equal(got, p.segments) {
			t.Errorf("partition %d (%s, %s): Kafka recovered segments %v, want every segment %v", p.id, p.writer, p.codec, got, p.segments)
		}
	}
}

// checkNoStrayDirs walks the broker's log directory: no directory may end
// in -stray (nor is any named -delete: Kafka deleted nothing).
func checkNoStrayDirs(t *testing.T, logDir string) {
	t.Helper()
	err := filepath.WalkDir(logDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasSuffix(d.Name(), "-stray") || strings.HasSuffix(d.Name(), "-delete")) {
			t.Errorf("Kafka renamed a directory: %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkListOffsets: ListOffsets earliest is 0, and latest is the log end
// offset both read_uncommitted (the high watermark) and read_committed (the
// last stable offset: every transaction is complete).
func checkListOffsets(ctx context.Context, t *testing.T, adm *kadm.Client, parts []*adoptPartition) {
	t.Helper()
	type lister func(context.Context, ...string) (kadm.ListedOffsets, error)
	for _, l := range []struct {
		name string
		list lister
		want func(*adoptPartition) int64
	}{
		{"earliest", adm.ListStartOffsets, func(*adoptPartition) int64 { return 0 }},
		{"latest (read_uncommitted)", adm.ListEndOffsets, func(p *adoptPartition) int64 { return p.leo }},
		{"latest (read_committed)", adm.ListCommittedOffsets, func(p *adoptPartition) int64 { return p.leo }},
	} {
		offs, err := l.list(ctx, adoptTopic)
		if err != nil {
			t.Fatalf("ListOffsets %s: %v", l.name, err)
		}
		for _, p := range parts {
			o, ok := offs.Lookup(adoptTopic, p.id)
			if !ok || o.Err != nil || o.Offset != l.want(p) {
				t.Errorf("partition %d (%s, %s): ListOffsets %s = %d (found %v, %v), want %d", p.id, p.writer, p.codec, l.name, o.Offset, ok, o.Err, l.want(p))
			}
		}
	}
}

// consumeAll reads every partition through the broker from offset 0 until
// its last expected record (every partition ends with a visible record).
func consumeAll(ctx context.Context, t *testing.T, bootstrap string, parts []*adoptPartition, committed bool) map[int32][]*kgo.Record {
	t.Helper()
	last := map[int32]int64{}
	for _, p := range parts {
		last[p.id] = -1
		for _, r := range p.recs {
			if !committed || !r.aborted {
				last[p.id] = r.offset
			}
		}
	}
	return consumeUntil(ctx, t, bootstrap, map[string]map[int32]int64{adoptTopic: last}, committed)[adoptTopic]
}

// consumeUntil reads the partitions of last (by topic) through the broker
// from offset 0 until each has served a record at or past its offset in
// last (a partition at -1 is read, but not waited for), read_committed or
// read_uncommitted; it returns the records by topic and partition.
func consumeUntil(ctx context.Context, t *testing.T, bootstrap string, last map[string]map[int32]int64, committed bool) map[string]map[int32][]*kgo.Record {
	t.Helper()
	iso, name := kgo.ReadUncommitted(), "read_uncommitted"
	if committed {
		iso, name = kgo.ReadCommitted(), "read_committed"
	}
	offsets := map[string]map[int32]kgo.Offset{}
	got := map[string]map[int32][]*kgo.Record{}
	for topic, parts := range last {
		offsets[topic] = map[int32]kgo.Offset{}
		got[topic] = map[int32][]*kgo.Record{}
		for id := range parts {
			offsets[topic][id] = kgo.NewOffset().At(0)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap),
		kgo.ConsumePartitions(offsets),
		kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	done := func() bool {
		for topic, parts := range last {
			for id, want := range parts {
				if rs := got[topic][id]; want >= 0 && (len(rs) == 0 || rs[len(rs)-1].Offset < want) {
					return false
				}
			}
		}
		return true
	}
	for !done() {
		fetches := cl.PollFetches(ctx)
		for _, e := range fetches.Errors() {
			progress := map[string]int{}
			for topic, parts := range got {
				for id, rs := range parts {
					progress[fmt.Sprintf("%s[%d]", topic, id)] = len(rs)
				}
			}
			t.Fatalf("%s: fetch error on %s[%d]: %v (records so far by partition: %v)", name, e.Topic, e.Partition, e.Err, progress)
		}
		fetches.EachRecord(func(r *kgo.Record) { got[r.Topic][r.Partition] = append(got[r.Topic][r.Partition], r) })
	}
	return got
}

// compare checks what the broker served for p against the model: the same
// records at the same offsets, with the same timestamps, keys, values and
// headers (null and empty told apart), codec and producer; read_committed
// without the aborted records. Control records never show.
func (p *adoptPartition) compare(t *testing.T, got []*kgo.Record, committed bool) {
	t.Helper()
	name := "read_uncommitted"
	if committed {
		name = "read_committed"
	}
	var want []modelRecord
	for _, r := range p.recs {
		if !committed || !r.aborted {
			want = append(want, r)
		}
	}
	var errs []string
	for i := 0; i < max(len(want), len(got)) && len(errs) < 10; i++ {
		if i >= len(got) {
			errs = append(errs, fmt.Sprintf("missing the record at offset %d and %d more", want[i].offset, len(want)-i-1))
			break
		}
		g := got[i]
		if i >= len(want) {
			errs = append(errs, fmt.Sprintf("unexpected record at offset %d (control %v) and %d more", g.Offset, g.Attrs.IsControl(), len(got)-i-1))
			break
		}
		if d := diffRecord(want[i], g, p.codec); d != "" {
			errs = append(errs, fmt.Sprintf("record %d (want offset %d): %s", i, want[i].offset, d))
		}
	}
	if len(errs) > 0 {
		t.Errorf("partition %d (%s, %s), %s: %d records, want %d:\n  %s", p.id, p.writer, p.codec, name, len(got), len(want), strings.Join(errs, "\n  "))
	}
}

func diffRecord(w modelRecord, g *kgo.Record, codec compress.Codec) string {
	var d []string
	if g.Offset != w.offset {
		d = append(d, fmt.Sprintf("offset %d", g.Offset))
	}
	if g.Attrs.IsControl() {
		d = append(d, "a control record")
	}
	if ms := g.Timestamp.UnixMilli(); ms != w.timestamp || g.Attrs.TimestampType() != 0 {
		d = append(d, fmt.Sprintf("timestamp %d (type %d), want %d (CreateTime)", ms, g.Attrs.TimestampType(), w.timestamp))
	}
	if !sameBytes(g.Key, w.key) {
		d = append(d, fmt.Sprintf("key %s, want %s", showBytes(g.Key), showBytes(w.key)))
	}
	if !sameBytes(g.Value, w.value) {
		d = append(d, fmt.Sprintf("value %s, want %s", showBytes(g.Value), showBytes(w.value)))
	}
	sameHeaders := len(g.Headers) == len(w.headers)
	for i := 0; sameHeaders && i < len(g.Headers); i++ {
		sameHeaders = g.Headers[i].Key == string(w.headers[i].Key) && sameBytes(g.Headers[i].Value, w.headers[i].Value)
	}
	if !sameHeaders {
		var gh, wh []string
		for _, h := range g.Headers {
			gh = append(gh, h.Key+"="+showBytes(h.Value))
		}
		for _, h := range w.headers {
			wh = append(wh, string(h.Key)+"="+showBytes(h.Value))
		}
		d = append(d, fmt.Sprintf("headers %v, want %v", gh, wh))
	}
	if c := g.Attrs.CompressionType(); c != uint8(codec) {
		d = append(d, fmt.Sprintf("codec %d, want %d (%s)", c, codec, codec))
	}
	if g.ProducerID != w.pid || g.Attrs.IsTransactional() != w.txn {
		d = append(d, fmt.Sprintf("producer %d transactional %v, want %d %v", g.ProducerID, g.Attrs.IsTransactional(), w.pid, w.txn))
	}
	return strings.Join(d, "; ")
}

// sameBytes is bytes.Equal that tells null from empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func showBytes(b []byte) string {
	if b == nil {
		return "null"
	}
	if len(b) > 24 {
		return fmt.Sprintf("%q...(%d bytes)", b[:24], len(b))
	}
	return strconv.Quote(string(b))
}

// compareTxnIndexes checks that Kafka's recovery, which rebuilt the
// .txnindex of every segment it recovered, came to the same bytes segkit
// wrote: the same non-empty .txnindex files with the same entries (first
// and last offsets, last stable offset). It returns how many it compared.
func compareTxnIndexes(t *testing.T, parts []*adoptPartition, logDir string) int {
	t.Helper()
	read := func(dir string) map[string][]byte {
		m := map[string][]byte{}
		paths, err := filepath.Glob(filepath.Join(dir, "*.txnindex"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range paths {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > 0 {
				m[filepath.Base(f)] = b
			}
		}
		return m
	}
	n := 0
	for _, p := range parts {
		ours := read(p.dir)
		theirs := read(filepath.Join(logDir, fmt.Sprintf("%s-%d", adoptTopic, p.id)))
		for name, b := range ours {
			if k, ok := theirs[name]; !ok {
				t.Errorf("partition %d (%s, %s): Kafka's recovery wrote no %s; segkit's has %d bytes", p.id, p.writer, p.codec, name, len(b))
			} else if !bytes.Equal(k, b) {
				t.Errorf("partition %d (%s, %s): %s differs:\n  segkit %x\n  Kafka  %x", p.id, p.writer, p.codec, name, b, k)
			} else {
				n++
			}
		}
		for name, k := range theirs {
			if _, ok := ours[name]; !ok {
				t.Errorf("partition %d (%s, %s): Kafka's recovery wrote %s (%d bytes), segkit wrote none", p.id, p.writer, p.codec, name, len(k))
			}
		}
	}
	return n
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
