package tier

import (
	"encoding/binary"
	"fmt"
	"io"

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

func fetch(r RemoteStorageManager, m SegmentMetadata, start, end int64) ([]byte, error) {
	rc, err := r.FetchLogSegment(m, start, end)
	if err != nil {
		return nil, err
	}
	return readAll(rc, end-start, "remote log range")
}

// indexPosition returns the position the remote offset index gives for
// offset: that of the last entry at or below it, or 0.
func indexPosition(r RemoteStorageManager, m SegmentMetadata, offset int64) (int64, error) {
	rc, err := r.FetchIndex(m, IndexOffset)
	if err != nil {
		return 0, err
	}
	b, err := readAll(rc, MaxIndexBytes, "remote offset index")
	if err != nil {
		return 0, err
	}
	pos := int64(0)
	// Entries ascend; a zeroed tail (relative offset 0 after the first
	// entry) ends them, as Kafka's index sanity check assumes.
	for i := 0; i+index.EntrySize <= len(b); i += index.EntrySize {
		e := index.DecodeEntry(b[i:i+index.EntrySize], m.StartOffset)
		if i > 0 && e.Offset == m.StartOffset || e.Offset > offset {
			break
		}
		pos = int64(e.Position)
	}
	return pos, nil
}

// readRemote is RemoteLogManager.read: the index position for offset,
// then a forward walk of entry headers to the first entry whose last
// offset reaches offset, then up to maxBytes of whole entries from there
// (at least that one), each checked (size, CRC) by a record.Scanner.
func readRemote(r RemoteStorageManager, m SegmentMetadata, offset int64, maxBytes int) ([]byte, error) {
	pos, err := indexPosition(r, m, offset)
	if err != nil {
		return nil, err
	}
	const window = 64 << 10
	size := m.SegmentSizeInBytes
	for pos < size {
		buf, err := fetch(r, m, pos, min(pos+window, size))
		if err != nil {
			return nil, err
		}
		sc := record.NewScanner(buf, "", pos)
		for sc.Next() {
			e := sc.Entry()
			if e.LastOffset() < offset {
				continue
			}
			return readFrom(r, m, e.Position, int64(e.Size()), maxBytes)
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
			return nil, &format.CorruptionError{Offset: pos + 8, Err: fmt.Errorf("%w: entry of %d bytes in remote segment %s", format.ErrTooLarge, n, m.ID.ID)}
		}
		buf, err = fetch(r, m, pos, min(pos+logOverhead+n, size))
		if err != nil {
			return nil, err
		}
		sc.Reset(buf, "", pos)
		if !sc.Next() {
			if err := sc.Err(); err != nil {
				return nil, err
			}
			break // a torn tail: nothing more
		}
		if e := sc.Entry(); e.LastOffset() >= offset {
			return readFrom(r, m, e.Position, int64(e.Size()), maxBytes)
		}
		pos += int64(len(buf))
	}
	return nil, nil
}

// readFrom fetches whole entries from pos: at most maxBytes, or the first
// entry (first bytes) whole.
func readFrom(r RemoteStorageManager, m SegmentMetadata, pos, first int64, maxBytes int) ([]byte, error) {
	n := max(first, int64(maxBytes))
	buf, err := fetch(r, m, pos, min(pos+n, m.SegmentSizeInBytes))
	if err != nil {
		return nil, err
	}
	sc := record.NewScanner(buf, "", pos)
	for sc.Next() {
	}
	if sc.ValidBytes() == 0 {
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return buf[:sc.ValidBytes():sc.ValidBytes()], nil
}
