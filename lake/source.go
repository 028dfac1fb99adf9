package lake

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"time"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// Record is one committed record as the indexer sees it. Its slices are
// owned by the Record (a Source copies them out of its read buffers), so
// a Record may be kept after the next Fetch.
type Record struct {
	Offset        int64
	Timestamp     int64 // epoch milliseconds
	TimestampType record.TimestampType
	Key           []byte // nil for a null key
	Value         []byte // nil for a null value
	Headers       []record.Header
}

// size is the record's key, value and header bytes: what file_bytes
// counts.
func (r *Record) size() int64 {
	n := int64(len(r.Key) + len(r.Value))
	for _, h := range r.Headers {
		n += int64(len(h.Key) + len(h.Value))
	}
	return n
}

// Fetched is what one Source.Fetch returns.
type Fetched struct {
	// Records are the committed records with offsets in [from, Next), in
	// offset order.
	Records []Record
	// Next is the offset the read went through: every offset in [from,
	// Next) that is not in Records holds no committed record (an aborted
	// record, a transaction marker, a compaction gap). Next == from means
	// there is nothing more to read below the bound asked for yet.
	Next int64
}

// Source gives the committed records of one partition, as a
// read_committed consumer gets them: in offset order, without the records
// of aborted transactions and without control records, up to the last
// stable offset.
//
// Two are built: DirSource reads a partition directory with segkit's
// engine; BrokerSource reads a live broker with Kafka's protocol
// (franz-go): Fetch requests and ListOffsets with read_committed. Both
// filter the record batches with the same code, so the same partition
// gives the same records either way.
//
// A Source is used by one indexer goroutine at a time.
type Source interface {
	// Fetch reads from offset from up to (not including) min(upTo, the
	// last stable offset), about one fetch's worth (at least one entry).
	Fetch(from, upTo int64) (Fetched, error)
	// EarliestOffset is the partition's first offset (the log start
	// offset): Kafka's retention moves it up.
	EarliestOffset() (int64, error)
	// LastStableOffset is the first offset a read_committed consumer may
	// not read yet.
	LastStableOffset() (int64, error)
	// OffsetForTime is the first offset whose record timestamp is at or
	// after t; false when no record is that late.
	OffsetForTime(t time.Time) (int64, bool, error)
}

// fetchBytes is the size of each read of the log: a consumer's
// max.partition.fetch.bytes (1 MiB). A larger batch is read whole.
const fetchBytes = 1 << 20

// DirSource is a Source over a partition directory, read with segkit's
// engine, read-only: a broker's live directory or a copy. It takes no lock
// and writes nothing.
//
// Opened once, a read-only log does not see what a broker appends later:
// Refresh reopens it, and Fetch refreshes by itself when it finds nothing
// new to read.
type DirSource struct {
	fsys vfs.FS
	dir  string
	l    *kafkalog.Log
	lso  int64 // computed at Refresh

	buf []byte
	c   committed
}

var _ Source = (*DirSource)(nil)

// OpenDir opens the partition directory dir of fsys read-only.
func OpenDir(fsys vfs.FS, dir string) (*DirSource, error) {
	d := &DirSource{fsys: fsys, dir: dir}
	if err := d.Refresh(); err != nil {
		return nil, err
	}
	return d, nil
}

// Refresh reopens the directory, to see records appended since.
func (d *DirSource) Refresh() error {
	l, err := kafkalog.Open(d.fsys, d.dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("lake: open %s: %w", d.dir, err)
	}
	// A broker's directory: consumers read only up to the high
	// watermark, which the log directory's replication-offset-checkpoint
	// holds (the engine's read-only open takes the log end offset).
	if tp, err := checkpoint.ParseDirName(path.Base(d.dir)); err == nil {
		if m, err := checkpoint.ReadOffsets(d.fsys, path.Join(path.Dir(d.dir), checkpoint.ReplicationOffsetFile)); err == nil {
			if hw, ok := m[tp]; ok && hw > 0 && hw < l.LogEndOffset() {
				l.SetHighWatermark(hw)
			}
		}
	}
	lso, err := l.ReplayLastStableOffset(l.HighWatermark())
	if err != nil {
		l.Close()
		return fmt.Errorf("lake: %s: last stable offset: %w", d.dir, err)
	}
	if d.l != nil {
		d.l.Close()
	}
	d.l, d.lso = l, lso
	return nil
}

// Close releases the log.
func (d *DirSource) Close() error {
	if d.l == nil {
		return nil
	}
	err := d.l.Close()
	d.l = nil
	return err
}

// EarliestOffset implements Source.
func (d *DirSource) EarliestOffset() (int64, error) { return d.l.LogStartOffset(), nil }

// LastStableOffset implements Source: the first offset of the earliest
// transaction still open, or the high watermark, as of the last Refresh.
func (d *DirSource) LastStableOffset() (int64, error) { return d.lso, nil }

// OffsetForTime implements Source.
func (d *DirSource) OffsetForTime(t time.Time) (int64, bool, error) {
	to, ok, err := d.l.OffsetForTimestamp(t.UnixMilli())
	if err != nil || !ok {
		return 0, false, err
	}
	return to.Offset, true, nil
}

// Fetch implements Source. It filters as Kafka's read_committed consumer
// does (see committed), with the same engine calls as "segviz read
// --isolation read_committed": the aborted transactions come from the
// segments' .txnindex files.
func (d *DirSource) Fetch(from, upTo int64) (Fetched, error) {
	out := Fetched{Next: from}
	lso, _ := d.LastStableOffset()
	if from >= lso {
		// Nothing new in the log as opened: look again.
		if err := d.Refresh(); err != nil {
			return out, err
		}
		lso, _ = d.LastStableOffset()
	}
	upper := min(upTo, lso)
	if from >= upper {
		return out, nil
	}
	if from < d.l.LogStartOffset() {
		return out, &OffsetGoneError{Offset: from, Earliest: d.l.LogStartOffset()}
	}
	res, err := d.l.Read(from, fetchBytes, d.buf[:0], kafkalog.ReadOptions{Isolation: kafkalog.IsolationCommitted})
	if err != nil {
		return out, err
	}
	d.buf = res.Records
	if len(res.Records) == 0 {
		return out, nil
	}
	return d.c.scan(d.dir, res.Records, res.AbortedTxns, from, upper)
}

// committed filters fetched record batches as Kafka's read_committed
// consumer does (CompletedFetch.nextFetchedBatch): an aborted
// transaction's producer is marked aborted from the transaction's first
// offset on, its transactional batches are skipped until its ABORT
// marker, and control batches are never returned. DirSource and
// BrokerSource share it: the batches come from the log or from a fetch
// response, the aborted transactions from the .txnindex files or from the
// response. Its buffers are reused between scans.
type committed struct {
	s  record.Scanner
	it record.EntryIterator
	r  record.Record
}

// scan returns the committed records of batches with offsets in [from,
// upper), and Next: the offset after the last entry read (upper when it
// reached it). name names the source in errors.
func (c *committed) scan(name string, batches []byte, abortedTxns []index.AbortedTxn, from, upper int64) (Fetched, error) {
	out := Fetched{Next: from}
	aborted := slices.SortedFunc(slices.Values(abortedTxns), func(a, b index.AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	abortedPIDs := map[int64]bool{}
	next := from
	c.s.Reset(batches, "", 0)
	for c.s.Next() {
		e := c.s.Entry()
		last := e.LastOffset()
		skip := false
		if e.Magic == record.MagicV2 {
			h := &e.Batch.BatchHeader
			if h.ProducerID != record.NoProducerID {
				for len(aborted) > 0 && aborted[0].FirstOffset <= last {
					abortedPIDs[aborted[0].ProducerID] = true
					aborted = aborted[1:]
				}
				if h.Attributes.IsControl() {
					if c.isAbortMarker(e) {
						delete(abortedPIDs, h.ProducerID)
					}
				} else if h.Attributes.IsTransactional() && abortedPIDs[h.ProducerID] {
					skip = true
				}
			}
			skip = skip || h.Attributes.IsControl()
		}
		if !skip {
			tt := record.CreateTime
			if e.Magic == record.MagicV2 {
				tt = e.Batch.Attributes.TimestampType()
			} else if e.Magic == record.MagicV0 {
				tt = record.NoTimestampType
			}
			c.it.Reset(e)
			for c.it.Next(&c.r) {
				if c.r.Offset < next {
					continue
				}
				if c.r.Offset >= upper {
					out.Next = upper
					return out, nil
				}
				out.Records = append(out.Records, copyRecord(&c.r, tt))
			}
			if err := c.it.Err(); err != nil {
				return out, fmt.Errorf("lake: %s: the entry holding offsets up to %d: %w", name, last, err)
			}
		}
		next = max(next, last+1)
		if next >= upper {
			out.Next = upper
			return out, nil
		}
	}
	if err := c.s.Err(); err != nil && next == from {
		return out, fmt.Errorf("lake: %s: %w", name, err)
	}
	out.Next = next
	return out, nil
}

// isAbortMarker reports whether the control batch e holds an ABORT
// marker.
func (c *committed) isAbortMarker(e *record.Entry) bool {
	c.it.Reset(e)
	for c.it.Next(&c.r) {
		if m, err := record.ParseEndTxnMarker(c.r.Key, c.r.Value); err == nil {
			return m.Type == record.ControlAbort
		}
	}
	return false
}

// copyRecord copies r out of the read buffers.
func copyRecord(r *record.Record, tt record.TimestampType) Record {
	out := Record{Offset: r.Offset, Timestamp: r.Timestamp, TimestampType: tt}
	if r.Key != nil {
		out.Key = slices.Clone(r.Key)
		if out.Key == nil {
			out.Key = []byte{}
		}
	}
	if r.Value != nil {
		out.Value = append([]byte{}, r.Value...)
	}
	if len(r.Headers) > 0 {
		out.Headers = make([]record.Header, len(r.Headers))
		for i, h := range r.Headers {
			out.Headers[i].Key = append([]byte{}, h.Key...)
			if h.Value != nil {
				out.Headers[i].Value = append([]byte{}, h.Value...)
			}
		}
	}
	return out
}

// OffsetGoneError is returned for a read below the partition's earliest
// offset: retention deleted those records.
type OffsetGoneError struct {
	Offset, Earliest int64
}

// Error describes the error.
func (e *OffsetGoneError) Error() string {
	return fmt.Sprintf("lake: offset %d is below the earliest offset %d (deleted by retention)", e.Offset, e.Earliest)
}

// Unwrap makes errors.Is(err, ErrOffsetGone) true.
func (e *OffsetGoneError) Unwrap() error { return ErrOffsetGone }

// ErrOffsetGone is matched by an *OffsetGoneError.
var ErrOffsetGone = errors.New("lake: offset below the earliest offset")
