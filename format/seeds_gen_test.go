package format

import (
	"encoding/binary"
	"flag"
	"math"
	"os"
	"testing"

	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
)

var generate = flag.Bool("generate", false, "add the grow-* seeds to testdata/fuzz (edge cases and ../shared/kafka-real)")

// TestGenerateVarintSeeds adds grow-* seeds to FuzzVarint: every encoded
// length 1..10, the values at each 7-bit boundary and around the int32 and
// int64 extremes (with trailing bytes too), over-long and overflowing
// encodings, truncations of each, and the bytes at the start of real
// records (length, attributes, timestamp and offset deltas, key length),
// taken from uncompressed v2 batches of the real broker files. Run with
// -generate.
func TestGenerateVarintSeeds(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to add seeds to testdata/fuzz")
	}
	c := fuzzseed.NewGrow(t, "FuzzVarint")
	c.Caps["real"] = 40
	var vals []int64
	for k := 0; k < 64; k += 7 {
		b := int64(1) << k
		vals = append(vals, b-1, b, -b, -b-1, b/2, -(b / 2))
	}
	vals = append(vals, math.MaxInt32, math.MaxInt32+1, math.MinInt32, math.MinInt32-1, math.MaxInt64, math.MinInt64, math.MaxInt64-1, math.MinInt64+1, 300, -300)
	for _, v := range vals {
		enc := binary.AppendVarint(nil, v)
		c.Add("value", enc)
		c.Add("value-trailing", append(enc, 0x01, 0xff))
		if len(enc) > 1 {
			c.Add("value-truncated", enc[:len(enc)-1])
		}
	}
	for n := 1; n <= 11; n++ {
		// Over-long: continuation bytes then a zero terminator.
		over := make([]byte, n)
		for i := range n - 1 {
			over[i] = 0x80
		}
		c.Add("overlong", over)
		all := make([]byte, n)
		for i := range all {
			all[i] = 0xff
		}
		c.Add("all-continuation", all)
		all[n-1] = 0x7f
		c.Add("max-terminated", all)
		all[n-1] = 0x01
		c.Add("one-terminated", all)
		all[n-1] = 0x02
		c.Add("two-terminated", all) // overflows at 10 bytes
	}
	// 5-byte 32-bit overflow boundaries.
	for _, last := range []byte{0x07, 0x0f, 0x10, 0x1f, 0x20, 0x7f} {
		c.Add("int32-fifth", []byte{0xff, 0xff, 0xff, 0xff, last})
		c.Add("int32-fifth-even", []byte{0xfe, 0xff, 0xff, 0xff, last})
	}
	// Real records: the varints at the start of each record.
	for _, p := range realdata.Glob(t, "*.log") {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for pos := 0; len(data)-pos >= 61; {
			size := 12 + int(int32(binary.BigEndian.Uint32(data[pos+8:])))
			if size < 61 || size > len(data)-pos {
				break
			}
			batch := data[pos : pos+size]
			pos += size
			if batch[16] != 2 || batch[22]&7 != 0 || c.Kinds["real"] >= c.Caps["real"] {
				continue
			}
			recs := batch[61:]
			c.Add("real", recs[:min(len(recs), 24)])
			// The record's timestamp delta and offset delta: after the
			// length varint and the attributes byte.
			if _, n := Varint(recs); n > 0 && n+1 < len(recs) {
				c.Add("real-delta", recs[n+1:min(len(recs), n+1+12)])
			}
		}
	}
	c.Write()
}
