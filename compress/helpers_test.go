package compress

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/segkit/segkit/format"
)

// allCodecs are the codecs that compress.
var allCodecs = []Codec{Gzip, Snappy, LZ4, Zstd}

// input is one test payload.
type input struct {
	name string
	data []byte
}

// randBytes returns n pseudo-random bytes from seed.
func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// jsonRecords returns the records section of a v2 batch of n records whose
// values are about size bytes of JSON-like text with some randomness: what
// a producer of application events sends.
func jsonRecords(seed uint64, n, size int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}
	var out, val, rec []byte
	for i := range n {
		val = val[:0]
		val = fmt.Appendf(val, `{"id":%d,"ts":%d,"user":"user-%04d","event":"%s","tags":[`, i, 1700000000000+r.IntN(1<<20), r.IntN(5000), words[r.IntN(len(words))])
		for len(val) < size-40 {
			val = fmt.Appendf(val, `"%s-%d",`, words[r.IntN(len(words))], r.IntN(100))
		}
		val = fmt.Appendf(val, `"end"],"score":%.3f}`, r.Float64()*100)
		// A record: length, attributes, timestamp delta, offset delta,
		// key (null), value, no headers.
		rec = rec[:0]
		rec = append(rec, 0)
		rec = format.AppendVarlong(rec, int64(i))
		rec = format.AppendVarint(rec, int32(i))
		rec = format.AppendVarint(rec, -1)
		rec = format.AppendVarint(rec, int32(len(val)))
		rec = append(rec, val...)
		rec = format.AppendVarint(rec, 0)
		out = format.AppendVarint(out, int32(len(rec)))
		out = append(out, rec...)
	}
	return out
}

// testInputs are the round-trip payloads.
func testInputs() []input {
	rep := bytes.Repeat([]byte("kafka segment "), 150000) // ~2 MiB
	return []input{
		{"empty", []byte{}},
		{"one_byte", []byte{'x'}},
		{"zeros_1k", make([]byte, 1024)},
		{"random_1k", randBytes(1, 1024)},
		{"records_16x1k", jsonRecords(2, 16, 1024)},
		{"random_100k", randBytes(3, 100<<10)},
		{"records_100k", jsonRecords(4, 100, 1024)},
		{"block_edge_64k", jsonRecords(5, 64, 1024)[:64<<10]},
		{"block_edge_64k_plus_1", jsonRecords(5, 65, 1024)[:64<<10+1]},
		{"repetitive_2m", rep[:2<<20]},
		{"zeros_2m", make([]byte, 2<<20)},
		{"random_2m", randBytes(6, 2<<20)},
	}
}

// checkDecodeError asserts the error contract of every Decompressor: a
// *format.CorruptionError wrapping ErrCompressed or ErrTooLarge, at an
// offset within src.
func checkDecodeError(t testing.TB, err error, src []byte) *format.CorruptionError {
	t.Helper()
	var ce *format.CorruptionError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *format.CorruptionError", err, err)
	}
	if !errors.Is(err, format.ErrCompressed) && !errors.Is(err, format.ErrTooLarge) {
		t.Fatalf("error %v wraps neither ErrCompressed nor ErrTooLarge", err)
	}
	if ce.Offset < 0 || ce.Offset > int64(len(src)) {
		t.Fatalf("error %v: offset %d outside the %d-byte input", err, ce.Offset, len(src))
	}
	return ce
}

// decompressors returns a fresh Decompressor per codec.
func decompressorFor(t testing.TB, c Codec) Decompressor {
	t.Helper()
	d, err := NewDecompressor(c)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func compressorFor(t testing.TB, c Codec) Compressor {
	t.Helper()
	e, err := NewCompressor(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// mustCompress compresses src with codec c at the default level.
func mustCompress(t testing.TB, c Codec, src []byte) []byte {
	t.Helper()
	var e Encoder
	out, err := e.AppendCompressed(nil, c, src)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sink keeps results alive in allocation tests and benchmarks.
var sink []byte
