package tier_test

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

type clock struct{ ms atomic.Int64 }

func newClock(ms int64) *clock {
	c := &clock{}
	c.ms.Store(ms)
	return c
}
func (c *clock) Now() time.Time     { return time.UnixMilli(c.ms.Load()) }
func (c *clock) advance(ms int64)   { c.ms.Add(ms) }
func (c *clock) millis() int64      { return c.ms.Load() }
func (c *clock) set(ms int64) int64 { c.ms.Store(ms); return ms }

const (
	logDir    = "logs/orders-0"
	remoteDir = "remote"
	t0        = int64(1_700_000_000_000)
)

var testTopicID = topicUUID

// tieredConfig: small segments, remote storage on, and props on top.
func tieredConfig(t testing.TB, segmentBytes int, props map[string]string) kafkalog.Config {
	t.Helper()
	p := map[string]string{
		"segment.bytes":         fmt.Sprint(segmentBytes),
		"index.interval.bytes":  "256",
		"segment.index.bytes":   "4096",
		"remote.storage.enable": "true",
	}
	for k, v := range props {
		p[k] = v
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// value is record i's value: 100 bytes that name the offset.
func value(i int64) []byte {
	v := make([]byte, 100)
	copy(v, fmt.Sprintf("value-%d-", i))
	return v
}

// fill creates a log with n records, one batch of 1-3 records each,
// timestamps one second apart from the clock's time, and partition.metadata.
func fill(t testing.TB, fsys vfs.FS, cfg kafkalog.Config, c *clock, n int64) {
	t.Helper()
	l, err := kafkalog.Open(fsys, logDir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.WritePartitionMetadata(fsys, logDir, testTopicID); err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	for next := l.LogEndOffset(); next < n; {
		k := min(int64(1+rng.IntN(3)), n-next)
		recs := make([]record.Record, k)
		for j := range recs {
			recs[j] = record.Record{Timestamp: c.millis(), Key: []byte("k"), Value: value(next + int64(j))}
		}
		spec := record.NewBatchSpec(0, compress.None)
		b, err := w.AppendBatch(nil, &spec, recs)
		if err != nil {
			t.Fatal(err)
		}
		epoch := int32(0)
		if next >= n/2 {
			epoch = 3 // a second leader epoch half way
		}
		if _, err := l.Append(b, epoch); err != nil {
			t.Fatal(err)
		}
		next += k
		c.advance(1000)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// collect reads every record from the tier's log start offset to the log
// end, through Tier.Read, and checks each is served once, in order,
// with its value. It returns how many came from the remote.
func collect(t testing.TB, tr *tier.Tier, maxBytes int) (total, remote int64, err error) {
	start, end := tr.LogStartOffset(), tr.Log().LogEndOffset()
	next := start
	var s record.Scanner
	var it record.EntryIterator
	var r record.Record
	for next < end {
		res, err := tr.Read(next, maxBytes)
		if err != nil {
			return total, remote, fmt.Errorf("read at %d: %w", next, err)
		}
		if len(res.Records) == 0 {
			return total, remote, fmt.Errorf("read at %d (log %d..%d, local from %d): nothing", next, start, end, res.LocalLogStartOffset)
		}
		s.Reset(res.Records, "", 0)
		progressed := false
		for s.Next() {
			e := s.Entry()
			it.Reset(e)
			for it.Next(&r) {
				if r.Offset < next {
					continue
				}
				if r.Offset != next {
					return total, remote, fmt.Errorf("offset %d served after %d (a record lost)", r.Offset, next-1)
				}
				if !bytes.Equal(r.Value, value(r.Offset)) {
					return total, remote, fmt.Errorf("offset %d: value %q", r.Offset, r.Value[:16])
				}
				next++
				total++
				if res.Remote {
					remote++
				}
				progressed = true
			}
			if err := it.Err(); err != nil {
				return total, remote, err
			}
		}
		if err := s.Err(); err != nil {
			return total, remote, err
		}
		if !progressed {
			return total, remote, fmt.Errorf("read at %d made no progress", next)
		}
	}
	return total, remote, nil
}

func mustOpen(t testing.TB, fsys vfs.FS, cfg kafkalog.Config, c *clock) (*kafkalog.Log, *tier.Tier, tier.StartReport) {
	t.Helper()
	l, err := kafkalog.Open(fsys, logDir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	tr, rep, err := tier.Open(fsys, l, tier.NewDir(fsys, remoteDir), tier.Options{Clock: c})
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	return l, tr, rep
}

func isCrash(err error) bool { return errors.Is(err, vfs.ErrCrashed) }
