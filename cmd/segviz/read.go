package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/describe"
	"github.com/segkit/segkit/internal/dumplog"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

const readHelp = `Usage: segviz read [--from N|earliest|latest|-N | --at TIME] [--limit K]
                   [--isolation read_uncommitted|read_committed]
                   [--remote URI] [--json] DIR

Prints the records of the partition directory DIR as a Kafka consumer
fetching from a broker would get them, from an offset (or from the first
offset at or after a time) on: across segments, and across entries of any
magic (v2 batches, and the v0/v1 messages and compressed wrappers of old
segments). It is the "kcat -C -e" of a partition directory, with no broker.

  --from N       the first offset to read (default: the log start offset);
                 "earliest" (or "beginning") is the log start offset,
                 "latest" (or "end") the end of what the consumer may read
                 (so nothing is printed), -N the N offsets before that end,
                 as kcat's -o -N
  --at TIME      read from the first offset whose timestamp is at or after
                 TIME, as ListOffsets answers: epoch milliseconds, or RFC
                 3339 (2024-06-15T10:20:25Z); nothing is printed when no
                 record is that late. Not with --from
  --limit K      print at most K records (default 0: all)
  --isolation L  read_uncommitted (the default) reads up to the high
                 watermark; read_committed stops at the last stable offset
                 (the first offset of the earliest transaction still open)
                 and leaves out the records of aborted transactions, as a
                 read_committed consumer does
  --remote URI   the remote store that holds the partition's history below
                 its local log start offset (tiered storage, KIP-405):
                 file://DIR, a directory in Kafka's LocalTieredStorage
                 layout (its rsm.config.dir, holding kafka-tiered-storage/).
                 Offsets below the local log start offset ("earliest-local")
                 are read from the remote, then the read goes on with the
                 local log, as a consumer of the broker gets them; earliest
                 is then the remote's first offset, and --at searches the
                 remote first. The segments are those of the remote log
                 metadata "segviz tier upload" writes beside the data
                 (DIR/.segkit-tier); a remote a broker wrote (whose
                 metadata is in its __remote_log_metadata topic) is read
                 from its files alone. The topic id naming the remote
                 partition comes from the partition's partition.metadata.
                 read_committed takes a remote segment's aborted
                 transactions from the remote transaction indexes, from
                 its own on, then the local ones (an ABORT marker may be
                 segments after its records), as the broker's
                 RemoteLogManager does. s3:// is not built into this
                 segviz yet (exit 2)
  --json         one JSON object a line (below)

What a consumer gets: control records (transaction markers, KRaft's
control batches) are never printed, under either isolation level; the
records of a batch that begins below the first offset are skipped; the
read stops at the high watermark, which is the log directory's
replication-offset-checkpoint entry for the partition when it has one
(not 0), else the log end offset. read_committed finds the last stable
offset from the newest producer snapshot at or below the high watermark
and the batches after it, and an aborted transaction from the segments'
.txnindex files, as a broker answers a fetch.

Text output: one record a line, four fields separated by tabs:

  OFFSET  TIMESTAMP  KEY  VALUE

TIMESTAMP is in epoch milliseconds (-1 for a v0 message, which has none).
KEY and VALUE are printed as text when they are printable UTF-8; a tab,
a newline, a carriage return and a backslash are escaped as \t, \n, \r and
\\, any other byte that is not printable UTF-8 as \xNN (so binary keys and
values stay on their line), a non-printable character as \uNNNN. A null
key or value is printed as NULL (as kcat -Z), an empty one as nothing.
Headers are in the JSON only.

JSON output (--json): one object a line, the record objects of
"segviz dump --deep --print-data --json", plus "partition":

  {"type":"record","offset":42,"timestamp":1718446825859,"keySize":3,
   "valueSize":5,"headers":[{"key":"trace","value":"eA=="}],
   "key":"a2V5","value":"aGVsbG8=","partition":"orders-0"}

type is "record"; offset and timestamp as above; keySize and valueSize
are the lengths in bytes, -1 for null; headers lists each header's key
(text) and value (base64, or null); key and value are base64, or null;
partition is the topic-partition, the name of DIR. These field names are
stable.

Reading is read-only: no lock is taken and nothing is created or changed,
in DIR or in the remote, so it may run beside a broker (records the
broker appends meanwhile may or may not be read). Memory holds one fetch
(1 MiB, or one larger batch) at a time, whatever the size of the log.

Exit status: 0 when the records were printed (also when none are in
range), 1 for an offset below the log start offset (the records are gone
from local disk; without --remote nothing can read them) or damaged data
(what was read before it is printed), 2 for a bad command line, 3 when
the partition or the remote could not be read.

Examples:
  segviz read /var/kafka-logs/orders-0
  segviz read --from 1000 --limit 10 /var/kafka-logs/orders-0
  segviz read --at 2024-06-15T10:20:00Z --json /var/kafka-logs/orders-0 | jq .value
  segviz read --isolation read_committed /var/kafka-logs/payments-3
  segviz read --remote file:///var/kafka-tiered --from 0 /var/kafka-logs/orders-0
`

// readFetchBytes is the size of each fetch from the log (a consumer's
// max.partition.fetch.bytes is 1 MiB too). A batch larger than that is
// fetched whole, as Kafka's minOneMessage does.
const readFetchBytes = 1 << 20

// RemoteReader reads the part of a partition's history that a remote
// store (tiered storage) holds below the local log start offset. The read
// falls through to it for offsets below the local log start offset.
type RemoteReader interface {
	// StartOffset is the partition's log start offset: the first offset
	// the remote holds ("earliest", where the local log start offset is
	// "earliest-local").
	StartOffset() (int64, error)
	// ReadFrom returns whole entries (v2 batches or legacy messages, as a
	// .log holds them) from the first one that holds an offset ≥ offset,
	// in offset order, as kafkalog.Log.Read does: about a fetch's worth,
	// at least one entry, none at the remote's end. With committed it
	// also returns the aborted transactions overlapping the entries from
	// the remote segments' transaction indexes, and whether that search
	// was complete; if not, the read finishes it in the local log's, as
	// Kafka's RemoteLogManager.collectAbortedTransactions does.
	ReadFrom(offset int64, committed bool) (RemoteBatches, error)
	// OffsetForTimestamp returns the first offset the remote holds whose
	// timestamp is at or after ts (false: none is that late).
	OffsetForTimestamp(ts int64) (int64, bool, error)
	// Close releases the remote.
	Close() error
}

// RemoteBatches is what a RemoteReader returns for one read.
type RemoteBatches struct {
	// Records holds whole entries; the first may begin below the offset
	// asked for. It may alias the reader's buffer until the next call.
	Records []byte
	// AbortedTxns lists the aborted transactions overlapping Records
	// (read_committed only).
	AbortedTxns []index.AbortedTxn
	// Complete says the search for them ended in the remote.
	Complete bool
}

// openRemote opens the remote store at dir (from --remote file://dir)
// for the partition directory pdir: a directory in Kafka's
// LocalTieredStorage layout (tier.Dir over the OS), read-only. The
// partition's remote name needs its topic id, from pdir's
// partition.metadata, or, without one, the only partition directory of
// the remote named after pdir's topic and partition. The segments are
// those of the remote log metadata segkit keeps beside the data
// (tier.Dir); a remote without any (as a broker writes it: the broker
// keeps its metadata in __remote_log_metadata) is read from its file
// names and .log files alone (tier.Dir.Discover).
func openRemote(fsys vfs.FS, dir, pdir string) (RemoteReader, error) {
	st, err := fsys.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	tp, err := remotePartition(fsys, dir, pdir)
	if err != nil {
		return nil, err
	}
	d := tier.NewDir(fsys, dir)
	meta, discovered, err := remoteMetadata(d, tp)
	if err != nil {
		return nil, err
	}
	// What is served, as tier.Tier serves it: the finished copies at or
	// above the newest one total retention has begun to delete.
	r := &dirRemote{d: d, tp: tp, discovered: discovered, start: math.MaxInt64, served: tier.RemoteLog(meta).ServedFrom()}
	if len(r.served) > 0 {
		r.start = r.served[0].StartOffset
	}
	return r, nil
}

// remotePartition names the partition directory pdir in the remote at
// dir: its topic and partition with the topic id of its
// partition.metadata, or, without one, of the only partition directory
// of the remote with its topic and partition.
func remotePartition(fsys vfs.FS, dir, pdir string) (tier.TopicIDPartition, error) {
	ctp, err := checkpoint.ParseDirName(path.Base(pdir))
	if err != nil {
		return tier.TopicIDPartition{}, err
	}
	tp := tier.TopicIDPartition{Topic: ctp.Topic, Partition: ctp.Partition}
	pm, err := checkpoint.ReadPartitionMetadata(fsys, pdir)
	switch {
	case err == nil && !pm.TopicID.IsZero():
		tp.TopicID = pm.TopicID
		return tp, nil
	case err == nil || errors.Is(err, fs.ErrNotExist):
		return findRemotePartition(fsys, dir, tp)
	}
	return tp, err
}

// remoteMetadata returns the remote log metadata of tp: segkit's, kept
// beside the data, or, when there is none, what the files alone say
// (tier.Dir.Discover: a remote a broker's LocalTieredStorage wrote, whose
// metadata is in the broker's __remote_log_metadata topic); discovered
// says which.
func remoteMetadata(d *tier.Dir, tp tier.TopicIDPartition) (meta []tier.SegmentMetadata, discovered bool, err error) {
	if meta, err = d.ListSegmentMetadata(tp); err != nil || len(meta) > 0 {
		return meta, false, err
	}
	meta, err = d.Discover(tp)
	return meta, len(meta) > 0, err
}

// findRemotePartition finds tp's topic id in the remote: the only
// partition directory named <topic>-<partition>-<topic id>.
func findRemotePartition(fsys vfs.FS, dir string, tp tier.TopicIDPartition) (tier.TopicIDPartition, error) {
	root := path.Join(dir, tier.RootDirName)
	infos, err := vfs.ReadDir(fsys, root)
	if err != nil {
		return tp, fmt.Errorf("the partition has no %s (no topic id) and the remote has no %s: %w", checkpoint.PartitionMetadataFile, root, err)
	}
	var found []tier.TopicIDPartition
	for _, fi := range infos {
		if got, err := tier.ParsePartitionDirName(fi.Name()); err == nil && got.Topic == tp.Topic && got.Partition == tp.Partition {
			found = append(found, got)
		}
	}
	switch len(found) {
	case 0:
		return tp, fmt.Errorf("the remote %s holds no partition %s-%d", root, tp.Topic, tp.Partition)
	case 1:
		return found[0], nil
	}
	return tp, fmt.Errorf("the remote %s holds %d partitions %s-%d (topic ids differ: the topic was re-created) and the partition has no %s to say which", root, len(found), tp.Topic, tp.Partition, checkpoint.PartitionMetadataFile)
}

// dirRemote is a RemoteReader over a tier.Dir.
type dirRemote struct {
	d          *tier.Dir
	tp         tier.TopicIDPartition
	served     []tier.SegmentMetadata // oldest first
	discovered bool                   // served comes from the files alone
	start      int64                  // the first served offset; MaxInt64 for none
	s          record.Scanner
	walk       describe.Walker
}

func (r *dirRemote) StartOffset() (int64, error) { return r.start, nil }

func (r *dirRemote) Close() error { return nil }

// ReadFrom reads about a fetch's worth of whole entries from the first
// served segment whose end reaches offset (tier.ReadSegment: from the
// position its remote offset index gives, on to the first entry whose
// last offset reaches offset); with committed, the aborted transactions
// of the served segments' transaction indexes (tier.AbortedTxns).
func (r *dirRemote) ReadFrom(offset int64, committed bool) (RemoteBatches, error) {
	for _, m := range r.served {
		if m.EndOffset < offset {
			continue
		}
		b, err := tier.ReadSegment(r.d, m, offset, readFetchBytes)
		if err != nil || len(b) == 0 {
			if err != nil {
				return RemoteBatches{}, err
			}
			continue
		}
		out := RemoteBatches{Records: b}
		if committed {
			out.AbortedTxns, out.Complete, err = tier.AbortedTxns(r.d, r.served, offset, record.LastOffset(b)+1, nil)
		}
		return out, err
	}
	return RemoteBatches{}, nil
}

// OffsetForTimestamp returns the first offset the remote holds whose
// record timestamp is at or after ts, as ListOffsets answers for a tiered
// partition: in the first served segment whose largest timestamp reaches
// ts. false: no remote record is that late.
func (r *dirRemote) OffsetForTimestamp(ts int64) (int64, bool, error) {
	for _, m := range r.served {
		if m.MaxTimestampMs < ts {
			continue
		}
		for next := m.StartOffset; next <= m.EndOffset; {
			b, err := tier.ReadSegment(r.d, m, next, readFetchBytes)
			if err != nil || len(b) == 0 {
				return 0, false, err
			}
			r.s.Reset(b, "", 0)
			for r.s.Next() {
				e := r.s.Entry()
				for r.walk.Reset(e); r.walk.Next(); {
					// Every batch, control ones too, as
					// LogSegment.findOffsetByTimestamp (and the local
					// segment's) walks them.
					if rec := r.walk.Record(); rec.Offset >= next && rec.Timestamp >= ts {
						return rec.Offset, true, nil
					}
				}
				if err := r.walk.Err(); err != nil {
					return 0, false, fmt.Errorf("%w: the entry holding offsets up to %d: %v", errRecordsDecode, e.LastOffset(), err)
				}
				next = max(next, e.LastOffset()+1)
			}
			if err := r.s.Err(); err != nil {
				return 0, false, err
			}
		}
	}
	return 0, false, nil
}

// parseRemote parses a --remote URI: file://DIR, a directory.
func parseRemote(uri string) (string, error) {
	dir, ok := strings.CutPrefix(uri, "file://")
	switch {
	case !ok:
		return "", fmt.Errorf("--remote %q: want file://DIR, a LocalTieredStorage directory (no other remote is supported)", uri)
	case dir == "":
		return "", fmt.Errorf("--remote %q: no directory after file://", uri)
	}
	return dir, nil
}

// readFlags are the flags of segviz read.
type readFlags struct {
	from      string // "" when not given
	at        string // "" when not given
	limit     int64
	isolation string
	remote    string
	json      bool
	dir       string
}

// readStart is where a read starts, as the flags say.
type readStart struct {
	kind int   // one of the startX constants
	n    int64 // the offset (startOffset), the count (startFromEnd) or the time (startAt)
}

const (
	startEarliest = iota
	startLatest
	startOffset
	startFromEnd // -N: N before the end
	startAt
)

// parseFrom parses --from.
func parseFrom(v string) (readStart, error) {
	switch v {
	case "earliest", "beginning", "":
		return readStart{kind: startEarliest}, nil
	case "latest", "end":
		return readStart{kind: startLatest}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return readStart{}, fmt.Errorf("--from %q: want an offset, -N (N before the end), earliest or latest", v)
	}
	if n < 0 {
		if n == -n { // math.MinInt64
			return readStart{}, fmt.Errorf("--from %q: out of range", v)
		}
		return readStart{kind: startFromEnd, n: -n}, nil
	}
	return readStart{kind: startOffset, n: n}, nil
}

// parseAt parses --at: epoch milliseconds or RFC 3339.
func parseAt(v string) (int64, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("--at %q: a time is not negative", v)
		}
		return n, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return 0, fmt.Errorf("--at %q: want epoch milliseconds or an RFC 3339 time (2024-06-15T10:20:25Z)", v)
	}
	if ms := t.UnixMilli(); ms >= 0 {
		return ms, nil
	}
	return 0, fmt.Errorf("--at %q: before 1970", v)
}

func runRead(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("read", readHelp, stderr)
	var f readFlags
	fs.Func("from", "the first `offset` (N, -N, earliest, latest; default the log start offset)", func(v string) error {
		if v == "" {
			return errors.New("empty offset")
		}
		f.from = v
		return nil
	})
	fs.Func("at", "read from the first offset at or after `TIME` (epoch ms or RFC 3339)", func(v string) error {
		if v == "" {
			return errors.New("empty time")
		}
		f.at = v
		return nil
	})
	fs.Int64Var(&f.limit, "limit", 0, "print at most `K` records (0: all)")
	fs.StringVar(&f.isolation, "isolation", "read_uncommitted", "read_uncommitted or read_committed")
	fs.StringVar(&f.remote, "remote", "", "the remote store below the local log start offset: file://`DIR`, a LocalTieredStorage directory")
	fs.BoolVar(&f.json, "json", false, "print JSON lines")
	var dirs []string
	// The directory may come between flags.
	for rest := args; ; {
		if code := parseFlags(fs, rest, stdout); code >= 0 {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		dirs = append(dirs, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "segviz read: "+format+"\n", a...)
		return exitUsage
	}
	if len(dirs) != 1 {
		return usageErr("give one partition directory (got %d arguments); see segviz read --help", len(dirs))
	}
	f.dir = dirs[0]
	start, err := parseFrom(f.from)
	if err != nil {
		return usageErr("%v", err)
	}
	if f.at != "" {
		if f.from != "" {
			return usageErr("--from and --at both say where to start: give one")
		}
		ts, err := parseAt(f.at)
		if err != nil {
			return usageErr("%v", err)
		}
		start = readStart{kind: startAt, n: ts}
	}
	if f.limit < 0 {
		return usageErr("--limit %d: want a count, or 0 for all", f.limit)
	}
	var committed bool
	switch f.isolation {
	case "read_uncommitted":
	case "read_committed":
		committed = true
	default:
		return usageErr("--isolation %q: want read_uncommitted or read_committed", f.isolation)
	}
	dir := filepath.ToSlash(filepath.Clean(f.dir))
	var remote RemoteReader
	if f.remote != "" {
		rdir, err := parseTierRemote(f.remote)
		if err != nil {
			return usageErr("%v", err)
		}
		remote, err = openRemote(vfs.OS(), rdir, dir)
		if err != nil {
			fmt.Fprintf(stderr, "segviz read: --remote %s: %v\n", f.remote, err)
			var ce *format.CorruptionError
			if errors.As(err, &ce) {
				return exitProblem
			}
			return exitFailure
		}
		defer remote.Close()
	}
	return readPartition(vfs.OS(), dir, start, f.limit, committed, remote, f.json, stdout, stderr)
}

// partitionRead is one run of segviz read over an open log.
type partitionRead struct {
	l          *kafkalog.Log
	remote     RemoteReader
	committed  bool
	localStart int64 // the local log start offset
	earliest   int64 // the log start offset: the remote's first, or localStart
	upper      int64 // the high watermark, or the last stable offset: nothing at or above is read
	limit      int64 // 0: all
	printed    int64

	w         *bufio.Writer
	json      bool
	partition []byte // the JSON string of "partition"
	line      []byte
	buf       []byte
	s         record.Scanner
	walk      describe.Walker
}

// errRecordsDecode wraps a batch whose records do not decode: damaged
// data (exit 1).
var errRecordsDecode = errors.New("records do not decode")

// readPartition opens dir read-only and prints its records from start.
func readPartition(fsys vfs.FS, dir string, start readStart, limit int64, committed bool, remote RemoteReader, asJSON bool, stdout, stderr io.Writer) int {
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintf(stderr, "segviz read: %v\n", err)
		var ce *format.CorruptionError
		if errors.As(err, &ce) {
			return exitProblem
		}
		return exitFailure
	}
	defer l.Close()
	if hw, _ := highWatermark(fsys, dir); hw > 0 {
		l.SetHighWatermark(hw)
	}
	tp := path.Base(dir)
	if t := l.TopicPartition(); t.Partition >= 0 {
		tp = t.String()
	}
	partition, _ := json.Marshal(tp)
	r := &partitionRead{l: l, remote: remote, committed: committed, localStart: l.LogStartOffset(),
		upper: l.HighWatermark(), limit: limit, w: bufio.NewWriterSize(stdout, 64<<10), json: asJSON, partition: partition}
	if committed {
		lso, err := l.ReplayLastStableOffset(r.upper)
		if err != nil {
			return r.fail(err, stderr)
		}
		r.upper = lso
	}
	from, ok, err := r.startOffset(start)
	if err != nil {
		return r.fail(err, stderr)
	}
	if !ok {
		return exitOK // no record at or after --at
	}
	if remote != nil && from < r.earliest {
		fmt.Fprintf(stderr, "segviz read: offset %d is below the log start offset %d of %s and its remote: those records are gone (deleted by total retention)\n", from, r.earliest, dir)
		return exitProblem
	}
	if from < r.localStart && remote == nil {
		fmt.Fprintf(stderr, "segviz read: offset %d is below the log start offset %d of %s: those records are gone from local disk (deleted by retention, or held by a remote store; give it with --remote)\n", from, r.localStart, dir)
		return exitProblem
	}
	if from > l.LogEndOffset() {
		fmt.Fprintf(stderr, "segviz read: offset %d is past the log end offset %d of %s: no records\n", from, l.LogEndOffset(), dir)
		return exitOK
	}
	err = r.run(from)
	if ferr := r.w.Flush(); err == nil && ferr != nil {
		fmt.Fprintf(stderr, "segviz read: %v\n", ferr)
		return exitFailure
	}
	if err != nil {
		return r.fail(err, stderr)
	}
	return exitOK
}

// fail reports err and returns its exit code: 1 for damaged data, 3 for
// the rest.
func (r *partitionRead) fail(err error, stderr io.Writer) int {
	r.w.Flush()
	fmt.Fprintf(stderr, "segviz read: %v\n", err)
	var ce *format.CorruptionError
	if errors.As(err, &ce) || errors.Is(err, errRecordsDecode) || errors.Is(err, kafkalog.ErrOffsetOutOfRange) {
		return exitProblem
	}
	return exitFailure
}

// startOffset resolves where the read starts; false when --at finds no
// record that late.
func (r *partitionRead) startOffset(s readStart) (int64, bool, error) {
	earliest := r.localStart
	if r.remote != nil {
		o, err := r.remote.StartOffset()
		if err != nil {
			return 0, false, err
		}
		earliest = min(earliest, o)
	}
	r.earliest = earliest
	switch s.kind {
	case startEarliest:
		return earliest, true, nil
	case startLatest:
		return r.upper, true, nil
	case startFromEnd:
		return max(r.upper-min(s.n, r.upper), earliest), true, nil
	case startAt:
		// The remote first, as ListOffsets does for a tiered partition,
		// then the local log's time indexes.
		if r.remote != nil {
			o, found, err := r.remote.OffsetForTimestamp(s.n)
			if err != nil || found {
				return o, found, err
			}
		}
		to, found, err := r.l.OffsetForTimestamp(s.n)
		if err != nil || !found {
			return 0, false, err
		}
		return to.Offset, true, nil
	}
	return s.n, true, nil
}

// fetch reads the entries from the first that holds offset next: from
// the remote below the local log start offset, else from the local log.
func (r *partitionRead) fetch(next int64) ([]byte, []index.AbortedTxn, error) {
	if next < r.localStart && r.remote != nil {
		b, err := r.remote.ReadFrom(next, r.committed)
		if err != nil || !r.committed || b.Complete || len(b.Records) == 0 {
			return b.Records, b.AbortedTxns, err
		}
		// The remote's indexes did not complete the search: the ABORT
		// markers may be in the local segments.
		local, err := r.l.AbortedTxns(next, record.LastOffset(b.Records)+1)
		return b.Records, append(b.AbortedTxns, local...), err
	}
	iso := kafkalog.IsolationHighWatermark
	if r.committed {
		iso = kafkalog.IsolationCommitted
	}
	res, err := r.l.Read(next, readFetchBytes, r.buf[:0], kafkalog.ReadOptions{Isolation: iso})
	if err != nil {
		return nil, nil, err
	}
	r.buf = res.Records
	return res.Records, res.AbortedTxns, nil
}

// run prints the records from offset from up to r.upper, fetch by fetch.
func (r *partitionRead) run(from int64) error {
	next := from
	for next < r.upper && !r.full() {
		recs, aborted, err := r.fetch(next)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			if next < r.localStart && r.remote != nil {
				next = r.localStart // past the remote's end: on with the local log
				continue
			}
			return nil
		}
		before := next
		next, err = r.entries(recs, aborted, next)
		if err != nil {
			return err
		}
		if err := r.w.Flush(); err != nil {
			return err
		}
		if next == before {
			return nil // no whole entry at or above next: nothing more to read
		}
	}
	return nil
}

func (r *partitionRead) full() bool { return r.limit > 0 && r.printed >= r.limit }

// entries prints the records of the fetched entries b that a consumer
// gets, from offset next on, and returns the offset to fetch next. It
// filters as Kafka's consumer does (CompletedFetch.nextFetchedBatch):
// under read_committed, an aborted transaction's producer is marked
// aborted from the transaction's first offset on, its transactional
// batches are skipped until its ABORT marker, and control batches are
// never returned.
func (r *partitionRead) entries(b []byte, aborted []index.AbortedTxn, next int64) (int64, error) {
	aborted = slices.SortedFunc(slices.Values(aborted), func(a, b index.AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	abortedPIDs := map[int64]bool{}
	r.s.Reset(b, "", 0)
	for r.s.Next() {
		e := r.s.Entry()
		last := e.LastOffset()
		skip := false
		if e.Magic == record.MagicV2 {
			h := &e.Batch.BatchHeader
			if r.committed && h.ProducerID != record.NoProducerID {
				for len(aborted) > 0 && aborted[0].FirstOffset <= last {
					abortedPIDs[aborted[0].ProducerID] = true
					aborted = aborted[1:]
				}
				if h.Attributes.IsControl() {
					if _, abort := r.walk.TxnMarkers(e); abort {
						delete(abortedPIDs, h.ProducerID)
					}
				} else if h.Attributes.IsTransactional() && abortedPIDs[h.ProducerID] {
					skip = true
				}
			}
			skip = skip || h.Attributes.IsControl()
		}
		if !skip {
			for r.walk.Reset(e); r.walk.Next(); {
				rec := r.walk.Record()
				if rec.Offset < next {
					continue
				}
				if rec.Offset >= r.upper || r.full() {
					return r.upper, nil // done
				}
				r.print(rec)
			}
			if err := r.walk.Err(); err != nil {
				return next, fmt.Errorf("%w: the entry holding offsets up to %d: %v", errRecordsDecode, last, err)
			}
		}
		next = max(next, last+1)
		if r.full() {
			return r.upper, nil
		}
	}
	return next, r.s.Err()
}

// print writes one record.
func (r *partitionRead) print(rec *describe.Record) {
	r.printed++
	line := r.line[:0]
	if r.json {
		b, err := json.Marshal(dumplog.NewRecordJSON(rec, true))
		if err != nil {
			panic(err) // dumplog's own type always marshals
		}
		// dump's record object, plus "partition" (RecordJSON marshals
		// itself, so embedding it would drop the extra field).
		line = append(line, b[:len(b)-1]...)
		line = append(line, `,"partition":`...)
		line = append(line, r.partition...)
		line = append(line, "}\n"...)
	} else {
		line = strconv.AppendInt(line, rec.Offset, 10)
		line = append(line, '\t')
		line = strconv.AppendInt(line, rec.Timestamp, 10)
		line = append(line, '\t')
		line = appendPrintable(line, rec.Key)
		line = append(line, '\t')
		line = appendPrintable(line, rec.Value)
		line = append(line, '\n')
	}
	r.w.Write(line)
	r.line = line
}

// appendPrintable appends b as text that stays on one line and one field:
// printable UTF-8 as it is, \t \n \r \\ escaped, other bytes as \xNN and
// other non-printable characters as \uNNNN; NULL for nil.
func appendPrintable(dst, b []byte) []byte {
	if b == nil {
		return append(dst, "NULL"...)
	}
	const hex = "0123456789abcdef"
	for len(b) > 0 {
		c, size := utf8.DecodeRune(b)
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, '\\', 'x', hex[b[0]>>4], hex[b[0]&15])
		case c == '\\':
			dst = append(dst, `\\`...)
		case c == '\t':
			dst = append(dst, `\t`...)
		case c == '\n':
			dst = append(dst, `\n`...)
		case c == '\r':
			dst = append(dst, `\r`...)
		case c < 0x80 && !unicode.IsPrint(c):
			dst = append(dst, '\\', 'x', hex[c>>4], hex[c&15])
		case !unicode.IsPrint(c):
			if c > 0xffff {
				dst = fmt.Appendf(dst, `\U%08x`, c)
			} else {
				dst = fmt.Appendf(dst, `\u%04x`, c)
			}
		default:
			dst = append(dst, b[:size]...)
		}
		b = b[size:]
	}
	return dst
}
