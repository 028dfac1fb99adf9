package producer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
)

// TestGenerateMoreSeeds adds grow-* seeds to FuzzDecodeSnapshot: every
// distinct real producer .snapshot, and each non-empty one torn at every
// field of its first entry and at each entry boundary, with its version,
// count and CRC changed (the CRC recomputed, or not), bytes appended, an
// entry repeated (one producer twice), entries reversed, and each field of
// an entry set to the values producer state treats specially (-1, 0, the
// type's limits), CRC recomputed. Run with -generate (after
// TestGenerateCorpus).
func TestGenerateMoreSeeds(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz from ../shared/kafka-real")
	}
	c := newGrowCorpus(t, "FuzzDecodeSnapshot")
	c.defCap = 12
	c.caps["real"] = 40
	c.caps["field"] = 60
	recrc := func(b []byte) []byte {
		b = bytes.Clone(b)
		if len(b) >= SnapshotHeaderSize {
			format.PutUint32(b[crcOffset:], format.CRC32C(b[entriesOffset:]))
		}
		return b
	}
	set := func(b []byte, off int, v []byte) []byte {
		b = bytes.Clone(b)
		copy(b[off:], v)
		return b
	}
	i64 := func(v int64) []byte { b := make([]byte, 8); format.PutInt64(b, v); return b }
	i32 := func(v int32) []byte { b := make([]byte, 4); format.PutInt32(b, v); return b }
	i16 := func(v int16) []byte { b := make([]byte, 2); format.PutInt16(b, v); return b }
	var reals [][]byte
	seen := map[string]bool{}
	for _, p := range realdata.Glob(t, "*.snapshot") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !seen[string(b)] {
			seen[string(b)] = true
			reals = append(reals, b)
		}
	}
	// Field offsets inside an entry, with the values worth trying.
	fields := []struct {
		off  int
		vals [][]byte
	}{
		{0, [][]byte{i64(-1), i64(0), i64(math.MaxInt64), i64(math.MinInt64)}},  // producerId
		{8, [][]byte{i16(-1), i16(0), i16(math.MaxInt16), i16(math.MinInt16)}},  // epoch
		{10, [][]byte{i32(-1), i32(0), i32(math.MaxInt32), i32(math.MinInt32)}}, // lastSequence
		{14, [][]byte{i64(-1), i64(0), i64(math.MaxInt64), i64(math.MinInt64)}}, // lastOffset
		{22, [][]byte{i32(-1), i32(0), i32(math.MaxInt32), i32(math.MinInt32)}}, // offsetDelta
		{26, [][]byte{i64(-1), i64(0), i64(math.MaxInt64), i64(math.MinInt64)}}, // timestamp
		{34, [][]byte{i32(-1), i32(0), i32(math.MaxInt32), i32(math.MinInt32)}}, // coordinatorEpoch
		{38, [][]byte{i64(-1), i64(0), i64(math.MaxInt64), i64(math.MinInt64)}}, // currentTxnFirstOffset
	}
	for _, b := range reals {
		c.add("real", b)
		n := (len(b) - SnapshotHeaderSize) / EntrySize
		for _, v := range []int16{0, 2, -1} {
			c.add("version", set(b, versionOffset, i16(v)))
		}
		c.add("crc-zero", set(b, crcOffset, i32(0)))
		c.add("count-plus1", recrc(set(b, countOffset, i32(int32(n+1)))))
		c.add("count-plus1-badcrc", set(b, countOffset, i32(int32(n+1))))
		c.add("count-negative", recrc(set(b, countOffset, i32(-1))))
		c.add("count-huge", recrc(set(b, countOffset, i32(math.MaxInt32))))
		c.add("trailing", recrc(append(bytes.Clone(b), 0, 0, 0, 1)))
		c.add("trailing-badcrc", append(bytes.Clone(b), 0xff))
		c.add("torn-header", b[:min(len(b), SnapshotHeaderSize-1)])
		if n == 0 {
			continue
		}
		e0 := SnapshotHeaderSize
		for _, f := range fields {
			c.add("torn-field", b[:e0+f.off+1])
			c.add("torn-field-recrc", recrc(b[:e0+f.off]))
			for _, v := range f.vals {
				c.add("field", recrc(set(b, e0+f.off, v)))
			}
		}
		for k := 1; k <= n; k++ {
			c.add("torn-entry", b[:SnapshotHeaderSize+k*EntrySize-1])
		}
		entries := b[SnapshotHeaderSize : SnapshotHeaderSize+n*EntrySize]
		dup := append(append(bytes.Clone(b[:SnapshotHeaderSize]), entries...), entries[:EntrySize]...)
		c.add("repeated-producer", recrc(set(dup, countOffset, i32(int32(n+1)))))
		if n > 1 {
			var rev []byte
			for k := n - 1; k >= 0; k-- {
				rev = append(rev, entries[k*EntrySize:(k+1)*EntrySize]...)
			}
			c.add("reversed", recrc(append(bytes.Clone(b[:SnapshotHeaderSize]), rev...)))
		}
		// Two real snapshots' entries in one.
		for _, o := range reals {
			if m := (len(o) - SnapshotHeaderSize) / EntrySize; m > 0 && !bytes.Equal(o, b) {
				both := append(bytes.Clone(b), o[SnapshotHeaderSize:SnapshotHeaderSize+m*EntrySize]...)
				c.add("merged", recrc(set(both, countOffset, i32(int32(n+m)))))
			}
		}
	}
	c.write()
}

// growMaxSeed is the repository's bound on a committed seed file.
const growMaxSeed = 10 << 10

// growCorpus collects the seeds of one target and writes them as grow-*
// files: named by a hash of their content, never a duplicate of a file
// already in the directory, each under growMaxSeed, at most caps[kind]
// (defCap otherwise) of each kind.
type growCorpus struct {
	t      testing.TB
	dir    string
	target string
	seen   map[string]bool
	files  map[string]string
	kinds  map[string]int
	caps   map[string]int
	defCap int
}

func newGrowCorpus(t testing.TB, target string) *growCorpus {
	c := &growCorpus{t: t, target: target, dir: filepath.Join("testdata", "fuzz", target), seen: map[string]bool{}, files: map[string]string{}, kinds: map[string]int{}, caps: map[string]int{}, defCap: 1000}
	ents, _ := os.ReadDir(c.dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "grow-") {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(c.dir, e.Name())); err == nil {
			c.seen[string(b)] = true
		}
	}
	return c
}

// add adds one seed (the fuzz function's arguments, in order); it reports
// whether the seed was new, small enough and within its kind's cap.
func (c *growCorpus) add(kind string, values ...any) bool {
	text := fuzzseed.Encode(values...)
	limit, ok := c.caps[kind]
	if !ok {
		limit = c.defCap
	}
	if len(text) >= growMaxSeed || c.seen[text] || c.kinds[kind] >= limit {
		return false
	}
	c.seen[text] = true
	sum := sha256.Sum256([]byte(text))
	c.files["grow-"+kind+"-"+hex.EncodeToString(sum[:6])] = text
	c.kinds[kind]++
	return true
}

// write replaces the directory's grow-* files with the collected ones.
func (c *growCorpus) write() {
	c.t.Helper()
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	ents, _ := os.ReadDir(c.dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "grow-") {
			if err := os.Remove(filepath.Join(c.dir, e.Name())); err != nil {
				c.t.Fatal(err)
			}
		}
	}
	for name, text := range c.files {
		if err := os.WriteFile(filepath.Join(c.dir, name), []byte(text), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	c.t.Logf("%s: %d grow seeds %v", c.target, len(c.files), c.kinds)
}
