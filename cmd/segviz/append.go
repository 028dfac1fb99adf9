package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/recordinput"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/vfs"
)

const appendHelp = `Usage: segviz append [--compression none|gzip|snappy|lz4|zstd] [--batch-records N] [--segment.bytes N] [--sync-bytes N] DIR < records.jsonl

Appends records to the partition directory DIR (created if needed), as a
partition leader does: offsets follow the log end offset, batches are
written in Kafka's format, indexes and checkpoints are kept. This is how to
build fixtures for Kafka consumers and tools, or to seed a broker's log
directory offline (stop the broker first; name DIR topic-partition inside
the log directory).

Each input line is one record, a JSON object:

  {"key": BASE64|null, "value": BASE64|null,
   "headers": [{"key": "text", "value": BASE64|null}],
   "timestamp": EPOCH_MS}

key, value and header values are standard base64 (or null, or left out);
a header key is text (Kafka's header keys are strings); timestamp is
optional and defaults to now. Blank lines are skipped; unknown fields are
errors.

The input is streamed: lines are read and checked as they come, and each
batch of --batch-records records is appended as soon as it is full, so
that memory holds one batch, whatever the size of the input. A bad line
(not a JSON object, a key twice in one object, bad base64, a negative
timestamp, a timestamp more than an hour ahead — Kafka 4.x's
message.timestamp.after.max.ms — or a batch larger than
max.message.bytes) is reported with its line number and stops the
appending: the batches appended before the one that holds it stay, made
durable, and nothing from that batch on is written. The rest of the input
is still read and checked, so that every bad line is reported; then the
command says how many records were appended and the line to go on from
(with a corrected input, "tail -n +LINE" appends what a clean run would
have, batch for batch), or that nothing was written. Records stamped
further in the past than retention.ms (7 days by default) are accepted,
with a warning: a broker deletes them at its next retention check.

Output: one JSON line per batch, with the offsets it was given, printed
once the batch is durable (fsync'd: the log is flushed every --sync-bytes
bytes of batches, at each segment roll, and at the end of the input). A
batch printed survives a crash, a kill -9 or a power cut; one not yet
printed may survive or not:

  {"firstOffset":0,"lastOffset":99}

  --compression     codec of the batches (default none)
  --batch-records   records per batch (default 100)
  --segment.bytes   roll a new segment before one would exceed this size.
                    Any value down to the format's floor of 14 bytes is
                    accepted, so that fixtures can have many small segments
                    (below a batch's size, every batch gets its own
                    segment). Below 1048576 (1 MiB, Kafka 4.0's minimum,
                    KIP-1030) a warning says that a 4.x broker would refuse
                    such a topic config.
  --sync-bytes      flush (fsync) the log once this many bytes of batches
                    have been appended since the last flush (default
                    4194304): smaller acknowledges sooner, with more fsyncs

DIR must be a partition directory: named <topic>-<partition>, holding no
partition directories (that is a log directory), inside a directory that is
not itself a partition. The command opens DIR when the first batch is
ready (or at the end of an input too short for one): it locks the log
directory (DIR's parent) as a broker does, with an flock of its .lock
file, and if a broker or another segviz holds it, nothing is written.
Opening the partition cuts only a torn tail (a partial last batch, a
crash's leftover), and says so on stderr; corruption followed by valid
batches stops the command before anything is written: see "segviz
verify", then "segviz salvage" (keeps every valid batch) or "segviz
recover" (Kafka's truncation).

Exit status: 0 when every record was appended, 1 when input lines are bad
(the batches printed were appended, and nothing after them), 2 for a bad
command line or a DIR that is not a partition directory, 3 when the log
could not be written: locked by a broker or another segviz, corrupt, or an
I/O error (the batches printed before the error are durable; later ones
may be in the log or not: check its end with "segviz verify DIR").

Examples:
  echo '{"key":"azE=","value":"aGVsbG8="}' | segviz append /tmp/logs/greetings-0
  segviz append --compression zstd --batch-records 500 orders-0 < orders.jsonl
  segviz append --segment.bytes 1024 --batch-records 1 fixture-0 < small.jsonl   # many segments
  jq -c '{value: (.|tostring|@base64)}' events.json | segviz append events-0
`

// now is the time records without a timestamp get; tests replace it.
var now = time.Now

func runAppend(args []string, stdout, stderr io.Writer) int {
	return appendFrom(os.Stdin, args, stdout, stderr)
}

type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

func appendFrom(stdin io.Reader, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("append", appendHelp, stderr)
	codecName := fs.String("compression", "none", "codec of the batches: none, gzip, snappy, lz4 or zstd")
	batchRecords := fs.Int("batch-records", 100, "records per batch")
	segmentBytes := fs.String(config.SegmentBytes, "", "segment.bytes: roll before a segment would exceed this size (default 1073741824; at least 14)")
	syncBytes := fs.Int("sync-bytes", recordinput.DefaultSyncBytes, "flush (fsync) the log after this many bytes of batches, and print the batches it made durable")
	if code := parseFlags(fs, args, stdout); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "segviz append: want one partition directory")
		fs.Usage()
		return exitUsage
	}
	codec, err := compress.ParseCodec(*codecName)
	if err != nil {
		fmt.Fprintf(stderr, "segviz append: --compression %q: want none, gzip, snappy, lz4 or zstd\n", *codecName)
		return exitUsage
	}
	if *batchRecords < 1 {
		fmt.Fprintf(stderr, "segviz append: --batch-records %d: want at least 1\n", *batchRecords)
		return exitUsage
	}
	if *syncBytes < 1 {
		fmt.Fprintf(stderr, "segviz append: --sync-bytes %d: want at least 1\n", *syncBytes)
		return exitUsage
	}
	props := map[string]string{}
	var parse config.ParseOptions
	if *segmentBytes != "" {
		props[config.SegmentBytes] = *segmentBytes
		if n, err := strconv.ParseInt(*segmentBytes, 10, 64); err == nil && n < config.MinSegmentBytes {
			parse.AllowSmallSegments = true
			if n >= config.LegacyMinSegmentBytes {
				fmt.Fprintf(stderr, "segviz append: warning: segment.bytes %d is below %d (1 MiB), Kafka 4.x's minimum (KIP-1030): a 4.x broker would refuse this topic config; the files themselves are valid for any broker\n", n, config.MinSegmentBytes)
			}
		}
	}
	cfg, err := parse.Parse(props)
	if err != nil {
		fmt.Fprintf(stderr, "segviz append: %v\n", err)
		return exitUsage
	}
	dir := fs.Arg(0)
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		fmt.Fprintf(stderr, "segviz append: %s is not a directory\n", dir)
		return exitUsage
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		fmt.Fprintf(stderr, "segviz append: %v\n", err)
		return exitFailure
	}
	if code := checkPartition("append", vfs.OS(), filepath.ToSlash(abs), stderr); code >= 0 {
		return code
	}

	// Each batch is printed once durable (recordinput.AppendFrom calls OnBatch
	// after the flush that covers it), so that a caller reading the output
	// knows what survives a crash.
	nowMs := now().UnixMilli()
	old := 0
	enc := json.NewEncoder(stdout)
	var encErr error
	sum, err := recordinput.AppendFrom(vfs.OS(), filepath.ToSlash(abs), stdin, recordinput.AppendOptions{
		Codec: codec, BatchRecords: *batchRecords, Config: &cfg, Clock: clockFunc(now), SyncBytes: *syncBytes,
		OnOpen: func(lr kafkalog.LoadReport) { printRemoved(stderr, "append", lr) },
		OnRecord: func(r recordinput.InputRecord) {
			if nowMs-r.Timestamp <= 7*24*3600*1000 {
				return
			}
			if old == 0 {
				fmt.Fprintf(stderr, "segviz append: warning: line %d: timestamp %d is %s old, more than the default retention.ms (7 days): a broker deletes such records at its next retention check\n",
					r.Line, r.Timestamp, time.Duration(nowMs-r.Timestamp)*time.Millisecond)
			}
			old++
		},
		OnBatch: func(r kafkalog.AppendResult) {
			if encErr == nil {
				encErr = enc.Encode(struct {
					FirstOffset int64 `json:"firstOffset"`
					LastOffset  int64 `json:"lastOffset"`
				}{r.FirstOffset, r.LastOffset})
			}
		},
	})
	if old > 1 {
		fmt.Fprintf(stderr, "segviz append: warning: %d records in all are stamped more than 7 days ago\n", old)
	}
	if err != nil {
		return appendError(err, sum, stderr)
	}
	if encErr != nil {
		fmt.Fprintf(stderr, "segviz append: writing the output: %v\n", encErr)
		return exitFailure
	}
	return exitOK
}

// appendError reports err, and what was appended before it (sum): bad
// input lines (exit 1: the batches before the first bad line's were
// appended, nothing after) or a failure (exit 3).
func appendError(err error, sum recordinput.AppendSummary, stderr io.Writer) int {
	var ie *recordinput.InputError
	if errors.As(err, &ie) {
		for i, l := range ie.Lines {
			if i == 20 {
				fmt.Fprintf(stderr, "segviz append: ... and %d more bad lines\n", len(ie.Lines)-20+ie.Omitted)
				break
			}
			fmt.Fprintf(stderr, "segviz append: line %d: %v\n", l.Line, l.Err)
		}
		if len(ie.Lines) <= 20 && ie.Omitted > 0 {
			fmt.Fprintf(stderr, "segviz append: ... and %d more bad lines\n", ie.Omitted)
		}
		if sum.Records == 0 {
			fmt.Fprintln(stderr, "segviz append: nothing was written")
		} else {
			fmt.Fprintf(stderr, "segviz append: %d records in %d batches (offsets %d-%d, input lines before %d) were appended before the first bad line, and are durable; nothing from line %d on was written: append the corrected input from there (tail -n +%d)\n",
				sum.Records, sum.Batches, sum.FirstOffset, sum.LastOffset, sum.ResumeLine, sum.ResumeLine, sum.ResumeLine)
		}
		return exitProblem
	}
	if code := writerError("append", err, stderr); code >= 0 {
		return code
	}
	fmt.Fprintf(stderr, "segviz append: %v\n", err)
	if sum.Records > 0 {
		fmt.Fprintf(stderr, "segviz append: the %d records printed (offsets %d-%d, input lines before %d) are durable\n",
			sum.Records, sum.FirstOffset, sum.LastOffset, sum.ResumeLine)
	}
	if sum.Unacknowledged > 0 {
		fmt.Fprintf(stderr, "segviz append: %d batches after them were written but not made durable: they may be in the log, whole or torn, or not; check its end with \"segviz verify\" before appending the rest\n", sum.Unacknowledged)
	} else {
		fmt.Fprintf(stderr, "segviz append: nothing from line %d on was written\n", sum.ResumeLine)
	}
	return exitFailure
}
