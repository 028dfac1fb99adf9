// Package indexfile is the machinery that the offset index (package index)
// and the time index (package timeindex) share: Kafka's AbstractIndex,
// without the meaning of the entries.
//
// It holds:
//
//   - File: a preallocated file of fixed-size entries whose entries are kept
//     in memory, with its snapshots (View), its zero-padding report
//     (Padding), resizing and trimming;
//   - Kafka's binary search over such a file (LargestLowerBound,
//     SmallestUpperBound, WarmSectionBytes);
//   - the relative-offset rule both kinds of entry follow (Relative);
//   - the points at which Kafka's recovery writes entries (IndexPoints);
//   - the sentinel errors the two packages share, and the error of a
//     failed sanity check (CorruptIndexf).
//
// It is internal so that packages index and timeindex can export only what
// an embedder needs; its errors are re-exported by both, under the same
// names (index.ErrIndexFull is ErrIndexFull), and its Padding is converted
// to index.Padding, a struct with the same fields. The on-disk formats are
// specified in the documentation of those packages.
//
// # Storage
//
// Kafka maps an index file into memory and writes entries into the
// mapping. A File reads the file once, at open, through vfs.File.ReadAt in
// 64 KiB chunks, keeping only the bytes up to the last non-zero one (a
// 10 MiB preallocated index whose entries fill 8 KiB costs 8 KiB, not
// 10 MiB). Appended entries are written behind, in one WriteAt, at the next
// Flush, TrimToValidSize, Resize, TruncateEntries or Close. Reads never
// touch the file again.
//
// # Concurrency
//
// One goroutine may mutate a File (Append, TruncateEntries, DiscardPadding,
// Resize, TrimToValidSize, Reset, Flush, Close, Rename, Delete; Check and
// Closed belong with these) while any number
// of others read it (View, Entries, MaxEntries, Length, Padding, Path,
// Writable): each change is published atomically as a new
// snapshot, and bytes a snapshot covers are never rewritten, so readers
// take no lock and are never blocked. Mutating calls must not run
// concurrently with each other.
package indexfile
