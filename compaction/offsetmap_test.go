package compaction_test

import (
	"errors"
	"fmt"
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
