//go:build !amd64 || purego

package record

// appendCommon is appendCommonGo here.
func appendCommon(dst []byte, start int, baseTs int64, recs []Record, i int) ([]byte, int) {
	return appendCommonGo(dst, start, baseTs, recs, i)
}
