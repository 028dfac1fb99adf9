// Package index reads and writes two of the files beside a Kafka log
// segment, byte-compatibly with Apache Kafka: the offset index (.index),
// which maps offsets to byte positions in the .log, and the transaction
// index (.txnindex), which lists the transactions aborted in the segment.
// It also holds the types the time index (package timeindex) shares with
// the offset index: the zero-padding report (Padding), the open options
// and the operational errors. Both indexes are built on the same internal
// code: a preallocated file of fixed-size entries kept in memory, and
// Kafka's search over it.
//
// # The .index file
//
// A sequence of 8-byte entries, big-endian, with no header and no
// checksum (Kafka rebuilds an index after a crash rather than trusting it):
//
//	offset  size  field
//	     0     4  relativeOffset  int32: offset - the segment's base offset
//	     4     4  position        int32: byte position of a batch in the .log
//
// An entry is added once more than index.interval.bytes (4096) were
// appended to the log since the last one: the append's largest offset, at
// the position where the append starts. Offsets strictly increase,
// positions never decrease. The file of the active segment is preallocated
// to segment.index.bytes (10 MiB) rounded down to a multiple of 8, and is
// trimmed to its entries when the segment rolls or the broker stops.
//
// # The .txnindex file
//
// A sequence of 34-byte entries, appended (never preallocated) when a
// transaction is aborted; the file exists only once one was:
//
//	offset  size  field
//	     0     2  version           int16, 0
//	     2     8  producerId        int64
//	    10     8  firstOffset       int64
//	    18     8  lastOffset        int64: the ABORT marker's offset
//	    26     8  lastStableOffset  int64
//
// Last offsets strictly increase.
//
// # Use
//
//	x, err := index.OpenOffsetIndex(fsys, "00000000000000000000.index", 0, OpenOptions{Writable: true})
//	err = x.Append(1234, 8192)   // offset 1234's batch starts at byte 8192
//	e := x.Lookup(1300)          // {1234 8192}: scan the .log from there
//	err = x.TrimToValidSize()    // when the segment rolls
//	err = x.Close()
//
// # Storage, and what it costs
//
// Kafka maps index files into memory; that is an optimisation of its
// runtime, not part of the format, and there is no mmap under GOOS=js. An
// index here reads its file once, at open, through vfs.File.ReadAt, in
// 64 KiB chunks, and keeps in memory only the bytes up to the last
// non-zero one: the entries, not the preallocated zero tail. An index of n
// entries costs 8n bytes of memory (at most 10 MiB at the default
// segment.index.bytes, for a full index; opening one briefly needs up to
// twice that while the buffer grows), and opening costs one read of the
// file: about 5 ms for 8 MiB. Each append publishes a new snapshot for readers (one small
// allocation) and costs no system call: appended entries are written
// behind, in one WriteAt, at the next Flush, trim, resize, truncation or
// Close. As with Kafka's mapping, entries become durable at a flush, and
// recovery rebuilds the indexes of the segments a crash left unflushed. Truncate (vfs.File.Truncate) preallocates,
// resizes and trims. Lookups never touch the file and do not allocate. The
// same code runs on the OS filesystem, vfs.NewMem and a browser's files.
//
// # Zero padding
//
// Kafka trusts floor(length/8) entries of an existing file. An index that
// was not trimmed, because the broker crashed or because it is the active
// segment's index copied while the broker ran, ends in zero entries, and
// Kafka reads them as real ones: an offset index then holds (base, 0)
// entries, and a time index (0, base) ones, from which Kafka concludes
// that the segment's newest timestamp is 0 (KAFKA-10207, KAFKA-12734,
// KAFKA-19200). Opening follows Kafka (Entries counts them), and Padding
// reports them, so that a caller can DiscardPadding or rebuild rather than
// trust them silently. Verification reports them as a KindZeroPadding
// warning, normal for the active segment.
//
// # Verification
//
// Package index knows bytes and files, not record batches: checking an
// index against its .log is package verify's (verify.SummarizeLog,
// verify.OffsetIndex, verify.TimeIndex, verify.TxnIndex), whose findings
// are package finding's.
//
// # Reconstruction
//
// verify.RebuildOffsetIndex (and verify.RebuildTimeIndex) produce the files Kafka's
// recovery (LogSegment.recover) writes from a .log. A broker's append path
// follows the same interval rule but counts bytes per append, not per
// batch, and restarts the count when it reopens a segment, so its files
// equal a rebuild only when every append was one batch and the broker did
// not restart in the segment's lifetime; the .log alone cannot tell where
// a follower's appends or a restart fell. The entries such a broker writes
// instead still pass verify.OffsetIndex without errors.
//
// # Concurrency
//
// An OffsetIndex (and a timeindex.TimeIndex) takes one writer and any
// number of readers: one goroutine may call the mutating methods (Append,
// TruncateTo, Reset, TrimToValidSize, Resize, DiscardPadding, Flush, Close,
// Rename, Delete) while others call the reading ones (Lookup, Entry,
// AppendAll, Entries, LastEntry, IsFull, SanityCheck, Padding, Path,
// Length).
// Readers take no lock: each change is published atomically as a new
// snapshot, and bytes a snapshot covers are never rewritten. Mutating
// methods must not run concurrently with each other. A TransactionIndex
// follows the same contract. After Close, the entries stay readable.
package index
