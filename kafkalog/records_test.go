package kafkalog_test

import (
	"errors"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// TestRecords: Log.Records yields what the hand-written loop of readAll
// does, from any offset, across segments and codecs; a break stops it; an
// offset below the log start is an error, yielded once.
func TestRecords(t *testing.T) {
	c := &clock{ms: 1_000_000}
	fsys := vfs.NewMem()
	l := mustOpen(t, fsys, "/logs/t-0", smallConfig(t, 600), c)
	defer l.Close()
	var w record.Builder
	var want []testRecord
	for i, codec := range []compress.Codec{compress.None, compress.Gzip, compress.LZ4, compress.Zstd, compress.Snappy, compress.None} {
		b, recs := buildBatch(t, &w, codec, i*5, 5, c.ms+int64(i)*10)
		res, err := l.Append(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		for k := range recs {
			recs[k].offset = res.FirstOffset + int64(k)
		}
		want = append(want, recs...)
	}
	if len(l.Segments()) < 2 {
		t.Fatalf("%d segments: want a roll", len(l.Segments()))
	}
	for _, from := range []int64{0, 3, 12, 29, 30} {
		var got []testRecord
		for r, err := range l.Records(from) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, testRecord{r.Offset, r.Timestamp, string(r.Key), string(r.Value)})
		}
		equalRecords(t, got, want[from:])
	}
	n := 0
	for range l.Records(0) {
		if n++; n == 7 {
			break
		}
	}
	if n != 7 {
		t.Fatalf("the loop ran %d times after a break at 7", n)
	}
	if err := l.IncrementLogStartOffset(10); err != nil {
		t.Fatal(err)
	}
	errs := 0
	for r, err := range l.Records(0) {
		if r != nil || !errors.Is(err, kafkalog.ErrOffsetOutOfRange) {
			t.Fatalf("got %v, %v; want an out-of-range error", r, err)
		}
		errs++
	}
	if errs != 1 {
		t.Fatalf("%d errors yielded", errs)
	}
}
