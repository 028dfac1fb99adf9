package timeindex_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/timeindex"
)

// TestGenerateMoreSeeds adds grow-* seeds to FuzzTimeIndexOps: every real
// .timeindex replayed as appends (timestamp and offset steps clipped to
// what one operation can say, at the real base offset), alone, followed by
// each other operation and on a file too small for it; every pair of
// operations after a few appends, on small, odd and large files and
// extreme bases; and seeded random programs. Run with -generate (after
// TestGenerateSeeds).
func TestGenerateMoreSeeds(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz")
	}
	c := newGrowCorpus(t, "FuzzTimeIndexOps")
	c.caps["real"] = 40
	then := []seedOps{{opLookup, 0x81}, {opTruncate, 40}, {opReopen}, {opReopenUntrimmed, 1}, {opReopenUntrimmed, 0, opAppendRoll, 13, 12}, {opTrim, opAppend, 5, 3}, {opReset, opAppend, 13, 12}}
	for i, s := range realSegments(t) {
		es := decodeAll(s.time, s.base)
		if len(es) == 0 {
			continue
		}
		var prog seedOps
		prev := timeindex.Entry{Timestamp: -1, Offset: s.base}
		for k, e := range es {
			if len(prog) > 600 {
				break
			}
			a := byte(min(max(e.Timestamp-prev.Timestamp+3, 0), 255))
			if k == 0 {
				a = 255 // the first timestamp: a step from -1
			}
			b := byte(min(max(e.Offset-prev.Offset+2, 0), 254))
			prog = prog.add(opAppend, a, b)
			prev = timeindex.Entry{Timestamp: prev.Timestamp + int64(a) - 3, Offset: prev.Offset + int64(b) - 2}
		}
		size := uint16(min(len(es)*12+12*(i%3), 2999))
		c.add("real", []byte(prog), size, s.base)
		c.add("real-then", []byte(append(bytes.Clone(prog), then[i%len(then)]...)), size, s.base)
		c.add("real-small", []byte(prog), uint16(60), s.base)
	}
	argsFor := func(op byte) seedOps {
		switch op {
		case opAppend, opAppendRoll:
			return seedOps{op, 9, 5}
		case opLookup:
			return seedOps{op, 0xfd}
		case opTruncate:
			return seedOps{op, 4}
		case opReopenUntrimmed:
			return seedOps{op, 2}
		}
		return seedOps{op}
	}
	for a := byte(0); a < opCount; a++ {
		for b := byte(0); b < opCount; b++ {
			prog := seedOps{}.add(opAppend, 13, 12).add(opAppend, 4, 3).add(opAppend, 13, 12)
			prog = append(append(prog, argsFor(a)...), argsFor(b)...)
			prog = prog.add(opAppend, 13, 12).add(opLookup, 0)
			size := []uint16{48, 120, 25, 2999}[(int(a)+int(b))%4]
			base := []int64{0, 1 << 33, -9, math.MaxInt64 - 100}[int(a*opCount+b)%4]
			c.add("pair", []byte(prog), size, base)
		}
	}
	r := rand.New(rand.NewPCG(21, 22))
	for range 20 {
		prog := make([]byte, 20+r.IntN(200))
		for i := range prog {
			prog[i] = byte(r.IntN(256))
		}
		c.add("rand", prog, uint16(r.IntN(3000)), int64(r.IntN(1000)))
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
