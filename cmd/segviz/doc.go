// Command segviz inspects, checks and builds Kafka partition directories,
// and serves a visualiser of them.
//
// Usage:
//
//	segviz dump [--deep] [--print-data] [--json] FILE...
//	segviz verify [--json] DIR
//	segviz recover (--out DIR2 | --in-place) DIR
//	segviz append [--compression C] [--batch-records N] [--segment.bytes N] DIR < records.jsonl
//	segviz salvage --out DIR2 DIR
//
// Run `segviz help` or `segviz COMMAND --help` for details.
package main
