package producer

import (
	"bytes"
	"math"
	"os"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
)

// TestGenerateMoreSeeds adds grow-* seeds to FuzzDecodeSnapshot: every
// distinct real producer .snapshot, and each non-empty one torn at every
// field of its first entry and at each entry boundary, with its version,
// count and CRC changed (the CRC recomputed, or not), bytes appended, an
// entry repeated (one producer twice), entries reversed, and each field of
// an entry set to the values producer state treats specially (-1, 0, the
// type's limits), CRC recomputed. Run with -generate (after
// TestGenerateCorpus).
func TestGenerateMoreSeeds(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz from ../shared/kafka-real")
	}
	c := fuzzseed.NewGrow(t, "FuzzDecodeSnapshot")
	c.DefaultCap = 12
	c.Caps["real"] = 40
	c.Caps["field"] = 60
	recrc := func(b []byte) []byte {
		b = bytes.Clone(b)
		if len(b) >= SnapshotHeaderSize {
			format.PutUint32(b[crcOffset:], format.CRC32C(b[entriesOffset:]))
		}
		return b
	}
	set := func(b []byte, off int, v []byte) []byte {
		b = bytes.Clone(b)
		copy(b[off:], v)
		return b
	}
	i64 := func(v int64) []byte { b := make([]byte, 8); format.PutInt64(b, v); return b }
	i32 := func(v int32) []byte { b := make([]byte, 4); format.PutInt32(b, v); return b }
	i16 := func(v int16) []byte { b := make([]byte, 2); format.PutInt16(b, v); return b }
	var reals [][]byte
	seen := map[string]bool{}
	for _, p := range realdata.Glob(t, "*.snapshot") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !seen[string(b)] {
			seen[string(b)] = true
			reals = append(reals, b)
		}
	}
	// Field offsets inside an entry, with the values worth trying.
	fields := []struct {
		off  int
		vals [][]byte
	}{
		{0, [][]byte{i64(-1), i64(0), i64(math.MaxInt64), i64(math.MinInt64)}},  // producerId
		{8, [][]byte{i16(-1), i16(0), i16(math.MaxInt16), i16(math.MinInt16)}},  // epoch
		{10, [][]byte{i32(-1), i32(0), i32(math.MaxInt32), i32(math.MinInt32)}}, // lastSequence
		{14, [][]byte{i64(-1), i64(0), i64(math.MaxInt64), i64(math.MinInt64)}}, // lastOffset
		{22, [][]byte{i32(-1), i32(0), i32(math.MaxInt32), i32(math.MinInt32)}}, // offsetDelta
		{26, [][]byte{i64(-1), i64(0), i64(math.MaxInt64), i64(math.MinInt64)}}, // timestamp
		{34, [][]byte{i32(-1), i32(0), i32(math.MaxInt32), i32(math.MinInt32)}}, // coordinatorEpoch
		{38, [][]byte{i64(-1), i64(0), i64(math.MaxInt64), i64(math.MinInt64)}}, // currentTxnFirstOffset
	}
	for _, b := range reals {
		c.Add("real", b)
		n := (len(b) - SnapshotHeaderSize) / EntrySize
		for _, v := range []int16{0, 2, -1} {
			c.Add("version", set(b, versionOffset, i16(v)))
		}
		c.Add("crc-zero", set(b, crcOffset, i32(0)))
		c.Add("count-plus1", recrc(set(b, countOffset, i32(int32(n+1)))))
		c.Add("count-plus1-badcrc", set(b, countOffset, i32(int32(n+1))))
		c.Add("count-negative", recrc(set(b, countOffset, i32(-1))))
		c.Add("count-huge", recrc(set(b, countOffset, i32(math.MaxInt32))))
		c.Add("trailing", recrc(append(bytes.Clone(b), 0, 0, 0, 1)))
		c.Add("trailing-badcrc", append(bytes.Clone(b), 0xff))
		c.Add("torn-header", b[:min(len(b), SnapshotHeaderSize-1)])
		if n == 0 {
			continue
		}
		e0 := SnapshotHeaderSize
		for _, f := range fields {
			c.Add("torn-field", b[:e0+f.off+1])
			c.Add("torn-field-recrc", recrc(b[:e0+f.off]))
			for _, v := range f.vals {
				c.Add("field", recrc(set(b, e0+f.off, v)))
			}
		}
		for k := 1; k <= n; k++ {
			c.Add("torn-entry", b[:SnapshotHeaderSize+k*EntrySize-1])
		}
		entries := b[SnapshotHeaderSize : SnapshotHeaderSize+n*EntrySize]
		dup := append(append(bytes.Clone(b[:SnapshotHeaderSize]), entries...), entries[:EntrySize]...)
		c.Add("repeated-producer", recrc(set(dup, countOffset, i32(int32(n+1)))))
		if n > 1 {
			var rev []byte
			for k := n - 1; k >= 0; k-- {
				rev = append(rev, entries[k*EntrySize:(k+1)*EntrySize]...)
			}
			c.Add("reversed", recrc(append(bytes.Clone(b[:SnapshotHeaderSize]), rev...)))
		}
		// Two real snapshots' entries in one.
		for _, o := range reals {
			if m := (len(o) - SnapshotHeaderSize) / EntrySize; m > 0 && !bytes.Equal(o, b) {
				both := append(bytes.Clone(b), o[SnapshotHeaderSize:SnapshotHeaderSize+m*EntrySize]...)
				c.Add("merged", recrc(set(both, countOffset, i32(int32(n+m)))))
			}
		}
	}
	c.Write()
}
