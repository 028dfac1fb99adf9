package tier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/record"
)

// logOverhead is a log entry's offset and length prefix.
const logOverhead = 12

// readAll reads what rc holds, at most limit bytes (more is ErrTooLarge).
func readAll(rc io.ReadCloser, limit int64, what string) ([]byte, error) {
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", format.ErrTooLarge, what, limit)
	}
	return b, nil
}

// maxPrealloc bounds what fetch allocates before it has read: the range
// comes from metadata, which may claim more than the remote holds.
const maxPrealloc = 8 << 20

// sizer is a remote reader that knows how many bytes it holds, as Dir's
// (an io.SectionReader) does.
type sizer interface{ Size() int64 }

// fetch reads bytes [start, end) of the segment's log (fewer if the
// remote holds fewer; more is ErrTooLarge). It reads into one buffer of
// the range's size, not io.ReadAll's doubling ones.
func fetch(r RemoteStorageManager, m SegmentMetadata, start, end int64) ([]byte, error) {
	rc, err := r.FetchLogSegment(m, start, end)
	if err != nil {
		return nil, err
	}
	limit := end - start
	n := min(limit, maxPrealloc)
	if s, ok := rc.(sizer); ok {
		n = min(limit, max(s.Size(), 0))
	}
	if n < limit {
		return readAll(rc, limit, "remote log range")
	}
	defer rc.Close()
	buf := make([]byte, n)
	k, err := io.ReadFull(rc, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return buf[:k], nil
	}
	if err != nil {
		return nil, err
	}
	var one [1]byte
	if k, _ := rc.Read(one[:]); k > 0 {
		return nil, fmt.Errorf("%w: remote log range is larger than %d bytes", format.ErrTooLarge, limit)
	}
	return buf, nil
}

// indexPosition returns the position the remote offset index gives for
// offset: that of the last entry at or below it, or 0; and that of the
// entry after it, or -1. The entry holding offset starts at or before
// next (the next entry's offset is above offset), which bounds what the
// first fetch needs.
func indexPosition(r RemoteStorageManager, m SegmentMetadata, offset int64) (pos, next int64, err error) {
	rc, err := r.FetchIndex(m, IndexOffset)
	if err != nil {
		return 0, -1, err
	}
	b, err := readAll(rc, MaxIndexBytes, "remote offset index")
	if err != nil {
		return 0, -1, err
	}
	next = -1
	// Entries ascend; a zeroed tail (relative offset 0 after the first
	// entry) ends them, as Kafka's index sanity check assumes.
	for i := 0; i+index.EntrySize <= len(b); i += index.EntrySize {
		e := index.DecodeEntry(b[i:i+index.EntrySize], m.StartOffset)
		if i > 0 && e.Offset == m.StartOffset {
			break
		}
		if e.Offset > offset {
			next = int64(e.Position)
			break
		}
		pos = int64(e.Position)
	}
	return pos, next, nil
}

// ReadSegment is RemoteLogManager.read for one remote segment m of r:
// the index position for offset, then a forward walk of entry headers to
// the first entry whose last offset reaches offset, then up to maxBytes
// of whole entries from there (at least that one), each checked (size,
// CRC) by a record.Scanner. It returns nil when m holds no such entry.
// Tier.Read calls it for the segment holding offset; a reader of a
// remote without a Tier (segviz read --remote) calls it directly.
func ReadSegment(r RemoteStorageManager, m SegmentMetadata, offset int64, maxBytes int) ([]byte, error) {
	pos, next, err := indexPosition(r, m, offset)
	if err != nil {
		return nil, err
	}
	// Errors name the remote file: the partition's directory and the
	// segment's .log, as in the remote's layout.
	name := path.Join(PartitionDirName(m.ID.TopicIDPartition), SegmentFileName(m.StartOffset, m.ID.ID, FileSegment))
	const window = 64 << 10
	size := m.SegmentSizeInBytes
	// The first fetch also takes what readFrom would, so that a read
	// costs one fetch, not two: the entry holding offset starts at or
	// before the next index entry's position, and readFrom takes
	// maxBytes from there (the index only sizes the fetch: what it
	// returns is scanned and checked as before).
	first := int64(window)
	if span := next - pos; span > first && span <= maxPrealloc {
		first = span
	}
	ahead := int64(max(maxBytes, 0))
	for pos < size {
		buf, err := fetch(r, m, pos, min(pos+first+ahead, size))
		if err != nil {
			return nil, err
		}
		first, ahead = window, 0
		sc := record.NewScanner(buf, name, pos)
		for sc.Next() {
			e := sc.Entry()
			if e.LastOffset() < offset {
				continue
			}
			if b, ok := within(buf, pos, e, maxBytes, size, name); ok {
				return b, nil
			}
			return readFrom(r, m, e.Position, int64(e.Size()), maxBytes, name)
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		if n := sc.ValidBytes(); n > 0 {
			pos += int64(n)
			continue
		}
		// The next entry is larger than the window: take its header.
		if len(buf) < logOverhead {
			break
		}
		n := int64(binary.BigEndian.Uint32(buf[8:12]))
		if n > MaxEntryBytes {
			return nil, &format.CorruptionError{Path: name, Offset: pos + 8, Err: fmt.Errorf("%w: entry of %d bytes in remote segment %s", format.ErrTooLarge, n, m.ID.ID)}
		}
		buf, err = fetch(r, m, pos, min(pos+logOverhead+n, size))
		if err != nil {
			return nil, err
		}
		sc.Reset(buf, name, pos)
		if !sc.Next() {
			if err := sc.Err(); err != nil {
				return nil, err
			}
			break // a torn tail: nothing more
		}
		if e := sc.Entry(); e.LastOffset() >= offset {
			return readFrom(r, m, e.Position, int64(e.Size()), maxBytes, name)
		}
		pos += int64(len(buf))
	}
	return nil, nil
}

// readFrom fetches whole entries from pos: at most maxBytes, or the first
// entry (first bytes) whole.
func readFrom(r RemoteStorageManager, m SegmentMetadata, pos, first int64, maxBytes int, name string) ([]byte, error) {
	n := max(first, int64(maxBytes))
	buf, err := fetch(r, m, pos, min(pos+n, m.SegmentSizeInBytes))
	if err != nil {
		return nil, err
	}
	return wholeEntries(buf, pos, name)
}

// within returns what readFrom would for entry e from buf, fetched from
// pos, if buf holds all readFrom would fetch (up to size, the segment's).
func within(buf []byte, pos int64, e *record.Entry, maxBytes int, size int64, name string) ([]byte, bool) {
	end := min(e.Position+max(int64(e.Size()), int64(maxBytes)), size)
	if end > pos+int64(len(buf)) {
		return nil, false
	}
	b, err := wholeEntries(buf[e.Position-pos:end-pos:end-pos], e.Position, name)
	return b, err == nil
}

// wholeEntries returns the valid entries at the start of buf, read from
// pos: each checked (size, CRC) by a record.Scanner; errors name the
// remote file name.
func wholeEntries(buf []byte, pos int64, name string) ([]byte, error) {
	sc := record.NewScanner(buf, name, pos)
	for sc.Next() {
	}
	if sc.ValidBytes() == 0 {
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return buf[:sc.ValidBytes():sc.ValidBytes()], nil
}

// AbortedTxns is RemoteLogManager.collectAbortedTransactions over the
// remote: it appends to dst the aborted transactions overlapping [from,
// upTo) from the transaction indexes of served (the segments reads are
// served from, oldest first), beginning with the one holding from and
// going on to later ones until a search is complete
// (index.CollectAborted): an aborted transaction's entry is in the
// segment of its ABORT marker, which may come segments after its
// records. Segments whose metadata says their index is empty
// (TxnIdxEmpty), or that have none, are skipped. complete false means
// the remote ran out first: the caller goes on with the local log
// (kafkalog.Log.AbortedTxns), as Kafka does.
func AbortedTxns(r RemoteStorageManager, served []SegmentMetadata, from, upTo int64, dst []index.AbortedTxn) (out []index.AbortedTxn, complete bool, err error) {
	out = dst
	for _, m := range served {
		if m.EndOffset < from || m.TxnIdxEmpty {
			continue
		}
		rc, err := r.FetchIndex(m, IndexTransaction)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return out, false, err
		}
		name := SegmentFileName(m.StartOffset, m.ID.ID, FileTransactionIndex)
		b, err := readAll(rc, MaxIndexBytes, "remote transaction index "+name)
		if err != nil {
			return out, false, err
		}
		txns, err := index.DecodeTransactionIndex(b, name)
		if err != nil {
			return out, false, err
		}
		if out, complete = index.CollectAborted(out, txns, from, upTo); complete {
			return out, true, nil
		}
	}
	return out, false, nil
}
