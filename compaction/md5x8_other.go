//go:build !amd64 || purego

package compaction

// hashKeys sets out[i] to the MD5 hash of keys[i] (on amd64 with AVX2,
// eight at a time: md5x8_amd64.go).
func hashKeys(out []keyHash, keys [][]byte) {
	for i, k := range keys {
		out[i] = hashKey(k)
	}
}
