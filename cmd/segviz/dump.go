package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/segkit/segkit/internal/dumplog"
	"github.com/segkit/segkit/internal/maprange"
	"github.com/segkit/segkit/vfs"
)

const dumpHelp = `Usage: segviz dump [flags] [--files FILE[,FILE...]] [FILE...]

Prints each file as Kafka's kafka-dump-log (DumpLogSegments, Kafka 4.3)
does, line for line, with Kafka's flags: for a .log or a KRaft .checkpoint
snapshot, one line per batch; with --deep-iteration one line per record;
with --print-data-log the keys and values. For an .index, one line per entry
("offset: O position: P"), for a .timeindex "timestamp: T offset: O", for a
.txnindex one aborted transaction a line, for a producer .snapshot one
producer a line. What Kafka prints on standard error (index mismatches,
time index errors, non-consecutive offsets, unknown files) goes there too,
after the last file.

Kafka's flags:
  --files F1,F2,...       the files to dump (also as arguments)
  --deep-iteration        one line per record (alias --deep)
  --print-data-log        also each record's key and value, decoded as
                          UTF-8 (implies --deep-iteration; alias --print-data)
  --skip-record-metadata  print the keys and values without the record's
                          metadata
  --verify-index-only     check the indexes against the .log without
                          printing their entries
  --index-sanity-check    run the sanity check a broker runs at start-up
  --max-message-size N    the largest batch an .index entry may point at
                          (default 5242880)
  --max-bytes N           read only the batches within the first N bytes of
                          each .log

segviz's own:
  --json          print JSON lines instead (one object per batch, record,
                  index entry or problem; the field names are stable, see the
                  README)
  --verify-index  also print segviz's cross-check of each index against the
                  segment's .log: what is wrong, with its byte position in
                  the index and a level

Where Kafka's tool would stop at an exception (corruption, a bad checksum's
detail, a failed sanity check), segviz prints an "Error: ..." line on
standard error and goes on with the next file.

Index findings have a level. Errors make a lookup through the index wrong.
Warnings: zero padding of an untrimmed index (normal for the partition's
active segment, whose index a running broker keeps preallocated). Info: a
follower's multi-batch append (kafka-dump-log reports these entries as
mismatches; a lookup through them is exact) and similar valid entries.

A symbolic link is dumped as the file it points to, and a line on standard
error says so. A FIFO, a device, a socket or a link to nothing is refused
(exit 3), not read: reading a FIFO would wait for a writer forever.

An index over 2 GiB, which Kafka cannot have written (segment.index.bytes
is an int), is reported and not read (exit 1): a sparse file can claim a
terabyte.

Exit status: 0 if every file is valid (warnings and info included), 1 if
any problem was found (bad CRC, corruption, a partial entry at the end, an
index error, a failed sanity check), 2 for a bad command line or a file of
an unknown kind, 3 if a file could not be read.

Examples:
  segviz dump --files testdata/sample/00000000000000000000.log
  segviz dump --deep-iteration --print-data-log --json 00000000000000000000.log | jq .
  segviz dump --verify-index-only my-topic-0/*.index my-topic-0/*.timeindex
`

// dumpFlags are the flags of segviz dump.
type dumpFlags struct {
	log   dumplog.Options
	index dumplog.IndexOptions
	files []string
}

func runDump(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("dump", dumpHelp, stderr)
	var f dumpFlags
	opt, iopt := &f.log, &f.index
	for _, name := range []string{"deep-iteration", "deep"} {
		fs.BoolVar(&opt.Deep, name, false, "print one line per record")
	}
	for _, name := range []string{"print-data-log", "print-data"} {
		fs.BoolVar(&opt.PrintData, name, false, "print keys and values (implies --deep-iteration)")
	}
	fs.BoolVar(&opt.SkipRecordMetadata, "skip-record-metadata", false, "print keys and values without the records' metadata")
	fs.BoolVar(&opt.JSON, "json", false, "print JSON lines")
	fs.Func("files", "comma-separated files to dump", func(v string) error {
		f.files = append(f.files, strings.Split(v, ",")...)
		return nil
	})
	maxBytes := fs.Int64("max-bytes", math.MaxInt32, "read only the batches within the first `N` bytes of each .log")
	fs.IntVar(&iopt.MaxMessageSize, "max-message-size", dumplog.DefaultMaxMessageSize, "the largest batch (`bytes`) an .index entry may point at")
	fs.BoolVar(&iopt.Verify, "verify-index", false, "also print segviz's cross-check of index entries against the segment's .log")
	fs.BoolVar(&iopt.VerifyOnly, "verify-index-only", false, "check indexes without printing their entries")
	fs.BoolVar(&iopt.SanityOnly, "index-sanity-check", false, "run Kafka's sanity check on index files")
	// Files may come between flags, as Kafka's option parser allows.
	for rest := args; ; {
		if code := parseFlags(fs, rest, stdout); code >= 0 {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		f.files = append(f.files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if *maxBytes != math.MaxInt32 {
		opt.MaxBytes = max(*maxBytes, 1)
	}
	iopt.JSON = opt.JSON
	if len(f.files) == 0 {
		fmt.Fprintln(stderr, "segviz dump: no files given")
		fs.Usage()
		return exitUsage
	}
	if opt.JSON {
		return dumpJSON(&f, stdout, stderr)
	}
	s := &dumplog.Session{Stdout: stdout, Stderr: stderr, FS: vfs.OS(), Log: f.log, Index: f.index}
	code := exitOK
	for _, path := range f.files {
		if !checkLink(path, stderr) {
			code = worse(code, exitFailure)
			continue
		}
		if !checkIndexSize(path, stderr) {
			code = worse(code, exitProblem)
			continue
		}
		problems, err := s.Dump(path)
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "segviz dump: %v\n", err)
			code = worse(code, exitFailure)
		case problems > 0:
			code = worse(code, exitProblem)
		case !dumplog.Known(path):
			code = worse(code, exitUsage)
		}
	}
	s.Close()
	return code
}

// dumpJSON dumps the files as JSON lines.
func dumpJSON(f *dumpFlags, stdout, stderr io.Writer) int {
	code := exitOK
	for _, path := range f.files {
		var c int
		if !checkLink(path, stderr) {
			code = worse(code, exitFailure)
			continue
		}
		if !checkIndexSize(path, stderr) {
			code = worse(code, exitProblem)
			continue
		}
		if dumplog.IsIndexFile(path) {
			c = dumpIndexFile(path, f.index, stdout, stderr)
		} else {
			c = dumpFile(path, f.log, stdout, stderr)
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

// checkLink says on stderr that path is a symbolic link, if it is one: the
// dump reads the file it points to, as the other commands do, and says so
// (on stderr, so that standard output stays kafka-dump-log's). It reports
// false, having said why, for a link to nothing, which is refused as a
// file that is not a regular file.
func checkLink(path string, stderr io.Writer) bool {
	li, err := os.Lstat(path)
	if err != nil || li.Mode()&os.ModeSymlink == 0 {
		return true // the open says what is wrong, if anything
	}
	target, _ := os.Readlink(path)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "segviz dump: %v: %s does not exist\n", vfs.CheckRegular(path, li), target)
		return false
	}
	fmt.Fprintf(stderr, "segviz dump: %s is a symbolic link to %s: dumping the file it points to\n", path, target)
	return true
}

// maxIndexBytes is the largest index Kafka writes: segment.index.bytes
// is an int.
const maxIndexBytes = math.MaxInt32

// checkIndexSize reports false, having said why, for an index larger than
// Kafka could have written, which is not dumped: the dump reads an index
// whole, and a sparse 1 TiB one would take hours and as much memory. Kafka's
// own tool cannot map a file that large either.
func checkIndexSize(path string, stderr io.Writer) bool {
	if !dumplog.IsIndexFile(path) {
		return true
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() <= maxIndexBytes {
		return true // the open says what is wrong, if anything
	}
	fmt.Fprintf(stderr, "segviz dump: %s: %d bytes, over the %d bytes Kafka could have written (segment.index.bytes is an int): not read; Kafka, and segviz recover, rebuild it\n", path, fi.Size(), maxIndexBytes)
	return false
}

func dumpFile(path string, opt dumplog.Options, stdout, stderr io.Writer) int {
	// vfs.OS, not os.Open: its open of a FIFO fails at once instead of
	// waiting for a writer.
	f, err := vfs.OS().Open(filepath.ToSlash(path))
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
		fmt.Fprintf(stderr, "segviz dump: %s: --json does not dump %q files (want .log, .checkpoint, .index, .timeindex or .txnindex)\n", path, ext)
		return exitUsage
	}
	opt.Map = maprange.ForReader(f, st.Size()) // the parallel dump reads the file without copying it
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
