//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/segkit/segkit/internal/realdata"
)

// TestVerifyFIFO: a FIFO named like an index is refused with exit 3 before
// it is opened (before, verify hung in open(2), waiting for a writer).
func TestVerifyFIFO(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kafka-logs", "test-0")
	copyDir(t, filepath.Join(realdata.Dir(t), realTestPartition), dir)
	var code int
	var errs string
	fifo := filepath.Join(dir, "00000000000000000000.timeindex")
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		code, _, errs = runSegviz("verify", dir)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		f, _ := os.OpenFile(fifo, os.O_WRONLY, 0) // unblock the reader before failing
		if f != nil {
			f.Close()
		}
		<-done
		t.Fatalf("verify hung on a FIFO")
	}
	if code != exitFailure || !strings.Contains(errs, "FIFO") || !strings.Contains(errs, "timeindex") {
		t.Errorf("exit %d, %q; want %d naming the FIFO", code, errs, exitFailure)
	}
}
