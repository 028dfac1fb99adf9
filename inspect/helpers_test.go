package inspect_test

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// t0 is the time of the test partitions: records are stamped from it, the
// Mem's files are written at it, and Verify judges at it.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// clock is a settable segment.Clock.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

// fixture is a partition directory in a Mem.
type fixture struct {
	fs    *vfs.Mem
	dir   string
	clock *clock
	cfg   kafkalog.Config
	l     *kafkalog.Log
}

// newFixture opens /logs/t-0 on a new Mem with the given topic settings
// (segment.bytes may be small).
func newFixture(t testing.TB, props map[string]string) *fixture {
	t.Helper()
	c := &clock{t: t0}
	f := &fixture{fs: vfs.MemOptions{Clock: func() time.Time { return c.t }}.New(), dir: "/logs/t-0", clock: c}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(props)
	if err != nil {
		t.Fatal(err)
	}
	f.cfg = cfg
	f.open(t)
	return f
}

func (f *fixture) open(t testing.TB) {
	t.Helper()
	l, err := kafkalog.Open(f.fs, f.dir, f.cfg, kafkalog.Options{Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	f.l = l
}

// add appends n batches of k records each, 100-byte values, stamped one
// ms apart from the clock, with leader epoch epoch.
func (f *fixture) add(t testing.TB, n, k int, codec compress.Codec, epoch int32) {
	t.Helper()
	var w record.Builder
	for i := 0; i < n; i++ {
		recs := make([]record.Record, k)
		for j := range recs {
			recs[j] = record.Record{Timestamp: f.clock.t.UnixMilli(), Key: []byte(fmt.Sprintf("k%d", j)), Value: bytes.Repeat([]byte{byte('a' + j%26)}, 100)}
			f.clock.t = f.clock.t.Add(time.Millisecond)
		}
		spec := record.NewBatchSpec(0, codec)
		b, err := w.AppendBatch(nil, &spec, recs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.l.Append(b, epoch); err != nil {
			t.Fatal(err)
		}
	}
}

// close closes the log (trimming indexes, writing the snapshot, the
// checkpoints and the clean-shutdown marker).
func (f *fixture) close(t testing.TB) {
	t.Helper()
	if err := f.l.Close(); err != nil {
		t.Fatal(err)
	}
	f.l = nil
}

// verify runs Verify on the fixture's directory at the clock's time, and
// checks that the Mem as a whole gives the same report verified one
// partition at a time and concurrently (sameParallel).
func (f *fixture) verify(t testing.TB) inspect.Report {
	t.Helper()
	rep, err := inspect.Verify(f.fs, f.dir, inspect.Options{Now: f.clock.t.UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	sameParallel(t, f.fs, "/", inspect.Options{Now: f.clock.t.UnixMilli()})
	return rep
}

func (f *fixture) path(name string) string { return path.Join(f.dir, name) }

func (f *fixture) read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := vfs.ReadFile(f.fs, f.path(name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fixture) write(t testing.TB, name string, b []byte) {
	t.Helper()
	if err := vfs.WriteFile(f.fs, name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// edit rewrites a file of the partition with fn.
// logs returns the names of the partition's .log files, in order.
func (f *fixture) logs(t testing.TB) []string {
	t.Helper()
	infos, err := vfs.ReadDir(f.fs, f.dir)
	if err != nil {
		t.Fatal(err)
	}
	var logs []string
	for _, fi := range infos {
		if path.Ext(fi.Name()) == ".log" {
			logs = append(logs, fi.Name())
		}
	}
	return logs
}

func (f *fixture) edit(t testing.TB, name string, fn func(b []byte) []byte) {
	t.Helper()
	f.write(t, f.path(name), fn(f.read(t, name)))
}

// batches returns the position and size of each batch of a .log.
func batches(t testing.TB, b []byte) (pos, size []int) {
	t.Helper()
	s := record.NewScanner(b, "", 0)
	for s.Next() {
		pos = append(pos, int(s.Entry().Position))
		size = append(size, s.Entry().Size())
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	return pos, size
}

// kinds returns "level kind" for each problem, for comparisons.
func kinds(rep inspect.Report) []string {
	var out []string
	for _, p := range rep.Problems {
		out = append(out, p.Level.String()+" "+p.Kind)
	}
	return out
}

// find returns the first problem of the kind, or fails.
func find(t testing.TB, rep inspect.Report, kind string) finding.Problem {
	t.Helper()
	for _, p := range rep.Problems {
		if p.Kind == kind {
			return p
		}
	}
	t.Fatalf("no %s problem in:\n%s", kind, dump(rep))
	return finding.Problem{}
}

func dump(rep inspect.Report) string {
	var b strings.Builder
	for _, p := range rep.Problems {
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	return b.String()
}
