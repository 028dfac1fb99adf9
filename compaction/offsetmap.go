package compaction

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// The offset map's cost of one key (SkimpyOffsetMap.bytesPerEntry with
// MD5): its 16-byte hash and an 8-byte offset.
//
// These constants are Kafka's and should not be changed.
const (
	hashSize      = md5.Size
	BytesPerEntry = hashSize + 8 // 24
)

// The table's layout. A slot is a key's hash and its offset, stored as
// offset − base + 1 in 4 bytes while every offset put is within 2^32−2 of
// the map's base (the first offset put; a clean's offsets are those of its
// dirty section), and in 8 bytes (offset − MinInt64 + 1) once one is not;
// 0 marks a free slot. Slots are held in chunks of chunkSlots, so that the
// table grows without holding two whole tables at once (see grow).
const (
	narrowSlot = hashSize + 4 // 20 bytes
	wideSlot   = hashSize + 8 // 24 bytes, BytesPerEntry

	chunkShift = 14
	chunkSlots = 1 << chunkShift
	chunkMask  = chunkSlots - 1

	minTableSlots = 4096
	// growLoad is the share of the table's slots in use at which it
	// doubles, until it reaches Slots; then it fills to the load factor.
	growLoad = 0.8
)

// OffsetMap is the cleaner's key → latest offset map, with Kafka's
// SkimpyOffsetMap semantics: a key is known by the MD5 hash of its bytes
// (two keys with the same hash are one key, as in Kafka), the map has
// room for memory/24 slots, and the cleaner stops adding keys once
// Size reaches Slots × load factor (see Capacity). Get returns -1 for an
// unknown key.
//
// Unlike SkimpyOffsetMap it does not allocate its whole budget up front,
// and it takes less of it: the table grows with the keys put in it, up to
// Slots slots of 20 bytes (24 once an offset is more than 2^32−2 from the
// first one put), so it never holds more than 5/6 of the budget while the
// offsets fit, the budget otherwise. Growing moves the keys a chunk at a
// time and reuses each chunk emptied, so the old and the new table are
// never whole together. Where a key sits in the table differs from
// Kafka's probe sequence, which no answer depends on.
//
// Offsets must be below math.MaxInt64. An OffsetMap is not safe for
// concurrent use.
type OffsetMap struct {
	slots   int
	maxKeys int
	entries int
	latest  int64

	n      int      // the table's slots, at most slots
	growAt int      // entries at which the table grows
	stride int      // narrowSlot or wideSlot
	chunks [][]byte // the table: n slots, chunkSlots a chunk (the last may be shorter)
	base   int64    // narrow offsets are stored relative to it
	based  bool     // base is set (by the first Put after a Clear)
	spare  [][]byte // chunks emptied while the table is rebuilt
	sink   uint32   // what prefetch read, where it reads
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
	return &OffsetMap{slots: slots, maxKeys: maxKeys, latest: -1, stride: narrowSlot}, nil
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

// TableBytes is the memory the map's table holds now: its slots (at most
// Slots of them) times their size.
func (m *OffsetMap) TableBytes() int64 {
	var n int64
	for _, c := range m.chunks {
		n += int64(cap(c))
	}
	return n
}

// Clear empties the map (keeping its table) and resets LatestOffset to -1.
func (m *OffsetMap) Clear() {
	for _, c := range m.chunks {
		clear(c)
	}
	m.entries = 0
	m.latest = -1
	m.based = false
}

// Put records offset as key's latest offset and makes it LatestOffset.
// A new key beyond Slots is an error, as in Kafka; the cleaner stops at
// Capacity, well before.
func (m *OffsetMap) Put(key []byte, offset int64) error {
	return m.putHash(hashKey(key), offset)
}

// Get returns key's offset, or -1 if the map does not hold it.
func (m *OffsetMap) Get(key []byte) int64 {
	return m.getHash(hashKey(key))
}

// keyHash is the MD5 hash of a key as two little-endian words: lo is
// bytes 0–7 of the digest, hi bytes 8–15.
type keyHash struct{ lo, hi uint64 }

// maxBlockKey is the longest key whose MD5 padding fits one block.
const maxBlockKey = md5.BlockSize - 9

// hashKey returns the MD5 hash of key.
func hashKey(key []byte) keyHash {
	d := md5.Sum(key)
	return keyHash{binary.LittleEndian.Uint64(d[:8]), binary.LittleEndian.Uint64(d[8:])}
}

// home is the slot where a probe for h starts: the hash's first word
// scaled to the table (Lemire's multiply-shift, no division).
func (m *OffsetMap) home(h keyHash) int {
	hi, _ := bits.Mul64(h.lo, uint64(m.n))
	return int(hi)
}

func (m *OffsetMap) putHash(h keyHash, offset int64) error {
	if offset == math.MaxInt64 {
		return fmt.Errorf("compaction: offset %d cannot be put in an offset map", offset)
	}
	if m.entries >= m.growAt {
		m.grow()
	}
	if !m.based {
		m.base, m.based = offset, true
	}
	v, ok := m.encode(offset)
	if !ok {
		m.rebuild(m.n, wideSlot)
		v, _ = m.encode(offset)
	}
	c, j, found := m.find(h)
	if !found {
		if c == nil || m.entries >= m.slots {
			return fmt.Errorf("compaction: attempted to add a new entry to a full offset map, entries: %d, slots: %d", m.entries, m.slots)
		}
		binary.LittleEndian.PutUint64(c[j:], h.lo)
		binary.LittleEndian.PutUint64(c[j+8:], h.hi)
		m.entries++
	}
	m.store(c[j:], v)
	m.latest = offset
	return nil
}

func (m *OffsetMap) getHash(h keyHash) int64 {
	if m.entries == 0 {
		return -1
	}
	c, j, found := m.find(h)
	if !found {
		return -1
	}
	return m.decode(m.load(c[j:]))
}

// prefetch asks for the slots where the probes for hs start to be brought
// into the cache, all together, so that the lookups that follow find
// them there: their cache misses overlap instead of following one
// another. Where the CPU has no prefetch hint (prefetch_other.go) it
// reads them instead.
func (m *OffsetMap) prefetch(hs []keyHash) {
	if m.n == 0 {
		return
	}
	var sum uint32
	for _, h := range hs {
		i := m.home(h)
		c := m.chunks[i>>chunkShift]
		j := (i & chunkMask) * m.stride
		// Both ends of the slot: it may straddle two cache lines.
		sum += prefetch(&c[j]) + prefetch(&c[j+m.stride-1])
	}
	m.sink += sum
}

// find returns the chunk and byte position of the slot holding h, or of
// the free slot where it would go (found false), or a nil chunk when every
// slot holds another key.
func (m *OffsetMap) find(h keyHash) (c []byte, j int, found bool) {
	if m.n == 0 {
		return nil, 0, false
	}
	le := binary.LittleEndian
	i := m.home(h)
	stride := m.stride
	for probed := 0; probed < m.n; {
		c = m.chunks[i>>chunkShift]
		j = (i & chunkMask) * stride
		if stride == narrowSlot {
			for ; j+narrowSlot <= len(c); j += narrowSlot {
				s := c[j : j+narrowSlot : j+narrowSlot]
				if le.Uint32(s[16:]) == 0 {
					return c, j, false
				}
				if le.Uint64(s) == h.lo && le.Uint64(s[8:]) == h.hi {
					return c, j, true
				}
				probed++
			}
		} else {
			for ; j+wideSlot <= len(c); j += wideSlot {
				s := c[j : j+wideSlot : j+wideSlot]
				if le.Uint64(s[16:]) == 0 {
					return c, j, false
				}
				if le.Uint64(s) == h.lo && le.Uint64(s[8:]) == h.hi {
					return c, j, true
				}
				probed++
			}
		}
		if i = (i | chunkMask) + 1; i >= m.n {
			i = 0
		}
	}
	return nil, 0, false
}

// encode is the stored form of offset in the current layout; false when
// the narrow layout cannot hold it.
func (m *OffsetMap) encode(offset int64) (uint64, bool) {
	if m.stride == wideSlot {
		return uint64(offset) ^ 1<<63 + 1, true
	}
	if offset < m.base || uint64(offset)-uint64(m.base) >= math.MaxUint32 {
		return 0, false
	}
	return uint64(offset) - uint64(m.base) + 1, true
}

func (m *OffsetMap) decode(v uint64) int64 {
	if m.stride == wideSlot {
		return int64((v - 1) ^ 1<<63)
	}
	return m.base + int64(v) - 1
}

// load and store read and write the offset of the slot s begins.
func (m *OffsetMap) load(s []byte) uint64 {
	if m.stride == wideSlot {
		return binary.LittleEndian.Uint64(s[16:])
	}
	return uint64(binary.LittleEndian.Uint32(s[16:]))
}

func (m *OffsetMap) store(s []byte, v uint64) {
	if m.stride == wideSlot {
		binary.LittleEndian.PutUint64(s[16:], v)
		return
	}
	binary.LittleEndian.PutUint32(s[16:], uint32(v))
}

// grow doubles the table (from 4096 slots), never past Slots; at Slots
// it no longer grows.
func (m *OffsetMap) grow() {
	n := min(max(2*m.n, minTableSlots), m.slots)
	if n <= m.n {
		m.growAt = math.MaxInt
		return
	}
	m.rebuild(n, m.stride)
}

// rebuild moves every key into a table of n slots of the given stride.
// The old table is read a chunk at a time, in order; each chunk emptied is
// reused for the new table when it has the new chunks' size, so that the
// two tables together never hold much more than the new one. A key's new
// home is proportional to its old one (both are its hash scaled to the
// table), so the keys of the old chunks read so far land in about as many
// new chunks, times the growth.
func (m *OffsetMap) rebuild(n, stride int) {
	old, oldStride, oldBase := m.chunks, m.stride, m.base
	m.chunks = make([][]byte, (n+chunkSlots-1)>>chunkShift)
	m.n, m.stride = n, stride
	m.growAt = math.MaxInt
	if n < m.slots {
		m.growAt = int(float64(n) * growLoad)
	}
	le := binary.LittleEndian
	for k, c := range old {
		for j := 0; j+oldStride <= len(c); j += oldStride {
			s := c[j : j+oldStride]
			var v uint64
			if oldStride == wideSlot {
				v = le.Uint64(s[16:])
			} else {
				v = uint64(le.Uint32(s[16:]))
			}
			if v == 0 {
				continue
			}
			if oldStride != stride { // narrow → wide
				v = uint64(oldBase+int64(v)-1) ^ 1<<63 + 1
			}
			m.place(keyHash{le.Uint64(s), le.Uint64(s[8:])}, v)
		}
		clear(c)
		old[k] = nil
		if len(c) == chunkSlots*stride {
			m.spare = append(m.spare, c)
		}
	}
	for k := range m.chunks {
		if m.chunks[k] == nil {
			m.chunks[k] = m.newChunk(k)
		}
	}
	m.spare = nil
}

// place puts a key known not to be in the table during a rebuild,
// allocating the chunks it reaches.
func (m *OffsetMap) place(h keyHash, v uint64) {
	le := binary.LittleEndian
	i := m.home(h)
	for {
		k := i >> chunkShift
		c := m.chunks[k]
		if c == nil {
			c = m.newChunk(k)
			m.chunks[k] = c
		}
		for j := (i & chunkMask) * m.stride; j+m.stride <= len(c); j += m.stride {
			s := c[j : j+m.stride]
			if m.load(s) == 0 {
				le.PutUint64(s, h.lo)
				le.PutUint64(s[8:], h.hi)
				m.store(s, v)
				return
			}
		}
		if i = (i | chunkMask) + 1; i >= m.n {
			i = 0
		}
	}
}

// newChunk returns a zeroed chunk for the k-th chunk of the table: a
// spare one if there is one and the chunk is whole (the last may be
// shorter, and is then made to its size, so that the table never holds
// more than its slots).
func (m *OffsetMap) newChunk(k int) []byte {
	size := min(chunkSlots, m.n-k*chunkSlots) * m.stride
	if l := len(m.spare); l > 0 && size == chunkSlots*m.stride {
		c := m.spare[l-1]
		m.spare = m.spare[:l-1]
		return c
	}
	return make([]byte, size)
}
