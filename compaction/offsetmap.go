package compaction

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
)

// The offset map's cost of one key (SkimpyOffsetMap.bytesPerEntry with
// MD5): its 16-byte hash and an 8-byte offset.
//
// These constants are Kafka's and should not be changed.
const (
	hashSize      = md5.Size
	BytesPerEntry = hashSize + 8 // 24
)

// OffsetMap is the cleaner's key → latest offset map, with Kafka's
// SkimpyOffsetMap semantics: a key is known by the MD5 hash of its bytes
// (two keys with the same hash are one key, as in Kafka), the map has
// room for memory/24 slots, and the cleaner stops adding keys once
// Size reaches Slots × load factor (see Capacity). Get returns -1 for an
// unknown key.
//
// Unlike SkimpyOffsetMap it does not allocate its whole budget up front:
// the table grows with the keys put in it, up to the budget. Where a key
// sits in the table differs from Kafka's probe sequence, which no answer
// depends on.
//
// An OffsetMap is not safe for concurrent use.
type OffsetMap struct {
	slots   int
	maxKeys int
	table   []mapSlot // len is the current capacity, at most slots
	entries int
	latest  int64
}

// mapSlot is one key: its hash and its offset + 1 (0 marks a free slot).
type mapSlot struct {
	hash [hashSize]byte
	off1 int64
}

// NewOffsetMap returns a map with memory bytes of budget and the given
// load factor (0 means DefaultLoadFactor). It fails, as Kafka's Cleaner
// constructor asserts, when the map cannot hold a single key.
func NewOffsetMap(memory int64, loadFactor float64) (*OffsetMap, error) {
	if loadFactor <= 0 {
		loadFactor = DefaultLoadFactor
	}
	if memory > 1<<31-1 {
		memory = 1<<31 - 1 // Kafka caps a cleaner thread's map at 2 GiB
	}
	slots := int(memory / BytesPerEntry)
	maxKeys := int(float64(slots) * loadFactor)
	if float64(slots)*loadFactor <= 1 {
		return nil, fmt.Errorf("%w: a dedupe buffer of %d bytes (%d slots at load factor %g) cannot hold a single key; raise log.cleaner.dedupe.buffer.size",
			ErrMapTooSmall, memory, slots, loadFactor)
	}
	return &OffsetMap{slots: slots, maxKeys: maxKeys, latest: -1}, nil
}

// Slots is the number of keys the budget has room for (memory / 24).
func (m *OffsetMap) Slots() int { return m.slots }

// Capacity is the number of distinct keys the cleaner puts in the map
// before it stops: (int)(Slots × load factor), Kafka's maxDesiredMapSize.
func (m *OffsetMap) Capacity() int { return m.maxKeys }

// Size is the number of distinct keys in the map.
func (m *OffsetMap) Size() int { return m.entries }

// Full reports whether Size has reached Capacity.
func (m *OffsetMap) Full() bool { return m.entries >= m.maxKeys }

// LatestOffset is the last offset put, or set by UpdateLatestOffset; -1
// for a cleared map.
func (m *OffsetMap) LatestOffset() int64 { return m.latest }

// UpdateLatestOffset sets LatestOffset.
func (m *OffsetMap) UpdateLatestOffset(offset int64) { m.latest = offset }

// Utilization is Size / Slots, Kafka's buffer utilization.
func (m *OffsetMap) Utilization() float64 { return float64(m.entries) / float64(m.slots) }

// Clear empties the map (keeping its table) and resets LatestOffset to -1.
func (m *OffsetMap) Clear() {
	clear(m.table)
	m.entries = 0
	m.latest = -1
}

// Put records offset as key's latest offset and makes it LatestOffset.
// A new key beyond Slots is an error, as in Kafka; the cleaner stops at
// Capacity, well before.
func (m *OffsetMap) Put(key []byte, offset int64) error {
	return m.putHash(md5.Sum(key), offset)
}

func (m *OffsetMap) putHash(h [hashSize]byte, offset int64) error {
	if m.table == nil || (m.entries+1)*4 > len(m.table)*3 && len(m.table) < m.slots {
		m.grow()
	}
	i := m.find(&h)
	if i < 0 || m.table[i].off1 == 0 && m.entries >= m.slots {
		return fmt.Errorf("compaction: attempted to add a new entry to a full offset map, entries: %d, slots: %d", m.entries, m.slots)
	}
	s := &m.table[i]
	if s.off1 == 0 {
		s.hash = h
		m.entries++
	}
	s.off1 = offset + 1
	m.latest = offset
	return nil
}

// Get returns key's offset, or -1 if the map does not hold it.
func (m *OffsetMap) Get(key []byte) int64 {
	return m.getHash(md5.Sum(key))
}

func (m *OffsetMap) getHash(h [hashSize]byte) int64 {
	if m.entries == 0 {
		return -1
	}
	i := m.find(&h)
	if i < 0 {
		return -1
	}
	return m.table[i].off1 - 1 // -1 for a free slot
}

// find returns the slot holding h, or the free slot where it would go,
// or -1 when every slot holds another key.
func (m *OffsetMap) find(h *[hashSize]byte) int {
	n := uint64(len(m.table))
	i := binary.BigEndian.Uint64(h[:8]) % n
	for range n {
		s := &m.table[i]
		if s.off1 == 0 || s.hash == *h {
			return int(i)
		}
		if i++; i == n {
			i = 0
		}
	}
	return -1
}

// grow doubles the table (from 4096 slots), never past Slots.
func (m *OffsetMap) grow() {
	n := max(2*len(m.table), 4096)
	n = min(n, m.slots)
	if n <= len(m.table) {
		return
	}
	old := m.table
	m.table = make([]mapSlot, n)
	for i := range old {
		if old[i].off1 != 0 {
			m.table[m.find(&old[i].hash)] = old[i]
		}
	}
}
