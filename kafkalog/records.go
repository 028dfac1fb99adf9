package kafkalog

import (
	"iter"

	"github.com/segkit/segkit/record"
)

// recordsReadBytes is the size of the Reads Records makes.
const recordsReadBytes = 1 << 20

// Records returns an iterator over the records of the log with an offset
// of from or above, up to the log end offset, in offset order: the loop an
// embedder otherwise writes by hand around Read, a record.Scanner and a
// record.EntryIterator. It reads entries of every magic (v2 batches and
// the v0/v1 messages and compressed wrappers old segments hold), skips the
// records of the first entry below from, and steps over entries with no
// records (a compacted batch emptied by the cleaner). Control batches'
// markers are records too; read with Read and a record.Scanner to see
// batch attributes.
//
// The *record.Record is reused: copy what must outlive the iteration step.
// An error (an offset out of range, corruption a Read met, records that do
// not decode) is yielded once with a nil record, and ends the iteration.
// It reads uncommitted data (IsolationUncommitted), in Reads of 1 MiB that
// reuse one buffer.
func (l *Log) Records(from int64) iter.Seq2[*record.Record, error] {
	return func(yield func(*record.Record, error) bool) {
		var (
			buf  []byte
			s    record.Scanner
			it   record.EntryIterator
			r    record.Record
			next = from
		)
		for next < l.LogEndOffset() {
			res, err := l.Read(next, recordsReadBytes, buf[:0], ReadOptions{})
			if err != nil {
				yield(nil, err)
				return
			}
			if len(res.Records) == 0 {
				return
			}
			buf = res.Records
			before := next
			s.Reset(res.Records, "", 0)
			for s.Next() {
				e := s.Entry()
				it.Reset(e)
				for it.Next(&r) {
					if r.Offset >= next && !yield(&r, nil) {
						return
					}
				}
				if err := it.Err(); err != nil {
					yield(nil, err)
					return
				}
				next = max(next, e.LastOffset()+1)
			}
			if err := s.Err(); err != nil {
				yield(nil, err)
				return
			}
			if next == before {
				return // no whole entry at or above next: nothing more to read
			}
		}
	}
}
