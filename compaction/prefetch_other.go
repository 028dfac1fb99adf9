//go:build !amd64 || purego

package compaction

// prefetch reads the byte at p, so that its cache line comes in: without
// a prefetch hint (prefetch_amd64.s), the caller sums what the reads of a
// batch return, so that they wait for memory together.
func prefetch(p *byte) uint32 { return uint32(*p) }
