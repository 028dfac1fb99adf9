package index

// HeldBytes returns the bytes of entries x keeps in memory: those up to the
// last non-zero entry, not the zero tail of a preallocated file.
func HeldBytes(x *OffsetIndex) int { return len(x.f.View().Data()) }

// Hooks for the tests of methods Kafka's indexes have that segkit keeps
// unexported (the segment and the engine need none of them).

func FetchUpperBoundOffset(x *OffsetIndex, startPosition int32, fetchSize int) (Entry, bool) {
	return x.fetchUpperBoundOffset(startPosition, fetchSize)
}

func MaxEntries(x *OffsetIndex) int { return x.maxEntries() }

func LastOffset(x *OffsetIndex) int64 { return x.lastOffset() }

func SizeInBytes(x *OffsetIndex) int { return x.sizeInBytes() }

func CollectAbortedTxns(x *TransactionIndex, dst []AbortedTxn, fetchOffset, upperBoundOffset int64) ([]AbortedTxn, bool) {
	return x.collectAbortedTxns(dst, fetchOffset, upperBoundOffset)
}

func Exists(x *TransactionIndex) bool { return x.exists() }

const CurrentTxnVersion = currentTxnVersion
