package index_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/vfs"
)

// TestGenerateMoreSeeds adds grow-* seeds to the four index targets. Run
// with -generate (after TestGenerateSeeds).
//
//   - FuzzDecodeOffsetIndex: every real .index cut to one entry, to half,
//     with the wrong base (0, one above, far above), two entries swapped, a
//     zeroed entry in the middle, a duplicated last entry, an entry
//     flipped; and two real indexes back to back.
//   - FuzzDecodeTxnIndex: the real .txnindex files of the 4.3.1 broker,
//     at their base and others, torn at every field, padded with zeros,
//     with a version changed, entries reordered or repeated.
//   - FuzzOffsetIndexOps: the real indexes replayed as appends (offset and
//     position steps clipped to what an operation can say), followed by
//     each operation; and every pair of operations after a few appends, on
//     small, odd and large files and extreme bases.
//   - FuzzTxnIndexOps: the real aborted transactions replayed, and every
//     pair of operations after appends, on several bases.
func TestGenerateMoreSeeds(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz")
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	segs := realSegments(t)

	// FuzzDecodeOffsetIndex.
	dec := fuzzseed.NewGrow(t, "FuzzDecodeOffsetIndex")
	dec.DefaultCap = 16
	fit := func(b []byte) []byte { return b[:min(len(b), 2400/8*8)] } // under 10 KiB quoted
	for i, s := range segs {
		x := s.index
		if len(x) < 8 {
			continue
		}
		n := len(x) / 8
		dec.Add("real-first", x[:8], s.base)
		dec.Add("real-half", fit(x[:n/2*8]), s.base)
		dec.Add("real-base0", fit(x), int64(0))
		dec.Add("real-base-plus1", fit(x), s.base+1)
		dec.Add("real-base-far", fit(x), s.base+math.MaxInt32)
		dec.Add("real-base-min", fit(x), int64(math.MinInt64))
		if n >= 2 {
			sw := bytes.Clone(fit(x))
			m := len(sw) / 8
			a, b := sw[(m/2-1)*8:(m/2)*8], sw[(m/2)*8:(m/2+1)*8]
			tmp := bytes.Clone(a)
			copy(a, b)
			copy(b, tmp)
			dec.Add("real-swapped", sw, s.base)
			z := bytes.Clone(fit(x))
			clear(z[(len(z)/16)*8 : (len(z)/16)*8+8])
			dec.Add("real-zero-middle", z, s.base)
		}
		last := fit(x)
		dec.Add("real-dup-last", cat(last, last[len(last)-8:]), s.base)
		fl := bytes.Clone(fit(x))
		fl[len(fl)/2] ^= 0x80
		dec.Add("real-flip", fl, s.base)
		pos := bytes.Clone(fit(x))
		format.PutInt32(pos[4:], math.MaxInt32)
		dec.Add("real-huge-position", pos, s.base)
		if j := (i + 1) % len(segs); len(segs[j].index) > 0 {
			dec.Add("real-concat", fit(cat(x, segs[j].index)), s.base)
		}
	}
	dec.Write()

	// FuzzDecodeTxnIndex.
	txd := fuzzseed.NewGrow(t, "FuzzDecodeTxnIndex")
	type realTxn struct {
		base int64
		data []byte
	}
	var txns []realTxn
	for _, p := range realdata.Glob(t, "*.txnindex") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		base, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(p), ".txnindex"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		txns = append(txns, realTxn{base, b})
	}
	var allTxn []byte
	for _, r := range txns {
		allTxn = append(allTxn, r.data...)
	}
	for _, r := range txns {
		b := r.data
		txd.Add("real", b, r.base)
		for _, base := range []int64{0, r.base + 1, r.base + 1000, -1, math.MaxInt64, math.MinInt64} {
			txd.Add("real-base", b, base)
		}
		for _, cut := range []int{1, 2, 8, 16, 24, 32, 33, 35, 50, 67} {
			if cut < len(b) {
				txd.Add("real-torn", b[:cut], r.base)
			}
		}
		txd.Add("real-zero-tail", cat(b, make([]byte, 34)), r.base)
		txd.Add("real-zero-partial", cat(b, make([]byte, 10)), r.base)
		for _, v := range []int16{1, -1, 0x100, math.MaxInt16} {
			vb := bytes.Clone(b)
			format.PutInt16(vb[len(vb)-34:], v)
			txd.Add("real-version", vb, r.base)
		}
		if len(b) >= 68 {
			txd.Add("real-reversed", cat(b[34:68], b[:34], b[68:]), r.base)
		}
		txd.Add("real-repeated", cat(b, b), r.base)
		lso := bytes.Clone(b)
		format.PutInt64(lso[26:], math.MaxInt64) // the first entry's LSO
		txd.Add("real-lso-max", lso, r.base)
		first := bytes.Clone(b)
		format.PutInt64(first[10:], math.MaxInt64) // first offset after last
		txd.Add("real-first-after-last", first, r.base)
	}
	txd.Add("real-all", allTxn, int64(0))
	txd.Add("real-all-high-base", allTxn, int64(300))
	txd.Write()

	// FuzzOffsetIndexOps.
	ops := fuzzseed.NewGrow(t, "FuzzOffsetIndexOps")
	ops.Caps["real"] = 40
	for i, s := range segs {
		es := decodeAll(s.index, s.base)
		var prog seedOps
		prev := index.Entry{Offset: s.base}
		for k, e := range es {
			if len(prog) > 600 {
				break
			}
			d := e.Offset - prev.Offset
			if k == 0 && d == 0 {
				d = 0
			}
			a := byte(min(max(d+2, 0), 255))
			b := byte(int8(min((e.Position-prev.Position)/16, 127)))
			prog = prog.add(opAppend, a, b)
			prev = index.Entry{Offset: prev.Offset + int64(a) - 2, Position: prev.Position + int32(int8(b))*16}
		}
		size := uint16(min(len(es)*8+8*(i%3), 2047))
		then := []seedOps{{opLookup, 0x81}, {opTruncate, 40}, {opReopen}, {opReopenUntrimmed, 1}, {opTrim, opAppend, 5, 3}, {opResize, 4, 0}, {opReset, opAppend, 12, 20}}
		ops.Add("real", []byte(prog), size, s.base)
		ops.Add("real-then", []byte(append(bytes.Clone(prog), then[i%len(then)]...)), size, s.base)
		ops.Add("real-small", []byte(prog), uint16(64), s.base)
	}
	argsFor := func(op byte) seedOps {
		switch op {
		case opAppend, opAppendExact:
			return seedOps{op, 7, 3}
		case opLookup:
			return seedOps{op, 0xfd}
		case opTruncate:
			return seedOps{op, 5}
		case opResize:
			return seedOps{op, 3, 4}
		case opReopenUntrimmed:
			return seedOps{op, 2}
		}
		return seedOps{op}
	}
	for a := byte(0); a < opCount; a++ {
		for b := byte(0); b < opCount; b++ {
			pre := seedOps{}.add(opAppend, 12, 20).add(opAppend, 3, 9).add(opAppend, 12, 20)
			prog := append(append(pre, argsFor(a)...), argsFor(b)...)
			prog = prog.add(opAppend, 12, 20).add(opLookup, 0)
			size := []uint16{40, 80, 13, 2047}[(int(a)+int(b))%4]
			base := []int64{0, 1 << 33, -7, math.MaxInt64 - 100}[int(a*opCount+b)%4]
			ops.Add("pair", []byte(prog), size, base)
		}
	}
	r := rand.New(rand.NewPCG(11, 12))
	for range 20 {
		prog := make([]byte, 20+r.IntN(200))
		for i := range prog {
			prog[i] = byte(r.IntN(256))
		}
		ops.Add("rand", prog, uint16(r.IntN(2048)), int64(r.IntN(1000)))
	}
	ops.Write()

	// FuzzTxnIndexOps.
	txo := fuzzseed.NewGrow(t, "FuzzTxnIndexOps")
	for _, rt := range txns {
		x, err := index.OpenTransactionIndex(memWithFile(t, rt.data), "r.txnindex", rt.base, index.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var prog seedOps
		last := rt.base
		for _, tx := range x.All() {
			a := byte(min(max(tx.LastOffset-last+3, 0), 255))
			lastOff := last + int64(a) - 3
			b := byte(min(max(lastOff-tx.FirstOffset, 0), 255))
			prog = prog.add(0, a, b, byte(tx.ProducerID))
			last = lastOff
		}
		txo.Add("real", []byte(prog), rt.base)
		txo.Add("real-search", []byte(prog.add(4, 0, 255).add(4, 10, 20).add(3).add(4, 0, 100)), rt.base)
		txo.Add("real-truncate", []byte(prog.add(1, 10).add(0, 10, 5, 1).add(3).add(1, 255)), rt.base)
		txo.Add("real-reset", []byte(prog.add(2).add(0, 4, 1, 1).add(4, 0, 50)), rt.base)
	}
	targs := func(op byte) seedOps {
		switch op {
		case 0:
			return seedOps{0, 9, 4, 3}
		case 1:
			return seedOps{1, 6}
		case 4:
			return seedOps{4, 2, 40}
		}
		return seedOps{op}
	}
	for a := byte(0); a < 5; a++ {
		for b := byte(0); b < 5; b++ {
			for bi, base := range []int64{0, 50, -1000, math.MaxInt64 - 500} {
				prog := seedOps{}.add(0, 10, 3, 1).add(0, 10, 4, 2).add(0, 10, 5, 3)
				prog = append(append(prog, targs(a)...), targs(b)...)
				if bi%2 == 1 {
					prog = prog.add(4, 0, 255)
				}
				txo.Add("pair", []byte(prog), base)
			}
		}
	}
	txo.Write()
}

// memWithFile returns a Mem holding b as r.txnindex.
func memWithFile(t *testing.T, b []byte) *vfs.Mem {
	m := vfs.NewMem()
	writeFile(t, m, "r.txnindex", b)
	return m
}
