package format

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
)

var generate = flag.Bool("generate", false, "add the grow-* seeds to testdata/fuzz (edge cases and ../shared/kafka-real)")

// TestGenerateVarintSeeds adds grow-* seeds to FuzzVarint: every encoded
// length 1..10, the values at each 7-bit boundary and around the int32 and
// int64 extremes (with trailing bytes too), over-long and overflowing
// encodings, truncations of each, and the bytes at the start of real
// records (length, attributes, timestamp and offset deltas, key length),
// taken from uncompressed v2 batches of the real broker files. Run with
// -generate.
func TestGenerateVarintSeeds(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to add seeds to testdata/fuzz")
	}
	c := newGrowCorpus(t, "FuzzVarint")
	c.caps["real"] = 40
	var vals []int64
	for k := 0; k < 64; k += 7 {
		b := int64(1) << k
		vals = append(vals, b-1, b, -b, -b-1, b/2, -(b / 2))
	}
	vals = append(vals, math.MaxInt32, math.MaxInt32+1, math.MinInt32, math.MinInt32-1, math.MaxInt64, math.MinInt64, math.MaxInt64-1, math.MinInt64+1, 300, -300)
	for _, v := range vals {
		enc := binary.AppendVarint(nil, v)
		c.add("value", enc)
		c.add("value-trailing", append(enc, 0x01, 0xff))
		if len(enc) > 1 {
			c.add("value-truncated", enc[:len(enc)-1])
		}
	}
	for n := 1; n <= 11; n++ {
		// Over-long: continuation bytes then a zero terminator.
		over := make([]byte, n)
		for i := range n - 1 {
			over[i] = 0x80
		}
		c.add("overlong", over)
		all := make([]byte, n)
		for i := range all {
			all[i] = 0xff
		}
		c.add("all-continuation", all)
		all[n-1] = 0x7f
		c.add("max-terminated", all)
		all[n-1] = 0x01
		c.add("one-terminated", all)
		all[n-1] = 0x02
		c.add("two-terminated", all) // overflows at 10 bytes
	}
	// 5-byte 32-bit overflow boundaries.
	for _, last := range []byte{0x07, 0x0f, 0x10, 0x1f, 0x20, 0x7f} {
		c.add("int32-fifth", []byte{0xff, 0xff, 0xff, 0xff, last})
		c.add("int32-fifth-even", []byte{0xfe, 0xff, 0xff, 0xff, last})
	}
	// Real records: the varints at the start of each record.
	for _, p := range realdata.Glob(t, "*.log") {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for pos := 0; len(data)-pos >= 61; {
			size := 12 + int(int32(binary.BigEndian.Uint32(data[pos+8:])))
			if size < 61 || size > len(data)-pos {
				break
			}
			batch := data[pos : pos+size]
			pos += size
			if batch[16] != 2 || batch[22]&7 != 0 || c.kinds["real"] >= c.caps["real"] {
				continue
			}
			recs := batch[61:]
			c.add("real", recs[:min(len(recs), 24)])
			// The record's timestamp delta and offset delta: after the
			// length varint and the attributes byte.
			if _, n := Varint(recs); n > 0 && n+1 < len(recs) {
				c.add("real-delta", recs[n+1:min(len(recs), n+1+12)])
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
