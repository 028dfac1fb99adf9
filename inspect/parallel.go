package inspect

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/segkit/segkit/internal/entrychunks"
	"github.com/segkit/segkit/internal/maprange"
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
// partition's worker has n/partitions decoders. It cuts each .log into
// chunks of whole entries by their length fields alone (package
// entrychunks: slices of mapping windows for an OS file, else copies),
// and the decoders check each entry's header and CRC and decode every
// record of it (read: decompression, record iteration, the producer
// state's batch info), which depends on nothing but the entry's bytes.
// The worker takes the results back in file order and applies them to
// the checks that depend on what came before (offset order and gaps,
// across segments too, the producer state replay, snapshots, leader
// epochs, the log start offset, the indexes), exactly as the sequential
// walk does. At damage (a chunk whose entries do not all pass), the
// worker walks on itself as the sequential read does (resync.Walker)
// until valid entries follow the damage, where the decoders take over
// again (readParallel).
//
// Memory: a worker without decoders holds one batch decoded at a time (the
// Walker's buffer, one batch decompressed within Options.MaxDecompressed);
// one with decoders holds 2 chunks per decoder in flight (each chunkSize,
// or one larger entry of up to entrychunks.DefaultMaxEntry; copies, or
// views of mapping windows of resync.WalkMapWindow bytes), their results
// (an entryResult per entry), and each decoder one batch decompressed.
// Neither depends on the size of a segment or of the log.
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

// listAll lists the partitions dirs (list), on all the workers when
// there are many: a log directory of 1,000 partitions took 6 ms to list,
// a fortieth of verifying it on two cores. The error is that of the
// first partition, in order, that fails, as the sequential run's.
func (v *verifier) listAll(dirs []Listing) ([]*partition, error) {
	parts := make([]*partition, len(dirs))
	errs := make([]error, len(dirs))
	n := min(v.workers(), len(dirs)/listPerWorker)
	if n <= 1 {
		for i, d := range dirs {
			if parts[i], errs[i] = v.list(d); errs[i] != nil {
				return nil, errs[i]
			}
		}
		return parts, nil
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(dirs)); i = next.Add(1) - 1 {
				parts[i], errs[i] = v.list(dirs[i])
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// listPerWorker is how many partitions make a listing worker worth its
// start: a partition lists in about 6 µs.
const listPerWorker = 64

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
	w := &verifier{fsys: v.fsys, opt: v.opt, now: v.now, policy: v.policy, logDirs: v.logDirs, total: v.total, shared: shared, chunk: v.chunk}
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

// chunkSize is how much of a .log the decoders take at a time
// (entrychunks.Options.ChunkSize): with 2 decoders, 4 chunks in flight.
// Verify uses it; tests shrink it (VerifyChunks).
const chunkSize = 1 << 20

// decoder decodes chunks of entries for a worker (readParallel): its own
// scanner and iterators.
type decoder struct {
	v  verifier // only its iterators are used (read)
	sc record.Scanner
}

// errResume stops the sequential walk of readParallel after damage that
// valid entries follow: the decoders take over again there.
var errResume = errors.New("inspect: resume the concurrent read")

// readParallel is readSegment's walk of f (size bytes, path logPath) with
// the entries decoded by v.decoders, in chunks of whole entries cut by
// their length fields (entrychunks), mapped where the walk would map
// them. A chunk is clean when every entry in it passes the scanner's
// header and CRC checks, as the walker's (resync.Walker) would; at the
// first other one, this goroutine walks on from there (headers, CRCs,
// damage) and reads the entries itself, as readSegment does, up to the
// end of the first damaged region followed by valid entries, where the
// decoders take over again. fn sees each result in file order, as
// readSegment's.
func (v *verifier) readParallel(f io.ReaderAt, size int64, logPath string, fn func(r *entryResult) error) error {
	start := v.done
	opt := entrychunks.Options{Workers: len(v.decoders), ChunkSize: v.chunk, Map: maprange.ForReader(f, size), MapWindow: resync.WalkMapWindow}
	process := func(i int, c entrychunks.Chunk, res *[]entryResult) bool {
		return v.decoders[i].decode(c, logPath, res)
	}
	apply := func(c entrychunks.Chunk, res *[]entryResult) error {
		for i := range *res {
			if v.interrupted() {
				return ErrInterrupted
			}
			r := &(*res)[i]
			if err := fn(r); err != nil {
				return err
			}
			v.progress(start+r.sum.Position+r.sum.Size, false)
		}
		return nil
	}
	entry, _ := v.sequential(start, fn)
	resume := int64(-1)
	hurt := func(d resync.Damage) error {
		if err := fn(&entryResult{damage: &d}); err != nil {
			return err
		}
		if d.Resynced {
			resume = d.End
			return errResume
		}
		return nil
	}
	for from := int64(0); from < size; from = resume {
		end, err := entrychunks.Run(f, from, size, opt, process, apply)
		if errors.Is(err, maprange.ErrShrank) {
			return &fs.PathError{Op: "read", Path: logPath, Err: err}
		}
		if err != nil || end >= size {
			return err
		}
		if err := v.w.WalkFrom(f, end, size, logPath, entry, hurt); err != errResume {
			return err
		}
	}
	return nil
}

// decode reads the entries of c into res, as read does, and reports
// whether c is clean: its entries whole, each passing the scanner's
// header and CRC checks.
func (d *decoder) decode(c entrychunks.Chunk, logPath string, res *[]entryResult) bool {
	*res = (*res)[:0]
	d.sc.Reset(c.Buf, logPath, c.Start)
	for d.sc.Next() {
		*res = append(*res, entryResult{})
		d.v.read(d.sc.Entry(), &(*res)[len(*res)-1])
	}
	return d.sc.Err() == nil && d.sc.ValidBytes() == len(c.Buf)
}
