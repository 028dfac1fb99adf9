package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/segkit/segkit/internal/viz"
)

// limiter admits the API's decode work: at most cap(slots) requests run,
// at most cap(queue) wait for a slot, each for at most wait.
type limiter struct {
	slots chan struct{}
	queue chan struct{}
	wait  time.Duration
}

// errBusy is what a request refused by the limiter is answered.
var errBusy = errors.New("web: segviz is busy decoding other requests; retry shortly")

// newLimiter applies the defaults of l and returns its limiter.
func newLimiter(l Limits) *limiter {
	n := cmp.Or(l.MaxInFlight, runtime.GOMAXPROCS(0))
	budget := cmp.Or(l.MemoryBudget, DefaultMemoryBudget)
	cost := cmp.Or(l.RequestCost, int64(viz.MaxDecompressed)+DefaultResponseCost)
	n = max(1, min(n, int(min(budget/cost, 1<<20))))
	q := cmp.Or(l.MaxQueued, 4*n)
	return &limiter{slots: make(chan struct{}, n), queue: make(chan struct{}, max(q, 0)), wait: cmp.Or(l.QueueWait, DefaultQueueWait)}
}

// inFlight is the effective in-flight limit.
func (l *limiter) inFlight() int { return cap(l.slots) }

// acquire takes a slot, waiting in the queue if there is room in it, and
// returns the function that gives the slot back; or errBusy.
func (l *limiter) acquire(ctx context.Context) (release func(), err error) {
	release = func() { <-l.slots }
	select {
	case l.slots <- struct{}{}:
		return release, nil
	default:
	}
	select {
	case l.queue <- struct{}{}:
	default:
		return nil, fmt.Errorf("%w (%d running, %d waiting)", errBusy, cap(l.slots), cap(l.queue))
	}
	defer func() { <-l.queue }()
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return release, nil
	case <-t.C:
		return nil, fmt.Errorf("%w (no slot within %v)", errBusy, l.wait)
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %v", errBusy, ctx.Err())
	}
}
