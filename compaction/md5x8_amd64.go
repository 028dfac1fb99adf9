//go:build amd64 && !purego

package compaction

import (
	"encoding/binary"

	"github.com/segkit/segkit/internal/cpu"
)

// md5x8AVX2 is MD5 of eight one-block messages, given word-major (x[w]
// holds word w of each), into the eight final states (out[0] the a words,
// and so on); see md5x8_amd64.s.
//
//go:noescape
func md5x8AVX2(x *[16][8]uint32, out *[4][8]uint32)

// useAVX2 reports whether the CPU has AVX and AVX2 and the OS saves the
// YMM state (package cpu).
var useAVX2 = cpu.AVX2()

// hashKeys sets out[i] to the MD5 hash of keys[i]. With AVX2, the keys
// that fit one MD5 block (up to 55 bytes: most keys) are hashed eight at
// a time, one per lane; the others, and every key without AVX2, by
// crypto/md5.
func hashKeys(out []keyHash, keys [][]byte) {
	if !useAVX2 || len(keys) < 2 {
		for i, k := range keys {
			out[i] = hashKey(k)
		}
		return
	}
	var x [16][8]uint32
	var st [4][8]uint32
	var lane [8]int32 // the key each lane holds
	n := 0
	for i, k := range keys {
		if len(k) > maxBlockKey {
			out[i] = hashKey(k)
			continue
		}
		setLane(&x, n, k)
		lane[n] = int32(i)
		if n++; n == 8 {
			md5x8AVX2(&x, &st)
			for l := range 8 {
				out[lane[l]] = laneHash(&st, l)
			}
			n = 0
		}
	}
	if n > 0 {
		md5x8AVX2(&x, &st) // the other lanes hold earlier keys: their states are not read
		for l := range n {
			out[lane[l]] = laneHash(&st, l)
		}
	}
}

// setLane writes key's padded MD5 block into lane l of x.
func setLane(x *[16][8]uint32, l int, key []byte) {
	var blk [64]byte
	copy(blk[:], key)
	blk[len(key)] = 0x80
	binary.LittleEndian.PutUint64(blk[56:], uint64(len(key))<<3)
	for w := range 16 {
		x[w][l] = binary.LittleEndian.Uint32(blk[4*w:])
	}
}

func laneHash(st *[4][8]uint32, l int) keyHash {
	return keyHash{uint64(st[0][l]) | uint64(st[1][l])<<32, uint64(st[2][l]) | uint64(st[3][l])<<32}
}
