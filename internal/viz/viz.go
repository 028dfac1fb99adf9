package viz

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// Errors a method returns for bad requests; the HTTP API maps them to 400
// and 404, the bridge passes their text to the page.
var (
	// ErrBadRequest is returned for a missing or malformed parameter.
	ErrBadRequest = errors.New("viz: bad request")
	// ErrNotFound is returned for a partition, segment or file that does
	// not exist (it also matches fs.ErrNotExist).
	ErrNotFound = errors.New("viz: not found")
	// ErrCancelled is returned by a Verify that Cancel stopped.
	ErrCancelled = errors.New("viz: cancelled")
)

// Limits of one call. They are variables so that tests can shrink them.
var (
	// MaxScanBytes bounds the .log bytes one scan call walks.
	MaxScanBytes int64 = 16 << 20
	// MaxScanRows bounds the rows one scan call returns.
	MaxScanRows = 20000
	// MaxBatches bounds the rows of one batches call.
	MaxBatches = 500
	// MaxRecords bounds the records of one records call.
	MaxRecords = 500
	// MaxValueBytes bounds each key, value and header value returned.
	MaxValueBytes = 64 << 10
	// MaxBytes bounds one bytes call.
	MaxBytes = 256 << 10
	// MaxLayoutFields bounds the fields of one layout call.
	MaxLayoutFields = 5000
	// MaxIndexEntries bounds one index call.
	MaxIndexEntries = 100000
	// MaxDecompressed bounds the decompressed size of one batch.
	MaxDecompressed = 64 << 20
)

// Options configure a Session.
type Options struct {
	// Name is what the page calls the source ("kafka-logs", "demo", the
	// dropped folder's name).
	Name string
	// Now is the time "now" controls start at; nil means the wall clock.
	Now func() time.Time
	// Demo marks the built-in demo, whose Notes the page shows.
	Demo bool
	// Notes are remarks per partition directory and segment base offset.
	Notes map[string]map[int64]string
	// Config returns the topic config of a partition directory; nil means
	// Kafka's defaults (a partition directory holds no topic config).
	Config func(dir string) config.Config
	// Remote returns what a partition directory's remote store (tiered
	// storage) holds, for the strip to show the remote segments with the
	// local ones; nil (or a nil answer) when it has none. The FS shows the
	// remote segments below the local ones as the partition's (a
	// tier.View), so that every view reads them.
	Remote func(dir string) *RemoteJSON
}

// Session answers questions about the partitions of one filesystem.
type Session struct {
	fsys vfs.FS
	opt  Options

	mu       sync.Mutex
	logs     map[string]*partition
	progress map[string]*progress
}

// NewSession returns a session over fsys, which it only reads.
func NewSession(fsys vfs.FS, opt Options) *Session {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Config == nil {
		opt.Config = func(string) config.Config { return config.Default() }
	}
	return &Session{fsys: fsys, opt: opt, logs: map[string]*partition{}}
}

// FS returns the session's filesystem.
func (s *Session) FS() vfs.FS { return s.fsys }

// Close closes every open partition.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for k, p := range s.logs {
		errs = append(errs, p.l.Close())
		delete(s.logs, k)
	}
	return errors.Join(errs...)
}

// Params are a call's parameters, by name, as strings: the query of an API
// request or the properties of the page's object.
type Params map[string]string

// ParamsFromQuery converts an URL query (the first value of each name).
func ParamsFromQuery(q url.Values) Params {
	p := Params{}
	for k, v := range q {
		if len(v) > 0 {
			p[k] = v[0]
		}
	}
	return p
}

func (p Params) str(name string) (string, error) {
	v, ok := p[name]
	if !ok || v == "" {
		return "", fmt.Errorf("%w: missing parameter %q", ErrBadRequest, name)
	}
	return v, nil
}

func (p Params) int64(name string, def int64) (int64, error) {
	v, ok := p[name]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		// The page's numbers may arrive as floats ("1e3", "12.0").
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil || f != float64(int64(f)) {
			return 0, fmt.Errorf("%w: parameter %q: %q is not an integer", ErrBadRequest, name, v)
		}
		n = int64(f)
	}
	return n, nil
}

func (p Params) required64(name string) (int64, error) {
	if _, err := p.str(name); err != nil {
		return 0, err
	}
	return p.int64(name, 0)
}

func (p Params) flag(name string) bool {
	switch p[name] {
	case "1", "true", "yes":
		return true
	}
	return false
}

// Methods lists the methods Dispatch knows, in the order the docs list them.
var Methods = []string{"partitions", "partition", "scan", "batches", "records", "layout", "bytes", "index", "verify", "progress", "cancel", "retention", "simulate", "compaction", "timeline", "whygone", "locate"}

// Dispatch runs the named method with its parameters. The result marshals
// to the JSON the page reads.
func (s *Session) Dispatch(method string, p Params) (any, error) {
	switch method {
	case "partitions":
		return s.Partitions()
	case "partition":
		return s.Partition(p)
	case "scan":
		return s.Scan(p)
	case "batches":
		return s.Batches(p)
	case "records":
		return s.Records(p)
	case "layout":
		return s.Layout(p)
	case "bytes":
		return s.Bytes(p)
	case "index":
		return s.Index(p)
	case "verify":
		return s.Verify(p)
	case "progress":
		return s.Progress(p)
	case "cancel":
		return s.Cancel(p)
	case "retention":
		return s.Retention(p)
	case "simulate":
		return s.Simulate(p)
	case "compaction":
		return s.Compaction(p)
	case "timeline":
		return s.Timeline(p)
	case "whygone":
		return s.WhyGone(p)
	case "locate":
		return s.Locate(p)
	}
	return nil, fmt.Errorf("%w: unknown method %q", ErrBadRequest, method)
}

// PartitionsJSON lists the partitions of the session's filesystem.
type PartitionsJSON struct {
	Name       string          `json:"name"`
	Demo       bool            `json:"demo"`
	Now        int64           `json:"now"`
	Partitions []PartitionItem `json:"partitions"`
}

// PartitionItem is one partition directory found.
type PartitionItem struct {
	Dir       string `json:"dir"`
	Name      string `json:"name"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Segments  int    `json:"segments"`
	Bytes     int64  `json:"bytes"`
}

// Partitions finds the partition directories with inspect.FindPartitions,
// the discovery routine verify uses too: the root itself if it is a
// partition, else the partitions of the log directory or of the tree of log
// directories under it. A root holding no partition gives an empty list.
func (s *Session) Partitions() (*PartitionsJSON, error) {
	out := &PartitionsJSON{Name: s.opt.Name, Demo: s.opt.Demo, Now: s.opt.Now().UnixMilli(), Partitions: []PartitionItem{}}
	found, err := inspect.FindPartitions(s.fsys, ".")
	if errors.Is(err, inspect.ErrNoPartition) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, l := range found {
		item := PartitionItem{Dir: l.Dir, Name: s.dirName(l.Dir)}
		for _, fi := range l.Entries {
			if _, ext, err := segment.ParseFileName(fi.Name()); err == nil && ext == segment.LogSuffix {
				item.Segments++
				item.Bytes += fi.Size()
			}
		}
		item.Topic, item.Partition = topicPartition(item.Name)
		out.Partitions = append(out.Partitions, item)
	}
	return out, nil
}

// dirName is the name shown for a directory: its base name, or the
// session's name for the root.
func (s *Session) dirName(dir string) string {
	if dir == "." || dir == "" || dir == "/" {
		if s.opt.Name != "" {
			return s.opt.Name
		}
		return "."
	}
	return path.Base(dir)
}

func topicPartition(name string) (string, int32) {
	tp, err := checkpoint.ParseDirName(name)
	if err != nil {
		return name, -1
	}
	return tp.Topic, tp.Partition
}

// cleanDir validates a directory parameter: a slash-separated path inside
// the filesystem ("." for the root).
func cleanDir(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%w: missing parameter \"dir\"", ErrBadRequest)
	}
	c := path.Clean("/" + dir)[1:]
	if c == "" {
		c = "."
	}
	if strings.Contains(dir, "\\") || strings.Contains(dir, "\x00") || !fs.ValidPath(c) {
		return "", fmt.Errorf("%w: bad directory %q", ErrBadRequest, dir)
	}
	for _, part := range strings.Split(dir, "/") {
		if part == ".." {
			return "", fmt.Errorf("%w: directory %q leaves the served root", ErrBadRequest, dir)
		}
	}
	return c, nil
}

// cleanFile validates a file name parameter: one name, no directory.
func cleanFile(name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return "", fmt.Errorf("%w: bad file name %q", ErrBadRequest, name)
	}
	return name, nil
}

// notFound wraps err, when it is a not-exist error, so that it matches
// ErrNotFound too.
func notFound(err error) error {
	if err != nil && errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}

// partition is an open partition directory.
type partition struct {
	dir string
	l   *kafkalog.Log
	cfg config.Config

	mu        sync.Mutex
	summaries []*logSummary // most recently used last
}

// open returns the open partition dir, opening it (read-only) if needed;
// reload reopens it, for a directory a broker is still writing.
func (s *Session) open(dir string, reload bool) (*partition, error) {
	dir, err := cleanDir(dir)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.logs[dir]; ok {
		if !reload {
			return p, nil
		}
		p.l.Close()
		delete(s.logs, dir)
	}
	st, err := s.fsys.Stat(dir)
	if err != nil {
		return nil, notFound(err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a directory", ErrBadRequest, dir)
	}
	cfg := s.opt.Config(dir)
	l, err := kafkalog.Open(s.fsys, dir, cfg, kafkalog.Options{ReadOnly: true, Clock: nowClock(s.opt.Now)})
	if err != nil {
		return nil, notFound(err)
	}
	p := &partition{dir: dir, l: l, cfg: cfg}
	s.logs[dir] = p
	return p, nil
}

type nowClock func() time.Time

func (c nowClock) Now() time.Time { return c() }

// segment returns the segment of p whose base offset is base.
func (p *partition) segment(base int64) (kafkalog.SegmentView, bool, error) {
	segs := p.l.Segments()
	for i, sg := range segs {
		if sg.BaseOffset() == base {
			return sg, i == len(segs)-1, nil
		}
	}
	return kafkalog.SegmentView{}, false, fmt.Errorf("%w: partition %s has no segment %d", ErrNotFound, p.dir, base)
}

// partitionParam opens the partition of p["dir"] (again if reload).
func (s *Session) partitionParam(q Params, reload bool) (*partition, error) {
	dir, err := q.str("dir")
	if err != nil {
		return nil, err
	}
	return s.open(dir, reload)
}

// segmentParam opens the partition of p["dir"] and finds p["base"].
func (s *Session) segmentParam(q Params) (*partition, kafkalog.SegmentView, bool, error) {
	p, err := s.partitionParam(q, false)
	if err != nil {
		return nil, kafkalog.SegmentView{}, false, err
	}
	base, err := q.required64("base")
	if err != nil {
		return nil, kafkalog.SegmentView{}, false, err
	}
	sg, active, err := p.segment(base)
	return p, sg, active, err
}
