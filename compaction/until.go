package compaction

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"math"
	"path"
	"strings"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	// The package is imported as ret: filter.go has a type named retention.
	ret "github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// DefaultBackoffMs is log.cleaner.backoff.ms: how long a cleaner thread
// that found no log to clean sleeps before it looks again. It is how long
// a log that has become cleanable waits for a cleaner that keeps up, and
// how often that thread runs retention on compact,delete logs (Kafka's
// retention task skips compacted logs).
const DefaultBackoffMs = 15_000

// Kind says what a record is to the cleaner, and so what removes it.
// The values are those of segviz's JSON output.
type Kind string

// The kinds of records, as Cleaner.shouldRetainRecord and
// CleanedTransactionMetadata tell them apart.
const (
	// KindLatest: the latest record of its key, with a value. Compaction
	// keeps it for as long as no later record of its key is written;
	// only retention (cleanup.policy compact,delete) removes it.
	KindLatest Kind = "latest"
	// KindSuperseded: a later record of its key (a value or a tombstone)
	// is in the log; the first clean whose offset map takes that
	// successor removes it.
	KindSuperseded Kind = "superseded"
	// KindTombstone: the latest record of its key, without a value. It
	// stays until its batch's delete horizon (KIP-534), which the first
	// clean that reads it stamps (that clean's time + delete.retention.ms),
	// and goes at the first clean after the horizon: two passes.
	KindTombstone Kind = "tombstone"
	// KindUnkeyed: a record without a key, which the first clean that
	// reads it drops (Kafka counts it as invalid).
	KindUnkeyed Kind = "unkeyed"
	// KindAborted: a record of an aborted transaction (per the .txnindex).
	// read_committed consumers never see it; the first clean that reads
	// its batch drops it, whatever its key.
	KindAborted Kind = "aborted"
	// KindMarker: a transaction marker (a control record). It stays while
	// batches of its transaction are left, then until a delete horizon.
	KindMarker Kind = "marker"
	// KindAbsent: there is no record at the offset: it is below the log
	// start offset, at or past the log end, or in an offset gap left by
	// an earlier clean (or an emptied batch).
	KindAbsent Kind = "absent"
)

// RecordBound is how long compaction (and, for cleanup.policy
// compact,delete, retention) leaves one record readable. Times are ms
// since the epoch; ret.Never stands for a time that does not come.
//
// Unlike a segment's retention bound, it is a range: when a record goes
// depends on when the cleaner runs, which depends on the dirty ratio,
// and not only on time. NotBefore is when the earliest clean that can
// remove it may run; ReadableUntil the latest time it is still there if
// the cleaner keeps up (it picks a cleanable log within
// DefaultBackoffMs, and its offset map holds the dirty section) and
// nothing more is appended; IfAppendsContinue the same if records keep
// being appended, stamped when appended. Appends only bring removal
// closer (they roll the active segment and dirty the log), so
// IfAppendsContinue ≤ ReadableUntil, and NotBefore ≤ IfAppendsContinue
// unless retention comes first (NotBefore is compaction's alone). For
// KindAbsent all three are Now: nothing at the offset can be read.
type RecordBound struct {
	// Offset is the offset asked about, Now the time the bound was
	// computed at.
	Offset, Now int64
	Kind        Kind
	// Key is the record's key (nil when it has none, and for markers);
	// Tombstone says it has no value. Timestamp is its timestamp.
	Key       []byte
	Tombstone bool
	Timestamp int64
	// Transactional says its batch is transactional; OpenTransaction that
	// its transaction is not decided yet (at or past the last stable
	// offset): should it abort, its records go as KindAborted.
	Transactional, OpenTransaction bool
	// Legacy says it is a v0/v1 message, whose tombstones follow the
	// legacy horizon (its segment's modification time) instead of a
	// delete horizon.
	Legacy bool
	// SegmentBase is the base offset of its segment; ActiveSegment says
	// that segment is the active one, which the cleaner never cleans.
	SegmentBase   int64
	ActiveSegment bool
	// Successor is the offset of the later record of its key that
	// supersedes it (the one the offset map will take), or -1.
	Successor int64
	// DeleteHorizonMs is its batch's delete horizon, or -1 when the batch
	// carries none (record.NoTimestamp).
	DeleteHorizonMs int64
	// RemovedByCleanNow says that a clean at Now (what Plan runs) removes
	// it (never set for a marker: see ReadableUntil); StampedByCleanNow that it stamps the record's batch with a
	// delete horizon (Now + delete.retention.ms) instead, as it does for
	// a tombstone it keeps.
	RemovedByCleanNow, StampedByCleanNow bool
	// NotBefore is the earliest time compaction can remove it: no clean
	// before it can. Never for a record compaction keeps (the latest
	// value of its key, a log that is not compacted).
	NotBefore int64
	// ReadableUntil is the latest time it can still be read if nothing
	// more is appended and the cleaner keeps up: a clean forced by
	// max.compaction.lag.ms, a clean now, or retention. Never when nothing
	// bounds it (without max.compaction.lag.ms a clean waits for the
	// dirty ratio; the active segment rolls only at an append; a
	// tombstone's second clean needs new dirty data).
	ReadableUntil int64
	// IfAppendsContinue is the same if records keep being appended,
	// stamped when appended: the active segment then rolls within
	// segment.ms (max.compaction.lag.ms on a compacted topic, if lower),
	// and max.compaction.lag.ms forces cleans.
	IfAppendsContinue int64
	// Retention is the retention bound of its segment when cleanup.policy
	// has delete (nil otherwise): the cleaner thread runs retention on
	// compact,delete logs about every DefaultBackoffMs. ReadableUntil and
	// IfAppendsContinue already take it into account.
	Retention *ret.SegmentBound
	// HeldBy is the savepoint that keeps the record (nil when none does):
	// one pinning an offset of its segment or of an earlier one, or of a
	// segment a clean that removes it must rewrite. While the hold is in
	// force no clean removes it: NotBefore, ReadableUntil and
	// IfAppendsContinue are Never (unless retention's bound, which holds
	// also stop, is earlier), and the explanation says "held by savepoint
	// ...".
	HeldBy *timeline.Hold
	// DependsOn says, one item each, what its removal waits for.
	DependsOn []string
	// Explanation says in words how the bound was reached.
	Explanation string
}

// ReadableUntil answers, for the partition directory dir with topic
// config cfg and the cleaner state in its log directory (the
// cleaner-offset-checkpoint), until when the record at offset can still
// be read, as Kafka's cleaner treats it at opt's clock:
//
//   - a superseded value (or tombstone) goes at the first clean whose
//     offset map takes its successor. That needs the successor below the
//     first uncleanable offset: its segment closed (the active segment
//     rolled), below the last stable offset, min.compaction.lag.ms past
//     the largest timestamp of every dirty segment up to it; and a clean:
//     the dirty ratio above min.cleanable.dirty.ratio, or
//     max.compaction.lag.ms past a dirty segment's first batch, which
//     forces one;
//   - the latest tombstone of a key stays until its batch's delete
//     horizon, or, not stamped yet, at least delete.retention.ms past the
//     first clean that reads it, and goes at the first clean after the
//     horizon;
//   - the latest value of a key is kept by compaction forever: only
//     retention removes it (cleanup.policy compact,delete; Retention);
//   - records of aborted transactions and unkeyed records go at the first
//     clean that reads them; transaction markers stay while their
//     transaction has batches, then until a delete horizon.
//
// It reads the log as Plan does, read-only and without a lock, and
// builds the offset map when the log is cleanable now, so that it agrees
// with Plan: RemovedByCleanNow is exactly whether the clean Plan
// describes removes the record — except for a transaction marker, whose
// removal depends on the other batches of its transaction: for a marker
// it is always false, and NotBefore a lower bound. Offsets that are not
// in the log get KindAbsent, with a nil error.
func ReadableUntil(fsys vfs.FS, dir string, cfg config.Config, opt Options, offset int64) (RecordBound, error) {
	j := &job{fsys: fsys, dir: path.Clean(dir), cfg: cfg, opt: opt.withDefaults()}
	j.parent = path.Dir(j.dir)
	if st, err := fsys.Stat(j.dir); err != nil {
		return RecordBound{}, err
	} else if !st.IsDir() {
		return RecordBound{}, fmt.Errorf("compaction: %s is not a directory", j.dir)
	}
	now := j.opt.now()
	j.rep = &Report{Dir: j.dir, Now: now}
	if err := j.load(now); err != nil {
		return RecordBound{}, err
	}
	defer j.closeSources()
	j.facts.cleanableRange(j.rep)
	u := &until{j: j, now: now, b: RecordBound{
		Offset: offset, Now: now, Successor: -1, DeleteHorizonMs: record.NoTimestamp,
		NotBefore: ret.Never, ReadableUntil: ret.Never, IfAppendsContinue: ret.Never,
	}}
	if err := u.read(offset); err != nil {
		return RecordBound{}, err
	}
	if u.b.Kind == KindAbsent {
		// Nothing at the offset can be read, from now on.
		u.b.NotBefore, u.b.ReadableUntil, u.b.IfAppendsContinue = now, now, now
		u.b.Explanation = strings.Join(u.why, " ")
		return u.b, nil
	}
	if j.rep.Cleanable {
		// The clean Plan runs now: its offset map says what it removes.
		m, err := NewOffsetMap(j.opt.DedupeBufferSize, j.opt.LoadFactor)
		if err != nil {
			return RecordBound{}, err
		}
		full, err := j.buildOffsetMap(m, j.rep.FirstDirtyOffset, j.rep.FirstUncleanableOffset)
		if err != nil {
			return RecordBound{}, err
		}
		u.m, u.mapFull, u.end = m, full, m.LatestOffset()+1
	}
	u.decide()
	if f := &j.facts; f.hasHeld && u.seg >= f.held {
		u.hold() // compaction keeps what it would anyway; the hold keeps it too
	}
	if u.b.HeldBy != nil {
		h, base := u.b.HeldBy, j.facts.segs[j.facts.held].base
		u.why = append(u.why, fmt.Sprintf("It is held by %s, which pins offsets %d to %d: no clean rewrites segment %d or any later one while the hold is in force, so none removes this record.",
			h, h.FirstOffset, h.LastOffset, base))
	}
	if cfg.Delete() {
		if err := u.retentionBound(); err != nil {
			return RecordBound{}, err
		}
	}
	u.b.Explanation = strings.Join(u.why, " ")
	return u.b, nil
}

// hold marks the record as kept by the first held segment's savepoint.
func (u *until) hold() {
	if u.b.HeldBy == nil {
		h := u.j.facts.heldBy
		u.b.HeldBy = &h
	}
}

// until is one ReadableUntil.
type until struct {
	j   *job
	now int64
	b   RecordBound
	seg int // index of the record's segment in j.srcs
	// succSeg is the successor's segment, succTxn whether its batch is
	// transactional; earlier a later record of the key below the first
	// dirty offset (-1), which no clean will map.
	succSeg int
	succTxn bool
	earlier int64
	// The clean Plan runs now, when the log is cleanable: its map, whether
	// it filled, and its end offset.
	m       *OffsetMap
	mapFull bool
	end     int64
	why     []string
}

// read finds the record at offset, and its successor: the first later
// record of its key (by MD5, as the offset map knows keys) at or past
// the first dirty offset, outside aborted transactions and control
// batches — what the offset map of the clean that reaches it takes.
// Aborted transactions are told as the cleaner tells them: a txnState
// fed with the .txnindex entries, from the start of the record's
// segment on.
func (u *until) read(offset int64) error {
	j, f, b := u.j, &u.j.facts, &u.b
	b.Kind = KindAbsent
	u.earlier = -1
	switch {
	case offset < f.logStart:
		u.why = append(u.why, fmt.Sprintf("Offset %d is below the log start offset %d: it is gone.", offset, f.logStart))
		return nil
	case offset >= f.logEnd:
		u.why = append(u.why, fmt.Sprintf("Offset %d is at or past the log end offset %d: not written yet.", offset, f.logEnd))
		return nil
	}
	k, _ := f.values(offset, offset+1)
	u.seg = k
	b.SegmentBase, b.ActiveSegment = f.segs[k].base, k == len(f.segs)-1
	txn := newTxnState()
	txn.add(j.collectAborted(nil, f.segs[k].base, f.logEnd))
	var (
		rs    record.ReaderScanner
		it    record.EntryIterator
		ctl   record.Iterator
		rec   record.Record
		hash  [md5.Size]byte
		found bool
	)
	from := max(offset+1, j.rep.FirstDirtyOffset)
	for x := k; x < len(j.srcs); x++ {
		s := j.srcs[x].seg
		rs.Reset(readerAt{s}, s.Size(), s.LogPath(), 0)
		for rs.Next() {
			e := rs.Entry()
			aborted, control, transactional := false, false, false
			horizon := record.NoTimestamp
			if e.Magic == record.MagicV2 {
				h := &e.Batch.BatchHeader
				transactional = h.Attributes.IsTransactional()
				if h.Attributes.HasDeleteHorizon() {
					horizon = h.DeleteHorizonMs()
				}
				if h.Attributes.IsControl() {
					control = true
					typ, has, err := controlType(&ctl, &rec, &e.Batch)
					if err != nil {
						return err
					}
					txn.onControl(h, typ, has)
				} else {
					aborted = txn.onBatch(h)
				}
			} else {
				txn.consumeUpTo(e.LastOffset())
			}
			if !found {
				if e.LastOffset() < offset {
					continue
				}
				it.Reset(e)
				for it.Next(&rec) {
					if rec.Offset >= offset {
						found = rec.Offset == offset
						break
					}
				}
				if err := it.Err(); err != nil {
					return err
				}
				if !found {
					u.why = append(u.why, fmt.Sprintf("There is no record at offset %d: an earlier clean removed it (it leaves an offset gap, or an empty batch), or it was never written.", offset))
					return nil
				}
				b.Timestamp, b.Transactional, b.Legacy, b.DeleteHorizonMs = rec.Timestamp, transactional, e.Magic != record.MagicV2, horizon
				b.OpenTransaction = transactional && !aborted && offset >= j.rep.LastStableOffset
				switch {
				case control:
					b.Kind = KindMarker
					return nil
				case aborted:
					b.Kind = KindAborted
					return nil
				case rec.Key == nil:
					b.Kind = KindUnkeyed
					return nil
				}
				b.Key, b.Tombstone = bytes.Clone(rec.Key), rec.Value == nil
				b.Kind = KindLatest
				if b.Tombstone {
					b.Kind = KindTombstone
				}
				hash = md5.Sum(rec.Key)
				continue
			}
			if control || aborted || e.LastOffset() <= offset {
				continue
			}
			it.Reset(e)
			for it.Next(&rec) {
				if rec.Key == nil || rec.Offset <= offset || md5.Sum(rec.Key) != hash {
					continue
				}
				if rec.Offset < from {
					u.earlier = rec.Offset
					continue
				}
				b.Kind, b.Successor, u.succSeg, u.succTxn = KindSuperseded, rec.Offset, x, transactional
				return nil
			}
			if err := it.Err(); err != nil {
				return err
			}
		}
		if err := rs.Err(); err != nil {
			return err
		}
	}
	if !found {
		u.why = append(u.why, fmt.Sprintf("There is no record at offset %d: an earlier clean removed it (it leaves an offset gap, or an empty batch), or it was never written.", offset))
	}
	return nil
}

// coverage is when the cleaner's range [first dirty, first uncleanable)
// can cover one segment whole, and a clean that does can run.
type coverage struct {
	// now says the range covers it now.
	now bool
	// notBefore is the earliest time a clean covering it can run; idle and
	// appends the latest, if nothing more is appended or if appends
	// continue (Never: unbounded).
	notBefore, idle, appends int64
	depends                  []string
}

// cover returns the coverage of segment k: LogCleanerManager's
// cleanableOffsets and the eligibility of grabFilthiestCompactedLog,
// looked at in the future.
func (u *until) cover(k int) coverage {
	f, r, cfg, now := &u.j.facts, u.j.rep, &u.j.cfg, u.now
	last := len(f.segs) - 1
	c := coverage{notBefore: now, idle: ret.Never, appends: ret.Never}
	s := &f.segs[k]
	active := k == last
	next := f.logEnd
	if !active {
		next = f.segs[k+1].base
	}
	minLag := max(cfg.MinCompactionLagMs, 0)
	maxLag := cfg.MaxCompactionLagMs
	forcing := maxLag > 0 && maxLag < math.MaxInt64
	dirtyIdx, _ := f.values(r.FirstDirtyOffset, r.FirstDirtyOffset+1)
	pick := fmt.Sprintf("the cleaner to pick the log (within log.cleaner.backoff.ms, %d ms, when it keeps up)", DefaultBackoffMs)
	if f.hasHeld && f.held <= max(k, dirtyIdx) {
		// A clean that covers segment k rewrites every segment from the
		// log start to k (and at least to the first dirty one): the held
		// segment among them, which no clean rewrites.
		u.hold()
		h := f.heldBy
		return coverage{notBefore: ret.Never, idle: ret.Never, appends: ret.Never,
			depends: []string{fmt.Sprintf("%s to be released: no clean rewrites segment %d, which it holds, or any later one", h, f.segs[f.held].base)}}
	}

	if !active && r.FirstUncleanableOffset >= next {
		c.now = true
		from := dirtyIdx
		dep := fmt.Sprintf("a clean: the dirty ratio (now %.4f) to pass min.cleanable.dirty.ratio %g", r.CleanableRatio, cfg.MinCleanableDirtyRatio)
		switch {
		case r.Cleanable && !(u.mapFull && next > u.end):
			c.idle, c.appends = addMs(now, DefaultBackoffMs), addMs(now, DefaultBackoffMs)
			c.depends = append(c.depends, pick)
			return c
		case r.Cleanable:
			// The clean now stops where its offset map fills; what is
			// dirty from there waits for another clean.
			from, _ = f.values(u.end, u.end+1)
			dep = fmt.Sprintf("a clean after the one now, which stops at offset %d where its offset map fills: the dirty ratio to pass min.cleanable.dirty.ratio %g", u.end, cfg.MinCleanableDirtyRatio)
		}
		// Covered, but no clean now reaches it: a clean comes with the
		// dirty ratio, or when max.compaction.lag.ms forces one.
		if forcing {
			forced := int64(ret.Never)
			at := int64(-1)
			for i := from; i < last; i++ {
				if fb := f.segs[i].firstBatchTs; fb > 0 && fb != math.MaxInt64 {
					if t := addMs(fb, maxLag+1); t < forced {
						forced, at = t, f.segs[i].base
					}
				}
			}
			if forced != ret.Never {
				dep += fmt.Sprintf(", or max.compaction.lag.ms %d past the first batch of dirty segment %d, which forces one at %s", maxLag, at, ret.FormatTime(forced))
				c.idle = addMs(max(now, forced), DefaultBackoffMs)
				c.appends = c.idle
			}
		}
		c.depends = append(c.depends, dep, pick)
		return c
	}

	// Not covered now: what stands in the way.
	if f.lastStable < next {
		c.notBefore = now
		if r.LastStableOffset == r.HighWatermark && r.HighWatermark < r.LogEndOffset {
			c.depends = append(c.depends, fmt.Sprintf("the high watermark (now %d) to reach offset %d: the cleaner never cleans past it", r.HighWatermark, next))
		} else {
			c.depends = append(c.depends, fmt.Sprintf("the transaction open at offset %d (the last stable offset) to commit or abort: the cleaner never cleans past it", r.LastStableOffset))
		}
	}
	lag := now
	if minLag > 0 {
		// Every dirty segment up to k must be past the lag: the first one
		// within it is uncleanable, and so is everything after it.
		at := -1
		for i := dirtyIdx; i <= k; i++ {
			if t := addMs(f.segs[i].largestTs, minLag); t > lag {
				lag, at = t, i
			}
		}
		if at >= 0 && (at < k || !active) {
			c.depends = append(c.depends, fmt.Sprintf("min.compaction.lag.ms %d past the largest timestamp of segment %d (%s): from %s",
				minLag, f.segs[at].base, ret.FormatTime(f.segs[at].largestTs), ret.FormatTime(lag)))
		}
	}
	c.notBefore = max(c.notBefore, lag)
	blocked := f.lastStable < next
	if active {
		maxSeg := cfg.MaxSegmentMs()
		fb := s.firstBatchTs
		if fb <= 0 || fb == math.MaxInt64 {
			fb = now // no batch yet: the next one, appended now
		}
		rollBy := addMs(fb, maxSeg+1)
		c.depends = append(c.depends, fmt.Sprintf("segment %d, the active segment, to roll: at an append that would take it past segment.bytes %d, or one stamped more than %d ms (segment.ms, or max.compaction.lag.ms if lower) after its first batch: after %s",
			s.base, cfg.SegmentSize(), maxSeg, ret.FormatTime(rollBy-1)))
		if minLag > 0 {
			c.depends = append(c.depends, fmt.Sprintf("min.compaction.lag.ms %d past its largest timestamp, once it has rolled", minLag))
		}
		if forcing && !blocked {
			t := max(lag, rollBy)
			if minLag > 0 {
				t = max(t, addMs(rollBy, minLag))
			}
			t = max(t, addMs(fb, maxLag+1))
			c.appends = addMs(t, DefaultBackoffMs)
			c.depends = append(c.depends, fmt.Sprintf("a clean: max.compaction.lag.ms %d past its first batch forces one (the dirty ratio may bring one sooner)", maxLag))
		} else if !blocked {
			c.depends = append(c.depends, fmt.Sprintf("a clean: the dirty ratio to pass min.cleanable.dirty.ratio %g (no max.compaction.lag.ms forces one)", cfg.MinCleanableDirtyRatio))
		}
		c.depends = append(c.depends, pick)
		return c
	}
	if blocked {
		c.depends = append(c.depends, pick)
		return c
	}
	if forcing && s.firstBatchTs > 0 && s.firstBatchTs != math.MaxInt64 {
		t := max(lag, addMs(s.firstBatchTs, maxLag+1))
		c.idle, c.appends = addMs(t, DefaultBackoffMs), addMs(t, DefaultBackoffMs)
		c.depends = append(c.depends, fmt.Sprintf("a clean: the dirty ratio to pass min.cleanable.dirty.ratio %g, or max.compaction.lag.ms %d past the first batch of segment %d (%s), which forces one by %s",
			cfg.MinCleanableDirtyRatio, maxLag, s.base, ret.FormatTime(s.firstBatchTs), ret.FormatTime(t)))
	} else {
		c.depends = append(c.depends, fmt.Sprintf("a clean: the dirty ratio to pass min.cleanable.dirty.ratio %g (no max.compaction.lag.ms forces one)", cfg.MinCleanableDirtyRatio))
	}
	c.depends = append(c.depends, pick)
	return c
}

// afterHorizon bounds, if records keep being appended (stamped when
// appended), the first clean at or after a delete horizon h: the active
// segment of time h rolls within max segment ms of its first batch (no
// later than h), is past min.compaction.lag.ms that much later, and
// max.compaction.lag.ms forces a clean of it; any clean from h on does.
// Never without max.compaction.lag.ms.
func (u *until) afterHorizon(h int64) int64 {
	cfg := &u.j.cfg
	maxLag := cfg.MaxCompactionLagMs
	if h == ret.Never || maxLag <= 0 || maxLag == math.MaxInt64 {
		return ret.Never
	}
	t := max(addMs(h, maxLag+1), addMs(h, addMs(cfg.MaxSegmentMs()+1, max(cfg.MinCompactionLagMs, 0))))
	return addMs(t, DefaultBackoffMs)
}

// decide fills the bound of the record read.
func (u *until) decide() {
	f, r, cfg, b, now := &u.j.facts, u.j.rep, &u.j.cfg, &u.b, u.now
	dr := cfg.DeleteRetentionMs
	dirtyIdx, _ := f.values(r.FirstDirtyOffset, r.FirstDirtyOffset+1)
	own := max(u.seg, dirtyIdx) // a clean that reads the record's segment needs dirty data from there
	base := f.segs[u.seg].base
	reads := u.m != nil && base < u.end // the clean now rewrites the record's segment
	if b.OpenTransaction {
		u.why = append(u.why, "Its transaction is still open: should it abort, the record goes as an aborted one.")
	}
	if !cfg.Compact() {
		b.DependsOn = append(b.DependsOn, fmt.Sprintf("cleanup.policy %s to include compact", strings.Join(cfg.CleanupPolicy, ",")))
		u.why = append(u.why, fmt.Sprintf("cleanup.policy is %s, without compact: the cleaner never cleans this log, and compaction removes nothing.", strings.Join(cfg.CleanupPolicy, ",")))
		return
	}
	keyText := fmt.Sprintf("%q", b.Key)
	fromCoverage := func(c coverage) {
		b.NotBefore, b.ReadableUntil, b.IfAppendsContinue = c.notBefore, c.idle, c.appends
		b.DependsOn = append(b.DependsOn, c.depends...)
	}
	removedNow := func(what string) {
		b.RemovedByCleanNow = true
		b.NotBefore, b.ReadableUntil, b.IfAppendsContinue = now, addMs(now, DefaultBackoffMs), addMs(now, DefaultBackoffMs)
		b.DependsOn = append(b.DependsOn, fmt.Sprintf("the cleaner to pick the log (within log.cleaner.backoff.ms, %d ms, when it keeps up)", DefaultBackoffMs))
		u.why = append(u.why, fmt.Sprintf("The log is cleanable now (range [%d, %d), dirty ratio %.4f) and a clean now %s.", r.FirstDirtyOffset, r.FirstUncleanableOffset, r.CleanableRatio, what))
	}
	switch b.Kind {
	case KindLatest:
		b.DependsOn = append(b.DependsOn, fmt.Sprintf("a later record of key %s to be written: compaction keeps the latest value of a key", keyText))
		u.why = append(u.why, fmt.Sprintf("It is the latest value of key %s: compaction keeps it as long as no later record of the key is written.", keyText))
		if u.earlier >= 0 {
			u.why = append(u.why, fmt.Sprintf("(Offset %d holds a later record of the key, but lies below the first dirty offset %d: the cleaner-offset-checkpoint says it was cleaned already, so no clean maps it again.)", u.earlier, r.FirstDirtyOffset))
		}
	case KindSuperseded:
		what := "value"
		if b.Tombstone {
			what = "tombstone"
		}
		u.why = append(u.why, fmt.Sprintf("It is a superseded %s: offset %d holds a later record of key %s, and the first clean whose offset map takes offset %d removes it.", what, b.Successor, keyText, b.Successor))
		if u.succTxn && b.Successor >= r.LastStableOffset {
			b.DependsOn = append(b.DependsOn, fmt.Sprintf("the transaction of offset %d to commit (if it aborts, that record does not count)", b.Successor))
		}
		if u.m != nil && u.m.Get(b.Key) > b.Offset {
			removedNow(fmt.Sprintf("maps offset %d, removing it", u.m.Get(b.Key)))
			return
		}
		c := u.cover(u.succSeg)
		fromCoverage(c)
		if c.now && u.mapFull {
			u.why = append(u.why, fmt.Sprintf("A clean now stops at offset %d, where its offset map fills; a later clean goes on.", u.end))
		}
	case KindUnkeyed, KindAborted:
		gone := reads
		if b.Kind == KindUnkeyed {
			gone = reads && b.Offset < u.end
			u.why = append(u.why, "It has no key: the first clean that reads it drops it (Kafka counts it as invalid).")
		} else {
			u.why = append(u.why, "It belongs to an aborted transaction: read_committed consumers never see it, and the first clean that reads its batch drops it, whatever its key.")
		}
		if gone {
			removedNow("reads it, removing it")
			return
		}
		fromCoverage(u.cover(own))
	case KindTombstone:
		u.tombstone(own, reads, dr, keyText)
	case KindMarker:
		c := u.cover(own)
		b.DependsOn = append(b.DependsOn, "no batch of its transaction to be left: a clean keeps a marker while it reads batches of the transaction")
		if b.DeleteHorizonMs != record.NoTimestamp {
			b.NotBefore = max(b.DeleteHorizonMs, c.notBefore)
			b.DependsOn = append(b.DependsOn, fmt.Sprintf("a clean after its delete horizon %s", ret.FormatTime(b.DeleteHorizonMs)))
			u.why = append(u.why, fmt.Sprintf("It is a transaction marker whose batch carries the delete horizon %s: a clean after it removes it, once no batch of its transaction is left.", ret.FormatTime(b.DeleteHorizonMs)))
		} else {
			b.NotBefore = addMs(c.notBefore, dr)
			b.DependsOn = append(b.DependsOn, fmt.Sprintf("a clean that finds no batch of its transaction to stamp a delete horizon (that clean + delete.retention.ms %d), and a clean after it", dr))
			u.why = append(u.why, fmt.Sprintf("It is a transaction marker: it stays while batches of its transaction are left; the first clean that finds none stamps a delete horizon (delete.retention.ms %d later) and a clean after that removes it.", dr))
		}
	}
}

// tombstone fills the bound of the latest tombstone of its key.
func (u *until) tombstone(own int, reads bool, dr int64, keyText string) {
	r, b, now := u.j.rep, &u.b, u.now
	c := u.cover(own)
	if b.Legacy {
		u.why = append(u.why, fmt.Sprintf("It is the latest record of key %s, a v0/v1 tombstone: a clean removes it if its segment was last modified at or before the last clean segment's modification time less delete.retention.ms %d; otherwise it rewrites it as a v2 batch with a delete horizon.", keyText, dr))
		if reads {
			if b.Offset < u.end && u.j.srcs[u.seg].lastModified <= r.LegacyDeleteHorizonMs {
				b.RemovedByCleanNow = true
				b.NotBefore, b.ReadableUntil, b.IfAppendsContinue = now, addMs(now, DefaultBackoffMs), addMs(now, DefaultBackoffMs)
				u.why = append(u.why, "A clean now removes it.")
				return
			}
			b.StampedByCleanNow = true
			h := r.DeleteHorizonMs
			b.NotBefore, b.IfAppendsContinue = h, u.afterHorizon(h)
			b.DependsOn = append(b.DependsOn, fmt.Sprintf("a clean after the delete horizon %s", ret.FormatTime(h)))
			u.why = append(u.why, fmt.Sprintf("A clean now rewrites it with the delete horizon %s.", ret.FormatTime(h)))
			return
		}
		b.NotBefore = c.notBefore
		b.DependsOn = append(b.DependsOn, c.depends...)
		b.DependsOn = append(b.DependsOn, "unless its segment is old enough, a clean after the delete horizon that clean stamps")
		if c.appends != ret.Never {
			b.IfAppendsContinue = u.afterHorizon(addMs(c.appends, dr))
		}
		return
	}
	if h := b.DeleteHorizonMs; h != record.NoTimestamp {
		u.why = append(u.why, fmt.Sprintf("It is the latest record of key %s, a tombstone whose batch carries the delete horizon %s (KIP-534): it goes at the first clean at or after it.", keyText, ret.FormatTime(h)))
		if reads && b.Offset < u.end && now >= h {
			b.RemovedByCleanNow = true
			b.NotBefore, b.ReadableUntil, b.IfAppendsContinue = now, addMs(now, DefaultBackoffMs), addMs(now, DefaultBackoffMs)
			u.why = append(u.why, "The horizon has passed and the log is cleanable now: a clean now removes it.")
			return
		}
		b.NotBefore = max(h, c.notBefore)
		b.DependsOn = append(b.DependsOn, fmt.Sprintf("a clean at or after the delete horizon %s", ret.FormatTime(h)))
		b.DependsOn = append(b.DependsOn, c.depends...)
		if now >= h || c.notBefore >= h {
			// Whatever clean comes next runs after the horizon.
			b.ReadableUntil, b.IfAppendsContinue = c.idle, c.appends
		} else {
			b.IfAppendsContinue = u.afterHorizon(h)
			u.why = append(u.why, "A clean before the horizon keeps it; the one after needs new dirty data.")
		}
		return
	}
	u.why = append(u.why, fmt.Sprintf("It is the latest record of key %s, a tombstone whose batch has no delete horizon yet: the first clean that reads it stamps one (that clean's time + delete.retention.ms %d), and the first clean after the horizon removes it.", keyText, dr))
	if reads {
		b.StampedByCleanNow = true
		h := r.DeleteHorizonMs
		b.NotBefore, b.IfAppendsContinue = h, u.afterHorizon(h)
		b.DependsOn = append(b.DependsOn, fmt.Sprintf("a clean at or after the delete horizon %s, which a clean now stamps", ret.FormatTime(h)))
		u.why = append(u.why, fmt.Sprintf("A clean now stamps the horizon %s; the clean after it needs new dirty data.", ret.FormatTime(h)))
		return
	}
	b.NotBefore = addMs(c.notBefore, dr)
	b.DependsOn = append(b.DependsOn, c.depends...)
	b.DependsOn = append(b.DependsOn, fmt.Sprintf("a clean delete.retention.ms %d after the one that stamps it", dr))
	if c.appends != ret.Never {
		b.IfAppendsContinue = u.afterHorizon(addMs(c.appends, dr))
	}
}

// retentionBound bounds the record by retention (cleanup.policy with
// delete), as the cleaner thread runs it: every DefaultBackoffMs, at an
// unknown phase.
func (u *until) retentionBound() error {
	j, b := u.j, &u.b
	l, err := kafkalog.Open(j.fsys, j.dir, j.cfg, kafkalog.Options{ReadOnly: true, Clock: j.opt.Clock})
	if err != nil {
		return err
	}
	defer l.Close()
	st, err := ret.StateOf(l)
	if err != nil {
		return err
	}
	st.HighWatermark = min(max(j.facts.highWatermark, st.LogStartOffset), st.LogEndOffset)
	st.Holds = ret.MergeHolds(st.Holds, j.facts.holds)
	p := ret.PolicyFrom(j.cfg, config.Broker{RetentionCheckIntervalMs: DefaultBackoffMs})
	fc, err := ret.ReadableUntil(st, p, p.UnknownSchedule(), u.now)
	if err != nil {
		return err
	}
	sb, ok := fc.ForOffset(b.Offset)
	if !ok {
		return nil
	}
	b.Retention = &sb
	if sb.ReadableUntil < b.ReadableUntil || sb.IfAppendsContinue < b.IfAppendsContinue {
		u.why = append(u.why, fmt.Sprintf("Retention (cleanup.policy with delete, run by the cleaner thread) deletes its segment by %s: %s", ret.FormatTime(sb.ReadableUntil), sb.Explanation))
	}
	b.ReadableUntil = min(b.ReadableUntil, sb.ReadableUntil)
	b.IfAppendsContinue = min(b.IfAppendsContinue, sb.IfAppendsContinue, b.ReadableUntil)
	return nil
}

// addMs adds d to t, staying at ret.Never (math.MaxInt64) rather
// than overflowing.
func addMs(t, d int64) int64 {
	if t == ret.Never || d == ret.Never {
		return ret.Never
	}
	if d > 0 && t > ret.Never-d {
		return ret.Never
	}
	return t + d
}

// minus returns what r counts beyond was: what went between two points
// of a clean (Group.Removed is filled with it, source by source).
func (r Removal) minus(was Removal) Removal {
	return Removal{
		Records: r.Records - was.Records, Bytes: r.Bytes - was.Bytes,
		Superseded: r.Superseded - was.Superseded, Tombstones: r.Tombstones - was.Tombstones,
		Unkeyed: r.Unkeyed - was.Unkeyed, Aborted: r.Aborted - was.Aborted, Markers: r.Markers - was.Markers,
		Batches: r.Batches - was.Batches, BatchesEmptied: r.BatchesEmptied - was.BatchesEmptied,
		BatchesRewritten: r.BatchesRewritten - was.BatchesRewritten, BatchesCopied: r.BatchesCopied - was.BatchesCopied,
	}
}
