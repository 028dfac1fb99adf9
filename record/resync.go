package record

import (
	"hash/crc32"
	"io"

	"github.com/segkit/segkit/format"
)

// resyncWindow is how much of a file FindEntry reads at a time while it
// looks for the next entry.
const resyncWindow = 64 << 10

// FindEntry returns the position of the first entry at or after from, in
// the segment file r of size bytes, whose header is plausible and whose
// checksum verifies (ReadBatch for magic 2, ReadLegacyMessage
// for magic 0 and 1): where reading can resume after a damaged region. It
// reports false when no such entry starts before the end of the file.
//
// Each candidate position is first checked cheaply — a non-negative offset,
// a magic of 0, 1 or 2, a length at least that magic's overhead that stays
// within the file, and for magic 2 a known codec — and only then is the
// whole entry read and its CRC computed, so that scanning garbage or zeros
// costs a few comparisons per byte. Only read errors are returned.
//
// An entry embedded in a record's value (a serialised batch stored as
// data) is found like any other: callers that keep what FindEntry finds
// check that offsets increase.
func FindEntry(r io.ReaderAt, size, from int64) (int64, bool, error) {
	var f Finder
	return f.Find(r, size, from)
}

// Finder is FindEntry with buffers kept between calls. The zero value is
// ready; a Finder is not safe for concurrent use.
type Finder struct {
	win     []byte
	chunk   []byte
	scratch []byte
}

// Find is FindEntry.
func (f *Finder) Find(r io.ReaderAt, size, from int64) (int64, bool, error) {
	if from < 0 {
		from = 0
	}
	if cap(f.win) < resyncWindow+RecordBatchOverhead {
		f.win = make([]byte, resyncWindow+RecordBatchOverhead)
	}
	for start := from; start+LogOverhead+MinLegacyEntrySize <= size; start += resyncWindow {
		// Read the window plus a header's worth, so that every candidate
		// in the window has its header in the buffer when the file does.
		n := min(int64(len(f.win[:cap(f.win)])), size-start)
		win := f.win[:n]
		if _, err := format.ReadFullAt(r, win, start); err != nil {
			return 0, false, err
		}
		limit := min(int64(resyncWindow), n)
		for i := int64(0); i < limit; i++ {
			c := win[i:]
			if len(c) < HeaderSizeUpToMagic {
				break
			}
			need, ok := plausible(c, size-(start+i))
			if !ok {
				continue
			}
			if int64(len(c)) >= need {
				if validHeader(c[:need]) {
					return start + i, true, nil
				}
				continue
			}
			// The entry runs past the window. A legacy message's key
			// and value lengths must fill it: check the ones past the
			// window first (a 4-byte read), as a garbage length that
			// passes plausible is most often one of a huge message
			// whose checksum would cost a read of all of it (on 1 GiB
			// of zstd batches, that was 60% of verify's time on a
			// damaged segment). Then check its checksum reading it in
			// bounded chunks before reading it whole, so that a
			// garbage length costs no allocation.
			ok, err := f.legacyFills(r, start+i, need, c)
			if err == nil && ok {
				ok, err = f.crcMatches(r, start+i, need, c)
			}
			if err != nil {
				return 0, false, err
			}
			if !ok {
				continue
			}
			if int64(cap(f.scratch)) < need {
				f.scratch = make([]byte, need)
			}
			entry := f.scratch[:need]
			if _, err := format.ReadFullAt(r, entry, start+i); err != nil {
				return 0, false, err
			}
			if validHeader(entry) {
				return start + i, true, nil
			}
		}
	}
	return 0, false, nil
}

// legacyFills reports whether the entry of size bytes at at of r, whose
// first bytes are hdr, is not a legacy message whose key and value
// lengths, read from r where hdr does not hold them, do not fill it
// exactly (plausible checks the ones hdr holds). ReadLegacyMessage
// refuses such a message, so the check changes no result.
func (f *Finder) legacyFills(r io.ReaderAt, at, size int64, hdr []byte) (bool, error) {
	magic := int8(hdr[MagicOffset])
	if magic != MagicV0 && magic != MagicV1 {
		return true, nil
	}
	keyAt := int64(LogOverhead + 6)
	if magic == MagicV1 {
		keyAt += 8
	}
	length := func(pos int64) (int64, error) {
		if pos+4 <= int64(len(hdr)) {
			return int64(format.Int32(hdr[pos:])), nil
		}
		var b [4]byte
		if _, err := format.ReadFullAt(r, b[:], at+pos); err != nil {
			return 0, err
		}
		return int64(format.Int32(b[:])), nil
	}
	kl, err := length(keyAt)
	if err != nil {
		return false, err
	}
	if kl < -1 || keyAt+4+max(kl, 0)+4 > size {
		return false, nil
	}
	valAt := keyAt + 4 + max(kl, 0)
	vl, err := length(valAt)
	if err != nil {
		return false, err
	}
	return vl >= -1 && valAt+4+max(vl, 0) == size, nil
}

// crcMatches reports whether the checksum stored in the header hdr of the
// entry of size bytes at at of r matches its bytes, reading them in
// chunks.
func (f *Finder) crcMatches(r io.ReaderAt, at, size int64, hdr []byte) (bool, error) {
	if cap(f.chunk) < resyncWindow {
		f.chunk = make([]byte, resyncWindow)
	}
	v2 := int8(hdr[MagicOffset]) == MagicV2
	var stored uint32
	from := at + AttributesOffset // v2: CRC-32C of [21, end)
	if v2 {
		stored = format.Uint32(hdr[CRCOffset:])
	} else {
		stored = format.Uint32(hdr[LogOverhead:]) // legacy: CRC-32 of [magic, end)
		from = at + MagicOffset
	}
	var crc uint32
	for pos := from; pos < at+size; {
		buf := f.chunk[:min(int64(resyncWindow), at+size-pos)]
		if _, err := format.ReadFullAt(r, buf, pos); err != nil {
			return false, err
		}
		if v2 {
			crc = format.UpdateCRC32C(crc, buf)
		} else {
			crc = crc32.Update(crc, crc32.IEEETable, buf)
		}
		pos += int64(len(buf))
	}
	return crc == stored, nil
}

// plausible reports whether b (at least HeaderSizeUpToMagic bytes, with
// left bytes of the file from its first byte) can start an entry, and its
// size if so. It looks only at the bytes b holds: the fields a header
// must have right before its checksum is worth computing.
func plausible(b []byte, left int64) (int64, bool) {
	if b[0]&0x80 != 0 { // a negative offset
		return 0, false
	}
	magic := int8(b[MagicOffset])
	length := int64(format.Int32(b[LengthOffset:]))
	var least int64
	switch magic {
	case MagicV2:
		least = RecordBatchOverhead - LogOverhead
	case MagicV1:
		least = RecordOverheadV1
	case MagicV0:
		least = RecordOverheadV0
	default:
		return 0, false
	}
	if length < least || LogOverhead+length > left || length > int64(MaxBatchSize) {
		return 0, false
	}
	size := LogOverhead + length
	if magic == MagicV2 {
		if len(b) >= RecordBatchOverhead {
			codec := b[AttributesOffset+1] & 0x07
			lastDelta := format.Int32(b[LastOffsetDeltaOffset:])
			count := format.Int32(b[RecordsCountOffset:])
			if codec > 4 || lastDelta < 0 || count < 0 || count-1 > lastDelta {
				return 0, false
			}
			// Sentinels are -1; nothing below is ever written.
			if format.Int32(b[PartitionLeaderEpochOffset:]) < -1 || format.Int64(b[ProducerIDOffset:]) < -1 ||
				format.Int16(b[ProducerEpochOffset:]) < -1 || format.Int32(b[BaseSequenceOffset:]) < -1 {
				return 0, false
			}
			// An uncompressed record takes at least 7 bytes.
			if codec == 0 && int64(count)*7 > length-(RecordBatchOverhead-LogOverhead) {
				return 0, false
			}
		}
		return size, true
	}
	// A legacy message: its key and value lengths must fill it exactly.
	keyAt := int64(LogOverhead + 6)
	if magic == MagicV1 {
		keyAt += 8
	}
	const attrAt = LogOverhead + 5 // after crc and magic
	if len(b) > attrAt && b[attrAt]&0x07 > 4 {
		return 0, false
	}
	if int64(len(b)) < keyAt+4 {
		return size, true
	}
	kl := int64(format.Int32(b[keyAt:]))
	if kl < -1 || keyAt+4+max(kl, 0)+4 > size {
		return 0, false
	}
	valAt := keyAt + 4 + max(kl, 0)
	if int64(len(b)) < valAt+4 {
		return size, true
	}
	vl := int64(format.Int32(b[valAt:]))
	if vl < -1 || valAt+4+max(vl, 0) != size {
		return 0, false
	}
	return size, true
}

// validHeader reports whether entry is exactly one entry whose header and
// checksum are valid.
func validHeader(entry []byte) bool {
	var rest []byte
	var err error
	if int8(entry[MagicOffset]) == MagicV2 {
		_, rest, err = ReadBatch(entry)
	} else {
		_, rest, err = ReadLegacyMessage(entry)
	}
	return err == nil && len(rest) == 0
}
