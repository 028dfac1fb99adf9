package dumplog

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"runtime"

	"github.com/segkit/segkit/internal/describe"
	"github.com/segkit/segkit/internal/entrychunks"
	"github.com/segkit/segkit/record"
)

// A dump's work is checking each entry's CRC (Kafka prints isvalid) and,
// deep, formatting every record: both depend on nothing but the entry's
// bytes. So a long .log is dumped on Options.Parallelism goroutines
// (GOMAXPROCS by default) and printed as the sequential dump prints it,
// byte for byte, with package entrychunks:
//
//   - it cuts the file into chunks of whole entries, mapped or read;
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
// Memory: entrychunks' (2 chunks per worker in flight, each chunkSize
// bytes), and each chunk's output.

// chunkSize is the size of the parallel dump's reads.
const chunkSize = entrychunks.DefaultChunkSize

// noOffset marks a worker's printer that has printed no record yet.
const noOffset = math.MinInt64

// chunkOut is a chunk's output and result, once a worker has dumped it.
type chunkOut struct {
	out bytes.Buffer
	res Result
	// first and last are the offsets of the first and last record lines
	// printed (Deep, text), noOffset if none.
	first, last int64
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
	wps := make([]*printer, n)
	scs := make([]record.Scanner, n)
	for i := range wps {
		wp := &printer{opt: p.opt, path: p.path, walk: describe.Walker{MaxDecompressed: p.opt.MaxDecompressed}}
		// A chunk with a problem, or with any error line (some, such as
		// an invalid control record's, count no problem), is not used.
		wp.errLines = &errLines{}
		wp.opt.Errors = wp.errLines
		wp.w = bufio.NewWriterSize(nil, 64<<10)
		wps[i] = wp
	}
	process := func(i int, c entrychunks.Chunk, o *chunkOut) bool {
		return wps[i].dumpChunk(&scs[i], c, o)
	}
	apply := func(c entrychunks.Chunk, o *chunkOut) error {
		p.w.Write(o.out.Bytes())
		p.res.Batches += o.res.Batches
		p.res.Records += o.res.Records
		if o.first != noOffset {
			if o.first != p.last+1 {
				p.res.NonConsecutive = append(p.res.NonConsecutive, OffsetPair{p.last, o.first})
			}
			p.res.NonConsecutive = append(p.res.NonConsecutive, o.res.NonConsecutive...)
			p.last = o.last
		}
		return nil
	}
	end, _ := entrychunks.Run(r, 0, size, entrychunks.Options{Workers: n, ChunkSize: chunk, Map: p.opt.Map}, process, apply)
	return end
}

// errLines is a parallel worker's Options.Errors: it notes that an error
// line was written, and drops it.
type errLines struct{ wrote bool }

func (e *errLines) Write(b []byte) (int, error) {
	e.wrote = true
	return len(b), nil
}

// dumpChunk dumps c's entries into o with the worker's printer p, and
// reports whether the chunk is clean: every entry whole and valid, no
// problem, no error line.
func (p *printer) dumpChunk(sc *record.Scanner, c entrychunks.Chunk, o *chunkOut) bool {
	o.out.Reset()
	p.w.Reset(&o.out)
	p.res = Result{}
	p.errLines.wrote = false
	p.first, p.last = noOffset, noOffset
	sc.Reset(c.Buf, p.path, c.Start)
	for sc.Next() {
		p.entry(sc.Entry(), true)
	}
	p.w.Flush()
	o.res, o.first, o.last = p.res, p.first, p.last
	return sc.Err() == nil && sc.ValidBytes() == len(c.Buf) && p.res.Problems == 0 && !p.errLines.wrote
}
