package entrychunks

import (
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/maprange"
	"github.com/segkit/segkit/record"
)

// The defaults of Options.
const (
	DefaultChunkSize = 4 << 20
	DefaultMaxEntry  = 64 << 20
	// DefaultMapWindow: one mapping per chunk made unmapping them
	// (munmap, which waits for the workers' page faults and shoots down
	// their TLBs) a third of the parallel dump's CPU time on 1 GiB, and
	// serial; a mapping of the whole file would make the process's
	// resident size the file's.
	DefaultMapWindow = 64 << 20
)

// Options configure Run. The zero value (with Workers set) reads chunks of
// 4 MiB with ReadAt.
type Options struct {
	// Workers is the number of goroutines that process chunks (at least 1).
	Workers int
	// ChunkSize is how much of the file a chunk holds (more for an entry
	// that does not fit in one); 0 means DefaultChunkSize.
	ChunkSize int
	// MaxEntry is the largest entry read into a chunk of its own: Run
	// stops at a larger one. 0 means DefaultMaxEntry.
	MaxEntry int
	// Map, if set, maps ranges of the file (maprange.For): chunks are
	// then slices of mapping windows instead of copies.
	Map maprange.Func
	// MapWindow is how much of the file one mapping holds; 0 means
	// DefaultMapWindow.
	MapWindow int
}

// A Chunk is a run of whole entries of the file: Buf holds the bytes at
// file position Start. Buf is valid until the chunk's apply returns.
type Chunk struct {
	Start int64
	Buf   []byte
}

// chunk is a Chunk in flight with its result, reused.
type chunk[T any] struct {
	Chunk
	res   T
	clean bool
	done  chan struct{}
	// release unmaps Buf's window when this was its last chunk, or nil.
	release func()
}

// recycle releases c's mapping, if any, and offers c to free.
func (c *chunk[T]) recycle(free chan *chunk[T]) {
	c.clean = false
	if c.release != nil {
		c.release()
		c.Buf, c.release = nil, nil
	}
	select {
	case free <- c:
	default:
	}
}

// Run reads the first size bytes of r from position from (the start of
// an entry) in chunks (see the package documentation). process is called on worker goroutine worker (0 to
// Options.Workers-1, so that callers can keep state per worker) with a
// chunk and its result to fill, reused from chunk to chunk, and reports
// whether the chunk is clean; apply is called on the calling goroutine,
// in file order, with each clean chunk and its result, until the first
// chunk that is not clean. An error from apply stops Run, which returns
// it. Run returns the end of the last chunk applied (from, if none): the
// caller reads on from there.
func Run[T any](r io.ReaderAt, from, size int64, opt Options, process func(worker int, c Chunk, res *T) bool, apply func(c Chunk, res *T) error) (int64, error) {
	n := max(1, opt.Workers)
	if opt.ChunkSize <= 0 {
		opt.ChunkSize = DefaultChunkSize
	}
	if opt.MaxEntry <= 0 {
		opt.MaxEntry = DefaultMaxEntry
	}
	if opt.MapWindow <= 0 {
		opt.MapWindow = DefaultMapWindow
	}
	inflight := 2 * n
	order := make(chan *chunk[T], inflight)
	work := make(chan *chunk[T], inflight)
	free := make(chan *chunk[T], inflight+n+1)
	var stop atomic.Bool

	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if opt.Map != nil {
				defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			}
			for c := range work {
				if !stop.Load() {
					c.clean = processChunk(process, i, c)
				}
				close(c.done)
			}
		})
	}

	// The reader; stopAt is where it stopped, read once order is closed.
	stopAt := from
	go func() {
		defer close(order)
		defer close(work)
		if opt.Map != nil {
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		}
		var carry []byte // the start of an entry that did not fit, at stopAt
		var win *window  // the current mapping (Options.Map)
		defer func() {
			if win != nil {
				win.unref()
			}
		}()
		for stopAt < size && !stop.Load() {
			want := max(opt.ChunkSize, record.LogOverhead)
			if len(carry) >= record.LogOverhead {
				need := record.LogOverhead + int(format.Int32(carry[record.LengthOffset:]))
				if need > opt.MaxEntry {
					return
				}
				want = max(want, need)
			}
			want = int(min(int64(want), size-stopAt))
			if want <= len(carry) {
				return // an entry past the end of the file
			}
			var c *chunk[T]
			select {
			case c = <-free:
			default:
				c = &chunk[T]{}
			}
			if !fill(&opt, r, c, &win, stopAt, size, want, carry) {
				return // a read error, or the file shrank: the sequential reading says which
			}
			var cut int
			var regular, ok bool
			if cut, regular, carry, ok = cutChunk(c.Buf, carry); !ok {
				c.recycle(free)
				return // a fault on the mapping
			}
			if cut == 0 {
				c.recycle(free)
			}
			if cut > 0 {
				c.Start, c.Buf = stopAt, c.Buf[:cut]
				c.done = make(chan struct{})
				stopAt += int64(cut)
				order <- c
				work <- c
			}
			if !regular {
				return
			}
		}
	}()

	end := from
	var err error
	for c := range order {
		<-c.done
		if !stop.Load() && !c.clean {
			stop.Store(true)
		}
		if !stop.Load() {
			if err = applyChunk(apply, c, opt.Map != nil); err != nil {
				stop.Store(true)
			} else {
				end = c.Start + int64(len(c.Buf))
			}
		}
		c.recycle(free) // applied, or draining: the caller reads this chunk again
	}
	wg.Wait()
	return end, err
}

// processChunk calls process, and reports a chunk whose reading faulted
// as not clean.
func processChunk[T any](process func(int, Chunk, *T) bool, worker int, c *chunk[T]) (clean bool) {
	defer func() {
		if maprange.Faulted(recover()) {
			clean = false
		}
	}()
	return process(worker, c.Chunk, &c.res)
}

// applyChunk calls apply with debug.SetPanicOnFault when mapped, and
// turns a fault into maprange.ErrShrank. (A chunk that faults in process
// is only not clean; but apply may have applied part of its chunk.)
func applyChunk[T any](apply func(Chunk, *T) error, c *chunk[T], mapped bool) (err error) {
	if mapped {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if maprange.Faulted(recover()) {
				err = maprange.ErrShrank
			}
		}()
	}
	return apply(c.Chunk, &c.res)
}

// window is one mapping of the file, unmapped when the reader has moved
// past it and the last chunk in it is released.
type window struct {
	start   int64
	b       []byte
	release func()
	refs    atomic.Int32
}

func (w *window) unref() {
	if w.refs.Add(-1) == 0 {
		w.release()
	}
}

// fill makes c.Buf the want bytes of the file at at (within size): a
// slice of the current mapping window, *win, mapping a new one if they
// are not in it (Options.Map); or carry (the bytes at at already read,
// at the start of an entry that did not fit) followed by a read of the
// rest. It reports whether the file had them.
func fill[T any](opt *Options, r io.ReaderAt, c *chunk[T], win **window, at, size int64, want int, carry []byte) bool {
	if opt.Map != nil {
		w := *win
		if w == nil || at < w.start || at+int64(want) > w.start+int64(len(w.b)) {
			n := int(min(max(int64(opt.MapWindow), int64(want)), size-at))
			b, release, err := opt.Map(at, n)
			if err != nil || len(b) != n {
				if release != nil {
					release()
				}
				return false
			}
			if w != nil {
				w.unref() // the reader's own reference
			}
			w = &window{start: at, b: b, release: release}
			w.refs.Store(1)
			*win = w
		}
		w.refs.Add(1)
		c.Buf, c.release = w.b[at-w.start:at-w.start+int64(want)], w.unref
		return true
	}
	if cap(c.Buf) < want {
		c.Buf = make([]byte, want)
	}
	c.Buf = c.Buf[:want]
	copy(c.Buf, carry)
	m, _ := r.ReadAt(c.Buf[len(carry):], at+int64(len(carry)))
	return m == want-len(carry)
}

// cutChunk returns entryEnd(b) and the bytes of b after the cut, in
// carry's memory; ok is false if reading b faulted.
func cutChunk(b, carry []byte) (cut int, regular bool, rest []byte, ok bool) {
	defer func() {
		if maprange.Faulted(recover()) {
			cut, regular, rest, ok = 0, false, carry[:0], false
		}
	}()
	cut, regular = entryEnd(b)
	return cut, regular, append(carry[:0], b[cut:]...), true
}

// entryEnd returns the end of the last whole entry at the start of b,
// following the entries' length fields, and whether what follows it can
// be the start of an entry (false at a size out of range, zeros
// included).
func entryEnd(b []byte) (int, bool) {
	i := 0
	for len(b)-i >= record.LogOverhead {
		size := format.Int32(b[i+record.LengthOffset:])
		if size < record.MinLegacyEntrySize {
			return i, false
		}
		end := int64(i) + record.LogOverhead + int64(size)
		if end > int64(len(b)) {
			break
		}
		i = int(end)
	}
	return i, true
}
