package compaction

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"time"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/vfs"
)

// writeChunk is how many bytes of cleaned batches are buffered before
// they are written to the .log.cleaned file (Kafka's write buffer is
// log.cleaner.io.buffer.size / 2, 256 KiB); a batch larger than that is
// written as it is.
const writeChunk = 256 << 10

// cleanedWriter writes one cleaned segment — <base>.log.cleaned and its
// .index.cleaned, .timeindex.cleaned and, if an aborted transaction is
// kept, .txnindex.cleaned (UnifiedLog.createNewCleanedSegment) — with
// the index rules of LogSegment.append applied batch by batch: an offset
// index entry (the batch's last offset, its position) when more than
// index.interval.bytes were written since the last one, with a time
// index entry for the largest timestamp so far; then, when the segment is
// done, the final time index entry and the indexes trimmed
// (onBecomeInactiveSegment).
type cleanedWriter struct {
	fsys     vfs.FS
	dir      string
	base     int64
	interval int

	log   vfs.File
	buf   []byte
	flush int64 // bytes of .log written
	size  int64 // bytes of .log including buf
	since int   // bytes since the last index entry

	oi  *index.OffsetIndex
	ti  *timeindex.TimeIndex
	txn *index.TransactionIndex

	maxTs, maxTsOffset int64
}

// cleanedExts are the files of a segment, the .log first: renames go in
// Kafka's order (LogSegment.changeFileSuffixes).
var cleanedExts = [...]string{segment.LogSuffix, segment.IndexSuffix, segment.TimeIndexSuffix, segment.TxnIndexSuffix}

// newCleanedWriter removes any stale .cleaned files at base and creates
// the new segment's files.
func newCleanedWriter(fsys vfs.FS, dir string, base int64, indexInterval, maxIndexSize int, buf []byte) (*cleanedWriter, error) {
	for _, ext := range cleanedExts {
		if err := fsys.Remove(segment.Path(dir, base, ext+segment.CleanedSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if cap(buf) < writeChunk {
		buf = make([]byte, 0, writeChunk)
	}
	w := &cleanedWriter{fsys: fsys, dir: dir, base: base, interval: indexInterval, buf: buf[:0], maxTs: record.NoTimestamp, maxTsOffset: -1}
	var err error
	if w.log, err = fsys.OpenFile(w.path(segment.LogSuffix), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
		return nil, err
	}
	if w.oi, err = index.OpenOffsetIndex(fsys, w.path(segment.IndexSuffix), base, index.OpenOptions{Writable: true, MaxIndexSize: maxIndexSize}); err != nil {
		w.abort()
		return nil, err
	}
	if w.ti, err = timeindex.OpenTimeIndex(fsys, w.path(segment.TimeIndexSuffix), base, index.OpenOptions{Writable: true, MaxIndexSize: maxIndexSize}); err != nil {
		w.abort()
		return nil, err
	}
	if w.txn, err = index.OpenTransactionIndex(fsys, w.path(segment.TxnIndexSuffix), base, index.OpenOptions{Writable: true}); err != nil {
		w.abort()
		return nil, err
	}
	return w, nil
}

func (w *cleanedWriter) path(ext string) string {
	return segment.Path(w.dir, w.base, ext+segment.CleanedSuffix)
}

// add appends one batch whose last offset and max timestamp are given.
func (w *cleanedWriter) add(b []byte, lastOffset, maxTimestamp int64) error {
	if rel := lastOffset - w.base; rel < 0 || rel > math.MaxInt32 {
		return fmt.Errorf("compaction: offset %d does not fit a segment at %d: %w", lastOffset, w.base, segment.ErrOffsetOverflow)
	}
	if w.size+int64(len(b)) > math.MaxInt32 {
		return fmt.Errorf("compaction: %s: %w", w.path(segment.LogSuffix), segment.ErrTooLarge)
	}
	if maxTimestamp > w.maxTs {
		w.maxTs, w.maxTsOffset = maxTimestamp, lastOffset
	}
	if w.since > w.interval {
		if err := w.oi.Append(lastOffset, int32(w.size)); err != nil {
			return err
		}
		if err := w.ti.MaybeAppend(w.maxTs, w.maxTsOffset, false); err != nil {
			return err
		}
		w.since = 0
	}
	if len(w.buf)+len(b) > cap(w.buf) {
		if err := w.write(); err != nil {
			return err
		}
	}
	if len(b) > cap(w.buf) {
		if _, err := w.log.WriteAt(b, w.flush); err != nil {
			return err
		}
		w.flush += int64(len(b))
	} else {
		w.buf = append(w.buf, b...)
	}
	w.size += int64(len(b))
	w.since += len(b)
	return nil
}

func (w *cleanedWriter) write() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.log.WriteAt(w.buf, w.flush); err != nil {
		return err
	}
	w.flush += int64(len(w.buf))
	w.buf = w.buf[:0]
	return nil
}

// addAborted records a kept aborted transaction in the .txnindex.
func (w *cleanedWriter) addAborted(t index.AbortedTxn) error { return w.txn.Append(t) }

// finish writes what is buffered, the final time index entry, trims the
// indexes, makes every file durable, closes them and gives them the
// modification time mtime (the last source segment's), as cleanSegments
// does before the swap.
func (w *cleanedWriter) finish(mtime int64) error {
	if err := w.write(); err != nil {
		return err
	}
	if err := w.ti.MaybeAppend(w.maxTs, w.maxTsOffset, true); err != nil {
		return err
	}
	if err := w.oi.TrimToValidSize(); err != nil {
		return err
	}
	if err := w.ti.TrimToValidSize(); err != nil {
		return err
	}
	if err := w.log.Sync(); err != nil {
		return err
	}
	for _, f := range []func() error{w.oi.Flush, w.ti.Flush, w.txn.Flush} {
		if err := f(); err != nil {
			return err
		}
	}
	if err := w.close(); err != nil {
		return err
	}
	t := time.UnixMilli(mtime)
	for _, ext := range []string{segment.LogSuffix, segment.IndexSuffix, segment.TimeIndexSuffix} {
		if err := w.fsys.Chtimes(w.path(ext), t, t); err != nil {
			return err
		}
	}
	return nil
}

func (w *cleanedWriter) close() error {
	var errs []error
	if w.log != nil {
		errs = append(errs, w.log.Close())
		w.log = nil
	}
	if w.oi != nil {
		errs = append(errs, w.oi.Close())
		w.oi = nil
	}
	if w.ti != nil {
		errs = append(errs, w.ti.Close())
		w.ti = nil
	}
	if w.txn != nil {
		errs = append(errs, w.txn.Close())
		w.txn = nil
	}
	return errors.Join(errs...)
}

// abort closes and removes the .cleaned files (a failed clean leaves
// nothing behind; the loader would remove them anyway).
func (w *cleanedWriter) abort() {
	w.close()
	for _, ext := range cleanedExts {
		w.fsys.Remove(w.path(ext))
	}
}

// renameSegment renames the files of the segment at base from suffix
// from to suffix to, the .log first; missing index files are skipped.
func renameSegment(fsys vfs.FS, dir string, base int64, from, to string) error {
	for _, ext := range cleanedExts {
		err := fsys.Rename(segment.Path(dir, base, ext+from), segment.Path(dir, base, ext+to))
		if err != nil && !(errors.Is(err, fs.ErrNotExist) && ext != segment.LogSuffix) {
			return err
		}
	}
	return nil
}
