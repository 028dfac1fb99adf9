// Package compactjson is the JSON view of a compaction plan or clean
// (compaction.Report) and of compaction.ReadableUntil's answer, shared by
// `segviz compact --json` and the visualiser's compaction view, so that the
// two say the same thing under the same names (docs/cli.md, "segviz
// compact", documents them).
package compactjson
