// Package segment is one Kafka log segment: a .log file of record batches
// and the files beside it that index it, all named by the segment's base
// offset (the smallest offset it may hold), printed as 20 digits.
//
//	00000000000000368769.log        record batches (package record), back to back
//	00000000000000368769.index      offset -> position, 8-byte entries (package index)
//	00000000000000368769.timeindex  timestamp -> offset, 12-byte entries (package timeindex)
//	00000000000000368769.txnindex   aborted transactions, 34-byte entries, only if any
//	00000000000000368769.snapshot   producer state at that offset (package kafkalog/producer)
//
// Temporary suffixes follow the extension: ".deleted" (waiting for
// file.delete.delay.ms), ".cleaned" and ".swap" (a compaction or split in
// progress). FileName and ParseFileName are each other's inverse.
//
// # Kafka's rules, as this package applies them
//
//   - Append (LogSegment.append): an offset index entry (the append's last
//     offset, the position where it starts) is added when more than
//     index.interval.bytes were appended since the last entry, checked
//     before counting the append — at most one entry per append — with a
//     time index entry for the largest timestamp so far and the last offset
//     of the batch that carried it, if that timestamp grew (KIP-33).
//   - ShouldRoll: the append would take the segment past segment.bytes; the
//     segment is not empty and the append's max timestamp is more than
//     segment.ms minus the segment's jitter after its first batch's (or,
//     without timestamps, the segment is that old); an index is full; or an
//     offset does not fit the 32-bit relative offsets.
//   - OnBecomeInactive (roll) and Close: the final time index entry, then
//     the indexes (and a preallocated .log) trimmed to their contents.
//   - Read and TranslateOffset: the offset index's floor entry, then a scan
//     of batch headers to the first batch whose last offset reaches the
//     target; whole batches are returned.
//   - FindOffsetByTimestamp: the time index's floor entry, the offset
//     index's position for it, then the first record with a timestamp at or
//     above the target in the batches whose max timestamp reaches it.
//   - Recover (LogSegment.recover): every entry validated (size, magic,
//     header fields, checksum) with offsets that increase and fit the
//     segment, the .log cut at the first bad one, the indexes rebuilt with
//     the append rule, one entry per batch.
//
// Recovery goes beyond Kafka in two ways: a damaged baseOffset (the field
// no checksum covers) is found by the entries around it and cut instead of
// served, and bytes that read as a torn tail but are followed by a valid
// entry are reported as damage, with the file and position.
//
// # Use
//
//	s, err := segment.Create(fsys, "orders-0", 0, segment.DefaultConfig(), nil)
//	info, err := segment.Describe(batches) // offsets and timestamps of the batches
//	err = s.Append(batches, info)
//	ri, found, err := s.Read(42, 1<<20, s.Size(), true)
//	n, err := s.ReadAt(buf[:ri.Size], ri.Position)
//	err = s.Close()
//
// The indexes open lazily, on first use, as Kafka's LazyIndex does;
// zero padding at the end of an index (an untrimmed file) is dropped from
// memory, never trusted.
//
// # Concurrency
//
// A Segment takes one writer and any number of concurrent readers:
// Append, TruncateTo, Recover, OnBecomeInactive, Close and the other
// mutating methods must not run concurrently with each other; Read,
// ReadAt, TranslateOffset, FindOffsetByTimestamp and the accessors may run
// at any time. The package kafkalog serialises its writers.
package segment
