package dumplog

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/describe"
	"github.com/segkit/segkit/record"
)

// A dump's work is checking each entry's CRC (Kafka prints isvalid) and,
// deep, formatting every record: both depend on nothing but the entry's
// bytes. So a long .log is dumped on Options.Parallelism goroutines
// (GOMAXPROCS by default) and printed as the sequential dump prints it,
// byte for byte:
//
//   - one goroutine reads the file in chunks of chunkSize bytes and cuts
//     each at the end of its last whole entry, by the entries' length
//     fields alone (the rest goes to the next chunk);
//   - workers dump each chunk (an in-memory record.Scanner, a printer of
//     their own) into the chunk's own output;
//   - the calling goroutine writes the chunks' outputs in file order and
//     adds up their results.
//
// Only a chunk the sequential dump would print without a problem is used:
// every entry in it whole and valid, its scan ending at its end, no
// problem found in it. At the first other one (a bad CRC, corruption,
// a record that does not decode), at anything irregular in the length
// fields (zeros, a size out of range, an entry past the end of the file),
// at a read error or at a partial entry at the end, the parallel part
// stops and the sequential dump takes over from there, where it prints
// what it would have printed from the start. The result is the
// sequential one by construction; FuzzParallel and TestParallelMatches
// hold it to that.
//
// Memory: at most 2 chunks per worker in flight, each chunkSize bytes
// (or one larger entry, up to maxParallelEntry) and its output; mapped,
// the windows those chunks are in (mapWindow bytes each).

// chunkSize is the size of the parallel dump's reads.
const chunkSize = 4 << 20

// maxParallelEntry is the largest entry the parallel dump reads into a
// chunk of its own; the sequential dump takes over at a larger one.
const maxParallelEntry = 64 << 20

// noOffset marks a worker's printer that has printed no record yet.
const noOffset = math.MinInt64

// dumpChunk is a run of whole entries of the file and, once a worker has
// dumped it, its output and result.
type dumpChunk struct {
	start int64 // the file position of buf[0]
	buf   []byte
	out   bytes.Buffer
	res   Result
	// first and last are the offsets of the first and last record lines
	// printed (Deep, text), noOffset if none.
	first, last int64
	clean       bool
	done        chan struct{}
	// release unmaps buf when it is a mapping (Options.Map), else nil.
	release func()
}

// recycle releases c's mapping, if any, and offers c to free.
func (c *dumpChunk) recycle(free chan *dumpChunk) {
	c.clean = false
	if c.release != nil {
		c.release()
		c.buf, c.release = nil, nil
	}
	select {
	case free <- c:
	default:
	}
}

// faulted reports whether recovered, a recovered panic, is a fault on a
// mapping (debug.SetPanicOnFault), and panics again with it otherwise.
func faulted(recovered any) bool {
	if recovered == nil {
		return false
	}
	if e, ok := recovered.(interface{ Addr() uintptr }); ok && e != nil {
		return true
	}
	panic(recovered)
}

// workers returns how many goroutines a dump of size bytes uses. A plain
// dump whose chunks are copied (no Options.Map) is sequential: copying
// the file is most of its work, and the copy into chunks made it slower
// (BenchmarkLogParallel: 16 MiB in memory, 22 ms against 13.5 ms), where
// the deep dump's formatting gains (83 ms against 117 ms).
func (opt *Options) workers(size int64, chunk int) int {
	n := opt.Parallelism
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if size < 2*int64(chunk) || (opt.Map == nil && !opt.Deep) {
		return 1
	}
	return n
}

// parallel dumps the file from its start on n workers, in chunks of
// chunk bytes, as far as it can (see above), and returns the position
// where the sequential dump must take over: the end of the last chunk
// printed.
func (p *printer) parallel(r io.ReaderAt, size int64, n, chunk int) int64 {
	inflight := 2 * n
	order := make(chan *dumpChunk, inflight)
	work := make(chan *dumpChunk, inflight)
	free := make(chan *dumpChunk, inflight+n+1)
	var stop atomic.Bool

	var wg sync.WaitGroup
	for range n {
		wp := &printer{opt: p.opt, path: p.path, walk: describe.Walker{MaxDecompressed: p.opt.MaxDecompressed}}
		// A chunk with a problem, or with any error line (some, such as
		// an invalid control record's, count no problem), is not used.
		wp.errLines = &errLines{}
		wp.opt.Errors = wp.errLines
		wp.w = bufio.NewWriterSize(nil, 64<<10)
		wg.Go(func() {
			if p.opt.Map != nil {
				defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			}
			var sc record.Scanner
			for c := range work {
				if !stop.Load() {
					wp.dumpChunk(&sc, c)
				}
				close(c.done)
			}
		})
	}

	// The reader: stopAt is where it stopped, read once order is closed.
	stopAt := int64(0)
	go func() {
		defer close(order)
		defer close(work)
		if p.opt.Map != nil {
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
			want := chunk
			if len(carry) >= record.LogOverhead {
				need := record.LogOverhead + int(format.Int32(carry[record.LengthOffset:]))
				if need > maxParallelEntry {
					return
				}
				want = max(want, need)
			}
			want = int(min(int64(want), size-stopAt))
			if want <= len(carry) {
				return // an entry past the end of the file
			}
			var c *dumpChunk
			select {
			case c = <-free:
			default:
				c = &dumpChunk{}
			}
			if !p.fill(r, c, &win, stopAt, size, want, carry) {
				return // a read error, or the file shrank: the sequential dump says which
			}
			var cut int
			var regular, ok bool
			if cut, regular, carry, ok = cutChunk(c.buf, carry); !ok {
				c.recycle(free)
				return // a fault on the mapping
			}
			if cut == 0 {
				c.recycle(free)
			}
			if cut > 0 {
				c.start, c.buf = stopAt, c.buf[:cut]
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

	end := int64(0)
	for c := range order {
		<-c.done
		if !stop.Load() && !c.clean {
			stop.Store(true)
		}
		if stop.Load() {
			c.recycle(free) // draining: the sequential dump reads this chunk again
			continue
		}
		p.w.Write(c.out.Bytes())
		p.res.Batches += c.res.Batches
		p.res.Records += c.res.Records
		if c.first != noOffset {
			if c.first != p.last+1 {
				p.res.NonConsecutive = append(p.res.NonConsecutive, OffsetPair{p.last, c.first})
			}
			p.res.NonConsecutive = append(p.res.NonConsecutive, c.res.NonConsecutive...)
			p.last = c.last
		}
		end = c.start + int64(len(c.buf))
		c.recycle(free)
	}
	wg.Wait()
	return end
}

// mapWindow is how much of the file the parallel dump maps at once
// (Options.Map); its chunks are slices of the current window. One
// mapping per chunk made unmapping them (munmap, which waits for the
// workers' page faults and shoots down their TLBs) a third of the dump's
// CPU time on 1 GiB, and serial; a mapping of the whole file would make
// its resident size the file's.
const mapWindow = 64 << 20

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

// fill makes c.buf the want bytes of the file at at (within size): a
// slice of the current mapping window, *win, mapping a new one if they
// are not in it (Options.Map); or carry (the bytes at at already read,
// at the start of an entry that did not fit) followed by a read of the
// rest. It reports whether the file had them.
func (p *printer) fill(r io.ReaderAt, c *dumpChunk, win **window, at, size int64, want int, carry []byte) bool {
	if p.opt.Map != nil {
		w := *win
		if w == nil || at < w.start || at+int64(want) > w.start+int64(len(w.b)) {
			n := int(min(max(int64(mapWindow), int64(want)), size-at))
			b, release, err := p.opt.Map(at, n)
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
		c.buf, c.release = w.b[at-w.start:at-w.start+int64(want)], w.unref
		return true
	}
	if cap(c.buf) < want {
		c.buf = make([]byte, want)
	}
	c.buf = c.buf[:want]
	copy(c.buf, carry)
	m, _ := r.ReadAt(c.buf[len(carry):], at+int64(len(carry)))
	return m == want-len(carry)
}

// cutChunk returns entryEnd(b) and the bytes of b after the cut, in
// carry's memory; ok is false if reading b faulted.
func cutChunk(b, carry []byte) (cut int, regular bool, rest []byte, ok bool) {
	defer func() {
		if faulted(recover()) {
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

// errLines is a parallel worker's Options.Errors: it notes that an error
// line was written, and drops it.
type errLines struct{ wrote bool }

func (e *errLines) Write(b []byte) (int, error) {
	e.wrote = true
	return len(b), nil
}

// dumpChunk dumps c's entries into c.out with the worker's printer p.
func (p *printer) dumpChunk(sc *record.Scanner, c *dumpChunk) {
	c.out.Reset()
	p.w.Reset(&c.out)
	p.res = Result{}
	p.errLines.wrote = false
	p.first, p.last = noOffset, noOffset
	c.clean = false
	defer func() {
		if faulted(recover()) {
			c.clean = false // the sequential dump reads it again
		}
		p.w.Flush()
		c.res, c.first, c.last = p.res, p.first, p.last
	}()
	sc.Reset(c.buf, p.path, c.start)
	for sc.Next() {
		p.entry(sc.Entry(), true)
	}
	c.clean = sc.Err() == nil && sc.ValidBytes() == len(c.buf) && p.res.Problems == 0 && !p.errLines.wrote
}
