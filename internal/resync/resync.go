package resync

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime/debug"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/maprange"
	"github.com/segkit/segkit/record"
)

// resyncWindow is how much of a file zeroRun reads at a time.
const resyncWindow = 64 << 10

// Damage is a region of a .log that holds no valid entry: from Start (where
// the last valid entry before it ends) to End (where the next valid entry
// starts, or the end of the file).
type Damage struct {
	Start, End int64
	// Err is the corruption the scanner met at Start, nil for a clean stop
	// (a partial entry or zeros).
	Err error
	// Tail is the scanner's view of a clean stop.
	Tail record.TailKind
	// Resynced reports that a valid entry starts at End: the damage is
	// followed by data, so it is corruption, not a torn tail.
	Resynced bool
	// ZeroRun is the number of zero bytes the region starts with; Zeros
	// reports that they are all of it.
	ZeroRun int64
	Zeros   bool
}

// A Walker walks the valid entries of a segment file, resynchronising after
// damage with FindEntry. It checks headers and checksums only; callers
// validate records if they need to. Its zero value is ready; reuse one for
// many files to reuse its buffers.
type Walker struct {
	rs record.ReaderScanner
	f  record.Finder
	// scratch is zeroRun's read buffer.
	scratch []byte
}

// Walk calls entry for each valid entry of r, in file order, and hurt for
// each damaged region. Either callback can stop the walk by returning an
// error, which walk returns; read errors are returned too. It is WalkFrom
// from position 0.
//
// An OS file is read through read-only mappings (record.ReaderScanner.Map),
// not copied. If it shrinks under them, reading the pages past its new end
// faults, in the scanner (which reads on with ReadAt) or in entry: Walk
// then returns an I/O error naming the file.
func (w *Walker) Walk(r io.ReaderAt, size int64, path string, entry func(e *record.Entry) error, hurt func(d Damage) error) error {
	return w.WalkFrom(r, 0, size, path, entry, hurt)
}

// WalkFrom is Walk from position start, which the caller knows to be the
// start of an entry or of damage (where a walk from the start of the file
// would be there too): the end of a region another reader has walked.
func (w *Walker) WalkFrom(r io.ReaderAt, start, size int64, path string, entry func(e *record.Entry) error, hurt func(d Damage) error) (err error) {
	w.rs.Map, w.rs.ChunkSize = nil, 0
	if w.rs.Map = maprange.ForReader(r, size-start); w.rs.Map != nil {
		w.rs.ChunkSize = WalkMapWindow
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if maprange.Faulted(recover()) {
				err = &fs.PathError{Op: "read", Path: path, Err: maprange.ErrShrank}
			}
		}()
		defer w.rs.Close()
	}
	return w.walk(r, start, size, path, entry, hurt)
}

// WalkMapWindow is how much of a file Walk maps at a time (and verify's
// concurrent read, inspect's readParallel). A mapping's
// pages count in the process's RSS (verify's runs partitions on every
// core, a mapping each): 64 MiB windows made verify's peak RSS 98 MiB on
// one partition and 165 MiB on ten, against 33 and 43 MiB with pread;
// 16 MiB windows, 44 and 73 MiB, as fast.
const WalkMapWindow = 16 << 20

func (w *Walker) walk(r io.ReaderAt, start, size int64, path string, entry func(e *record.Entry) error, hurt func(d Damage) error) error {
	for start < size {
		w.rs.Reset(r, size, path, start)
		for w.rs.Next() {
			if err := entry(w.rs.Entry()); err != nil {
				return err
			}
		}
		err := w.rs.Err()
		var ce *format.CorruptionError
		if err != nil && !errors.As(err, &ce) {
			return err // a read error
		}
		at := w.rs.ValidEnd()
		if err == nil && at >= size {
			return nil
		}
		d := Damage{Start: at, End: size, Err: err}
		if err == nil {
			d.Tail, _, _ = w.rs.Tail()
		}
		next, ok, ferr := w.f.Find(r, size, at+1)
		if ferr != nil {
			return ferr
		}
		if ok {
			d.End, d.Resynced = next, true
		}
		if d.ZeroRun, ferr = w.zeroRun(r, d.Start, d.End); ferr != nil {
			return ferr
		}
		d.Zeros = d.ZeroRun == d.End-d.Start
		if err := hurt(d); err != nil {
			return err
		}
		start = d.End
	}
	return nil
}

// zeroRun returns the length of the run of zero bytes at the start of
// [start, end) of r.
func (w *Walker) zeroRun(r io.ReaderAt, start, end int64) (int64, error) {
	if cap(w.scratch) < resyncWindow {
		w.scratch = make([]byte, resyncWindow)
	}
	for at := start; at < end; {
		buf := w.scratch[:min(int64(resyncWindow), end-at)]
		if _, err := format.ReadFullAt(r, buf, at); err != nil {
			return 0, err
		}
		for i, c := range buf {
			if c != 0 {
				return at + int64(i) - start, nil
			}
		}
		at += int64(len(buf))
	}
	return end - start, nil
}

// Describe formats err for a finding's detail, whose File and Position
// already say where: a CorruptionError without its path.
func Describe(err error) string {
	var ce *format.CorruptionError
	if errors.As(err, &ce) {
		return fmt.Sprintf("byte %d: %v", ce.Offset, ce.Err)
	}
	return err.Error()
}

// CorruptionOffset returns the Offset of err's CorruptionError, or def.
func CorruptionOffset(err error, def int64) int64 {
	var ce *format.CorruptionError
	if errors.As(err, &ce) {
		return ce.Offset
	}
	return def
}
