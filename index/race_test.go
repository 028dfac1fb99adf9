package index_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/vfs"
)

// TestOneWriterManyReaders exercises the concurrency contract under -race:
// one goroutine appends, truncates, resizes and resets while readers look
// up. Every entry written is (10k, 100k), so a reader can check that what
// it sees is a real entry, at most its target, and that a snapshot's
// entries increase.
func TestOneWriterManyReaders(t *testing.T) {
	x := openOffset(t, vfs.NewMem(), "x.index", 0, 4096, true)
	defer x.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var all []index.Entry
			for i := 0; !stop.Load(); i++ {
				target := int64((i*7 + r) % 6000)
				e := x.Lookup(target)
				if e.Offset > target || e.Position != int32(10*e.Offset) {
					errs <- "bad lookup"
					return
				}
				if l := x.LastEntry(); l.Position != int32(10*l.Offset) {
					errs <- "bad last entry"
					return
				}
				_ = x.IsFull()
				_ = x.Padding()
				all = x.AppendAll(all[:0])
				for j := 1; j < len(all); j++ {
					if all[j].Offset <= all[j-1].Offset {
						errs <- "snapshot out of order"
						return
					}
				}
			}
		}()
	}
	next := int64(10)
	for round := range 300 {
		for range 20 {
			if x.IsFull() {
				break
			}
			if err := x.Append(next, int32(10*next)); err != nil {
				t.Fatal(err)
			}
			next += 10
		}
		switch round % 5 {
		case 1:
			cut := index.LastOffset(x) - 50
			if err := x.TruncateTo(cut); err != nil {
				t.Fatal(err)
			}
			next = max(index.LastOffset(x)+10, 10)
		case 2:
			if err := x.TrimToValidSize(); err != nil {
				t.Fatal(err)
			}
			if _, err := x.Resize(4096); err != nil {
				t.Fatal(err)
			}
		case 4:
			if x.IsFull() {
				if err := x.Reset(); err != nil {
					t.Fatal(err)
				}
				next = 10
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func TestTxnIndexConcurrentReaders(t *testing.T) {
	x := openTxn(t, vfs.NewMem(), "x.txnindex", 0, true)
	defer x.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []index.AbortedTxn
			for !stop.Load() {
				buf, _ = index.CollectAbortedTxns(x, buf[:0], 0, 1<<40)
				for j := 1; j < len(buf); j++ {
					if buf[j].LastOffset <= buf[j-1].LastOffset {
						panic("out of order")
					}
				}
				_ = x.All()
				_, _ = x.LastOffset()
			}
		}()
	}
	last := int64(0)
	for i := range 500 {
		last += 3
		if err := x.Append(index.AbortedTxn{ProducerID: int64(i), FirstOffset: last - 2, LastOffset: last}); err != nil {
			t.Fatal(err)
		}
		if i%50 == 49 {
			if err := x.TruncateTo(last - 30); err != nil {
				t.Fatal(err)
			}
			l, _ := x.LastOffset()
			last = l
		}
	}
	stop.Store(true)
	wg.Wait()
}
