package timeindex_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/vfs"
)

// TestOneWriterManyReaders exercises the concurrency contract under -race.
// Every entry written is (1000+10k, k): readers check that what they see is
// one, and that a snapshot's timestamps increase.
func TestOneWriterManyReaders(t *testing.T) {
	x := openTime(t, vfs.NewMem(), "x.timeindex", 0, 12*300, true)
	defer x.Close()
	var stop atomic.Bool
	var bad atomic.Value
	var wg sync.WaitGroup
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var all []timeindex.Entry
			for i := 0; !stop.Load(); i++ {
				ts := int64(990 + (i*13+r)%4000)
				e := x.Lookup(ts)
				if e.Timestamp > ts || e.Timestamp != -1 && e.Timestamp != 1000+10*e.Offset {
					bad.Store("bad lookup")
				}
				if l := x.LastEntry(); l.Timestamp != -1 && l.Timestamp != 1000+10*l.Offset {
					bad.Store("bad last entry")
				}
				_ = x.IsFull()
				all = x.AppendAll(all[:0])
				for j := 1; j < len(all); j++ {
					if all[j].Timestamp <= all[j-1].Timestamp {
						bad.Store("snapshot out of order")
					}
				}
			}
		}()
	}
	k := int64(0)
	for round := range 300 {
		for range 15 {
			if x.IsFull() {
				break
			}
			if err := x.MaybeAppend(1000+10*k, k, false); err != nil {
				t.Fatal(err)
			}
			k++
		}
		switch round % 4 {
		case 1:
			if err := x.TruncateTo(max(k-7, 0)); err != nil {
				t.Fatal(err)
			}
			k = x.LastEntry().Offset + 1
			if x.Entries() == 0 {
				k = 0
			}
		case 2:
			if err := x.TrimToValidSize(); err != nil {
				t.Fatal(err)
			}
			if _, err := x.Resize(12 * 300); err != nil {
				t.Fatal(err)
			}
		case 3:
			if x.IsFull() {
				if err := x.Reset(); err != nil {
					t.Fatal(err)
				}
				k = 0
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if v := bad.Load(); v != nil {
		t.Fatal(v)
	}
}
