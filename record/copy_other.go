//go:build !amd64 || purego

package record

// copyValue is copy(dst, src) for a record's value: memmove here.
func copyValue(dst, src []byte) int { return copy(dst, src) }
