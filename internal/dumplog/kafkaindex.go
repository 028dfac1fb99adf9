package dumplog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/describe"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/verify"
)

// The text of an index dump is Kafka 4.3's DumpLogSegments.dumpIndex and
// dumpTimeIndex: the entries up to the first zero one, and the findings
// of its checks, which the caller prints after all files (Session).

// errorf prints one of segviz's own problem lines.
func (d *indexDump) errorf(f string, args ...any) {
	w := d.opt.Errors
	if w == nil {
		w = d.w
	}
	fmt.Fprintf(w, f, args...)
}

// kafkaOffsetIndex is dumpIndex: each entry is checked against the last
// offset of the batch at its position, read within MaxMessageSize bytes.
func (d *indexDump) kafkaOffsetIndex(x *index.OffsetIndex) error {
	log, size, err := d.openLog() // Kafka opens it first, even for an empty index
	if err != nil {
		return err
	}
	defer log.Close()
	n := x.Entries()
	if n == 0 {
		fmt.Fprintf(d.w, "%s is empty.\n", d.path)
		return nil
	}
	if d.opt.SanityOnly {
		d.sanity(x.SanityCheck())
		return nil
	}
	for i := range n {
		e := x.Entry(i)
		if e.Offset == d.base && i > 0 {
			break // zero padding
		}
		last, err := firstBatchLastOffset(log, size, int64(e.Position), int64(d.opt.MaxMessageSize))
		if err != nil {
			d.res.Errors++
			d.errorf("Error: %s: entry %d (offset %d position %d): %v\n", d.path, i, e.Offset, e.Position, err)
			return nil
		}
		if last != e.Offset {
			d.res.Mismatches = append(d.res.Mismatches, OffsetPair{e.Offset, last})
		}
		if !d.opt.VerifyOnly {
			fmt.Fprintf(d.w, "offset: %d position: %d\n", e.Offset, e.Position)
		}
	}
	return nil
}

var errNoBatch = errors.New("no complete batch there within --max-message-size bytes")

// firstBatchLastOffset returns the last offset of the batch at pos of the
// log, as Kafka reads it from a slice of maxSize bytes: its header only,
// unchecked.
func firstBatchLastOffset(r io.ReaderAt, size, pos, maxSize int64) (int64, error) {
	end := min(size, pos+maxSize)
	if pos < 0 || pos >= end-kafkaHeaderSizeUpToMagic {
		return 0, errNoBatch
	}
	var hdr [record.RecordBatchOverhead]byte
	n, err := r.ReadAt(hdr[:], pos)
	if n < kafkaHeaderSizeUpToMagic {
		return 0, err
	}
	length := int64(format.Int32(hdr[record.LengthOffset:]))
	if length < kafkaRecordOverheadV0 {
		return 0, fmt.Errorf("found record size %d smaller than minimum record overhead (%d)", length, kafkaRecordOverheadV0)
	}
	if pos > end-record.LogOverhead-length {
		return 0, errNoBatch
	}
	if int8(hdr[record.MagicOffset]) < record.MagicV2 {
		return format.Int64(hdr[record.LegacyOffsetOffset:]), nil
	}
	if n < record.RecordBatchOverhead {
		return 0, errNoBatch
	}
	h, _ := record.PeekBatchHeader(hdr[:])
	return h.LastOffset(), nil
}

// kafkaTimeIndex is dumpTimeIndex: each entry's offset is looked up in
// the segment's .index, the batches from there are searched for the
// first whose last offset reaches it, and that batch must end at the
// entry's offset and have the entry's timestamp as its largest record
// timestamp; the timestamps must increase.
func (d *indexDump) kafkaTimeIndex(x *timeindex.TimeIndex) error {
	log, size, err := d.openLog()
	if err != nil {
		return err
	}
	defer log.Close()
	if d.opt.SanityOnly {
		d.sanity(x.SanityCheck())
		return nil
	}
	// A missing .index is an empty one (Kafka creates it, empty).
	oi, err := index.OpenOffsetIndex(d.fsys, strings.TrimSuffix(d.path, ".timeindex")+".index", d.base, index.OpenOptions{})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if oi != nil {
		defer oi.Close()
	}
	sum, err := d.summarizeLog()
	if err != nil {
		return err
	}
	batches := sum.Entries
	prev := int64(record.NoTimestamp)
	for i := range x.Entries() {
		e := x.Entry(i)
		if e.Offset == d.base && i > 0 {
			break // zero padding
		}
		var pos int64
		if oi != nil {
			pos = int64(oi.Lookup(e.Offset).Position)
		}
		j := sort.Search(len(batches), func(k int) bool { return batches[k].Position >= pos })
		for j < len(batches) && batches[j].LastOffset < e.Offset {
			j++
		}
		switch {
		case j == len(batches):
			d.res.NotFound = append(d.res.NotFound, OffsetPair{e.Offset, -1})
		case batches[j].LastOffset != e.Offset:
			d.res.NotFound = append(d.res.NotFound, OffsetPair{e.Offset, batches[j].LastOffset})
		default:
			if ts := maxRecordTimestamp(log, size, &batches[j]); ts != e.Timestamp {
				d.res.TimestampMismatches = append(d.res.TimestampMismatches, OffsetPair{e.Timestamp, ts})
			}
			if prev >= e.Timestamp {
				d.res.OutOfOrder = append(d.res.OutOfOrder, OffsetPair{e.Timestamp, prev})
			}
		}
		if !d.opt.VerifyOnly {
			fmt.Fprintf(d.w, "timestamp: %d offset: %d\n", e.Timestamp, e.Offset)
		}
		prev = e.Timestamp
	}
	return nil
}

// maxRecordTimestamp returns the largest timestamp of the records of the
// log entry b, -1 if it has none (or they cannot be read).
func maxRecordTimestamp(r io.ReaderAt, size int64, b *verify.LogEntrySummary) int64 {
	var rs record.ReaderScanner
	rs.Reset(r, size, "", b.Position)
	maxTS := int64(record.NoTimestamp)
	if !rs.Next() {
		return maxTS
	}
	var w describe.Walker
	for w.Reset(rs.Entry()); w.Next(); {
		maxTS = max(maxTS, w.Record().Timestamp)
	}
	return maxTS
}
