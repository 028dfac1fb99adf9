package benchdata

import (
	"fmt"
	"math/rand/v2"

	"github.com/segkit/segkit/record"
)

// Shape names a benchmark record set.
type Shape struct {
	Name      string
	Count     int // records per batch
	ValueSize int // bytes per value
}

// Shapes are the two batch shapes every codec benchmark runs: a few large
// records and many small ones.
var Shapes = []Shape{
	{Name: "16x1KiB", Count: 16, ValueSize: 1024},
	{Name: "1000x100B", Count: 1000, ValueSize: 100},
}

// BaseTimestamp is the first record's timestamp.
const BaseTimestamp = 1_700_000_000_000

// Records returns the records of a shape: keys "user-NNNNN", values of
// JSON-like text with random digits (compressible about 2-4x, like real
// payloads), timestamps one millisecond apart, no headers. The same shape
// always gives the same bytes.
func Records(s Shape) []record.Record {
	rng := rand.New(rand.NewPCG(uint64(s.Count), uint64(s.ValueSize)))
	recs := make([]record.Record, s.Count)
	for i := range recs {
		recs[i].Timestamp = BaseTimestamp + int64(i)
		recs[i].Key = []byte(fmt.Sprintf("user-%05d", rng.IntN(100000)))
		recs[i].Value = value(rng, s.ValueSize)
	}
	return recs
}

func value(rng *rand.Rand, n int) []byte {
	fields := []string{"id", "amount", "currency", "status", "ts", "merchant", "country", "note"}
	v := make([]byte, 0, n+32)
	v = append(v, '{')
	for len(v) < n {
		f := fields[rng.IntN(len(fields))]
		v = fmt.Appendf(v, "%q:%d,", f, rng.Uint32())
	}
	v = v[:n]
	v[n-1] = '}'
	return v
}
