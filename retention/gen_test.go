package retention_test

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/segkit/segkit/internal/fuzzseed"
)

var generate = flag.Bool("generate", false, "regenerate the committed fuzz seed corpora under testdata/fuzz")

// TestGenerateSeeds writes the seed corpora of the three fuzz targets:
// the edge cases below and random cases from a fixed seed. It runs only
// with -generate.
func TestGenerateSeeds(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz")
	}
	rng := rand.New(rand.NewPCG(42, 7))
	var plans, forecasts, applies [][]byte
	for _, c := range planSeeds() {
		plans = append(plans, c.encode())
	}
	for range 110 {
		plans = append(plans, randomPlanCase(rng, false).encode())
	}
	for _, c := range forecastSeeds() {
		forecasts = append(forecasts, c.encode())
	}
	for range 110 {
		forecasts = append(forecasts, randomPlanCase(rng, true).encode())
	}
	for _, c := range applySeeds() {
		applies = append(applies, c.encode())
	}
	for range 90 {
		applies = append(applies, randomApplyCase(rng).encode())
	}
	for name, seeds := range map[string][][]byte{"FuzzRetentionPlan": plans, "FuzzReadableUntil": forecasts, "FuzzRetentionApply": applies} {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, s := range seeds {
			sum := sha256.Sum256(s)
			p := filepath.Join(dir, "seed-"+hex.EncodeToString(sum[:8]))
			if err := os.WriteFile(p, []byte(fuzzseed.Encode(s)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: %d seeds", name, len(seeds))
	}
}

// ts is a segment with records, newest at now+rel, first batch lag ms
// before.
func ts(size uint64, rel int64) planSeg {
	return planSeg{Size: size, HasTs: true, Ts: rel, FirstLag: 1000, Mtime: rel}
}

// noTsSeg is a segment without record timestamps, its mtime at now+rel.
func noTsSeg(size uint64, rel int64) planSeg { return planSeg{Size: size, Mtime: rel} }

func gap(s planSeg, g uint64) planSeg { s.Gap = g; return s }

const seedNow = 1_772_442_000_000 // 2026-03-02T09:00:00Z

// planSeeds are the edge cases of FuzzRetentionPlan.
func planSeeds() []planCase {
	d := byte(fDelete)
	segs := func(s ...planSeg) []planSeg { return s }
	return []planCase{
		{Flags: d, RetMs: 60000, RetBytes: -1, Now: seedNow, Segs: segs(ts(100, -10), ts(100, -5), ts(50, 0))},
		{Flags: d, RetMs: 60000, RetBytes: -1, Now: seedNow, Segs: segs(ts(100, -70000), ts(100, -60001), ts(100, -60000), ts(50, 0))},
		{Flags: d, RetMs: 60000, RetBytes: -1, Now: seedNow, Segs: segs(noTsSeg(100, -70000), noTsSeg(100, 0), ts(50, 0))},
		{Flags: d, RetMs: 60000, RetBytes: -1, Now: seedNow, Segs: segs(ts(100, 1<<40), ts(100, -90000), ts(50, -90000))},                      // far future blocks
		{Flags: d, RetMs: 60000, RetBytes: -1, Now: seedNow, Segs: segs(ts(100, -70000), ts(100, 0), ts(100, -90000), ts(50, 0))},              // out of order
		{Flags: d, RetMs: 60000, RetBytes: -1, Now: seedNow, Segs: segs(ts(100, -70000), ts(100, -70000), ts(50, -70000))},                     // all qualify: roll
		{Flags: d, RetMs: 60000, RetBytes: -1, Now: seedNow, Segs: segs(ts(100, -70000), ts(100, -70000), noTsSeg(0, -70000))},                 // empty active
		{Flags: d, RetMs: 60000, RetBytes: -1, Now: seedNow, Segs: segs(ts(100, -70000), ts(100, -70000), ts(50, -70000)), HWBack: 1},          // HW below LEO
		{Flags: d, RetMs: 60000, RetBytes: -1, Now: seedNow, Segs: segs(ts(100, -70000), gap(ts(100, -70000), 9), ts(50, -70000)), HWBack: 45}, // HW blocks
		{Flags: fCompact, RetMs: 0, RetBytes: 0, Now: seedNow, Segs: segs(ts(100, -70000), gap(ts(100, -70000), 5), ts(50, -70000)), LSODelta: 4},
		{Flags: fCompact, RetMs: 0, RetBytes: 0, Now: seedNow, Segs: segs(ts(100, -70000), gap(ts(100, -70000), 5), ts(50, -70000)), LSODelta: 7},
		{Flags: fCompact | d, RetMs: 60000, RetBytes: -1, Now: seedNow, Segs: segs(ts(100, -70000), ts(50, 0))},
		{Flags: 0, RetMs: 0, RetBytes: 0, Now: seedNow, Segs: segs(ts(100, -70000), ts(50, 0))},           // empty cleanup.policy
		{Flags: d, RetMs: -1, RetBytes: 250, Now: seedNow, Segs: segs(ts(100, 0), ts(100, 0), ts(50, 0))}, // exactly equal
		{Flags: d, RetMs: -1, RetBytes: 150, Now: seedNow, Segs: segs(ts(0, 0), ts(100, 0), ts(50, 0))},   // equal, 0-byte first
		{Flags: d, RetMs: -1, RetBytes: 0, Now: seedNow, Segs: segs(ts(100, 0), ts(100, 0), ts(50, 0))},   // 0: everything
		{Flags: d, RetMs: -1, RetBytes: 200, Now: seedNow, Segs: segs(ts(100, 0), ts(100, 0), ts(100, 0), ts(100, 0))},
		{Flags: d, RetMs: 0, RetBytes: -1, Now: seedNow, Segs: segs(ts(100, -1), ts(100, 0), ts(50, -1))},
		{Flags: d, RetMs: -1, RetBytes: -1, Now: seedNow, Segs: segs(ts(100, -1<<40), ts(50, -1<<40))},
		{Flags: d, RetMs: -2, RetBytes: -2, Now: seedNow, Segs: segs(ts(100, -1<<40), ts(50, -1<<40))},
		{Flags: d, RetMs: math.MaxInt64, RetBytes: math.MaxInt64, Now: seedNow, Segs: segs(ts(100, -1<<40), ts(50, -1<<40))},
		{Flags: d, RetMs: 60000, RetBytes: -1, Now: seedNow, Segs: segs(ts(100, 0), gap(ts(100, 0), 3), gap(ts(100, 0), 3), ts(50, 0)), LSODelta: 9},
		{Flags: d, RetMs: 60000, RetBytes: -1, Now: seedNow, Segs: segs(gap(noTsSeg(0, 0), 5))},
		{Flags: d, RetMs: 60000, RetBytes: 10, Now: seedNow, Segs: segs(ts(0, -1<<30), ts(0, -1<<30), ts(10, 0), ts(0, 0))},
		{Flags: d, RetMs: 60000, RetBytes: 100, Now: seedNow, Segs: segs(ts(100, 0), ts(100, -70000), ts(50, -70000), ts(50, 0)), LSODelta: 0},
		{Flags: d, RetMs: 1, RetBytes: 1, Now: math.MaxInt64, Segs: segs(ts(1<<39, math.MinInt64), noTsSeg(1<<39, math.MinInt64), ts(1, 0))},
		{Flags: d, RetMs: 1, RetBytes: 1, Now: math.MinInt64, Segs: segs(ts(1, math.MaxInt64), ts(1, 0))},
		{Flags: d, RetMs: 0, RetBytes: -1, Now: 0, Segs: segs(ts(1, 0), ts(1, -1), noTsSeg(1, -1))},
		{Flags: d, RetMs: 60000, RetBytes: 1000, Now: seedNow, Segs: segs(
			ts(300, -900000), ts(300, -800000), noTsSeg(300, -700000), ts(300, -600000), ts(300, -500000), ts(300, 1000),
			ts(300, -400000), ts(300, -300000), ts(300, -200000), ts(300, -100000), ts(300, -60001), ts(300, -60000),
			ts(300, -1), ts(300, 0), ts(300, 1), ts(10, 0))},
	}
}

// forecastSeeds are the edge cases of FuzzReadableUntil: the plan edges,
// on known and unknown schedules, idle and with traffic.
func forecastSeeds() []planCase {
	var out []planCase
	for i, c := range planSeeds()[:25] {
		c.Interval, c.FirstCheck, c.SegMs = 299_999, int64(i*7919)%300_000-150_000, 179_999
		c.TrafficDt, c.BatchBytes, c.Phase = 4_999, 80, uint64(i*104729)
		out = append(out, c)
		switch i % 3 {
		case 0:
			c.Flags |= fTraffic
		case 1:
			c.Flags |= fUnknown
		default:
			c.Flags |= fTraffic | fUnknown
		}
		out = append(out, c)
	}
	// The payments log at 0:00 (times from 0:00): checks at 1:01, 6:01.
	pay := planCase{Flags: fDelete, RetMs: 60000, RetBytes: -1, Now: seedNow, Interval: 299_999, FirstCheck: 61_000, SegMs: 179_999,
		Segs:      []planSeg{{Size: 2960, HasTs: true, Ts: -5003, FirstLag: 179_105, Mtime: -5003}, {Gap: 36, Size: 80, HasTs: true, Ts: 0, Mtime: 0}},
		TrafficDt: 5002, BatchBytes: 80}
	out = append(out, pay)
	pay.Flags |= fTraffic
	out = append(out, pay)
	return out
}

// applySeeds are the edge cases of FuzzRetentionApply: the layouts of
// TestApply and more, whole and crashed at several points.
func applySeeds() []applyCase {
	layouts := []applyCase{
		{RetMs: 1000, RetBytes: -1, Now: 2000, Segs: [][]int64{{-1900, -1800}, {-1700}, {-1600, -1500}, {0}}},
		{RetMs: 1000, RetBytes: -1, Now: 5000, Segs: [][]int64{{-300}, {-200, -100}, {0}}},
		{Flags: 4, RetMs: -1, RetBytes: 150, Now: 5000, LSOAt: 3, Segs: [][]int64{{0, 1}, {2, 3}, {4, 5}, {6}}},
		{RetMs: 10, RetBytes: -1, Now: 5000, Segs: [][]int64{{0}, {0}, {}}},
		{Flags: 1, RetMs: 10, RetBytes: -1, Now: 5000, HWBack: 2, Segs: [][]int64{{0}, {0}, {0}, {0}}},
		{RetMs: 10, RetBytes: -1, Now: 5000, Segs: [][]int64{{noTs}, {noTs, noTs}, {0}}},
		{RetMs: 10, RetBytes: -1, Now: 5000, Segs: [][]int64{{1 << 39}, {0}, {0}}},
		{RetMs: 10, RetBytes: -1, Now: 5000, Segs: [][]int64{{0}, {9000}, {0}, {0}}},
		{RetMs: 0, RetBytes: 0, Now: 0, Segs: [][]int64{{0, 0, 0, 0}, {0}, {0, 0}, {0}, {0}, {0}}},
		{RetMs: -1, RetBytes: 0, Now: 0, Segs: [][]int64{{0}}},
		{RetMs: -1, RetBytes: -1, Now: 0, Flags: 4, LSOAt: 1 << 20, Segs: [][]int64{{0}, {0}, {0}}},
		{RetMs: 100, RetBytes: -1, Now: -5000, Segs: [][]int64{{-1 << 39}, {0}}},
	}
	var out []applyCase
	for _, c := range layouts {
		out = append(out, c)
		for _, k := range []uint64{0, 1, 2, 3, 5, 8, 13, 21} {
			cc := c
			cc.Flags |= 2
			cc.Crash, cc.Unsynced = k, uint8(k*37)
			out = append(out, cc)
		}
	}
	return out
}

func randomPlanCase(rng *rand.Rand, forecast bool) planCase {
	c := planCase{Flags: byte(rng.IntN(16)), Now: seedNow + rng.Int64N(1<<30)}
	if rng.IntN(4) != 0 {
		c.Flags |= fDelete
	}
	pick := func(vs ...int64) int64 { return vs[rng.IntN(len(vs))] }
	c.RetMs = pick(-1, 0, 1, 60_000, 600_000, 604_800_000, rng.Int64N(1<<32))
	c.RetBytes = pick(-1, 0, 100, 1000, 5000, rng.Int64N(1<<20))
	c.Interval = uint64(pick(0, 999, 29_999, 299_999, rng.Int64N(1<<20)))
	c.FirstCheck = rng.Int64N(1<<21) - 1<<20
	c.SegMs = uint64(pick(0, 59_999, 179_999, 604_799_999, rng.Int64N(1<<30)))
	c.FDD = uint64(pick(0, 60_000))
	c.LEOExtra = uint64(rng.IntN(1000))
	if rng.IntN(3) == 0 {
		c.LSODelta = uint64(rng.IntN(3000))
	}
	if rng.IntN(3) == 0 {
		c.HWBack = uint64(rng.IntN(2000))
	}
	c.TrafficDt, c.BatchBytes, c.Phase = uint64(rng.IntN(100_000)), uint64(1+rng.IntN(2000)), rng.Uint64()
	n := 1 + rng.IntN(12)
	tsBase := -rng.Int64N(1 << 31)
	for i := range n {
		s := planSeg{Gap: uint64(rng.IntN(500)), Size: uint64(pick(0, 1, 100, 1000, rng.Int64N(1<<16)))}
		if i == n-1 && rng.IntN(3) == 0 {
			s.Size = 0
		}
		tsBase += rng.Int64N(1 << 28)
		switch rng.IntN(10) {
		case 0: // no timestamps
			s.Mtime = tsBase
		case 1: // far future
			s.HasTs, s.Ts = true, 1<<40+rng.Int64N(1<<30)
		case 2: // out of order
			s.HasTs, s.Ts = true, tsBase-rng.Int64N(1<<30)
		case 3: // far past
			s.HasTs, s.Ts = true, -seedNow+rng.Int64N(1000)
		default:
			s.HasTs, s.Ts = true, tsBase
		}
		s.FirstLag = uint64(rng.Int64N(1 << 28))
		if !forecast || rng.IntN(2) == 0 {
			s.Mtime = tsBase + rng.Int64N(1<<20)
		}
		c.Segs = append(c.Segs, s)
	}
	return c
}

func randomApplyCase(rng *rand.Rand) applyCase {
	c := applyCase{Flags: byte(rng.IntN(8)), Unsynced: uint8(rng.IntN(256))}
	pick := func(vs ...int64) int64 { return vs[rng.IntN(len(vs))] }
	c.RetMs = pick(-1, 0, 10, 1000, 100_000)
	c.RetBytes = pick(-1, 0, 70, 200, 500)
	c.Now = rng.Int64N(200_000) - 50_000
	c.HWBack, c.LSOAt, c.Crash = uint64(rng.IntN(10)), uint64(rng.IntN(12)), uint64(rng.IntN(60))
	n := 1 + rng.IntN(6)
	for i := range n {
		k := rng.IntN(5)
		if k == 0 && i < n-1 {
			k = 1
		}
		var s []int64
		for range k {
			switch rng.IntN(8) {
			case 0:
				s = append(s, noTs)
			case 1:
				s = append(s, 1<<39)
			default:
				s = append(s, -rng.Int64N(200_000))
			}
		}
		c.Segs = append(c.Segs, s)
	}
	return c
}
