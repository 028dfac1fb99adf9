//go:build !amd64 || purego

package format

import "hash/crc32"

func updateCastagnoli(crc uint32, p []byte) uint32 { return crc32.Update(crc, castagnoli, p) }
