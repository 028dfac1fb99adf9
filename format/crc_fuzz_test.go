package format

import (
	"hash/crc32"
	"testing"
)

// FuzzCRC32C checks CRC32C and UpdateCRC32C against hash/crc32 (and, for
// short inputs, the bitwise definition) on any bytes from any initial
// value, whole and split in two at any point.
func FuzzCRC32C(f *testing.F) {
	f.Add(uint32(0), []byte("123456789"), 4)
	f.Add(uint32(0xffffffff), make([]byte, 256), 100)
	f.Fuzz(func(t *testing.T, init uint32, p []byte, split int) {
		want := crc32.Update(init, stdCastagnoli, p)
		if got := UpdateCRC32C(init, p); got != want {
			t.Fatalf("UpdateCRC32C(%#x, %d bytes) = %#x, hash/crc32 %#x", init, len(p), got, want)
		}
		if got, want := CRC32C(p), crc32.Checksum(p, stdCastagnoli); got != want {
			t.Fatalf("CRC32C(%d bytes) = %#x, hash/crc32 %#x", len(p), got, want)
		}
		if len(p) <= 4096 {
			if b := bitwiseCRC32C(init, p); b != want {
				t.Fatalf("hash/crc32 %#x, bitwise %#x: the reference is wrong", want, b)
			}
		}
		k := 0
		if len(p) > 0 {
			k = int(uint(split) % uint(len(p)+1))
		}
		if got := UpdateCRC32C(UpdateCRC32C(init, p[:k]), p[k:]); got != want {
			t.Fatalf("UpdateCRC32C in two at %d of %d = %#x, want %#x", k, len(p), got, want)
		}
	})
}
