package segment

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"runtime/debug"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/maprange"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/timeindex"
)

// RecoverHooks lets the log rebuild its own state while a segment is
// recovered. OnBatch is called for each valid entry in order; it returns
// the aborted transactions the entry completes (a control batch with an
// ABORT marker), which recovery writes to the transaction index.
//
// BeforeTruncate, if set, is called when the valid prefix is known and
// recovery is about to cut bytes from the .log, before the .log or the
// content of an index is changed: if it returns an error, Recover returns
// it and leaves them as they were.
type RecoverHooks struct {
	OnBatch        func(e *record.Entry) ([]index.AbortedTxn, error)
	BeforeTruncate func(c Cut) error
}

// Cut describes the truncation recovery is about to make.
type Cut struct {
	// Path is the .log; ValidBytes is where its valid prefix ends and Size
	// its current size.
	Path             string
	ValidBytes, Size int64
	// Reason and Tail say why the prefix ends there, as in RecoverResult.
	Reason error
	Tail   record.TailKind
	// NextValid is the position of the first entry at or after ValidBytes
	// whose header is plausible and whose checksum verifies
	// (record.FindEntry), or -1: when it is set, the bytes to cut hold
	// valid data, and the damage is not a torn write.
	NextValid int64
}

// RecoverResult says what recovery found.
type RecoverResult struct {
	// ValidBytes is where the .log now ends.
	ValidBytes int64
	// Truncated is the number of bytes cut from the end of the .log.
	Truncated int64
	// Entries is the number of valid entries kept.
	Entries int
	// NextOffset is the offset after the last valid entry (the base
	// offset when none is left).
	NextOffset int64
	// Reason explains a truncation: a *format.CorruptionError naming the
	// file and position of the first bad entry, or nil for a torn or
	// zero-filled tail (see Tail).
	Reason error
	// Tail is the kind of clean tail that was cut (record.TailNone when
	// the cut was for corruption, or there was none).
	Tail record.TailKind
}

// Recover validates every entry of the .log (its size, magic, checksum
// and header fields, as Kafka's ensureValid does, plus offsets that
// increase and fit the segment), stops at the first bad one, truncates the
// .log there, and rebuilds the offset, time and transaction indexes from
// the valid entries by Kafka's rules (LogSegment.recover): an offset index
// entry (last offset of the entry, its position) whenever more than
// index.interval.bytes were read since the last one, a time index entry
// for the max timestamp so far with it, and the final time index entry at
// the end. The indexes are trimmed.
//
// Nothing before the first bad entry is lost, and nothing after it is
// kept: the log engine cannot expose records after a hole.
func (s *Segment) Recover(hooks RecoverHooks) (RecoverResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readOnly {
		return RecoverResult{}, ErrReadOnly
	}
	oi, err := s.offsetIndex()
	if err != nil {
		return RecoverResult{}, err
	}
	ti, err := s.timeIndex()
	if err != nil {
		return RecoverResult{}, err
	}
	tx, err := s.txnIndex()
	if err != nil {
		return RecoverResult{}, err
	}
	// The file's real length counts, not s.size: a crash can leave more
	// bytes than the last known size.
	st, err := s.log.Stat()
	if err != nil {
		return RecoverResult{}, err
	}
	fileSize := st.Size()
	if fileSize > math.MaxInt32 {
		fileSize = math.MaxInt32
	}
	// Where the .log is an OS file, both passes read it through one
	// read-only mapping: its pages are faulted in once and not copied
	// (two passes of pread were most of a recovery's time). A mapping
	// that fails is not an error: the passes read instead.
	if f, ok := s.log.(*os.File); ok {
		if view, _ := maprange.Whole(f, fileSize); view != nil {
			defer view.Close()
			return s.recoverViewed(hooks, oi, ti, tx, fileSize, view)
		}
	}
	return s.recover(hooks, oi, ti, tx, fileSize, nil)
}

// recoverViewed is recover through view, a mapping of the .log: if the
// file shrinks under it (another process, since the caller holds the
// directory's lock), the fault is an I/O error, and nothing is truncated.
func (s *Segment) recoverViewed(hooks RecoverHooks, oi *index.OffsetIndex, ti *timeindex.TimeIndex, tx *index.TransactionIndex, fileSize int64, view *maprange.Mapping) (res RecoverResult, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if view.Faulted(recover()) {
			err = &fs.PathError{Op: "read", Path: s.LogPath(), Err: errShrank}
		}
	}()
	return s.recover(hooks, oi, ti, tx, fileSize, view.Func())
}

// errShrank is the I/O error of a .log that shrank while it was read
// through a mapping.
var errShrank = errors.New("the file shrank while it was recovered")

// recover is Recover once the indexes are open and the .log's size is
// known; view, if set, maps the .log.
func (s *Segment) recover(hooks RecoverHooks, oi *index.OffsetIndex, ti *timeindex.TimeIndex, tx *index.TransactionIndex, fileSize int64, view maprange.Func) (RecoverResult, error) {
	res := RecoverResult{NextOffset: s.base}
	// Pass 1 finds the valid prefix; pass 2 rebuilds the indexes and the
	// caller's state from it. Two passes, because the entry that breaks
	// the offset order may show that the one before it was the bad one.
	validBytes, reason, tail, err := s.validPrefix(fileSize, view)
	if err != nil {
		return res, err // an I/O error: nothing is truncated
	}
	res.Reason, res.Tail = reason, tail
	if validBytes < fileSize && hooks.BeforeTruncate != nil {
		c := Cut{Path: s.LogPath(), ValidBytes: validBytes, Size: fileSize, Reason: reason, Tail: tail, NextValid: -1}
		q, found, err := record.FindEntry(s.log, fileSize, validBytes)
		if err != nil {
			return res, err
		}
		if found {
			c.NextValid = q
		}
		if err := hooks.BeforeTruncate(c); err != nil {
			return res, err
		}
	}
	// The indexes are rebuilt from scratch, from the valid prefix.
	if err := oi.Reset(); err != nil {
		return res, err
	}
	if err := ti.Reset(); err != nil {
		return res, err
	}
	if err := tx.Reset(); err != nil {
		return res, err
	}
	s.maxTs, s.offsetOfMaxTs, s.tsKnown = record.NoTimestamp, s.base, true
	var lastIndexEntry, pos int64
	// Pass 1 checked every CRC of the prefix, and the caller holds the
	// directory's lock: pass 2 reads the same bytes and checks the rest
	// of each header only (the CRCs were half of a recovery's CPU).
	rs := record.ReaderScanner{Map: view, NoCRC: true}
	defer rs.Close()
	rs.Reset(s.log, validBytes, s.LogPath(), 0)
	for rs.Next() {
		e := rs.Entry()
		last := e.LastOffset()
		if ts := e.MaxTimestamp(); ts > s.maxTs {
			s.maxTs, s.offsetOfMaxTs = ts, last
		}
		if pos-lastIndexEntry > int64(s.cfg.IndexIntervalBytes) {
			// The append path indexes once per append, recovery once per
			// batch, so a segment of multi-batch (follower) appends can
			// need more entries than segment.index.bytes holds. A full
			// index just stays sparser: lookups scan on from its last
			// entry. (Kafka's recover fails here with "Attempt to append
			// to a full index", and the log cannot be loaded.)
			if !oi.IsFull() {
				if err := oi.Append(last, int32(pos)); err != nil {
					return res, err
				}
			}
			if !ti.IsFull() {
				if err := ti.MaybeAppend(s.maxTs, s.offsetOfMaxTs, false); err != nil {
					return res, err
				}
			}
			lastIndexEntry = pos
		}
		pos += int64(e.Size())
		res.Entries++
		res.NextOffset = last + 1
		if hooks.OnBatch != nil {
			aborted, err := hooks.OnBatch(e)
			if err != nil {
				return res, err
			}
			for _, a := range aborted {
				if err := tx.Append(a); err != nil {
					return res, err
				}
			}
		}
	}
	if err := rs.Err(); err != nil {
		return res, err // the prefix was valid a moment ago: an I/O error
	}
	if rs.ValidEnd() != validBytes {
		// The valid prefix ends sooner than a moment ago: the file shrank
		// (read with ReadAt, or past a fault on its mapping).
		return res, &fs.PathError{Op: "read", Path: s.LogPath(), Err: errShrank}
	}
	res.ValidBytes = validBytes
	res.Truncated = fileSize - validBytes
	if res.Truncated > 0 {
		if err := s.log.Truncate(validBytes); err != nil {
			s.failed = err
			return res, fmt.Errorf("%s: truncate to %d: %w", s.LogPath(), validBytes, err)
		}
	}
	s.size = validBytes
	s.failed = nil
	s.bytesSinceLastIndex = 0
	s.hasRollingTs = false
	if err := oi.TrimToValidSize(); err != nil {
		return res, err
	}
	if err := ti.MaybeAppend(s.maxTs, s.offsetOfMaxTs, true); err != nil {
		return res, err
	}
	if err := ti.TrimToValidSize(); err != nil {
		return res, err
	}
	return res, nil
}

// SanityCheck is what loading checks of a segment (LogSegment.sanityCheck):
// the .index must exist (else the caller recovers the segment), a time
// index created just now is sized to 0, and the transaction index must be
// sane. Offset and time indexes are not checked, as in Kafka: the segments
// above the recovery point are recovered anyway.
func (s *Segment) SanityCheck(timeIndexNewlyCreated bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.fsys.Stat(s.IndexPath()); err != nil {
		return fmt.Errorf("segment: offset index file %s does not exist: %w", s.IndexPath(), err)
	}
	if timeIndexNewlyCreated && !s.readOnly {
		ti, err := s.timeIndex()
		if err != nil {
			return err
		}
		if _, err := ti.Resize(0); err != nil {
			return err
		}
	}
	if _, err := s.fsys.Stat(s.TxnIndexPath()); err == nil {
		tx, err := s.txnIndex()
		if err != nil {
			return err
		}
		return tx.SanityCheck()
	}
	return nil
}

// HasOverflow reports whether the segment's last offset does not fit its
// relative offsets (a segment written by an old broker that needs a
// split).
func (s *Segment) HasOverflow() (bool, error) {
	next, err := s.ReadNextOffset()
	if err != nil {
		return false, err
	}
	return next > s.base && !s.canConvert(next-1), nil
}

// validPrefix scans the whole .log and returns the length of its valid
// prefix, why it ends there (a *format.CorruptionError, or nil with the
// tail kind for a clean or torn end), or an I/O error.
//
// Besides each entry's own checks (size, magic, header fields, checksum),
// offsets must increase and fit the segment. The baseOffset field is not
// covered by the checksum, so a damaged one shows only against its
// neighbours. When entry i+1 does not follow entry i, either i+1's offsets
// were lowered or i's were raised. An explanation wins when the suspect's
// span of offsets exactly fills the hole its removal leaves (only its
// baseOffset was damaged) and the other's does not; failing that, the
// sequence without each suspect is scored (entries i-1, i+1, i+2 against
// i-1, i, i+2: offsets out of order first, then the gaps between them).
// Only when blaming i+1 is strictly better is i kept; otherwise the prefix
// ends before i, so that offsets that may be wrong are never served.
func (s *Segment) validPrefix(fileSize int64, view maprange.Func) (int64, error, record.TailKind, error) {
	type seen struct {
		pos, base, last int64
		ok              bool
	}
	// score rates a run of entries: out-of-order steps, then total gap.
	score := func(run ...seen) (int, int64) {
		bad, gaps := 0, int64(0)
		var prev *seen
		for i := range run {
			e := &run[i]
			if !e.ok {
				continue
			}
			if prev != nil {
				if e.base <= prev.last {
					bad++
				} else {
					gaps += e.base - prev.last - 1
				}
			}
			prev = e
		}
		return bad, gaps
	}
	prevPrev := seen{base: s.base - 1, last: s.base - 1, ok: true}
	var prev seen
	rs := record.ReaderScanner{Map: view}
	defer rs.Close()
	rs.Reset(s.log, fileSize, s.LogPath(), 0)
	for rs.Next() {
		e := rs.Entry()
		base, last := e.BaseOffset(), e.LastOffset()
		if base < s.base {
			return e.Position, format.Corruptf(s.LogPath(), e.Position, format.ErrInvalid, "offsets %d..%d are below the segment's base %d", base, last, s.base), record.TailNone, nil
		}
		if prev.ok && base <= prev.last {
			cur := seen{e.Position, base, last, true}
			var next seen
			if rs.Next() {
				n := rs.Entry()
				next = seen{n.Position, n.BaseOffset(), n.LastOffset(), true}
			}
			// An entry whose span exactly fills the hole its removal leaves
			// is explained: only its baseOffset was damaged.
			fits := func(before seen, x seen, after seen) bool {
				return after.ok && after.base-before.last-1 == x.last-x.base+1
			}
			prevFits, curFits := fits(prevPrev, prev, cur), fits(prev, cur, next)
			dropPrevBad, dropPrevGap := score(prevPrev, cur, next)
			dropCurBad, dropCurGap := score(prevPrev, prev, next)
			blameCur := curFits && !prevFits
			if curFits == prevFits {
				blameCur = dropCurBad < dropPrevBad || dropCurBad == dropPrevBad && dropCurGap < dropPrevGap
			}
			if blameCur {
				return cur.pos, format.Corruptf(s.LogPath(), cur.pos, format.ErrInvalid, "offsets %d..%d do not follow %d", base, last, prev.last), record.TailNone, nil
			}
			if prevFits {
				return prev.pos, format.Corruptf(s.LogPath(), prev.pos, format.ErrInvalid,
					"damaged baseOffset: the entry here claims offsets %d..%d, but its %d records fill the hole between %d and %d", prev.base, prev.last, prev.last-prev.base+1, prevPrev.last, base), record.TailNone, nil
			}
			return prev.pos, format.Corruptf(s.LogPath(), prev.pos, format.ErrInvalid,
				"offsets %d..%d here, or %d..%d in the next entry, are damaged (the baseOffset field has no checksum); the prefix ends before both", prev.base, prev.last, base, last), record.TailNone, nil
		}
		if !s.canConvert(last) {
			return e.Position, format.Corruptf(s.LogPath(), e.Position, format.ErrInvalid, "offset %d overflows a segment at %d", last, s.base), record.TailNone, nil
		}
		if prev.ok {
			prevPrev = prev
		}
		prev = seen{e.Position, base, last, true}
	}
	end := rs.ValidEnd()
	if err := rs.Err(); err != nil {
		var ce *format.CorruptionError
		if !errors.As(err, &ce) {
			return 0, nil, record.TailNone, err
		}
		return end, err, record.TailNone, nil
	}
	tail, _, _ := rs.Tail()
	if tail != record.TailNone {
		// A partial entry or zeros are a torn write only if nothing valid
		// follows: a valid entry further on means these bytes are damage
		// (a zeroed block, a broken length) in the middle of the data.
		// The cut is the same; the report is not.
		q, found, err := record.FindEntry(s.log, fileSize, end+1)
		if err != nil {
			return 0, nil, record.TailNone, err
		}
		if found {
			return end, format.Corruptf(s.LogPath(), end, format.ErrInvalid,
				"no valid entry here (it reads as %v), yet a valid entry starts at %d: damage, not a torn write", tail, q), record.TailNone, nil
		}
	}
	return end, nil, tail, nil
}
