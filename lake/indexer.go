package lake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// HistoryMode says how much of a new partition's past backfill indexes.
type HistoryMode int8

// History modes.
const (
	// HistoryAll (the default) indexes down to Kafka's earliest offset.
	HistoryAll HistoryMode = iota
	// HistorySince indexes down to the first offset whose timestamp is at
	// or after History.Since.
	HistorySince
	// HistoryNone indexes nothing before the last stable offset the table
	// started at.
	HistoryNone
)

// History is the history setting: all, {since = <RFC 3339 time>}, none.
type History struct {
	Mode  HistoryMode
	Since time.Time
}

// Defaults of Options, the specification's.
const (
	DefaultFileBytes       = 128 << 20
	DefaultFileWindow      = 60 * time.Second
	DefaultGranularity     = time.Hour
	DefaultBackfillOffsets = 100_000
	DefaultLeaseTTL        = 30 * time.Second
	// DefaultRetentionCheck is Kafka's log.retention.check.interval.ms.
	DefaultRetentionCheck = 5 * time.Minute
	DefaultPollInterval   = 500 * time.Millisecond
	// DefaultMaxFields bounds the typed value columns of one record: an
	// object with more fields stays raw (value_raw).
	DefaultMaxFields = 1000
)

// Options configure an Indexer. The zero value of every field means its
// default.
type Options struct {
	// Table is the table (topic) name; Partition the Kafka partition.
	Table     string
	Partition int32
	// Owner names this indexer in the lease; default a random id.
	Owner string
	// FileBytes: a range ends once its key, value and header bytes reach
	// it (file_bytes, 128 MiB).
	FileBytes int64
	// FileWindow: a range ends when its record timestamps would span it,
	// or when its first record was read that long ago (file_window, 60
	// s).
	FileWindow time.Duration
	// Granularity is the time bucket (granularity, an hour).
	Granularity time.Duration
	// BackfillOffsets is the size of a backfill chunk (backfill_offsets,
	// 100,000).
	BackfillOffsets int64
	// History: all (default), since a time, none.
	History History
	// RetentionCheck is how often the earliest offset is read to expire
	// files (retention_check, 5 min).
	RetentionCheck time.Duration
	// LeaseTTL is the lease's time to live (lease_ttl, 30 s); it is
	// renewed every third of it.
	LeaseTTL time.Duration
	// PollInterval is the wait when the partition has nothing new.
	PollInterval time.Duration
	// MaxFields bounds the typed fields of one JSON object value.
	MaxFields int
	// Clock is the time source for the age trigger and lease renewal;
	// nil means the wall clock.
	Clock Clock
}

func (o Options) withDefaults() Options {
	if o.FileBytes <= 0 {
		o.FileBytes = DefaultFileBytes
	}
	if o.FileWindow <= 0 {
		o.FileWindow = DefaultFileWindow
	}
	if o.Granularity <= 0 {
		o.Granularity = DefaultGranularity
	}
	if o.BackfillOffsets <= 0 {
		o.BackfillOffsets = DefaultBackfillOffsets
	}
	if o.RetentionCheck <= 0 {
		o.RetentionCheck = DefaultRetentionCheck
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.MaxFields <= 0 {
		o.MaxFields = DefaultMaxFields
	}
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
	if o.Owner == "" {
		var b [8]byte
		rand.Read(b[:])
		o.Owner = "indexer-" + hex.EncodeToString(b[:])
	}
	return o
}

// Indexer indexes one partition into a catalog, under the partition's
// lease. It is used by one goroutine; run one Indexer per partition.
type Indexer struct {
	cat   Catalog
	src   Source
	o     Options
	table int64
	lease Lease
	st    PartitionState
	t     *tiler
	b     builder

	lastRetention time.Time
	names         map[string]string // interned JSON field names
	// afterCommit, for tests, runs after each successful commit.
	afterCommit func(Commit)
}

// NewIndexer returns an indexer of src into cat; it takes the lease at
// its first Run or Once.
func NewIndexer(cat Catalog, src Source, o Options) *Indexer {
	return &Indexer{cat: cat, src: src, o: o.withDefaults()}
}

// Lease is the lease the indexer holds (zero before it starts).
func (x *Indexer) Lease() Lease { return x.lease }

// State is the partition's indexed range as the indexer last wrote it.
func (x *Indexer) State() PartitionState { return x.st }

// start takes the lease and finds where to start: an indexed partition at
// the end of its indexed range; a new one at the last stable offset, with
// backfill down to what History says.
func (x *Indexer) start(ctx context.Context) error {
	if x.t != nil {
		return nil
	}
	id, err := x.cat.Table(ctx, x.o.Table)
	if err != nil {
		return err
	}
	x.table = id
	if x.lease, err = x.cat.AcquireLease(ctx, id, x.o.Partition, x.o.Owner, x.o.LeaseTTL); err != nil {
		return err
	}
	st, ok, err := x.cat.State(ctx, id, x.o.Partition)
	if err != nil {
		return err
	}
	if !ok {
		lso, err := x.src.LastStableOffset()
		if err != nil {
			return err
		}
		st = PartitionState{Table: id, Partition: x.o.Partition, Start: lso, End: lso, BackfillTo: lso}
		switch x.o.History.Mode {
		case HistoryAll:
			if st.BackfillTo, err = x.src.EarliestOffset(); err != nil {
				return err
			}
		case HistorySince:
			o, found, err := x.src.OffsetForTime(x.o.History.Since)
			if err != nil {
				return err
			}
			if found {
				st.BackfillTo = min(o, lso)
			}
		}
		if err := x.cat.InitState(ctx, x.lease, st); err != nil && !errors.Is(err, ErrStateExists) {
			return err
		}
		if st, _, err = x.cat.State(ctx, id, x.o.Partition); err != nil {
			return err
		}
	}
	x.st = st
	x.t = newTiler(x.o, st.End)
	x.lastRetention = x.o.Clock.Now()
	return nil
}

// Once indexes the partition up to its last stable offset as it is now,
// closing the last range there (TriggerCaughtUp), then backfills all of
// the history asked for, and releases the lease. When ctx ends first it
// releases the lease and returns ctx's error; what it had committed
// stays, and the next indexer goes on from there. It releases the lease
// on any error, so that a failed run does not hold the partition for the
// lease's TTL (a lease already lost is left alone: ReleaseLease checks).
func (x *Indexer) Once(ctx context.Context) (err error) {
	if err := x.start(ctx); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			x.cat.ReleaseLease(context.WithoutCancel(ctx), x.lease)
		}
	}()
	if err := x.refresh(); err != nil {
		return err
	}
	target, err := x.src.LastStableOffset()
	if err != nil {
		return err
	}
	for x.t.next < target {
		if err := ctx.Err(); err != nil {
			return err
		}
		before := x.t.next
		n, err := x.live(ctx, target)
		if err != nil {
			return err
		}
		if n == before {
			return fmt.Errorf("lake: partition %d: no progress at offset %d below the last stable offset %d", x.o.Partition, n, target)
		}
	}
	if r, ok := x.t.closeAt(max(target, x.t.next), TriggerCaughtUp); ok {
		if err := x.commitForward(ctx, r); err != nil {
			return err
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		more, err := x.backfillChunk(ctx)
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	if err := x.retention(ctx); err != nil {
		return err
	}
	return x.cat.ReleaseLease(ctx, x.lease)
}

// Run indexes until ctx is done or the lease is lost (then it returns at
// once, with the *LeaseError): live records as they become stable, a
// backfill chunk between live reads (live indexing never waits for a
// whole backfill), the retention check, and the lease renewal. What is
// read but not yet in a closed range is dropped when Run returns: the
// next indexer reads it again from the end of the indexed range.
//
// While another indexer holds the partition's lease, Run waits (polling
// every PollInterval) and takes the partition once that lease expires or
// is released: a standby.
func (x *Indexer) Run(ctx context.Context) error {
	for {
		err := x.start(ctx)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrLeaseHeld) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(x.o.PollInterval):
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			x.cat.ReleaseLease(context.WithoutCancel(ctx), x.lease)
			return err
		}
		progressed, err := x.Step(ctx)
		if err != nil {
			return err
		}
		if !progressed {
			select {
			case <-ctx.Done():
			case <-time.After(x.o.PollInterval):
			}
		}
	}
}

// Step does one round of Run's work: renew the lease if a third of its
// time is gone, one live fetch, the age trigger, one backfill chunk, and
// the retention check when due. It reports whether anything moved.
func (x *Indexer) Step(ctx context.Context) (bool, error) {
	if err := x.start(ctx); err != nil {
		return false, err
	}
	now := x.o.Clock.Now()
	if x.lease.ExpiresAt.Sub(now) < x.o.LeaseTTL*2/3 {
		l, err := x.cat.RenewLease(ctx, x.lease, x.o.LeaseTTL)
		if err != nil {
			return false, err
		}
		x.lease = l
	}
	before := x.t.next
	if _, err := x.live(ctx, math.MaxInt64); err != nil {
		return false, err
	}
	progressed := x.t.next != before
	if r, ok := x.t.tick(x.o.Clock.Now()); ok {
		if err := x.commitForward(ctx, r); err != nil {
			return false, err
		}
		progressed = true
	}
	more, err := x.backfillChunk(ctx)
	if err != nil {
		return false, err
	}
	if now.Sub(x.lastRetention) >= x.o.RetentionCheck {
		if err := x.retention(ctx); err != nil {
			return false, err
		}
	}
	return progressed || more, nil
}

// live makes one fetch from the read position up to upTo, feeds the
// tiler and commits the ranges it closes. It returns the read position.
func (x *Indexer) live(ctx context.Context, upTo int64) (int64, error) {
	f, err := x.src.Fetch(x.t.next, upTo)
	var gone *OffsetGoneError
	if errors.As(err, &gone) {
		return x.t.next, x.skipDeleted(ctx, gone.Earliest)
	}
	if err != nil {
		return x.t.next, err
	}
	for _, r := range f.Records {
		if closed, ok := x.t.add(r, x.o.Clock.Now()); ok {
			if err := x.commitForward(ctx, closed); err != nil {
				return x.t.next, err
			}
		}
	}
	x.t.advance(f.Next)
	return x.t.next, nil
}

// Refresher is a Source whose view of the partition must be refreshed
// to see what changed (DirSource: reopening the directory). The indexer
// refreshes before reading the last stable offset it indexes up to, and
// before the retention check.
type Refresher interface {
	Refresh() error
}

func (x *Indexer) refresh() error {
	if r, ok := x.src.(Refresher); ok {
		return r.Refresh()
	}
	return nil
}

// skipDeleted moves the live position to earliest when retention deleted
// offsets the indexer had not read yet (it was stopped for longer than
// the topic's retention): the open range closes at what was read
// (TriggerRetention), and [read position, earliest) is committed with no
// file — those records are gone, and no file claims them. Without this,
// the partition could never be indexed again.
func (x *Indexer) skipDeleted(ctx context.Context, earliest int64) error {
	if x.t.pending() {
		r, _ := x.t.closeAt(x.t.next, TriggerRetention)
		if err := x.commitForward(ctx, r); err != nil {
			return err
		}
	}
	if earliest <= x.t.start {
		return nil
	}
	c := Commit{Dir: Forward, Start: x.t.start, End: earliest - 1, BackfillTo: -1, GapEnd: x.t.start - 1}
	if _, err := x.cat.Commit(ctx, x.lease, c); err != nil {
		return err
	}
	x.st.End = earliest
	x.t = newTiler(x.o, earliest)
	return nil
}

// retention marks the files wholly below the earliest offset expired.
func (x *Indexer) retention(ctx context.Context) error {
	x.lastRetention = x.o.Clock.Now()
	if err := x.refresh(); err != nil {
		return err
	}
	earliest, err := x.src.EarliestOffset()
	if err != nil {
		return err
	}
	_, err = x.cat.Expire(ctx, x.lease, earliest)
	return err
}

// buildRange builds the files of a closed range, one per time bucket
// among its records, after merging their schemas into the table's.
func (x *Indexer) buildRange(ctx context.Context, r Range) ([]DataFile, error) {
	if len(r.Records) == 0 {
		return nil, nil
	}
	// The files are built with the table's schema as it is; only when a
	// record would bring a field or widen a type (the builder's misfit)
	// is the range's schema merged into it (each value scanned into one
	// reused object, merged only when it brings something new) and the
	// files built again. Either way they are the files of the merged
	// schema: with no misfit, merging the records' schemas changes
	// nothing. Each file is built for its entry only: the catalog keeps
	// no bytes.
	if x.names == nil {
		x.names = map[string]string{}
	}
	sch, ver, err := x.cat.MergeSchema(ctx, x.table, Schema{})
	if err != nil {
		return nil, err
	}
	x.b.entryOnly = true
	// Most ranges lie in one bucket (a bucket boundary ends a range):
	// their records go to the build as they are.
	first := bucketOf(r.Records[0].Timestamp, x.o.Granularity)
	buckets := map[int64][]Record{first: r.Records}
	for i := range r.Records {
		if bucketOf(r.Records[i].Timestamp, x.o.Granularity) != first {
			buckets = map[int64][]Record{}
			for _, rec := range r.Records {
				b := bucketOf(rec.Timestamp, x.o.Granularity)
				buckets[b] = append(buckets[b], rec)
			}
			break
		}
	}
	x.b.checkFit = true
	defer func() { x.b.checkFit = false }()
	for merged := false; ; merged = true {
		var files []DataFile
		misfit := false
		for _, b := range slices.Sorted(mapKeys(buckets)) {
			_, df, err := x.b.build(x.o.Partition, sch, buckets[b], x.o.MaxFields, nil)
			if err != nil {
				return nil, err
			}
			if x.b.misfit && !merged {
				misfit = true
				break
			}
			df.StartOffset, df.EndOffset, df.Bucket, df.Trigger, df.SchemaVersion = r.Start, r.End, b, r.Trigger, ver
			files = append(files, df)
		}
		if !misfit {
			return files, nil
		}
		if sch, ver, err = x.cat.MergeSchema(ctx, x.table, rangeSchema(r.Records, x.o.MaxFields, x.names)); err != nil {
			return nil, err
		}
	}
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// commitForward builds and commits a live range. The offsets of the
// range before its first record (an aborted transaction or markers right
// after where indexing started or resumed) go to the files before them
// when there are any (Commit.GapEnd).
func (x *Indexer) commitForward(ctx context.Context, r Range) error {
	files, err := x.buildRange(ctx, r)
	if err != nil {
		return err
	}
	c := Commit{Dir: Forward, Start: r.Start, End: r.End, Files: files, BackfillTo: -1, GapEnd: r.End}
	if len(r.Records) > 0 {
		c.GapEnd = r.Records[0].Offset - 1
	}
	if _, err := x.cat.Commit(ctx, x.lease, c); err != nil {
		return err
	}
	x.st.End = r.End + 1
	if x.afterCommit != nil {
		x.afterCommit(c)
	}
	return nil
}

// backfillChunk indexes the next chunk of history below the indexed
// range, backwards: [lo, hi) with hi the indexed range's start and lo
// BackfillOffsets below (not below the target or the earliest offset).
// The chunk is read forwards through its own tiler (no age trigger), and
// all its ranges are committed in one transaction, so the indexed range
// only ever grows by whole chunks. A chunk's ranges start at its first
// record: the offsets below it with no committed record are read again
// with the chunk below, whose last range they join (the file before
// them). It reports whether there is more to backfill.
func (x *Indexer) backfillChunk(ctx context.Context) (bool, error) {
	hi := x.st.Start
	if x.st.BackfillTo >= hi {
		return false, nil
	}
	earliest, err := x.src.EarliestOffset()
	if err != nil {
		return false, err
	}
	floor := max(x.st.BackfillTo, earliest)
	if floor >= hi {
		// Retention took the rest of the history: backfill is done.
		if _, err := x.cat.Commit(ctx, x.lease, Commit{Dir: Backward, Start: hi, End: hi - 1, BackfillTo: hi}); err != nil {
			return false, err
		}
		x.st.BackfillTo = hi
		return false, nil
	}
	lo := max(floor, hi-x.o.BackfillOffsets)
	for {
		files, first, err := x.readChunk(ctx, lo, hi)
		if errors.Is(err, ErrOffsetGone) {
			return true, nil // retention moved; the next call starts higher
		}
		if err != nil {
			return false, err
		}
		if first < 0 && lo > floor {
			lo = max(floor, lo-x.o.BackfillOffsets) // no record yet: read further down
			continue
		}
		start := lo
		if first >= 0 && lo > floor {
			// The chunk starts at its first record; the first range's
			// files with it (their bytes do not hold their offsets).
			start = first
			for i := range files {
				if files[i].StartOffset == lo {
					files[i].StartOffset = start
				}
			}
		}
		c := Commit{Dir: Backward, Start: start, End: hi - 1, Files: files, BackfillTo: -1}
		if _, err := x.cat.Commit(ctx, x.lease, c); err != nil {
			return false, err
		}
		x.st.Start = start
		x.st.BackfillTo = min(x.st.BackfillTo, start)
		if x.afterCommit != nil {
			x.afterCommit(c)
		}
		return start > floor, nil
	}
}

// readChunk reads [lo, hi) into ranges (the last closed at hi,
// TriggerChunk) and builds each range's files as it closes, so that a
// chunk holds at most one range's records in memory, as live indexing
// does. It returns the files and the offset of the chunk's first record
// (-1: none).
func (x *Indexer) readChunk(ctx context.Context, lo, hi int64) ([]DataFile, int64, error) {
	t := newTiler(x.o, lo)
	var files []DataFile
	first := int64(-1)
	keep := func(r Range) error {
		if len(r.Records) == 0 {
			return nil
		}
		if first < 0 {
			first = r.Records[0].Offset
		}
		fs, err := x.buildRange(ctx, r)
		files = append(files, fs...)
		return err
	}
	// No age trigger in backfill: the reads are not live, so "read
	// file_window ago" would only measure this machine's speed.
	epoch := time.Unix(0, 0)
	for from := lo; from < hi; {
		f, err := x.src.Fetch(from, hi)
		if err != nil {
			return nil, -1, err
		}
		for _, r := range f.Records {
			if closed, ok := t.add(r, epoch); ok {
				if err := keep(closed); err != nil {
					return nil, -1, err
				}
			}
		}
		if f.Next <= from {
			return nil, -1, fmt.Errorf("lake: partition %d: backfill read stuck at offset %d below %d", x.o.Partition, from, hi)
		}
		t.advance(f.Next)
		from = f.Next
	}
	if r, ok := t.closeAt(hi, TriggerChunk); ok {
		if err := keep(r); err != nil {
			return nil, -1, err
		}
	}
	return files, first, nil
}
