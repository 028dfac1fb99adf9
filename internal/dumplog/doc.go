// Package dumplog prints the contents of Kafka log segment files, in the
// manner of Kafka's kafka-dump-log tool (DumpLogSegments): one line per
// batch with Kafka's field names, optionally one line per record and the
// records' keys and values, or the same as JSON lines whose field names
// are a stable interface (documented in the README).
//
// It is the engine behind `segviz dump`, kept out of cmd/ so that fuzz
// targets and the WASM bridge can use it too.
package dumplog
