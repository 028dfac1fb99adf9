package inspect

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/resync"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/verify"
	"github.com/segkit/segkit/vfs"
)

// ErrNoPartition is returned by Verify for a directory that is neither a
// partition directory nor a log directory holding partition directories.
var ErrNoPartition = errors.New("inspect: not a partition directory or a log directory")

// Options tune Verify. The zero value checks with Kafka's default retention
// settings at the current time.
type Options struct {
	// Now is the time (ms since the epoch) timestamps are judged against;
	// 0 means the current time.
	Now int64
	// Policy holds the retention settings the timestamp warnings use
	// (retention.ms above all); nil means Kafka's defaults.
	Policy *retention.Policy
	// Compacted makes every partition count as compacted, where offset
	// gaps are normal (info instead of warning). Partitions listed in the
	// log directory's cleaner-offset-checkpoint, and __consumer_offsets
	// and __transaction_state, count as compacted anyway.
	Compacted bool
	// Progress, if set, is called as the .log files are read, with the
	// bytes read so far and the total: at most once per MiB, and once at
	// the end of each segment.
	Progress func(done, total int64)
	// MaxDecompressed bounds the decompressed size of one batch's records;
	// 0 means record.DefaultMaxDecompressed.
	MaxDecompressed int
	// Interrupt, when closed, stops a Verify early: it returns an error
	// matching ErrInterrupted (and no report). A page's "cancel" closes it.
	Interrupt <-chan struct{}
	// Parallelism is how many goroutines decode at once, each with its
	// own decoders: partitions are verified concurrently, and when there
	// are fewer partitions than that, the batches of a partition are
	// decoded concurrently (and checked in order). 0 means
	// runtime.GOMAXPROCS(0); 1 reads everything in the calling goroutine,
	// one batch at a time, as Verify always did. The Report is the same
	// whatever it is. Above 1, Progress is called from other goroutines,
	// one call at a time.
	Parallelism int
}

// ErrInterrupted is matched by the error of a Verify whose
// Options.Interrupt was closed.
var ErrInterrupted = errors.New("inspect: verification interrupted")

// Report is what Verify found. It marshals to the JSON object segviz
// verify --json prints.
type Report struct {
	// OK is false when any problem has level Error.
	OK bool `json:"ok"`
	// Segments, Batches and Records count the segments (.log files) read
	// and the valid entries and records found in them.
	Segments int   `json:"segments"`
	Batches  int64 `json:"batches"`
	Records  int64 `json:"records"`
	// Problems lists every finding, partition by partition, in the order
	// the files were read.
	Problems []finding.Problem `json:"problems"`
	// Partitions describes each partition directory verified.
	Partitions []PartitionReport `json:"partitions"`
}

// Count returns the number of problems of level l.
func (r *Report) Count(l finding.Level) int {
	n := 0
	for i := range r.Problems {
		if r.Problems[i].Level == l {
			n++
		}
	}
	return n
}

// PartitionReport summarises one partition directory.
type PartitionReport struct {
	Dir       string `json:"dir"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// LogStartOffset is Kafka's: the checkpointed log start offset or the
	// first segment's base offset, whichever is larger. LogEndOffset is
	// the offset after the last valid entry (the last segment's base offset
	// when it has none).
	LogStartOffset int64 `json:"logStartOffset"`
	LogEndOffset   int64 `json:"logEndOffset"`
	// CleanShutdown reports the log directory's clean-shutdown marker.
	CleanShutdown bool `json:"cleanShutdown"`
	// Compacted reports that offset gaps were taken as normal.
	Compacted bool            `json:"compacted"`
	Batches   int64           `json:"batches"`
	Records   int64           `json:"records"`
	Errors    int             `json:"errors"`
	Warnings  int             `json:"warnings"`
	Segments  []SegmentReport `json:"segments"`
}

// SegmentReport summarises one segment.
type SegmentReport struct {
	File       string `json:"file"`
	BaseOffset int64  `json:"baseOffset"`
	Size       int64  `json:"size"`
	// FirstOffset and LastOffset are those of the valid entries, -1 when
	// there are none.
	FirstOffset int64 `json:"firstOffset"`
	LastOffset  int64 `json:"lastOffset"`
	Batches     int64 `json:"batches"`
	Records     int64 `json:"records"`
	// MaxTimestamp is the largest batch timestamp, -1 when none.
	MaxTimestamp int64 `json:"maxTimestamp"`
	Errors       int   `json:"errors"`
	Warnings     int   `json:"warnings"`
}

// Verify checks the partition directory dir of fsys, or every partition
// directory of the log directory dir, in one pass over each file, and
// never writes to fsys (it opens every file read-only, so a vfs.FromIOFS
// works). It checks:
//
//   - every entry of every .log: size, magic, CRC and header fields, every
//     record (decompressed once), offsets increasing within and across
//     segments and fitting each segment; resync.Damage is told apart from a torn
//     or zero tail, and reading resumes after it (FindEntry), so that every
//     damaged region is reported;
//   - each .index and .timeindex against its .log (verify.OffsetIndex,
//     verify.TimeIndex, Kafka's sanity checks, zero padding, the time
//     index's final entry), and each .txnindex against the log's ABORT
//     markers, both ways;
//   - each producer .snapshot: it decodes, its CRC holds, and its entries
//     agree with the producer state replayed from the log up to its offset
//     (producer.State.Replay);
//   - the leader-epoch-checkpoint against the batches' leader epochs, and
//     partition.metadata;
//   - the log directory's recovery-point, log-start-offset and
//     replication-offset checkpoints against the log's offsets;
//   - record timestamps that make retention delete early or never
//     (retention.TimestampWarnings).
//
// What it finds is in Report.Problems; the error is only for a directory
// that cannot be listed or a file that cannot be read, or ErrNoPartition.
func Verify(fsys vfs.FS, dir string, opt Options) (Report, error) {
	return verifyChunks(fsys, dir, opt, chunkSize)
}

// verifyChunks is Verify, its concurrent decoders' chunks of chunk bytes.
func verifyChunks(fsys vfs.FS, dir string, opt Options, chunk int) (Report, error) {
	v := &verifier{fsys: fsys, opt: opt, logDirs: map[string]*logDirState{}, chunk: chunk}
	v.now = opt.Now
	if v.now == 0 {
		v.now = time.Now().UnixMilli()
	}
	v.policy = retention.DefaultPolicy()
	if opt.Policy != nil {
		v.policy = *opt.Policy
	}
	v.it.MaxDecompressed = opt.MaxDecompressed
	v.lit.MaxDecompressed = opt.MaxDecompressed
	v.ctlIt.MaxDecompressed = opt.MaxDecompressed
	dir = path.Clean(dir)
	dirs, err := findPartitions(fsys, dir, v.workers())
	if err != nil {
		return Report{}, err
	}
	parts, err := v.listAll(dirs)
	if err != nil {
		return Report{}, err
	}
	for _, p := range parts {
		for _, s := range p.segs {
			v.total += s.log.Size()
		}
	}
	if err := v.partitions(parts); err != nil {
		return Report{}, err
	}
	rep := Report{Problems: []finding.Problem{}, Partitions: []PartitionReport{}}
	for _, p := range parts {
		pr := p.rep
		for _, pb := range p.problems {
			switch pb.Level {
			case finding.Error:
				pr.Errors++
			case finding.Warning:
				pr.Warnings++
			}
		}
		rep.Problems = append(rep.Problems, p.problems...)
		rep.Segments += len(pr.Segments)
		rep.Batches += pr.Batches
		rep.Records += pr.Records
		rep.Partitions = append(rep.Partitions, pr)
	}
	rep.OK = rep.Count(finding.Error) == 0
	return rep, nil
}

// verifier holds the state of one Verify call.
type verifier struct {
	fsys    vfs.FS
	opt     Options
	now     int64
	policy  retention.Policy
	logDirs map[string]*logDirState

	done, total, reported int64
	shared                *sharedProgress // a worker's: the Verify's progress (parallel.go)
	decoders              []*decoder      // a worker's: decode its entries (parallel.go)
	chunk                 int             // the decoders' chunk size (parallel.go)

	w     resync.Walker
	it    record.Iterator // records of the entry being checked
	lit   record.LegacyIterator
	ctlIt record.Iterator // a control batch's marker, for the producer state
	rec   record.Record
}

// segFiles are the files of one segment.
type segFiles struct {
	base                          int64
	log, index, timeIndex, txnIdx fs.FileInfo
}

// partition is one partition directory being verified.
type partition struct {
	dir      string
	tp       checkpoint.TopicPartition
	segs     []*segFiles // with a .log, by base offset
	snaps    []int64     // producer snapshot offsets, ascending
	rep      PartitionReport
	problems []finding.Problem

	// Replay and cross-check state, filled while the segments are read.
	ps          *producer.State
	replayFrom  int64 // first offset of the log's first entry, -1 before any
	full        bool  // the log reaches back to offset 0, uncompacted
	prevLast    int64 // last offset of the previous valid entry, -1 before any
	prevFile    string
	prevPos     int64
	epochRuns   []epochRun
	snapEntries map[int64][]producer.Entry
	nextSnap    int
	aborted     []expectedAbort // ABORT markers of the current segment
	segMaxTs    int64
	segFirstTs  int64
	firstTss    []int64 // each segment's first batch timestamp
	haveEntries bool
	damaged     int // index in problems of the resync.Damage just read, -1 if none
}

// epochRun is a run of consecutive batches with the same leader epoch.
type epochRun struct {
	epoch               int32
	firstBase, lastBase int64
	file                string
	pos                 int64
}

// expectedAbort is an aborted transaction the log's replay completed, which
// the .txnindex of the marker's segment must list.
type expectedAbort struct {
	txn  index.AbortedTxn
	file string // the .log holding the marker
	pos  int64
}

func (p *partition) add(file string, pos int64, kind string, level finding.Level, msg string, args ...any) {
	p.problems = append(p.problems, finding.Problem{File: file, Position: pos, Kind: kind, Level: level, Detail: fmt.Sprintf(msg, args...)})
}

// list reads a partition directory's listing, and reports the files that
// are not where they belong.
func (v *verifier) list(l Listing) (*partition, error) {
	dir, infos := l.Dir, l.Entries
	p := &partition{dir: dir, snapEntries: map[int64][]producer.Entry{}}
	var err error
	p.tp, err = checkpoint.ParseDirName(path.Base(dir))
	if err != nil {
		if pd, perr := checkpoint.ParsePartitionDir(path.Base(dir)); perr == nil {
			p.tp = pd.TopicPartition
		} else {
			p.tp = checkpoint.TopicPartition{Topic: path.Base(dir), Partition: -1}
		}
	}
	bySeg := map[int64]*segFiles{}
	get := func(base int64) *segFiles {
		s := bySeg[base]
		if s == nil {
			s = &segFiles{base: base}
			bySeg[base] = s
		}
		return s
	}
	for _, fi := range infos {
		if fi.IsDir() {
			continue
		}
		name := path.Join(dir, fi.Name())
		if level, detail, ok := kafkaName(fi.Name()); ok {
			p.add(name, -1, finding.KindSegmentName, level, "%s", detail)
			continue
		}
		base, ext, err := segment.ParseFileName(fi.Name())
		if err != nil {
			continue // checkpoints, partition.metadata, KRaft snapshots ...
		}
		// A FIFO blocks the open that reads it, a device reads forever:
		// refuse before opening (exit 3 for segviz), naming the file.
		if err := vfs.CheckRegular(name, fi); err != nil {
			return nil, err
		}
		if vfs.Followed(fi) {
			p.add(name, -1, finding.KindSymlink, finding.Info, "a symbolic link; read as the %d-byte file it points to, as Kafka would", fi.Size())
		}
		switch ext {
		case segment.LogSuffix:
			get(base).log = fi
		case segment.IndexSuffix:
			get(base).index = fi
		case segment.TimeIndexSuffix:
			get(base).timeIndex = fi
		case segment.TxnIndexSuffix:
			get(base).txnIdx = fi
		case segment.SnapshotSuffix:
			p.snaps = append(p.snaps, base)
		default:
			if strings.HasSuffix(ext, segment.DeletedSuffix) {
				p.add(path.Join(dir, fi.Name()), -1, finding.KindDeletedFile, finding.Info,
					"a deleted segment's file, waiting out file.delete.delay.ms (60 s) before Kafka removes it (or removed at Kafka's next load); its records are no longer readable")
				continue
			}
			p.add(path.Join(dir, fi.Name()), -1, finding.KindLeftoverFile, finding.Warning,
				"left by an interrupted compaction (%s); Kafka resolves it when it loads the log", ext)
		}
	}
	for _, s := range bySeg {
		if s.log != nil {
			p.segs = append(p.segs, s)
			continue
		}
		for _, fi := range []fs.FileInfo{s.index, s.timeIndex, s.txnIdx} {
			if fi != nil {
				p.add(path.Join(dir, fi.Name()), -1, finding.KindOrphanFile, finding.Warning,
					"no %s beside it; Kafka deletes it when it loads the log", segment.FileName(s.base, segment.LogSuffix))
			}
		}
	}
	sort.Slice(p.segs, func(i, j int) bool { return p.segs[i].base < p.segs[j].base })
	sort.Slice(p.snaps, func(i, j int) bool { return p.snaps[i] < p.snaps[j] })
	return p, nil
}

// partition verifies one partition directory.
func (v *verifier) partition(p *partition) error {
	ld, err := v.logDir(path.Dir(p.dir), p)
	if err != nil {
		return err
	}
	p.rep = PartitionReport{Dir: p.dir, Topic: p.tp.Topic, Partition: p.tp.Partition, CleanShutdown: ld.clean, Segments: []SegmentReport{}}
	_, inCleaner := ld.cleaner[p.tp]
	p.rep.Compacted = v.opt.Compacted || inCleaner || p.tp.Topic == "__consumer_offsets" || p.tp.Topic == "__transaction_state"
	p.ps = producer.NewState()
	p.replayFrom, p.prevLast, p.damaged = -1, -1, -1

	epochs, epochLines, epochFile := v.readEpochs(p)
	v.partitionMetadata(p)
	if err := v.readSnapshots(p, ld.clean); err != nil {
		return err
	}
	if len(p.segs) == 0 {
		v.noSegments(p, ld, epochs)
		return nil
	}
	for i, s := range p.segs {
		if err := v.segment(p, s, i == len(p.segs)-1, ld.clean); err != nil {
			return err
		}
	}

	// Offsets of the partition as a whole.
	leo := int64(0)
	if len(p.segs) > 0 {
		leo = p.segs[len(p.segs)-1].base
	}
	if p.prevLast >= 0 {
		leo = max(leo, p.prevLast+1)
	}
	p.rep.LogEndOffset = leo
	firstBase := int64(0)
	if len(p.segs) > 0 {
		firstBase = p.segs[0].base
	}
	p.rep.LogStartOffset = firstBase
	if c, ok := ld.logStart[p.tp]; ok {
		p.rep.LogStartOffset = max(c.offset, firstBase)
		if c.offset < firstBase && len(p.segs) > 0 {
			p.add(ld.path(checkpoint.LogStartOffsetFile), c.pos, finding.KindLogStartBelowSegments, finding.Warning,
				"%s: log start offset %d is below the first segment's base offset %d; Kafka uses %d (the checkpoint lags a deletion)", p.tp, c.offset, firstBase, firstBase)
		}
		if c.offset > leo {
			p.add(ld.path(checkpoint.LogStartOffsetFile), c.pos, finding.KindLogStartPastEnd, finding.Error,
				"%s: log start offset %d is above the log end offset %d: Kafka would delete every segment and restart the log at %d", p.tp, c.offset, leo, c.offset)
		}
	}
	p.rep.LogStartOffset = min(p.rep.LogStartOffset, leo)
	if c, ok := ld.recovery[p.tp]; ok && c.offset > leo {
		p.add(ld.path(checkpoint.RecoveryPointFile), c.pos, finding.KindRecoveryPointPastEnd, finding.Error,
			"%s: recovery point %d is above the log end offset %d: records the broker had flushed are missing", p.tp, c.offset, leo)
	}
	if c, ok := ld.hw[p.tp]; ok && c.offset > leo {
		p.add(ld.path(checkpoint.ReplicationOffsetFile), c.pos, finding.KindHighWatermarkPastEnd, finding.Warning,
			"%s: high watermark %d is above the log end offset %d: committed records are missing (or the partition was truncated since)", p.tp, c.offset, leo)
	}

	// Snapshots after the last batch.
	for ; p.nextSnap < len(p.snaps); p.nextSnap++ {
		off := p.snaps[p.nextSnap]
		if off > leo {
			p.add(path.Join(p.dir, producer.SnapshotFileName(off)), -1, finding.KindSnapshotPastEnd, finding.Warning,
				"snapshot at offset %d is above the log end offset %d; Kafka deletes it when it loads the log", off, leo)
			continue
		}
		v.compareSnapshot(p, off)
	}
	v.checkEpochs(p, epochs, epochLines, epochFile, leo)
	v.timestampWarnings(p, leo)
	return nil
}

// noSegments reports a partition directory without any .log. Its other
// files cannot be checked against a log; what offsets they name says how
// much is missing.
func (v *verifier) noSegments(p *partition, ld *logDirState, epochs []checkpoint.EpochEntry) {
	start := ld.logStart[p.tp].offset
	p.rep.LogStartOffset, p.rep.LogEndOffset = start, start
	var refs []string
	if n := len(epochs); n > 0 {
		refs = append(refs, fmt.Sprintf("the leader-epoch-checkpoint has epochs up to %d starting at offset %d", epochs[n-1].Epoch, epochs[n-1].StartOffset))
	}
	if n := len(p.snaps); n > 0 {
		refs = append(refs, fmt.Sprintf("producer snapshots go up to offset %d", p.snaps[n-1]))
	}
	if c, ok := ld.recovery[p.tp]; ok && c.offset > 0 {
		refs = append(refs, fmt.Sprintf("the recovery point is %d", c.offset))
	}
	detail := "no segment (.log) in the partition directory; Kafka creates an empty one at its log start offset"
	if len(refs) > 0 {
		detail += ", although " + strings.Join(refs, ", ") + ": the segments are missing"
	}
	p.add(p.dir, -1, finding.KindNoSegments, finding.Warning, "%s", detail)
}

// interrupted reports whether Options.Interrupt is closed.
func (v *verifier) interrupted() bool {
	select {
	case <-v.opt.Interrupt:
		return true
	default:
		return false
	}
}

// segment reads one segment's .log and checks its indexes against it.
func (v *verifier) segment(p *partition, s *segFiles, last, clean bool) error {
	if v.interrupted() {
		return ErrInterrupted
	}
	c := v.startSegment(p, s)
	if err := v.readSegment(p.dir, s, func(r *entryResult) error { v.check(p, s, c, r, last, clean); return nil }); err != nil {
		return err
	}
	return v.endSegment(p, s, c, last)
}

// segCheck is the state of the checks of one segment.
type segCheck struct {
	logPath   string
	sr        SegmentReport
	nProblems int
	entries   []verify.LogEntrySummary
}

// startSegment starts the checks of segment s of p.
func (v *verifier) startSegment(p *partition, s *segFiles) *segCheck {
	logPath := path.Join(p.dir, s.log.Name())
	c := &segCheck{logPath: logPath, nProblems: len(p.problems),
		sr: SegmentReport{File: logPath, BaseOffset: s.base, Size: s.log.Size(), FirstOffset: -1, LastOffset: -1, MaxTimestamp: -1}}
	p.aborted = p.aborted[:0]
	p.segMaxTs, p.segFirstTs, p.haveEntries = record.NoTimestamp, record.NoTimestamp, false
	return c
}

// readSegment reads the .log of segment s of partition directory dir:
// each valid entry's records, and each damaged region. It calls fn with
// each, in file order (the entryResult is stale after fn returns); an
// error from fn stops the read, which returns it. With decoders, they
// decode the entries concurrently (parallel.go).
func (v *verifier) readSegment(dir string, s *segFiles, fn func(r *entryResult) error) error {
	logPath := path.Join(dir, s.log.Name())
	f, err := v.fsys.Open(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	size := s.log.Size()
	start := v.done
	if len(v.decoders) >= 2 {
		err = v.readParallel(f, size, logPath, fn)
	} else {
		entry, hurt := v.sequential(start, fn)
		err = v.w.Walk(f, size, logPath, entry, hurt)
	}
	if err != nil {
		return fmt.Errorf("inspect: %s: %w", logPath, err)
	}
	v.done = start + size
	v.progress(v.done, true)
	return nil
}

// sequential returns the resync.Walker callbacks of readSegment's
// sequential read (the .log's bytes counted in progress from start): each
// entry read by this goroutine, each damaged region, to fn.
func (v *verifier) sequential(start int64, fn func(r *entryResult) error) (entry func(e *record.Entry) error, hurt func(d resync.Damage) error) {
	var r entryResult
	entry = func(e *record.Entry) error {
		if v.interrupted() {
			return ErrInterrupted
		}
		v.read(e, &r)
		if err := fn(&r); err != nil {
			return err
		}
		v.progress(start+e.Position+int64(e.Size()), false)
		return nil
	}
	hurt = func(d resync.Damage) error {
		return fn(&entryResult{damage: &d})
	}
	return entry, hurt
}

// check applies one entry (or damaged region) read by readSegment to
// the checks of segment s, in file order.
func (v *verifier) check(p *partition, s *segFiles, c *segCheck, r *entryResult, last, clean bool) {
	if r.damage != nil {
		v.damage(p, c.logPath, *r.damage, last, clean)
		return
	}
	sum, ok := v.entry(p, s, c.logPath, r, &c.sr)
	c.entries = append(c.entries, sum)
	if ok {
		c.sr.Batches++
	}
}

// endSegment ends the checks of segment s: its indexes, and its report.
func (v *verifier) endSegment(p *partition, s *segFiles, c *segCheck, last bool) error {
	sr := &c.sr
	sr.MaxTimestamp = p.segMaxTs
	p.firstTss = append(p.firstTss, p.segFirstTs)

	if err := v.indexes(p, s, c.entries, last); err != nil {
		return err
	}
	for _, pb := range p.problems[c.nProblems:] {
		switch pb.Level {
		case finding.Error:
			sr.Errors++
		case finding.Warning:
			sr.Warnings++
		}
	}
	p.rep.Batches += sr.Batches
	p.rep.Records += sr.Records
	p.rep.Segments = append(p.rep.Segments, *sr)
	return nil
}

// entryResult is what reading one entry gives (read), before the checks
// that depend on the entries before it (entry): or a damaged region.
type entryResult struct {
	sum     verify.LogEntrySummary
	records int64
	recErr  error // the records do not decode
	v2      bool
	epoch   int32 // a v2 batch's partition leader epoch
	// info is the v2 batch's producer.FromBatch, when its records decode.
	info    producer.BatchInfo
	infoErr error
	damage  *resync.Damage // not an entry: a damaged region
}

// read decodes the records of one entry that passed the scanner's header
// and CRC checks into r.
func (v *verifier) read(e *record.Entry, r *entryResult) {
	*r = entryResult{}
	sum := &r.sum
	*sum = verify.LogEntrySummary{
		Position: e.Position, Size: int64(e.Size()), Magic: e.Magic,
		BaseOffset: e.BaseOffset(), LastOffset: e.LastOffset(), MaxTimestamp: e.MaxTimestamp(),
		OffsetOfMaxTimestamp: e.LastOffset(), ProducerID: record.NoProducerID,
	}
	var records int64
	var recErr error
	if e.Magic == record.MagicV2 {
		b := &e.Batch
		sum.Compressed = b.Attributes.Codec() != compress.None
		sum.LogAppendTime = b.Attributes.TimestampType() == record.LogAppendTime
		sum.Transactional = b.Attributes.IsTransactional()
		sum.Control = b.Attributes.IsControl()
		sum.ProducerID = b.ProducerID
		found := false
		v.it.Reset(b)
		for v.it.Next(&v.rec) {
			records++
			if !found && v.rec.Timestamp == b.MaxTimestamp {
				sum.OffsetOfMaxTimestamp, found = v.rec.Offset, true
			}
			if sum.Control {
				if t, err := record.ParseControlKey(v.rec.Key); err == nil && t == record.ControlAbort {
					sum.Abort = true
				}
			}
		}
		recErr = v.it.Err()
		if recErr == nil && records != int64(b.RecordCount) {
			recErr = fmt.Errorf("declared %d records, found %d", b.RecordCount, records)
		}
		r.v2, r.epoch = true, b.PartitionLeaderEpoch
		if recErr == nil {
			r.info, r.infoErr = producer.FromBatch(b, &v.ctlIt)
		}
	} else {
		sum.Compressed = e.Legacy.Codec() != compress.None
		sum.LogAppendTime = e.Legacy.TimestampType() == record.LogAppendTime
		v.lit.Reset(&e.Legacy)
		for v.lit.Next(&v.rec) {
			if records == 0 && sum.Compressed {
				sum.BaseOffset = v.rec.Offset
			}
			records++
		}
		recErr = v.lit.Err()
	}
	r.records, r.recErr = records, recErr
}

// entry checks one entry read by read, feeds it to the cross-checks, and
// returns its summary and whether its records are valid.
func (v *verifier) entry(p *partition, s *segFiles, file string, r *entryResult, sr *SegmentReport) (verify.LogEntrySummary, bool) {
	sum, records, recErr := r.sum, r.records, r.recErr
	if recErr != nil {
		p.add(file, sum.Position, finding.KindLogInvalidRecords, finding.Error,
			"entry at offsets %d..%d: its checksum verifies but its records do not decode: %v", sum.BaseOffset, sum.LastOffset, recErr)
	} else {
		sr.Records += records
	}

	// Offsets: within the segment, increasing, continuous.
	if sum.BaseOffset < s.base || sum.LastOffset-s.base > math.MaxInt32 || sum.LastOffset < sum.BaseOffset {
		p.add(file, sum.Position, finding.KindLogOffsetRange, finding.Error,
			"entry holds offsets %d..%d, outside the segment's range [%d, %d]: its indexes cannot address it (Kafka's recovery fails on it)", sum.BaseOffset, sum.LastOffset, s.base, s.base+math.MaxInt32)
	}
	damaged := p.damaged
	p.damaged = -1
	if damaged >= 0 {
		// The entry after a damaged region: say which offsets it held.
		pb := &p.problems[damaged]
		switch {
		case p.prevLast >= 0 && sum.BaseOffset > p.prevLast+1:
			pb.Detail += fmt.Sprintf(". The damaged bytes held %s", offsetsText(p.prevLast+1, sum.BaseOffset-1))
		case p.prevLast < 0 && sum.BaseOffset > s.base:
			pb.Detail += fmt.Sprintf(". The damaged bytes held %s, or some of them", offsetsText(s.base, sum.BaseOffset-1))
		}
	}
	if p.prevLast >= 0 {
		switch {
		case sum.BaseOffset <= p.prevLast:
			p.add(file, sum.Position, finding.KindLogOffsetOrder, finding.Error,
				"entry at offsets %d..%d does not follow offset %d (%s:%d): Kafka's recovery truncates here", sum.BaseOffset, sum.LastOffset, p.prevLast, p.prevFile, p.prevPos)
		case sum.BaseOffset > p.prevLast+1 && damaged < 0:
			level, why := finding.Warning, "on a topic that is not compacted this means lost batches"
			if p.rep.Compacted {
				level, why = finding.Info, "normal in a compacted partition"
			}
			p.add(file, sum.Position, finding.KindLogOffsetGap, level,
				"%s missing before this entry (the previous entry ends at %d, %s:%d): %s", offsetsText(p.prevLast+1, sum.BaseOffset-1), p.prevLast, p.prevFile, p.prevPos, why)
		}
	}
	if p.replayFrom < 0 {
		p.replayFrom = sum.BaseOffset
		p.full = sum.BaseOffset == 0 && !p.rep.Compacted
	}
	p.prevLast = max(p.prevLast, sum.LastOffset)
	p.prevFile, p.prevPos = file, sum.Position
	if sr.FirstOffset < 0 {
		sr.FirstOffset = sum.BaseOffset
	}
	sr.LastOffset = max(sr.LastOffset, sum.LastOffset)

	// Timestamps, for the retention warnings.
	if !p.haveEntries {
		p.segFirstTs = sum.MaxTimestamp
		p.haveEntries = true
	}
	p.segMaxTs = max(p.segMaxTs, sum.MaxTimestamp)

	// Producer snapshots taken at or before this entry see the state so
	// far.
	for ; p.nextSnap < len(p.snaps) && p.snaps[p.nextSnap] <= sum.BaseOffset; p.nextSnap++ {
		v.compareSnapshot(p, p.snaps[p.nextSnap])
	}
	if r.v2 {
		// A v2 batch's BaseOffset and ProducerID are sum's.
		if ep := r.epoch; ep >= 0 {
			if n := len(p.epochRuns); n > 0 && p.epochRuns[n-1].epoch == ep {
				p.epochRuns[n-1].lastBase = sum.BaseOffset
			} else {
				p.epochRuns = append(p.epochRuns, epochRun{epoch: ep, firstBase: sum.BaseOffset, lastBase: sum.BaseOffset, file: file, pos: sum.Position})
			}
		}
		if recErr == nil {
			v.replay(p, r, file, sum.Position)
		}
	}
	return sum, recErr == nil
}

// replay applies a v2 batch to the producer state, as Kafka's recovery
// does, and remembers the aborted transaction it completes.
func (v *verifier) replay(p *partition, r *entryResult, file string, pos int64) {
	info, err := r.info, r.infoErr
	if err == nil {
		var done *producer.CompletedTxn
		var lso int64
		done, lso, err = p.ps.Replay(info)
		if err == nil && done != nil && done.IsAborted {
			p.aborted = append(p.aborted, expectedAbort{
				txn:  index.AbortedTxn{ProducerID: done.ProducerID, FirstOffset: done.FirstOffset, LastOffset: done.LastOffset, LastStableOffset: lso},
				file: file, pos: pos,
			})
		}
	}
	if err != nil {
		p.add(file, pos, finding.KindProducerState, finding.Warning, "batch at offset %d (producer %d): %v", r.sum.BaseOffset, r.sum.ProducerID, err)
	}
}

// damage reports a region of a .log that holds no valid entry.
func (v *verifier) damage(p *partition, file string, d resync.Damage, last, clean bool) {
	n := d.End - d.Start
	if d.Resynced {
		kind := finding.KindLogCorrupt
		if errors.Is(d.Err, format.ErrCRC) {
			kind = finding.KindLogCRC
		}
		var what string
		switch {
		case d.Err != nil:
			what = resync.Describe(d.Err)
		case d.Zeros:
			what = "zero bytes where an entry should start"
		case d.ZeroRun >= record.HeaderSizeUpToMagic:
			what = fmt.Sprintf("%d zero bytes where an entry should start, then the rest of a damaged entry", d.ZeroRun)
		default:
			what = "bytes that are not an entry (a length that runs past the data, or garbage)"
		}
		p.add(file, d.Start, kind, finding.Error,
			"%s; bytes %d..%d (%d bytes) hold no valid entry and a valid entry follows at %d: this is corruption, not a torn write. Kafka's recovery truncates the segment here and deletes every later segment; segviz salvage keeps what follows",
			what, d.Start, d.End, n, d.End)
		p.damaged = len(p.problems) - 1
		return
	}
	if d.Err != nil {
		kind := finding.KindLogCorrupt
		if errors.Is(d.Err, format.ErrCRC) {
			kind = finding.KindLogCRC
		}
		p.add(file, d.Start, kind, finding.Error,
			"%s; nothing valid follows in the last %d bytes (a torn write of the last entry, or resync.Damage): Kafka's recovery truncates the segment here", resync.Describe(d.Err), n)
		return
	}
	level, why := finding.Warning, "the active segment of a log directory without a clean-shutdown marker: Kafka's recovery cuts it"
	if !last {
		level, why = finding.Error, "a segment that is not the last one is complete once rolled: this is resync.Damage"
	} else if clean {
		level, why = finding.Error, "the log directory has a clean-shutdown marker, so Kafka skips recovery and would append after these bytes"
	}
	if d.Zeros {
		p.add(file, d.Start, finding.KindLogZeroTail, level, "%d zero bytes at the end of the file (preallocation, or a crash after the file grew); %s", n, why)
		return
	}
	p.add(file, d.Start, finding.KindLogTornTail, level, "%d bytes at the end of the file are a partial entry (a torn write); %s", n, why)
}

// progress reports progress at most once per MiB, or when forced.
func (v *verifier) progress(done int64, force bool) {
	if v.opt.Progress == nil {
		return
	}
	if v.shared != nil {
		v.shared.add(done-v.reported, force)
		v.reported = done
		return
	}
	if force || done-v.reported >= 1<<20 {
		v.reported = done
		v.opt.Progress(done, v.total)
	}
}

// indexes checks a segment's .index, .timeindex and .txnindex against the
// entries of its .log.
func (v *verifier) indexes(p *partition, s *segFiles, entries []verify.LogEntrySummary, last bool) error {
	nonEmpty := s.log.Size() > 0
	idxPath := segment.Path(p.dir, s.base, segment.IndexSuffix)
	tiPath := segment.Path(p.dir, s.base, segment.TimeIndexSuffix)
	txPath := segment.Path(p.dir, s.base, segment.TxnIndexSuffix)
	// An index larger than Kafka could have written is a finding, and is
	// not opened: a sparse 1 TiB file would be read (or mapped and paged)
	// in full.
	idxOK := v.sizeCheck(p, idxPath, s.index, s.log.Size(), index.EntrySize, last)
	tiOK := v.sizeCheck(p, tiPath, s.timeIndex, s.log.Size(), timeindex.EntrySize, last)
	txOK := v.sizeCheck(p, txPath, s.txnIdx, s.log.Size(), index.AbortedTxnSize, last)
	if s.index == nil {
		if nonEmpty {
			p.add(idxPath, -1, finding.KindIndexMissing, finding.Warning, "the segment has no offset index; Kafka rebuilds it (recovering the segment) when it loads the log%s", activeNote(last))
		}
	} else if idxOK {
		x, err := index.OpenOffsetIndex(v.fsys, idxPath, s.base, index.OpenOptions{})
		if err != nil {
			return err
		}
		if err := x.SanityCheck(); err != nil {
			p.add(idxPath, resync.CorruptionOffset(err, -1), finding.KindSanity, finding.Error, "%s", resync.Describe(err))
		}
		if pp := verify.Padding(idxPath, index.EntrySize, x.Padding(), last); pp != nil {
			p.problems = append(p.problems, *pp)
		}
		p.problems = append(p.problems, verify.OffsetIndex(x, entries)...)
		x.Close()
	}

	if s.timeIndex == nil {
		if nonEmpty {
			p.add(tiPath, -1, finding.KindIndexMissing, finding.Warning, "the segment has no time index; Kafka rebuilds it when it recovers the segment%s", activeNote(last))
		}
	} else if tiOK {
		x, err := timeindex.OpenTimeIndex(v.fsys, tiPath, s.base, index.OpenOptions{})
		if err != nil {
			return err
		}
		pad := x.Padding()
		if err := x.SanityCheck(); err != nil {
			level, note := finding.Error, ""
			if last && paddingOnly(x, pad) {
				// kill -9 of a writer leaves the active segment's index
				// preallocated: its zero entries end below its first
				// timestamp. Kafka's load finds that (CorruptIndexException)
				// and rebuilds the index, as it does for a torn tail.
				level, note = finding.Warning, "; the active segment's preallocated padding, left by a crash: Kafka rebuilds this index when it loads the log"
			}
			p.add(tiPath, resync.CorruptionOffset(err, -1), finding.KindSanity, level, "%s%s", resync.Describe(err), note)
		}
		if pp := verify.Padding(tiPath, timeindex.EntrySize, pad, last); pp != nil {
			p.problems = append(p.problems, *pp)
		}
		p.problems = append(p.problems, verify.TimeIndex(x, entries)...)
		if !last && p.segMaxTs >= 0 {
			lastTs := int64(record.NoTimestamp)
			if pad.ValidEntries > 0 {
				lastTs = x.Entry(pad.ValidEntries - 1).Timestamp
			}
			if lastTs < p.segMaxTs {
				p.add(tiPath, int64(pad.ValidEntries)*timeindex.EntrySize, finding.KindTimeIndexNoFinal, finding.Warning,
					"the last entry's timestamp is %d but the segment's largest is %d: retention judges the segment by the older one (the entry a roll writes is missing)", lastTs, p.segMaxTs)
			}
		}
		x.Close()
	}

	var txns []index.AbortedTxn
	if s.txnIdx != nil && txOK {
		x, err := index.OpenTransactionIndex(v.fsys, txPath, s.base, index.OpenOptions{})
		if err != nil {
			var ce *format.CorruptionError
			if !errors.As(err, &ce) {
				return err
			}
			p.add(txPath, ce.Offset, finding.KindSanity, finding.Error, "%s", resync.Describe(err))
		} else {
			p.problems = append(p.problems, verify.TxnIndex(x, entries)...)
			txns = x.All()
			x.Close()
		}
	}
	for _, a := range p.aborted {
		if !txOK {
			break // the .txnindex is reported as too large, unread
		}
		i := sort.Search(len(txns), func(i int) bool { return txns[i].LastOffset >= a.txn.LastOffset })
		if i == len(txns) || txns[i].LastOffset != a.txn.LastOffset || txns[i].ProducerID != a.txn.ProducerID {
			p.add(txPath, int64(i)*index.AbortedTxnSize, finding.KindTxnMissingAbort, finding.Error,
				"no entry for the transaction of producer %d aborted by the marker at offset %d (%s:%d): read_committed consumers would return its records; expected %v",
				a.txn.ProducerID, a.txn.LastOffset, a.file, a.pos, a.txn)
			continue
		}
		if t := txns[i]; t.FirstOffset != a.txn.FirstOffset || t.LastStableOffset != a.txn.LastStableOffset {
			level := finding.Error
			if !p.full {
				level = finding.Warning
			}
			p.add(txPath, int64(i)*index.AbortedTxnSize, finding.KindTxnMismatch, level,
				"%v, but replaying the log gives first offset %d and last stable offset %d%s", t, a.txn.FirstOffset, a.txn.LastStableOffset, partialNote(p.full))
		}
	}
	return nil
}

// sizeCheck reports whether the index fi describes (nil: none) may be
// read, and reports KindIndexTooLarge when it is larger than Kafka could
// have written beside a .log of logSize bytes.
func (v *verifier) sizeCheck(p *partition, file string, fi fs.FileInfo, logSize int64, entrySize int, last bool) bool {
	if fi == nil {
		return true
	}
	why := indexTooLarge(fi.Size(), logSize, entrySize, last)
	if why == "" {
		return true
	}
	level := finding.Warning
	if fi.Size() > math.MaxInt32 {
		level = finding.Error
	}
	p.add(file, -1, finding.KindIndexTooLarge, level, "%s; not read: Kafka rebuilds it when it recovers the segment, and so does segviz recover", why)
	return false
}

// paddingOnly reports whether the entries of x before its zero padding
// pass Kafka's sanity check, so that a failing check is the padding's.
func paddingOnly(x *timeindex.TimeIndex, pad index.Padding) bool {
	if !pad.Untrimmed || pad.ValidEntries == 0 {
		return pad.Untrimmed
	}
	first, last := x.Entry(0), x.Entry(pad.ValidEntries-1)
	return last.Timestamp >= first.Timestamp && last.Offset >= x.BaseOffset()
}

func activeNote(last bool) string {
	if last {
		return " (the active segment's index is preallocated at 10 MiB while the broker runs, and often missing from copies)"
	}
	return ""
}

func partialNote(full bool) string {
	if full {
		return ""
	}
	return " (the log does not reach back to offset 0, so the replay may lack earlier history)"
}

// offsetsText names the offsets first..last.
func offsetsText(first, last int64) string {
	if first == last {
		return fmt.Sprintf("offset %d", first)
	}
	return fmt.Sprintf("offsets %d..%d", first, last)
}

// timestampWarnings adds retention.TimestampWarnings for the partition's
// segments.
func (v *verifier) timestampWarnings(p *partition, leo int64) {
	if len(p.rep.Segments) == 0 {
		return
	}
	st := retention.LogState{LogStartOffset: p.rep.LogStartOffset, LogEndOffset: leo, HighWatermark: leo}
	byBase := map[int64]string{}
	for i, sr := range p.rep.Segments {
		size := sr.Size
		if sr.Batches == 0 {
			size = 0 // an empty (or wholly damaged) segment has no timestamps to judge
		}
		first := int64(record.NoTimestamp)
		if sr.Batches > 0 {
			first = v.firstTs(p, i)
		}
		st.Segments = append(st.Segments, retention.SegmentInfo{
			BaseOffset: sr.BaseOffset, Size: size, LargestRecordTimestamp: sr.MaxTimestamp,
			FirstBatchTimestamp: first, LastModified: p.segs[i].log.ModTime().UnixMilli(),
		})
		byBase[sr.BaseOffset] = sr.File
	}
	for _, w := range retention.TimestampWarnings(st, v.policy, v.now) {
		if base, ok := retention.WarningBase(w); ok {
			w.File = byBase[base]
		}
		p.problems = append(p.problems, w)
	}
}

// firstTs returns the first batch timestamp of segment i, recorded while
// it was read.
func (v *verifier) firstTs(p *partition, i int) int64 {
	if i < len(p.firstTss) {
		return p.firstTss[i]
	}
	return record.NoTimestamp
}

// The log directory: its checkpoints and clean-shutdown marker, read once
// for all its partitions.

// offsetAt is a checkpointed offset and the byte position of its line.
type offsetAt struct {
	offset int64
	pos    int64
}

type logDirState struct {
	dir                             string
	clean                           bool
	recovery, logStart, hw, cleaner map[checkpoint.TopicPartition]offsetAt
}

func (ld *logDirState) path(name string) string { return path.Join(ld.dir, name) }

// logDir returns the state of log directory dir, reading it the first time
// (and reporting its problems with the first partition that asks).
func (v *verifier) logDir(dir string, p *partition) (*logDirState, error) {
	if ld, ok := v.logDirs[dir]; ok {
		return ld, nil
	}
	ld := &logDirState{dir: dir}
	v.logDirs[dir] = ld
	var err error
	if ld.clean, _, err = checkpoint.ReadCleanShutdown(v.fsys, dir); err != nil {
		return nil, err
	}
	read := func(name string) (map[checkpoint.TopicPartition]offsetAt, error) {
		b, err := vfs.ReadFile(v.fsys, path.Join(dir, name))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil
			}
			return nil, err
		}
		entries, err := checkpoint.ParseOffsets(b)
		if err != nil {
			p.add(path.Join(dir, name), resync.CorruptionOffset(err, 0), finding.KindCheckpointCorrupt, finding.Error, "%s (Kafka falls back to recovering every partition from scratch)", resync.Describe(err))
			return nil, nil
		}
		lines := lineStarts(b)
		m := make(map[checkpoint.TopicPartition]offsetAt, len(entries))
		for i, e := range entries {
			pos := int64(-1)
			if i+2 < len(lines) {
				pos = lines[i+2]
			}
			m[e.TopicPartition] = offsetAt{e.Offset, pos}
		}
		return m, nil
	}
	if ld.recovery, err = read(checkpoint.RecoveryPointFile); err != nil {
		return nil, err
	}
	if ld.logStart, err = read(checkpoint.LogStartOffsetFile); err != nil {
		return nil, err
	}
	if ld.hw, err = read(checkpoint.ReplicationOffsetFile); err != nil {
		return nil, err
	}
	if ld.cleaner, err = read(checkpoint.CleanerOffsetFile); err != nil {
		return nil, err
	}
	return ld, nil
}

// lineStarts returns the byte position of each line of b.
func lineStarts(b []byte) []int64 {
	out := []int64{0}
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			out = append(out, int64(i+1))
		case '\n':
			out = append(out, int64(i+1))
		}
	}
	return out
}

// partitionMetadata checks partition.metadata, if present.
func (v *verifier) partitionMetadata(p *partition) {
	_, err := checkpoint.ReadPartitionMetadata(v.fsys, p.dir)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return
	}
	p.add(path.Join(p.dir, checkpoint.PartitionMetadataFile), resync.CorruptionOffset(err, -1), finding.KindPartitionMetadata, finding.Error, "%s (Kafka fails to load the partition)", resync.Describe(err))
}
