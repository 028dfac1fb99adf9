package compaction

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/record"
)

// retention is MemoryRecords.RecordFilter.BatchRetention.
type retention int8

const (
	deleteBatch retention = iota // drop the batch without reading its records
	retainEmpty                  // keep the batch, as an empty batch if no record stays
	deleteEmpty                  // drop the batch if no record stays
)

// filter is one cleaning pass's decisions (Cleaner.cleanInto's
// RecordFilter and MemoryRecords.filterTo): which batches and records of
// the segments it reads stay, and how the batches that stay are written.
type filter struct {
	now               int64
	deleteRetentionMs int64
	m                 *OffsetMap
	active            map[int64]Producer
	upper             int64 // upperBoundOffsetOfCleaningRound
	txn               *txnState
	// retainLegacyDeletes is retainLegacyDeletesAndTxnMarkers of the
	// segment being read: its mtime is after the legacy delete horizon.
	retainLegacyDeletes bool
	// horizon is the delete horizon of the v2 batch being read, or -1.
	horizon int64

	stats    *Stats
	removed  *Removal
	horizons map[int64]*Horizon

	it     record.EntryIterator
	ctl    record.Iterator
	recs   []record.Record // the records kept of the current batch
	keys   [][]byte        // the keys of the batch being read that need a lookup
	hashes []keyHash       // and their hashes
	bld    record.Builder
	out    []byte // the current batch, rebuilt
	rec    record.Record
}

// emit receives what filterEntry keeps: a batch to write, with its last
// offset and max timestamp for the indexes.
type emit func(b []byte, lastOffset, maxTimestamp int64) error

// filterEntry decides one entry of a segment being cleaned and emits
// what stays of it.
func (f *filter) filterEntry(e *record.Entry, out emit) error {
	if e.Magic != record.MagicV2 {
		return f.filterLegacy(e, out)
	}
	b := &e.Batch
	h := &b.BatchHeader
	control := h.Attributes.IsControl()
	var canDiscard bool
	if control {
		typ, has, err := controlType(&f.ctl, &f.rec, b)
		if err != nil {
			return err
		}
		canDiscard = f.txn.onControl(h, typ, has)
	} else {
		canDiscard = f.txn.onBatch(h)
	}
	hasHorizon := h.Attributes.HasDeleteHorizon()
	horizon := h.DeleteHorizonMs()
	f.horizon = horizon
	discardRecords := canDiscard
	if control {
		discardRecords = canDiscard && hasHorizon && horizon <= f.now
	}
	isLast := false
	if p, ok := f.active[h.ProducerID]; ok {
		if p.LastDataOffset >= 0 {
			isLast = h.LastOffset() == p.LastDataOffset
		} else {
			isLast = control && h.ProducerEpoch == p.Epoch
		}
	}
	var ret retention
	switch {
	case h.ProducerID > record.NoProducerID && isLast:
		ret = retainEmpty
	case h.NextOffset() == f.upper:
		ret = retainEmpty
	case discardRecords:
		ret = deleteBatch
	default:
		ret = deleteEmpty
	}
	markerForEmptyTxn := canDiscard && control
	size := int64(len(b.Raw))
	f.stats.BytesRead += size

	if ret == deleteBatch {
		f.removed.Batches++
		f.removed.Bytes += size
		f.removed.Records += int64(h.RecordCount)
		if control {
			f.removed.Markers += int64(h.RecordCount)
		} else {
			f.removed.Aborted += int64(h.RecordCount)
		}
		return nil
	}

	// The records (MemoryRecords.filterBatch).
	n, dropped, tombstones, tombstonesKept, err := f.retainRecords(e, control, discardRecords, false)
	if err != nil {
		return err
	}
	writeOriginal := !dropped

	switch {
	case n > 0:
		needHorizon := (tombstones || markerForEmptyTxn) && !hasHorizon
		if writeOriginal && !needHorizon {
			f.stats.BytesWritten += size
			f.stats.MessagesWritten += int64(n)
			f.removed.BatchesCopied++
			f.noteHorizon(horizon, false, tombstonesKept, control, n)
			return out(b.Raw, h.LastOffset(), h.MaxTimestamp)
		}
		dh := record.NoTimestamp
		switch {
		case needHorizon:
			dh = f.now + f.deleteRetentionMs
		case hasHorizon:
			dh = horizon
		}
		spec := record.BatchSpec{
			BaseOffset:           h.BaseOffset,
			PartitionLeaderEpoch: h.PartitionLeaderEpoch,
			Codec:                h.Attributes.Codec(),
			TimestampType:        h.Attributes.TimestampType(),
			ProducerID:           h.ProducerID,
			ProducerEpoch:        h.ProducerEpoch,
			BaseSequence:         h.BaseSequence,
			Transactional:        h.Attributes.IsTransactional(),
			Control:              control,
			UseRecordOffsets:     true,
			LastOffsetDelta:      h.LastOffsetDelta,
			MaxTimestamp:         record.NoTimestamp,
			DeleteHorizon:        dh != record.NoTimestamp,
			DeleteHorizonMs:      dh,
		}
		if spec.TimestampType == record.LogAppendTime {
			spec.LogAppendTime = h.MaxTimestamp
		}
		built, maxTs, err := f.build(&spec)
		if err != nil {
			return err
		}
		f.stats.BytesWritten += int64(len(built))
		f.stats.MessagesWritten += int64(n)
		f.removed.BatchesRewritten++
		f.removed.Bytes += size - int64(len(built))
		f.noteHorizon(dh, needHorizon, tombstonesKept, control, n)
		return out(built, h.LastOffset(), maxTs)
	case ret == retainEmpty:
		f.stats.BytesWritten += record.RecordBatchOverhead
		f.removed.BatchesEmptied++
		f.removed.Bytes += size - record.RecordBatchOverhead
		f.out = appendEmptyBatch(f.out[:0], h)
		return out(f.out, h.LastOffset(), h.MaxTimestamp)
	default:
		f.removed.Batches++
		f.removed.Bytes += size
		return nil
	}
}

// filterLegacy handles a v0/v1 entry (an AbstractLegacyRecordBatch): it
// has no producer and no transaction, and is never copied: what stays of
// it is rewritten as a v2 batch (MemoryRecords.buildRetainedRecordsInto
// converts to the current magic).
func (f *filter) filterLegacy(e *record.Entry, out emit) error {
	m := &e.Legacy
	f.txn.consumeUpTo(m.Offset) // onBatchRead of a non-transactional batch
	size := int64(len(m.Raw))
	f.stats.BytesRead += size
	retainEmptyBatch := m.Offset+1 == f.upper

	n, _, tombstones, tombstonesKept, err := f.retainRecords(e, false, false, true)
	if err != nil {
		return err
	}
	if n == 0 {
		if retainEmptyBatch {
			return fmt.Errorf("%w (a magic %d entry at offset %d ends the cleaning round)", ErrEmptyLegacyBatch, m.Magic, m.Offset)
		}
		f.removed.Batches++
		f.removed.Bytes += size
		return nil
	}
	dh := record.NoTimestamp
	if tombstones {
		dh = f.now + f.deleteRetentionMs
	}
	tt := m.TimestampType()
	if tt == record.NoTimestampType {
		tt = record.CreateTime
	}
	spec := record.BatchSpec{
		BaseOffset:           f.recs[0].Offset,
		PartitionLeaderEpoch: record.NoPartitionLeaderEpoch,
		Codec:                m.Codec(),
		TimestampType:        tt,
		ProducerID:           record.NoProducerID,
		ProducerEpoch:        record.NoProducerEpoch,
		BaseSequence:         record.NoSequence,
		UseRecordOffsets:     true,
		MaxTimestamp:         record.NoTimestamp,
		DeleteHorizon:        dh != record.NoTimestamp,
		DeleteHorizonMs:      dh,
	}
	if tt == record.LogAppendTime {
		spec.LogAppendTime = m.Timestamp
	}
	built, maxTs, err := f.build(&spec)
	if err != nil {
		return err
	}
	f.stats.BytesWritten += int64(len(built))
	f.stats.MessagesWritten += int64(n)
	f.removed.BatchesRewritten++
	f.removed.Bytes += size - int64(len(built))
	f.noteHorizon(dh, tombstones, tombstonesKept, false, n)
	return out(built, f.recs[n-1].Offset, maxTs)
}

// retain is Cleaner.shouldRetainRecord behind the filter's
// shouldRetainRecord, counting what goes. h is the hash of r's key when
// needsLookup(r) holds.
func (f *filter) retain(control, discardRecords, legacy bool, r *record.Record, h keyHash) bool {
	switch {
	case discardRecords:
		f.removed.Records++
		if control {
			f.removed.Markers++
		} else {
			f.removed.Aborted++
		}
		return false
	case control:
		return true
	case r.Offset > f.m.LatestOffset():
		return true
	case r.Key == nil:
		f.stats.InvalidMessagesRead++
		f.removed.Unkeyed++
		f.removed.Records++
		return false
	}
	found := f.m.getHash(h)
	if r.Offset < found {
		f.removed.Superseded++
		f.removed.Records++
		return false
	}
	if r.Value != nil {
		return true
	}
	keep := f.retainLegacyDeletes
	if !legacy {
		keep = f.horizon == record.NoTimestamp || f.now < f.horizon
	}
	if !keep {
		f.removed.Tombstones++
		f.removed.Records++
	}
	return keep
}

// controlType reads the type of a control batch's first record
// (ControlRecordType.parse), and whether it has one.
func controlType(it *record.Iterator, r *record.Record, b *record.Batch) (record.ControlType, bool, error) {
	it.Reset(b)
	if !it.Next(r) {
		return 0, false, it.Err()
	}
	k := r.Key
	if len(k) < 4 {
		return 0, false, format.Corruptf("", 0, format.ErrInvalid, "invalid value size found for end control record key: must have at least 4 bytes, but found only %d", len(k))
	}
	return record.ControlType(format.Int16(k[2:])), true, nil
}

// build encodes f.recs as MemoryRecordsBuilder would for spec: record
// attributes 0, header keys as Java re-encodes them. It returns the
// batch (in f.out) and its max timestamp.
func (f *filter) build(spec *record.BatchSpec) ([]byte, int64, error) {
	for i := range f.recs {
		r := &f.recs[i]
		r.Attributes = 0
		for j := range r.Headers {
			if k := r.Headers[j].Key; !utf8.Valid(k) {
				r.Headers[j].Key = javaUTF8(k)
			}
		}
	}
	var err error
	f.out, err = f.bld.AppendBatch(f.out[:0], spec, f.recs)
	if err != nil {
		return nil, 0, err
	}
	return f.out, format.Int64(f.out[record.MaxTimestampOffset:]), nil
}

// javaUTF8 is what new String(bytes, UTF_8).getBytes(UTF_8) makes of
// bytes that are not valid UTF-8: each invalid sequence becomes U+FFFD.
func javaUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		out = utf8.AppendRune(out, r)
		b = b[n:]
	}
	return out
}

// appendEmptyBatch appends the 61-byte empty batch Kafka writes for a
// batch whose records all went but that must stay
// (DefaultRecordBatch.writeEmptyHeader): no compression, no delete
// horizon, baseTimestamp -1, the original maxTimestamp, offsets, producer
// fields, leader epoch and flags.
func appendEmptyBatch(dst []byte, h *record.BatchHeader) []byte {
	spec := record.BatchSpec{
		BaseOffset:           h.BaseOffset,
		PartitionLeaderEpoch: h.PartitionLeaderEpoch,
		Codec:                compress.None,
		TimestampType:        h.Attributes.TimestampType(),
		LogAppendTime:        h.MaxTimestamp,
		ProducerID:           h.ProducerID,
		ProducerEpoch:        h.ProducerEpoch,
		BaseSequence:         h.BaseSequence,
		Transactional:        h.Attributes.IsTransactional(),
		Control:              h.Attributes.IsControl(),
		LastOffsetDelta:      h.LastOffsetDelta,
		MaxTimestamp:         h.MaxTimestamp,
	}
	out, _ := record.AppendBatch(dst, &spec, nil) // uncompressed, no records: cannot fail
	return out
}

// noteHorizon counts a kept batch's tombstones and markers under its
// delete horizon.
func (f *filter) noteHorizon(dh int64, isNew bool, tombstones int64, control bool, n int) {
	markers := int64(0)
	if control {
		markers = int64(n)
	}
	if dh == record.NoTimestamp || tombstones == 0 && markers == 0 {
		return
	}
	h := f.horizons[dh]
	if h == nil {
		h = &Horizon{DeleteHorizonMs: dh}
		f.horizons[dh] = h
	}
	h.New = h.New || isNew
	h.Batches++
	h.Tombstones += tombstones
	h.Markers += markers
}

// retainRecords reads the records of entry e into f.recs, keeping those
// retain keeps (in order), and reports how many it kept, whether it
// dropped any, and the tombstones among the kept.
//
// The records are decoded first, the keys that need a lookup hashed
// together (eight at a time, hashKeys) and their slots prefetched
// together, and then the records decided in order: the slots' cache
// misses overlap.
func (f *filter) retainRecords(e *record.Entry, control, discardRecords, legacy bool) (n int, dropped, tombstones bool, tombstonesKept int64, err error) {
	f.it.Reset(e)
	read := 0
	latest := f.m.LatestOffset()
	lookup := func(r *record.Record) bool { return !discardRecords && !control && r.Key != nil && r.Offset <= latest }
	f.recs = f.recs[:cap(f.recs)]
	f.keys = f.keys[:0]
	for {
		if read == len(f.recs) {
			f.recs = append(f.recs, record.Record{})
			f.recs = f.recs[:cap(f.recs)]
		}
		r := &f.recs[read]
		if !f.it.Next(r) {
			break
		}
		if lookup(r) {
			f.keys = append(f.keys, r.Key)
		}
		read++
	}
	f.hashes = slices.Grow(f.hashes[:0], len(f.keys))[:len(f.keys)]
	hashKeys(f.hashes, f.keys)
	f.m.prefetch(f.hashes)
	k := 0
	for i := range read {
		r := &f.recs[i]
		f.stats.MessagesRead++
		var h keyHash
		if lookup(r) {
			h = f.hashes[k]
			k++
		}
		if !f.retain(control, discardRecords, legacy, r, h) {
			dropped = true
			continue
		}
		if r.Value == nil {
			tombstones = true
			tombstonesKept++
		}
		if i != n {
			// Swapped, not copied: each Record keeps its own Headers
			// room for the next decode.
			f.recs[n], f.recs[i] = f.recs[i], f.recs[n]
		}
		n++
	}
	if err := f.it.Err(); err != nil {
		f.recs = f.recs[:0]
		return 0, false, false, 0, err
	}
	f.recs = f.recs[:n]
	return n, dropped, tombstones, tombstonesKept, nil
}
