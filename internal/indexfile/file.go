package indexfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync/atomic"

	"github.com/segkit/segkit/vfs"
)

// File is the storage under both kinds of index: a file of fixed-size
// entries, preallocated like Kafka's AbstractIndex, whose entries are kept
// in memory. index.OffsetIndex uses it with 8-byte entries and
// timeindex.TimeIndex with 12-byte ones, adding the meaning of the entries
// and Kafka's append rules. See the package documentation for the storage
// and the concurrency contract.
type File struct {
	fsys         vfs.FS
	f            vfs.File // nil after Close or Delete
	entrySize    int
	maxIndexSize int
	writable     bool
	path         atomic.Pointer[string]
	v            atomic.Pointer[View]
	// persisted is the length of the prefix of the entries already
	// written to the file. Appends are written behind, in one write, when
	// the index is flushed, trimmed, resized, truncated or closed: an
	// index costs no system call per entry, as Kafka's mapped file does
	// not (and, as with Kafka's mapping, entries are durable only after a
	// flush; recovery rebuilds what a crash loses).
	persisted int
}

// View is a snapshot of a File's entries: one published state. It stays
// valid, and unchanged, however the File changes later; File.View returns
// it without allocating or copying, and it must not be modified.
//
// Bytes of data that a published View covers are never written again: an
// append writes past them, and anything that removes entries copies the
// survivors to a new array first. That is what lets readers go without
// locks.
type View struct {
	// data holds the bytes of entries [0, len(data)/entrySize). Entries in
	// [len(data)/entrySize, entries) are known to be zero on disk and are
	// not kept (the zero tail of an untrimmed index).
	data       []byte
	entries    int
	maxEntries int
	length     int64 // file length
	// The rest packs into one word, so that the View each append publishes
	// fits a 64-byte allocation.
	entrySize int32
	// tail is the number of bytes after the last whole entry slot
	// (length % entrySize, below 16); tailZero says whether they are all
	// zero.
	tail     int16
	tailZero bool
}

// Entries returns the number of entries Kafka would trust:
// floor(length/entrySize) at open, then as appended and truncated.
func (v *View) Entries() int { return v.entries }

// MaxEntries returns how many entries the file has room for:
// floor(Length/entrySize).
func (v *View) MaxEntries() int { return v.maxEntries }

// Length returns the file's length in bytes.
func (v *View) Length() int64 { return v.length }

var zeroEntry [16]byte

// Entry returns the bytes of entry i, which must be in [0, Entries). They
// alias the snapshot; do not modify them.
func (v *View) Entry(i int) []byte {
	if uint(i) >= uint(v.entries) {
		panic("index: entry index out of range")
	}
	es := int(v.entrySize)
	if off := i * es; off < len(v.data) {
		return v.data[off : off+es : off+es]
	}
	return zeroEntry[:es:es]
}

// Data returns the bytes of the entries held in memory: a prefix of
// [0, Entries*entrySize) that ends at the last non-zero entry read or
// written (the rest is zero). It aliases the snapshot.
func (v *View) Data() []byte { return v.data }

// Padding describes the zero entries at the end of those Kafka trusts,
// which an untrimmed index file leaves. It has the fields of index.Padding,
// which documents them and to which both indexes convert it; a change here
// that is not made there fails to compile.
type Padding struct {
	Entries      int   // entries Kafka trusts (View.Entries)
	ValidEntries int   // entries before the trailing run of all-zero entries
	ZeroBytes    int64 // that run's length, plus a zero partial trailing entry
	Untrimmed    bool  // ValidEntries < Entries
}

// Open opens (or, if writable, creates) the index file at path of fsys
// with entries of entrySize bytes (at most 16).
//
// Existing files are read whole, as Kafka maps them: floor(length/entrySize)
// entries are trusted (Padding reports zero ones), and keep their length: a
// rolled segment's trimmed index stays trimmed (the engine resizes the
// active segment's indexes to segment.index.bytes when it loads the log,
// as Kafka does). A file this call creates is preallocated to
// roundDown(maxIndexSize, entrySize) with zeros. maxIndexSize must hold
// at least one entry when writable (ErrInvalidSize), and is ignored
// otherwise. A read-only open never modifies the file, and a missing file
// is an error matching fs.ErrNotExist.
func Open(fsys vfs.FS, path string, entrySize, maxIndexSize int, writable bool) (*File, error) {
	if entrySize <= 0 || entrySize > len(zeroEntry) {
		return nil, opError(path, ErrInvalidSize, "entry size %d", entrySize)
	}
	if writable && maxIndexSize < entrySize {
		return nil, opError(path, ErrInvalidSize, "max index size %d is smaller than one %d-byte entry", maxIndexSize, entrySize)
	}
	var f vfs.File
	var err error
	created := false
	if writable {
		f, err = fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			created = true
		} else if errors.Is(err, fs.ErrExist) {
			f, err = fsys.OpenFile(path, os.O_RDWR, 0o644)
		}
	} else {
		f, err = fsys.Open(path)
	}
	if err != nil {
		return nil, err
	}
	x := &File{fsys: fsys, f: f, entrySize: entrySize, maxIndexSize: maxIndexSize, writable: writable}
	x.path.Store(&path)
	if err := x.load(created); err != nil {
		f.Close()
		return nil, err
	}
	return x, nil
}

// load reads the file and publishes the first view; if writable, it
// preallocates.
func (x *File) load(created bool) error {
	st, err := x.f.Stat()
	if err != nil {
		return err
	}
	length := st.Size()
	data, nonZeroTail, err := readNonZeroPrefix(x.f, length, x.entrySize)
	if err != nil {
		return err
	}
	es := int64(x.entrySize)
	v := &View{data: data, entrySize: int32(x.entrySize), entries: int(length / es), length: length, tail: int16(length % es), tailZero: !nonZeroTail}
	if want := roundDown(int64(x.maxIndexSize), es); created && want > length {
		if err := x.f.Truncate(want); err != nil {
			return err
		}
		v.length, v.tail, v.tailZero = want, 0, true
	}
	v.maxEntries = int(v.length / es)
	x.v.Store(v)
	x.persisted = len(data)
	return nil
}

// ReadChunk is how much of an index file is read at a time: the offset and
// time indexes' here, and the transaction index's (package index).
const ReadChunk = 64 << 10

// readNonZeroPrefix reads the file and returns its whole entry slots up to
// the last one holding a non-zero byte, and whether the bytes after the
// last whole slot hold a non-zero byte. Zero runs are counted, not read
// into memory, unless data follows them.
func readNonZeroPrefix(r io.ReaderAt, length int64, entrySize int) (data []byte, nonZeroTail bool, err error) {
	whole := length - length%int64(entrySize)
	buf := make([]byte, min(length, ReadChunk))
	var pending int64 // zero bytes read since the last byte kept
	for off := int64(0); off < length; {
		b := buf[:min(int64(len(buf)), length-off)]
		n, err := r.ReadAt(b, off)
		if n < len(b) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, false, err
		}
		// Bytes in the partial trailing slot are not kept as data.
		keep := b[:max(0, min(int64(len(b)), whole-off))]
		if last := lastNonZero(keep); last >= 0 {
			// Grow by doubling (append's 1.25x for large slices would copy
			// an 8 MiB index five times over), never beyond the file.
			if need := int(pending) + last + 1; cap(data)-len(data) < need {
				grown := make([]byte, len(data), min(int(whole), max(2*cap(data), len(data)+need)))
				copy(grown, data)
				data = grown
			}
			data = append(data, make([]byte, pending)...)
			data = append(data, keep[:last+1]...)
			pending = int64(len(keep) - last - 1)
		} else {
			pending += int64(len(keep))
		}
		if len(keep) < len(b) && lastNonZero(b[len(keep):]) >= 0 {
			nonZeroTail = true
		}
		off += int64(len(b))
	}
	// Round up to the end of the last non-zero entry.
	if r := len(data) % entrySize; r != 0 {
		data = append(data, make([]byte, entrySize-r)...)
	}
	return data, nonZeroTail, nil
}

// lastNonZero returns the index of the last non-zero byte of b, or -1.
func lastNonZero(b []byte) int {
	i := len(b)
	for i >= 8 {
		w := b[i-8 : i]
		if w[0]|w[1]|w[2]|w[3]|w[4]|w[5]|w[6]|w[7] != 0 {
			break
		}
		i -= 8
	}
	for i--; i >= 0; i-- {
		if b[i] != 0 {
			return i
		}
	}
	return -1
}

func roundDown(n, factor int64) int64 { return factor * (n / factor) }

// View returns the current snapshot of the entries. It does not allocate.
func (x *File) View() *View { return x.v.Load() }

// Entries returns the number of entries.
func (x *File) Entries() int { return x.v.Load().entries }

// MaxEntries returns how many entries the file has room for.
func (x *File) MaxEntries() int { return x.v.Load().maxEntries }

// Length returns the file's length in bytes.
func (x *File) Length() int64 { return x.v.Load().length }

// Writable reports whether the file was opened for writing.
func (x *File) Writable() bool { return x.writable }

// Path returns the file's current name.
func (x *File) Path() string { return *x.path.Load() }

// Padding reports the zero entries at the end of the trusted ones.
func (x *File) Padding() Padding {
	v := x.v.Load()
	valid := min(v.entries, len(v.data)/x.entrySize)
	for valid > 0 && lastNonZero(v.data[(valid-1)*x.entrySize:valid*x.entrySize]) < 0 {
		valid--
	}
	p := Padding{Entries: v.entries, ValidEntries: valid, ZeroBytes: int64(v.entries-valid) * int64(x.entrySize)}
	if v.tail > 0 && v.tailZero {
		p.ZeroBytes += int64(v.tail)
	}
	p.Untrimmed = valid < v.entries
	return p
}

// Closed reports whether Close or Delete was called.
func (x *File) Closed() bool { return x.f == nil }

// Check returns the error for a mutating call on a read-only file
// (ErrReadOnly) or a closed one (ErrClosed), or nil. The mutating methods
// call it first; an index calls it before its own checks, so that those
// errors come first.
func (x *File) Check() error {
	if !x.writable {
		return opError(x.Path(), ErrReadOnly, "opened read-only")
	}
	if x.f == nil {
		return opError(x.Path(), ErrClosed, "closed")
	}
	return nil
}

// Append puts e, which must be EntrySize bytes, in the next slot and
// publishes it; the file receives it at the next Flush, TrimToValidSize,
// Resize, TruncateEntries or Close (see writePending). It fails with
// ErrIndexFull when the file has no room left (it never writes past its
// length).
func (x *File) Append(e []byte) error {
	if len(e) != x.entrySize {
		panic("index: Append of a wrongly sized entry")
	}
	if err := x.Check(); err != nil {
		return err
	}
	v := x.v.Load()
	if v.entries >= v.maxEntries {
		return opError(x.Path(), ErrIndexFull, "%d entries", v.entries)
	}
	off := v.entries * x.entrySize
	data := v.data
	if len(data) < off {
		// The new entry follows zero entries that were not kept.
		data = append(data, make([]byte, off-len(data))...)
	}
	nv := *v
	nv.data = append(data, e...)
	nv.entries++
	x.v.Store(&nv)
	return nil
}

// writePending writes the entries appended since the last write, in one
// write. A failed write leaves them pending (they are still served from
// memory), and may have left part of them in the free slots, as a torn
// write to Kafka's mapping would.
func (x *File) writePending() error {
	v := x.v.Load()
	end := min(v.entries*x.entrySize, len(v.data))
	if x.persisted >= end {
		return nil
	}
	if _, err := x.f.WriteAt(v.data[x.persisted:end], int64(x.persisted)); err != nil {
		return err
	}
	x.persisted = end
	return nil
}

// TruncateEntries keeps the first n entries (n <= Entries) and zeroes the
// slots of the removed ones in the file, so that a reopened untrimmed file
// shows them as padding rather than as stale entries (Kafka leaves them).
// The file keeps its length. An I/O error while zeroing is returned, but
// the truncation has taken effect.
func (x *File) TruncateEntries(n int) error {
	if err := x.Check(); err != nil {
		return err
	}
	v := x.v.Load()
	if n < 0 || n > v.entries {
		panic("index: TruncateEntries out of range")
	}
	if n == v.entries {
		return nil
	}
	keep := n * x.entrySize
	nv := *v
	nv.entries = n
	if keep >= len(v.data) {
		x.v.Store(&nv) // only zero entries go: nothing to rewrite
		return nil
	}
	// Readers may still hold v.data; later appends must not write into it,
	// so the survivors move to a new array.
	nv.data = slices.Clip(slices.Clone(v.data[:keep]))
	// The truncation takes effect before the slots are zeroed: if zeroing
	// fails, the removed entries linger in the file beyond the valid ones
	// (as they always do in Kafka's files), never inside them.
	x.v.Store(&nv)
	// Only what reached the file needs zeroing.
	zeroTo := x.persisted
	x.persisted = min(x.persisted, keep)
	if zeroTo <= keep {
		return nil
	}
	return x.zero(int64(keep), int64(zeroTo))
}

// zero writes zeros over [from, to) of the file.
func (x *File) zero(from, to int64) error {
	var z [4096]byte
	for from < to {
		n := min(to-from, int64(len(z)))
		if _, err := x.f.WriteAt(z[:n], from); err != nil {
			return err
		}
		from += n
	}
	return nil
}

// DiscardPadding drops the trailing zero entries that Padding reports, so
// that the index holds what it would hold had it been trimmed before the
// broker stopped: Entries becomes Padding().ValidEntries and the zero slots
// become free space. The file is not changed (its bytes there are zero).
// It reports whether there was padding to drop.
func (x *File) DiscardPadding() (bool, error) {
	// The file is not touched: a read-only index may drop its padding too.
	if x.f == nil {
		return false, opError(x.Path(), ErrClosed, "closed")
	}
	p := x.Padding()
	if !p.Untrimmed {
		return false, nil
	}
	v := x.v.Load()
	nv := *v
	nv.entries = p.ValidEntries
	if keep := p.ValidEntries * x.entrySize; keep < len(v.data) {
		nv.data = slices.Clip(slices.Clone(v.data[:keep]))
		x.persisted = min(x.persisted, keep)
	}
	x.v.Store(&nv)
	return true, nil
}

// Resize sets the file's length to roundDown(newSize, entrySize), as
// Kafka's AbstractIndex.resize does, and reports whether it changed. A size
// below Entries*entrySize fails with ErrInvalidSize (Kafka fails too, with
// an IllegalArgumentException from the mapping).
func (x *File) Resize(newSize int) (bool, error) {
	if err := x.Check(); err != nil {
		return false, err
	}
	es := int64(x.entrySize)
	rounded := roundDown(int64(newSize), es)
	v := x.v.Load()
	if rounded == v.length {
		return false, nil
	}
	if rounded < int64(v.entries)*es || newSize < 0 {
		return false, opError(x.Path(), ErrInvalidSize, "resize to %d bytes would cut %d entries", newSize, v.entries)
	}
	if err := x.writePending(); err != nil {
		return false, err
	}
	if err := x.f.Truncate(rounded); err != nil {
		return false, err
	}
	nv := *v
	nv.length, nv.maxEntries, nv.tail, nv.tailZero = rounded, int(rounded/es), 0, true
	x.v.Store(&nv)
	return true, nil
}

// TrimToValidSize resizes the file to its entries (Kafka's
// trimToValidSize, done when a segment is rolled or closed).
func (x *File) TrimToValidSize() error {
	_, err := x.Resize(x.Entries() * x.entrySize)
	return err
}

// Reset removes every entry and resizes the file back to its maximum size
// (Kafka's AbstractIndex.reset, the first step of segment recovery).
func (x *File) Reset() error {
	if err := x.TruncateEntries(0); err != nil {
		return err
	}
	_, err := x.Resize(x.maxIndexSize)
	return err
}

// Flush makes the file durable (Sync). It does nothing on a read-only file.
func (x *File) Flush() error {
	if !x.writable {
		return nil
	}
	if err := x.Check(); err != nil {
		return err
	}
	if err := x.writePending(); err != nil {
		return err
	}
	return x.f.Sync()
}

// Close closes the file. It does not trim it: a segment trims its indexes
// (TrimToValidSize) when it rolls or closes, and keeps the active one's
// preallocated. The entries stay readable in memory.
func (x *File) Close() error {
	if x.f == nil {
		return opError(x.Path(), ErrClosed, "closed")
	}
	var werr error
	if x.writable {
		werr = x.writePending()
	}
	err := x.f.Close()
	x.f = nil
	if werr != nil {
		return werr
	}
	return err
}

// Rename renames the file to newPath, and the File follows it.
func (x *File) Rename(newPath string) error {
	if x.f == nil {
		return opError(x.Path(), ErrClosed, "closed")
	}
	if err := x.fsys.Rename(x.Path(), newPath); err != nil {
		return err
	}
	x.path.Store(&newPath)
	return nil
}

// Delete closes and removes the file (Kafka's deleteIfExists): a file that
// is already gone is not an error.
func (x *File) Delete() error {
	var cerr error
	if x.f != nil {
		cerr = x.f.Close()
		x.f = nil
	}
	if err := x.fsys.Remove(x.Path()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return cerr
}
