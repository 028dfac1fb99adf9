package timeindex_test

import (
	"bytes"
	"math"
	"math/rand/v2"
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
	c := fuzzseed.NewGrow(t, "FuzzTimeIndexOps")
	c.Caps["real"] = 40
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
		c.Add("real", []byte(prog), size, s.base)
		c.Add("real-then", []byte(append(bytes.Clone(prog), then[i%len(then)]...)), size, s.base)
		c.Add("real-small", []byte(prog), uint16(60), s.base)
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
			c.Add("pair", []byte(prog), size, base)
		}
	}
	r := rand.New(rand.NewPCG(21, 22))
	for range 20 {
		prog := make([]byte, 20+r.IntN(200))
		for i := range prog {
			prog[i] = byte(r.IntN(256))
		}
		c.Add("rand", prog, uint16(r.IntN(3000)), int64(r.IntN(1000)))
	}
	c.Write()
}
