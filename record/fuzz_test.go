package record_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/record"
)

var generate = flag.Bool("generate", false, "regenerate the committed fuzz seed corpora from ../shared/kafka-real")

// fuzzLimit is the decompression bound the fuzz targets set.
const fuzzLimit = 1 << 20

// checkErr asserts the error contract: nil, or a *format.CorruptionError
// wrapping one of format's sentinels, positioned inside the input.
func checkErr(t *testing.T, err error, in []byte) {
	t.Helper()
	if err == nil {
		return
	}
	var ce *format.CorruptionError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a CorruptionError", err, err)
	}
	if ce.Offset < 0 || ce.Offset > int64(len(in)) {
		t.Fatalf("error offset %d outside the %d-byte input: %v", ce.Offset, len(in), err)
	}
	for _, s := range []error{format.ErrTruncated, format.ErrCRC, format.ErrTooLarge, format.ErrInvalid,
		format.ErrVarint, format.ErrMagic, format.ErrCodec, format.ErrCompressed} {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("error %v wraps no format sentinel", err)
}

// allocBound fails the test if f allocates more than c*len(in) plus the
// decompression limit.
func allocBound(t *testing.T, in []byte, f func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	if got, bound := after.TotalAlloc-before.TotalAlloc, uint64(8*len(in)+2*fuzzLimit+1<<16); got > bound {
		t.Fatalf("decoding %d bytes allocated %d bytes (bound %d)", len(in), got, bound)
	}
}

// FuzzDecodeBatch decodes arbitrary bytes as one v2 batch and iterates its
// records: no panic, bounded allocation, CorruptionErrors only, and a batch
// that decodes cleanly re-encodes to the same bytes (when its fields are
// ones our builder produces).
func FuzzDecodeBatch(f *testing.F) {
	f.Add(mustBatch(f, 3))
	f.Fuzz(func(t *testing.T, in []byte) {
		allocBound(t, in, func() {
			b, _, err := record.ReadBatch(in)
			checkErr(t, err, in)
			if err != nil {
				return
			}
			it := record.Iterator{MaxDecompressed: fuzzLimit}
			var r record.Record
			n := 0
			it.Reset(&b)
			for it.Next(&r) {
				n++
				if r.Offset < b.BaseOffset || r.Offset > b.LastOffset() {
					t.Fatalf("record offset %d outside [%d,%d]", r.Offset, b.BaseOffset, b.LastOffset())
				}
			}
			checkErr(t, it.Err(), in)
			if it.Err() == nil && n != int(b.RecordCount) {
				t.Fatalf("clean iteration gave %d records, header says %d", n, b.RecordCount)
			}
		})
	})
}

// FuzzDecodeMessageSet scans arbitrary bytes as a segment: any mix of v0,
// v1 and v2 entries, with full validation and deep iteration of wrappers.
// The valid prefix it reports must scan again to the same entries, with
// the CRCs checked and with NoCRC (recovery's second pass); and a NoCRC
// scan of the whole input finds the same entries first.
func FuzzDecodeMessageSet(f *testing.F) {
	f.Add(mustBatch(f, 2))
	f.Fuzz(func(t *testing.T, in []byte) {
		allocBound(t, in, func() {
			s := record.NewScanner(in, "", 0)
			s.Validate = true
			n := 0
			var at []int64
			for s.Next() {
				n++
				at = append(at, s.Entry().Position)
			}
			lax := record.NewScanner(in, "", 0)
			lax.Validate, lax.NoCRC = true, true
			for i := 0; lax.Next(); i++ {
				if i < n && lax.Entry().Position != at[i] {
					t.Fatalf("NoCRC: entry %d at %d, with the CRCs at %d", i, lax.Entry().Position, at[i])
				}
				if i+1 < n && lax.ValidBytes() != int(at[i+1]) {
					t.Fatalf("NoCRC: entry %d ends at %d, with the CRCs the next starts at %d", i, lax.ValidBytes(), at[i+1])
				}
			}
			if lax.ValidBytes() < s.ValidBytes() {
				t.Fatalf("NoCRC: %d valid bytes, fewer than the %d with the CRCs", lax.ValidBytes(), s.ValidBytes())
			}
			checkErr(t, s.Err(), in)
			valid := s.ValidBytes()
			if valid > len(in) {
				t.Fatalf("ValidBytes %d > %d", valid, len(in))
			}
			again := record.NewScanner(in[:valid], "", 0)
			again.Validate = true
			m := 0
			for again.Next() {
				m++
			}
			if again.Err() != nil || m != n {
				t.Fatalf("valid prefix rescans to %d entries (err %v), first scan found %d", m, again.Err(), n)
			}
			second := record.NewScanner(in[:valid], "", 0)
			second.NoCRC = true
			m = 0
			for second.Next() {
				m++
			}
			if second.Err() != nil || m != n {
				t.Fatalf("valid prefix rescans with NoCRC to %d entries (err %v), first scan found %d", m, second.Err(), n)
			}
			if k, _, rest := again.Tail(); k != record.TailNone || rest != 0 {
				t.Fatalf("valid prefix has a tail: %v %d", k, rest)
			}
		})
	})
}

// FuzzRoundTrip builds a batch from fuzzer-chosen records and spec, decodes
// it, and builds it again from the decoded records: the bytes must match.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint8(0), int64(0), int64(1700000000000), []byte("key"), []byte("value"), uint8(3), true)
	f.Add(uint8(4), int64(1<<40), int64(-1), []byte(nil), []byte(nil), uint8(0), false)
	f.Fuzz(func(t *testing.T, codecID uint8, base, ts int64, key, value []byte, n uint8, headers bool) {
		codec := compress.Codec(codecID % 5)
		if base < 0 {
			base = -base
		}
		if base < 0 || base > 1<<62 {
			base = 0
		}
		recs := make([]record.Record, int(n%50)+1)
		for i := range recs {
			r := &recs[i]
			// Deltas of one byte, and (n of 50 and more) of two and
			// more, so that both of the builder's paths run.
			r.Timestamp = ts + int64(i*7%5)<<(4*(n/50))
			if key != nil {
				r.Key = append([]byte(nil), key...)
				r.Key = append(r.Key, byte(i))
			}
			r.Value = value
			if headers && i%2 == 0 {
				r.Headers = []record.Header{{Key: []byte("h"), Value: value}, {Key: key[:0:0], Value: nil}}
				if key == nil {
					r.Headers[1].Key = []byte{}
				}
			}
		}
		spec := record.NewBatchSpec(base, codec)
		var w record.Builder
		buf, err := w.AppendBatch(nil, &spec, recs)
		// A record whose timestamp delta from the first record's wraps
		// around int64 cannot be written: the builder must refuse it.
		wraps := false
		for i := range recs {
			d := recs[i].Timestamp - recs[0].Timestamp
			wraps = wraps || (recs[i].Timestamp >= recs[0].Timestamp) != (d >= 0)
		}
		if wraps {
			if err == nil || !errors.Is(err, format.ErrInvalid) {
				t.Fatalf("build of a batch whose timestamp deltas wrap: %v, want ErrInvalid", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("build: %v", err)
		}
		b, rest, err := record.ReadBatch(buf)
		if err != nil || len(rest) != 0 {
			t.Fatalf("read back: %v (%d left)", err, len(rest))
		}
		var it record.Iterator
		var r record.Record
		var plain []plainRecord
		it.Reset(&b)
		for it.Next(&r) {
			plain = append(plain, copyRecord(&r))
		}
		if it.Err() != nil || len(plain) != len(recs) {
			t.Fatalf("iterate: %v, %d of %d records", it.Err(), len(plain), len(recs))
		}
		// Every record reads back as it was built (cmp tells null, nil,
		// from empty).
		want := make([]plainRecord, len(recs))
		got := make([]record.Record, len(recs))
		for i := range recs {
			want[i] = copyRecord(&recs[i])
			want[i].Offset = plain[i].Offset
			p := &plain[i]
			got[i] = record.Record{Timestamp: p.Timestamp, Key: p.Key, Value: p.Value, Headers: p.Headers}
		}
		if diff := cmp.Diff(want, plain); diff != "" {
			t.Fatalf("records read back differ from those built (-built +read):\n%s", diff)
		}
		again, err := w.AppendBatch(nil, &spec, got)
		if err != nil || string(again) != string(buf) {
			t.Fatalf("encode(decode(encode(x))) differs from encode(x) (err %v)", err)
		}
	})
}

// TestGenerateCorpus writes seed corpora from the real broker files: every
// distinct small batch (and legacy entry) of the real logs, and short runs
// of consecutive entries for the message-set target. Run with -generate.
func TestGenerateCorpus(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz from ../shared/kafka-real")
	}
	var batches, sets [][]byte
	for _, p := range realdata.Glob(t, "*.log") {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := record.NewScanner(data, p, 0)
		var prev []byte
		k := 0
		for s.Next() {
			e := s.Entry()
			raw := e.Raw()
			if len(raw) <= 4096 && k < 6 {
				if e.Magic == record.MagicV2 {
					batches = append(batches, raw)
				}
				if prev != nil && len(prev)+len(raw) <= 8192 {
					sets = append(sets, append(append([]byte{}, prev...), raw...))
				}
				k++
			}
			prev = raw
		}
	}
	// The golden files fill the real data's gaps: zstd, ABORT markers,
	// magic-0 wrappers (with the KAFKA-3160 lz4 checksum).
	golden, _ := filepath.Glob(filepath.Join("..", "testdata", "golden", "*.log"))
	for _, p := range golden {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for s := record.NewScanner(data, p, 0); s.Next(); {
			e := s.Entry()
			if len(e.Raw()) > 8192 {
				continue // seeds stay small
			}
			if e.Magic == record.MagicV2 {
				batches = append([][]byte{e.Raw()}, batches...)
			}
			sets = append([][]byte{e.Raw()}, sets...)
		}
		if len(data) <= 16384 {
			sets = append([][]byte{data}, sets...)
		}
	}
	for _, p := range realdata.Glob(t, "*.hex") {
		if set := realdata.FixtureRecordSet(t, p); len(set) <= 8192 {
			sets = append(sets, set)
		}
	}
	if err := fuzzseed.Write(filepath.Join("testdata", "fuzz", "FuzzDecodeBatch"), "real", batches, 150); err != nil {
		t.Fatal(err)
	}
	if err := fuzzseed.Write(filepath.Join("testdata", "fuzz", "FuzzDecodeMessageSet"), "real", sets, 150); err != nil {
		t.Fatal(err)
	}
	// Round-trip seeds: every codec, with and without keys and headers,
	// small and large bases, timestamps around -1.
	rt := filepath.Join("testdata", "fuzz", "FuzzRoundTrip")
	if err := os.MkdirAll(rt, 0o755); err != nil {
		t.Fatal(err)
	}
	k := 0
	for codec := uint8(0); codec < 5; codec++ {
		for _, c := range []struct {
			base, ts   int64
			key, value []byte
			n          uint8
			headers    bool
		}{
			{0, 1700000000000, []byte("key"), []byte("value"), 3, true},
			{1 << 40, -1, nil, nil, 0, false},
			{12345, 0, []byte{}, []byte{}, 49, true},
			{7, 1 << 50, []byte("k"), make([]byte, 300), 10, false},
		} {
			name := filepath.Join(rt, fmt.Sprintf("seed-%02d", k))
			if err := os.WriteFile(name, []byte(fuzzseed.Encode(codec, c.base, c.ts, c.key, c.value, c.n, c.headers)), 0o644); err != nil {
				t.Fatal(err)
			}
			k++
		}
	}
	fmt.Println("wrote", min(len(batches), 150), "batch seeds,", min(len(sets), 150), "message-set seeds and", k, "round-trip seeds")
}
