package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/segkit/segkit/lake"
	"github.com/segkit/segkit/oracle"
)

// TestIndexBroker runs the command against the oracle's broker (Kafka
// 4.3.1): index --once kafka://…/TOPIC indexes every partition of the
// topic (committed records only: an aborted transaction's records are
// not rows), rebuild --broker gives each file's bytes again (their
// checksum), and index without --once finds a partition added to the
// topic later and starts it at its last stable offset.
func TestIndexBroker(t *testing.T) {
	oracle.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	root := t.TempDir()
	port, err := oracle.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := oracle.Start(ctx, "broker", "--log-dir", filepath.Join(root, "kafka"), "--port", strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	var rep struct {
		Bootstrap string `json:"bootstrap"`
	}
	if err := json.Unmarshal(srv.Report, &rep); err != nil {
		t.Fatalf("broker report %q: %v", srv.Report, err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(rep.Bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID("segviz-lake-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	const topic = "payments"
	if res, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil || res.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, res.Err)
	}
	// Per partition: 10 committed records, then 3 in an aborted
	// transaction.
	for _, commit := range []bool{true, false} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		n := 10
		if !commit {
			n = 3
		}
		for p := range int32(2) {
			for i := range n {
				r := &kgo.Record{Topic: topic, Partition: p, Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf(`{"amount":%d}`, i))}
				if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	url := "kafka://" + rep.Bootstrap + "/" + topic
	catPath := filepath.Join(t.TempDir(), "cat.db")
	catSpec := "sqlite:" + catPath
	mustRun(t, "index", "--catalog", catSpec, "--once", url)
	files := decodeFiles(t, mustRun(t, "files", "--catalog", catSpec, "--json").stdout)
	rows := map[int32]int64{}
	for _, f := range files {
		if f.Topic != topic {
			t.Errorf("file %d of topic %q", f.ID, f.Topic)
		}
		rows[f.Partition] += f.Rows
		out := filepath.Join(t.TempDir(), "f.parquet")
		mustRun(t, "rebuild", "--catalog", catSpec, "--broker", url, "-o", out, strconv.FormatInt(f.ID, 10))
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) != f.Bytes {
			t.Errorf("file %d: rebuilt from the broker, %d bytes; the catalog says %d", f.ID, len(b), f.Bytes)
		}
	}
	if rows[0] != 10 || rows[1] != 10 {
		t.Errorf("rows per partition %v, want 10 committed records in each (3 aborted left out)", rows)
	}

	// Following: a third partition, added while it runs, is found and
	// started at its last stable offset (the two records in it).
	ictx, stop := context.WithCancel(ctx)
	done := make(chan result, 1)
	go func() {
		var stdout, stderr strings.Builder
		code := run(env{stdout: &stdout, stderr: &stderr, ctx: ictx}, []string{"index", "--catalog", catSpec, "--partition-discovery", "500ms", url})
		done <- result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	}()
	if _, err := adm.CreatePartitions(ctx, 1, topic); err != nil {
		t.Fatal(err)
	}
	// A plain producer, retried until its metadata has the new partition.
	pc, err := kgo.NewClient(kgo.SeedBrokers(rep.Bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	for i := 0; i < 2; {
		err := pc.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 2, Value: []byte(strconv.Itoa(i))}).FirstErr()
		if err == nil {
			i++
			continue
		}
		if ctx.Err() != nil {
			t.Fatalf("produce to partition 2: %v", err)
		}
		pc.ForceMetadataRefresh()
		time.Sleep(100 * time.Millisecond)
	}
	cat, err := lake.OpenSQLite(ctx, catPath, lake.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	id, err := cat.Table(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for {
		st, ok, err := cat.State(ctx, id, 2)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			t.Logf("partition 2, added later: indexed from %d (backfill down to %d)", st.Start, st.BackfillTo)
			break
		}
		select {
		case r := <-done:
			t.Fatalf("index stopped (exit %d) before finding partition 2: %s", r.code, r.stderr)
		case <-ctx.Done():
			t.Fatal("index did not find partition 2, added to the topic")
		case <-time.After(100 * time.Millisecond):
		}
	}
	stop()
	if r := <-done; r.code != exitOK {
		t.Errorf("index stopped with exit %d: %s", r.code, r.stderr)
	}
}

// TestBrokerURL: what kafka:// sources are accepted, and the usage error
// for the others.
func TestBrokerURL(t *testing.T) {
	for _, tc := range []struct {
		in    string
		seeds []string
		topic string
		err   string
	}{
		{in: "kafka://k1:9092/orders", seeds: []string{"k1:9092"}, topic: "orders"},
		{in: "kafka://k1:9092,[::1]:9093/a.b_c-1", seeds: []string{"k1:9092", "[::1]:9093"}, topic: "a.b_c-1"},
		{in: "kafka://k1:9092", err: "no topic"},
		{in: "kafka://k1:9092/", err: "no topic"},
		{in: "kafka:///orders", err: "empty broker address"},
		{in: "kafka://k1/orders", err: "not HOST:PORT"},
		{in: "kafka://k1:9092,/orders", err: "empty broker address"},
		{in: "kafka://k1:9092/a/b", err: "is not one of"},
		{in: "kafka://k1:9092/..", err: "not allowed"},
		{in: "kafka://k1:9092/" + strings.Repeat("t", 250), err: "at most 249"},
	} {
		u, err := parseBrokerURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseBrokerURL(%q) = %v, %v; want an error with %q", tc.in, u, err, tc.err)
			}
			continue
		}
		if err != nil || u.topic != tc.topic || strings.Join(u.seeds, " ") != strings.Join(tc.seeds, " ") {
			t.Errorf("parseBrokerURL(%q) = %+v, %v; want seeds %v topic %q", tc.in, u, err, tc.seeds, tc.topic)
		}
	}
	cat := "sqlite:" + filepath.Join(t.TempDir(), "cat.db")
	for _, args := range [][]string{
		{"index", "--catalog", cat, "--once", "kafka://k1/orders"},
		{"index", "--catalog", cat, "--partition-discovery", "0s", "kafka://k1:9092/orders"},
		{"rebuild", "--catalog", cat, "--broker", "kafka://k1:9092", "-o", "x", "1"},
		{"rebuild", "--catalog", cat, "--broker", "kafka://k1:9092/t", "--dir", ".", "-o", "x", "1"},
	} {
		if r := runIn(t, false, args...); r.code != exitUsage {
			t.Errorf("segviz-lake %q: exit %d, want %d (usage); stderr %s", args, r.code, exitUsage, r.stderr)
		}
	}
}
