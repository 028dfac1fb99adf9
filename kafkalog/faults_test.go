package kafkalog_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// faultWorkload appends 60 batches with rolls and flushes, then closes. It
// returns the records acknowledged and the first error met.
func faultWorkload(t *testing.T, fsys vfs.FS) ([]testRecord, error) {
	c := &clock{ms: 1_000_000}
	l, err := kafkalog.Open(fsys, "logs/f-0", smallConfig(t, 1500), kafkalog.Options{Clock: c})
	if err != nil {
		return nil, err
	}
	var acked []testRecord
	var b record.Builder
	var firstErr error
	for i := 0; i < 60; i++ {
		batch, recs := buildBatch(t, &b, []compress.Codec{compress.None, compress.Zstd}[i%2], i*2, 2, c.ms)
		res, err := l.Append(batch, 0)
		c.ms += 3
		if err != nil {
			firstErr = err
			break
		}
		recs[0].offset, recs[1].offset = res.FirstOffset, res.FirstOffset+1
		acked = append(acked, recs...)
		if i%10 == 9 {
			if err := l.Flush(); err != nil {
				firstErr = err
				break
			}
		}
	}
	if firstErr != nil {
		// After a failure the log refuses writes until reopened.
		batch, _ := buildBatch(t, &b, compress.None, 999, 1, c.ms)
		if _, err := l.Append(batch, 0); !errors.Is(err, kafkalog.ErrFailed) && !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("append after a failure: %v, want ErrFailed", err)
		}
		l.Close()
		return acked, firstErr
	}
	return acked, l.Close()
}

// TestFaultInjection fails each mutating filesystem operation of the
// workload in turn — with EIO, ENOSPC and a short write — and checks that
// the error reaches the caller, that the log then refuses writes, and that
// reopening the same disk gives a log that opens and reads back every
// acknowledged record (E1-E4 of RELIABILITY.md).
func TestFaultInjection(t *testing.T) {
	// Count the workload's mutating operations.
	probe := vfs.WithFaults(vfs.NewMem(), nil)
	if _, err := faultWorkload(t, probe); err != nil {
		t.Fatal(err)
	}
	ops := probe.Count(0)
	var mutating int64
	for _, op := range probe.Log() {
		if op.Kind.Mutating() {
			mutating++
		}
	}
	_ = ops
	stride := int64(1)
	if testing.Short() {
		stride = 5
	}
	kinds := []struct {
		name string
		inj  func(vfs.Predicate) vfs.Injector
		want error
	}{
		{"EIO", vfs.EIO, syscall.EIO},
		{"ENOSPC", vfs.ENOSPC, syscall.ENOSPC},
		{"short-write", vfs.ShortWrite, vfs.ErrInjected},
	}
	cases := 0
	for _, kind := range kinds {
		for k := int64(0); k < mutating; k += stride {
			name := fmt.Sprintf("%s at mutating op %d", kind.name, k)
			mem := vfs.NewMem()
			ffs := vfs.WithFaults(mem, kind.inj(vfs.And(vfs.Mutating(), vfs.OnIndex(k))))
			acked, err := faultWorkload(t, ffs)
			if err == nil {
				// A short write only hits writes; other ops pass.
				if kind.name != "short-write" {
					t.Fatalf("%s: the workload succeeded", name)
				}
				continue
			}
			if !errors.Is(err, kind.want) && !errors.Is(err, vfs.ErrInjected) {
				t.Fatalf("%s: error %v does not carry the injected fault", name, err)
			}
			cases++
			l, err := kafkalog.Open(mem, "logs/f-0", smallConfig(t, 1500), kafkalog.Options{Clock: &clock{ms: 2_000_000}})
			if err != nil {
				t.Fatalf("%s: reopen: %v", name, err)
			}
			got := readAll(t, l)
			if len(got) < len(acked) {
				t.Fatalf("%s: %d records after reopening, %d were acknowledged", name, len(got), len(acked))
			}
			for i := range acked {
				if got[i] != acked[i] {
					t.Fatalf("%s: record %d = %+v, want %+v", name, i, got[i], acked[i])
				}
			}
			if err := l.Close(); err != nil {
				t.Fatalf("%s: close after reopen: %v", name, err)
			}
		}
	}
	t.Logf("%d mutating operations, %d injected failures checked", mutating, cases)
}
