// Package viz is the engine behind segviz's visualiser: it answers the
// page's questions about the partitions of a filesystem (their segments,
// batches, records, index entries, verification findings, retention and
// compaction plans, and the instants of their timeline with "why is this
// offset gone") as plain values that marshal to the JSON the page reads.
//
// The same code serves both of the page's data paths: natively, behind the
// HTTP API of `segviz serve` (package web), and in the browser, behind the
// WASM bridge (package wasm), over the files a user dropped on the page.
// Both call Dispatch with a method name and string parameters, so that a
// method answers the same whichever path asked.
//
// The batches, records, index entries and byte layouts it returns are
// package internal/describe's views, the ones `segviz dump` prints, in the
// page's JSON (a batch's fields are those of `segviz dump --json`, and a
// few more).
//
// Every method is bounded in time and memory by its parameters: batches,
// records and index entries come in pages, the partition overview reads
// segment headers and indexes only, and nothing decodes a whole segment
// except verification, which works one segment at a time.
//
// A Session is safe for concurrent use. It opens each partition read-only
// (kafkalog.Options.ReadOnly), and its timeline too
// (timeline.Options.ReadOnly), and never writes to its filesystem.
package viz
