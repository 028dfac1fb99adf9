package record_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/record"
)

// FuzzReadAPI drives every exported reading entry point of package record
// over arbitrary bytes, whatever their magic: Scanner (with and without
// Validate) and ReaderScanner over the same bytes, EntryIterator on each
// entry, Iterator.Reset on each entry's Batch and LegacyIterator.Reset on
// each entry's Legacy message whatever the entry's magic (a legacy entry's
// Batch is the zero Batch, the README example's panic), Iterator.Validate,
// ReadBatch, ReadLegacyMessage and PeekBatchHeader at entry starts and odd
// positions, an unchecked Batch built from a peeked header (as viewers of
// damaged batches do), the Entry, Batch and LegacyMessage accessors, the
// control-record parsers on control batches, and FindEntry. It asserts:
// no panic; allocation bounded by a multiple of the input plus the
// decompression limit; every error a *format.CorruptionError wrapping a
// format sentinel inside the input; entries inside the input, in order;
// records of a validated v2 batch inside its offset range; ReaderScanner
// finding the entries and valid end Scanner finds; FindEntry answering a
// position at or after the one asked for, inside the input.
func FuzzReadAPI(f *testing.F) {
	f.Add(mustBatch(f, 3))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		readAPI(t, in)
		runtime.ReadMemStats(&after)
		// Six decoders (v2 and legacy: ours, the Scanner's and the
		// ReaderScanner's), each filling a buffer up to the limit; the
		// ReaderScanner's copy of the input; FindEntry's window.
		if got, bound := after.TotalAlloc-before.TotalAlloc, uint64(16*len(in)+8*fuzzLimit+1<<20); got > bound {
			t.Fatalf("reading %d bytes allocated %d bytes (bound %d)", len(in), got, bound)
		}
	})
}

// readAPI is FuzzReadAPI's body.
func readAPI(t *testing.T, in []byte) {
	var it record.EntryIterator
	it.V2.MaxDecompressed = fuzzLimit
	it.Legacy.MaxDecompressed = fuzzLimit
	var r record.Record
	var positions []int64
	validEnd := 0
	for _, validate := range []bool{false, true} {
		s := record.NewScanner(in, "", 0)
		s.Validate, s.MaxDecompressed = validate, fuzzLimit
		prevEnd := int64(0)
		for s.Next() {
			e := s.Entry()
			if e.Position < prevEnd || e.Size() <= 0 || e.Position+int64(e.Size()) > int64(len(in)) {
				t.Fatalf("entry at %d of %d bytes outside the %d-byte input (previous ended at %d)", e.Position, e.Size(), len(in), prevEnd)
			}
			prevEnd = e.Position + int64(e.Size())
			if validate {
				positions = append(positions, e.Position)
			}
			_, _, _ = e.BaseOffset(), e.LastOffset(), e.MaxTimestamp()
			it.Reset(e)
			for it.Next(&r) {
				if validate && e.Magic == record.MagicV2 && (r.Offset < e.Batch.BaseOffset || r.Offset > e.Batch.LastOffset()) {
					t.Fatalf("record offset %d outside [%d, %d]", r.Offset, e.Batch.BaseOffset, e.Batch.LastOffset())
				}
				if e.Magic == record.MagicV2 && e.Batch.Attributes.IsControl() {
					_, _ = record.ParseControlKey(r.Key)
					_, _ = record.ParseEndTxnMarker(r.Key, r.Value)
				}
			}
			checkErr(t, it.Err(), in)
			// The iterators on the other magic's half of the entry.
			it.V2.Reset(&e.Batch)
			for it.V2.Next(&r) {
			}
			if err := it.V2.Err(); e.Magic != record.MagicV2 && !errors.Is(err, format.ErrMagic) {
				t.Fatalf("Iterator.Reset on a magic-%d entry: Err() = %v, want format.ErrMagic", e.Magic, err)
			}
			checkErr(t, it.V2.Err(), in)
			checkErr(t, it.V2.Validate(&e.Batch), in)
			it.Legacy.Reset(&e.Legacy)
			for it.Legacy.Next(&r) {
			}
			_, _ = e.Batch.Payload(), e.Batch.ComputeCRC()
			_, _, _ = e.Legacy.ComputeCRC(), e.Legacy.Codec(), e.Legacy.TimestampType()
		}
		checkErr(t, s.Err(), in)
		if validate {
			validEnd = s.ValidBytes()
			_, _, _ = s.Tail()
		}
	}

	// The decoders of one entry, at entry starts and at odd positions.
	starts := append([]int64{1, record.MagicOffset, record.RecordsOffset}, positions...)
	for _, p := range starts[:min(len(starts), 16)] {
		if p > int64(len(in)) {
			continue
		}
		b := in[p:]
		if bt, _, err := record.ReadBatch(b); err == nil {
			checkErr(t, it.V2.Validate(&bt), b)
		} else {
			checkErr(t, err, b)
		}
		if m, _, err := record.ReadLegacyMessage(b); err == nil {
			it.Legacy.Reset(&m)
			for it.Legacy.Next(&r) {
			}
			checkErr(t, it.Legacy.Err(), b)
		} else {
			checkErr(t, err, b)
		}
		if h, ok := record.PeekBatchHeader(b); ok {
			size := min(max(h.Size(), 0), len(b))
			unchecked := record.Batch{BatchHeader: h, Raw: b[:size:size]}
			it.V2.Reset(&unchecked)
			for it.V2.Next(&r) {
			}
			_ = it.V2.Remaining()
			_, _ = unchecked.Payload(), unchecked.ComputeCRC()
			_, _, _ = h.LastOffset(), h.LastSequence(), h.DeleteHorizonMs()
		}
	}

	// ReaderScanner over the same bytes, in small chunks.
	var rs record.ReaderScanner
	rs.Validate, rs.MaxDecompressed = true, fuzzLimit
	rs.ChunkSize = 97
	rs.Reset(bytes.NewReader(in), int64(len(in)), "", 0)
	k := 0
	for rs.Next() {
		if k >= len(positions) || rs.Entry().Position != positions[k] {
			t.Fatalf("ReaderScanner entry %d at %d; Scanner's entries are at %v", k, rs.Entry().Position, positions)
		}
		k++
	}
	checkErr(t, rs.Err(), in)
	if k != len(positions) || rs.ValidEnd() != int64(validEnd) {
		t.Fatalf("ReaderScanner: %d entries, valid end %d; Scanner: %d entries, valid end %d", k, rs.ValidEnd(), len(positions), validEnd)
	}
	_, _, _ = rs.Tail()

	// FindEntry from a few positions.
	var finder record.Finder
	for _, from := range []int64{-1, 0, 1, int64(len(in) / 2)} {
		pos, found, err := finder.Find(bytes.NewReader(in), int64(len(in)), from)
		if err != nil {
			t.Fatalf("FindEntry(%d): %v", from, err)
		}
		if found && (pos < max(from, 0) || pos >= int64(len(in))) {
			t.Fatalf("FindEntry(%d) = %d, outside [%d, %d)", from, pos, max(from, 0), len(in))
		}
	}
}

// TestGenerateReadAPICorpus writes FuzzReadAPI's seeds: real entries of
// every magic and codec (../shared/kafka-real, testdata/kafka-broker, the
// golden files), runs of consecutive entries, a legacy entry followed by a
// v2 batch, and truncated and bit-flipped copies of each. Run with
// -generate.
func TestGenerateReadAPICorpus(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz/FuzzReadAPI")
	}
	type class struct {
		magic int8
		codec compress.Codec
		ctrl  bool
	}
	picked := map[class]int{}
	var whole [][]byte // entries, and runs of entries
	var legacy, v2 []byte
	files := realdata.Glob(t, "*.log")
	golden, _ := filepath.Glob(filepath.Join("..", "testdata", "golden", "*.log"))
	for _, p := range append(golden, files...) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var prev []byte
		for s := record.NewScanner(data, p, 0); s.Next(); {
			e := s.Entry()
			raw := e.Raw()
			c := class{magic: e.Magic, codec: e.Legacy.Codec()}
			if e.Magic == record.MagicV2 {
				c.codec, c.ctrl = e.Batch.Attributes.Codec(), e.Batch.Attributes.IsControl()
			}
			if len(raw) > 3072 || picked[c] >= 2 {
				prev = raw
				continue
			}
			picked[c]++
			whole = append(whole, raw)
			if prev != nil && len(prev)+len(raw) <= 6144 {
				whole = append(whole, append(slicesClone(prev), raw...))
			}
			if e.Magic == record.MagicV2 && v2 == nil {
				v2 = raw
			} else if e.Magic != record.MagicV2 && legacy == nil {
				legacy = raw
			}
			prev = raw
		}
	}
	if legacy == nil || v2 == nil {
		t.Fatalf("no legacy or no v2 entry found (%v)", picked)
	}
	whole = append(whole, append(slicesClone(legacy), v2...), append(slicesClone(v2), legacy...))
	// Built: v1 wrappers of each legacy codec (the real data has none),
	// and bombs above the fuzz decompression limit, small on disk.
	var w record.Builder
	recs := []record.Record{{Timestamp: 1700000000000, Key: []byte("k"), Value: []byte("v1")}, {Timestamp: 1700000000001, Value: []byte("v2")}}
	for _, c := range []compress.Codec{compress.Gzip, compress.Snappy, compress.LZ4} {
		b, err := w.AppendLegacyWrapper(nil, &record.LegacySpec{Magic: record.MagicV1, Codec: c, Offset: 41, Timestamp: 1700000000001}, recs)
		if err != nil {
			t.Fatal(err)
		}
		whole = append(whole, b)
	}
	bomb := []record.Record{{Timestamp: 1700000000000, Value: make([]byte, 2*fuzzLimit)}}
	for _, c := range []compress.Codec{compress.Gzip, compress.Zstd} {
		spec := record.NewBatchSpec(0, c)
		b, err := w.AppendBatch(nil, &spec, bomb)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 8192 {
			t.Fatalf("%v bomb is %d bytes", c, len(b))
		}
		whole = append(whole, b)
	}
	var seeds [][]byte
	for i, w := range whole {
		seeds = append(seeds, w)
		if i%2 == 0 {
			seeds = append(seeds, w[:len(w)/2], w[:len(w)-1]) // torn
		}
		for _, at := range []int{record.MagicOffset, record.CRCOffset + 1, record.AttributesOffset + 1, len(w) * 2 / 3} {
			if at < len(w) && (i+at)%3 == 0 {
				flipped := slicesClone(w)
				flipped[at] ^= 0x04 // magic 2→6, a CRC bit, codec bits, a payload bit
				seeds = append(seeds, flipped)
			}
		}
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzReadAPI")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := fuzzseed.Write(dir, "real", seeds, 200); err != nil {
		t.Fatal(err)
	}
	fmt.Println("wrote", min(len(seeds), 200), "FuzzReadAPI seeds from classes", picked)
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }
