package lake

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/segkit/segkit/vfs"
)

// TestRunStandbyAndPausedIndexer: two indexers Run on one partition at
// once (wall clock, a 1 s lease). The first takes the lease and pauses
// after its first commit (as a stopped process would), past its lease;
// the standby takes the partition when the lease expires and indexes all
// of it. When the paused one comes back, its next write is rejected
// (ErrLeaseLost) and it stops; the catalog holds each committed offset
// in exactly one file.
func TestRunStandbyAndPausedIndexer(t *testing.T) { testRunStandby(t, openCatalog) }

func testRunStandby(t *testing.T, openCatalog opener) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fsys := vfs.NewMem()
	g := newGen(t, fsys, "/logs/orders-0")
	writeRich(g)
	cat := openCatalog(t, nil)
	o := testOptions()
	o.LeaseTTL, o.PollInterval, o.FileWindow = time.Second, 20*time.Millisecond, 300*time.Millisecond
	o.Owner = "a"
	a := NewIndexer(cat, openSource(t, fsys, g.dir), o)
	paused, resume := make(chan struct{}), make(chan struct{})
	commits := 0
	a.afterCommit = func(Commit) {
		if commits++; commits == 1 {
			close(paused)
			<-resume
		}
	}
	aDone := make(chan error, 1)
	go func() { aDone <- a.Run(ctx) }()
	<-paused
	o.Owner = "b"
	b := NewIndexer(cat, openSource(t, fsys, g.dir), o)
	bctx, bcancel := context.WithCancel(ctx)
	bDone := make(chan error, 1)
	go func() { bDone <- b.Run(bctx) }()
	// Wait for b to have indexed everything.
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
			t.Fatalf("b did not index the partition: state %+v", st)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if l := b.Lease(); l.Owner != "b" || l.Token < 2 {
		t.Fatalf("b's lease %+v", l)
	}
	before, _ := cat.Files(ctx, 1, 0, true)
	close(resume)
	if err := <-aDone; !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("the paused indexer: %v, want ErrLeaseLost", err)
	}
	after, _ := cat.Files(ctx, 1, 0, true)
	if len(after) != len(before) {
		t.Fatalf("%d files after the paused indexer came back, %d before", len(after), len(before))
	}
	bcancel()
	if err := <-bDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("b: %v", err)
	}
	checkTiling(t, g, readBack(t, cat, openSource(t, fsys, g.dir), "orders", o), 0, g.next)
}
