package vfs

import (
	"maps"
	"math/rand/v2"
)

// CrashConfig says how CrashClone loses what was not synced. The zero value
// keeps exactly the synced state.
type CrashConfig struct {
	// Seed seeds the random choices: the same Seed on the same state gives
	// the same clone.
	Seed uint64

	// UnsyncedDataPercent (0..100) is the chance that a piece of unsynced
	// state survives the crash. The pieces are: each file's unsynced data
	// as a whole, each 4 KiB block of it in block mode, and each pending
	// directory operation. 0 keeps only synced state; 100 keeps all of it
	// (torn, when TornWrites is set).
	UnsyncedDataPercent int

	// TornWrites lets a file's surviving unsynced data be kept partly: a
	// prefix cut at any byte, or a subset of its 4 KiB blocks with
	// zero-filled holes. Without it, a file's unsynced data survives whole
	// or not at all.
	TornWrites bool
}

// crashBlockSize is the unit of block-mode survival (RELIABILITY C1).
const crashBlockSize = 4096

// entryKey names a directory entry.
type entryKey struct {
	dir  *inode
	name string
}

// change sets the entry name of dir to n, or removes it when n is nil.
type change struct {
	dir  *inode
	name string
	n    *inode
}

// dirOp is one directory operation: a create or remove (one change) or a
// rename (two changes, applied together or not at all).
type dirOp struct {
	changes []change
	// deps are the pending operations this one must not survive without:
	// the previous pending operation on each entry it changes, and for a
	// directory rename the previous directory rename.
	deps   []*dirOp
	dirs   [2]*inode // the directories it changes; dirs[1] may be nil
	synced [2]bool   // whether dirs[i] was synced after this operation
	folded bool      // durable: applied to the synced maps
	mark   bool      // scratch: chosen to fold, or to survive a crash
}

func (op *dirOp) markSynced(d *inode) (complete bool) {
	for i, x := range op.dirs {
		if x == d {
			op.synced[i] = true
		}
	}
	return op.synced[0] && (op.dirs[1] == nil || op.synced[1])
}

// record notes a directory operation already applied to the current
// entries; Mem.mu must be held for writing.
func (m *Mem) record(dirMove bool, changes ...change) {
	op := &dirOp{changes: changes}
	for _, c := range changes {
		k := entryKey{c.dir, c.name}
		if prev := m.last[k]; prev != nil {
			op.deps = append(op.deps, prev)
		}
		m.last[k] = op
		if op.dirs[0] == nil {
			op.dirs[0] = c.dir
		} else if op.dirs[0] != c.dir {
			op.dirs[1] = c.dir
		}
	}
	for _, d := range op.dirs {
		if d != nil {
			d.ops = append(d.ops, op)
		}
	}
	if dirMove {
		if m.lastDirMove != nil {
			op.deps = append(op.deps, m.lastDirMove)
		}
		m.lastDirMove = op
	}
	m.pending = append(m.pending, op)
}

// syncDir makes durable every pending operation on d whose directories have
// now all been synced, with the operations they depend on; Mem.mu must be
// held for writing.
func (m *Mem) syncDir(d *inode) {
	var stack []*dirOp
	live := d.ops[:0]
	for _, op := range d.ops {
		if op.folded {
			continue
		}
		live = append(live, op)
		if op.markSynced(d) && !op.mark {
			op.mark = true
			stack = append(stack, op)
		}
	}
	clear(d.ops[len(live):])
	d.ops = live
	if len(stack) == 0 {
		return
	}
	for len(stack) > 0 {
		op := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, dep := range op.deps {
			if !dep.folded && !dep.mark {
				dep.mark = true
				stack = append(stack, dep)
			}
		}
	}
	// Fold in order: per entry, the marked operations are the oldest
	// pending ones, so the synced maps go through the same states the
	// current ones went through.
	for _, op := range m.pending {
		if op.folded || !op.mark {
			continue
		}
		for _, c := range op.changes {
			if c.n == nil {
				delete(c.dir.synced, c.name)
			} else {
				if c.dir.synced == nil {
					c.dir.synced = make(map[string]*inode)
				}
				c.dir.synced[c.name] = c.n
			}
			if k := (entryKey{c.dir, c.name}); m.last[k] == op {
				delete(m.last, k)
			}
		}
		if m.lastDirMove == op {
			m.lastDirMove = nil
		}
		op.folded, op.mark = true, false
		op.changes, op.deps = nil, nil // let removed inodes and old ops go
		m.nfolded++
	}
	if m.nfolded > len(m.pending)/2 {
		live := m.pending[:0]
		for _, op := range m.pending {
			if !op.folded {
				live = append(live, op)
			}
		}
		clear(m.pending[len(live):])
		m.pending, m.nfolded = live, 0
	}
}

// CrashClone returns a new Mem holding what a power cut at this moment could
// leave on disk, chosen at random (seeded by cfg.Seed) within the crash model
// stated in the package documentation: synced data and durable directory
// entries always survive; unsynced data, and creates, removes and renames not
// yet made durable by a directory Sync, survive according to cfg; a rename
// survives whole or not at all. Everything in the clone is synced. Open files
// of m stay bound to m.
func (m *Mem) CrashClone(cfg CrashConfig) *Mem {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := &crasher{
		rng:     rand.New(rand.NewPCG(cfg.Seed, 0x5e9c1a55c7a5)),
		cfg:     cfg,
		entries: make(map[*inode]map[string]*inode),
		clones:  make(map[*inode]*inode),
	}
	// Choose the surviving pending operations: each with the configured
	// chance, and only if everything it depends on survives too.
	for _, op := range m.pending {
		if op.folded {
			continue
		}
		op.mark = c.chance()
		for _, dep := range op.deps {
			if !dep.folded && !dep.mark {
				op.mark = false
			}
		}
		if op.mark {
			for _, ch := range op.changes {
				e := c.dirEntries(ch.dir)
				if ch.n == nil {
					delete(e, ch.name)
				} else {
					e[ch.name] = ch.n
				}
			}
		}
	}
	for _, op := range m.pending {
		op.mark = false
	}
	clone := &Mem{clock: m.clock, nextIno: m.nextIno, last: make(map[entryKey]*dirOp)}
	clone.root = c.clone(m.root)
	return clone
}

// crasher holds the state of one CrashClone.
type crasher struct {
	rng     *rand.Rand
	cfg     CrashConfig
	entries map[*inode]map[string]*inode // a directory's entries after the crash
	clones  map[*inode]*inode
}

func (c *crasher) chance() bool {
	return c.rng.IntN(100) < c.cfg.UnsyncedDataPercent
}

func (c *crasher) dirEntries(d *inode) map[string]*inode {
	e, ok := c.entries[d]
	if !ok {
		e = maps.Clone(d.synced)
		if e == nil {
			e = make(map[string]*inode)
		}
		c.entries[d] = e
	}
	return e
}

// clone copies n as it is after the crash. Names are visited in sorted order
// so that the random choices depend on the seed only.
func (c *crasher) clone(n *inode) *inode {
	if x := c.clones[n]; x != nil {
		return x
	}
	x := &inode{ino: n.ino, mode: n.mode, mtime: n.mtime}
	c.clones[n] = x
	if !n.isDir() {
		x.data = c.fileAfterCrash(n)
		x.syncedLen = int64(len(x.data))
		return x
	}
	e := c.dirEntries(n)
	x.children = make(map[string]*inode, len(e))
	for _, name := range sortedNames(e) {
		child := e[name]
		if _, seen := c.clones[child]; seen {
			continue // a directory cycle left by a partial set of renames
		}
		x.children[name] = c.clone(child)
	}
	x.synced = maps.Clone(x.children)
	return x
}

// fileAfterCrash returns n's content after the crash. With S the synced
// content (length Ls) and C the current one (length Lc), every byte i of the
// result is S[i] or C[i] where both exist, S[i] where only S does, and C[i]
// or zero where only C does; its length lies between min(Ls, Lc) and
// max(Ls, Lc).
func (c *crasher) fileAfterCrash(n *inode) []byte {
	cur := n.data
	if !n.dirty() {
		return append([]byte(nil), cur...)
	}
	if !c.chance() {
		return n.syncedContent()
	}
	mode := 0
	if c.cfg.TornWrites {
		mode = c.rng.IntN(3)
	}
	switch mode {
	case 1:
		return c.tornPrefix(n)
	case 2:
		return c.tornBlocks(n)
	}
	return append([]byte(nil), cur...)
}

// tornPrefix keeps the unsynced changes below a cut made at a uniformly
// chosen unsynced byte: the result is C before the cut and S after it.
func (c *crasher) tornPrefix(n *inode) []byte {
	ls, lc := n.syncedLen, int64(len(n.data))
	total := int64(n.undo.size())
	if lc > ls {
		total += lc - ls
	}
	k := c.rng.Int64N(total + 1)
	if k == total {
		return append([]byte(nil), n.data...)
	}
	cut := ls + k // past the overwritten spans, in the appended tail
	for _, sp := range n.undo.spans {
		if l := int64(len(sp.old)); k < l {
			cut = sp.off + k
			break
		} else {
			k -= l
		}
	}
	out := n.syncedContent()
	if keep := min(cut, lc); keep > ls {
		out = append(out, make([]byte, keep-ls)...)
	}
	copy(out, n.data[:min(cut, lc)])
	return out
}

// tornBlocks keeps each 4 KiB block holding unsynced bytes with the
// configured chance; the file's size is its synced size, its current size
// (holes read as zeros) or the end of the last block kept.
func (c *crasher) tornBlocks(n *inode) []byte {
	ls, lc := n.syncedLen, int64(len(n.data))
	var kept [][2]int64
	spans := n.undo.spans
	for b := int64(0); b < max(ls, lc); b += crashBlockSize {
		e := b + crashBlockSize
		for len(spans) > 0 && spans[0].end() <= b {
			spans = spans[1:]
		}
		dirty := (len(spans) > 0 && spans[0].off < e) || (lc > ls && e > ls && b < lc)
		if dirty && c.chance() {
			kept = append(kept, [2]int64{b, min(e, lc)})
		}
	}
	size := ls
	switch c.rng.IntN(3) {
	case 0:
		size = lc
	case 1:
		if len(kept) > 0 {
			size = max(ls, kept[len(kept)-1][1])
		}
	}
	out := n.syncedContent()
	if size > ls {
		out = append(out, make([]byte, size-ls)...)
	}
	out = out[:size]
	for _, k := range kept {
		if k[0] < min(k[1], size) {
			copy(out[k[0]:min(k[1], size)], n.data[k[0]:])
		}
	}
	return out
}
