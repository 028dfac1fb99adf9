package record_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/record"
)

// scanResult is what a ReaderScanner found: each entry's position and
// size, how it stopped, and its tail.
type scanResult struct {
	Entries  [][2]int64
	Err      string
	ValidEnd int64
	Tail     [3]int64
}

// scanAll runs rs over in to the end.
func scanAll(rs *record.ReaderScanner, in []byte) scanResult {
	rs.Validate, rs.MaxDecompressed = true, fuzzLimit
	rs.Reset(bytes.NewReader(in), int64(len(in)), "seg.log", 0)
	defer rs.Close()
	var res scanResult
	for rs.Next() {
		e := rs.Entry()
		res.Entries = append(res.Entries, [2]int64{e.Position, int64(e.Size())})
	}
	if err := rs.Err(); err != nil {
		res.Err = err.Error()
	}
	res.ValidEnd = rs.ValidEnd()
	k, at, n := rs.Tail()
	res.Tail = [3]int64{int64(k), at, n}
	return res
}

// memMap is a ReaderScanner.Map over in: views are slices of it, and the
// failAt'th call (from 1; 0 never) and every later one fails. It counts
// the views not released.
type memMap struct {
	in     []byte
	failAt int
	calls  int
	live   int
}

func (m *memMap) Map(off int64, n int) ([]byte, func(), error) {
	m.calls++
	if m.failAt > 0 && m.calls >= m.failAt {
		return nil, nil, errors.New("no mapping")
	}
	if off < 0 || n <= 0 || off+int64(n) > int64(len(m.in)) {
		return nil, nil, fmt.Errorf("bytes %d+%d outside %d", off, n, len(m.in))
	}
	m.live++
	released := false
	return m.in[off : off+int64(n) : off+int64(n)], func() {
		if !released {
			released = true
			m.live--
		}
	}, nil
}

// checkMapped scans in with ReadAt and through a Map of views of chunk
// bytes, and fails unless both find the same.
func checkMapped(t *testing.T, in []byte, chunk, failAt int) {
	t.Helper()
	want := scanAll(&record.ReaderScanner{ChunkSize: chunk}, in)
	m := &memMap{in: in, failAt: failAt}
	got := scanAll(&record.ReaderScanner{ChunkSize: chunk, Map: m.Map}, in)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("chunk %d, Map failing at call %d: mapped scan differs (-read +mapped):\n%s", chunk, failAt, d)
	}
	if failAt == 0 && len(in) > 0 && m.calls == 0 {
		t.Fatalf("chunk %d: the mapped scan never called Map", chunk)
	}
	if m.live != 0 {
		t.Fatalf("chunk %d: %d views left after Close", chunk, m.live)
	}
}

// TestReaderScannerMap checks that a ReaderScanner reading through views
// (ReaderScanner.Map) finds what one reading with ReadAt finds, entry for
// entry, with the same error, valid end and tail, whatever the view size,
// including entries cut by a view's end and a Map that fails part way.
func TestReaderScannerMap(t *testing.T) {
	var clean []byte
	for i := 0; i < 20; i++ {
		clean = append(clean, mustBatch(t, 1+i%5)...)
	}
	corrupt := bytes.Clone(clean)
	corrupt[len(corrupt)/2] ^= 0x40
	for _, tt := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"clean", clean},
		{"torn_tail", clean[:len(clean)-7]},
		{"zero_tail", append(bytes.Clone(clean), make([]byte, 500)...)},
		{"corrupt", corrupt},
		{"zeros_then_batch", append(append(bytes.Clone(clean[:len(mustBatch(t, 1))]), make([]byte, 300)...), mustBatch(t, 2)...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, chunk := range []int{0, 1, 61, 97, 400, 4096} {
				for _, failAt := range []int{0, 1, 2, 5} {
					checkMapped(t, tt.in, chunk, failAt)
				}
			}
		})
	}
}

// FuzzReaderScannerMap checks ReaderScanner.Map against ReadAt over
// arbitrary bytes (see TestReaderScannerMap): the same entries, error,
// valid end and tail, and no view left after Close.
func FuzzReaderScannerMap(f *testing.F) {
	f.Add(mustBatch(f, 3), uint16(61), uint8(0))
	f.Add(append(mustBatch(f, 2), make([]byte, 100)...), uint16(97), uint8(3))
	f.Fuzz(func(t *testing.T, in []byte, chunk uint16, failAt uint8) {
		checkMapped(t, in, int(chunk), int(failAt%8))
	})
}
