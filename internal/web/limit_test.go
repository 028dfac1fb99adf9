package web

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/viz"
	"github.com/segkit/segkit/record"
)

var unbounded = flag.Bool("bomb.unbounded", false, "TestDecompressionBombs: lift the limits (to measure what they prevent); the test then fails")

// bombPartition writes a partition bomb-0 under a new directory: batches
// of zstd-compressed zeros, each a few KiB on disk and just under
// viz.MaxDecompressed (64 MiB) decompressed, and returns the directory and
// the batches' positions.
func bombPartition(t *testing.T, batches int) (root string, positions []int64) {
	t.Helper()
	const records, valueSize = 100, 640 << 10 // 62.5 MiB of values
	if records*valueSize >= viz.MaxDecompressed {
		t.Fatal("the bomb would exceed the viewer's decompression limit")
	}
	zeros := make([]byte, valueSize)
	recs := make([]record.Record, records)
	for i := range recs {
		recs[i] = record.Record{Timestamp: 1_700_000_000_000, Key: []byte(fmt.Sprint(i)), Value: zeros}
	}
	var w record.Builder
	var seg []byte
	for i := range batches {
		positions = append(positions, int64(len(seg)))
		spec := record.NewBatchSpec(int64(i*records), compress.Zstd)
		var err error
		if seg, err = w.AppendBatch(seg, &spec, recs); err != nil {
			t.Fatal(err)
		}
	}
	root = t.TempDir()
	dir := filepath.Join(root, "bomb-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("bomb partition: %d batches, %d bytes on disk, %d MiB decompressed each", batches, len(seg), records*valueSize>>20)
	return root, positions
}

// peakHeap samples runtime.MemStats.HeapInuse until stop is called, which
// returns the largest value seen.
func peakHeap() (stop func() uint64) {
	var mu sync.Mutex
	var peak uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		mu.Lock()
		peak = max(peak, m.HeapInuse)
		mu.Unlock()
	}
	go func() {
		defer close(finished)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		sample()
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// TestDecompressionBombs fires 32 concurrent /api/records requests at
// batches that decompress to 62.5 MiB each from a few KiB on disk. Without
// limits each costs 65-85 MB and 24 of them reached 1.65 GB; with the
// default budget (256 MiB at 96 MiB a request: two in flight) some are
// answered, the others get 503 with Retry-After, and the heap in use stays
// under 2 × RequestCost for the requests in flight, plus the garbage the
// collector may leave (GOGC=100 lets the heap reach twice what is live),
// plus 64 MiB for the rest of the test: 512 MiB.
func TestDecompressionBombs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MiB")
	}
	const requests = 32
	const bound = 512 << 20
	root, positions := bombPartition(t, 4)
	fsys, r, err := OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	sess := viz.NewSession(fsys, viz.Options{Name: "bombs"})
	t.Cleanup(func() { sess.Close(); r.Close() })
	limits := Limits{MaxInFlight: 4, MaxQueued: 4, QueueWait: time.Minute} // the default budget: 2 in flight
	if *unbounded {
		limits = Limits{MaxInFlight: requests, MemoryBudget: 1 << 40, MaxQueued: -1}
	}
	h := NewHandler(Config{Session: sess, Limits: limits})
	if n := h.work.inFlight(); !*unbounded && n != 2 {
		t.Fatalf("in-flight limit %d, want 2 (256 MiB / 96 MiB)", n)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: requests}}
	defer client.CloseIdleConnections()
	// Open the partition first, so that every request decodes.
	if code, _, err := fetch(client, srv.URL+"/api/partition?dir=bomb-0"); err != nil || code != 200 {
		t.Fatalf("partition: %d %v", code, err)
	}

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	stop := peakHeap()
	var wg sync.WaitGroup
	codes := make([]int, requests)
	retry := make([]string, requests)
	errs := make([]error, requests)
	start := make(chan struct{})
	for i := range requests {
		wg.Go(func() {
			<-start
			url := fmt.Sprintf("%s/api/records?dir=bomb-0&base=0&position=%d&limit=100", srv.URL, positions[i%len(positions)])
			codes[i], retry[i], errs[i] = fetch(client, url)
		})
	}
	close(start)
	wg.Wait()
	peak := stop()

	ok, busy := 0, 0
	for i := range requests {
		switch {
		case errs[i] != nil:
			t.Errorf("request %d: %v", i, errs[i])
		case codes[i] == http.StatusOK:
			ok++
		case codes[i] == http.StatusServiceUnavailable:
			busy++
			if retry[i] != "1" {
				t.Errorf("request %d: 503 with Retry-After %q", i, retry[i])
			}
		default:
			t.Errorf("request %d: HTTP %d", i, codes[i])
		}
	}
	t.Logf("%d requests: %d answered, %d got 503; heap in use %d MiB before, peak %d MiB (bound %d MiB)",
		requests, ok, busy, base.HeapInuse>>20, peak>>20, bound>>20)
	if hwm, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(hwm), "\n") {
			if strings.HasPrefix(line, "VmHWM:") {
				t.Logf("peak RSS of the test process (%s)", strings.Join(strings.Fields(line), " "))
			}
		}
	}
	if ok == 0 || busy == 0 {
		t.Errorf("%d answered and %d refused: want some of each", ok, busy)
	}
	if peak > bound {
		t.Errorf("peak heap in use %d MiB, above the bound %d MiB", peak>>20, bound>>20)
	}
}

// fetch GETs url and returns the status and the Retry-After header.
func fetch(c *http.Client, url string) (int, string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), err
}

// TestLimiter checks the admission rules: the in-flight limit from
// MaxInFlight and the memory budget, a bounded queue, a bounded wait.
func TestLimiter(t *testing.T) {
	cost := int64(viz.MaxDecompressed) + DefaultResponseCost
	for _, tt := range []struct {
		name string
		l    Limits
		want int
	}{
		{"default", Limits{}, min(runtime.GOMAXPROCS(0), int(DefaultMemoryBudget/cost))},
		{"cores", Limits{MaxInFlight: 1}, 1},
		{"budget", Limits{MaxInFlight: 64, MemoryBudget: 10 * cost}, 10},
		{"tiny_budget", Limits{MemoryBudget: 1}, 1},
		{"cost", Limits{MaxInFlight: 64, MemoryBudget: 1 << 30, RequestCost: 1 << 20}, 64},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := newLimiter(tt.l).inFlight(); got != tt.want {
				t.Errorf("in flight %d, want %d", got, tt.want)
			}
		})
	}
	l := newLimiter(Limits{MaxInFlight: 1, MaxQueued: 1, QueueWait: 50 * time.Millisecond})
	release, err := l.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		rel, err := l.acquire(context.Background()) // queued, then served
		if err == nil {
			rel()
		}
		waited <- err
	}()
	for len(l.queue) == 0 {
		time.Sleep(time.Millisecond)
	}
	if _, err := l.acquire(context.Background()); !errors.Is(err, errBusy) { // the queue is full
		t.Fatalf("third request: %v, want errBusy", err)
	}
	release()
	if err := <-waited; err != nil {
		t.Fatalf("queued request: %v", err)
	}
	release, _ = l.acquire(context.Background())
	defer release()
	if _, err := l.acquire(context.Background()); !errors.Is(err, errBusy) { // waits 50 ms, then gives up
		t.Fatalf("timed-out request: %v, want errBusy", err)
	}
}

// TestNewServer checks the connection limits of the server: the defaults,
// and an idle keep-alive connection closed after a short IdleTimeout.
func TestNewServer(t *testing.T) {
	srv := NewServer(Config{})
	if srv.IdleTimeout != DefaultIdleTimeout || srv.ReadHeaderTimeout != DefaultReadHeaderTimeout || srv.MaxHeaderBytes != DefaultMaxHeaderBytes {
		t.Errorf("defaults: IdleTimeout %v, ReadHeaderTimeout %v, MaxHeaderBytes %d", srv.IdleTimeout, srv.ReadHeaderTimeout, srv.MaxHeaderBytes)
	}
	if DefaultIdleTimeout <= 0 || DefaultReadHeaderTimeout <= 0 || DefaultMaxHeaderBytes <= 0 {
		t.Error("a default is not set")
	}
	srv = NewServer(Config{Timeouts: Timeouts{Idle: 100 * time.Millisecond, ReadHeader: 200 * time.Millisecond, MaxHeaderBytes: 4 << 10}})
	ts := httptest.NewUnstartedServer(srv.Handler)
	ts.Config = srv
	ts.Start()
	defer ts.Close()
	host := strings.TrimPrefix(ts.URL, "http://")

	// Idle: a keep-alive connection is closed once idle for 100 ms.
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /wasm/status HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Close {
		t.Fatalf("first response: %d, close %v", resp.StatusCode, resp.Close)
	}
	began := time.Now()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection: %v, want EOF (closed by the server)", err)
	}
	if idle := time.Since(began); idle > 2*time.Second {
		t.Errorf("idle connection closed after %v, IdleTimeout is 100 ms", idle)
	}

	// ReadHeader: a connection that never finishes its headers is closed.
	c2, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	fmt.Fprintf(c2, "GET / HTTP/1.1\r\nHost: %s\r\n", host)
	c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(c2); err != nil {
		t.Fatalf("slow headers: %v, want the server to close the connection", err)
	}

	// MaxHeaderBytes: 4 KiB (plus net/http's 4 KiB of slack).
	req, _ := http.NewRequest("GET", ts.URL+"/wasm/status", nil)
	req.Header.Set("X-Big", strings.Repeat("x", 16<<10))
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("16 KiB of headers: %d, want 431", resp.StatusCode)
		}
	}
}
