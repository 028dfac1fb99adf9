package tier

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// EventKind says what an Event records.
type EventKind int8

// The events a Tier reports through Options.OnEvent.
const (
	// EventCopyStarted: a COPY_SEGMENT_STARTED record is durable.
	EventCopyStarted EventKind = iota
	// EventCopyFinished: the files and the COPY_SEGMENT_FINISHED record
	// are durable.
	EventCopyFinished
	// EventDeleteStarted: a DELETE_SEGMENT_STARTED record is durable.
	EventDeleteStarted
	// EventDeleteFinished: the files are gone and DELETE_SEGMENT_FINISHED
	// is durable.
	EventDeleteFinished
	// EventLocalDelete: local segments were deleted (the local log start
	// offset moved to LocalLogStartOffset, durably).
	EventLocalDelete
)

// Event is one durable step, for an audit trail (the timeline's seam).
type Event struct {
	Kind EventKind
	// Segment is the remote segment (copy and delete events).
	Segment SegmentMetadata
	// Reason is why a deletion happened (a Reason* constant, or
	// "failed copy" / "start-up" for cleanups).
	Reason string
	// Segments, LocalLogStartOffset: for EventLocalDelete, how many local
	// segments went and the new local log start offset.
	Segments            int
	LocalLogStartOffset int64
}

// Options tune a Tier.
type Options struct {
	// Clock stamps event times and drives retention; nil is the wall clock.
	Clock segment.Clock
	// Rand draws segment ids; nil is crypto/rand.
	Rand io.Reader
	// BrokerID is written into the metadata.
	BrokerID int32
	// OnEvent, if set, is called after every durable step, in order.
	OnEvent func(Event)
}

// StartReport is what Open's start-up resolution did.
type StartReport struct {
	// CopiesAbandoned are COPY_SEGMENT_STARTED segments whose files were
	// deleted (Kafka deletes a failed copy); DeletesFinished are
	// DELETE_SEGMENT_STARTED segments deleted again.
	CopiesAbandoned, DeletesFinished []SegmentMetadata
	// TempRemoved are temporary files of interrupted writes, removed.
	TempRemoved []string
	// Unknown are remote files no metadata knows: reported, not removed.
	Unknown []string
	// Missing are files a COPY_SEGMENT_FINISHED segment lacks.
	Missing []string
	// LocalSegmentsDeleted counts local segments below the log start
	// offset that remote retention had moved, deleted now.
	LocalSegmentsDeleted int
}

// Tier is one partition's tiering: a kafkalog.Log and its remote.
//
// # Offsets
//
// Kafka keeps two start offsets: the log start offset (earliest) and
// the local log start offset (earliest-local). The engine has one, and
// with tiering it is the local one: local deletions move it, through
// kafkalog.Log.DeleteSegments. The log start offset is derived from the
// remote metadata alone, so that a crash can never leave the two
// disagreeing: it is the lowest start offset of a copied segment, or the
// local log start offset if that is lower, raised to the end+1 of the
// newest segment remote retention has begun to delete (see
// LogStartOffset).
//
// A Tier is used by one goroutine, the log's writer; its reads may run
// concurrently with each other.
type Tier struct {
	fsys  vfs.FS
	l     *kafkalog.Log
	r     Remote
	tp    TopicIDPartition
	opt   Options
	clock segment.Clock

	mu   sync.RWMutex
	meta []SegmentMetadata // every segment's latest state, sorted
}

// Open ties l (a partition directory in fsys) to remote and resolves what
// an interrupted run left there (see StartReport). The topic id is read
// from partition.metadata. A compacted topic is refused
// (ErrCompactedTopic).
func Open(fsys vfs.FS, l *kafkalog.Log, remote Remote, opt Options) (*Tier, StartReport, error) {
	var rep StartReport
	if l.Config().Compact() {
		return nil, rep, fmt.Errorf("%w: %s has cleanup.policy %v", ErrCompactedTopic, l.TopicPartition(), l.Config().CleanupPolicy)
	}
	pm, err := checkpoint.ReadPartitionMetadata(fsys, l.Dir())
	if errors.Is(err, fs.ErrNotExist) || err == nil && pm.TopicID.IsZero() {
		return nil, rep, fmt.Errorf("%w: %s", ErrNoTopicID, l.Dir())
	}
	if err != nil {
		return nil, rep, err
	}
	t := &Tier{fsys: fsys, l: l, r: remote, opt: opt, clock: opt.Clock}
	if t.clock == nil {
		t.clock = segment.SystemClock{}
	}
	tp := l.TopicPartition()
	t.tp = TopicIDPartition{TopicID: pm.TopicID, Topic: tp.Topic, Partition: tp.Partition}
	if t.meta, err = remote.ListSegmentMetadata(t.tp); err != nil {
		return nil, rep, err
	}
	if err := t.resolve(&rep); err != nil {
		return nil, rep, err
	}
	return t, rep, nil
}

// TopicIDPartition is the partition's remote identity.
func (t *Tier) TopicIDPartition() TopicIDPartition { return t.tp }

// Log is the local log.
func (t *Tier) Log() *kafkalog.Log { return t.l }

// Metadata returns every remote segment's latest state, sorted by start
// offset.
func (t *Tier) Metadata() []SegmentMetadata {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.Clone(t.meta)
}

func (t *Tier) nowMs() int64 { return t.clock.Now().UnixMilli() }

func (t *Tier) emit(e Event) {
	if t.opt.OnEvent != nil {
		t.opt.OnEvent(e)
	}
}

// put makes m durable, then records it in memory.
func (t *Tier) put(m SegmentMetadata) error {
	t.mu.RLock()
	i := t.find(m.ID.ID)
	var bad error
	if i >= 0 && !validTransition(t.meta[i].State, m.State) {
		bad = fmt.Errorf("%w: %s to %s for %s", ErrBadTransition, t.meta[i].State, m.State, m.ID.ID)
	}
	t.mu.RUnlock()
	if bad != nil {
		return bad
	}
	m.EventTimestampMs = t.nowMs()
	if err := t.r.PutSegmentMetadata(m); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if i >= 0 {
		t.meta[i] = m
	} else {
		t.meta = append(t.meta, m)
		sortMetadata(t.meta)
	}
	return nil
}

// find returns the index of the segment with id, or -1. Caller holds mu.
func (t *Tier) find(id UUID) int {
	return slices.IndexFunc(t.meta, func(m SegmentMetadata) bool { return m.ID.ID == id })
}

func (t *Tier) known(id UUID) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.find(id) >= 0
}

// HighestCopiedOffset is the highest offset in remote storage: the
// largest end offset of a segment whose copy finished (-1: none), as
// UnifiedLog.highestOffsetInRemoteStorage, which remote deletions do not
// lower.
func (t *Tier) HighestCopiedOffset() int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return RemoteLog(t.meta).HighestCopiedOffset()
}

// remoteFloor is RemoteLog.Floor. Caller holds mu.
func (t *Tier) remoteFloor() int64 { return RemoteLog(t.meta).Floor() }

// LogStartOffset is the partition's log start offset (ListOffsets
// "earliest"): see the type's doc.
func (t *Tier) LogStartOffset() int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.logStartLocked()
}

func (t *Tier) logStartLocked() int64 { return RemoteLog(t.meta).LogStartOffset(t.l.LogStartOffset()) }

// LocalLogStartOffset is the local log start offset ("earliest-local"):
// the engine's log start offset.
func (t *Tier) LocalLogStartOffset() int64 { return t.l.LogStartOffset() }

// finished returns the served remote segments, oldest first: copies
// finished and not being deleted.
func (t *Tier) finished() []SegmentMetadata {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return RemoteLog(t.meta).Served()
}

// resolve is the start-up resolution.
func (t *Tier) resolve(rep *StartReport) error {
	if a, ok := t.r.(Auditor); ok {
		files, err := a.Files(t.tp)
		if err != nil {
			return err
		}
		for _, f := range files {
			if f.ID.IsZero() && strings.HasPrefix(f.Name, MetadataDirName+"/") && strings.HasSuffix(f.Name, TempSuffix) {
				if err := a.RemoveFile(t.tp, f.Name); err != nil {
					return err
				}
				rep.TempRemoved = append(rep.TempRemoved, f.Name)
			}
		}
	}
	for _, m := range t.Metadata() {
		switch m.State {
		case CopySegmentStarted:
			if err := t.deleteSegment(m, true, "start-up"); err != nil {
				return err
			}
			rep.CopiesAbandoned = append(rep.CopiesAbandoned, m)
		case DeleteSegmentStarted:
			if err := t.deleteSegment(m, m.Abandoned, "start-up"); err != nil {
				return err
			}
			rep.DeletesFinished = append(rep.DeletesFinished, m)
		}
	}
	if a, ok := t.r.(Auditor); ok {
		files, err := a.Files(t.tp)
		if err != nil {
			return err
		}
		t.mu.RLock()
		have := map[string]bool{}
		for _, f := range files {
			have[f.Name] = true
			i := -1
			if !f.ID.IsZero() {
				i = t.find(f.ID)
			}
			if i < 0 || t.meta[i].State != CopySegmentFinished || t.meta[i].StartOffset != f.StartOffset {
				rep.Unknown = append(rep.Unknown, f.Name)
			}
		}
		for _, m := range t.meta {
			if m.State != CopySegmentFinished {
				continue
			}
			for ft := FileType(0); ft < numFileTypes; ft++ {
				name := SegmentFileName(m.StartOffset, m.ID.ID, ft)
				if !have[name] && !(ft == FileTransactionIndex) {
					rep.Missing = append(rep.Missing, name)
				}
			}
		}
		t.mu.RUnlock()
	}
	n, err := t.deleteLocalBelowFloor()
	rep.LocalSegmentsDeleted = n
	return err
}

// deleteLocalBelowFloor deletes the local segments that remote retention
// has put below the log start offset (UnifiedLog
// .deleteLogStartOffsetBreachedSegments).
func (t *Tier) deleteLocalBelowFloor() (int, error) {
	t.mu.RLock()
	floor := t.remoteFloor()
	t.mu.RUnlock()
	segs := t.l.Segments()
	n := 0
	for n+1 < len(segs) && segs[n+1].BaseOffset() <= floor {
		n++
	}
	if n == 0 {
		return 0, nil
	}
	return n, t.deleteLocal(n, ReasonLogStartOffset)
}

func (t *Tier) deleteLocal(n int, reason string) error {
	start, err := t.l.DeleteSegments(n)
	if err != nil {
		return err
	}
	t.emit(Event{Kind: EventLocalDelete, Reason: reason, Segments: n, LocalLogStartOffset: start})
	return nil
}

// deleteSegment runs DELETE_SEGMENT_STARTED → delete files →
// DELETE_SEGMENT_FINISHED.
func (t *Tier) deleteSegment(m SegmentMetadata, abandoned bool, reason string) error {
	if m.State != DeleteSegmentStarted {
		m.State, m.Abandoned = DeleteSegmentStarted, abandoned
		if err := t.put(m); err != nil {
			return err
		}
		t.emit(Event{Kind: EventDeleteStarted, Segment: m, Reason: reason})
	}
	if err := t.r.DeleteLogSegmentData(m); err != nil {
		return err
	}
	m.State = DeleteSegmentFinished
	if err := t.put(m); err != nil {
		return err
	}
	t.emit(Event{Kind: EventDeleteFinished, Segment: m, Reason: reason})
	return nil
}

// UploadReport lists what Upload copied.
type UploadReport struct {
	LastStableOffset int64
	Copied           []SegmentMetadata
}

// Upload copies, oldest first, the segments Kafka's copy rule allows
// (PlanCopy with the log's last stable offset), each as
// COPY_SEGMENT_STARTED (durable) → files → COPY_SEGMENT_FINISHED
// (durable). A failed copy is deleted at once, as Kafka does, and the
// error returned. It refuses topics without remote.storage.enable, or
// with remote.log.copy.disable (ErrRemoteStorageDisabled).
func (t *Tier) Upload() (UploadReport, error) {
	cfg := t.l.Config()
	rep := UploadReport{LastStableOffset: t.l.LastStableOffset()}
	if cfg.Compact() {
		return rep, ErrCompactedTopic
	}
	if !cfg.RemoteStorageEnable || cfg.RemoteLogCopyDisable {
		return rep, fmt.Errorf("%w: %s", ErrRemoteStorageDisabled, t.l.TopicPartition())
	}
	segs := t.l.Segments()
	bases := make([]int64, len(segs))
	for i, s := range segs {
		bases[i] = s.BaseOffset()
	}
	for _, c := range PlanCopy(bases, t.HighestCopiedOffset(), t.LogStartOffset(), rep.LastStableOffset) {
		i, _ := slices.BinarySearch(bases, c.BaseOffset)
		m, err := t.copySegment(segs[i], c.NextBaseOffset)
		if err != nil {
			return rep, err
		}
		rep.Copied = append(rep.Copied, m)
	}
	return rep, nil
}

// inRange is LeaderEpochFileCache.epochEntriesInRange over entries.
func inRange(entries []checkpoint.EpochEntry, start, end int64) []checkpoint.EpochEntry {
	c := checkpoint.NewLeaderEpochCache()
	for _, e := range entries {
		c.Assign(e.Epoch, e.StartOffset)
	}
	return c.EntriesInRange(start, end)
}

// leaderEpochs is the partition's leader-epoch cache as Kafka keeps it
// with tiering: from the log start offset, not the local one. The
// engine truncates its cache to its own (local) start offset, so the
// epochs of the remote segments (their segmentLeaderEpochs) come first,
// then the local cache's, each assigned as LeaderEpochFileCache.assign
// does (an entry for the latest epoch at a later offset changes nothing).
func (t *Tier) leaderEpochs() []checkpoint.EpochEntry {
	c := checkpoint.NewLeaderEpochCache()
	t.mu.RLock()
	start := t.logStartLocked()
	for _, m := range t.meta {
		if m.State == CopySegmentFinished && m.StartOffset >= start {
			for _, e := range m.SegmentLeaderEpochs {
				c.Assign(e.Epoch, e.StartOffset)
			}
		}
	}
	t.mu.RUnlock()
	for _, e := range t.l.LeaderEpochs() {
		c.Assign(e.Epoch, e.StartOffset)
	}
	c.TruncateFromStart(start)
	return c.Entries()
}

func (t *Tier) copySegment(s kafkalog.SegmentView, next int64) (SegmentMetadata, error) {
	id, err := NewSegmentID(t.tp, t.opt.Rand)
	for err == nil && t.known(id.ID) {
		id, err = NewSegmentID(t.tp, t.opt.Rand) // never reuse an id
	}
	if err != nil {
		return SegmentMetadata{}, err
	}
	maxTs, err := s.LargestTimestamp()
	if err != nil {
		return SegmentMetadata{}, err
	}
	aborted, err := s.AbortedTxns()
	if err != nil {
		return SegmentMetadata{}, err
	}
	snap := segment.Path(t.l.Dir(), next, segment.SnapshotSuffix)
	if _, err := t.fsys.Stat(snap); err != nil {
		return SegmentMetadata{}, fmt.Errorf("%w: %s: %v", ErrNoProducerSnapshot, snap, err)
	}
	data := SegmentData{FS: t.fsys, LogSegment: s.LogPath(), OffsetIndex: s.IndexPath(), TimeIndex: s.TimeIndexPath(), ProducerSnapshot: snap}
	if _, err := t.fsys.Stat(s.TxnIndexPath()); err == nil {
		data.TransactionIndex = s.TxnIndexPath()
	}
	epochs := t.leaderEpochs()
	data.LeaderEpochIndex = checkpoint.AppendLeaderEpochs(nil, inRange(epochs, -1, next))
	m := SegmentMetadata{
		ID: id, StartOffset: s.BaseOffset(), EndOffset: next - 1, MaxTimestampMs: maxTs, BrokerID: t.opt.BrokerID,
		SegmentSizeInBytes: s.Size(), SegmentLeaderEpochs: inRange(epochs, s.BaseOffset(), next),
		TxnIdxEmpty: len(aborted) == 0, State: CopySegmentStarted,
	}
	if err := t.put(m); err != nil {
		return m, err
	}
	t.emit(Event{Kind: EventCopyStarted, Segment: m})
	if err := t.r.CopyLogSegmentData(m, data); err != nil {
		if derr := t.deleteSegment(m, true, "failed copy"); derr != nil {
			return m, errors.Join(err, derr) // start-up resolution finishes it
		}
		return m, err
	}
	m.State = CopySegmentFinished
	if err := t.put(m); err != nil {
		return m, err
	}
	t.emit(Event{Kind: EventCopyFinished, Segment: m})
	return m, nil
}

func (t *Tier) localSegments() ([]LocalSegment, []kafkalog.SegmentView, error) {
	views := t.l.Segments()
	out := make([]LocalSegment, len(views))
	for i, v := range views {
		ts, err := v.LargestTimestamp()
		if err != nil {
			return nil, nil, err
		}
		out[i] = LocalSegment{BaseOffset: v.BaseOffset(), Size: v.Size(), LargestTimestamp: ts}
	}
	return out, views, nil
}

// LocalPlan returns how many of the oldest local segments local
// retention would delete now, and why (PlanLocal with
// local.retention.ms/bytes, -2 meaning retention.ms/bytes; with
// remote.log.copy.disable, retention.ms/bytes, as KIP-950 says).
func (t *Tier) LocalPlan() (int, []string, error) {
	segs, _, err := t.localSegments()
	if err != nil {
		return 0, nil, err
	}
	cfg := t.l.Config()
	p := LocalParams{
		NowMs: t.nowMs(), LogEndOffset: t.l.LogEndOffset(), HighWatermark: t.l.HighWatermark(),
		HighestCopiedOffset: t.HighestCopiedOffset(), LogStartOffset: t.LogStartOffset(),
		RetentionMs: cfg.EffectiveLocalRetentionMs(), RetentionBytes: cfg.EffectiveLocalRetentionBytes(),
	}
	if cfg.RemoteLogCopyDisable {
		p.RetentionMs, p.RetentionBytes = cfg.RetentionMs, cfg.RetentionBytes
	}
	n, why := PlanLocal(segs, p)
	return n, why, nil
}

// DeleteLocal applies local retention: it deletes the local segments
// LocalPlan names, moving the local log start offset (durably, before
// any file goes), never the log start offset. It returns how many went.
func (t *Tier) DeleteLocal() (int, error) {
	n, why, err := t.LocalPlan()
	if err != nil || n == 0 {
		return 0, err
	}
	return n, t.deleteLocal(n, why[n-1])
}

// RemotePlan returns the remote segments total retention would delete
// now, and why (PlanRemote with retention.ms/bytes).
func (t *Tier) RemotePlan() ([]SegmentMetadata, []string, error) {
	segs, _, err := t.localSegments()
	if err != nil {
		return nil, nil, err
	}
	high := t.HighestCopiedOffset()
	var onlyLocal int64
	for _, s := range segs {
		if s.BaseOffset > high {
			onlyLocal += s.Size
		}
	}
	cfg := t.l.Config()
	fin := t.finished()
	n, why := PlanRemote(fin, RemoteParams{NowMs: t.nowMs(), OnlyLocalSize: onlyLocal, RetentionMs: cfg.RetentionMs, RetentionBytes: cfg.RetentionBytes})
	return fin[:n], why, nil
}

// DeleteRemote applies total retention to the remote: each segment
// RemotePlan names goes through DELETE_SEGMENT_STARTED (durable; from
// then on the log start offset is past it) → delete files →
// DELETE_SEGMENT_FINISHED; local segments left below the new log start
// offset are deleted after. It returns how many remote segments went.
func (t *Tier) DeleteRemote() (int, error) {
	doomed, why, err := t.RemotePlan()
	if err != nil {
		return 0, err
	}
	for i, m := range doomed {
		if err := t.deleteSegment(m, false, why[i]); err != nil {
			return i, err
		}
	}
	if len(doomed) > 0 {
		if _, err := t.deleteLocalBelowFloor(); err != nil {
			return len(doomed), err
		}
	}
	return len(doomed), nil
}

// MaxIndexBytes bounds a remote offset index read by the read path.
const MaxIndexBytes int64 = 64 << 20

// MaxEntryBytes bounds one log entry the read path fetches whole.
const MaxEntryBytes int64 = 128 << 20

// ReadResult is what Read returns.
type ReadResult struct {
	// Records holds whole entries from the first one holding an offset at
	// or above the one asked for; it may begin below it.
	Records []byte
	// Remote says the bytes came from Segment in the remote.
	Remote  bool
	Segment SegmentMetadata
	// AbortedTxns are the aborted transactions overlapping Records, for
	// a read_committed consumer (FetchResponse's aborted_transactions):
	// from the remote segments' transaction indexes and, should they not
	// complete the search, the local ones' (AbortedTxns). A local read
	// leaves it nil: kafkalog.Log.Read with IsolationCommitted gives it.
	AbortedTxns []index.AbortedTxn
	// The partition's offsets at the time of the read.
	LogStartOffset, LocalLogStartOffset, LogEndOffset int64
}

// Read returns up to maxBytes of whole entries (at least one) from the
// first entry holding offset: from the local log at or above the local
// log start offset, from the remote below it (RemoteLogManager.read). An
// offset below the log start offset or past the log end is a
// *kafkalog.OffsetOutOfRangeError.
func (t *Tier) Read(offset int64, maxBytes int) (ReadResult, error) {
	t.mu.RLock()
	res := ReadResult{LogStartOffset: t.logStartLocked(), LocalLogStartOffset: t.l.LogStartOffset(), LogEndOffset: t.l.LogEndOffset()}
	t.mu.RUnlock()
	if offset < res.LogStartOffset || offset > res.LogEndOffset {
		return res, &kafkalog.OffsetOutOfRangeError{Offset: offset, LogStartOffset: res.LogStartOffset, LogEndOffset: res.LogEndOffset}
	}
	if offset >= res.LocalLogStartOffset {
		rr, err := t.l.Read(offset, maxBytes, nil, kafkalog.ReadOptions{})
		res.Records = rr.Records
		return res, err
	}
	t.mu.RLock()
	m, found := RemoteLog(t.meta).Holding(offset)
	t.mu.RUnlock()
	if !found {
		return res, fmt.Errorf("%w: no remote segment holds offset %d", ErrNotFound, offset)
	}
	res.Remote, res.Segment = true, m
	b, err := ReadSegment(t.r, m, offset, maxBytes)
	res.Records = b
	if err != nil || len(b) == 0 {
		return res, err
	}
	upTo := record.LastOffset(b) + 1
	complete := false
	if res.AbortedTxns, complete, err = AbortedTxns(t.r, t.finished(), offset, upTo, nil); err == nil && !complete {
		var local []index.AbortedTxn
		local, err = t.l.AbortedTxns(offset, upTo)
		res.AbortedTxns = append(res.AbortedTxns, local...)
	}
	return res, err
}
