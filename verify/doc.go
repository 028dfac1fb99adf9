// Package verify checks Kafka's index files against the .log they index,
// and reports what it finds as finding.Problems.
//
// SummarizeLog walks a segment's .log in bounded memory (a
// record.ReaderScanner) and summarises each entry: position, size, offsets,
// max timestamp and the offset of the record carrying it, codec, control
// markers. OffsetIndex, TimeIndex and TxnIndex cross-check an index against
// that summary; Padding reports an untrimmed index's zero entries. Each
// finding has a stable Kind (finding.Kind*) and a Level: Error for an
// entry that can make a lookup wrong, Warning for zero padding, Info for
// valid entries worth knowing about (a follower's multi-batch append,
// which kafka-dump-log reports as a mismatch).
//
// The rules, per index:
//
//   - .index: an entry (o, p) is correct when p is where a batch starts
//     and every batch before p ends below o, so that a lookup of any offset
//     from o up starts at or before the batch holding it;
//   - .timeindex: an entry (t, o) is correct when a batch holds o, t is
//     that batch's max timestamp, and no earlier batch has a larger one;
//   - .txnindex: entries in order, none below the base offset, each ending
//     at an ABORT marker of its producer.
//
// RebuildOffsetIndex and RebuildTimeIndex produce, from the same summary
// (LogEntrySummary), the files Kafka's recovery (LogSegment.recover) writes:
// what a check compares with, and what a fixture or a repair tool writes.
//
// Packages index and timeindex know only bytes and files; this package is
// where they meet the record batches.
package verify
