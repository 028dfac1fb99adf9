package lake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/vfs"
)

// brokerTopics are the topics of TestBrokerMatchesDir: orders has two
// partitions with transactions (committed, aborted, one left open) and
// plain records across several hours; accounts is compacted by the
// broker's cleaner (compaction gaps); bulk holds several fetches' worth
// (fetchBytes each) of records, with aborted transactions that straddle
// the fetches' ends.
const (
	brokerOrders   = "orders"
	brokerAccounts = "accounts"
	brokerBulk     = "bulk"
)

// TestBrokerMatchesDir is "read from the oracle's live broker equals read
// from the broker's partition directory": Kafka 4.3.1 (the oracle's
// broker) takes transactional and plain records, and compacts a topic;
// each partition is indexed twice, once from the live broker through
// BrokerSource (Fetch and ListOffsets, read_committed) and once, after
// the broker stopped, from its partition directory through DirSource.
// The two catalogs must hold the same files: the same ranges, buckets,
// triggers, rows, statistics and checksums (so the same bytes). And the
// rows are what the broker's own read_committed consumer returns.
func TestBrokerMatchesDir(t *testing.T) {
	oracle.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	root := t.TempDir()
	logDir := filepath.Join(root, "kafka")
	port, err := oracle.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := oracle.Start(ctx, "broker", "--log-dir", logDir, "--port", strconv.Itoa(port),
		"--config", "log.cleaner.backoff.ms=100", "--server-log", filepath.Join(root, "logs"))
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			srv.Stop()
		}
	}()
	var rep struct {
		Bootstrap string `json:"bootstrap"`
	}
	if err := json.Unmarshal(srv.Report, &rep); err != nil {
		t.Fatalf("broker report %q: %v", srv.Report, err)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(rep.Bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	create := func(topic string, partitions int32, cfg map[string]string) {
		c := map[string]*string{}
		for k, v := range cfg {
			c[k] = kadm.StringPtr(v)
		}
		res, err := adm.CreateTopic(ctx, partitions, 1, c, topic)
		if err == nil {
			err = res.Err
		}
		if err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
	}
	create(brokerOrders, 2, map[string]string{"internal.segment.bytes": "16384", "retention.ms": "-1"})
	create(brokerAccounts, 1, map[string]string{"cleanup.policy": "compact", "internal.segment.bytes": "4096", "min.cleanable.dirty.ratio": "0.01", "segment.ms": "100"})

	tx, err := kgo.NewClient(kgo.SeedBrokers(rep.Bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID("lake-broker-test"), kgo.TransactionTimeout(5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	produce := func(c *kgo.Client, recs ...*kgo.Record) {
		t.Helper()
		if err := c.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	// From four hours ago, 13 s apart: 3¼ hours in four hour buckets,
	// ending within a quarter of an hour of now (Kafka refuses
	// timestamps more than an hour ahead).
	start := time.Now().Add(-4 * time.Hour).Truncate(time.Hour).Add(30 * time.Minute)
	ts := func(i int) time.Time { return start.Add(time.Duration(i) * 13 * time.Second) }
	for i := range 900 {
		p := int32(i % 2)
		val := fmt.Sprintf(`{"amount":%d.25,"id":%d,"name":"customer-%d"}`, i%97, i, i%13)
		if i%10 == 3 {
			val = fmt.Sprintf("raw value %d %s", i, strings.Repeat("r", i%300))
		}
		r := &kgo.Record{Topic: brokerOrders, Partition: p, Key: []byte(fmt.Sprintf("k%d", i%17)), Value: []byte(val), Timestamp: ts(i),
			Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte(strconv.Itoa(i))}}}
		switch i % 45 {
		case 10, 20, 30: // a transaction: 10 and 30 commit, 20 aborts
			if err := tx.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			for j := range 4 {
				r2 := *r
				r2.Partition = int32(j % 2)
				r2.Value = []byte(fmt.Sprintf(`{"amount":%d,"txn":%d}`, j, i))
				produce(tx, &r2)
			}
			if err := tx.EndTransaction(ctx, kgo.TransactionEndTry(i%45 != 20)); err != nil {
				t.Fatal(err)
			}
		default:
			produce(cl, r)
		}
		a := &kgo.Record{Topic: brokerAccounts, Key: []byte(fmt.Sprintf("acct-%d", i%25)), Value: []byte(fmt.Sprintf(`{"balance":%d}`, i)), Timestamp: ts(i)}
		if i%50 == 49 {
			a.Value = nil // a tombstone
		}
		produce(cl, a)
	}
	// bulk: 4,000 records of 1 KiB in batches of 50, every fifth batch
	// in a transaction, every other one of those aborted (8 of 16).
	create(brokerBulk, 1, nil)
	for b := range 80 {
		var recs []*kgo.Record
		for j := range 50 {
			i := b*50 + j
			recs = append(recs, &kgo.Record{Topic: brokerBulk, Key: []byte(strconv.Itoa(i)), Timestamp: start.Add(time.Duration(i) * 100 * time.Millisecond),
				Value: []byte(fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, strings.Repeat("p", 1000)))})
		}
		if b%5 != 4 {
			produce(cl, recs...)
			continue
		}
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		produce(tx, recs...)
		if err := tx.EndTransaction(ctx, kgo.TransactionEndTry(b%10 == 4)); err != nil {
			t.Fatal(err)
		}
	}
	// A transaction left open at the end: the last stable offset stays
	// below the high watermark, for both sources.
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(tx, &kgo.Record{Topic: brokerOrders, Partition: 0, Value: []byte("open"), Timestamp: ts(900)})
	produce(cl, &kgo.Record{Topic: brokerOrders, Partition: 0, Value: []byte("after the open one"), Timestamp: ts(901)})
	waitCleaned(ctx, t, filepath.Join(logDir, brokerAccounts+"-0"))

	// 3 KiB files, half-hour windows, hour buckets and backfill chunks of
	// 250 offsets: every trigger but age (the clock stands still) and
	// retention.
	o := Options{FileBytes: 3 << 10, FileWindow: 30 * time.Minute, BackfillOffsets: 250, Clock: newClock()}
	type part struct {
		topic string
		p     int32
	}
	// bulk's files hold 256 KiB each, its backfill chunks 1,000 offsets:
	// ranges across fetches.
	options := func(p part) Options {
		po := o
		po.Table, po.Partition = p.topic, p.p
		if p.topic == brokerBulk {
			po.FileBytes, po.BackfillOffsets = 256<<10, 1000
		}
		return po
	}
	parts := []part{{brokerAccounts, 0}, {brokerBulk, 0}}
	ps, err := TopicPartitions(ctx, cl, brokerOrders)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("TopicPartitions(%s) = %v, want 2 partitions", brokerOrders, ps)
	}
	for _, p := range ps {
		parts = append(parts, part{brokerOrders, p})
	}

	// From the live broker: history all (the table is new: it starts at
	// the last stable offset and backfills down to the earliest).
	fromBroker := openCatalog(t, nil)
	lso := map[part]int64{}
	consumed := map[part]int{}
	for _, p := range parts {
		src, err := OpenBroker(ctx, cl, p.topic, p.p, BrokerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if lso[p], err = src.LastStableOffset(); err != nil {
			t.Fatal(err)
		}
		po := options(p)
		if err := NewIndexer(fromBroker, src, po).Once(ctx); err != nil {
			t.Fatalf("%s-%d from the broker: %v", p.topic, p.p, err)
		}
		consumed[p] = consumeCommitted(ctx, t, rep.Bootstrap, p.topic, p.p, lso[p])
	}
	if hw := endOffset(ctx, t, adm, brokerOrders, 0); lso[part{brokerOrders, 0}] >= hw {
		t.Fatalf("orders-0: last stable offset %d, high watermark %d: the open transaction should hold it below", lso[part{brokerOrders, 0}], hw)
	}
	tx.Close()
	cl.Close()
	stopped = true
	if err := srv.Stop(); err != nil {
		t.Fatalf("broker stop: %v", err)
	}

	// From the partition directories, after a clean stop.
	fromDir := openCatalog(t, nil)
	for _, p := range parts {
		dir := filepath.ToSlash(filepath.Join(logDir, fmt.Sprintf("%s-%d", p.topic, p.p)))
		src := openSource(t, vfs.OS(), dir)
		if got, _ := src.LastStableOffset(); got != lso[p] {
			t.Errorf("%s-%d: the directory's last stable offset is %d, the broker said %d", p.topic, p.p, got, lso[p])
		}
		po := options(p)
		if err := NewIndexer(fromDir, src, po).Once(ctx); err != nil {
			t.Fatalf("%s-%d from the directory: %v", p.topic, p.p, err)
		}
		b, d := catalogFiles(t, fromBroker, p.topic, p.p), catalogFiles(t, fromDir, p.topic, p.p)
		if diff := cmp.Diff(d, b); diff != "" {
			t.Errorf("%s-%d: the files indexed from the broker differ from those from its directory (-dir +broker):\n%s", p.topic, p.p, diff)
		}
		rows, buckets, trig := int64(0), map[int64]bool{}, map[Trigger]int{}
		end := int64(-1)
		for _, f := range b {
			if f.StartOffset > end+1 && end >= 0 {
				t.Errorf("%s-%d: gap before file [%d, %d]", p.topic, p.p, f.StartOffset, f.EndOffset)
			}
			end = max(end, f.EndOffset)
			rows += f.Rows
			buckets[f.Bucket] = true
			trig[f.Trigger]++
		}
		if end+1 != lso[p] {
			t.Errorf("%s-%d: the files end at %d, the last stable offset is %d", p.topic, p.p, end, lso[p])
		}
		if rows != int64(consumed[p]) {
			t.Errorf("%s-%d: %d rows in the files, the broker's read_committed consumer reads %d records", p.topic, p.p, rows, consumed[p])
		}
		// Rebuilding from the directory gives each file's checksum.
		readBack(t, fromDir, src, p.topic, po)
		t.Logf("%s-%d: %d files, %d rows (the consumer's %d), offsets up to the last stable offset %d, %d buckets, triggers %v: the same from the broker and from its directory",
			p.topic, p.p, len(b), rows, consumed[p], lso[p], len(buckets), trig)
		switch p.topic {
		case brokerAccounts:
			if rows >= lso[p] {
				t.Errorf("accounts-0: %d rows below offset %d: the cleaner left no compaction gap", rows, lso[p])
			}
		case brokerBulk:
			if want := int64(4000 - 8*50); rows != want {
				t.Errorf("bulk-0: %d rows, want %d (the records of the 8 aborted transactions left out)", rows, want)
			}
		case brokerOrders:
			if len(buckets) < 3 || trig[TriggerBytes] == 0 || trig[TriggerBucket] == 0 {
				t.Errorf("%s-%d: buckets %d, triggers %v: want 3 buckets and the file_bytes and bucket triggers", p.topic, p.p, len(buckets), trig)
			}
		}
	}
}

// catalogFiles is the partition's files without the catalog's ids.
func catalogFiles(t *testing.T, cat *SQLStore, table string, p int32) []DataFile {
	t.Helper()
	ctx := context.Background()
	id, err := cat.Table(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := cat.Files(ctx, id, p, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range fs {
		fs[i].ID, fs[i].Table = 0, 0
	}
	return fs
}

// consumeCommitted counts what a read_committed franz-go consumer reads
// from partition p of topic below end. The broker takes no more records,
// so the consumer has read everything when a poll finds nothing new for
// idle.
func consumeCommitted(ctx context.Context, t *testing.T, bootstrap, topic string, p int32, end int64) int {
	t.Helper()
	const idle = 3 * time.Second
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().AtStart()}}), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	n := 0
	for {
		pctx, cancel := context.WithTimeout(ctx, idle)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			t.Fatalf("consume %s-%d: %v", topic, p, ctx.Err())
		}
		got := 0
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("consume %s-%d: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			got++
			if r.Offset < end {
				n++
			} else {
				t.Errorf("consume %s-%d: a read_committed consumer read offset %d, at or above the last stable offset %d", topic, p, r.Offset, end)
			}
		})
		if got == 0 {
			return n
		}
	}
}

func endOffset(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, p int32) int64 {
	t.Helper()
	l, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := l.Lookup(topic, p)
	if !ok || o.Err != nil {
		t.Fatalf("end offset of %s-%d: %v", topic, p, o.Err)
	}
	return o.Offset
}

// waitCleaned waits until the broker's cleaner has cleaned the partition
// in dir up to its active segment (its entry in the log directory's
// cleaner-offset-checkpoint, a "topic partition offset" line, is the base
// offset of the last .log file): with nothing more produced, nothing is
// left for it to clean, and the partition stays as the test reads it.
func waitCleaned(ctx context.Context, t *testing.T, dir string) {
	t.Helper()
	base := filepath.Base(dir)
	cut := strings.LastIndexByte(base, '-')
	entry := base[:cut] + " " + base[cut+1:] + " "
	for {
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		active := int64(-1)
		for _, l := range logs {
			if o, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(l), ".log"), 10, 64); err == nil {
				active = max(active, o)
			}
		}
		b, _ := os.ReadFile(filepath.Join(filepath.Dir(dir), "cleaner-offset-checkpoint"))
		for _, l := range strings.Split(string(b), "\n") {
			if o, ok := strings.CutPrefix(l, entry); ok && active > 0 && o == strconv.FormatInt(active, 10) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the broker's cleaner did not clean %s up to its active segment %d (cleaner-offset-checkpoint: %q)", dir, active, b)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
