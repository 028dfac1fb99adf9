//go:build amd64 && !purego

package compaction

// prefetchLine asks the CPU to bring in the cache line p is in, without
// waiting for it (PREFETCHT0): a hint, which changes no result.
//
//go:noescape
func prefetchLine(p *byte)

func prefetch(p *byte) uint32 {
	prefetchLine(p)
	return 0
}
