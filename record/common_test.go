package record

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// commonCase is one call of appendCommon: records, where the batch starts
// and what dst holds (its length and spare capacity) at the call.
type commonCase struct {
	recs   []Record
	baseTs int64
	start  int // where the batch began; negative puts its size limit MaxBatchSize+start bytes into dst
	prefix int
	spare  int
	i      int
}

// valueLens are the lengths around every branch of the assembly's copy
// (16, 32, 64, 256 and its 64-byte loops) and the common path's limit
// (0x1fc0).
var valueLens = []int{0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129,
	191, 192, 193, 255, 256, 257, 319, 320, 321, 1000, 1024, 0x1fbf, 0x1fc0, 0x1fc1}

// commonCaseFrom decodes a case from fuzz bytes: a few bytes of set-up,
// then three a record (key, value, timestamp).
func commonCaseFrom(data []byte) commonCase {
	c := commonCase{baseTs: 1_700_000_000_000}
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	switch next() % 4 {
	case 1:
		c.baseTs = math.MinInt64 + 100 // deltas that wrap
	case 2:
		c.baseTs = math.MaxInt64 - 100
	}
	c.prefix = int(next() % 70)
	c.spare = int(next()) * 16
	// Most cases have no limit in reach; some put the batch's limit a few
	// hundred bytes after dst's start.
	if l := next(); l >= 200 {
		c.start = -(MaxBatchSize - int(l-200)*20)
	}
	src := make([]byte, 9000)
	for k := range src {
		src[k] = byte(k*13 + k>>8)
	}
	for len(data) >= 3 {
		kb, vb, tb := next(), next(), next()
		var r Record
		if kb&0x20 == 0 {
			r.Key = src[int(kb>>6) : int(kb>>6)+int(kb&0x1f)%18]
		}
		switch {
		case vb == 0xff:
			// null
		case vb >= 0xf0:
			r.Value = src[int(vb)&7 : int(vb)&7+int(vb-0xf0)*600]
		default:
			n := valueLens[int(vb)%len(valueLens)]
			off := int(vb>>5) * 9
			r.Value = src[off : off+n]
		}
		if tb&0x80 != 0 {
			r.Headers = []Header{{Key: []byte("h")}}
		}
		r.Attributes = int8(tb & 0x40)
		// Deltas around one byte's and two bytes' limits, either sign.
		d := []int64{0, 1, -1, 63, 64, -64, -65, 8191, 8192, -8192, -8193, math.MaxInt64 / 2}[int(tb&0x3f)%12]
		r.Timestamp = c.baseTs + d
		c.recs = append(c.recs, r)
	}
	return c
}

// checkCommon runs appendCommon and appendCommonGo on the same case and
// fails if they stop at different records, write different bytes, or
// change what dst held; appendCommon runs with each way of copying values
// the CPU can run.
func checkCommon(t *testing.T, c commonCase) {
	t.Helper()
	run := func(f func([]byte, int, int64, []Record, int) ([]byte, int)) ([]byte, int) {
		dst := make([]byte, c.prefix, c.prefix+c.spare)
		for k := range dst {
			dst[k] = byte(k) | 0x80
		}
		out, i := f(dst, c.start, c.baseTs, c.recs, c.i)
		for k := range c.prefix {
			if out[k] != byte(k)|0x80 {
				t.Fatalf("byte %d of dst's prefix changed", k)
			}
		}
		return out, i
	}
	want, wi := run(appendCommonGo)
	check := func(how string) {
		got, gi := run(appendCommon)
		if gi != wi || !bytes.Equal(got, want) {
			t.Fatalf("appendCommon%s stopped at record %d of %d with %d bytes; appendCommonGo at %d with %d (first difference at byte %d)",
				how, gi, len(c.recs), len(got), wi, len(want), firstDiff(got, want))
		}
	}
	eachCopy(check)
}

func firstDiff(a, b []byte) int {
	for k := range min(len(a), len(b)) {
		if a[k] != b[k] {
			return k
		}
	}
	return min(len(a), len(b))
}

// TestAppendCommonMatchesGo holds appendCommon (in assembly on amd64) to
// appendCommonGo, which the round-trip tests hold to the format: every
// key length to 17, null and empty, every value length of valueLens at
// several alignments, deltas at each varint's limits and wrapping, offset
// deltas past 64 and 8192, headers, the batch's size limit, and dst
// growing from nothing.
func TestAppendCommonMatchesGo(t *testing.T) {
	src := make([]byte, 9000)
	for k := range src {
		src[k] = byte(k*7 + k>>8)
	}
	base := int64(1_700_000_000_000)
	for klen := -1; klen <= 17; klen++ {
		for _, vlen := range append([]int{-1}, valueLens...) {
			for off := range 3 {
				recs := make([]Record, 3)
				for j := range recs {
					r := &recs[j]
					if klen >= 0 {
						r.Key = src[off+j : off+j+klen]
					}
					if vlen >= 0 {
						r.Value = src[off*21+j : off*21+j+vlen]
					}
					r.Timestamp = base + int64(j*off*40)
					r.Attributes = int8(j)
				}
				for _, spare := range []int{0, 40, 4096} {
					checkCommon(t, commonCase{recs: recs, baseTs: base, prefix: 5, spare: spare})
				}
			}
		}
	}
	// Offset deltas of one, two and three bytes, and timestamp deltas
	// spread around every limit.
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]Record, 8200)
	for j := range recs {
		r := &recs[j]
		r.Key = src[j%50 : j%50+j%17]
		r.Value = src[j%99 : j%99+valueLens[j%(len(valueLens)-1)]] // all but 0x1fc1
		r.Timestamp = base + rng.Int64N(20000) - 10000
	}
	for _, i := range []int{0, 60, 63, 64, 65, 8000, 8191, 8192} {
		checkCommon(t, commonCase{recs: recs, baseTs: base, i: i, spare: 1 << 20})
		checkCommon(t, commonCase{recs: recs, baseTs: base - 10000, i: i})
	}
	// dst empty, with no capacity: appendCommon must grow it enough for
	// the largest record of a size (every varint of two bytes), whatever
	// size class the allocation lands on.
	for klen := 0; klen <= 16; klen++ {
		for vlen := 0; vlen <= 300; vlen++ {
			r := Record{Key: src[:klen], Value: src[:vlen], Timestamp: base + 100}
			one := make([]Record, 101)
			one[100] = r
			checkCommon(t, commonCase{recs: one, baseTs: base, i: 100})
		}
	}
	// The batch's size limit, at every distance from the record that
	// crosses it.
	for lim := 0; lim < 400; lim += 7 {
		checkCommon(t, commonCase{recs: recs[:10], baseTs: base, start: -(MaxBatchSize - lim), spare: 1 << 12})
	}
	// Random cases.
	data := make([]byte, 64)
	for range 3000 {
		for k := range data {
			data[k] = byte(rng.Uint32())
		}
		checkCommon(t, commonCaseFrom(data[:4+rng.IntN(60)]))
	}
}

// FuzzAppendCommon holds appendCommon to appendCommonGo on fuzzer-chosen
// records (see commonCaseFrom).
func FuzzAppendCommon(f *testing.F) {
	f.Add([]byte{0, 3, 10, 0, 5, 20, 1, 0x05, 24, 2})
	f.Add([]byte{1, 0, 0, 250, 0x10, 0xf3, 0x05, 0x1f, 0xff, 0x8b})
	f.Add(binary.LittleEndian.AppendUint64([]byte{2, 69, 255, 0}, 0x0123456789abcdef))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkCommon(t, commonCaseFrom(data))
	})
}
