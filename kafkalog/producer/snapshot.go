package producer

import (
	"errors"
	"io/fs"
	"os"
	"slices"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// Layout of a producer snapshot (ProducerSnapshot.json, version 1, not
// flexible; ProducerStateManager.PID_SNAPSHOT_MAP_SCHEMA).
//
// These constants are part of the wire format and should not be changed.
const (
	// SnapshotVersion is the only snapshot version.
	SnapshotVersion = 1

	versionOffset = 0
	crcOffset     = versionOffset + 2
	// entriesOffset is where the CRC-32C's coverage starts: the entry
	// count and the entries.
	entriesOffset = crcOffset + 4
	countOffset   = entriesOffset
	// SnapshotHeaderSize is the size of an empty snapshot: version, crc
	// and entry count.
	SnapshotHeaderSize = countOffset + 4

	// EntrySize is the size of one entry: producerId i64, epoch i16,
	// lastSequence i32, lastOffset i64, offsetDelta i32, timestamp i64,
	// coordinatorEpoch i32, currentTxnFirstOffset i64.
	EntrySize = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8
)

// Entry is one producer's state in a snapshot
// (ProducerSnapshot.ProducerEntry).
type Entry struct {
	ProducerID int64
	Epoch      int16
	// LastSequence, LastOffset and OffsetDelta describe the producer's
	// last data batch: its last sequence number, its last offset, and
	// lastOffset - baseOffset. A producer with no data batch retained has
	// -1, -1 and 0.
	LastSequence int32
	LastOffset   int64
	OffsetDelta  int32
	// Timestamp is the max timestamp of the producer's last batch, or of
	// its last transaction marker.
	Timestamp int64
	// CoordinatorEpoch is the epoch of the transaction coordinator that
	// wrote the producer's last marker, -1 if none.
	CoordinatorEpoch int32
	// CurrentTxnFirstOffset is the first offset of the producer's open
	// transaction, -1 when none.
	CurrentTxnFirstOffset int64
}

// SizeSnapshot returns the size of a snapshot of n entries.
func SizeSnapshot(n int) int { return SnapshotHeaderSize + n*EntrySize }

// AppendSnapshot appends the snapshot of entries, in the given order, to
// dst: version 1, the CRC-32C of everything after the CRC field, the
// entry count and the entries, all big-endian.
func AppendSnapshot(dst []byte, entries []Entry) []byte {
	start := len(dst)
	dst = slices.Grow(dst, SizeSnapshot(len(entries)))
	dst = format.AppendInt16(dst, SnapshotVersion)
	dst = format.AppendUint32(dst, 0) // back-patched below
	dst = format.AppendInt32(dst, int32(len(entries)))
	for i := range entries {
		e := &entries[i]
		dst = format.AppendInt64(dst, e.ProducerID)
		dst = format.AppendInt16(dst, e.Epoch)
		dst = format.AppendInt32(dst, e.LastSequence)
		dst = format.AppendInt64(dst, e.LastOffset)
		dst = format.AppendInt32(dst, e.OffsetDelta)
		dst = format.AppendInt64(dst, e.Timestamp)
		dst = format.AppendInt32(dst, e.CoordinatorEpoch)
		dst = format.AppendInt64(dst, e.CurrentTxnFirstOffset)
	}
	format.PutUint32(dst[start+crcOffset:], format.CRC32C(dst[start+entriesOffset:]))
	return dst
}

// DecodeSnapshot decodes a producer snapshot, with the checks of
// ProducerStateManager.readSnapshot, in its order: the structure (a short
// input or an entry count the bytes cannot hold is format.ErrTruncated, a
// negative count format.ErrInvalid), then the version (only 1;
// format.ErrInvalid), then the CRC-32C over bytes [6, end)
// (format.ErrCRC). Errors are *format.CorruptionError with the offset of
// the field at fault. The count is checked against the bytes left before
// anything is allocated. Bytes after the last entry are covered by the
// CRC and otherwise ignored, as Kafka ignores them.
func DecodeSnapshot(b []byte) ([]Entry, error) {
	if len(b) < SnapshotHeaderSize {
		return nil, format.Corruptf("", int64(len(b)), format.ErrTruncated,
			"Snapshot failed schema validation: %d bytes, a snapshot has at least %d", len(b), SnapshotHeaderSize)
	}
	n := format.Int32(b[countOffset:])
	if n < 0 {
		return nil, format.Corruptf("", countOffset, format.ErrInvalid,
			"Snapshot failed schema validation: Array size %d cannot be negative", n)
	}
	if avail := (len(b) - SnapshotHeaderSize) / EntrySize; int64(n) > int64(avail) {
		return nil, format.Corruptf("", countOffset, format.ErrTruncated,
			"Snapshot failed schema validation: %d entries need %d bytes, only %d available", n, int64(n)*EntrySize, len(b)-SnapshotHeaderSize)
	}
	if v := format.Int16(b[versionOffset:]); v != SnapshotVersion {
		return nil, format.Corruptf("", versionOffset, format.ErrInvalid, "Snapshot contained an unknown file version %d", v)
	}
	if stored, computed := format.Uint32(b[crcOffset:]), format.CRC32C(b[entriesOffset:]); stored != computed {
		return nil, format.Corruptf("", crcOffset, format.ErrCRC,
			"Snapshot is corrupt (CRC is no longer valid). Stored crc: %d. Computed crc: %d", stored, computed)
	}
	entries := make([]Entry, n)
	p := b[SnapshotHeaderSize:]
	for i := range entries {
		entries[i] = Entry{
			ProducerID:            format.Int64(p[0:]),
			Epoch:                 format.Int16(p[8:]),
			LastSequence:          format.Int32(p[10:]),
			LastOffset:            format.Int64(p[14:]),
			OffsetDelta:           format.Int32(p[22:]),
			Timestamp:             format.Int64(p[26:]),
			CoordinatorEpoch:      format.Int32(p[34:]),
			CurrentTxnFirstOffset: format.Int64(p[38:]),
		}
		p = p[EntrySize:]
	}
	return entries, nil
}

// SnapshotFileName returns the name of the snapshot taken at offset:
// the offset as 20 digits and ".snapshot" (LogFileUtils).
func SnapshotFileName(offset int64) string {
	return segment.FileName(offset, segment.SnapshotSuffix)
}

// WriteSnapshot writes dir/<offset>.snapshot holding entries and fsyncs
// it, as ProducerStateManager.writeSnapshot does: in place, with no
// temporary file and no directory fsync. A crash can therefore leave the
// file missing, short or partly zero; DecodeSnapshot detects all of these
// (length, count and CRC checks), and a reader then falls back to an
// older snapshot, as Kafka does. Unlike Kafka, which opens the file
// without truncating it, an existing file is truncated first, so that a
// longer stale file cannot leave a tail behind.
func WriteSnapshot(fsys vfs.FS, dir string, offset int64, entries []Entry) error {
	f, err := fsys.OpenFile(segment.Path(dir, offset, segment.SnapshotSuffix), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(AppendSnapshot(nil, entries))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadSnapshot reads and decodes dir/<offset>.snapshot. Bad content is a
// *format.CorruptionError naming the file; a missing file an error
// matching fs.ErrNotExist.
func ReadSnapshot(fsys vfs.FS, dir string, offset int64) ([]Entry, error) {
	p := segment.Path(dir, offset, segment.SnapshotSuffix)
	b, err := vfs.ReadFile(fsys, p)
	if err != nil {
		return nil, err
	}
	entries, err := DecodeSnapshot(b)
	return entries, format.WithPath(err, p, 0)
}

// ListSnapshots returns the offsets of the snapshot files in dir,
// ascending. Names that end in ".snapshot" without a 20-digit offset are
// skipped (Kafka would fail on them), and so are ".snapshot.deleted"
// files. A missing directory has no snapshots.
func ListSnapshots(fsys vfs.FS, dir string) ([]int64, error) {
	infos, err := vfs.ReadDir(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var offsets []int64
	for _, fi := range infos {
		if fi.IsDir() {
			continue
		}
		off, ext, err := segment.ParseFileName(fi.Name())
		if err != nil || ext != segment.SnapshotSuffix {
			continue
		}
		offsets = append(offsets, off)
	}
	slices.Sort(offsets)
	return offsets, nil
}

// DeleteSnapshot removes dir/<offset>.snapshot; a missing file is not an
// error.
func DeleteSnapshot(fsys vfs.FS, dir string, offset int64) error {
	err := fsys.Remove(segment.Path(dir, offset, segment.SnapshotSuffix))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
