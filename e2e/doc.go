// Package e2e holds segviz's end-to-end tests: they build segviz, serve
// the demo and real partitions, and drive the page in headless Chromium
// (chromedp), asserting on the DOM and saving screenshots. It is a module
// of its own so that chromedp stays out of the core module's go.mod.
//
// Run them from this directory:
//
//	go test -count=1 ./...
//
// Chromium is found as $SEGVIZ_CHROMIUM, chromium, chromium-browser or
// google-chrome on PATH. Without it the tests skip, unless CI=true, where
// they fail. SEGVIZ_E2E_BIG=256 also measures the time to first render of
// a generated 256 MiB partition.
//
// TestKill9 (a kill -9 campaign over segviz append and recover --in-place)
// and TestAppendPeakRSS need the segviz binary only, not a browser:
// SEGVIZ_KILL9_RUNS sets the runs per scenario (10), SEGVIZ_KILL9_SEED
// replays a failing campaign, SEGVIZ_APPEND_RSS_MIB=1024 measures append's
// peak RSS on a 1 GiB input, and SEGVIZ_BIN tests another segviz binary
// (an older build, to show a bug).
package e2e
