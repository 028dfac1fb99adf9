package fuzz

import (
	"encoding/hex"
	"flag"
	"math/rand/v2"
	"testing"
)

var randomPrograms = flag.Int("random", 0, "run this many random FuzzLogOps programs (a quick soak without the fuzzing engine)")

// TestRandomPrograms runs random programs from a fixed seed; -random N.
func TestRandomPrograms(t *testing.T) {
	if *randomPrograms == 0 {
		t.Skip("run with -random N")
	}
	rng := rand.New(rand.NewPCG(1, uint64(*randomPrograms)))
	for i := range *randomPrograms {
		data := randomProgram(rng).encode()
		t.Run("", func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("program %d: %x", i, data)
				}
			}()
			runLogOps(t, data)
		})
		if t.Failed() {
			return
		}
	}
}

func randomProgram(rng *rand.Rand) program {
	p := program{cfg0: byte(rng.IntN(256)), cfg1: byte(rng.IntN(16))}
	n := 8 + rng.IntN(maxOps-7)
	for range n {
		p.ops = append(p.ops, op{byte(rng.IntN(numOpcodes)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))})
	}
	return p
}

var replayHex = flag.String("hex", "", "run one FuzzLogOps program given in hex (with -fuzztrace to see each step)")

func TestReplayHex(t *testing.T) {
	if *replayHex == "" {
		t.Skip("run with -hex")
	}
	data, err := hex.DecodeString(*replayHex)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v", decodeProgram(data))
	st := runLogOps(t, data)
	t.Logf("%+v", st)
}

// TestRandomRecoverCases runs random FuzzRecoverCorrupt inputs; -random N.
func TestRandomRecoverCases(t *testing.T) {
	if *randomPrograms == 0 {
		t.Skip("run with -random N")
	}
	rng := rand.New(rand.NewPCG(2, uint64(*randomPrograms)))
	for range *randomPrograms {
		c := recoverCase{gen: [4]byte{byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))}}
		for range 1 + rng.IntN(6) {
			c.recipe = append(c.recipe, corruption{byte(rng.IntN(numCorruptions)), byte(rng.IntN(256)), uint16(rng.IntN(65536)), byte(rng.IntN(256))})
		}
		data := c.encode()
		t.Run("", func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("input: %x", data)
				}
			}()
			runRecoverCorrupt(t, data)
		})
		if t.Failed() {
			return
		}
	}
}
