package oracle_test

// The compaction speed judge: one dirty keyed partition, cleaned by Kafka
// 4.3.1's own Cleaner (oracle/kafka clean --batch --timing, in one JVM
// kept up between runs, with a broker's JVM settings) and by
// compaction.Clean (in a child process of this test binary, so that its
// memory is its own), alternately, each on a fresh copy; the throughputs
// (bytes of the dirty section per second) are compared run by run, and
// the first run's outputs are compared with the compaction judge's
// helpers (compareClean), so that both timed the same work. Both use the
// dedupe buffer Kafka needs for the partition's keys (speedDedupe); the
// memory each side holds is reported (segkit's sampled in its child), and
// segkit cleans once more with GOMEMLIMIT set to that buffer. The figures
// are in docs/performance.md.
//
//	SEGKIT_COMPACT_BENCH=1 go test -run 'TestCompactionSpeed$' -v -timeout 2h .
//
// Settings (environment):
//
//	SEGKIT_COMPACT_BENCH_BYTES  size of the partition (default 1 GiB)
//	SEGKIT_COMPACT_BENCH_RUNS   timed runs on each side (default 5)
//	SEGKIT_COMPACT_BENCH_CODEC  none (default), gzip, snappy, lz4, zstd or mix
//	                            (each batch's codec drawn from the five)
//	SEGKIT_COMPACT_BENCH_CACHE  a directory to keep the generated partition
//	                            in and reuse it on later runs
//
// TestCompactionSpeedSmall runs the same harness on a few MiB, once, and
// checks the outputs only: it is part of the oracle's ordinary tests.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// speedSpec is the partition the speed harness cleans.
type speedSpec struct {
	Bytes int64  // about this many bytes of batches
	Codec string // none, gzip, snappy, lz4, zstd, mix
	Seed  uint64
}

// The partition: records of a key drawn uniformly from Keys() keys
// ("user-%010d"), values of 50–400 bytes cut from a text-like corpus (so
// that codecs have something to do), 5% tombstones, batches of 1–64
// records; a fifth of the batches from 4 idempotent producers, the rest
// without a producer id. Segments of Bytes/8 (at least 1 MiB), then a
// roll: everything is dirty, nothing was cleaned before.
const (
	speedMinValue   = 50
	speedMaxValue   = 400
	speedMaxBatch   = 64
	speedTombstones = 0.05
	speedIdemShare  = 0.2
)

// Keys is the key space: about four records per key.
func (s speedSpec) Keys() int { return max(int(s.Bytes/1000), 100) }

func (s speedSpec) segmentBytes() int64 { return max(s.Bytes/8, 1<<20) }

func (s speedSpec) name() string { return fmt.Sprintf("speed-%d-%s-%d", s.Bytes, s.Codec, s.Seed) }

// speedPartition is a generated partition and what is known of it.
type speedPartition struct {
	Dir      string
	Records  int64
	Keys     int // distinct keys written
	Bytes    int64
	LastTs   int64
	Segments int
}

// speedCorpus is the text values are cut from.
var speedCorpus = func() []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"account", "balance", "user", "session", "order", "status", "active", "pending", "shipped",
		"country", "region", "email", "example.com", "true", "false", "null", "timestamp", "version", "name", "id",
		"price", "currency", "EUR", "USD", "quantity", "item", "cart", "profile", "settings", "theme", "dark"}
	var b []byte
	for len(b) < 1<<17 {
		switch rng.IntN(4) {
		case 0:
			b = strconv.AppendInt(b, rng.Int64N(1_000_000_000), 10)
		default:
			b = append(b, words[rng.IntN(len(words))]...)
		}
		b = append(b, " :,{}\""[rng.IntN(6)])
	}
	return b
}()

var speedCodecs = map[string][]compress.Codec{
	"none": {compress.None}, "gzip": {compress.Gzip}, "snappy": {compress.Snappy}, "lz4": {compress.LZ4}, "zstd": {compress.Zstd},
	"mix": allCodecs,
}

// writeSpeedPartition writes the partition of spec into dir (its parent
// is its log directory).
func writeSpeedPartition(t testing.TB, dir string, spec speedSpec) speedPartition {
	t.Helper()
	codecs, ok := speedCodecs[spec.Codec]
	if !ok {
		t.Fatalf("unknown codec %q (want none, gzip, snappy, lz4, zstd or mix)", spec.Codec)
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{
		config.CleanupPolicy: config.CleanupPolicyCompact,
		config.SegmentBytes:  strconv.FormatInt(spec.segmentBytes(), 10),
	})
	if err != nil {
		t.Fatal(err)
	}
	must(os.MkdirAll(filepath.Dir(dir), 0o755))
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), cfg, kafkalog.Options{Clock: fixedClock{writeNow}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(spec.Seed, 0x5beed))
	nkeys := spec.Keys()
	seen := make([]bool, nkeys)
	keys := make([][]byte, speedMaxBatch)
	for i := range keys {
		keys[i] = make([]byte, 0, 16)
	}
	recs := make([]record.Record, speedMaxBatch)
	var b record.Builder
	var buf []byte
	seq := map[int64]int32{}
	p := speedPartition{Dir: dir}
	ts := baseTs
	for p.Bytes < spec.Bytes {
		n := 1 + rng.IntN(speedMaxBatch)
		for i := range n {
			k := rng.IntN(nkeys)
			if !seen[k] {
				seen[k] = true
				p.Keys++
			}
			keys[i] = fmt.Appendf(keys[i][:0], "user-%010d", k)
			r := record.Record{Timestamp: ts, Key: keys[i]}
			if rng.Float64() >= speedTombstones {
				size := speedMinValue + rng.IntN(speedMaxValue-speedMinValue+1)
				at := rng.IntN(len(speedCorpus) - size)
				r.Value = speedCorpus[at : at+size]
			}
			recs[i] = r
			ts++
		}
		bs := record.NewBatchSpec(0, codecs[rng.IntN(len(codecs))])
		if rng.Float64() < speedIdemShare {
			pid := int64(7000 + rng.IntN(4))
			bs.ProducerID, bs.ProducerEpoch, bs.BaseSequence = pid, 0, seq[pid]
			seq[pid] += int32(n)
		}
		if buf, err = b.AppendBatch(buf[:0], &bs, recs[:n]); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(buf, 0); err != nil {
			t.Fatal(err)
		}
		p.Bytes += int64(len(buf))
		p.Records += int64(n)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	p.Segments = len(l.Segments())
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	p.LastTs = ts
	return p
}

// speedSource returns the partition of spec: generated under root, or
// reused from (or generated into) $SEGKIT_COMPACT_BENCH_CACHE.
func speedSource(t testing.TB, root string, spec speedSpec) speedPartition {
	t.Helper()
	base := filepath.Join(root, "src")
	if c := os.Getenv("SEGKIT_COMPACT_BENCH_CACHE"); c != "" {
		base = filepath.Join(c, spec.name())
		if b, err := os.ReadFile(filepath.Join(base, "partition.json")); err == nil {
			var p speedPartition
			if err := json.Unmarshal(b, &p); err == nil {
				t.Logf("reusing %s", p.Dir)
				return p
			}
		}
		must(os.RemoveAll(base))
	}
	t0 := time.Now()
	p := writeSpeedPartition(t, filepath.Join(base, "speed-0"), spec)
	t.Logf("wrote %s: %d bytes, %d records, %d distinct keys, %d segments (codec %s) in %v",
		p.Dir, p.Bytes, p.Records, p.Keys, p.Segments, spec.Codec, time.Since(t0).Round(time.Millisecond))
	if os.Getenv("SEGKIT_COMPACT_BENCH_CACHE") != "" {
		b, _ := json.Marshal(p)
		must(os.WriteFile(filepath.Join(base, "partition.json"), b, 0o644))
	}
	return p
}

// speedDedupe is the dedupe buffer Kafka needs to clean keys distinct keys
// in one round: SkimpyOffsetMap's 24 bytes a slot, enough slots that
// (int)(slots × 0.9) exceeds keys (the cleaner stops when the map holds
// that many, before the next keyed record).
func speedDedupe(keys int) int64 {
	slots := int64(float64(keys+1)/compaction.DefaultLoadFactor) + 2
	return slots * compaction.BytesPerEntry
}

// brokerJVM are the JVM settings of bin/kafka-server-start.sh
// (KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS), over the oracle's own
// (which stop the JIT at C1 and use the serial collector, for start-up).
const brokerJVM = "-Xmx1G -Xms1G -XX:TieredStopAtLevel=4 -XX:-UseSerialGC -XX:+UseG1GC -XX:MaxGCPauseMillis=20 " +
	"-XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true"

// kafkaCleaner is one `oracle/kafka clean --batch` JVM, fed a job at a
// time.
type kafkaCleaner struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *bytes.Buffer
}

// kafkaTiming is the "timing" object of `clean --timing`.
type kafkaTiming struct {
	CleanNanos        int64 `json:"cleanNanos"`
	DedupeBufferBytes int64 `json:"dedupeBufferBytes"`
	HeapPeakBytes     int64 `json:"heapPeakBytes"`
	HeapMaxBytes      int64 `json:"heapMaxBytes"`
}

func startKafkaCleaner(ctx context.Context) (*kafkaCleaner, error) {
	cmd := exec.CommandContext(ctx, oracle.Script(), "clean", "--batch")
	cmd.Env = append(os.Environ(), "ORACLE_JAVA_OPTS="+strings.TrimSpace(brokerJVM+" "+os.Getenv("ORACLE_JAVA_OPTS")))
	k := &kafkaCleaner{cmd: cmd, stderr: &bytes.Buffer{}}
	var err error
	if k.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	k.out = bufio.NewScanner(out)
	k.out.Buffer(nil, 1<<26)
	cmd.Stderr = k.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return k, nil
}

// clean runs one job and returns its line.
func (k *kafkaCleaner) clean(job map[string]any) (kafkaClean, *kafkaTiming, error) {
	b, err := json.Marshal(job)
	if err != nil {
		return kafkaClean{}, nil, err
	}
	if _, err := k.in.Write(append(b, '\n')); err != nil {
		return kafkaClean{}, nil, fmt.Errorf("oracle/kafka clean: %v\n%s", err, lastLines(k.stderr.String(), 40))
	}
	if !k.out.Scan() {
		return kafkaClean{}, nil, fmt.Errorf("oracle/kafka clean ended: %v\n%s", k.out.Err(), lastLines(k.stderr.String(), 40))
	}
	var r kafkaClean
	var tm struct {
		Timing *kafkaTiming `json:"timing"`
	}
	if err := json.Unmarshal(k.out.Bytes(), &r); err != nil {
		return r, nil, err
	}
	if err := json.Unmarshal(k.out.Bytes(), &tm); err != nil {
		return r, nil, err
	}
	return r, tm.Timing, nil
}

// close ends the JVM (its stdin closes: it exits) and waits for it.
func (k *kafkaCleaner) close() error {
	k.in.Close()
	return k.cmd.Wait()
}

// speedChildJob is what the child process cleans, and speedChildResult
// what it measured.
type speedChildJob struct {
	Dir    string            `json:"dir"`
	Props  map[string]string `json:"props"`
	Now    int64             `json:"now"`
	Dedupe int64             `json:"dedupe"`
}

type speedChildResult struct {
	Report *compaction.Report `json:"report"`
	Error  string             `json:"error"`
	Nanos  int64              `json:"nanos"`
	// HeapBase and HeapPeak are runtime/metrics' heap objects bytes (live
	// and not yet swept) before the clean and at most during it, sampled
	// every millisecond; RSSAnonBase and RSSAnonPeak the process's
	// anonymous resident memory (RssAnon: not the page cache, not the
	// mapped index files), sampled every 5 ms; MaxRSS the kernel's high
	// water mark of the whole resident set (VmHWM), file-backed pages
	// included.
	HeapBase, HeapPeak       uint64
	RSSAnonBase, RSSAnonPeak uint64
	MaxRSS                   uint64
	// LivePeak is the most runtime/metrics' live heap (/gc/heap/live,
	// what the last GC found reachable) was: what the clean holds,
	// without the garbage the collector has not come to yet.
	LivePeak uint64
	Samples  int
}

const speedChildEnv = "SEGKIT_COMPACT_SPEED_CHILD"

// TestCompactionSpeedChild is the child process of the speed harness: it
// runs compaction.Clean once on the directory it is given and prints what
// it measured. It does nothing in an ordinary run.
func TestCompactionSpeedChild(t *testing.T) {
	spec := os.Getenv(speedChildEnv)
	if spec == "" {
		t.Skip("the speed harness's child process")
	}
	var job speedChildJob
	if err := json.Unmarshal([]byte(spec), &job); err != nil {
		t.Fatal(err)
	}
	c := compactCase{name: "child", props: job.Props}
	cfg := c.config(t)
	var res speedChildResult
	runtime.GC()
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(samples)
	res.HeapBase = samples[0].Value.Uint64()
	live0 := samples[1].Value.Uint64()
	ps := openProcStatus()
	res.RSSAnonBase = ps.read("RssAnon")
	res.HeapPeak, res.RSSAnonPeak = res.HeapBase, res.RSSAnonBase
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			metrics.Read(s)
			res.HeapPeak = max(res.HeapPeak, s[0].Value.Uint64())
			res.LivePeak = max(res.LivePeak, s[1].Value.Uint64())
			if i%5 == 0 {
				res.RSSAnonPeak = max(res.RSSAnonPeak, ps.read("RssAnon"))
			}
			res.Samples++
		}
	}()
	t0 := time.Now()
	rep, err := compaction.Clean(vfs.OS(), filepath.ToSlash(job.Dir), cfg, compaction.Options{Clock: fixedClock{job.Now}, DedupeBufferSize: job.Dedupe})
	res.Nanos = time.Since(t0).Nanoseconds()
	close(stop)
	wg.Wait()
	metrics.Read(samples)
	res.HeapPeak = max(res.HeapPeak, samples[0].Value.Uint64())
	res.LivePeak = max(res.LivePeak, samples[1].Value.Uint64())
	res.LivePeak -= min(res.LivePeak, live0)
	res.RSSAnonPeak = max(res.RSSAnonPeak, ps.read("RssAnon"))
	res.MaxRSS = ps.read("VmHWM")
	res.Report = rep
	if err != nil {
		res.Error = err.Error()
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("\nSEGKIT-SPEED %s\n", b)
}

// procStatus reads "kB" fields of /proc/self/status, in bytes (0 where
// there is no /proc), into a buffer of its own: the sampler makes no
// garbage that would show in the heap it samples.
type procStatus struct {
	f   *os.File
	buf [8192]byte
}

func openProcStatus() *procStatus {
	f, _ := os.Open("/proc/self/status")
	return &procStatus{f: f}
}

func (p *procStatus) read(field string) uint64 {
	if p.f == nil {
		return 0
	}
	n, _ := p.f.ReadAt(p.buf[:], 0)
	b := p.buf[:n]
	i := bytes.Index(b, []byte("\n"+field+":"))
	if i < 0 {
		return 0
	}
	b = b[i+len(field)+2:]
	var v uint64
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && b[0] >= '0' && b[0] <= '9' {
		v = v*10 + uint64(b[0]-'0')
		b = b[1:]
	}
	return v << 10
}

// segkitCleanChild runs compaction.Clean on dir in a child process, with
// env added to its environment.
func segkitCleanChild(ctx context.Context, job speedChildJob, env ...string) (speedChildResult, error) {
	var res speedChildResult
	b, err := json.Marshal(job)
	if err != nil {
		return res, err
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCompactionSpeedChild$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), speedChildEnv+"="+string(b)), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return res, fmt.Errorf("child: %v\n%s\n%s", err, lastLines(stdout.String(), 20), lastLines(stderr.String(), 20))
	}
	for _, l := range strings.Split(stdout.String(), "\n") {
		if v, ok := strings.CutPrefix(l, "SEGKIT-SPEED "); ok {
			if err := json.Unmarshal([]byte(v), &res); err != nil {
				return res, err
			}
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && res.MaxRSS == 0 {
				res.MaxRSS = uint64(ru.Maxrss) << 10
			}
			return res, nil
		}
	}
	return res, fmt.Errorf("child printed no result:\n%s", lastLines(stdout.String(), 20))
}

// speedRun is one timed clean on each side.
type speedRun struct {
	kafka  kafkaTiming
	segkit speedChildResult
	dirty  int64
}

// runSpeed cleans the partition runs times on each side, alternately, and
// checks that the first run's outputs agree. warm, when set, is cleaned
// once on each side first, untimed (the JIT's warm-up). With bounded,
// segkit cleans it once more with its heap limited to Kafka's dedupe
// buffer.
func runSpeed(t *testing.T, root string, p speedPartition, warm *speedPartition, runs int, bounded bool) []speedRun {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Hour)
	defer cancel()
	k, err := startKafkaCleaner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := k.close(); err != nil {
			t.Errorf("oracle/kafka clean: %v\n%s", err, lastLines(k.stderr.String(), 20))
		}
	}()
	mkCase := func(name string, p speedPartition) compactCase {
		return compactCase{name: name, src: p.Dir, now: p.LastTs + 10*minute, dedupe: speedDedupe(p.Keys),
			props: map[string]string{config.SegmentBytes: strconv.FormatInt(fileSize(t, p.Dir), 10)}}
	}
	one := func(c compactCase, kafkaFirst bool) (kafkaClean, *kafkaTiming, speedChildResult) {
		sd := segkitOut(root, c)
		prepareCopy(t, c.src, sd)
		syncFiles(t, sd) // the copy's writeback is not the clean's (Kafka's side syncs its copy too)
		var kr kafkaClean
		var kt *kafkaTiming
		var sr speedChildResult
		runK := func() {
			var err error
			kr, kt, err = k.clean(map[string]any{"id": c.name, "src": c.src, "out": kafkaOut(root, c), "now": c.now,
				"config": c.props, "dedupeBuffer": c.dedupe, "timing": true})
			if err != nil {
				t.Fatal(err)
			}
			if kr.Error != "" || kt == nil {
				t.Fatalf("Kafka's cleaner: %q (timing %v)", kr.Error, kt)
			}
		}
		runS := func() {
			var err error
			sr, err = segkitCleanChild(ctx, speedChildJob{Dir: sd, Props: c.props, Now: c.now, Dedupe: c.dedupe})
			if err != nil {
				t.Fatal(err)
			}
			if sr.Error != "" {
				t.Fatalf("compaction.Clean: %s", sr.Error)
			}
		}
		if kafkaFirst {
			runK()
			runS()
		} else {
			runS()
			runK()
		}
		return kr, kt, sr
	}
	drop := func(c compactCase) {
		must(os.RemoveAll(filepath.Dir(kafkaOut(root, c))))
		must(os.RemoveAll(filepath.Dir(segkitOut(root, c))))
	}
	if warm != nil {
		c := mkCase("warm", *warm)
		one(c, true)
		drop(c)
	}
	var out []speedRun
	for i := range runs {
		c := mkCase(fmt.Sprintf("run%d", i), p)
		kr, kt, sr := one(c, i%2 == 0)
		if i == 0 {
			// Equal work: the same decisions, batch for batch.
			d, n := compareClean(t, root, c, kr, sr.Report, nil, true)
			if len(d) > 0 {
				t.Fatalf("the cleaners disagree (%d differences):\n  %s", len(d), strings.Join(d[:min(len(d), 30)], "\n  "))
			}
			if !kr.Cleaned || !sr.Report.Cleanable || sr.Report.MapFull {
				t.Fatalf("not one whole clean: Kafka cleaned %v, segkit %v, map full %v", kr.Cleaned, sr.Report.Cleanable, sr.Report.MapFull)
			}
			t.Logf("outputs agree: %s", n)
			st := sr.Report.Stats
			t.Logf("the clean: %d of %d records kept, %d bytes written of %d read, %d map entries of %d slots; batches %d copied, %d rewritten, %d emptied, %d dropped",
				st.MessagesWritten, st.MessagesRead, st.BytesWritten, st.BytesRead, sr.Report.MapEntries, sr.Report.MapSlots,
				sr.Report.Removed.BatchesCopied, sr.Report.Removed.BatchesRewritten, sr.Report.Removed.BatchesEmptied, sr.Report.Removed.Batches)
		}
		r := speedRun{kafka: *kt, segkit: sr, dirty: sr.Report.CleanableBytes}
		if kr.CleanableBytes != r.dirty {
			t.Fatalf("dirty bytes: Kafka %d, segkit %d", kr.CleanableBytes, r.dirty)
		}
		out = append(out, r)
		t.Logf("run %d: Kafka %v (%.0f MB/s), segkit %v (%.0f MB/s): ratio %.2f; segkit: offset map %s, heap peak %s (live %s), RssAnon peak %s (base %s), VmHWM %s; Kafka: dedupe buffer %s, JVM heap peak %s",
			i, time.Duration(kt.CleanNanos).Round(time.Millisecond), mbps(r.dirty, kt.CleanNanos),
			time.Duration(sr.Nanos).Round(time.Millisecond), mbps(r.dirty, sr.Nanos), float64(kt.CleanNanos)/float64(sr.Nanos),
			mib(uint64(sr.Report.MapBytes)), mib(sr.HeapPeak-sr.HeapBase), mib(sr.LivePeak), mib(sr.RSSAnonPeak-sr.RSSAnonBase), mib(sr.RSSAnonBase), mib(sr.MaxRSS),
			mib(uint64(kt.DedupeBufferBytes)), mib(uint64(kt.HeapPeakBytes)))
		drop(c)
	}
	if bounded && runs > 0 {
		// The same clean with the Go heap held to Kafka's dedupe buffer
		// (GOMEMLIMIT, the collector off but for the limit): what segkit
		// needs, garbage collected as soon as the limit is near.
		c := mkCase("bounded", p)
		sd := segkitOut(root, c)
		prepareCopy(t, c.src, sd)
		syncFiles(t, sd)
		sr, err := segkitCleanChild(ctx, speedChildJob{Dir: sd, Props: c.props, Now: c.now, Dedupe: c.dedupe},
			"GOGC=off", fmt.Sprintf("GOMEMLIMIT=%d", c.dedupe))
		if err != nil {
			t.Fatal(err)
		}
		if sr.Error != "" || sr.Report.Stats != out[0].segkit.Report.Stats {
			t.Fatalf("the bounded clean: %q, stats %+v, want %+v", sr.Error, sr.Report.Stats, out[0].segkit.Report.Stats)
		}
		t.Logf("segkit with GOMEMLIMIT=%d (Kafka's dedupe buffer) and GOGC=off: %v (%.0f MB/s), heap peak %s, RssAnon peak %s, live heap peak %s",
			c.dedupe, time.Duration(sr.Nanos).Round(time.Millisecond), mbps(sr.Report.CleanableBytes, sr.Nanos),
			mib(sr.HeapPeak-sr.HeapBase), mib(sr.RSSAnonPeak-sr.RSSAnonBase), mib(sr.LivePeak))
		drop(c)
	}
	return out
}

// syncFiles forces every regular file of dir and its log directory, and
// both directories, to disk.
func syncFiles(t testing.TB, dir string) {
	t.Helper()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		ents, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			f, err := os.OpenFile(filepath.Join(d, e.Name()), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			err = f.Sync()
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(vfs.SyncDir(vfs.OS(), filepath.ToSlash(d)))
	}
}

// fileSize is the largest .log of dir: the segment.bytes to clean with
// (the groups then hold what the segments held).
func fileSize(t testing.TB, dir string) int64 {
	var m int64
	for _, f := range segmentFiles(t, dir, ".log") {
		if fi, err := os.Stat(filepath.Join(dir, f)); err == nil {
			m = max(m, fi.Size())
		}
	}
	return max(m, 1<<20)
}

func mbps(bytes, nanos int64) float64 { return float64(bytes) / 1e6 / (float64(nanos) / 1e9) }

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// summarize logs the figures: the ratio of throughputs (Kafka's time over
// segkit's, run by run) with its spread, and the memory on both sides.
func summarize(t *testing.T, spec speedSpec, p speedPartition, runs []speedRun) (ratios []float64) {
	var kt, st []float64
	var heap, anon []float64
	for _, r := range runs {
		ratios = append(ratios, float64(r.kafka.CleanNanos)/float64(r.segkit.Nanos))
		kt = append(kt, mbps(r.dirty, r.kafka.CleanNanos))
		st = append(st, mbps(r.dirty, r.segkit.Nanos))
		heap = append(heap, float64(r.segkit.HeapPeak-r.segkit.HeapBase))
		anon = append(anon, float64(r.segkit.RSSAnonPeak-r.segkit.RSSAnonBase))
	}
	mmm := func(v []float64) (float64, float64, float64) {
		s := slices.Clone(v)
		slices.Sort(s)
		return s[0], s[len(s)/2], s[len(s)-1]
	}
	lo, med, hi := mmm(ratios)
	klo, kmed, khi := mmm(kt)
	slo, smed, shi := mmm(st)
	_, _, hmax := mmm(heap)
	_, _, amax := mmm(anon)
	t.Logf("partition: %s, %d bytes dirty, %d records, %d distinct keys, codec %s", p.Dir, runs[0].dirty, p.Records, p.Keys, spec.Codec)
	t.Logf("throughput (MB/s of the dirty section, min/median/max of %d runs): Kafka %.0f/%.0f/%.0f, segkit %.0f/%.0f/%.0f", len(runs), klo, kmed, khi, slo, smed, shi)
	t.Logf("ratio segkit/Kafka (run by run): min %.2f, median %.2f, max %.2f", lo, med, hi)
	var live float64
	for _, r := range runs {
		live = max(live, float64(r.segkit.LivePeak))
	}
	t.Logf("memory: Kafka's dedupe buffer for %d keys %s (log.cleaner.dedupe.buffer.size=%d); segkit's offset map %s, its peak over the clean (max of the runs): heap %s (live %s), RssAnon %s",
		p.Keys, mib(uint64(runs[0].kafka.DedupeBufferBytes)), runs[0].kafka.DedupeBufferBytes, mib(uint64(runs[0].segkit.Report.MapBytes)),
		mib(uint64(hmax)), mib(uint64(live)), mib(uint64(amax)))
	return ratios
}

func envInt(t testing.TB, name string, def int64) int64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// TestCompactionSpeed is the 1 GiB comparison (opt-in: SEGKIT_COMPACT_BENCH=1).
func TestCompactionSpeed(t *testing.T) {
	if os.Getenv("SEGKIT_COMPACT_BENCH") == "" {
		t.Skip("set SEGKIT_COMPACT_BENCH=1 to compare compaction.Clean's speed with Kafka's cleaner on 1 GiB (minutes)")
	}
	oracle.Require(t)
	root := compactRoot(t)
	spec := speedSpec{Bytes: envInt(t, "SEGKIT_COMPACT_BENCH_BYTES", 1<<30), Codec: cmp.Or(os.Getenv("SEGKIT_COMPACT_BENCH_CODEC"), "none"), Seed: 1}
	runs := int(envInt(t, "SEGKIT_COMPACT_BENCH_RUNS", 5))
	p := speedSource(t, root, spec)
	warmSpec := spec
	warmSpec.Bytes = min(spec.Bytes/16, 64<<20)
	warm := speedSource(t, root, warmSpec)
	t.Logf("%s, GOMAXPROCS %d, %s/%s; Kafka's JVM: %s", cpuModel(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, brokerJVM)
	summarize(t, spec, p, runSpeed(t, root, p, &warm, runs, true))
}

// TestCompactionSpeedSmall runs the speed harness on a small partition,
// once, and checks the outputs agree (no timing is judged).
func TestCompactionSpeedSmall(t *testing.T) {
	oracle.Require(t)
	root := compactRoot(t)
	spec := speedSpec{Bytes: 3 << 20, Codec: "mix", Seed: 2}
	p := speedSource(t, root, spec)
	summarize(t, spec, p, runSpeed(t, root, p, nil, 1, false))
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":")) + fmt.Sprintf(" (%d CPUs)", runtime.NumCPU())
		}
	}
	return runtime.GOARCH
}
