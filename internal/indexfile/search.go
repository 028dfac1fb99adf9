package indexfile

// WarmSectionBytes is the size of the "warm" tail of an index that Kafka
// searches first (AbstractIndex.warmEntries: 8192 / entrySize), so that
// the lookups of in-sync followers and consumers touch only the last pages.
// The inlined searches of OffsetIndex.Lookup and TimeIndex.Lookup use it
// too.
const WarmSectionBytes = 8192

// LargestLowerBound returns the slot of the largest entry whose key is at
// most target among n entries of entrySize bytes, or -1 if there is none,
// with Kafka's search (AbstractIndex.indexSlotRangeFor): a binary search of
// the warm section (the last WarmSectionBytes of entries) when the target
// falls in it, else of the rest. key(i) returns the key of entry i.
//
// On keys that increase, the answer is the usual one. On keys that do not
// (a damaged or zero-padded file) it is the slot Kafka's broker would pick:
// always an entry whose key is at most target, though not always the
// largest.
func LargestLowerBound(n, entrySize int, target int64, key func(i int) int64) int {
	return searchSlot(n, entrySize, target, key, false)
}

// SmallestUpperBound returns the slot of the smallest entry whose key is at
// least target, or -1 if there is none, with the same search
// (AbstractIndex.smallestUpperBoundSlotFor).
func SmallestUpperBound(n, entrySize int, target int64, key func(i int) int64) int {
	return searchSlot(n, entrySize, target, key, true)
}

func searchSlot(n, entrySize int, target int64, key func(i int) int64, upper bool) int {
	if n == 0 {
		return -1
	}
	firstHot := max(0, n-1-WarmSectionBytes/entrySize)
	lo, hi := 0, firstHot
	if key(firstHot) < target {
		lo, hi = firstHot, n-1
	} else if key(0) > target {
		if upper {
			return 0
		}
		return -1
	}
	for lo < hi {
		mid := int(uint(lo+hi+1) >> 1)
		switch k := key(mid); {
		case k > target:
			hi = mid - 1
		case k < target:
			lo = mid
		default:
			return mid
		}
	}
	if !upper {
		return lo
	}
	if lo == n-1 {
		return -1
	}
	return lo + 1
}
