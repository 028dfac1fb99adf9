package kafkalog_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// TestOneWriterManyReaders runs one appender (with rolls, flushes and a
// truncation) against four readers and two timestamp lookups at once.
// Run under -race (CI does), it checks the documented contract: a Log
// takes one writer and any number of concurrent readers. Every read must
// return only whole, valid batches whose records are ones the writer
// appended at those offsets.
func TestOneWriterManyReaders(t *testing.T) {
	fsys := vfs.NewMem()
	c := &clock{ms: 1_700_000_000_000}
	l, err := kafkalog.Open(fsys, "d/c-0", smallConfig(t, 3000), kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const batches = 300
	var published sync.Map // offset -> value
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			var it record.Iterator
			var rec record.Record
			dst := make([]byte, 0, 64<<10)
			for !done.Load() {
				start, end := l.LogStartOffset(), l.LogEndOffset()
				if end == start {
					continue
				}
				off := start + int64(r)*(end-start)/4
				res, err := l.Read(off, 8<<10, dst, kafkalog.ReadOptions{})
				if err != nil {
					if errors.Is(err, kafkalog.ErrOffsetOutOfRange) {
						continue // a truncation raced with us
					}
					errs <- err
					return
				}
				s := record.NewScanner(res.Records, "", 0)
				s.Validate = true
				for s.Next() {
					b := s.Entry().Batch
					it.Reset(&b)
					for it.Next(&rec) {
						if v, ok := published.Load(rec.Offset); ok && v.(string) != string(rec.Value) {
							errs <- errors.New("a reader saw a record that differs from the one appended")
							return
						}
					}
				}
				if s.Err() != nil {
					errs <- s.Err()
					return
				}
			}
		}(r)
	}
	target := c.ms + 700 // a timestamp the writer reaches part-way
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				if _, _, err := l.OffsetForTimestamp(target); err != nil {
					errs <- err
					return
				}
				l.Segments()
				l.HighWatermark()
			}
		}()
	}
	var b record.Builder
	for i := 0; i < batches; i++ {
		batch, recs := buildBatch(t, &b, []compress.Codec{compress.None, compress.Snappy}[i%2], i*3, 3, c.ms)
		res, err := l.Append(batch, 0)
		if err != nil {
			t.Fatal(err)
		}
		for j := range recs {
			published.Store(res.FirstOffset+int64(j), recs[j].value)
		}
		c.ms += 5
		if i%50 == 49 {
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if i == 200 {
			// Followers truncate: the readers must cope.
			if err := l.TruncateTo(res.FirstOffset - 30); err != nil {
				t.Fatal(err)
			}
			for off := res.FirstOffset - 30; off <= res.LastOffset; off++ {
				published.Delete(off)
			}
		}
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
