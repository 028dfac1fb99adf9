package demo

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/retentionapply"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// Names of the demo's log directory and partitions, inside its filesystem.
const (
	LogDir    = "kafka-logs"
	Partition = LogDir + "/orders-0"
	Damaged   = LogDir + "/orders-1"
)

// Now is the demo's present: the time its "now" controls start at, and the
// time `segviz retention --now` must be given to agree with the page.
var Now = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

const (
	day = 24 * time.Hour
	// SegmentBytes is the demo topic's segment.bytes: small, so that the
	// demo has several segments (it also rolls at each phase).
	SegmentBytes = 256 << 10
)

// Demo is a built demo: its filesystem and what was put in it.
type Demo struct {
	// FS holds the log directory LogDir. It must not be written to.
	FS *vfs.Mem
	// Now is the instant the demo was left at (the fake clock's time).
	Now time.Time
	// Config is orders-0's topic config (Kafka's defaults but segment.bytes).
	Config config.Config
	// Notes says what each partition (key -1) and segment (its base
	// offset) shows, by partition directory.
	Notes map[string]map[int64]string
}

// Props returns the topic properties of orders-0 that differ from Kafka's
// defaults.
func Props() map[string]string {
	return map[string]string{config.SegmentBytes: fmt.Sprint(SegmentBytes)}
}

// clock is the fake clock of the build.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

var (
	once     sync.Once
	built    *Demo
	buildErr error
)

// Get returns the demo, building it on first use. The result is shared and
// must not be modified.
func Get() (*Demo, error) {
	once.Do(func() { built, buildErr = Build() })
	return built, buildErr
}

// Build builds a new demo.
func Build() (*Demo, error) {
	clk := &clock{t: Now.Add(-10 * day)}
	fsys := vfs.MemOptions{Clock: clk.Now}.New()
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(Props())
	if err != nil {
		return nil, err
	}
	d := &Demo{FS: fsys, Now: Now, Config: cfg, Notes: map[string]map[int64]string{
		Partition: {-1: "segviz's demo: eight segments written over ten days — every codec, transactions, compaction's empty batch, a replayed backlog — of which retention just deleted the first: seven remain, and the deleted one's files wait out file.delete.delay.ms as .deleted. It was written by segkit's own log engine with a fake clock; now is " + Now.Format(time.RFC3339) + ". Its timeline (the lane under the segments) records the rolls, a savepoint and the retention check."},
		Damaged:   {-1: "a partition damaged on purpose: a flipped byte (bad CRC), index entries that point inside a batch or go back in time, a torn tail, and an untrimmed index Kafka would misread (KAFKA-10207). See the Verification tab."},
	}}
	if err := d.buildOrders(clk); err != nil {
		return nil, fmt.Errorf("demo: orders-0: %w", err)
	}
	if err := d.buildDamaged(clk); err != nil {
		return nil, fmt.Errorf("demo: orders-1: %w", err)
	}
	clk.set(Now)
	return d, nil
}

// writer appends the demo's batches to a log at the times they are stamped.
type writer struct {
	l   *kafkalog.Log
	tl  *timeline.Timeline // the log's timeline (orders-0's); nil for orders-1
	clk *clock
	rng *rand.Rand
	b   record.Builder
	buf []byte
	seq map[int64]int32 // next sequence of idempotent producers
	n   int             // orders written, for keys
}

// batch appends one batch of n records stamped from ts on (a few ms apart),
// with the clock at the batch's newest timestamp.
func (w *writer) batch(codec compress.Codec, n int, ts time.Time, opts ...func(*record.BatchSpec, []record.Record)) error {
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = w.order(ts.Add(time.Duration(i) * 3 * time.Millisecond))
	}
	spec := record.NewBatchSpec(0, codec)
	for _, o := range opts {
		o(&spec, recs)
	}
	if spec.ProducerID >= 0 && !spec.Control {
		spec.BaseSequence = w.seq[spec.ProducerID]
		w.seq[spec.ProducerID] += int32(n)
	}
	var err error
	w.buf, err = w.b.AppendBatch(w.buf[:0], &spec, recs)
	if err != nil {
		return err
	}
	w.clk.set(later(w.clk.Now(), recs[len(recs)-1].Timestamp))
	return w.append()
}

// append appends w.buf. A roll's instant is written by the timeline in
// the background; syncing it before the clock moves on keeps the file's
// time, and so the demo, the same from one build to the next.
func (w *writer) append() error {
	res, err := w.l.Append(w.buf, 3)
	if err == nil && res.Rolled && w.l.Timeline() != nil {
		err = w.l.Timeline().Sync()
	}
	return err
}

// later returns the clock time for an append of records stamped up to ts:
// ts itself, unless the clock is already past it (a backlog replay).
func later(now time.Time, ts int64) time.Time {
	t := time.UnixMilli(ts).UTC()
	if t.After(now) {
		return t
	}
	return now.Add(2 * time.Second)
}

// producer marks a batch as written by producer pid (epoch 0).
func producer(pid int64, transactional bool) func(*record.BatchSpec, []record.Record) {
	return func(s *record.BatchSpec, _ []record.Record) {
		s.ProducerID, s.ProducerEpoch, s.Transactional = pid, 0, transactional
	}
}

// tombstones makes every other record a tombstone (null value).
func tombstones(_ *record.BatchSpec, recs []record.Record) {
	for i := range recs {
		if i%2 == 1 {
			recs[i].Value = nil
		}
	}
}

// binary gives the records random binary values and no key.
func (w *writer) binary(_ *record.BatchSpec, recs []record.Record) {
	for i := range recs {
		v := make([]byte, 16+w.rng.IntN(48))
		for j := range v {
			v[j] = byte(w.rng.Uint32())
		}
		recs[i].Key, recs[i].Value = nil, v
		recs[i].Headers = []record.Header{{Key: []byte("content-type"), Value: []byte("application/octet-stream")}}
	}
}

var (
	customers  = []string{"acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "tyrell"}
	currencies = []string{"EUR", "USD", "GBP", "JPY"}
	sources    = []string{"web", "mobile", "pos", "partner-api"}
)

// order returns one order record stamped ts.
func (w *writer) order(ts time.Time) record.Record {
	w.n++
	id := 100000 + w.n
	trace := make([]byte, 8)
	for i := range trace {
		trace[i] = byte(w.rng.Uint32())
	}
	value := fmt.Sprintf(`{"order":%d,"customer":%q,"amount":%d.%02d,"currency":%q,"items":%d}`,
		id, customers[w.rng.IntN(len(customers))], 5+w.rng.IntN(495), w.rng.IntN(100),
		currencies[w.rng.IntN(len(currencies))], 1+w.rng.IntN(9))
	r := record.Record{
		Timestamp: ts.UnixMilli(),
		Key:       []byte(fmt.Sprintf("order-%d", id)),
		Value:     []byte(value),
		Headers: []record.Header{
			{Key: []byte("trace-id"), Value: []byte(hex.EncodeToString(trace))},
			{Key: []byte("source"), Value: []byte(sources[w.rng.IntN(len(sources))])},
		},
	}
	if w.n%7 == 0 {
		r.Headers = r.Headers[:1]
	}
	if w.n%11 == 0 {
		r.Headers = nil
	}
	return r
}

// spread appends batches with timestamps spread evenly over [from, to),
// cycling through codecs, with 1 to maxRecords records each.
func (w *writer) spread(from, to time.Time, batches, maxRecords int, codecs []compress.Codec, opts ...func(*record.BatchSpec, []record.Record)) error {
	step := to.Sub(from) / time.Duration(batches)
	for i := range batches {
		ts := from.Add(time.Duration(i) * step).Add(time.Duration(w.rng.IntN(1000)) * time.Millisecond)
		if err := w.batch(codecs[i%len(codecs)], 1+w.rng.IntN(maxRecords), ts, opts...); err != nil {
			return fmt.Errorf("batch %d of [%s, %s): %w", i, from.Format(time.RFC3339), to.Format(time.RFC3339), err)
		}
	}
	return nil
}

// endTxn appends a COMMIT or ABORT marker for producer pid at ts.
func (w *writer) endTxn(pid int64, t record.ControlType, ts time.Time) error {
	spec := record.NewBatchSpec(0, compress.None)
	spec.ProducerID, spec.ProducerEpoch = pid, 0
	var err error
	w.buf, err = w.b.AppendEndTxnMarker(w.buf[:0], &spec, record.EndTxnMarker{Type: t, CoordinatorEpoch: 5}, ts.UnixMilli())
	if err != nil {
		return err
	}
	w.clk.set(later(w.clk.Now(), ts.UnixMilli()))
	return w.append()
}

// roll starts a new segment and notes what the one closed showed. A log
// opened with Options.Timeline records the roll itself, as a roll instant
// of reason kafkalog.RollRequested.
func (w *writer) roll(d *Demo, note string) error {
	base := w.l.ActiveSegment().BaseOffset()
	d.Notes[Partition][base] = note
	if err := w.l.Roll(); err != nil {
		return err
	}
	if tl := w.l.Timeline(); tl != nil {
		return tl.Sync() // as in append
	}
	return nil
}

// savepoint takes (release nil) or releases a savepoint on the offsets
// [first, last], as an instant begun and completed with the log's state.
func (w *writer) savepoint(label, comment string, first, last int64, release *timeline.InstantTime) (timeline.Instant, error) {
	sp := &timeline.Savepoint{Label: label, By: "compliance@example.com", Comment: comment, FirstOffset: first, LastOffset: last,
		Release: release, LogStartOffset: w.l.LogStartOffset(), LogEndOffset: w.l.LogEndOffset()}
	segs := w.l.Segments()
	for i, sg := range segs {
		ref := timeline.SegmentRef{BaseOffset: sg.BaseOffset(), NextOffset: w.l.LogEndOffset(), Size: sg.Size(), LargestTimestamp: -1}
		if i+1 < len(segs) {
			ref.NextOffset = segs[i+1].BaseOffset()
		}
		if ts, err := sg.LargestTimestamp(); err == nil && ts >= 0 {
			ref.LargestTimestamp = ts
		}
		sp.Segments = append(sp.Segments, ref)
	}
	x, err := w.tl.Begin(timeline.ActionSavepoint, sp)
	if err != nil {
		return timeline.Instant{}, err
	}
	// A savepoint changes no file: it is whole once completed.
	if err := x.Complete(sp); err != nil {
		return timeline.Instant{}, err
	}
	return x.Instant(), nil
}

var all = []compress.Codec{compress.None, compress.Gzip, compress.Snappy, compress.LZ4, compress.Zstd}

func (d *Demo) buildOrders(clk *clock) error {
	// orders-0 has a timeline (.segkit/timeline): its rolls, a savepoint
	// taken and released, and the retention check 20 s before Now, each
	// recorded by the code that records them for segkit's own actions
	// (the engine's rolls, the timeline's Begin and Complete,
	// retentionapply's clean).
	l, err := kafkalog.Open(d.FS, Partition, d.Config, kafkalog.Options{Clock: clk, Timeline: true})
	if err != nil {
		return err
	}
	tl := l.Timeline()
	w := &writer{l: l, tl: tl, clk: clk, rng: rand.New(rand.NewPCG(2026, 3)), seq: map[int64]int32{}}
	T := Now

	// Segment 1: ten days ago. Retention deleted it 20 seconds before Now,
	// when retention.ms was still 9.5 days; its files wait as .deleted.
	if err := w.spread(T.Add(-10*day), T.Add(-9*day-16*time.Hour), 60, 12, []compress.Codec{compress.None, compress.Gzip}); err != nil {
		return err
	}
	if err := w.roll(d, "deleted by retention 20 s before now (retention.ms was 9.5 days then); its files wait as .deleted for file.delete.delay.ms"); err != nil {
		return err
	}
	// Segments 2 and 3: older than 7 days at Now, so the default what-if
	// deletes them.
	if err := w.spread(T.Add(-9*day), T.Add(-8*day), 70, 15, []compress.Codec{compress.Gzip, compress.Snappy}); err != nil {
		return err
	}
	if err := w.roll(d, "gzip and snappy; older than retention.ms (7 days) at now, so the next check deletes it; a DeleteRecords request moved the log start offset into it"); err != nil {
		return err
	}
	if err := w.spread(T.Add(-8*day), T.Add(-7*day-2*time.Hour), 70, 15, []compress.Codec{compress.Snappy, compress.None}); err != nil {
		return err
	}
	if err := w.roll(d, "snappy and uncompressed; also older than 7 days at now"); err != nil {
		return err
	}
	// Segment 4: lz4 and zstd, kept by the default policy.
	if err := w.spread(T.Add(-6*day), T.Add(-4*day-1*time.Hour), 80, 20, []compress.Codec{compress.LZ4, compress.Zstd}); err != nil {
		return err
	}
	if err := w.roll(d, "lz4 and zstd; kept at 7 days, deleted from a retention.ms under 4 days"); err != nil {
		return err
	}
	// Segment 5: a backlog replayed from 2019 (written 4 days ago).
	clk.set(T.Add(-4 * day))
	backlog := time.Date(2019, 6, 1, 12, 0, 0, 0, time.UTC)
	for i := range 40 {
		ts := backlog.Add(time.Duration(i) * 90 * time.Second)
		w.buf = w.buf[:0]
		if err := w.batch(all[i%len(all)], 1+w.rng.IntN(10), ts); err != nil {
			return fmt.Errorf("backlog batch %d: %w", i, err)
		}
	}
	if err := w.roll(d, "a backlog replayed 4 days ago with its 2019 timestamps: retention's far-past warning; it waits behind the segment before it"); err != nil {
		return err
	}
	// Segment 6: transactions (one committed, one aborted), an idempotent
	// producer, plain batches.
	t0 := T.Add(-3 * day)
	if err := w.spread(t0, t0.Add(4*time.Hour), 20, 10, all); err != nil {
		return err
	}
	t1 := t0.Add(5 * time.Hour)
	for i := range 3 {
		if err := w.batch(compress.Zstd, 3+i, t1.Add(time.Duration(i)*time.Minute), producer(1000, true)); err != nil {
			return fmt.Errorf("transaction 1000: %w", err)
		}
		if err := w.batch(compress.Snappy, 2, t1.Add(time.Duration(i)*time.Minute+30*time.Second), producer(2000, true)); err != nil {
			return fmt.Errorf("transaction 2000: %w", err)
		}
	}
	if err := w.endTxn(1000, record.ControlCommit, t1.Add(4*time.Minute)); err != nil {
		return err
	}
	if err := w.endTxn(2000, record.ControlAbort, t1.Add(5*time.Minute)); err != nil {
		return err
	}
	if err := w.spread(t1.Add(10*time.Minute), T.Add(-2*day), 30, 10, all, producer(3000, false)); err != nil {
		return err
	}
	txnBase := l.ActiveSegment().BaseOffset()
	if err := w.roll(d, "transactions: producer 1000 commits, producer 2000 aborts (see the .txnindex and the control batches); producer 3000 is idempotent"); err != nil {
		return err
	}
	// A legal hold on the transactions while an audit looked at them,
	// released a day later: the timeline shows both, and no hold is in
	// force at Now (retention's plans are the same as without it).
	txnLast := l.LogEndOffset() - 1
	hold, err := w.savepoint("audit-2026-02", "the transactions of producers 1000 and 2000, under review", txnBase, txnLast, nil)
	if err != nil {
		return err
	}
	// Segment 7: every codec, tombstones, binary values, and an empty
	// batch a compaction left (count 0, its offsets kept).
	t2 := T.Add(-2 * day)
	if err := w.spread(t2, t2.Add(6*time.Hour), 25, 12, all, tombstones); err != nil {
		return err
	}
	if err := w.spread(t2.Add(6*time.Hour), t2.Add(12*time.Hour), 10, 6, all, w.binary); err != nil {
		return err
	}
	if err := w.emptyBatch(t2.Add(12*time.Hour+30*time.Minute), 5); err != nil {
		return err
	}
	if err := w.spread(t2.Add(13*time.Hour), T.Add(-1*day-2*time.Hour), 25, 12, all); err != nil {
		return err
	}
	if err := w.roll(d, "every codec, tombstones, binary values, and an empty batch left by compaction (count 0, its 5 offsets kept)"); err != nil {
		return err
	}
	clk.set(T.Add(-1 * day))
	if _, err := w.savepoint("audit-2026-02", "review closed: the hold is released", txnBase, txnLast, &hold.Time); err != nil {
		return err
	}
	// Segment 8, the active one: the last six hours.
	if err := w.spread(T.Add(-6*time.Hour), T.Add(-1*time.Minute), 60, 15, all); err != nil {
		return err
	}
	d.Notes[Partition][l.ActiveSegment().BaseOffset()] = "the active segment: the last six hours"

	// Retention ran 20 s ago with retention.ms at 9.5 days: segment 1 went.
	clk.set(T.Add(-20 * time.Second))
	st, err := retention.StateOf(l)
	if err != nil {
		return err
	}
	old := retention.PolicyFrom(d.Config, config.DefaultBroker())
	old.RetentionMs = int64(9*day+12*time.Hour) / int64(time.Millisecond)
	plan, err := old.Plan(st, clk.Now().UnixMilli())
	if err != nil {
		return err
	}
	if len(plan.Deletions) != 1 {
		return fmt.Errorf("the earlier retention check deletes %d segments, want 1: %v", len(plan.Deletions), plan)
	}
	// The check as `segviz retention --apply` runs it: the same deletion
	// as retention.Apply(l, plan), recorded as a clean instant.
	if _, err := retentionapply.Apply(l, tl, old, plan); err != nil {
		return err
	}
	// A DeleteRecords request 10 s ago moved the log start offset into
	// segment 2.
	clk.set(T.Add(-10 * time.Second))
	if err := l.IncrementLogStartOffset(l.LogStartOffset() + 15); err != nil {
		return err
	}
	clk.set(T)
	// The log is left open, as a running broker's is, so that the .deleted
	// files stay (Close would remove them). The active segment's indexes
	// are trimmed as a roll would: a preallocated time index read as Kafka
	// reads it would give the segment a newest timestamp of 0 (1970),
	// which orders-1 shows instead.
	if err := l.Flush(); err != nil { // and the noted rolls
		return err
	}
	return trimAsRolled(d.FS, l.ActiveSegment())
}

// trimAsRolled does to the index files of the flushed active segment s
// what a roll does (LogSegment.onBecomeInactiveSegment): the final time
// index entry, then both indexes trimmed to their entries. It writes the
// files itself, beside the log that owns s (whose views are read-only),
// which the demo then leaves alone.
func trimAsRolled(fsys vfs.FS, s kafkalog.SegmentView) error {
	ts, off, err := s.MaxTimestampSoFar()
	if err != nil {
		return err
	}
	ti, err := timeindex.OpenTimeIndex(fsys, s.TimeIndexPath(), s.BaseOffset(), index.OpenOptions{Writable: true})
	if err != nil {
		return err
	}
	defer ti.Close()
	oi, err := index.OpenOffsetIndex(fsys, s.IndexPath(), s.BaseOffset(), index.OpenOptions{Writable: true})
	if err != nil {
		return err
	}
	defer oi.Close()
	// Reopened, a preallocated file counts its zeros as entries (as
	// Kafka's AbstractIndex does); the engine knew where they ended.
	if _, err := ti.DiscardPadding(); err != nil {
		return err
	}
	if _, err := oi.DiscardPadding(); err != nil {
		return err
	}
	if err := ti.MaybeAppend(ts, off, true); err != nil {
		return err
	}
	if err := oi.TrimToValidSize(); err != nil {
		return err
	}
	return ti.TrimToValidSize()
}

// emptyBatch appends, as a follower would copy it, a batch with no records
// whose offset range covers n offsets: what the log cleaner leaves of a
// batch whose records were all compacted away (it keeps the batch for its
// producer state).
func (w *writer) emptyBatch(ts time.Time, n int) error {
	spec := record.NewBatchSpec(w.l.LogEndOffset(), compress.None)
	spec.ProducerID, spec.ProducerEpoch = 3000, 0
	spec.BaseSequence = w.seq[3000]
	w.seq[3000] += int32(n)
	spec.LastOffsetDelta = int32(n - 1)
	spec.MaxTimestamp = ts.UnixMilli()
	spec.PartitionLeaderEpoch = 3
	var err error
	w.buf, err = w.b.AppendBatch(w.buf[:0], &spec, nil)
	if err != nil {
		return err
	}
	w.clk.set(later(w.clk.Now(), ts.UnixMilli()))
	_, err = w.l.AppendAsFollower(w.buf)
	return err
}

// buildDamaged writes orders-1 and damages it.
func (d *Demo) buildDamaged(clk *clock) error {
	cfg := d.Config
	cfg.IndexIntervalBytes = 1024
	clk.set(Now.Add(-2 * day))
	l, err := kafkalog.Open(d.FS, Damaged, cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		return err
	}
	w := &writer{l: l, clk: clk, rng: rand.New(rand.NewPCG(7, 7)), seq: map[int64]int32{}}
	var bases []int64
	for s := range 3 {
		bases = append(bases, l.ActiveSegment().BaseOffset())
		from := Now.Add(-2*day + time.Duration(s)*12*time.Hour)
		if err := w.spread(from, from.Add(10*time.Hour), 30, 8, all); err != nil {
			return err
		}
		if s < 2 {
			if err := l.Roll(); err != nil {
				return err
			}
		}
	}
	if err := l.Close(); err != nil {
		return err
	}
	// Segment 2: flip a byte inside the 10th batch's records (bad CRC).
	seg := func(i int, ext string) string { return segment.Path(Damaged, bases[i], ext) }
	pos, err := entryPosition(d.FS, seg(1, segment.LogSuffix), 10)
	if err != nil {
		return err
	}
	if err := xorByte(d.FS, seg(1, segment.LogSuffix), pos+record.RecordsOffset+5, 0x5a); err != nil {
		return err
	}
	// Segment 1: the 3rd offset index entry points 7 bytes into a batch;
	// the 4th time index entry goes back in time.
	if err := xorByte(d.FS, seg(0, segment.IndexSuffix), 2*8+7, 0x07); err != nil {
		return err
	}
	if err := xorByte(d.FS, seg(0, segment.TimeIndexSuffix), 3*12+3, 0x10); err != nil {
		return err
	}
	// Segment 3: a torn tail, as a crash in the middle of a write leaves.
	f, err := d.FS.OpenFile(seg(2, segment.LogSuffix), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	torn := []byte{0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 200, 0, 0, 0, 0, 2, 0xde, 0xad}
	if _, err := f.Write(torn); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// Segment 3's indexes are untrimmed, as a copy of a running broker's
	// active segment leaves them: zero padding, which Kafka reads as
	// entries (KAFKA-10207: a newest timestamp of 0).
	for _, p := range []struct {
		ext string
		n   int64
	}{{segment.IndexSuffix, 8 * 16}, {segment.TimeIndexSuffix, 12 * 16}} {
		st, err := d.FS.Stat(seg(2, p.ext))
		if err != nil {
			return err
		}
		f, err := d.FS.OpenFile(seg(2, p.ext), os.O_RDWR, 0)
		if err != nil {
			return err
		}
		err = f.Truncate(st.Size() + p.n)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// entryPosition returns the position of the n-th entry (from 0) of a .log.
func entryPosition(fsys vfs.FS, name string, n int) (int64, error) {
	data, err := vfs.ReadFile(fsys, name)
	if err != nil {
		return 0, err
	}
	s := record.NewScanner(data, name, 0)
	for i := 0; s.Next(); i++ {
		if i == n {
			return s.Entry().Position, nil
		}
	}
	return 0, fmt.Errorf("%s has fewer than %d entries", name, n+1)
}

func xorByte(fsys vfs.FS, name string, at int64, mask byte) error {
	f, err := fsys.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	b := []byte{0}
	if _, err := f.ReadAt(b, at); err != nil {
		return err
	}
	b[0] ^= mask
	_, err = f.WriteAt(b, at)
	return err
}

// Export writes the demo's log directory under dir (dir/kafka-logs/...),
// keeping the files' modification times, so that segviz's other commands
// can be run on it: `segviz retention --now <Now> dir/kafka-logs/orders-0`
// agrees with the page. It refuses a dir that already holds a kafka-logs.
func (d *Demo) Export(dir string) error {
	root := filepath.Join(dir, LogDir)
	if _, err := os.Stat(root); err == nil {
		return fmt.Errorf("demo: %s already exists", root)
	}
	return walk(d.FS, LogDir, func(name string, isDir bool) error {
		out := filepath.Join(dir, filepath.FromSlash(name))
		if isDir {
			return os.MkdirAll(out, 0o755)
		}
		data, err := vfs.ReadFile(d.FS, name)
		if err != nil {
			return err
		}
		st, err := d.FS.Stat(name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			return err
		}
		return os.Chtimes(out, st.ModTime(), st.ModTime())
	})
}

// walk calls fn for dir and everything under it, parents first.
func walk(fsys vfs.FS, dir string, fn func(name string, isDir bool) error) error {
	if err := fn(dir, true); err != nil {
		return err
	}
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		return err
	}
	for _, fi := range infos {
		name := path.Join(dir, fi.Name())
		if fi.IsDir() {
			if err := walk(fsys, name, fn); err != nil {
				return err
			}
			continue
		}
		if strings.HasSuffix(name, ".tmp") {
			continue
		}
		if err := fn(name, false); err != nil {
			return err
		}
	}
	return nil
}
