package checkpoint

import (
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/vfs"
)

func cacheOf(t *testing.T, entries ...EpochEntry) *LeaderEpochCache {
	t.Helper()
	c := NewLeaderEpochCache()
	for _, e := range entries {
		if _, err := c.Assign(e.Epoch, e.StartOffset); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestAssign(t *testing.T) {
	tests := []struct {
		name    string
		start   []EpochEntry
		assign  EpochEntry
		changed bool
		want    []EpochEntry
	}{
		{"first", nil, EpochEntry{2, 10}, true, []EpochEntry{{2, 10}}},
		{"newer", []EpochEntry{{2, 10}}, EpochEntry{3, 20}, true, []EpochEntry{{2, 10}, {3, 20}}},
		{"same_epoch_later_offset_ignored", []EpochEntry{{2, 10}}, EpochEntry{2, 15}, false, []EpochEntry{{2, 10}}},
		{"same_entry_ignored", []EpochEntry{{2, 10}}, EpochEntry{2, 10}, false, []EpochEntry{{2, 10}}},
		{"same_epoch_earlier_offset_replaces", []EpochEntry{{1, 5}, {2, 10}}, EpochEntry{2, 7}, true, []EpochEntry{{1, 5}, {2, 7}}},
		// An epoch whose start offset is not above the latest's removes
		// the entries it contradicts.
		{"newer_epoch_same_offset", []EpochEntry{{1, 5}, {2, 10}}, EpochEntry{3, 10}, true, []EpochEntry{{1, 5}, {3, 10}}},
		{"newer_epoch_lower_offset", []EpochEntry{{1, 5}, {2, 10}, {3, 20}}, EpochEntry{4, 8}, true, []EpochEntry{{1, 5}, {4, 8}}},
		// An older epoch is not ignored: it truncates the newer ones.
		{"older_epoch", []EpochEntry{{1, 5}, {2, 10}, {3, 20}}, EpochEntry{2, 15}, true, []EpochEntry{{1, 5}, {2, 15}}},
		{"older_epoch_lowest_offset", []EpochEntry{{1, 5}, {2, 10}}, EpochEntry{0, 0}, true, []EpochEntry{{0, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cacheOf(t, tt.start...)
			changed, err := c.Assign(tt.assign.Epoch, tt.assign.StartOffset)
			if err != nil || changed != tt.changed {
				t.Errorf("Assign(%v) = %v, %v; want %v", tt.assign, changed, err, tt.changed)
			}
			if got := c.Entries(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("entries %v, want %v", got, tt.want)
			}
		})
	}
	c := cacheOf(t, EpochEntry{1, 5})
	for _, e := range []EpochEntry{{-1, 5}, {1, -1}} {
		_, err := c.Assign(e.Epoch, e.StartOffset)
		if !errors.Is(err, ErrInvalidEpochEntry) || err.Error() != "checkpoint: invalid leader epoch entry: Received invalid partition leader epoch entry "+e.String() {
			t.Errorf("Assign(%v) = %v", e, err)
		}
	}
	if got := c.Entries(); !reflect.DeepEqual(got, []EpochEntry{{1, 5}}) {
		t.Errorf("a rejected Assign changed the cache: %v", got)
	}
}

func TestEndOffsetFor(t *testing.T) {
	c := cacheOf(t, EpochEntry{2, 10}, EpochEntry{4, 20}, EpochEntry{6, 30})
	const leo = 40
	tests := []struct {
		requested int32
		epoch     int32
		offset    int64
	}{
		{UndefinedEpoch, UndefinedEpoch, UndefinedEpochOffset},
		{6, 6, leo}, // latest: the log end
		{4, 4, 30},  // an epoch with a successor
		{5, 4, 30},  // between epochs: the floor epoch, the next start
		{3, 2, 20},  // idem
		{1, 1, 10},  // below every epoch: requested, first start
		{0, 0, 10},  // idem
		{7, UndefinedEpoch, UndefinedEpochOffset}, // above the latest
	}
	for _, tt := range tests {
		e, o := c.EndOffsetFor(tt.requested, leo)
		if e != tt.epoch || o != tt.offset {
			t.Errorf("EndOffsetFor(%d) = (%d, %d), want (%d, %d)", tt.requested, e, o, tt.epoch, tt.offset)
		}
	}
	if e, o := NewLeaderEpochCache().EndOffsetFor(0, leo); e != UndefinedEpoch || o != UndefinedEpochOffset {
		t.Errorf("empty cache: (%d, %d)", e, o)
	}
}

func TestEpochForOffset(t *testing.T) {
	c := cacheOf(t, EpochEntry{2, 10}, EpochEntry{4, 20})
	for off, want := range map[int64]int32{10: 2, 15: 2, 19: 2, 20: 4, 1000: 4} {
		if e, ok := c.EpochForOffset(off); !ok || e != want {
			t.Errorf("EpochForOffset(%d) = %d, %v; want %d", off, e, ok, want)
		}
	}
	if _, ok := c.EpochForOffset(9); ok {
		t.Error("EpochForOffset below the first epoch found one")
	}
}

func TestTruncate(t *testing.T) {
	base := []EpochEntry{{2, 6}, {3, 8}, {4, 11}}
	tests := []struct {
		name    string
		end     bool
		offset  int64
		want    []EpochEntry
		removed []EpochEntry
	}{
		{"end_middle", true, 8, []EpochEntry{{2, 6}}, []EpochEntry{{3, 8}, {4, 11}}},
		{"end_inside_last", true, 9, []EpochEntry{{2, 6}, {3, 8}}, []EpochEntry{{4, 11}}},
		{"end_after", true, 12, base, nil},
		{"end_all", true, 0, nil, base},
		{"end_negative", true, -1, base, nil},
		// truncateFromStart(6) keeps an entry at 6 (exclusive).
		{"start_at_first", false, 6, base, []EpochEntry{{2, 6}}},
		{"start_inside_first", false, 7, []EpochEntry{{2, 7}, {3, 8}, {4, 11}}, []EpochEntry{{2, 6}}},
		{"start_at_second", false, 8, []EpochEntry{{3, 8}, {4, 11}}, []EpochEntry{{2, 6}, {3, 8}}},
		{"start_past_all", false, 20, []EpochEntry{{4, 20}}, base},
		{"start_before", false, 5, base, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cacheOf(t, base...)
			var removed []EpochEntry
			if tt.end {
				removed = c.TruncateFromEnd(tt.offset)
			} else {
				removed = c.TruncateFromStart(tt.offset)
			}
			if got := c.Entries(); !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("entries %v, want %v", got, tt.want)
			}
			if !reflect.DeepEqual(removed, tt.removed) {
				t.Errorf("removed %v, want %v", removed, tt.removed)
			}
		})
	}
	c := cacheOf(t, base...)
	if got := c.EntriesInRange(7, 11); !reflect.DeepEqual(got, []EpochEntry{{2, 7}, {3, 8}}) {
		t.Errorf("EntriesInRange(7, 11) = %v", got)
	}
	if got := c.Entries(); !reflect.DeepEqual(got, base) {
		t.Errorf("EntriesInRange changed the cache: %v", got)
	}
	if e, ok := c.EarliestEntry(); !ok || e != base[0] {
		t.Errorf("EarliestEntry = %v %v", e, ok)
	}
	c.Clear()
	if _, ok := c.LatestEpoch(); ok || c.Len() != 0 {
		t.Error("Clear left entries")
	}
}

func TestLoadLeaderEpochCache(t *testing.T) {
	m := vfs.NewMem()
	c, err := LoadLeaderEpochCache(m, "missing")
	if err != nil || c == nil || c.Len() != 0 {
		t.Fatalf("missing file: %v, %v", c, err)
	}
	vfs.WriteFile(m, "empty", nil, 0o644) // as CheckpointFile's constructor creates it
	if c, err := LoadLeaderEpochCache(m, "empty"); err != nil || c.Len() != 0 {
		t.Errorf("empty file: %v, %v", c, err)
	}
	vfs.WriteFile(m, "ok", []byte("0\n3\n0 0\n2 1020\n5 6437\n"), 0o644)
	c, err = LoadLeaderEpochCache(m, "ok")
	if err != nil || !reflect.DeepEqual(c.Entries(), []EpochEntry{{0, 0}, {2, 1020}, {5, 6437}}) {
		t.Errorf("ok: %v, %v", c.Entries(), err)
	}
	// Non-monotonic files are repaired by the assign rules, as in Kafka.
	vfs.WriteFile(m, "nonmono", []byte("0\n2\n5 10\n3 20\n"), 0o644)
	if c, err := LoadLeaderEpochCache(m, "nonmono"); err != nil || !reflect.DeepEqual(c.Entries(), []EpochEntry{{3, 20}}) {
		t.Errorf("non-monotonic: %v, %v", c.Entries(), err)
	}
	// Corruption: typed, positioned, with an empty cache to rebuild.
	for name, tt := range map[string]struct {
		content string
		off     int64
		msg     string
	}{
		"torn":     {"0\n3\n0 0\n2 10", 2, "Expected [3] entries"},
		"negative": {"0\n2\n0 0\n-1 5\n", 8, "Received invalid partition leader epoch entry EpochEntry(epoch=-1, startOffset=5)"},
		"garbage":  {"\x00\x00\x00", 0, "Malformed line"},
	} {
		vfs.WriteFile(m, name, []byte(tt.content), 0o644)
		c, err := LoadLeaderEpochCache(m, name)
		wantCorrupt(t, err, tt.off, tt.msg)
		var ce *format.CorruptionError
		if errors.As(err, &ce) && ce.Path != name {
			t.Errorf("%s: path %q", name, ce.Path)
		}
		if c == nil || c.Len() != 0 {
			t.Errorf("%s: cache %v, want empty", name, c)
		}
	}
}

func TestFlush(t *testing.T) {
	m := vfs.NewMem()
	m.MkdirAll("p", 0o755)
	c := cacheOf(t, EpochEntry{0, 0}, EpochEntry{38, 4})
	if err := c.Flush(m, "p/"+LeaderEpochFile); err != nil {
		t.Fatal(err)
	}
	if b, _ := vfs.ReadFile(m, "p/"+LeaderEpochFile); string(b) != "0\n2\n0 0\n38 4\n" {
		t.Errorf("flushed %q", b)
	}
	// Concurrent use: assigns and flushes race; the file ends with the
	// final state.
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				c.Assign(int32(100+g*1000+i), int64(100+g*1000+i))
				c.LatestEpoch()
				c.EndOffsetFor(int32(i), 1<<40)
				if err := c.Flush(m, "p/"+LeaderEpochFile); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := c.Flush(m, "p/"+LeaderEpochFile); err != nil {
		t.Fatal(err)
	}
	got, err := LoadLeaderEpochCache(m, "p/"+LeaderEpochFile)
	if err != nil || !reflect.DeepEqual(got.Entries(), c.Entries()) {
		t.Errorf("reloaded %v, %v; want %v", got.Entries(), err, c.Entries())
	}
}
