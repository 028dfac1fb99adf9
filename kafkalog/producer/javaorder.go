package producer

import (
	"cmp"
	"slices"
)

// java.util.HashMap's sizing (HashMap.java).
const (
	javaInitialCapacity = 16
	javaTreeifyBin      = 8  // TREEIFY_THRESHOLD: a chain this long before an insert
	javaMinTreeify      = 64 // MIN_TREEIFY_CAPACITY: below it, resize instead
)

// javaOrder reproduces the iteration order of the
// java.util.HashMap<Long, ProducerStateEntry> that Kafka's
// ProducerStateManager writes snapshots from: by bucket, hash(id) &
// (capacity-1) with Long.hashCode spread as HashMap.hash does, and within
// a bucket by insertion order (a resize splits each chain preserving its
// order; a removal keeps the others' order; updating an existing key does
// not move it). The capacity starts at 16 on the first insert, doubles
// when the size exceeds 3/4 of it, or when a chain reaches 9 entries in a
// table smaller than 64, and never shrinks, not even on clear().
//
// Beyond that point (9 ids in one bucket of a table of 64 or more) Java
// turns the chain into a tree whose order this does not follow; treeified
// records that it happened.
type javaOrder struct {
	capacity  int
	next      uint64         // insertion counter
	buckets   map[uint32]int // chain lengths at the current capacity
	treeified bool
}

// javaHash is HashMap.hash(Long.valueOf(id)).
func javaHash(id int64) uint32 {
	h := uint32(uint64(id) ^ uint64(id)>>32)
	return h ^ h>>16
}

func (o *javaOrder) bucket(id int64) uint32 { return javaHash(id) & uint32(o.capacity-1) }

// insert records a new key id added to present (the keys before it) and
// returns its insertion sequence number.
func (o *javaOrder) insert(id int64, present map[int64]*producerEntry) uint64 {
	if o.capacity == 0 {
		o.capacity, o.buckets = javaInitialCapacity, map[uint32]int{}
	}
	b := o.bucket(id)
	chain := o.buckets[b]
	o.buckets[b] = chain + 1
	if chain >= javaTreeifyBin {
		if o.capacity < javaMinTreeify {
			o.resize(present, id)
		} else {
			o.treeified = true
		}
	}
	if len(present)+1 > o.capacity*3/4 {
		o.resize(present, id)
	}
	o.next++
	return o.next
}

// resize doubles the capacity and recounts the chains of present plus
// the key being added.
func (o *javaOrder) resize(present map[int64]*producerEntry, adding int64) {
	o.capacity *= 2
	clear(o.buckets)
	for id := range present {
		o.buckets[o.bucket(id)]++
	}
	if _, ok := present[adding]; !ok {
		o.buckets[o.bucket(adding)]++
	}
}

func (o *javaOrder) remove(id int64) {
	if o.capacity == 0 {
		return
	}
	if b := o.bucket(id); o.buckets[b] > 1 {
		o.buckets[b]--
	} else {
		delete(o.buckets, b)
	}
}

// clear forgets the keys but keeps the capacity, as HashMap.clear does.
func (o *javaOrder) clear() { clear(o.buckets) }

// sort puts es in iteration order.
func (o *javaOrder) sort(es []*producerEntry) {
	if o.capacity == 0 {
		return
	}
	slices.SortFunc(es, func(a, b *producerEntry) int {
		if c := cmp.Compare(o.bucket(a.id), o.bucket(b.id)); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
}
