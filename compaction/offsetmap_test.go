package compaction_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/segkit/segkit/compaction"
)

func TestOffsetMapCapacity(t *testing.T) {
	for _, tt := range []struct {
		name            string
		memory          int64
		load            float64
		slots, capacity int
	}{
		{"kafka_default", compaction.DefaultDedupeBufferSize, 0, 5592405, 5033164},
		{"hundred_slots", 100 * 24, 0.9, 100, 90},
		{"not_a_multiple", 100*24 + 23, 0.5, 100, 50},
		{"two_slots", 48, 0.9, 2, 1},
		{"capped_at_2GiB", 1 << 40, 0.9, (1<<31 - 1) / 24, 80530636},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := compaction.NewOffsetMap(tt.memory, tt.load)
			if err != nil {
				t.Fatal(err)
			}
			if m.Slots() != tt.slots || m.Capacity() != tt.capacity {
				t.Fatalf("slots %d capacity %d, want %d %d", m.Slots(), m.Capacity(), tt.slots, tt.capacity)
			}
		})
	}
	for _, mem := range []int64{0, 23, 24} {
		if _, err := compaction.NewOffsetMap(mem, 0.9); !errors.Is(err, compaction.ErrMapTooSmall) {
			t.Errorf("memory %d: %v", mem, err)
		}
	}
}

func TestOffsetMap(t *testing.T) {
	m, err := compaction.NewOffsetMap(1<<20, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if m.Get([]byte("a")) != -1 || m.LatestOffset() != -1 {
		t.Fatal("an empty map knows something")
	}
	const n = 20000 // several table growths
	for i := range n {
		if err := m.Put(fmt.Appendf(nil, "key-%d", i%(n/2)), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if m.Size() != n/2 || m.LatestOffset() != n-1 {
		t.Fatalf("size %d latest %d", m.Size(), m.LatestOffset())
	}
	for i := range n / 2 {
		if got := m.Get(fmt.Appendf(nil, "key-%d", i)); got != int64(i+n/2) {
			t.Fatalf("key-%d: %d, want %d", i, got, i+n/2)
		}
	}
	if m.Get([]byte("absent")) != -1 {
		t.Fatal("absent key found")
	}
	if m.Get(nil) != -1 || m.Get([]byte{}) != -1 {
		t.Fatal("empty key found")
	}
	if u := m.Utilization(); u != float64(n/2)/float64(m.Slots()) {
		t.Fatalf("utilization %v", u)
	}
	m.UpdateLatestOffset(99999)
	if m.LatestOffset() != 99999 {
		t.Fatal("UpdateLatestOffset")
	}
	m.Clear()
	if m.Size() != 0 || m.Get([]byte("key-1")) != -1 || m.LatestOffset() != -1 {
		t.Fatal("Clear left something")
	}
	// A map filled to every slot refuses a new key, as Kafka's does.
	small, _ := compaction.NewOffsetMap(3*24, 0.9)
	for i := range 3 {
		if err := small.Put([]byte{byte(i)}, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if !small.Full() {
		t.Fatal("not full at 3 of 3 slots")
	}
	if err := small.Put([]byte{9}, 9); err == nil {
		t.Fatal("a fourth key in three slots")
	}
	if err := small.Put([]byte{1}, 10); err != nil || small.Get([]byte{1}) != 10 {
		t.Fatalf("overwriting a key of a full map: %v", err)
	}
}

// TestOffsetMapMatchesReference puts and gets random keys and offsets —
// growing the table, offsets far from the first one (the wide layout),
// below it, Clear — and checks every answer against a Go map.
func TestOffsetMapMatchesReference(t *testing.T) {
	for _, tt := range []struct {
		name   string
		memory int64
		keys   int
		jump   func(rng *rand.Rand, off int64) int64
	}{
		{"narrow", 8 << 20, 100000, func(rng *rand.Rand, off int64) int64 { return off + 1 + rng.Int64N(3) }},
		{"wide_later", 8 << 20, 60000, func(rng *rand.Rand, off int64) int64 {
			if rng.IntN(50000) == 0 {
				return off + 1<<33
			}
			return off + 1
		}},
		{"below_base", 4 << 20, 30000, func(rng *rand.Rand, off int64) int64 {
			if rng.IntN(20000) == 0 {
				return off - 1<<20
			}
			return off + 1
		}},
		{"extremes", 1 << 20, 5000, func(rng *rand.Rand, off int64) int64 {
			return []int64{0, 1, math.MaxInt64 - 1, math.MinInt64, -1, off + 1}[rng.IntN(6)]
		}},
		{"small_budget", 200 * 24, 300, func(rng *rand.Rand, off int64) int64 { return off + 1 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(len(tt.name))))
			m, err := compaction.NewOffsetMap(tt.memory, 0.9)
			if err != nil {
				t.Fatal(err)
			}
			ref := map[string]int64{}
			check := func() {
				t.Helper()
				if m.Size() != len(ref) {
					t.Fatalf("size %d, want %d", m.Size(), len(ref))
				}
				for k, v := range ref {
					if got := m.Get([]byte(k)); got != v {
						t.Fatalf("%q: %d, want %d", k, got, v)
					}
				}
				if m.Get([]byte("never put")) != -1 {
					t.Fatal("a key never put is found")
				}
				if b := m.TableBytes(); b > int64(m.Slots())*compaction.BytesPerEntry || tt.name == "narrow" && b > int64(m.Slots())*20 {
					t.Fatalf("table of %d bytes, budget %d", b, int64(m.Slots())*compaction.BytesPerEntry)
				}
			}
			off := int64(1000)
			for round := range 3 {
				for range 3 * tt.keys {
					k := fmt.Sprintf("k%d", rng.IntN(tt.keys))
					off = tt.jump(rng, off)
					if off == math.MaxInt64 {
						off = 0
					}
					_, had := ref[k]
					if !had && m.Full() {
						continue
					}
					if err := m.Put([]byte(k), off); err != nil {
						t.Fatal(err)
					}
					ref[k] = off
					if m.LatestOffset() != off {
						t.Fatalf("latest %d, want %d", m.LatestOffset(), off)
					}
				}
				check()
				if round < 2 {
					m.Clear()
					clear(ref)
					check()
				}
			}
		})
	}
}

// TestOffsetMapTableSize checks the table's memory: a few keys take a
// small table, and a full map at most 20 bytes a slot while the offsets
// are close.
func TestOffsetMapTableSize(t *testing.T) {
	m, _ := compaction.NewOffsetMap(compaction.DefaultDedupeBufferSize, 0.9)
	for i := range 1000 {
		m.Put(fmt.Appendf(nil, "key-%d", i), int64(i))
	}
	if b := m.TableBytes(); b > 4096*20 {
		t.Fatalf("1000 keys take %d bytes", b)
	}
	m, _ = compaction.NewOffsetMap(100000*24, 0.9)
	for i := range m.Capacity() {
		m.Put(fmt.Appendf(nil, "key-%d", i), int64(i))
	}
	if b, max := m.TableBytes(), int64(m.Slots())*20; b > max {
		t.Fatalf("a full map of %d slots takes %d bytes, more than %d", m.Slots(), b, max)
	}
}

// TestOffsetMapGrowsInPlace checks that growing reuses the old table's
// chunks: filling a map to its slots allocates little more than its final
// table, not the sum of every table it grew through.
func TestOffsetMapGrowsInPlace(t *testing.T) {
	keys := make([][]byte, 900000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key-%d", i)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m, _ := compaction.NewOffsetMap(1000000*24, 0.9)
	for i, k := range keys {
		if err := m.Put(k, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	alloc, table := after.TotalAlloc-before.TotalAlloc, m.TableBytes()
	t.Logf("%d keys: a table of %d bytes, %d bytes allocated", len(keys), table, alloc)
	if table > 1000000*20 || float64(alloc) > 1.15*float64(table) {
		t.Fatalf("a table of %d bytes took %d bytes of allocations", table, alloc)
	}
}

var sink int64

func TestOffsetMapAllocs(t *testing.T) {
	m, _ := compaction.NewOffsetMap(1<<20, 0.9)
	key := []byte("some-key")
	m.Put(key, 1)
	if a := testing.AllocsPerRun(100, func() {
		m.Put(key, 2)
		sink += m.Get(key)
	}); a != 0 {
		t.Fatalf("%v allocations per Put+Get", a)
	}
}

func BenchmarkOffsetMap(b *testing.B) {
	m, _ := compaction.NewOffsetMap(compaction.DefaultDedupeBufferSize, 0.9)
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "user-%08d", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := keys[i&(len(keys)-1)]
		m.Put(k, int64(i))
		sink += m.Get(k)
		i++
	}
}
