package record

import (
	"github.com/segkit/segkit/format"
)

// Entry is one log entry found by a Scanner: a v2 batch, or a legacy
// (v0/v1) message, which may be a compressed wrapper.
type Entry struct {
	// Position is the entry's byte position: the Scanner's Base plus its
	// offset in the scanned buffer.
	Position int64
	Magic    int8
	Batch    Batch         // set when Magic == 2
	Legacy   LegacyMessage // set when Magic < 2
}

// Raw returns the entry's bytes, log overhead included.
func (e *Entry) Raw() []byte {
	if e.Magic == MagicV2 {
		return e.Batch.Raw
	}
	return e.Legacy.Raw
}

// Size is the entry's size in bytes.
func (e *Entry) Size() int { return len(e.Raw()) }

// LastOffset is the offset of the entry's last record: a v2 batch's
// baseOffset + lastOffsetDelta, or a legacy entry's offset (which, for a
// wrapper, is its last inner offset).
func (e *Entry) LastOffset() int64 {
	if e.Magic == MagicV2 {
		return e.Batch.LastOffset()
	}
	return e.Legacy.Offset
}

// LastOffset returns the last offset of the last whole entry in b, a
// fetch's records (-1 when b holds none): the upper bound a fetch's
// aborted-transaction search needs.
func LastOffset(b []byte) int64 {
	last := int64(-1)
	s := NewScanner(b, "", 0)
	for s.Next() {
		last = s.Entry().LastOffset()
	}
	return last
}

// BaseOffset is the first offset of a v2 batch, or a legacy entry's offset
// (for a legacy wrapper, finding the first inner offset needs
// decompression: use a LegacyIterator).
func (e *Entry) BaseOffset() int64 {
	if e.Magic == MagicV2 {
		return e.Batch.BaseOffset
	}
	return e.Legacy.Offset
}

// MaxTimestamp is a v2 batch's maxTimestamp, a v1 message's timestamp
// (for a wrapper, its inner maximum or its LogAppendTime), or NoTimestamp
// for v0.
func (e *Entry) MaxTimestamp() int64 {
	if e.Magic == MagicV2 {
		return e.Batch.MaxTimestamp
	}
	return e.Legacy.Timestamp
}

// TailKind says why a Scanner stopped before the end of its buffer
// without finding corruption.
type TailKind int8

// Tail kinds.
const (
	// TailNone: the buffer ended exactly after the last entry.
	TailNone TailKind = iota
	// TailPartial: fewer than 17 bytes were left, or the last entry's
	// declared size runs past the end: a torn write, which Kafka's
	// FileLogInputStream treats as the end of the data.
	TailPartial
	// TailZeros: the rest of the buffer is zero bytes, as a preallocated
	// or crash-extended file leaves it.
	TailZeros
)

// String names the tail kind.
func (k TailKind) String() string {
	switch k {
	case TailPartial:
		return "partial entry"
	case TailZeros:
		return "zero padding"
	default:
		return "none"
	}
}

// Scanner walks the entries of a log segment's bytes in order, whatever
// their magic, and tells a torn tail (an expected crash artefact) from
// corruption (bad bytes followed by more data, or an entry that fails its
// checks). It decodes headers only (ReadBatch, ReadLegacyMessage); set
// Validate to also check every record of every entry.
//
//	s := record.NewScanner(data, "00000000000000000000.log", 0)
//	for s.Next() {
//		e := s.Entry()
//		fmt.Println(e.Position, e.BaseOffset(), e.LastOffset())
//	}
//	if err := s.Err(); err != nil { ... } // a *format.CorruptionError
//	if kind, at, n := s.Tail(); kind != record.TailNone { ... }
//
// Errors carry Path and absolute positions (Base + offset in the buffer).
type Scanner struct {
	// Path names the file in errors.
	Path string
	// Base is the file position of the buffer's first byte.
	Base int64
	// Validate checks every record of each entry (Iterator.Validate,
	// LegacyIterator) in addition to the header and CRC.
	Validate bool
	// MaxDecompressed bounds the decompressed size of an entry's records
	// while Validate checks them; 0 means DefaultMaxDecompressed.
	MaxDecompressed int
	// NoCRC skips the CRC-32C of v2 batches (every other check stays):
	// for a second pass over bytes that a first pass has checked and
	// nobody can have changed since, as recovery makes under the
	// directory lock. Legacy messages' CRCs are still checked.
	NoCRC bool

	buf   []byte
	pos   int
	entry Entry
	err   error
	tail  TailKind
	it    Iterator
	lit   LegacyIterator
}

// NewScanner returns a Scanner over b, which starts at file position base
// of path.
func NewScanner(b []byte, path string, base int64) *Scanner {
	s := &Scanner{}
	s.Reset(b, path, base)
	return s
}

// Reset makes s scan b from its start, keeping its buffers, Validate,
// MaxDecompressed and NoCRC.
func (s *Scanner) Reset(b []byte, path string, base int64) {
	s.buf, s.Path, s.Base = b, path, base
	s.pos, s.err, s.tail = 0, nil, TailNone
	s.entry = Entry{}
}

// Next advances to the next entry and reports whether there is one.
func (s *Scanner) Next() bool {
	if s.err != nil {
		return false
	}
	b := s.buf[s.pos:]
	if len(b) == 0 {
		return false
	}
	if len(b) < HeaderSizeUpToMagic {
		s.stopTail(b)
		return false
	}
	size := format.Int32(b[LengthOffset:])
	if size == 0 && format.Int64(b) == 0 && allZero(b[:HeaderSizeUpToMagic]) {
		s.stopTail(b)
		return false
	}
	if size < MinLegacyEntrySize {
		s.err = format.Corruptf(s.Path, s.Base+int64(s.pos)+LengthOffset, format.ErrInvalid, "record size %d is smaller than the minimum record overhead (%d)", size, MinLegacyEntrySize)
		return false
	}
	if int64(size) > int64(len(b)-LogOverhead) {
		s.tail = TailPartial
		return false
	}
	pos := s.Base + int64(s.pos)
	e := &s.entry
	e.Position = pos
	e.Magic = int8(b[MagicOffset])
	var rest []byte
	var err error
	switch e.Magic {
	case MagicV2:
		e.Legacy = LegacyMessage{}
		e.Batch, rest, err = readBatch(b, !s.NoCRC)
		if err == nil && s.Validate {
			s.it.MaxDecompressed = s.MaxDecompressed
			err = s.it.Validate(&e.Batch)
		}
	case MagicV0, MagicV1:
		e.Batch = Batch{}
		e.Legacy, rest, err = ReadLegacyMessage(b)
		if err == nil && s.Validate {
			s.lit.MaxDecompressed = s.MaxDecompressed
			err = s.validateLegacy(&e.Legacy)
		}
	default:
		err = format.Corruptf("", MagicOffset, format.ErrMagic, "unknown magic %d", e.Magic)
	}
	if err != nil {
		s.err = format.WithPath(err, s.Path, pos)
		return false
	}
	s.pos = len(s.buf) - len(rest)
	return true
}

func (s *Scanner) validateLegacy(m *LegacyMessage) error {
	var r Record
	s.lit.Reset(m)
	for s.lit.Next(&r) {
	}
	return s.lit.Err()
}

func (s *Scanner) stopTail(b []byte) {
	if allZero(b) {
		s.tail = TailZeros
	} else {
		s.tail = TailPartial
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Entry returns the current entry. It is overwritten by the next call to
// Next; its slices alias the scanned buffer.
func (s *Scanner) Entry() *Entry { return &s.entry }

// Err returns the corruption that stopped the scan, or nil.
func (s *Scanner) Err() error { return s.err }

// ValidBytes is the length of the prefix of the buffer made of valid
// entries: where recovery truncates.
func (s *Scanner) ValidBytes() int { return s.pos }

// Tail reports how the scan ended when it ended cleanly (Err is nil)
// before the end of the buffer: the kind, the file position of the first
// unused byte, and the number of unused bytes.
func (s *Scanner) Tail() (kind TailKind, at int64, n int) {
	if s.err != nil || s.pos == len(s.buf) {
		return TailNone, s.Base + int64(s.pos), 0
	}
	k := s.tail
	if k == TailPartial && allZero(s.buf[s.pos:]) {
		k = TailZeros
	}
	return k, s.Base + int64(s.pos), len(s.buf) - s.pos
}
