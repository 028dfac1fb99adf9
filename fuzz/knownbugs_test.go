package fuzz

import "flag"

// Known engine bugs the fuzz targets found, and the harness's workarounds
// for them. Each has a reproducer in the corpus (testdata/fuzz/<Target>/
// bugN-*), which passes with the workaround and fails with -strict. When a
// bug is fixed, delete its workaround: the reproducer stays as a
// regression seed.
var (
	strict   = flag.Bool("strict", false, "turn off the workarounds for known engine bugs (knownbugs_test.go), so that their reproducers fail")
	knownBug = flag.Int("knownbug", 0, "turn off the workaround for this known engine bug only")
)

// workaround reports whether the workaround for bug n is on.
func workaround(n int) bool { return !*strict && *knownBug != n }

// workaround is unused while no engine bug is open: the ones fixed so far
// (1-14) keep their reproducers as regress-bugN-* seeds under the
// packages' testdata/fuzz.
var _ = workaround
