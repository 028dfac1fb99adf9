// Package timeindex reads and writes the time index (.timeindex) beside a
// Kafka log segment, byte-compatibly with Apache Kafka (TimeIndex.java,
// KIP-33): a sparse map from timestamps to offsets, used to find the first
// offset at or after a timestamp and to decide time-based retention.
//
// # The .timeindex file
//
// A sequence of 12-byte entries, big-endian, with no header and no
// checksum:
//
//	offset  size  field
//	     0     8  timestamp       int64: the largest timestamp up to the offset
//	     8     4  relativeOffset  int32: offset - the segment's base offset
//
// An entry (T, O) says that no record up to offset O has a timestamp above
// T. Entries are added with the offset index's entries (every
// index.interval.bytes of log), holding the largest timestamp seen so far
// and the offset of the batch that carried it, but only when that
// timestamp is larger than the last entry's: timestamps strictly
// increase, offsets never decrease. When a segment rolls or closes it adds
// one final entry (MaybeAppend with skipFullCheck), for which IsFull keeps
// the last slot free. The file is preallocated to segment.index.bytes
// rounded down to a multiple of 12 (10485756 bytes at the default) and
// trimmed like the offset index. A segment of v0 messages (no timestamps)
// has an empty time index.
//
// Which offset an entry stores depends on the writer: the batch's last
// offset for recovery, followers and leaders from Kafka 3.8, and for
// leaders before 3.8 (uncompressed batches) the offset of the record that
// carried the timestamp (OffsetRule).
//
// # Use
//
//	x, err := timeindex.OpenTimeIndex(fsys, "00000000000000000000.timeindex", 0, index.OpenOptions{Writable: true})
//	err = x.MaybeAppend(1700000000123, 1234, false)
//	e := x.Lookup(1700000000200) // {1700000000123 1234}: scan from offset 1234
//	err = x.MaybeAppend(maxTs, offsetOfMaxTs, true) // at roll
//	err = x.TrimToValidSize()
//
// # Storage, padding, concurrency
//
// A TimeIndex is stored as the offset index is, by the same code: the
// entries are read once at open and kept in memory (12 bytes each, not the
// preallocated zero tail), appends are written behind, in one WriteAt at
// the next Flush, trim, resize, truncation or Close, lookups never touch
// the file and do not allocate, and it runs on any vfs.FS, including under
// GOOS=js. An untrimmed file ends in zero entries that Kafka trusts; its
// last entry is then (0, base), Kafka's sanity check fails, and Kafka's
// retention, reading 0 as the newest timestamp, deletes the segment early
// (KAFKA-10207). Padding reports them and DiscardPadding drops them. One
// goroutine may mutate a TimeIndex while any number of others read it; see
// package index for the details of all three.
//
// # Verification and reconstruction
//
// verify.TimeIndex cross-checks each entry against the .log;
// verify.RebuildTimeIndex produces what Kafka's recovery writes from its
// summary. See package index.
package timeindex
