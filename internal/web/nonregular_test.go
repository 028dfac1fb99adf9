//go:build !windows && !js && !wasip1

package web

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFIFOInServedDir: a FIFO named like a segment's file makes every
// request that opens it fail at once with an error naming it, instead of
// blocking (and holding the session) until a writer opens the FIFO; the
// other partition is still served.
func TestFIFOInServedDir(t *testing.T) {
	_, served := fixture(t)
	p0 := filepath.Join(served, "kafka-logs", "orders-0")
	for _, name := range []string{"00000000000000000378.timeindex", "00000000000000000378.log"} {
		if err := os.Remove(filepath.Join(p0, name)); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(p0, name), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	h := newServer(t, served, nil)
	for _, tc := range []struct {
		path string
		ok   bool // 200 expected; otherwise an error status naming the FIFO
	}{
		{"/files/kafka-logs/orders-0/00000000000000000378.timeindex", false},
		{"/files/kafka-logs/orders-0/00000000000000000378.log", false},
		{"/api/bytes?dir=kafka-logs/orders-0&file=00000000000000000378.timeindex", false},
		{"/api/partition?dir=kafka-logs/orders-0", false},
		{"/api/scan?dir=kafka-logs/orders-0&base=378", false},
		{"/api/verify?dir=kafka-logs/orders-0", false},
		{"/api/partitions", true},
		{"/api/partition?dir=kafka-logs/orders-1", true},
	} {
		done := make(chan int, 1)
		var body string
		go func() {
			w := get(t, h, "GET", tc.path, nil)
			body = w.Body.String()
			done <- w.Code
		}()
		select {
		case code := <-done:
			if tc.ok {
				if code != http.StatusOK {
					t.Errorf("%s: %d, want 200: %s", tc.path, code, body)
				}
				continue
			}
			if code < 400 {
				t.Errorf("%s: %d, want an error status", tc.path, code)
			}
			if !strings.HasPrefix(tc.path, "/files/") && !strings.Contains(body, "not a regular file (a FIFO)") {
				t.Errorf("%s: %d %s: the error does not say the file is a FIFO", tc.path, code, body)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no answer after 5 s (blocked on the FIFO?)", tc.path)
		}
	}
}
