package record_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/record"
)

// TestKeyValueLengths reads one record whose key and value lengths are
// encoded every way a varint can be: one byte, two (also non-canonical
// two-byte forms of 0 and -1), three, null, invalid (below -1), longer
// than the record. Iterator.Next reads the one- and two-byte lengths that
// fit itself and leaves the rest to the general path: both must give
// what the length's varint says.
func TestKeyValueLengths(t *testing.T) {
	type field struct {
		name string
		enc  []byte // the length as it stands in the record
		n    int    // bytes that follow it
	}
	fields := []field{
		{"empty", []byte{0x00}, 0},
		{"null", []byte{0x01}, 0},
		{"minus2", []byte{0x03}, 0},
		{"one_byte_5", []byte{0x0a}, 5},
		{"one_byte_63", []byte{0x7e}, 63},
		{"two_bytes_64", []byte{0x80, 0x01}, 64},
		{"two_bytes_100", []byte{0xc8, 0x01}, 100},
		{"two_bytes_8191", []byte{0xfe, 0x7f}, 8191},
		{"two_bytes_noncanonical_0", []byte{0x80, 0x00}, 0},
		{"two_bytes_noncanonical_null", []byte{0x81, 0x00}, 0},
		{"two_bytes_negative", []byte{0xc9, 0x01}, 0},
		{"three_bytes_10000", []byte{0xa0, 0x9c, 0x01}, 10000},
		{"past_the_record", []byte{0x0a}, 3},
		{"two_bytes_past_the_record", []byte{0xc8, 0x01}, 99},
	}
	good := mustBatch(t, 1)
	for _, k := range fields {
		for _, v := range fields {
			t.Run(k.name+"/"+v.name, func(t *testing.T) {
				key, value := bytes.Repeat([]byte{'k'}, k.n), bytes.Repeat([]byte{'v'}, v.n)
				body := []byte{0, 0, 0} // attributes, timestampDelta, offsetDelta
				body = append(append(append(body, k.enc...), key...), append(v.enc, value...)...)
				body = append(body, 0) // no headers
				recs := format.AppendVarint(nil, int32(len(body)))
				recs = append(recs, body...)
				in := rewrite(append(good[:record.RecordsOffset:record.RecordsOffset], recs...), func(b []byte) {
					format.PutUint32(b[8:], uint32(len(b)-12)) // batchLength
				})
				b, _, err := record.ReadBatch(in)
				if err != nil {
					t.Fatal(err)
				}
				var it record.Iterator
				var r record.Record
				it.Reset(&b)
				ok := it.Next(&r)
				wk, wv, valid := refKeyValue(body[3:])
				if !valid {
					if ok {
						t.Fatalf("read key %s, value %s: want an error", show(r.Key), show(r.Value))
					}
					return
				}
				if !ok {
					t.Fatalf("error %v", it.Err())
				}
				if !bytes.Equal(r.Key, wk) || (r.Key == nil) != (wk == nil) || !bytes.Equal(r.Value, wv) || (r.Value == nil) != (wv == nil) {
					t.Fatalf("key %s, value %s; want %s, %s", show(r.Key), show(r.Value), show(wk), show(wv))
				}
				if cap(r.Key) != len(r.Key) || cap(r.Value) != len(r.Value) {
					t.Errorf("key cap %d len %d, value cap %d len %d: appending would overwrite the batch", cap(r.Key), len(r.Key), cap(r.Value), len(r.Value))
				}
			})
		}
	}
}

// refKeyValue reads a key, a value and a header count of 0 that must
// fill b, with format.Varint alone: the reference for Iterator.Next.
func refKeyValue(b []byte) (key, value []byte, ok bool) {
	field := func() ([]byte, bool) {
		l, n := format.Varint(b)
		if n <= 0 || l < -1 || int(l) > len(b)-n {
			return nil, false
		}
		b = b[n:]
		if l == -1 {
			return nil, true
		}
		v := b[:l]
		b = b[l:]
		return v, true
	}
	if key, ok = field(); !ok {
		return nil, nil, false
	}
	if value, ok = field(); !ok {
		return nil, nil, false
	}
	return key, value, len(b) == 1 && b[0] == 0
}

func show(b []byte) string {
	if b == nil {
		return "null"
	}
	return fmt.Sprintf("%d bytes", len(b))
}
