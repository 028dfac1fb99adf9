package vfs

import (
	"flag"
	"math/rand/v2"
	"testing"

	"github.com/segkit/segkit/internal/fuzzseed"
)

var generate = flag.Bool("generate", false, "add the grow-* seeds to testdata/fuzz/FuzzMemCrash")

// TestGenerateMoreSeeds adds grow-* seeds to FuzzMemCrash: every ordered
// pair of operations (with arguments that hit existing, missing and
// cross-directory names) after a state with synced and unsynced data in
// both directories, each ended by a crash in one of the ten crash
// configurations (unsynced data kept 0..100%, torn or not); the file
// protocols of a Kafka partition (segment roll, index preallocation and
// trim, checkpoint replace, segment deletion by rename, clean-shutdown
// marker), each with a crash after every step; and seeded random programs.
// TestUpdateFuzzSeeds keeps the hand-written seeds. Run with -generate.
func TestGenerateMoreSeeds(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to add seeds to testdata/fuzz")
	}
	c := fuzzseed.NewGrow(t, "FuzzMemCrash")
	configs := []int{0, 1, 2, 3, 4, 128, 129, 130, 131, 132}
	argsFor := func(op, v int) []int {
		n := v % 4
		switch op {
		case fCreate, fSyncFile, fRemove:
			return []int{op, n}
		case fAppend:
			return []int{op, n, []int{0, 17, 127, 200}[v%4]}
		case fWriteAt:
			return []int{op, n, v % 3, 7, 90}
		case fTruncate:
			return []int{op, n, 0, []int{0, 5, 200, 255}[v%4]}
		case fSyncDir:
			return []int{op, v % 2}
		case fRename:
			return []int{op, n, (n + 1 + v%3) % 4}
		case fCrash:
			return []int{op, v, configs[v%len(configs)]}
		}
		return []int{op}
	}
	// Synced a, unsynced d/a, synced directory entries for both.
	pre := []int{fCreate, 0, fAppend, 0, 100, fCreate, 2, fSyncAll, fAppend, 0, 30, fAppend, 2, 60}
	k := 0
	for a := range fNumOps {
		for b := range fNumOps {
			prog := append([]int{}, pre...)
			prog = append(prog, argsFor(a, k)...)
			prog = append(prog, argsFor(b, k+1)...)
			prog = append(prog, fCrash, k, configs[k%len(configs)])
			c.Add("pair", fuzzProgram(prog...))
			k++
		}
	}
	// Kafka's file protocols, a crash after each step.
	protocols := map[string][][]int{
		"roll":       {{fCreate, 0}, {fAppend, 0, 250}, {fSyncFile, 0}, {fCreate, 1}, {fTruncate, 1, 0, 240}, {fSyncDir, 0}, {fAppend, 0, 40}, {fTruncate, 1, 0, 16}, {fSyncFile, 1}, {fCreate, 2}, {fAppend, 2, 90}},
		"checkpoint": {{fCreate, 1}, {fAppend, 1, 12}, {fSyncAll}, {fCreate, 0}, {fAppend, 0, 14}, {fSyncFile, 0}, {fRename, 0, 1}, {fSyncDir, 0}, {fCreate, 0}, {fAppend, 0, 9}, {fRename, 0, 1}},
		"delete":     {{fCreate, 2}, {fAppend, 2, 200}, {fCreate, 3}, {fAppend, 3, 16}, {fSyncAll}, {fRename, 2, 0}, {fRename, 3, 1}, {fSyncDir, 1}, {fSyncDir, 0}, {fRemove, 0}, {fRemove, 1}, {fSyncDir, 0}},
		"marker":     {{fCreate, 0}, {fAppend, 0, 120}, {fSyncAll}, {fCreate, 1}, {fSyncDir, 0}, {fAppend, 0, 10}, {fRemove, 1}, {fSyncDir, 0}, {fSyncFile, 0}},
		"recover":    {{fCreate, 0}, {fAppend, 0, 200}, {fSyncAll}, {fAppend, 0, 200}, {fWriteAt, 0, 0, 150, 50}, {fTruncate, 0, 1, 44}, {fSyncFile, 0}, {fAppend, 0, 130}},
	}
	for name, steps := range protocols {
		for i := range steps {
			var prog []int
			for _, s := range steps[:i+1] {
				prog = append(prog, s...)
			}
			prog = append(prog, fCrash, i, configs[(i+len(name))%len(configs)])
			c.Add("protocol-"+name, fuzzProgram(prog...))
			if i == len(steps)-1 { // then carry on after the crash
				c.Add("protocol-"+name+"-again", fuzzProgram(append(prog, steps[0]...)...))
			}
		}
	}
	r := rand.New(rand.NewPCG(31, 32))
	for range 20 {
		prog := make([]int, 10+r.IntN(120))
		for i := range prog {
			prog[i] = r.IntN(256)
		}
		c.Add("rand", fuzzProgram(prog...))
	}
	c.Write()
}
