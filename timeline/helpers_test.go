package timeline

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segkit/segkit/vfs"
)

// partDir is the partition directory the tests use.
const partDir = "/kafka/orders-0"

// stepClock is a clock that advances step each time it is read, safe for
// concurrent use.
type stepClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func newClock() *stepClock {
	return &stepClock{now: time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC), step: time.Millisecond}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

// set moves the clock to t (it may go back).
func (c *stepClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// newPartition returns a Mem holding an empty, durable partition
// directory.
func newPartition(t testing.TB) *vfs.Mem {
	t.Helper()
	m := vfs.NewMem()
	if err := m.MkdirAll(partDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/", "/kafka", partDir} {
		if err := vfs.SyncDir(m, d); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func mustOpen(t testing.TB, fsys vfs.FS, opt Options) *Timeline {
	t.Helper()
	tl, err := Open(fsys, partDir, opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return tl
}

func mustInstants(t testing.TB, tl *Timeline, f Filter) []Instant {
	t.Helper()
	insts, err := tl.Instants(f)
	if err != nil {
		t.Fatalf("Instants: %v", err)
	}
	return insts
}

// rollPlan is a Roll plan numbered n.
func rollPlan(n int) *Roll {
	return &Roll{Reason: "segment.bytes", Closed: &SegmentRef{BaseOffset: int64(n) * 100, NextOffset: int64(n+1) * 100, Size: 1 << 20, LargestTimestamp: 1717000000000 + int64(n)}, NewBaseOffset: int64(n+1) * 100}
}

// runInstant runs one whole instant: Begin, Inflight, Complete.
func runInstant(t testing.TB, tl *Timeline, n int) Instant {
	t.Helper()
	x, err := tl.Begin(ActionRoll, rollPlan(n))
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	if err := x.Inflight(); err != nil {
		t.Fatalf("Inflight: %v", err)
	}
	if err := x.Complete(rollPlan(n)); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	return x.Instant()
}

// files lists the names of the regular files under dir (recursively,
// relative to dir), sorted.
func files(t testing.TB, fsys vfs.FS, dir string) []string {
	t.Helper()
	var out []string
	var walk func(rel string)
	walk = func(rel string) {
		infos, err := vfs.ReadDir(fsys, path.Join(dir, rel))
		if err != nil {
			if rel == "" && isNotExist(err) {
				return
			}
			t.Fatal(err)
		}
		for _, fi := range infos {
			if fi.IsDir() {
				walk(path.Join(rel, fi.Name()))
				continue
			}
			out = append(out, path.Join(rel, fi.Name()))
		}
	}
	walk("")
	slices.Sort(out)
	return out
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// encoded is the record line of an instant, to compare instants whole.
func encoded(t testing.TB, inst Instant) string {
	t.Helper()
	b, err := encodeInstant(&inst)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameInstants reports how two instant lists differ ("" if they do not).
func sameInstants(t testing.TB, got, want []Instant) string {
	t.Helper()
	var d []string
	for i := 0; i < max(len(got), len(want)) && len(d) < 5; i++ {
		switch {
		case i >= len(got):
			d = append(d, fmt.Sprintf("missing %s", want[i]))
		case i >= len(want):
			d = append(d, fmt.Sprintf("extra %s", got[i]))
		case encoded(t, got[i]) != encoded(t, want[i]):
			d = append(d, fmt.Sprintf("#%d: got %s, want %s", i, strings.TrimSpace(encoded(t, got[i])), strings.TrimSpace(encoded(t, want[i]))))
		}
	}
	return strings.Join(d, "\n")
}

// snapshot returns every file under dir with its bytes.
func snapshot(t testing.TB, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range files(t, fsys, dir) {
		b, err := vfs.ReadFile(fsys, path.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	return out
}

func sameSnapshot(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}
