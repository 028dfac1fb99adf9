package compaction

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/record"
	ret "github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// CleanerCheckpointFile is the log directory's file of cleaner positions
// (LogCleanerManager.OFFSET_CHECKPOINT_FILE): one "topic partition
// offset" line per compacted partition, the offset where its next clean
// starts.
const CleanerCheckpointFile = checkpoint.CleanerOffsetFile

// Plan returns what Clean would do now to the partition directory dir,
// with the topic config cfg, and writes nothing: the cleanable range and
// dirty ratio, whether the log is cleanable and why not, and — when it
// is — the whole clean run in memory: the offset map, Kafka's stats, the
// groups of segments, what would be removed and which delete horizons
// the kept tombstones and markers would carry.
//
// Plan opens the log read-only and takes no lock: it reads the files as
// they are (no recovery, no leftovers resolved), and a writer working on
// the directory meanwhile can make its answer stale.
func Plan(fsys vfs.FS, dir string, cfg config.Config, opt Options) (*Report, error) {
	return run(fsys, dir, cfg, opt, false)
}

// Clean compacts the partition directory dir once, as a Kafka 4.3
// broker's log cleaner does when it picks the partition: if the log is
// cleanable (see Plan and Report.Why) it builds the offset map over the
// dirty section, rewrites the segments below the map's end in groups,
// swaps each group's cleaned segment in through the .cleaned → .swap →
// rename protocol, and records the new position in the log directory's
// cleaner-offset-checkpoint. It returns what it did. A log that is not
// cleanable is left as it is (but a checkpoint reset to the log start
// offset is written, as Kafka writes it), with a nil error.
//
// Clean takes the partition's lock (kafkalog.LockPartition) for its whole run
// and opens the log for writing first, so that a torn tail is recovered
// and leftovers of an interrupted clean are resolved before it reads
// anything. It fails with a *kafkalog.LockError if a broker or another writer
// holds the log directory, with an error matching ErrNotCompacted if
// cfg's cleanup.policy has no compact, with the *kafkalog.CorruptLogError of
// kafkalog.Open if the log holds corruption only a repair may truncate (Kafka's
// loader would truncate it; segkit's writers do not, see kafkalog.Options), and
// with an fs.ErrNotExist error for a directory that does not exist.
//
// A clean that rewrites segments is recorded on the partition's timeline
// as one compaction instant (Report.Instant; see the package
// documentation, "The timeline"); a timeline that cannot be read stops
// Clean before it changes anything.
//
// A crash at any point leaves a directory that kafkalog.Open (and Kafka's
// LogLoader) brings to either the old segments or the cleaned ones, group
// by group; see the package documentation.
func Clean(fsys vfs.FS, dir string, cfg config.Config, opt Options) (*Report, error) {
	if !cfg.Compact() {
		return nil, fmt.Errorf("%w: %s has cleanup.policy %v", ErrNotCompacted, dir, cfg.CleanupPolicy)
	}
	return run(fsys, dir, cfg, opt, true)
}

// source is one segment of the log being cleaned.
type source struct {
	segFacts
	seg  *segment.Segment // opened read-only for the clean
	txns []index.AbortedTxn
}

// job is one Plan or Clean.
type job struct {
	fsys   vfs.FS
	dir    string
	parent string
	tp     checkpoint.TopicPartition
	cfg    config.Config
	opt    Options
	write  bool
	facts  logFacts
	srcs   []source
	rep    *Report
	buf    []byte
	rs     record.ReaderScanner
	marker struct {
		present bool
		epoch   int64
	}
	// Clean's record on the partition's timeline: the timeline, opened
	// with the log; the clean's compaction instant, once begun, and its
	// plan; the segments written so far; and whether a swap has begun to
	// rename files (before it, a failed clean changed nothing a loader
	// keeps, and its instant is rolled back).
	tl      *timeline.Timeline
	txn     *timeline.Txn
	plan    *timeline.Compaction
	cleaned []timeline.SegmentRef
	renamed bool
}

func run(fsys vfs.FS, dir string, cfg config.Config, opt Options, write bool) (*Report, error) {
	j := &job{fsys: fsys, dir: path.Clean(dir), cfg: cfg, opt: opt.withDefaults(), write: write}
	j.parent = path.Dir(j.dir)
	if st, err := fsys.Stat(j.dir); err != nil {
		return nil, err // Clean must not create a partition
	} else if !st.IsDir() {
		return nil, fmt.Errorf("compaction: %s is not a directory", j.dir)
	}
	now := j.opt.now()
	j.rep = &Report{Dir: j.dir, Now: now}
	if write {
		lk, err := kafkalog.LockPartition(fsys, j.dir)
		if err != nil {
			return nil, err
		}
		defer lk.Close()
	}
	if err := j.load(now); err != nil {
		return nil, err
	}
	defer j.closeSources()
	j.facts.cleanableRange(j.rep)
	if !j.rep.Cleanable {
		if write && j.rep.CheckpointReset {
			if err := j.writeCheckpoint(j.rep.FirstDirtyOffset); err != nil {
				return j.rep, err
			}
		}
		return j.rep, nil
	}
	err := j.clean()
	if write {
		// The cleaner thread's finally: the new position, or the old one
		// if the clean failed (doneCleaning).
		end := j.rep.EndOffset
		if err != nil {
			end = j.rep.FirstDirtyOffset
		}
		err = errors.Join(err, j.writeCheckpoint(end))
		// The instant completes after the last swap's last sync and the
		// checkpoint, and before the clean-shutdown marker is back: the
		// marker says everything is durable, the timeline included.
		err = j.finishInstant(err)
		if err == nil && j.marker.present {
			err = checkpoint.WriteCleanShutdown(fsys, j.parent, j.marker.epoch)
		}
	}
	return j.rep, err
}

// beginWrite is what Clean does before its first change, once the
// offset map and the groups are known: it begins the clean's compaction
// instant (REQUESTED, with the plan: every segment of the groups it
// rewrites), makes it INFLIGHT, and sets the log directory's
// clean-shutdown marker aside (no marker until everything is durable
// again). A clean that rewrites nothing (no groups) records nothing.
//
// INFLIGHT is written here, before the first .cleaned file is created,
// rather than at the first rename, which is the first change a loader
// keeps (a crash that leaves only .cleaned files leaves what Kafka's
// loader deletes): the timeline's rule is INFLIGHT before the first
// file changes, so that a requested instant has written nothing — which
// is what kafkalog's judge takes it to mean — and waiting for the rename
// would buy nothing: either way the clean writes two durable records
// before its first change, and a failure before the first rename rolls
// the instant back (j.renamed).
func (j *job) beginWrite(groups [][2]int) error {
	r := j.rep
	if len(groups) > 0 {
		p := &timeline.Compaction{
			Now: r.Now, FirstDirtyOffset: r.FirstDirtyOffset, EndOffset: r.EndOffset,
			DeleteRetentionMs: j.cfg.DeleteRetentionMs,
		}
		for _, g := range groups {
			for x := g[0]; x < g[1]; x++ {
				p.Sources = append(p.Sources, j.srcRef(x))
			}
		}
		x, err := j.tl.Begin(timeline.ActionCompaction, p)
		if err != nil {
			return fmt.Errorf("compaction: record the clean on the timeline, so nothing was cleaned: %w", err)
		}
		j.txn, j.plan = x, p
		if err := x.Inflight(); err != nil {
			return fmt.Errorf("compaction: record the clean on the timeline, so nothing was cleaned: %w", err)
		}
	}
	present, epoch, err := checkpoint.ReadCleanShutdown(j.fsys, j.parent)
	if err != nil {
		return err
	}
	j.marker.present, j.marker.epoch = present, epoch
	if present {
		if err := checkpoint.RemoveCleanShutdown(j.fsys, j.parent); err != nil {
			return err
		}
	}
	return nil
}

// srcRef describes source x for the timeline: its next offset is the
// next segment's base (a group never holds the active segment).
func (j *job) srcRef(x int) timeline.SegmentRef {
	s := &j.srcs[x]
	next := j.facts.logEnd
	if x+1 < len(j.srcs) {
		next = j.srcs[x+1].base
	}
	return timeline.SegmentRef{BaseOffset: s.base, NextOffset: next, Size: s.size, LargestTimestamp: s.largestTs}
}

// finishInstant completes the clean's instant when err is nil, with the
// result: the sources, the segments written, the end offset and the
// records removed by reason. After a failure it rolls the instant back
// when no swap had begun to rename (nothing a loader keeps was changed),
// and otherwise leaves it inflight for the next writable kafkalog.Open
// with Options.Timeline, which completes it with the groups swapped in.
func (j *job) finishInstant(err error) error {
	x := j.txn
	if x == nil {
		return err
	}
	t := x.Instant().Time
	if err != nil {
		if !j.renamed {
			if rerr := x.Rollback("failed before changing anything: " + err.Error()); rerr != nil {
				return errors.Join(err, fmt.Errorf("compaction: roll back instant %s: %w", t, rerr))
			}
			return fmt.Errorf("%w (nothing was changed; compaction instant %s rolled back)", err, t)
		}
		return fmt.Errorf("%w (compaction instant %s left inflight: the next open of the log with its timeline resolves it)", err, t)
	}
	r := j.rep
	res := *j.plan
	res.EndOffset = r.EndOffset
	res.Cleaned = j.cleaned
	res.RecordsRemoved = map[string]int64{
		"superseded": r.Removed.Superseded, "tombstone": r.Removed.Tombstones, "aborted": r.Removed.Aborted,
		"unkeyed": r.Removed.Unkeyed, "marker": r.Removed.Markers,
	}
	if err := x.Complete(&res); err != nil {
		return fmt.Errorf("compaction: the clean is done, but recording it failed (compaction instant %s left inflight: the next open of the log with its timeline completes it): %w", t, err)
	}
	inst := x.Instant()
	r.Instant = &inst
	return nil
}

// load opens the log as a broker would, reads what the range rules need,
// rebuilds the producer state, and opens every segment read-only for the
// clean.
func (j *job) load(now int64) error {
	_, epoch, err := checkpoint.ReadCleanShutdown(j.fsys, j.parent)
	if err != nil {
		return err
	}
	l, err := kafkalog.Open(j.fsys, j.dir, j.cfg, kafkalog.Options{
		Clock: j.opt.Clock, ReadOnly: !j.write, Locked: j.write, BrokerEpoch: epoch,
		// Clean opens the timeline with the log: Open resolves what an
		// earlier run left pending, under the lock Clean holds, and stops
		// before changing anything if the timeline cannot be read.
		Timeline: j.write,
	})
	if err != nil {
		return err
	}
	j.tl = l.Timeline()
	segs := l.Segments()
	f := &j.facts
	f.cfg, f.now = j.cfg, now
	f.logStart, f.logEnd = l.LogStartOffset(), l.LogEndOffset()
	f.highWatermark = f.logEnd
	if hw := j.opt.HighWatermark; hw > 0 {
		f.highWatermark = min(max(hw, f.logStart), f.logEnd)
	}
	j.tp = l.TopicPartition()
	readers := make([]segReader, len(segs))
	for i, s := range segs {
		readers[i] = s
	}
	pv, err := loadProducers(j.fsys, j.dir, readers, f.logStart, f.logEnd, l.LoadReport().CleanShutdown, now, j.opt.ProducerIDExpirationMs)
	if err != nil {
		l.Close()
		return err
	}
	pv.state.OnHighWatermarkUpdated(f.highWatermark)
	f.lastStable = f.highWatermark
	if fu, ok := pv.state.FirstUnstableOffset(); ok && fu < f.highWatermark {
		f.lastStable = fu
	}
	f.activeProducer = pv.active
	f.segs = make([]segFacts, len(segs))
	for i, s := range segs {
		sf, err := describe(j.fsys, s)
		if err != nil {
			l.Close()
			return err
		}
		f.segs[i] = sf
	}
	if err := l.Close(); err != nil {
		return err
	}
	if m, err := checkpoint.ReadOffsets(j.fsys, path.Join(j.parent, CleanerCheckpointFile)); err == nil {
		f.checkpoint, f.hasCheckpoint = m[j.tp]
	}
	if err := j.loadHolds(); err != nil {
		return err
	}

	r := j.rep
	r.LogStartOffset, r.LogEndOffset = f.logStart, f.logEnd
	r.HighWatermark, r.LastStableOffset = f.highWatermark, f.lastStable
	for _, p := range pv.active {
		r.ActiveProducers = append(r.ActiveProducers, p)
	}
	slices.SortFunc(r.ActiveProducers, func(a, b Producer) int { return cmp.Compare(a.ProducerID, b.ProducerID) })

	// The segments, read-only, with their aborted transactions.
	segCfg := segment.Config{IndexIntervalBytes: int(j.cfg.IndexIntervalBytes), MaxIndexSize: int(j.cfg.SegmentIndexBytes)}
	j.srcs = make([]source, len(f.segs))
	for i := range f.segs {
		s, err := segment.Open(j.fsys, j.dir, f.segs[i].base, segCfg, segment.OpenOptions{Clock: j.opt.Clock, ReadOnly: true})
		if err != nil {
			j.closeSources()
			return err
		}
		j.srcs[i] = source{segFacts: f.segs[i], seg: s}
		tx, err := s.TransactionIndex()
		if err != nil {
			j.closeSources()
			return err
		}
		j.srcs[i].txns = tx.All()
	}
	return nil
}

// loadHolds reads the savepoints in force from the partition's timeline
// (read-only for a Plan, which writes nothing; a Clean reads the one it
// opened with the log, under the lock it holds, so no savepoint can be
// taken meanwhile), adds Options.Holds and finds the first held segment.
// A timeline that cannot be read stops the job: a hold that cannot be
// read is not taken for no hold.
func (j *job) loadHolds() error {
	tl := j.tl
	if tl == nil {
		var err error
		if tl, err = timeline.Open(j.fsys, j.dir, timeline.Options{ReadOnly: true}); err != nil {
			return fmt.Errorf("compaction: the savepoints of %s: %w", j.dir, err)
		}
	}
	holds, err := tl.Holds()
	if err != nil {
		return fmt.Errorf("compaction: the savepoints of %s: %w", j.dir, err)
	}
	f := &j.facts
	f.holds = ret.MergeHolds(holds, j.opt.Holds)
	f.findHeld()
	return nil
}

// describe reads the facts of one segment of the open log.
func describe(fsys vfs.FS, s kafkalog.SegmentView) (segFacts, error) {
	f := segFacts{base: s.BaseOffset(), size: s.Size()}
	var err error
	if f.indexBytes, err = indexBytes(fsys, s.IndexPath(), index.EntrySize, s.OffsetIndexBytes); err != nil {
		return f, err
	}
	if f.timeIndexBytes, err = indexBytes(fsys, s.TimeIndexPath(), timeindex.EntrySize, s.TimeIndexBytes); err != nil {
		return f, err
	}
	if f.largestTs, err = s.LargestTimestamp(); err != nil {
		return f, err
	}
	if f.firstBatchTs, err = s.FirstBatchTimestamp(); err != nil {
		return f, err
	}
	if f.lastModified, err = s.LastModified(); err != nil {
		return f, err
	}
	return f, nil
}

// indexBytes is an index's sizeInBytes as Kafka has it for a segment it
// loaded: the file's length in whole entries (zero padding included, as
// Kafka trusts an existing file), or, with no file, what an index built
// from the .log would hold.
func indexBytes(fsys vfs.FS, p string, entrySize int, built func() (int, error)) (int64, error) {
	st, err := fsys.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		n, err := built()
		return int64(n), err
	}
	if err != nil {
		return 0, err
	}
	return st.Size() / int64(entrySize) * int64(entrySize), nil
}

// scanner is the job's ReaderScanner, reading chunks of the cleaner's IO
// buffer size (at least 64 KiB): the map's pass and every group's reuse
// its buffer.
func (j *job) scanner() *record.ReaderScanner {
	j.rs.ChunkSize = max(j.opt.IOBufferSize, 64<<10)
	return &j.rs
}

func (j *job) closeSources() {
	for i := range j.srcs {
		if s := j.srcs[i].seg; s != nil {
			s.CloseHandlers()
			j.srcs[i].seg = nil
		}
	}
}

// collectAborted is UnifiedLog.collectAbortedTransactions(from, upper):
// from the segment holding from on, the aborted transactions whose last
// offset is at or above the log start offset and whose first offset is
// below upper, until an entry's last stable offset reaches upper.
func (j *job) collectAborted(dst []index.AbortedTxn, from, upper int64) []index.AbortedTxn {
	i, _ := j.facts.values(from, from+1)
	if len(j.srcs) == 0 || j.srcs[i].base > from {
		return dst
	}
	logStart := j.facts.logStart
	for ; i < len(j.srcs); i++ {
		for _, t := range j.srcs[i].txns {
			if t.LastOffset >= logStart && t.FirstOffset < upper {
				dst = append(dst, t)
			}
			if t.LastStableOffset >= upper {
				return dst
			}
		}
	}
	return dst
}

// clean builds the offset map and rewrites the groups.
func (j *job) clean() error {
	r := j.rep
	m, err := NewOffsetMap(j.opt.DedupeBufferSize, j.opt.LoadFactor)
	if err != nil {
		return err
	}
	r.MapSlots, r.MapCapacity = m.Slots(), m.Capacity()
	upper := r.FirstUncleanableOffset
	full, err := j.buildOffsetMap(m, r.FirstDirtyOffset, upper)
	if err != nil {
		return err
	}
	r.MapFull, r.MapEntries, r.MapBytes = full, m.Size(), m.TableBytes()
	r.EndOffset = m.LatestOffset() + 1

	f := &filter{
		now:               r.Now,
		deleteRetentionMs: j.cfg.DeleteRetentionMs,
		m:                 m,
		active:            j.facts.activeProducer,
		upper:             upper,
		txn:               newTxnState(),
		stats:             &r.Stats,
		removed:           &r.Removed,
		horizons:          map[int64]*Horizon{},
	}
	i, k := j.facts.values(0, r.EndOffset)
	if j.facts.hasHeld && k > j.facts.held {
		// cleanableRange ends the range at the first held segment; this
		// guards the rewrite itself.
		return fmt.Errorf("compaction: the clean would rewrite segment %d, held by %s", j.facts.segs[j.facts.held].base, j.facts.heldBy)
	}
	groups := j.facts.groupBySize(i, k, int64(j.cfg.SegmentSize()), int64(j.cfg.SegmentIndexBytes), upper)
	if j.write {
		if err := j.beginWrite(groups); err != nil {
			return err
		}
	}
	for _, g := range groups {
		if err := j.cleanGroup(f, g[0], g[1]); err != nil {
			return err
		}
	}
	r.Stats.BufferUtilization = m.Utilization()
	for _, h := range f.horizons {
		r.Horizons = append(r.Horizons, *h)
	}
	slices.SortFunc(r.Horizons, func(a, b Horizon) int { return cmp.Compare(a.DeleteHorizonMs, b.DeleteHorizonMs) })
	return nil
}

// buildOffsetMap is Cleaner.buildOffsetMap over [start, end): the latest
// offset of every key in the dirty segments, leaving out aborted
// transactions, until the map is full. It reports whether it filled.
func (j *job) buildOffsetMap(m *OffsetMap, start, end int64) (bool, error) {
	m.Clear()
	i, k := j.facts.values(start, end)
	txn := newTxnState()
	txn.add(j.collectAborted(nil, start, end))
	mb := mapBuilder{
		m: m, txn: txn, start: start, stats: &j.rep.Stats, rs: j.scanner(),
		ioBuffer: j.opt.IOBufferSize, maxIOBuffer: j.opt.MaxIOBufferSize, maxMessage: int(j.cfg.MaxMessageBytes),
	}
	for x := i; x < k; x++ {
		next := end
		if x+1 < k {
			next = j.srcs[x+1].base
		}
		full, err := mb.segment(j.srcs[x].seg, next)
		if err != nil || full {
			return full, err
		}
	}
	return false, nil
}

// mapBuilder is Cleaner.buildOffsetMapForSegment.
type mapBuilder struct {
	m                     *OffsetMap
	txn                   *txnState
	start                 int64
	stats                 *Stats
	ioBuffer, maxIOBuffer int
	maxMessage            int
	it                    record.EntryIterator
	ctl                   record.Iterator
	rec                   record.Record
	rs                    *record.ReaderScanner
	chunk, bufSize        int
	// The entry being mapped: each record's offset, -1 for one not put;
	// the keys put and their hashes.
	pend   []int64
	keys   [][]byte
	hashes []keyHash
}

// segment adds the records of s from the offset index's position of
// start on; next is the base offset of the next dirty segment (or the end
// of the dirty section).
func (b *mapBuilder) segment(s *segment.Segment, next int64) (bool, error) {
	// The index's position of start; for a segment after start, whose
	// entries are all past it, the start of the file. (Its index is then
	// not loaded: the map's pass keeps no segment's index but the first's.)
	pos := int64(0)
	if b.start >= s.BaseOffset() {
		oi, err := s.OffsetIndex()
		if err != nil {
			return false, err
		}
		pos = int64(oi.Lookup(b.start).Position)
	}
	b.rs.Reset(readerAt{s}, s.Size(), s.LogPath(), pos)
	b.bufSize, b.chunk = b.ioBuffer, 0
	for b.rs.Next() {
		e := b.rs.Entry()
		if err := b.fit(e.Size()); err != nil {
			return false, err
		}
		full, err := b.entry(e)
		if err != nil || full {
			return full, err
		}
		b.chunk += e.Size()
	}
	if err := b.rs.Err(); err != nil {
		return false, err
	}
	b.stats.MapBytesRead += int64(b.chunk)
	b.m.UpdateLatestOffset(next - 1)
	return false, nil
}

// fit emulates the cleaner's read chunks, for Stats.MapBytesRead: a chunk
// is the whole entries that fit its buffer; a chunk's bytes count once
// all its entries are read; an entry larger than the buffer grows it
// (Cleaner.growBuffersOrFail).
func (b *mapBuilder) fit(size int) error {
	if b.chunk+size <= b.bufSize {
		return nil
	}
	b.stats.MapBytesRead += int64(b.chunk)
	b.chunk = 0
	for b.bufSize < size {
		maxSize := b.maxMessage
		if b.bufSize >= b.maxMessage {
			maxSize = size
		}
		maxBuf := max(maxSize, b.maxIOBuffer)
		if b.bufSize >= maxBuf {
			return fmt.Errorf("%w: %d bytes, buffers at most %d", ErrMessageTooLarge, size, maxBuf)
		}
		b.bufSize = min(b.bufSize*2, maxBuf)
	}
	return nil
}

// entry maps one entry's records; it reports whether the map filled.
func (b *mapBuilder) entry(e *record.Entry) (bool, error) {
	last := e.LastOffset()
	if e.Magic == record.MagicV2 {
		h := &e.Batch.BatchHeader
		if h.Attributes.IsControl() {
			typ, has, err := controlType(&b.ctl, &b.rec, &e.Batch)
			if err != nil {
				return false, err
			}
			b.txn.onControl(h, typ, has)
			b.stats.MapMessagesRead++
			if last >= b.start {
				b.m.UpdateLatestOffset(last)
			}
			return false, nil
		}
		if b.txn.onBatch(h) {
			b.stats.MapMessagesRead += int64(h.RecordCount)
			if last >= b.start {
				b.m.UpdateLatestOffset(last)
			}
			return false, nil
		}
	} else {
		b.txn.consumeUpTo(last)
	}
	// The records are decoded first, then their keys hashed together
	// (eight at a time, hashKeys) and their slots prefetched together,
	// and then put in order: the slots' cache misses overlap.
	b.pend, b.keys = b.pend[:0], b.keys[:0]
	b.it.Reset(e)
	for b.it.Next(&b.rec) {
		off := int64(-1)
		if b.rec.Key != nil && b.rec.Offset >= b.start {
			off = b.rec.Offset
			b.keys = append(b.keys, b.rec.Key)
		}
		b.pend = append(b.pend, off)
	}
	b.hashes = slices.Grow(b.hashes[:0], len(b.keys))[:len(b.keys)]
	hashKeys(b.hashes, b.keys)
	b.m.prefetch(b.hashes)
	k := 0
	for _, off := range b.pend {
		if off >= 0 {
			if b.m.Full() {
				return true, nil
			}
			if err := b.m.putHash(b.hashes[k], off); err != nil {
				return false, err
			}
			k++
		}
		b.stats.MapMessagesRead++
	}
	if err := b.it.Err(); err != nil {
		return false, err
	}
	if last >= b.start {
		b.m.UpdateLatestOffset(last)
	}
	return false, nil
}

// cleanGroup rewrites the sources [a, z) into one segment
// (Cleaner.cleanSegments) and, for Clean, swaps it in.
func (j *job) cleanGroup(f *filter, a, z int) error {
	r := j.rep
	base := j.srcs[a].base
	g := Group{BaseOffset: base}
	var w *cleanedWriter
	if j.write {
		var err error
		if w, err = newCleanedWriter(j.fsys, j.dir, base, int(j.cfg.IndexIntervalBytes), int(j.cfg.SegmentIndexBytes), j.buf); err != nil {
			return err
		}
	}
	var kept []index.AbortedTxn
	f.txn.cleaned = &kept
	emit := func(b []byte, lastOffset, maxTs int64) error {
		g.SizeAfter += int64(len(b))
		if w == nil {
			return nil
		}
		return w.add(b, lastOffset, maxTs)
	}
	fail := func(err error) error {
		if w != nil {
			w.abort()
		}
		return err
	}
	rs := j.scanner()
	var scratch []index.AbortedTxn
	for x := a; x < z; x++ {
		src := &j.srcs[x]
		was := r.Removed
		g.Sources = append(g.Sources, src.base)
		g.SizeBefore += src.size
		upperX := int64(0)
		if x+1 < z {
			upperX = j.srcs[x+1].base
		} else {
			next, err := src.seg.ReadNextOffset()
			if err != nil {
				return fail(err)
			}
			upperX = next
		}
		scratch = j.collectAborted(scratch[:0], src.base, upperX)
		f.txn.add(scratch)
		f.retainLegacyDeletes = src.lastModified > r.LegacyDeleteHorizonMs
		rs.Reset(readerAt{src.seg}, src.seg.Size(), src.seg.LogPath(), 0)
		for rs.Next() {
			e := rs.Entry()
			if err := f.filterEntry(e, emit); err != nil {
				return fail(fmt.Errorf("compaction: %s at byte %d: %w", src.seg.LogPath(), e.Position, err))
			}
			if w != nil {
				for _, t := range kept {
					if err := w.addAborted(t); err != nil {
						return fail(err)
					}
				}
			}
			kept = kept[:0]
		}
		if err := rs.Err(); err != nil {
			return fail(err)
		}
		g.Removed = append(g.Removed, r.Removed.minus(was))
	}
	r.Groups = append(r.Groups, g)
	if w == nil {
		return nil
	}
	mtime := j.srcs[z-1].lastModified
	if err := w.finish(mtime); err != nil {
		return fail(err)
	}
	j.buf = w.buf
	// The segment written, as the log will describe it once swapped in:
	// the largest timestamp is its time index's last entry, or, with
	// none, the modification time finish gave it (Segment.LargestTimestamp).
	c := j.srcRef(z - 1)
	c.BaseOffset, c.Size, c.LargestTimestamp = base, w.size, w.maxTs
	if w.maxTs < 0 {
		c.LargestTimestamp = mtime
	}
	if err := j.swap(base, a, z); err != nil {
		return err
	}
	j.cleaned = append(j.cleaned, c)
	return nil
}

// swap replaces the sources [a, z) with the cleaned segment at base
// (LocalLog.replaceSegments): .cleaned → .swap, durably; the sources →
// .deleted; .swap → the normal names, durably; then the .deleted files
// and the producer snapshots of the sources not replaced go.
func (j *job) swap(base int64, a, z int) error {
	fsys, dir := j.fsys, j.dir
	// The .cleaned files' creation must be durable before any of them is
	// renamed .swap: otherwise a power cut can keep a rename and lose the
	// file beside it, leaving a lone .index.swap (or .timeindex.swap) that
	// the loader renames over the source's index (oracle
	// TestCompactionCrashMatchesKafka found it; Kafka has the same window).
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return err
	}
	j.renamed = true // from here on a failure may leave a change the loader keeps
	if err := renameSegment(fsys, dir, base, segment.CleanedSuffix, segment.SwapSuffix); err != nil {
		return err
	}
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return err
	}
	for x := a; x < z; x++ {
		src := &j.srcs[x]
		src.seg.CloseHandlers()
		src.seg = nil
		if err := renameSegment(fsys, dir, src.base, "", segment.DeletedSuffix); err != nil {
			return err
		}
	}
	// The sources' renames to .deleted must be durable before the cleaned
	// segment takes its name: otherwise a power cut can keep the cleaned
	// segment and lose a source's rename, leaving two segments that overlap.
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return err
	}
	if err := renameSegment(fsys, dir, base, segment.SwapSuffix, ""); err != nil {
		return err
	}
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return err
	}
	for x := a; x < z; x++ {
		b := j.srcs[x].base
		for _, ext := range cleanedExts {
			if err := fsys.Remove(segment.Path(dir, b, ext+segment.DeletedSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		if b != base {
			if err := producer.DeleteSnapshot(fsys, dir, b); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return vfs.SyncDir(fsys, dir)
}

// writeCheckpoint sets this partition's entry of the log directory's
// cleaner-offset-checkpoint to offset, keeping the other entries.
func (j *job) writeCheckpoint(offset int64) error {
	p := path.Join(j.parent, CleanerCheckpointFile)
	m, err := checkpoint.ReadOffsets(j.fsys, p)
	if err != nil {
		m = map[checkpoint.TopicPartition]int64{} // none, or unreadable: rewritten with what we know
	}
	m[j.tp] = offset
	return checkpoint.WriteOffsets(j.fsys, p, m)
}
