//go:build race

package record_test

// raceEnabled is true under -race, where sync.Pool (used inside the zstd
// decoder) drops items on purpose: allocation counts mean nothing there.
const raceEnabled = true
