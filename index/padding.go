package index

// Padding describes the zero bytes at the end of an index file that Kafka
// trusts as entries: the tail an index leaves when the broker stops before
// trimming it (a crash, or the active segment's preallocated index copied
// while the broker ran). Kafka reads such a file as floor(length/entrySize)
// entries, the zero ones included, which is the root of KAFKA-10207,
// KAFKA-12734 and KAFKA-19200. OffsetIndex.Padding and
// timeindex.TimeIndex.Padding return it.
type Padding struct {
	// Entries is the number of entries Kafka trusts (the index's Entries).
	Entries int
	// ValidEntries is the number of entries before the trailing run of
	// all-zero entries. Kafka never writes an all-zero offset-index entry;
	// a time index's first entry may legitimately be all zero (timestamp 0
	// at the base offset), and a file holding only that entry is reported
	// as padding.
	ValidEntries int
	// ZeroBytes is the length of that zero run, plus a partial trailing
	// entry if it is zero too.
	ZeroBytes int64
	// Untrimmed reports ValidEntries < Entries: Kafka would read
	// Entries-ValidEntries zero entries as real ones.
	Untrimmed bool
}
