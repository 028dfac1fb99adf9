package index

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync/atomic"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/indexfile"
	"github.com/segkit/segkit/vfs"
)

// Layout of one aborted-transaction entry (AbortedTxn.java).
//
// These constants are part of the wire format and should not be changed.
const (
	txnVersionAt          = 0                         // int16, 0
	txnProducerIDAt       = txnVersionAt + 2          // int64
	txnFirstOffsetAt      = txnProducerIDAt + 8       // int64
	txnLastOffsetAt       = txnFirstOffsetAt + 8      // int64
	txnLastStableOffsetAt = txnLastOffsetAt + 8       // int64
	AbortedTxnSize        = txnLastStableOffsetAt + 8 // 34

	// currentTxnVersion is the only entry version Kafka writes and reads.
	currentTxnVersion int16 = 0
)

// AbortedTxn is one .txnindex entry: a transaction of ProducerID that was
// aborted, spanning FirstOffset to LastOffset (the offset of its ABORT
// marker), and the last stable offset when it was aborted.
type AbortedTxn struct {
	Version          int16
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// String formats t as Kafka's AbortedTxn.toString does.
func (t AbortedTxn) String() string {
	return fmt.Sprintf("AbortedTxn(version=%d, producerId=%d, firstOffset=%d, lastOffset=%d, lastStableOffset=%d)",
		t.Version, t.ProducerID, t.FirstOffset, t.LastOffset, t.LastStableOffset)
}

// AppendAbortedTxn appends the 34-byte encoding of t to dst.
func AppendAbortedTxn(dst []byte, t AbortedTxn) []byte {
	dst = format.AppendInt16(dst, t.Version)
	dst = format.AppendInt64(dst, t.ProducerID)
	dst = format.AppendInt64(dst, t.FirstOffset)
	dst = format.AppendInt64(dst, t.LastOffset)
	return format.AppendInt64(dst, t.LastStableOffset)
}

// DecodeAbortedTxn decodes the entry at the start of b. It fails with a
// *format.CorruptionError wrapping format.ErrTruncated when b is shorter
// than AbortedTxnSize, and wrapping ErrUnsupportedVersion (and
// format.ErrInvalid) when the version is above 0, as Kafka refuses it.
// Kafka reads the version as the entry's first byte alone; this reads the
// int16 Kafka writes, so it also refuses the entries whose first byte is 0
// and second byte is not, which Kafka never writes.
func DecodeAbortedTxn(b []byte) (AbortedTxn, error) {
	if len(b) < AbortedTxnSize {
		return AbortedTxn{}, format.Corruptf("", int64(len(b)), format.ErrTruncated, "aborted transaction entry of %d bytes, want %d", len(b), AbortedTxnSize)
	}
	t := AbortedTxn{
		Version:          format.Int16(b[txnVersionAt:]),
		ProducerID:       format.Int64(b[txnProducerIDAt:]),
		FirstOffset:      format.Int64(b[txnFirstOffsetAt:]),
		LastOffset:       format.Int64(b[txnLastOffsetAt:]),
		LastStableOffset: format.Int64(b[txnLastStableOffsetAt:]),
	}
	if t.Version > currentTxnVersion {
		return t, format.Corrupt("", txnVersionAt, fmt.Errorf("%w %d (%w)", ErrUnsupportedVersion, t.Version, format.ErrInvalid))
	}
	return t, nil
}

// TransactionIndex is a segment's .txnindex file: the transactions aborted
// in the segment, in the order of their ABORT markers (Kafka's
// TransactionIndex). Unlike the offset and time indexes it is not
// preallocated: each entry is written at the end of the file, and the file
// is created by the first Append.
//
// The entries are read at open and kept in memory (34 bytes each; a
// segment rarely holds more than a few). Concurrency: one goroutine may
// call the mutating methods (Append, TruncateTo, Reset, Flush, Close,
// Rename, Delete) while others call the reading ones (All, Overlapping,
// Entries, LastOffset, SanityCheck, BaseOffset, Path);
// the mutating methods must not run concurrently with each other.
type TransactionIndex struct {
	fsys     vfs.FS
	base     int64
	writable bool
	f        vfs.File // nil until the file exists and is open, and after Close
	closed   bool
	st       atomic.Pointer[txnState]
}

// txnState is one published state of a TransactionIndex.
type txnState struct {
	path  string
	txns  []AbortedTxn // never modified once published: appends copy on grow, truncation reslices a clone
	tail  int          // bytes after the last whole entry (a torn write)
	exist bool         // the file exists
}

// OpenTransactionIndex opens the transaction index at path for the segment
// whose base offset is baseOffset. A missing file is not an error: the
// index is empty, and (when writable) the first Append creates the file,
// as Kafka creates it only when a transaction is aborted. A file whose
// entries cannot be read (a version above 0) is refused with a
// *format.CorruptionError; a partial entry at the end is kept aside and
// reported by SanityCheck.
func OpenTransactionIndex(fsys vfs.FS, path string, baseOffset int64, o OpenOptions) (*TransactionIndex, error) {
	writable := o.Writable
	x := &TransactionIndex{fsys: fsys, base: baseOffset, writable: writable}
	st := &txnState{path: path}
	var f vfs.File
	var err error
	if writable {
		f, err = fsys.OpenFile(path, os.O_RDWR, 0)
	} else {
		f, err = fsys.Open(path)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		x.st.Store(st)
		return x, nil
	case err != nil:
		return nil, err
	}
	st.exist = true
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := info.Size()
	n := size / AbortedTxnSize
	// Check the size against the file before allocating; entries are
	// decoded from chunks so memory stays at 34 bytes per entry plus one
	// chunk.
	st.txns = make([]AbortedTxn, 0, min(n, 1<<16))
	st.tail = int(size % AbortedTxnSize)
	buf := make([]byte, min(size-int64(st.tail), indexfile.ReadChunk/AbortedTxnSize*AbortedTxnSize))
	for off := int64(0); off < n*AbortedTxnSize; {
		b := buf[:min(int64(len(buf)), n*AbortedTxnSize-off)]
		if k, err := f.ReadAt(b, off); k < len(b) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			f.Close()
			return nil, err
		}
		for i := 0; i < len(b); i += AbortedTxnSize {
			t, err := DecodeAbortedTxn(b[i:])
			if err != nil {
				f.Close()
				return nil, format.WithPath(err, path, off+int64(i))
			}
			st.txns = append(st.txns, t)
		}
		off += int64(len(b))
	}
	x.f = f
	x.st.Store(st)
	return x, nil
}

// BaseOffset returns the base offset of the index's segment.
func (x *TransactionIndex) BaseOffset() int64 { return x.base }

// Path returns the index file's name.
func (x *TransactionIndex) Path() string { return x.st.Load().path }

// exists reports whether the file exists (it is created by the first
// Append).
func (x *TransactionIndex) exists() bool { return x.st.Load().exist }

// Entries returns the number of aborted transactions.
func (x *TransactionIndex) Entries() int { return len(x.st.Load().txns) }

// LastOffset returns the last entry's LastOffset, and false when the index
// is empty.
func (x *TransactionIndex) LastOffset() (int64, bool) {
	txns := x.st.Load().txns
	if len(txns) == 0 {
		return 0, false
	}
	return txns[len(txns)-1].LastOffset, true
}

// All returns a copy of every entry, in file order (Kafka's
// allAbortedTxns).
func (x *TransactionIndex) All() []AbortedTxn { return slices.Clone(x.st.Load().txns) }

// Overlapping returns the aborted transactions that overlap the fetch range
// [fetchOffset, upperBoundOffset): those with LastOffset >= fetchOffset and
// FirstOffset < upperBoundOffset.
func (x *TransactionIndex) Overlapping(fetchOffset, upperBoundOffset int64) []AbortedTxn {
	txns, _ := x.collectAbortedTxns(nil, fetchOffset, upperBoundOffset)
	return txns
}

// Collect is Kafka's TransactionIndex.collectAbortedTxns: it appends to
// dst the transactions overlapping [fetchOffset, upperBoundOffset) and
// reports whether the search is complete, that is whether an entry's
// LastStableOffset reached upperBoundOffset, so that later segments need
// not be searched. A fetch searches its first segment's index, then each
// later one's until the search is complete: an aborted transaction's
// entry is in the segment of its ABORT marker, which may come segments
// after its records.
func (x *TransactionIndex) Collect(dst []AbortedTxn, fetchOffset, upperBoundOffset int64) ([]AbortedTxn, bool) {
	return CollectAborted(dst, x.st.Load().txns, fetchOffset, upperBoundOffset)
}

func (x *TransactionIndex) collectAbortedTxns(dst []AbortedTxn, fetchOffset, upperBoundOffset int64) ([]AbortedTxn, bool) {
	return x.Collect(dst, fetchOffset, upperBoundOffset)
}

// CollectAborted is Collect over txns, a transaction index's entries in
// file order (a remote segment's index, decoded with
// DecodeTransactionIndex).
func CollectAborted(dst, txns []AbortedTxn, fetchOffset, upperBoundOffset int64) ([]AbortedTxn, bool) {
	for _, t := range txns {
		if t.LastOffset >= fetchOffset && t.FirstOffset < upperBoundOffset {
			dst = append(dst, t)
		}
		if t.LastStableOffset >= upperBoundOffset {
			return dst, true
		}
	}
	return dst, false
}

// DecodeTransactionIndex decodes a whole .txnindex file's bytes b (named
// name in errors): its entries in file order. A file that is not a whole
// number of entries, or an entry DecodeAbortedTxn refuses, is a
// *format.CorruptionError naming the file and the entry's position. It
// is for an immutable copy (a remote segment's); a local index, whose
// torn tail the engine repairs, is opened with OpenTransactionIndex.
func DecodeTransactionIndex(b []byte, name string) ([]AbortedTxn, error) {
	if r := len(b) % AbortedTxnSize; r != 0 {
		return nil, format.Corruptf(name, int64(len(b)-r), format.ErrTruncated, "transaction index of %d bytes ends in %d bytes of a partial entry (entries are %d bytes)", len(b), r, AbortedTxnSize)
	}
	out := make([]AbortedTxn, 0, len(b)/AbortedTxnSize)
	for pos := 0; pos < len(b); pos += AbortedTxnSize {
		t, err := DecodeAbortedTxn(b[pos:])
		if err != nil {
			return nil, format.Corrupt(name, int64(pos), err)
		}
		out = append(out, t)
	}
	return out, nil
}

// Append adds t at the end of the index, creating the file if needed. Its
// LastOffset must be larger than the last entry's (ErrOffsetOrder; Kafka's
// IllegalArgumentException) and not below the base offset (which Kafka's
// sanity check would refuse; ErrOffsetOverflow), and its version must be 0
// (ErrUnsupportedVersion). On these errors nothing is written. A partial
// entry left at the end of the file by a torn write is overwritten.
func (x *TransactionIndex) Append(t AbortedTxn) error {
	st := x.st.Load()
	if err := x.check(); err != nil {
		return err
	}
	if t.Version != currentTxnVersion {
		return opError(st.path, ErrUnsupportedVersion, "version %d", t.Version)
	}
	if n := len(st.txns); n > 0 && t.LastOffset <= st.txns[n-1].LastOffset {
		return opError(st.path, ErrOffsetOrder, "last offset %d is not larger than the last entry's %d", t.LastOffset, st.txns[n-1].LastOffset)
	}
	if t.LastOffset < x.base {
		return opError(st.path, ErrOffsetOverflow, "last offset %d is below the base offset %d", t.LastOffset, x.base)
	}
	if x.f == nil {
		f, err := x.fsys.OpenFile(st.path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		x.f = f
	}
	var buf [AbortedTxnSize]byte
	at := int64(len(st.txns)) * AbortedTxnSize
	if _, err := x.f.WriteAt(AppendAbortedTxn(buf[:0], t), at); err != nil {
		return err
	}
	nst := *st
	nst.exist = true
	nst.txns = append(st.txns, t)
	nst.tail = 0 // the entry covered the partial one
	x.st.Store(&nst)
	return nil
}

func (x *TransactionIndex) check() error {
	if !x.writable {
		return opError(x.Path(), ErrReadOnly, "opened read-only")
	}
	if x.closed {
		return opError(x.Path(), ErrClosed, "closed")
	}
	return nil
}

// TruncateTo removes the entries whose LastOffset is at least offset, and
// cuts the file after the ones kept.
func (x *TransactionIndex) TruncateTo(offset int64) error {
	if err := x.check(); err != nil {
		return err
	}
	st := x.st.Load()
	for i, t := range st.txns {
		if t.LastOffset >= offset {
			return x.truncate(i)
		}
	}
	return nil
}

// Reset removes every entry; the file, if it exists, is kept, empty.
func (x *TransactionIndex) Reset() error { return x.truncate(0) }

func (x *TransactionIndex) truncate(n int) error {
	if err := x.check(); err != nil {
		return err
	}
	st := x.st.Load()
	if x.f != nil {
		if err := x.f.Truncate(int64(n) * AbortedTxnSize); err != nil {
			return err
		}
	}
	nst := *st
	nst.txns = slices.Clip(slices.Clone(st.txns[:n]))
	nst.tail = 0
	x.st.Store(&nst)
	return nil
}

// SanityCheck runs Kafka's TransactionIndex.sanityCheck: no entry's
// LastOffset may be below the base offset. It also refuses a partial entry
// at the end of the file, which Kafka ignores (and would append after,
// misaligning every later entry). A failure is a *format.CorruptionError
// matching ErrCorruptIndex and format.ErrInvalid.
func (x *TransactionIndex) SanityCheck() error {
	st := x.st.Load()
	for i, t := range st.txns {
		if t.LastOffset < x.base {
			return indexfile.CorruptIndexf(st.path, int64(i)*AbortedTxnSize, "last offset of %v is below the base offset %d", t, x.base)
		}
	}
	if st.tail != 0 {
		return indexfile.CorruptIndexf(st.path, int64(len(st.txns))*AbortedTxnSize, "a partial entry of %d bytes at the end", st.tail)
	}
	return nil
}

// TrailingBytes returns the number of bytes after the last whole entry: a
// torn write.
func (x *TransactionIndex) TrailingBytes() int { return x.st.Load().tail }

// Flush makes the file durable (Sync), if it exists.
func (x *TransactionIndex) Flush() error {
	if !x.writable || x.f == nil {
		return nil
	}
	if x.closed {
		return opError(x.Path(), ErrClosed, "closed")
	}
	return x.f.Sync()
}

// Close closes the file. The entries stay readable.
func (x *TransactionIndex) Close() error {
	if x.closed {
		return opError(x.Path(), ErrClosed, "closed")
	}
	x.closed = true
	if x.f == nil {
		return nil
	}
	err := x.f.Close()
	x.f = nil
	return err
}

// Rename renames the file, if it exists, and the index follows it.
func (x *TransactionIndex) Rename(newPath string) error {
	st := x.st.Load()
	if st.exist {
		if err := x.fsys.Rename(st.path, newPath); err != nil {
			return err
		}
	}
	nst := *st
	nst.path = newPath
	x.st.Store(&nst)
	return nil
}

// Delete closes and removes the file; a file that does not exist is not
// an error.
func (x *TransactionIndex) Delete() error {
	var cerr error
	if x.f != nil {
		cerr = x.f.Close()
		x.f = nil
	}
	x.closed = true
	st := x.st.Load()
	if err := x.fsys.Remove(st.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	nst := *st
	nst.exist = false
	x.st.Store(&nst)
	return cerr
}
