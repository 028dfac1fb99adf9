// Package finding is segkit's one vocabulary for what its checks find in
// a partition's files: a Problem names a file, a byte position in it, a
// Kind (a stable name), a Level and a Detail in words.
//
// Every producer of findings uses it: the verification of a partition
// directory (package inspect), of an index against its .log, the load of a
// partition (kafkalog.LoadReport), the retention planner's timestamp warnings
// (package retention); and every consumer reads it: segviz's text and
// JSON, and the web page.
//
// Kinds are stable: new ones may be added, existing ones keep their name,
// level and meaning. Kinds() describes each; docs/problems.md is generated
// from that table, and a test fails when the two drift.
package finding
