//go:build unix

package lake

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/segkit/segkit/vfs"
)

// processOptions are the options of the indexer processes of
// TestProcessesKillAndPause: wall clock, a 1 s lease.
func processOptions(owner string) Options {
	o := testOptions()
	o.Owner, o.LeaseTTL, o.PollInterval, o.FileWindow = owner, time.Second, 20*time.Millisecond, 300*time.Millisecond
	return o
}

// openProcessCatalog opens the catalog of dir: PostgreSQL when url is
// set (the schema name in the url), else dir/catalog.db.
func openProcessCatalog(ctx context.Context, dir, url string) (*SQLStore, error) {
	if url != "" {
		return OpenPostgres(ctx, url, StoreOptions{})
	}
	return OpenSQLite(ctx, filepath.Join(dir, "catalog.db"), StoreOptions{})
}

// indexerChild is the indexer process: it runs until its lease is lost
// (exit 3) and prints COMMITTED after each commit, slowly (100 ms a
// commit), so that the parent can kill or stop it mid-way.
func indexerChild(dir, owner string) {
	ctx := context.Background()
	cat, err := openProcessCatalog(ctx, dir, os.Getenv("SEGKIT_LAKE_CHILD_PG"))
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	src, err := OpenDir(vfs.OS(), filepath.Join(dir, "logs", "orders-0"))
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	x := NewIndexer(cat, src, processOptions(owner))
	x.afterCommit = func(Commit) {
		fmt.Println("COMMITTED")
		time.Sleep(100 * time.Millisecond)
	}
	err = x.Run(ctx)
	fmt.Println("ERROR", err)
	if errors.Is(err, ErrLeaseLost) {
		os.Exit(3)
	}
	os.Exit(2)
}

// TestProcessesKillAndPause: indexer processes on one partition and one
// catalog. The first is killed with SIGKILL after its first commit (mid
// backfill, a range in memory); the second waits for that lease to
// expire, takes over, and is stopped with SIGSTOP after a commit; an
// indexer in this process waits for the stopped one's lease to expire
// and indexes the rest. The stopped one, continued, has its next write
// rejected (exit 3, ErrLeaseLost). Each committed offset is in exactly
// one file. On SQLite (a catalog file shared by the processes), and on
// PostgreSQL when SEGKIT_POSTGRES_URL is set.
func TestProcessesKillAndPause(t *testing.T) {
	if dir := os.Getenv("SEGKIT_LAKE_CHILD_DIR"); dir != "" {
		indexerChild(dir, os.Getenv("SEGKIT_LAKE_CHILD_OWNER"))
		return
	}
	stores := []string{"sqlite"}
	if os.Getenv("SEGKIT_POSTGRES_URL") != "" || os.Getenv("CI") == "true" {
		stores = append(stores, "postgres") // under CI=true a missing server fails (requirePostgres)
	}
	for _, store := range stores {
		t.Run(store, func(t *testing.T) { testProcesses(t, store) })
	}
}

func testProcesses(t *testing.T, store string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	pdir := filepath.Join(dir, "logs", "orders-0")
	g := newGen(t, vfs.OS(), pdir)
	writeRich(g)
	g.close()
	pgURL := ""
	var cat *SQLStore
	if store == "postgres" {
		requirePostgres(t)
		cat = openPostgres(t, nil)
		var schema string
		if err := cat.DB().QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			t.Fatal(err)
		}
		pgURL = os.Getenv("SEGKIT_POSTGRES_URL")
		sep := "?"
		if strings.Contains(pgURL, "?") {
			sep = "&"
		}
		pgURL += sep + "search_path=" + schema
	} else {
		var err error
		if cat, err = openProcessCatalog(ctx, dir, ""); err != nil {
			t.Fatal(err)
		}
		defer cat.Close()
	}
	start := func(owner string) (*exec.Cmd, *bufio.Scanner) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProcessesKillAndPause$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SEGKIT_LAKE_CHILD_DIR="+dir, "SEGKIT_LAKE_CHILD_OWNER="+owner, "SEGKIT_LAKE_CHILD_PG="+pgURL)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, bufio.NewScanner(out)
	}
	waitCommit := func(name string, sc *bufio.Scanner) {
		for sc.Scan() {
			if sc.Text() == "COMMITTED" {
				return
			}
			if strings.HasPrefix(sc.Text(), "ERROR") {
				t.Fatalf("%s: %s", name, sc.Text())
			}
		}
		t.Fatalf("%s ended before a commit", name)
	}
	k, kout := start("killed")
	waitCommit("killed", kout)
	if err := k.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	k.Wait()
	p, pout := start("paused")
	waitCommit("paused", pout)
	if err := p.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	b := NewIndexer(cat, openSource(t, vfs.OS(), pdir), processOptions("survivor"))
	bctx, bcancel := context.WithCancel(ctx)
	bDone := make(chan error, 1)
	go func() { bDone <- b.Run(bctx) }()
	for {
		st, _, err := cat.State(ctx, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if st.Start == 0 && st.End == g.next {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the survivor did not index the partition: state %+v", st)
		case <-time.After(20 * time.Millisecond):
		}
	}
	before, _ := cat.Files(ctx, 1, 0, true)
	if err := p.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for pout.Scan() { // the rest of its output
		if strings.HasPrefix(pout.Text(), "ERROR") && !strings.Contains(pout.Text(), "lease lost") {
			t.Errorf("paused: %s", pout.Text())
		}
	}
	err := p.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("the paused indexer, continued: %v, want exit 3 (lease lost)", err)
	}
	after, _ := cat.Files(ctx, 1, 0, true)
	if len(after) != len(before) {
		t.Fatalf("%d files after the paused indexer came back, %d before", len(after), len(before))
	}
	bcancel()
	if err := <-bDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("survivor: %v", err)
	}
	checkTiling(t, g, readBack(t, cat, openSource(t, vfs.OS(), pdir), "orders", processOptions("")), 0, g.next)
}
