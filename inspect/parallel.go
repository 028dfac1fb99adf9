package inspect

import (
	"fmt"
	"io"
	"path"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/segkit/segkit/internal/resync"
	"github.com/segkit/segkit/record"
)

// This file runs Verify's reads concurrently (Options.Parallelism
// goroutines, GOMAXPROCS by default), and keeps its Report the one of the
// sequential run, finding for finding.
//
// Partitions: a pool of workers, each a verifier of its own (its own
// resync.Walker and record iterators, reused from one partition to the
// next), takes the partitions in order. A partition's findings depend only
// on its own files and its log directory's checkpoints (read first, in
// order), so each worker fills the partition's problems and report as the
// sequential run does, and Verify merges them in partition order.
//
// Entries: when there are fewer partitions than goroutines, each
// partition's worker has n/partitions decoders. The worker walks each
// .log as before (resync.Walker: headers, CRCs, damage), copies the valid
// entries into groups (up to groupBytes or groupEntries) and hands them to
// the decoders, which decode every record of them (read: decompression,
// record iteration, the producer state's batch info), which depends on
// nothing but the entry's bytes. The worker takes the results back in
// file order and applies them to the checks that depend on what came
// before (offset order and gaps, across segments too, the producer state
// replay, snapshots, leader epochs, the log start offset, the indexes),
// exactly as the sequential walk does.
//
// Memory: a worker without decoders holds one batch decoded at a time (the
// Walker's buffer, one batch decompressed within Options.MaxDecompressed);
// one with decoders holds at most groupsPerDecoder groups per decoder in
// flight (each groupBytes, or one larger entry), and each decoder one
// batch decompressed. Neither depends on the size of a segment or of the
// log.
// The sequential walk (Parallelism 1, or GOMAXPROCS 1 as under
// js/wasm) starts no goroutine and copies nothing.

// workers returns how many goroutines Verify reads with.
func (v *verifier) workers() int {
	n := v.opt.Parallelism
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return max(1, n)
}

// partitions verifies parts, filling each one's problems and report, and
// returns the error the sequential run would: that of the first partition,
// in order, that fails.
func (v *verifier) partitions(parts []*partition) error {
	n := v.workers()
	seq := func(w *verifier) error {
		for _, p := range parts {
			if err := w.partition(p); err != nil {
				return err
			}
		}
		return nil
	}
	if n == 1 {
		return seq(v)
	}
	// pw partition workers; when there are fewer partitions than n, each
	// has n/pw decoders.
	pw := min(n, len(parts))
	shared := &sharedProgress{fn: v.opt.Progress, total: v.total}
	newWorker := func() *verifier {
		w := v.worker(shared)
		if per := n / pw; per >= 2 {
			for range per {
				d := &decoder{}
				d.v.it.MaxDecompressed = v.opt.MaxDecompressed
				d.v.lit.MaxDecompressed = v.opt.MaxDecompressed
				d.v.ctlIt.MaxDecompressed = v.opt.MaxDecompressed
				w.decoders = append(w.decoders, d)
			}
		}
		return w
	}
	if pw <= 1 {
		return seq(newWorker())
	}

	// The log directories' checkpoints are read first, in partition order,
	// so that their problems go to the partition the sequential run gives
	// them to (the first of the directory), and the workers only read
	// v.logDirs. A directory that cannot be read stops the run there.
	var dirErr error
	for i, p := range parts {
		if _, err := v.logDir(path.Dir(p.dir), p); err != nil {
			parts, dirErr = parts[:i], err
			break
		}
	}

	errs := make([]error, len(parts))
	var next atomic.Int64
	// failed is the smallest index of a failed partition: later ones need
	// not be verified, as their results are not used.
	var failed atomic.Int64
	failed.Store(int64(len(parts)))
	var wg sync.WaitGroup
	for range pw {
		w := newWorker()
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(parts)) || i > failed.Load() {
					return
				}
				if err := w.partition(parts[i]); err != nil {
					errs[i] = err
					for {
						f := failed.Load()
						if i >= f || failed.CompareAndSwap(f, i) {
							break
						}
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return dirErr
}

// worker returns a verifier for one of partitions' goroutines: v's
// settings and log directories, its own decoders, and progress counted
// into shared.
func (v *verifier) worker(shared *sharedProgress) *verifier {
	w := &verifier{fsys: v.fsys, opt: v.opt, now: v.now, policy: v.policy, logDirs: v.logDirs, total: v.total, shared: shared, groups: v.groups}
	w.it.MaxDecompressed = v.opt.MaxDecompressed
	w.lit.MaxDecompressed = v.opt.MaxDecompressed
	w.ctlIt.MaxDecompressed = v.opt.MaxDecompressed
	return w
}

// sharedProgress sums the workers' progress and calls Options.Progress,
// one call at a time, at most once per MiB and when a worker ends a
// segment.
type sharedProgress struct {
	mu                    sync.Mutex
	fn                    func(done, total int64)
	done, total, reported int64
}

func (s *sharedProgress) add(delta int64, force bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done += delta
	if force || s.done-s.reported >= 1<<20 {
		s.reported = s.done
		s.fn(s.done, s.total)
	}
}

// groupLimits bound a worker's entries in flight when its decoders
// decode them: groups of up to bytes bytes (or one larger entry) or
// entries entries, and perDecoder groups per decoder. Verify uses
// defaultGroups; tests shrink them (VerifyGroups).
type groupLimits struct{ bytes, entries, perDecoder int }

// The default groupLimits.
const (
	groupBytes       = 256 << 10
	groupEntries     = 1024
	groupsPerDecoder = 3
)

func defaultGroups() groupLimits { return groupLimits{groupBytes, groupEntries, groupsPerDecoder} }

// decoder decodes entries for a worker (readParallel): its own scanner
// and iterators.
type decoder struct {
	v  verifier // only its iterators are used (read)
	sc record.Scanner
}

// group is a run of a segment's entries, copied, decoded by one decoder;
// or a damaged region.
type group struct {
	buf    []byte
	ends   []int                // the end of each entry in buf
	pos    []int64              // its position in the file
	hdrs   []record.BatchHeader // a v2 batch's header (Magic 2), zero for a legacy entry
	res    []entryResult
	damage *resync.Damage
	ready  chan struct{} // receives once res is filled
}

// readParallel is readSegment's walk of f (size bytes, path logPath) with
// the entries decoded by v.decoders: this goroutine walks the file
// (headers and CRCs, resync.Walker), copies the entries into groups and
// hands them out, and calls fn with each result, in file order, as
// readSegment does. At most groupsPerDecoder groups per decoder are in
// flight.
func (v *verifier) readParallel(f io.ReaderAt, size int64, logPath string, fn func(r *entryResult) error) error {
	start := v.done
	work := make(chan *group, len(v.decoders))
	var wg sync.WaitGroup
	for _, d := range v.decoders {
		wg.Go(func() {
			for g := range work {
				d.decode(g, logPath)
				g.ready <- struct{}{}
			}
		})
	}
	defer wg.Wait()
	defer close(work)

	ring := make([]*group, v.groups.perDecoder*len(v.decoders))
	for i := range ring {
		ring[i] = &group{ready: make(chan struct{}, 1)}
	}
	head, n := 0, 0 // the oldest group in flight, and how many
	var cur *group  // the group being filled
	// flush waits for the oldest group and hands its results to fn.
	flush := func() error {
		g := ring[head]
		head, n = (head+1)%len(ring), n-1
		<-g.ready
		if g.damage != nil {
			return fn(&entryResult{damage: g.damage})
		}
		for i := range g.res {
			if err := fn(&g.res[i]); err != nil {
				return err
			}
			v.progress(start+g.pos[i]+int64(g.ends[i]-g.endBefore(i)), false)
		}
		return nil
	}
	// take returns the next free group, flushing the oldest if none is.
	take := func() (*group, error) {
		if n == len(ring) {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		g := ring[(head+n)%len(ring)]
		n++
		g.buf, g.ends, g.pos, g.hdrs, g.damage = g.buf[:0], g.ends[:0], g.pos[:0], g.hdrs[:0], nil
		return g, nil
	}
	send := func() {
		if cur != nil {
			work <- cur
			cur = nil
		}
	}
	entry := func(e *record.Entry) error {
		if v.interrupted() {
			return ErrInterrupted
		}
		raw := e.Raw()
		if cur != nil && (len(cur.buf)+len(raw) > v.groups.bytes || len(cur.ends) == v.groups.entries) {
			send()
		}
		if cur == nil {
			g, err := take()
			if err != nil {
				return err
			}
			cur = g
		}
		cur.buf = append(cur.buf, raw...)
		cur.ends = append(cur.ends, len(cur.buf))
		cur.pos = append(cur.pos, e.Position)
		var h record.BatchHeader
		if e.Magic == record.MagicV2 {
			h = e.Batch.BatchHeader
		}
		cur.hdrs = append(cur.hdrs, h)
		return nil
	}
	hurt := func(d resync.Damage) error {
		send()
		g, err := take()
		if err != nil {
			return err
		}
		g.damage = &d
		g.ready <- struct{}{}
		return nil
	}
	err := v.w.Walk(f, size, logPath, entry, hurt)
	if err == nil {
		send()
		for n > 0 && err == nil {
			err = flush()
		}
	}
	if err != nil {
		// Wait for the groups in flight, so that none is decoding when
		// the ring is dropped.
		send()
		for n > 0 {
			g := ring[head]
			head, n = (head+1)%len(ring), n-1
			<-g.ready
		}
	}
	return err
}

// endBefore returns the end of entry i-1 of g, 0 for the first.
func (g *group) endBefore(i int) int {
	if i == 0 {
		return 0
	}
	return g.ends[i-1]
}

// decode decodes the entries of g into g.res, as read does. A v2 batch
// is its header (decoded and checked by the walker) and its copied bytes;
// a legacy entry, whose key and value alias its bytes, is read again from
// the copy.
func (d *decoder) decode(g *group, logPath string) {
	g.res = slices.Grow(g.res[:0], len(g.ends))[:len(g.ends)]
	from := 0
	for i, end := range g.ends {
		raw := g.buf[from:end:end]
		from = end
		if g.hdrs[i].Magic == record.MagicV2 {
			e := record.Entry{Position: g.pos[i], Magic: record.MagicV2, Batch: record.Batch{BatchHeader: g.hdrs[i], Raw: raw}}
			d.v.read(&e, &g.res[i])
			continue
		}
		d.sc.Reset(raw, logPath, g.pos[i])
		if !d.sc.Next() {
			// The walker checked these very bytes; this cannot happen.
			g.res[i] = entryResult{recErr: fmt.Errorf("entry does not re-read: %v", d.sc.Err())}
			continue
		}
		d.v.read(d.sc.Entry(), &g.res[i])
	}
}
