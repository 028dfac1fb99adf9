//go:build race

package compress

// raceEnabled is set when the race detector, which allocates, is on.
const raceEnabled = true
