package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/segkit/segkit/internal/dumplog"
	"github.com/segkit/segkit/vfs"
)

const dumpHelp = `Usage: segviz dump [--deep] [--print-data] [--json] [--verify-index | --verify-index-only | --index-sanity-check] FILE...

Prints each file in the manner of Kafka's kafka-dump-log. For a .log file,
one line per batch with Kafka's field names (baseOffset, lastOffset, count,
producerId, ... crc, isvalid). Legacy v0/v1 messages are shown too, and a
compressed legacy wrapper is opened to count its records. For an .index,
one line per entry ("offset: O position: P"); for a .timeindex,
"timestamp: T offset: O"; for a .txnindex, one aborted transaction a line.

  --deep        also print one line per record
  --print-data  also print each record's key and value (implies --deep);
                text that is printable UTF-8 is shown as is, else as hex
  --json        print JSON lines instead (one object per batch, record,
                index entry or problem; the field names are stable, see the
                README)
  --verify-index        cross-check each index entry against the segment's
                .log (the file with the same base name) and print what is
                wrong, with its byte position in the index
  --verify-index-only   the same, printing only the problems
  --index-sanity-check  run Kafka's sanity check on each index, and print
                whether it passed

A batch whose checksum fails is printed with isvalid: false and the dump
goes on; other corruption stops the file with its byte position.

Index findings have a level. Errors make a lookup through the index wrong.
Warnings: zero padding of an untrimmed index (normal for the partition's
active segment, whose index a running broker keeps preallocated). Info: a
follower's multi-batch append (kafka-dump-log reports these entries as
mismatches; a lookup through them is exact) and similar valid entries.

Exit status: 0 if every file is valid (warnings and info included), 1 if
any problem was found (bad CRC, corruption, a partial entry at the end, an
index error, a failed sanity check), 2 for a bad command line, 3 if a file
could not be read (or --verify-index found no .log for an index).

Examples:
  segviz dump testdata/sample/00000000000000000000.log
  segviz dump --deep --print-data --json 00000000000000000000.log | jq .
  segviz dump --verify-index-only my-topic-0/*.index my-topic-0/*.timeindex
`

func runDump(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("dump", dumpHelp, stderr)
	var opt dumplog.Options
	fs.BoolVar(&opt.Deep, "deep", false, "print one line per record")
	fs.BoolVar(&opt.Deep, "deep-iteration", false, "same as --deep (Kafka's name)")
	fs.BoolVar(&opt.PrintData, "print-data", false, "print keys and values (implies --deep)")
	fs.BoolVar(&opt.PrintData, "print-data-log", false, "same as --print-data (Kafka's name)")
	fs.BoolVar(&opt.JSON, "json", false, "print JSON lines")
	var iopt dumplog.IndexOptions
	fs.BoolVar(&iopt.Verify, "verify-index", false, "cross-check index entries against the segment's .log")
	fs.BoolVar(&iopt.VerifyOnly, "verify-index-only", false, "as --verify-index, printing only the problems")
	fs.BoolVar(&iopt.SanityOnly, "index-sanity-check", false, "run Kafka's sanity check on index files")
	if code := parseFlags(fs, args, stdout); code >= 0 {
		return code
	}
	iopt.JSON = opt.JSON
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "segviz dump: no files given")
		fs.Usage()
		return exitUsage
	}
	code := exitOK
	for _, path := range fs.Args() {
		var c int
		if dumplog.IsIndexFile(path) {
			c = dumpIndexFile(path, iopt, stdout, stderr)
		} else {
			c = dumpFile(path, opt, stdout, stderr)
		}
		code = worse(code, c)
	}
	return code
}

// worse returns the more serious of two exit codes.
func worse(a, b int) int {
	rank := func(c int) int {
		switch c {
		case exitFailure:
			return 3
		case exitProblem:
			return 2
		case exitUsage:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

func dumpFile(path string, opt dumplog.Options, stdout, stderr io.Writer) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "segviz dump: %v\n", err)
		return exitFailure
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		fmt.Fprintf(stderr, "segviz dump: %v\n", err)
		return exitFailure
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".log", ".checkpoint", ".deleted", ".cleaned", ".swap":
	default:
		fmt.Fprintf(stderr, "segviz dump: %s: don't know how to dump %q files (want .log, .index, .timeindex or .txnindex)\n", path, ext)
		return exitUsage
	}
	res, err := dumplog.Log(stdout, f, st.Size(), path, opt)
	if err != nil {
		fmt.Fprintf(stderr, "segviz dump: %s: %v\n", path, err)
		return exitFailure
	}
	if res.Problems > 0 {
		return exitProblem
	}
	return exitOK
}

// dumpIndexFile dumps an .index, .timeindex or .txnindex file. Only errors
// found in it fail the dump: zero padding is a warning, and a follower's
// multi-batch append entries are information.
func dumpIndexFile(path string, opt dumplog.IndexOptions, stdout, stderr io.Writer) int {
	res, err := dumplog.Index(stdout, vfs.OS(), path, opt)
	if err != nil {
		fmt.Fprintf(stderr, "segviz dump: %v\n", err)
		return exitFailure
	}
	if res.Errors > 0 {
		return exitProblem
	}
	return exitOK
}
