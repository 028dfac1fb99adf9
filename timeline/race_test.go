//go:build race

package timeline

// raceEnabled: the race detector slows the crash sweep tenfold; it then
// visits every 7th crash point (the plain run visits every one).
const raceEnabled = true
