package oracle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/vfs"
)

// TestRunningBrokerIsRefused starts a real Kafka broker and points segkit's
// writers at its log directory: `segviz append` must fail with exit 3
// before writing a byte, and a writable kafkalog.Open must return a LockError,
// because the broker holds <log dir>/.lock (Kafka's LogManager locks it
// with FileChannel.tryLock, a POSIX record lock). A read-only open still
// works. After the broker stops, the same append goes through.
func TestRunningBrokerIsRefused(t *testing.T) {
	oracle.Require(t)
	segviz := buildSegviz(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	port, err := oracle.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(t.TempDir(), "logs")
	srv, err := oracle.Start(ctx, "broker", "--log-dir", logDir, "--port", strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			srv.Stop()
		}
	}()
	var ready struct{ Bootstrap string }
	if err := json.Unmarshal(srv.Report, &ready); err != nil || ready.Bootstrap == "" {
		t.Fatalf("broker report %q: %v", srv.Report, err)
	}
	before := treeListing(t, logDir)

	part := filepath.Join(logDir, "offline-0")
	input := `{"key": null, "value": "aGVsbG8=", "timestamp": ` + strconv.FormatInt(time.Now().UnixMilli(), 10) + "}\n"
	append1 := func() (int, string) {
		cmd := exec.CommandContext(ctx, segviz, "append", part)
		cmd.Stdin = strings.NewReader(input)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), stderr.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, stderr.String()
	}
	code, msg := append1()
	if code != 3 || !strings.Contains(msg, ".lock") {
		t.Fatalf("segviz append into a running broker's log directory: exit %d, stderr %q; want exit 3 naming .lock", code, msg)
	}
	if _, err := os.Stat(part); !os.IsNotExist(err) {
		t.Fatalf("the refused append created %s (%v)", part, err)
	}
	cfg := kafkalog.DefaultConfig()
	if l, err := kafkalog.Open(vfs.OS(), part, cfg, kafkalog.Options{}); err == nil {
		l.Close()
		t.Fatal("a writable kafkalog.Open in a running broker's log directory succeeded")
	} else if le := (*kafkalog.LockError)(nil); !errors.As(err, &le) {
		t.Fatalf("writable open: %v, want a *kafkalog.LockError", err)
	}
	if after := treeListing(t, logDir); after != before {
		t.Fatalf("the refused writers changed the broker's log directory:\nbefore %s\nafter  %s", before, after)
	}
	// Readers take no lock.
	meta := filepath.Join(logDir, "__cluster_metadata-0")
	if l, err := kafkalog.Open(vfs.OS(), meta, cfg, kafkalog.Options{ReadOnly: true}); err != nil {
		t.Fatalf("read-only open of the broker's metadata log: %v", err)
	} else {
		l.Close()
	}

	if err := srv.Stop(); err != nil {
		t.Fatalf("broker stop: %v\n%s", err, srv.Stderr())
	}
	stopped = true
	if code, msg := append1(); code != 0 {
		t.Fatalf("append after the broker stopped: exit %d, %s", code, msg)
	}
	t.Logf("a running broker's log directory refused segviz append (exit 3) and a writable kafkalog.Open; accepted after the broker stopped")
}

// treeListing names the entries of dir, for before/after comparisons (the
// broker's metadata log, which the broker itself writes to, is left out).
func treeListing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "__cluster_metadata-0" {
			continue
		}
		b.WriteString(e.Name() + " ")
	}
	return b.String()
}
