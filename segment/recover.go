package segment

import (
	"errors"
	"fmt"
	"math"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/record"
)

// RecoverHooks lets the log rebuild its own state while a segment is
// recovered. OnBatch is called for each valid entry in order; it returns
// the aborted transactions the entry completes (a control batch with an
// ABORT marker), which recovery writes to the transaction index.
type RecoverHooks struct {
	OnBatch func(e *record.Entry) ([]index.AbortedTxn, error)
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
	if err := oi.Reset(); err != nil {
		return RecoverResult{}, err
	}
	if err := ti.Reset(); err != nil {
		return RecoverResult{}, err
	}
	if err := tx.Reset(); err != nil {
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

	res := RecoverResult{NextOffset: s.base}
	s.maxTs, s.offsetOfMaxTs, s.tsKnown = record.NoTimestamp, s.base, true
	var validBytes, lastIndexEntry int64
	prevLast := s.base - 1
	var rs record.ReaderScanner
	rs.Reset(s.log, fileSize, s.LogPath(), 0)
	for rs.Next() {
		e := rs.Entry()
		base, last := e.BaseOffset(), e.LastOffset()
		if base <= prevLast {
			res.Reason = format.Corruptf(s.LogPath(), e.Position, format.ErrInvalid, "offsets %d..%d do not follow %d", base, last, prevLast)
			break
		}
		if !s.canConvert(last) {
			res.Reason = format.Corruptf(s.LogPath(), e.Position, format.ErrInvalid, "offset %d overflows a segment at %d", last, s.base)
			break
		}
		if ts := e.MaxTimestamp(); ts > s.maxTs {
			s.maxTs, s.offsetOfMaxTs = ts, last
		}
		if validBytes-lastIndexEntry > int64(s.cfg.IndexIntervalBytes) {
			if err := oi.Append(last, int32(validBytes)); err != nil {
				return res, err
			}
			if err := ti.MaybeAppend(s.maxTs, s.offsetOfMaxTs, false); err != nil {
				return res, err
			}
			lastIndexEntry = validBytes
		}
		validBytes += int64(e.Size())
		prevLast = last
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
		var ce *format.CorruptionError
		if !errors.As(err, &ce) {
			return res, err // an I/O error: nothing is truncated
		}
		if res.Reason == nil {
			res.Reason = err
		}
	}
	if res.Reason == nil {
		res.Tail, _, _ = rs.Tail()
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
