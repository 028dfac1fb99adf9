package timeline

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestConcurrentReadersAndWriter runs a writer (begins, inflights,
// completions, rollbacks, with archival and merges every few instants)
// against readers of the same Timeline and readers that Open the
// directory read-only again and again, as another process would. Every
// read must hold every instant whose completion returned before the read
// began, completed and in strictly increasing time; and the Timeline's
// own readers never see the list shrink. Run it with -race.
func TestConcurrentReadersAndWriter(t *testing.T) {
	m := newPartition(t)
	opt := Options{Clock: newClock(), ArchiveAfter: 4, MergeAfter: 2}
	tl := mustOpen(t, m, opt)

	var mu sync.Mutex
	var acked []InstantTime // completions that returned, in order
	ackedSoFar := func() []InstantTime {
		mu.Lock()
		defer mu.Unlock()
		return append([]InstantTime(nil), acked...)
	}
	stop := make(chan struct{})
	errs := make(chan error, 16)
	check := func(who string, insts []Instant, want []InstantTime) error {
		have := map[InstantTime]bool{}
		for i, in := range insts {
			if in.State != Completed {
				return fmt.Errorf("%s: saw %s", who, in)
			}
			if i > 0 && in.Time.Compare(insts[i-1].Time) <= 0 {
				return fmt.Errorf("%s: %s after %s", who, in, insts[i-1])
			}
			have[in.Time] = true
		}
		for _, tm := range want {
			if !have[tm] {
				return fmt.Errorf("%s: instant %s completed before the read and is missing (%d instants seen)", who, tm, len(insts))
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	reads := make([]int, 4)
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prev := 0
			for {
				select {
				case <-stop:
					return
				default:
				}
				want := ackedSoFar()
				var insts []Instant
				var err error
				who := fmt.Sprintf("reader %d", r)
				if r < 2 {
					insts, err = tl.Instants(Filter{})
					for _, x := range tl.Pending() {
						// The writer may have moved it on since.
						if s := x.Instant().State; s != Requested && s != Inflight && s != Completed {
							err = fmt.Errorf("pending in state %s", s)
						}
					}
				} else {
					// Another process: a fresh read-only Open.
					who = fmt.Sprintf("read-only Open %d", r)
					var ro *Timeline
					if ro, err = Open(m, partDir, Options{ReadOnly: true}); err == nil {
						insts, err = ro.Instants(Filter{})
					}
				}
				if err == nil {
					err = check(who, insts, want)
				}
				if err == nil && r < 2 && len(insts) < prev {
					err = fmt.Errorf("%s: %d instants, %d before", who, len(insts), prev)
				}
				if err != nil {
					errs <- err
					return
				}
				prev = len(insts)
				reads[r]++
				time.Sleep(time.Millisecond) // let the writer run on a small machine
			}
		}()
	}

	const n = 100
	var werr error
	for i := 0; i < n && werr == nil; i++ {
		var x *Txn
		if x, werr = tl.Begin(ActionRoll, rollPlan(i)); werr != nil {
			break
		}
		if i%3 != 1 {
			if werr = x.Inflight(); werr != nil {
				break
			}
		}
		if i%5 == 4 {
			werr = x.Rollback("test")
			continue
		}
		if werr = x.Complete(nil); werr == nil {
			mu.Lock()
			acked = append(acked, x.Instant().Time)
			mu.Unlock()
		}
		select {
		case err := <-errs:
			werr = err
		default:
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	if werr != nil {
		t.Fatal(werr)
	}
	for err := range errs {
		t.Error(err)
	}
	if len(tl.archives) == 0 {
		t.Fatal("nothing was archived")
	}
	final := mustInstants(t, tl, Filter{})
	if err := check("final", final, ackedSoFar()); err != nil || len(final) != n {
		t.Fatalf("final: %v; %d instants, want %d (completions and rollbacks)", err, len(final), n)
	}
	for r, k := range reads {
		if k == 0 {
			t.Errorf("reader %d read nothing", r)
		}
	}
	t.Logf("%d instants written; reads per reader %v", n, reads)
}
