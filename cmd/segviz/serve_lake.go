package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/segkit/segkit/internal/viz"
	"github.com/segkit/segkit/internal/web"
)

// The indexed lane of segviz serve --lake CATALOG: the data files that the
// indexer (the lake module, whose command is segviz-lake) lists for a
// served partition. segviz never imports the lake module (Parquet and the
// SQL drivers stay out of the core): at each request of the page it runs
//
//	segviz-lake files --catalog CATALOG --expired --json
//
// found on PATH, as "segviz lake" does, and keeps the files of the
// requested partition (the catalog's table is the topic's name unless the
// partition was indexed with --table, and a partition directory is named
// TOPIC-PARTITION). Running it afresh each time means a running indexer's
// new files appear at the page's next refresh.

// lakePath is the endpoint, beside the viz methods under /api/.
const lakePath = "/api/lake"

// Bounds of a run of segviz-lake files. They are variables so that tests
// can shrink them.
var (
	// lakeTimeout bounds one run (a catalog that hangs: an unreachable
	// PostgreSQL server, a locked SQLite file).
	lakeTimeout = 30 * time.Second
	// lakeStartTimeout bounds the check at start-up, after which the
	// server starts anyway.
	lakeStartTimeout = 5 * time.Second
	// lakeMaxOutput bounds what is read of its stdout: 64 MiB, some
	// 100 000 files of a few columns.
	lakeMaxOutput int64 = 64 << 20
	// lakeMaxStderr bounds what is kept of its stderr, for the message.
	lakeMaxStderr int64 = 16 << 10
	// lakeMaxFiles bounds the files of one answer: the partition's files
	// of the highest offsets are kept (older ones are the first to expire).
	lakeMaxFiles = 20000
	// lakeQueueWait is how long a request waits while another runs
	// segviz-lake; then it gets 503 with Retry-After, as the API's
	// limiter answers.
	lakeQueueWait = web.DefaultQueueWait
)

// Errors of a run, which the endpoint maps to its status.
var (
	// errLakeNotInstalled: segviz-lake is not on PATH.
	errLakeNotInstalled = errors.New("segviz-lake is not installed (not on PATH): go install github.com/segkit/segkit/lake/cmd/segviz-lake@latest, or from a clone (cd lake && go install ./cmd/segviz-lake), then reload")
	// errLakeFailed: it ran and failed, or printed what is not its JSON.
	errLakeFailed = errors.New("segviz-lake files failed")
)

// lakeFile is one line of segviz-lake files --json (its stable names),
// with each column's bounds also as text (minText, maxText): a JSON
// number beyond 2^53 would lose digits in the page.
type lakeFile struct {
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
	Columns     []lakeColumn `json:"columns"`
}

type lakeColumn struct {
	Name    string          `json:"name"`
	Type    string          `json:"type"`
	Min     json.RawMessage `json:"min"`
	Max     json.RawMessage `json:"max"`
	MinText *string         `json:"minText"`
	MaxText *string         `json:"maxText"`
	Nulls   int64           `json:"nulls"`
	NaNs    int64           `json:"nans"`
}

// lakeJSON is the answer of /api/lake?dir=DIR.
type lakeJSON struct {
	// Enabled is false when segviz serve has no --lake: the page hides
	// the lane.
	Enabled bool `json:"enabled"`
	// Catalog is --lake's catalog, a password in a URL redacted.
	Catalog   string `json:"catalog,omitempty"`
	Dir       string `json:"dir,omitempty"`
	Topic     string `json:"topic,omitempty"`
	Partition int32  `json:"partition"`
	// Files are the partition's data files, in the catalog's order (by
	// offset), expired ones included (expired: true).
	Files []lakeFile `json:"files"`
	// Total counts the partition's files; Truncated says that Files holds
	// only the last lakeMaxFiles of them. CatalogFiles counts every file
	// the catalog listed, of every table and partition.
	Total        int  `json:"total"`
	Truncated    bool `json:"truncated"`
	CatalogFiles int  `json:"catalogFiles"`
	// Note says why no file can be matched (a directory not named
	// TOPIC-PARTITION).
	Note string `json:"note,omitempty"`
	// RanAt is when segviz-lake ran (epoch ms), Took how long (ms).
	RanAt int64 `json:"ranAt,omitempty"`
	Took  int64 `json:"took,omitempty"`
}

// lakeEndpoint serves lakePath; its catalog is "" without --lake, when it
// answers {"enabled": false} and runs nothing.
type lakeEndpoint struct {
	catalog string
	sess    *viz.Session
	// slot lets one run of segviz-lake at a time.
	slot chan struct{}
	// lookPath finds segviz-lake (exec.LookPath; tests may swap it).
	lookPath func(string) (string, error)
}

func newLakeEndpoint(catalog string, sess *viz.Session) *lakeEndpoint {
	return &lakeEndpoint{catalog: catalog, sess: sess, slot: make(chan struct{}, 1), lookPath: exec.LookPath}
}

// validLakeCatalog reports a CATALOG segviz-lake takes.
func validLakeCatalog(spec string) bool {
	return (strings.HasPrefix(spec, "sqlite:") && len(spec) > len("sqlite:")) ||
		strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://")
}

// redactCatalog hides the password of a postgres:// URL.
func redactCatalog(spec string) string {
	if strings.HasPrefix(spec, "sqlite:") {
		return spec
	}
	u, err := url.Parse(spec)
	if err != nil {
		return "postgres://…"
	}
	return u.Redacted()
}

// ServeHTTP answers /api/lake?dir=DIR, behind web.Handler's rules (GET
// and HEAD only, the Host allow-list: it is one of its Config.Extra), with
// JSON answers with {"error"} and a status: 400 no dir, 404 a directory not
// served, 503 segviz-lake not installed (or busy: with Retry-After), 502
// segviz-lake failed.
func (l *lakeEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if l.catalog == "" {
		lakeWriteJSON(w, http.StatusOK, lakeJSON{Enabled: false, Files: []lakeFile{}})
		return
	}
	dir := r.URL.Query().Get("dir")
	if dir == "" {
		lakeError(w, http.StatusBadRequest, `missing parameter "dir"`)
		return
	}
	item, ok, err := l.partition(dir)
	if err != nil {
		lakeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if !ok {
		lakeError(w, http.StatusNotFound, fmt.Sprintf("no partition directory %q is served", dir))
		return
	}
	out := lakeJSON{Enabled: true, Catalog: redactCatalog(l.catalog), Dir: item.Dir, Topic: item.Topic, Partition: item.Partition, Files: []lakeFile{}}
	if item.Partition < 0 {
		out.Note = fmt.Sprintf("the directory's name %q is not TOPIC-PARTITION: no data file of the catalog can be matched to it", item.Name)
		lakeWriteJSON(w, http.StatusOK, out)
		return
	}
	select {
	case l.slot <- struct{}{}:
	case <-time.After(lakeQueueWait):
		w.Header().Set("Retry-After", strconv.Itoa(web.RetryAfter))
		lakeError(w, http.StatusServiceUnavailable, "segviz is busy running segviz-lake for another request; try again")
		return
	case <-r.Context().Done():
		return
	}
	start := time.Now()
	files, err := l.files(r.Context())
	<-l.slot
	if err != nil {
		status := http.StatusBadGateway
		if errors.Is(err, errLakeNotInstalled) {
			status = http.StatusServiceUnavailable
		}
		lakeError(w, status, err.Error())
		return
	}
	out.RanAt, out.Took = start.UnixMilli(), time.Since(start).Milliseconds()
	out.CatalogFiles = len(files)
	for _, f := range files {
		if f.Topic == item.Topic && f.Partition == item.Partition {
			out.Files = append(out.Files, f)
		}
	}
	out.Total = len(out.Files)
	if len(out.Files) > lakeMaxFiles {
		out.Files, out.Truncated = out.Files[len(out.Files)-lakeMaxFiles:], true
	}
	lakeWriteJSON(w, http.StatusOK, out)
}

// partition finds the served partition directory dir.
func (l *lakeEndpoint) partition(dir string) (viz.PartitionItem, bool, error) {
	clean := path.Clean("/" + dir)[1:]
	if clean == "" {
		clean = "."
	}
	ps, err := l.sess.Partitions()
	if err != nil {
		return viz.PartitionItem{}, false, err
	}
	for _, p := range ps.Partitions {
		if p.Dir == clean {
			return p, true, nil
		}
	}
	return viz.PartitionItem{}, false, nil
}

// files runs segviz-lake files --catalog CATALOG --expired --json and
// reads its lines.
func (l *lakeEndpoint) files(ctx context.Context) ([]lakeFile, error) {
	bin, err := l.lookPath(lakeCommand)
	if err != nil {
		return nil, errLakeNotInstalled
	}
	ctx, cancel := context.WithTimeout(ctx, lakeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "files", "--catalog", l.catalog, "--expired", "--json")
	cmd.WaitDelay = time.Second
	stdout := &cappedBuffer{max: lakeMaxOutput}
	stderr := &cappedBuffer{max: lakeMaxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	if stdout.over {
		return nil, fmt.Errorf("%w: it printed more than %d MiB", errLakeFailed, lakeMaxOutput>>20)
	}
	if err != nil {
		why := err.Error()
		var ee *exec.ExitError
		switch {
		case ctx.Err() == context.DeadlineExceeded:
			why = fmt.Sprintf("no answer within %v (is the catalog reachable?)", lakeTimeout)
		case errors.As(err, &ee) && ee.ExitCode() >= 0:
			why = fmt.Sprintf("exit status %d", ee.ExitCode())
		}
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			why += ": " + msg
		}
		return nil, fmt.Errorf("%w (%s): %s", errLakeFailed, bin, why)
	}
	files, err := parseLakeFiles(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%w: %s printed %v", errLakeFailed, bin, err)
	}
	return files, nil
}

// parseLakeFiles reads the lines of segviz-lake files --json, adding the
// bounds' texts.
func parseLakeFiles(b []byte) ([]lakeFile, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	files := []lakeFile{}
	for n := 1; ; n++ {
		var f lakeFile
		if err := dec.Decode(&f); err == io.EOF {
			return files, nil
		} else if err != nil {
			return nil, fmt.Errorf("not its JSON (file %d): %v", n, err)
		}
		if f.Columns == nil {
			f.Columns = []lakeColumn{}
		}
		for i := range f.Columns {
			c := &f.Columns[i]
			c.MinText, c.MaxText = boundText(c.Min), boundText(c.Max)
		}
		files = append(files, f)
	}
}

// boundText is a bound's text: a string's value, a number's or a
// boolean's JSON text; nil for null (a column of nulls only).
func boundText(raw json.RawMessage) *string {
	s := string(bytes.TrimSpace(raw))
	if s == "" || s == "null" {
		return nil
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return &str
	}
	return &s
}

func lakeError(w http.ResponseWriter, status int, msg string) {
	lakeWriteJSON(w, status, map[string]string{"error": msg})
}

func lakeWriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// cappedBuffer keeps at most max bytes and notes that more came; it never
// fails a write, so that the command is not stopped by a broken pipe. (It
// has no ReadFrom, which io.Copy would call instead of Write.)
type cappedBuffer struct {
	b    bytes.Buffer
	max  int64
	over bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - int64(c.b.Len()); int64(len(p)) > room {
		c.over = true
		if room > 0 {
			c.b.Write(p[:room])
		}
		return len(p), nil
	}
	return c.b.Write(p)
}

func (c *cappedBuffer) Bytes() []byte  { return c.b.Bytes() }
func (c *cappedBuffer) String() string { return c.b.String() }

// checkLake runs segviz-lake once at start-up and says on stderr what is
// wrong (not installed, failing): the server starts anyway, and the
// page's lane says the same.
func (l *lakeEndpoint) checkLake(stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), lakeStartTimeout)
	defer cancel()
	_, err := l.files(ctx)
	switch {
	case err == nil:
	case ctx.Err() == context.DeadlineExceeded:
		fmt.Fprintf(stderr, "segviz serve: --lake %s: segviz-lake files gave no answer within %v; serving anyway (the indexed lane will say what it answers)\n", redactCatalog(l.catalog), lakeStartTimeout)
	default:
		fmt.Fprintf(stderr, "segviz serve: --lake %s: %v; serving anyway, without the indexed files (the lane says so)\n", redactCatalog(l.catalog), err)
	}
}
