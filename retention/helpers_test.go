package retention_test

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
)

// clock is a settable test clock.
type clock struct{ ms int64 }

func (c *clock) Now() time.Time { return time.UnixMilli(c.ms) }

// atomicClock is a settable test clock that other goroutines may read.
type atomicClock struct{ ms atomic.Int64 }

func (c *atomicClock) Now() time.Time { return time.UnixMilli(c.ms.Load()) }

// mustConfig parses topic properties (small segments allowed), with
// timestamps accepted however far in the past or future, so that tests can
// write what they need.
func mustConfig(t testing.TB, props map[string]string) kafkalog.Config {
	t.Helper()
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(props)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MessageTimestampAfterMaxMs = math.MaxInt64
	return cfg
}

// appendRecord appends one record with the given timestamp and value.
func appendRecord(t testing.TB, l *kafkalog.Log, w *record.Builder, ts int64, value string) kafkalog.AppendResult {
	t.Helper()
	spec := record.NewBatchSpec(0, compress.None)
	b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: ts, Value: []byte(value)}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.Append(b, 0)
	if err != nil {
		t.Fatalf("append %q at %d: %v", value, ts, err)
	}
	return res
}

// readRecord is one record read back.
type readRecord struct {
	Offset, Timestamp int64
	Value             string
}

// readAll reads every record from the log start offset to the log end.
func readAll(t testing.TB, l *kafkalog.Log) []readRecord {
	t.Helper()
	var out []readRecord
	off := l.LogStartOffset()
	var it record.Iterator
	var r record.Record
	for off < l.LogEndOffset() {
		res, err := l.Read(off, 1<<20, nil, kafkalog.ReadOptions{})
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		if len(res.Records) == 0 {
			t.Fatalf("Read(%d) returned nothing below the log end %d", off, l.LogEndOffset())
		}
		s := record.NewScanner(res.Records, "", 0)
		s.Validate = true
		for s.Next() {
			e := s.Entry()
			it.Reset(&e.Batch)
			for it.Next(&r) {
				if r.Offset >= off {
					out = append(out, readRecord{r.Offset, r.Timestamp, string(r.Value)})
				}
			}
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
			off = e.LastOffset() + 1
		}
		if s.Err() != nil {
			t.Fatalf("Read(%d): %v", off, s.Err())
		}
	}
	return out
}

// readOne reads the record at offset, or returns the read error.
func readOne(l *kafkalog.Log, offset int64) (readRecord, error) {
	res, err := l.Read(offset, 1<<20, nil, kafkalog.ReadOptions{})
	if err != nil {
		return readRecord{}, err
	}
	s := record.NewScanner(res.Records, "", 0)
	var it record.Iterator
	var r record.Record
	for s.Next() {
		e := s.Entry()
		it.Reset(&e.Batch)
		for it.Next(&r) {
			if r.Offset == offset {
				return readRecord{r.Offset, r.Timestamp, string(r.Value)}, nil
			}
		}
	}
	return readRecord{}, errors.New("offset not found in what Read returned")
}

// at formats a time relative to base as m:ss.mmm, for messages.
func at(ms, base int64) string {
	d := ms - base
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	return fmt.Sprintf("%s%d:%02d.%03d", sign, d/60000, d/1000%60, d%1000)
}

func bases(l *kafkalog.Log) []int64 {
	var out []int64
	for _, s := range l.Segments() {
		out = append(out, s.BaseOffset())
	}
	return out
}
