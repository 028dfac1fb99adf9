// Command segviz-lake is the indexer's command line: it indexes Kafka
// partition directories into a catalog, lists the catalog's data files
// with their statistics, and rebuilds a data file's bytes. It is a
// binary of the lake module (Parquet and SQL drivers stay out of
// segkit's core); "segviz lake …" runs it.
//
//	segviz-lake index   --catalog CATALOG [--once] [--table NAME] [--history H] DIR|kafka://HOST:PORT/TOPIC
//	segviz-lake files   --catalog CATALOG [--table NAME] [--where EXPR] [--expired] [--json]
//	segviz-lake rebuild --catalog CATALOG --dir DIR|--broker kafka://HOST:PORT/TOPIC [-o FILE] FILE-ID > f.parquet
//
// CATALOG is sqlite:PATH or a postgres:// (postgresql://) URL. The
// source is a partition (or log) directory, read with segkit's engine,
// or a topic on a live cluster, read as a read_committed consumer reads.
//
// Exit codes: 0 ok; 1 a problem found (a rebuilt file does not match its
// checksum); 2 usage (bad flags or arguments, binary output to a
// terminal); 3 failure (the catalog, the directory or the indexer
// failed).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/lake"
	"github.com/segkit/segkit/vfs"
)

// Exit codes.
const (
	exitOK      = 0
	exitProblem = 1
	exitUsage   = 2
	exitFailure = 3
)

const usage = `segviz-lake: a Kafka partition's committed records as Parquet data files
with exact statistics, in a catalog (no data file is stored; rebuild
builds one again from the partition).

Usage:
  segviz-lake index   --catalog CATALOG [--once] [--table NAME] [--history H] SOURCE
  segviz-lake files   --catalog CATALOG [--table NAME] [--where EXPR] [--expired] [--json]
  segviz-lake rebuild --catalog CATALOG --dir DIR|--broker kafka://… [-o FILE] FILE-ID > f.parquet

CATALOG is sqlite:PATH or postgres://… . SOURCE is a partition (or log)
directory or kafka://HOST:PORT[,HOST:PORT…]/TOPIC, a live cluster's
topic. "segviz-lake COMMAND --help"
describes a command.

Exit codes: 0 ok, 1 problem found (checksum mismatch), 2 usage,
3 failure.
`

// env is what a run sees of the process: its output streams, whether
// they are terminals, and the signals that stop it.
type env struct {
	stdout, stderr       io.Writer
	stdoutTTY, stderrTTY bool
	// ctx ends when the process is asked to stop (SIGINT, SIGTERM).
	ctx context.Context
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := env{stdout: os.Stdout, stderr: os.Stderr, stdoutTTY: isTerminal(os.Stdout), stderrTTY: isTerminal(os.Stderr), ctx: ctx}
	os.Exit(run(e, os.Args[1:]))
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// run runs the command line args and returns the exit code.
func run(e env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(e.stdout, usage)
		return exitOK
	case "index":
		return cmdIndex(e, args[1:])
	case "files":
		return cmdFiles(e, args[1:])
	case "rebuild":
		return cmdRebuild(e, args[1:])
	}
	fmt.Fprintf(e.stderr, "segviz-lake: unknown command %q\n\n%s", args[0], usage)
	return exitUsage
}

// parseFlags parses a command's flags; help is printed to stdout for --help.
// It returns the exit code to stop with, or -1 to go on.
func parseFlags(e env, fs *flag.FlagSet, help string, args []string) int {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, help)
			fs.SetOutput(e.stdout)
			fs.PrintDefaults()
			return exitOK
		}
		fmt.Fprintf(e.stderr, "segviz-lake %s: %v\n\n%s", fs.Name(), err, help)
		fs.SetOutput(e.stderr)
		fs.PrintDefaults()
		return exitUsage
	}
	return -1
}

func usageErr(e env, cmd, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "segviz-lake %s: %s (see segviz-lake %s --help)\n", cmd, fmt.Sprintf(format, args...), cmd)
	return exitUsage
}

func failure(e env, cmd string, err error) int {
	fmt.Fprintf(e.stderr, "segviz-lake %s: %v\n", cmd, err)
	return exitFailure
}

// openCatalog opens sqlite:PATH or a postgres:// URL.
func openCatalog(ctx context.Context, spec string) (*lake.SQLStore, error) {
	switch {
	case strings.HasPrefix(spec, "sqlite:"):
		p := strings.TrimPrefix(spec, "sqlite:")
		if p == "" {
			return nil, errors.New("sqlite: needs a path")
		}
		return lake.OpenSQLite(ctx, p, lake.StoreOptions{})
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		return lake.OpenPostgres(ctx, spec, lake.StoreOptions{})
	}
	return nil, fmt.Errorf("catalog %q: want sqlite:PATH or postgres://…", spec)
}

func validCatalog(spec string) bool {
	return (strings.HasPrefix(spec, "sqlite:") && len(spec) > len("sqlite:")) ||
		strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://")
}

// ---- index

const indexHelp = `Usage: segviz-lake index --catalog CATALOG [--once] [--table NAME] [--history H]
                         [--partition-discovery D] SOURCE

Indexes the committed records of Kafka partitions into the catalog.
SOURCE is one of

  DIR                          a partition directory (TOPIC-N), or a log
                               directory holding partition directories
                               (each live TOPIC-N in it; renamed
                               -delete/-future ones are left out), read
                               with segkit's engine, read-only: a copy, or
                               a broker's live directory
  kafka://HOST:PORT[,…]/TOPIC  every partition of TOPIC on a live cluster,
                               read as a read_committed consumer reads
                               (Fetch and ListOffsets to each partition's
                               leader; plain TCP, no authentication)

Every partition gets an indexer (under its lease in the catalog); a
partition never indexed starts at its last stable offset and backfills
the history before it (--history). Both sources give the same files for
the same partition.

Without --once it runs until stopped (SIGINT, SIGTERM), following the
partitions (and, from a cluster, indexing a partition added to the topic
later, looked for every --partition-discovery); with --once it indexes
each partition up to its last stable offset, backfill included, and
exits. Progress goes to
stderr when stderr is a terminal, nothing otherwise.

  segviz-lake index --catalog sqlite:cat.db --once /var/lib/kafka/orders-0
  segviz-lake index --catalog postgres://lake@db/lake kafka://k1:9092,k2:9092/orders

Exit codes: 0 ok (or stopped), 2 usage, 3 failure (a partition's indexer
failed, the cluster could not be reached, or a lease is held by another
indexer under --once).

Flags:
`

// partitionDir is one partition to index.
type partitionDir struct {
	path string
	tp   checkpoint.TopicPartition
}

// partitionsOf lists the partitions of dir: dir itself if it is a
// partition directory, else its live partition subdirectories.
func partitionsOf(dir string) ([]partitionDir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	if tp, err := checkpoint.ParseDirName(filepath.Base(abs)); err == nil && hasSegments(abs) {
		return []partitionDir{{abs, tp}}, nil
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	var out []partitionDir
	for _, de := range ents {
		if !de.IsDir() {
			continue
		}
		tp, err := checkpoint.ParseDirName(de.Name())
		if err != nil {
			continue
		}
		out = append(out, partitionDir{filepath.Join(abs, de.Name()), tp})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: neither a partition directory (TOPIC-N with segments) nor a log directory with partition directories", dir)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].tp.Topic != out[j].tp.Topic {
			return out[i].tp.Topic < out[j].tp.Topic
		}
		return out[i].tp.Partition < out[j].tp.Partition
	})
	return out, nil
}

func hasSegments(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	return len(m) > 0
}

func parseHistory(s string) (lake.History, error) {
	switch {
	case s == "" || s == "all":
		return lake.History{Mode: lake.HistoryAll}, nil
	case s == "none":
		return lake.History{Mode: lake.HistoryNone}, nil
	case strings.HasPrefix(s, "since="):
		t, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(s, "since="))
		if err != nil {
			return lake.History{}, fmt.Errorf("--history %s: %v", s, err)
		}
		return lake.History{Mode: lake.HistorySince, Since: t}, nil
	}
	return lake.History{}, fmt.Errorf("--history %q: want all, none or since=RFC3339-TIME", s)
}

// indexJob is one partition's indexer.
type indexJob struct {
	name      string // the partition directory, or the kafka:// URL
	table     string
	partition int32
	x         *lake.Indexer
	err       error
}

func cmdIndex(e env, args []string) int {
	fs := flag.NewFlagSet("index", flag.ContinueOnError)
	catSpec := fs.String("catalog", "", "the catalog: sqlite:PATH or postgres://…")
	once := fs.Bool("once", false, "index up to the last stable offset, backfill included, and exit")
	table := fs.String("table", "", "the table name (default: the topic's); with a log directory, only the topic of that name")
	history := fs.String("history", "all", "the history a new partition backfills: all, none, or since=RFC3339-TIME")
	discover := fs.Duration("partition-discovery", 30*time.Second, "from a cluster without --once: how often to look for partitions added to the topic")
	if c := parseFlags(e, fs, indexHelp, args); c >= 0 {
		return c
	}
	if !validCatalog(*catSpec) {
		return usageErr(e, "index", "--catalog sqlite:PATH or postgres://… is required")
	}
	if *discover <= 0 {
		return usageErr(e, "index", "--partition-discovery %v: want a positive duration", *discover)
	}
	if fs.NArg() != 1 {
		return usageErr(e, "index", "want one SOURCE (a directory or kafka://HOST:PORT/TOPIC), got %d arguments", fs.NArg())
	}
	h, err := parseHistory(*history)
	if err != nil {
		return usageErr(e, "index", "%v", err)
	}
	source := fs.Arg(0)
	var bu brokerURL
	var parts []partitionDir
	if isBrokerURL(source) {
		if bu, err = parseBrokerURL(source); err != nil {
			return usageErr(e, "index", "%v", err)
		}
	} else {
		if parts, err = partitionsOf(source); err != nil {
			return failure(e, "index", err)
		}
		if *table != "" && len(parts) > 1 {
			var keep []partitionDir
			for _, p := range parts {
				if p.tp.Topic == *table {
					keep = append(keep, p)
				}
			}
			if len(keep) == 0 {
				return failure(e, "index", fmt.Errorf("%s holds no partition of topic %q", source, *table))
			}
			parts = keep
		}
	}
	ctx := e.ctx
	cat, err := openCatalog(ctx, *catSpec)
	if err != nil {
		return failure(e, "index", err)
	}
	defer cat.Close()
	options := func(topic string, p int32) lake.Options {
		name := topic
		if *table != "" {
			name = *table
		}
		return lake.Options{Table: name, Partition: p, History: h}
	}

	// A partition that fails stops the others: the exit code says so.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu   sync.Mutex // guards jobs
		jobs []*indexJob
		wg   sync.WaitGroup
	)
	// start runs j's indexer; the caller holds a count in wg, or is
	// counted in it, so that Add never races Wait.
	start := func(j *indexJob) {
		mu.Lock()
		jobs = append(jobs, j)
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if *once {
				j.err = j.x.Once(runCtx)
			} else {
				j.err = j.x.Run(runCtx)
			}
			if j.err != nil {
				cancel()
			}
		}()
	}
	var brokerPartitions []int32
	if bu.topic != "" {
		cl, err := bu.client()
		if err != nil {
			return failure(e, "index", err)
		}
		defer cl.Close()
		if brokerPartitions, err = lake.TopicPartitions(ctx, cl, bu.topic); err != nil {
			return failure(e, "index", fmt.Errorf("%s: %v", bu, err))
		}
		var srcs []*lake.BrokerSource
		for _, p := range brokerPartitions {
			src, err := bu.open(ctx, cl, p)
			if err != nil {
				return failure(e, "index", err)
			}
			srcs = append(srcs, src)
		}
		for i, p := range brokerPartitions {
			start(&indexJob{name: bu.String(), table: options(bu.topic, p).Table, partition: p, x: lake.NewIndexer(cat, srcs[i], options(bu.topic, p))})
		}
		if !*once {
			// A partition added to the topic later starts at its last
			// stable offset, as a new partition of an indexed table.
			wg.Add(1)
			go func() {
				defer wg.Done()
				known := map[int32]bool{}
				for _, p := range brokerPartitions {
					known[p] = true
				}
				tick := time.NewTicker(*discover)
				defer tick.Stop()
				for {
					select {
					case <-runCtx.Done():
						return
					case <-tick.C:
					}
					ps, err := lake.TopicPartitions(runCtx, cl, bu.topic)
					if err != nil {
						continue // the next look may reach the cluster
					}
					for _, p := range ps {
						if known[p] {
							continue
						}
						src, err := bu.open(runCtx, cl, p)
						if err != nil {
							continue
						}
						known[p] = true
						start(&indexJob{name: bu.String(), table: options(bu.topic, p).Table, partition: p, x: lake.NewIndexer(cat, src, options(bu.topic, p))})
					}
				}
			}()
		}
	} else {
		var srcs []*lake.DirSource
		defer func() {
			for _, s := range srcs {
				s.Close()
			}
		}()
		for _, p := range parts {
			src, err := lake.OpenDir(vfs.OS(), p.path)
			if err != nil {
				return failure(e, "index", err)
			}
			srcs = append(srcs, src)
		}
		for i, p := range parts {
			o := options(p.tp.Topic, p.tp.Partition)
			start(&indexJob{name: p.path, table: o.Table, partition: p.tp.Partition, x: lake.NewIndexer(cat, srcs[i], o)})
		}
	}

	done := make(chan struct{})
	var progress sync.WaitGroup
	if e.stderrTTY {
		progress.Add(1)
		go func() {
			defer progress.Done()
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				mu.Lock()
				js := slices.Clone(jobs)
				mu.Unlock()
				// From the catalog: an Indexer belongs to its goroutine.
				var parts []string
				for _, j := range js {
					s := fmt.Sprintf("%s-%d starting", j.table, j.partition)
					if id, err := cat.Table(ctx, j.table); err == nil {
						if st, ok, err := cat.State(ctx, id, j.partition); err == nil && ok {
							s = fmt.Sprintf("%s-%d [%d, %d)", j.table, j.partition, st.Start, st.End)
							if st.BackfillTo < st.Start {
								s += fmt.Sprintf(" backfill to %d", st.BackfillTo)
							}
						}
					}
					parts = append(parts, s)
				}
				fmt.Fprintf(e.stderr, "\r\x1b[Kindexed %s", strings.Join(parts, " "))
			}
		}()
	}

	wg.Wait()
	close(done)
	progress.Wait()
	if e.stderrTTY {
		fmt.Fprint(e.stderr, "\r\x1b[K")
	}
	code := exitOK
	for _, j := range jobs {
		stopped := e.ctx.Err() != nil // asked to stop: errors of stopping are not failures
		switch {
		case j.err == nil, stopped && !errors.Is(j.err, lake.ErrLeaseLost):
			if e.stderrTTY {
				st := j.x.State()
				fmt.Fprintf(e.stderr, "%s-%d: indexed [%d, %d)\n", j.table, j.partition, st.Start, st.End)
			}
		case errors.Is(j.err, context.Canceled):
			fmt.Fprintf(e.stderr, "segviz-lake index: %s (table %s partition %d): stopped, as another partition failed\n", j.name, j.table, j.partition)
			code = exitFailure
		default:
			fmt.Fprintf(e.stderr, "segviz-lake index: %s (table %s partition %d): %v\n", j.name, j.table, j.partition, j.err)
			code = exitFailure
		}
	}
	return code
}

// ---- files

const filesHelp = `Usage: segviz-lake files --catalog CATALOG [--table NAME] [--where EXPR] [--expired] [--json]

Lists the catalog's data files (of every table, or of NAME), by table,
partition and offset; expired files (below the partition's earliest
offset) only with --expired.

--json prints one JSON object per file, one per line, with these stable
names:

  {"id","topic","partition","startOffset","endOffset","bucket","rows",
   "bytes","checksum","expired","columns":[{"name","type","min","max",
   "nulls","nans"}]}

startOffset and endOffset are inclusive; bucket is the start of the
file's time bucket (RFC 3339, UTC). min and max are JSON values of the
column's type: a number for int32, int64 and double (±Inf, which JSON
cannot hold, as the strings "Infinity" and "-Infinity"), true/false for
boolean, a string for string and json (the JSON text), for binary (bytes
outside printable ASCII as \xNN) and for timestamp_ms (RFC 3339, UTC,
milliseconds); null when the column holds only nulls (or NaNs).

--where prunes files by their statistics: it keeps the files that may
hold a row for which EXPR is true, and says on stderr how many it
skipped. EXPR is comparisons joined by "and":

  COLUMN OP LITERAL      OP: = == != < <= > >=

COLUMN is a leaf column's name (offset, timestamp, partition, key,
value.amount, …); LITERAL a number, a quoted string ('…' or "…"),
true/false, or for timestamp an RFC 3339 time. A file without the
column, or whose column holds only nulls, is skipped (a comparison with
null is not true); a file whose column's type does not fit the literal
(a field widened to string, say) is kept.

  segviz-lake files --catalog sqlite:cat.db --where 'value.amount > 100'
  segviz-lake files --catalog sqlite:cat.db --where 'offset >= 5 and offset < 10'

Exit codes: 0 ok, 2 usage (a bad EXPR), 3 failure.

Flags:
`

// jsonFile is the --json form of a file: the stable names.
type jsonFile struct {
	ID          int64        `json:"id"`
	Topic       string       `json:"topic"`
	Partition   int32        `json:"partition"`
	StartOffset int64        `json:"startOffset"`
	EndOffset   int64        `json:"endOffset"`
	Bucket      string       `json:"bucket"`
	Rows        int64        `json:"rows"`
	Bytes       int64        `json:"bytes"`
	Checksum    string       `json:"checksum"`
	Expired     bool         `json:"expired"`
	Columns     []jsonColumn `json:"columns"`
}

type jsonColumn struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Min   any    `json:"min"`
	Max   any    `json:"max"`
	Nulls int64  `json:"nulls"`
	NaNs  int64  `json:"nans"`
}

// catalogTimestamp is the layout of a timestamp_ms bound in the catalog.
const catalogTimestamp = "2006-01-02 15:04:05.000+00"

// jsonBound is a catalog bound (text) as a JSON value of its type.
func jsonBound(typ, s string) any {
	switch typ {
	case "int32", "int64":
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return json.Number(s)
		}
	case "double":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			break
		}
		switch {
		case math.IsInf(f, 1):
			return "Infinity"
		case math.IsInf(f, -1):
			return "-Infinity"
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	case "boolean":
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	case "timestamp_ms":
		if t, err := time.Parse(catalogTimestamp, s); err == nil {
			return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
		}
	}
	return s
}

func toJSON(topic string, f lake.DataFile) jsonFile {
	j := jsonFile{
		ID: f.ID, Topic: topic, Partition: f.Partition,
		StartOffset: f.StartOffset, EndOffset: f.EndOffset,
		Bucket: time.UnixMilli(f.Bucket).UTC().Format(time.RFC3339),
		Rows:   f.Rows, Bytes: f.Bytes, Checksum: f.Checksum, Expired: f.Expired,
		Columns: []jsonColumn{},
	}
	for _, c := range f.Columns {
		jc := jsonColumn{Name: c.Name, Type: c.Type, Nulls: c.NullCount, NaNs: c.NaNCount}
		if c.HasMinMax {
			jc.Min, jc.Max = jsonBound(c.Type, c.Min), jsonBound(c.Type, c.Max)
		}
		j.Columns = append(j.Columns, jc)
	}
	return j
}

func cmdFiles(e env, args []string) int {
	fs := flag.NewFlagSet("files", flag.ContinueOnError)
	catSpec := fs.String("catalog", "", "the catalog: sqlite:PATH or postgres://…")
	table := fs.String("table", "", "only the files of this table")
	where := fs.String("where", "", "keep the files whose statistics may satisfy EXPR (see above)")
	expired := fs.Bool("expired", false, "list expired files too")
	asJSON := fs.Bool("json", false, "one JSON object per file")
	if c := parseFlags(e, fs, filesHelp, args); c >= 0 {
		return c
	}
	if !validCatalog(*catSpec) {
		return usageErr(e, "files", "--catalog sqlite:PATH or postgres://… is required")
	}
	if fs.NArg() != 0 {
		return usageErr(e, "files", "unexpected arguments %q", fs.Args())
	}
	var pred expr
	if *where != "" {
		p, err := parseWhere(*where)
		if err != nil {
			return usageErr(e, "files", "--where: %v", err)
		}
		pred = p
	}
	ctx := e.ctx
	cat, err := openCatalog(ctx, *catSpec)
	if err != nil {
		return failure(e, "files", err)
	}
	defer cat.Close()
	tables, err := cat.Tables(ctx)
	if err != nil {
		return failure(e, "files", err)
	}
	var names []string
	for n := range tables {
		if *table == "" || n == *table {
			names = append(names, n)
		}
	}
	if *table != "" && len(names) == 0 {
		return failure(e, "files", fmt.Errorf("no table %q in the catalog", *table))
	}
	sort.Strings(names)
	total, skipped := 0, 0
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	if !*asJSON {
		fmt.Fprintf(e.stdout, "%-6s %-16s %4s %21s %-20s %8s %10s %-14s %s\n", "ID", "TOPIC", "PART", "OFFSETS", "BUCKET", "ROWS", "BYTES", "TRIGGER", "CHECKSUM")
	}
	for _, name := range names {
		id := tables[name]
		parts, err := cat.Partitions(ctx, id)
		if err != nil {
			return failure(e, "files", err)
		}
		for _, p := range parts {
			files, err := cat.Files(ctx, id, p.Partition, *expired)
			if err != nil {
				return failure(e, "files", err)
			}
			for _, f := range files {
				total++
				if pred != nil && !pred.mayMatch(f) {
					skipped++
					continue
				}
				if *asJSON {
					if err := enc.Encode(toJSON(name, f)); err != nil {
						return failure(e, "files", err)
					}
					continue
				}
				exp := ""
				if f.Expired {
					exp = " expired"
				}
				fmt.Fprintf(e.stdout, "%-6d %-16s %4d %21s %-20s %8d %10d %-14s %s%s\n", f.ID, name, f.Partition,
					fmt.Sprintf("%d-%d", f.StartOffset, f.EndOffset), time.UnixMilli(f.Bucket).UTC().Format(time.RFC3339),
					f.Rows, f.Bytes, f.Trigger, f.Checksum, exp)
			}
		}
	}
	if pred != nil {
		fmt.Fprintf(e.stderr, "segviz-lake files: --where skipped %d of %d files\n", skipped, total)
	}
	return exitOK
}

// ---- rebuild

const rebuildHelp = `Usage: segviz-lake rebuild --catalog CATALOG --dir DIR|--broker kafka://HOST:PORT/TOPIC [-o FILE] FILE-ID > f.parquet

Builds the data file FILE-ID (an id of "segviz-lake files") again from
the partition and writes its bytes to stdout (or FILE), after checking
them against the catalog's SHA-256: on a mismatch nothing is written.
DIR is the partition directory, or the log directory holding it
(TABLE-PARTITION, for a table named after its topic); --broker reads the
file's partition of TOPIC from a live cluster instead (read_committed). The file is built
with the indexer's default granularity and field limit, as
"segviz-lake index" indexes. It refuses to write the bytes to a
terminal.

Exit codes: 0 ok, 1 the rebuilt bytes do not match the checksum (the
partition no longer holds the records the file was built from),
2 usage (stdout is a terminal), 3 failure (no such file, the catalog
or the directory).

Flags:
`

func cmdRebuild(e env, args []string) int {
	fs := flag.NewFlagSet("rebuild", flag.ContinueOnError)
	catSpec := fs.String("catalog", "", "the catalog: sqlite:PATH or postgres://…")
	dir := fs.String("dir", "", "the partition directory (or the log directory holding it)")
	broker := fs.String("broker", "", "the topic on a live cluster: kafka://HOST:PORT[,HOST:PORT…]/TOPIC")
	out := fs.String("o", "", "write to FILE instead of stdout")
	if c := parseFlags(e, fs, rebuildHelp, args); c >= 0 {
		return c
	}
	if !validCatalog(*catSpec) {
		return usageErr(e, "rebuild", "--catalog sqlite:PATH or postgres://… is required")
	}
	if (*dir == "") == (*broker == "") {
		return usageErr(e, "rebuild", "one of --dir DIR and --broker kafka://HOST:PORT/TOPIC is required (the catalog stores no data, only where it came from)")
	}
	var bu brokerURL
	if *broker != "" {
		var err error
		if bu, err = parseBrokerURL(*broker); err != nil {
			return usageErr(e, "rebuild", "--broker %v", err)
		}
	}
	if fs.NArg() != 1 {
		return usageErr(e, "rebuild", "want one FILE-ID, got %d arguments", fs.NArg())
	}
	id, err := strconv.ParseInt(fs.Arg(0), 10, 64)
	if err != nil || id <= 0 {
		return usageErr(e, "rebuild", "FILE-ID %q is not a file id", fs.Arg(0))
	}
	if *out == "" && e.stdoutTTY {
		return usageErr(e, "rebuild", "refusing to write Parquet to a terminal: redirect stdout or use -o FILE")
	}
	ctx := e.ctx
	cat, err := openCatalog(ctx, *catSpec)
	if err != nil {
		return failure(e, "rebuild", err)
	}
	defer cat.Close()
	f, err := cat.File(ctx, id)
	if err != nil {
		return failure(e, "rebuild", err)
	}
	name := ""
	tables, err := cat.Tables(ctx)
	if err != nil {
		return failure(e, "rebuild", err)
	}
	for n, tid := range tables {
		if tid == f.Table {
			name = n
		}
	}
	var src lake.Source
	path := ""
	if bu.topic != "" {
		cl, err := bu.client()
		if err != nil {
			return failure(e, "rebuild", err)
		}
		defer cl.Close()
		if src, err = bu.open(ctx, cl, f.Partition); err != nil {
			return failure(e, "rebuild", err)
		}
		path = fmt.Sprintf("%s partition %d", bu, f.Partition)
	} else {
		if path, err = partitionPath(*dir, name, f.Partition); err != nil {
			return failure(e, "rebuild", err)
		}
		ds, err := lake.OpenDir(vfs.OS(), path)
		if err != nil {
			return failure(e, "rebuild", err)
		}
		defer ds.Close()
		src = ds
	}
	b, err := lake.Rebuild(ctx, cat, src, f.Table, f, lake.Options{})
	if errors.Is(err, lake.ErrChecksum) {
		fmt.Fprintf(e.stderr, "segviz-lake rebuild: %v (from %s); nothing written\n", err, path)
		return exitProblem
	}
	if err != nil {
		return failure(e, "rebuild", err)
	}
	if *out != "" {
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			return failure(e, "rebuild", err)
		}
		return exitOK
	}
	if _, err := e.stdout.Write(b); err != nil {
		return failure(e, "rebuild", err)
	}
	return exitOK
}

// partitionPath is dir if it is a partition directory of the partition,
// else its subdirectory TABLE-PARTITION.
func partitionPath(dir, table string, partition int32) (string, error) {
	if tp, err := checkpoint.ParseDirName(filepath.Base(filepath.Clean(dir))); err == nil && hasSegments(dir) {
		if tp.Partition != partition {
			return "", fmt.Errorf("%s is partition %d; the file is of partition %d", dir, tp.Partition, partition)
		}
		return dir, nil
	}
	p := filepath.Join(dir, checkpoint.TopicPartition{Topic: table, Partition: partition}.DirName())
	if !hasSegments(p) {
		return "", fmt.Errorf("%s: no partition directory %s (give the partition directory itself)", dir, filepath.Base(p))
	}
	return p, nil
}
