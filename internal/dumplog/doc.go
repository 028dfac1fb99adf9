// Package dumplog prints the contents of Kafka's partition files as Kafka
// 4.3's kafka-dump-log tool (DumpLogSegments) does, line for line: Log
// dumps a .log or a KRaft .checkpoint snapshot (one line per batch,
// optionally one per record with the keys and values), Index an .index,
// .timeindex or .txnindex, and a Session runs the tool's whole flow over
// several files, producer .snapshot files included, with the findings the
// tool prints on standard error after the last file. Log and Index also
// print JSON lines whose field names are a stable interface (documented in
// docs/cli.md).
//
// What it prints of a batch, a record, a legacy message or an index entry
// comes from package internal/describe, whose views the visualiser's data
// (package viz) renders too; this package decides only how the text and
// the JSON lines show them.
//
// It is the engine behind `segviz dump`, kept out of cmd/ so that fuzz
// targets and the WASM bridge can use it too. oracle/dump_test.go compares
// its text with Kafka's own tool.
package dumplog
