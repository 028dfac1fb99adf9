package record

import (
	"bytes"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// nextSeeds are records sections for FuzzNextFastPath: records Next reads
// itself (short varints, no headers) beside ones it leaves to next (long
// varints, headers, non-canonical lengths, control keys).
func nextSeeds(tb testing.TB) [][]byte {
	big := bytes.Repeat([]byte{'v'}, 20000) // a three-byte value length
	sets := [][]Record{
		{{Value: []byte("a")}, {Key: []byte("k1"), Value: []byte("b")}, {Key: []byte{}, Value: nil}},
		{{Key: []byte("key-0001"), Value: bytes.Repeat([]byte{1}, 1024)}, {Key: []byte("key-0002"), Value: bytes.Repeat([]byte{2}, 1024)}},
		{{Value: []byte("x"), Headers: []Header{{Key: []byte("h"), Value: []byte("1")}}}, {Value: []byte("y")}},
		{{Value: big}, {Key: bytes.Repeat([]byte{'k'}, 200), Value: []byte("z")}},
		{{Timestamp: 1 << 40, Value: []byte("ts")}, {Timestamp: 1<<40 + 100000, Value: []byte("far")}},
	}
	var out [][]byte
	for i, recs := range sets {
		var w Builder
		raw, err := w.AppendBatch(nil, &BatchSpec{}, recs)
		if err != nil {
			tb.Fatalf("seed %d: %v", i, err)
		}
		out = append(out, raw[RecordsOffset:])
	}
	// A two-byte length of a one-byte value (0x81 0x00: non-canonical).
	out = append(out, []byte{0x0e, 0, 0, 0, 0x81, 0x00, 0x02, 'v', 0})
	return out
}

// FuzzNextFastPath holds Next, whose own code reads only common records,
// to next, the general decoder, over any records section and batch
// header: the same records, the same positions, the same error.
func FuzzNextFastPath(f *testing.F) {
	for i, s := range nextSeeds(f) {
		f.Add(s, int32(3), int32(2), int64(1000), uint8(i))
	}
	// Two records, k1=v1 and k2=v2, then each check of Next's own code
	// failed in turn (the second record starts at byte 11).
	var w Builder
	raw, err := w.AppendBatch(nil, &BatchSpec{}, []Record{{Key: []byte("k1"), Value: []byte("v1")}, {Key: []byte("k2"), Value: []byte("v2")}})
	if err != nil {
		f.Fatal(err)
	}
	two := raw[RecordsOffset:]
	patch := func(i int, c byte) []byte {
		p := bytes.Clone(two)
		p[i] = c
		return p
	}
	f.Add(two, int32(2), int32(1), int64(1000), uint8(0))
	f.Add(patch(14, 0x00), int32(2), int32(1), int64(1000), uint8(0))          // offset delta 0 again
	f.Add(patch(14, 0x04), int32(2), int32(1), int64(1000), uint8(0))          // offset delta 2 > lastOffsetDelta
	f.Add(append(bytes.Clone(two), 0), int32(2), int32(1), int64(0), uint8(0)) // a byte after the last record
	f.Add(two, int32(1), int32(1), int64(0), uint8(0))                         // a record more than counted
	f.Add(patch(2, 0x02), int32(2), int32(1), int64(math.MaxInt64), uint8(0))  // the timestamp overflows
	f.Add(patch(2, 0x01), int32(2), int32(1), int64(math.MinInt64), uint8(0))  // ... downwards
	f.Add(patch(4, 0x03), int32(2), int32(1), int64(0), uint8(0))              // key length -2
	f.Add(patch(7, 0x05), int32(2), int32(1), int64(0), uint8(0))              // value length -3
	f.Add(patch(7, 0x08), int32(2), int32(1), int64(0), uint8(0))              // value past the record
	f.Add(patch(10, 0x02), int32(2), int32(1), int64(0), uint8(0))             // one header
	f.Add(patch(0, 0x0a), int32(2), int32(1), int64(0), uint8(0))              // a five-byte record
	f.Add(two, int32(2), int32(1), int64(0), uint8(1))                         // LogAppendTime
	f.Add(two, int32(2), int32(1), int64(0), uint8(2))                         // control
	f.Add([]byte{0x0c, 0, 0, 0, 1, 1, 0}, int32(1), int32(0), int64(math.MaxInt64), uint8(0))
	f.Fuzz(func(t *testing.T, records []byte, count, lastOffsetDelta int32, baseTs int64, flags uint8) {
		h := BatchHeader{
			BaseOffset:      100,
			LastOffsetDelta: lastOffsetDelta,
			BaseTimestamp:   baseTs,
			MaxTimestamp:    baseTs + 7,
			RecordCount:     count,
		}
		if flags&1 != 0 {
			h.Attributes |= 1 << 3 // LogAppendTime
		}
		if flags&2 != 0 {
			h.Attributes |= 1 << 5 // control
		}
		b := Batch{BatchHeader: h, Raw: append(make([]byte, RecordsOffset), records...)}
		var fast, slow Iterator
		fast.Reset(&b)
		slow.Reset(&b)
		var rf, rs Record
		for i := 0; ; i++ {
			okf, oks := fast.Next(&rf), slow.next(&rs)
			if okf != oks {
				t.Fatalf("record %d: Next %v, next %v", i, okf, oks)
			}
			// After a false return for an error r's fields are
			// unspecified; at the end both keep the last record.
			if diff := cmp.Diff(rs, rf); (okf || fast.Err() == nil) && diff != "" {
				t.Fatalf("record %d (-next +Next):\n%s", i, diff)
			}
			if fast.pos != slow.pos || fast.read != slow.read || fast.prevDelta != slow.prevDelta {
				t.Fatalf("record %d: Next at %d (%d read, delta %d), next at %d (%d, %d)", i, fast.pos, fast.read, fast.prevDelta, slow.pos, slow.read, slow.prevDelta)
			}
			if !okf || i > len(records) {
				break
			}
		}
		// An error is final: Next reads nothing more after it.
		if fast.Err() != nil && fast.Next(&rf) {
			t.Fatalf("Next read a record after %v", fast.Err())
		}
		ef, es := fast.Err(), slow.Err()
		if (ef == nil) != (es == nil) || (ef != nil && ef.Error() != es.Error()) {
			t.Fatalf("Err: Next %v, next %v", ef, es)
		}
	})
}
