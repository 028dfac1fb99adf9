package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/internal/demo"
	"github.com/segkit/segkit/internal/viz"
	"github.com/segkit/segkit/internal/web"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

const serveHelp = `Usage: segviz serve [--addr host:port] [--allow-host NAME]... [--wasm auto|off] [--remote URI] [--lake CATALOG] [DIR]
       segviz                      (the same as "segviz serve": the demo)
       segviz serve --export-demo DIR

Serves the visualiser: a web page showing a partition's segments as a
timeline, each segment's batches and records (with a hex view linked to
the structure), the offset and time index plots, a retention what-if
(retention.ms, retention.bytes, segment.ms and "now" sliders: which
segments go when, and until when each record can be read), and the
verification findings, each of which jumps to the bytes concerned.

DIR is a partition directory, or a log directory of partitions (or a
directory of log directories). It is served read-only: segviz never writes
to it, and serves nothing outside it (no "..", no symbolic link that leaves
it). Without DIR, segviz serves its built-in demo: a log directory written
by segkit's own engine, with every codec, transactions, a compacted empty
batch, a replayed backlog and a deleted segment, and a second, damaged,
partition for the verification view.

With --remote file://R (a tiered partition: DIR is one partition
directory, R the directory of its LocalTieredStorage remote, as for
segviz read --remote), the strip shows the remote segments with the local
ones, marked "remote" (only in the remote store) or "copied" (on local
disk and in the remote), and every view reads the remote segments below
the local ones as the partition's: batches, records, bytes, indexes,
verification. The remote is served read-only too.

With --lake CATALOG (sqlite:PATH or a postgres:// URL, as for segviz
lake), an "indexed" lane under the strip draws the indexer's data files
over the segments: each file's offset range, its time bucket, expired
files apart, and on a click its statistics (rows, bytes, checksum, and
per column the type, min, max, nulls and NaNs). segviz runs
"segviz-lake files --catalog CATALOG --expired --json" (segviz-lake must
be on PATH: see segviz lake --help) when the page asks, at each load,
Reload or refresh of the lane, so that a running indexer's new files
appear; it keeps the files of the partition shown (the catalog's table
named after the topic, and the partition of the directory's name
TOPIC-PARTITION). One run at a time, within 30 s and 64 MiB of output.
If segviz-lake is not installed or fails, segviz says so on start-up and
in the lane, and serves the rest of the page.

The page can also open partition files from your disk (drop a folder or
its files on it, or choose them): they are parsed in the browser by the
WASM build of the engine and never uploaded. segviz builds that engine
with the go command on first run (GOOS=js GOARCH=wasm go build ./wasm)
and caches it by a hash of the sources and the Go version; --wasm off
skips it (the rest of the page works without it).

The server listens on 127.0.0.1 on a free port unless --addr says
otherwise, and prints its URL. The files it shows may be confidential:
on any address it answers only requests whose Host is a loopback name
(localhost, 127.0.0.1, [::1]), the host of --addr, or a NAME given with
--allow-host (repeatable: the machine's DNS name, for example); any other
Host gets 421 Misdirected Request, so that a web page elsewhere cannot
read the files through DNS rebinding. With an address other than
loopback, anyone who can reach it (with an allowed Host) can read every
file under DIR. Stop it with Ctrl-C (or SIGTERM): requests still running
get 2 s, then their connections are closed; a second Ctrl-C ends it at
once.

Limits: at most as many API requests decode or verify at once as the
process has cores (GOMAXPROCS), and no more than fit a 256 MiB memory
budget at 96 MiB each (one batch decompressed up to 64 MiB, plus the
answer): two at most. Up to four times that many wait, at most 5 s; the others
get 503 Service Unavailable with Retry-After: 1. Connections: request
headers must arrive within 10 s and hold at most 64 KiB, and idle
keep-alive connections are closed after 60 s.

--export-demo DIR writes the demo's log directory to DIR/kafka-logs (file
times kept) and exits, so that segviz's other commands can be run on it:
  segviz retention --now 2026-03-02T09:00:00Z DIR/kafka-logs/orders-0

DIR is found as verify finds it: a partition directory, a log directory, or
a folder of log directories; a folder holding no partition is refused.

Exit status: 0 when stopped, 2 for a bad command line or a DIR that is not
a partition or log directory, 3 when the server could not start (DIR
unreadable, address in use).

Examples:
  segviz
  segviz serve /var/kafka-logs
  segviz serve --addr 127.0.0.1:8080 /var/kafka-logs/payments-0
  segviz serve --addr 0.0.0.0:8080 --allow-host kafka1.example.com /var/kafka-logs
  segviz serve --lake sqlite:/var/lib/segviz/catalog.db /var/kafka-logs/payments-0
`

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", serveHelp, stderr)
	addr := fs.String("addr", "127.0.0.1:0", "the `host:port` to listen on (port 0: a free one)")
	wasm := fs.String("wasm", "auto", "auto: build the WASM engine for dropped files on first run; off: do not")
	export := fs.String("export-demo", "", "write the demo's log directory under `DIR` and exit")
	var allow hostList
	fs.Var(&allow, "allow-host", "also answer requests whose Host is `NAME` (repeatable)")
	remote := fs.String("remote", "", "show DIR's remote segments too: file://DIR, a LocalTieredStorage directory")
	lakeCat := fs.String("lake", "", "show the indexer's data files of `CATALOG` (sqlite:PATH or postgres://…) in an indexed lane; runs segviz-lake from PATH")
	if code := parseFlags(fs, args, stdout); code >= 0 {
		return code
	}
	if *lakeCat != "" && !validLakeCatalog(*lakeCat) {
		fmt.Fprintf(stderr, "segviz serve: --lake %q: want sqlite:PATH or postgres://…\n", redactCatalog(*lakeCat))
		return exitUsage
	}
	if *remote != "" && fs.NArg() != 1 {
		fmt.Fprintln(stderr, "segviz serve: --remote needs a partition directory")
		return exitUsage
	}
	if *wasm != "auto" && *wasm != "off" {
		fmt.Fprintf(stderr, "segviz serve: --wasm %q: want auto or off\n", *wasm)
		return exitUsage
	}
	if *export != "" {
		if fs.NArg() != 0 {
			fmt.Fprintln(stderr, "segviz serve: --export-demo takes no DIR argument")
			return exitUsage
		}
		d, err := demo.Get()
		if err == nil {
			err = d.Export(*export)
		}
		if err != nil {
			fmt.Fprintf(stderr, "segviz serve: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "segviz: wrote the demo to %s; its now is %s\n", filepath.Join(*export, demo.LogDir), demo.Now.Format(time.RFC3339))
		return exitOK
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(stderr, "segviz serve: want at most one directory")
		fs.Usage()
		return exitUsage
	}
	opts := serveOptions{addr: *addr, wasm: *wasm == "auto", allowHosts: allow, remote: *remote, lake: *lakeCat}
	if fs.NArg() == 1 {
		opts.dir = fs.Arg(0)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first signal, the default action is back: a second Ctrl-C
	// or SIGTERM ends the process at once, whatever serve is waiting for.
	go func() {
		<-ctx.Done()
		stop()
	}()
	return serve(ctx, opts, stdout, stderr)
}

// How long serve waits, once told to stop, for the requests in flight
// (shutdownGrace), after which it closes their connections, and then for
// the session and the WASM build to close (closeGrace), after which it
// returns anyway: a request stuck in a read of a hung disk holds the
// session, and must not hold the process.
var (
	shutdownGrace = 2 * time.Second
	closeGrace    = 1 * time.Second
)

type serveOptions struct {
	addr string
	dir  string // "" for the demo
	// remote is --remote's URI, "" for none.
	remote string
	// lake is --lake's catalog, "" for none.
	lake string
	wasm bool
	// allowHosts are the --allow-host names.
	allowHosts []string
	// timeouts override web's default connection timeouts (tests).
	timeouts web.Timeouts
	// ready, if set, receives the URL once the server listens (tests).
	ready chan<- string
}

// serve runs the server until ctx is done.
func serve(ctx context.Context, o serveOptions, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "segviz serve: "+format+"\n", a...)
		return exitFailure
	}
	sess, what, closeFn, err := openSource(o.dir, o.remote)
	if err != nil {
		fmt.Fprintf(stderr, "segviz serve: %v\n", err)
		if errors.Is(err, inspect.ErrNoPartition) || errors.Is(err, errNotDir) || errors.Is(err, errRemoteScheme) {
			return exitUsage // as verify: DIR is not a partition or a log directory
		}
		return exitFailure
	}
	var closers []func() // run in order by closeAll, bounded by closeGrace
	closers = append(closers, closeFn)
	closeAll := func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, c := range closers {
				c()
			}
		}()
		select {
		case <-done:
		case <-time.After(closeGrace):
			fmt.Fprintf(stderr, "segviz serve: not everything closed within %v (a request may be stuck in a read); exiting anyway\n", closeGrace)
		}
	}
	defer closeAll()
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		fmt.Fprintf(stderr, "segviz serve: --addr %q: %v\n", o.addr, err)
		return exitUsage
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fail("%v", err)
	}
	if !isLoopback(host) {
		fmt.Fprintf(stderr, "segviz serve: warning: listening on %s, not on loopback: anyone who can reach it can read every file served\n", ln.Addr())
	}
	cfg := web.Config{Session: sess, AllowedHosts: append([]string{host}, o.allowHosts...), Timeouts: o.timeouts}
	if o.wasm {
		b := web.NewBuilder(stderr)
		b.Start()
		closers = append([]func(){b.Stop}, closers...)
		cfg.WASM = b
	}
	// /api/lake is segviz's, beside web's API: the indexer's files come
	// from segviz-lake, which the viz engine knows nothing of.
	lake := newLakeEndpoint(o.lake, sess)
	if o.lake != "" {
		lake.checkLake(stderr)
	}
	cfg.Extra = map[string]http.Handler{lakePath: lake}
	srv := web.NewServer(cfg)
	url := "http://" + urlHost(ln.Addr().(*net.TCPAddr), host) + "/"
	fmt.Fprintf(stdout, "segviz: serving %s at %s\n", what, url)
	if o.ready != nil {
		o.ready <- url
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fail("%v", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(shutdown)
	if errors.Is(err, context.DeadlineExceeded) {
		// Shutdown waits for every handler; Close does not: it closes
		// the listener and every connection, which ends a handler
		// writing to a client that stopped reading. One blocked in a
		// system call stays, and the process exits without it.
		fmt.Fprintf(stderr, "segviz serve: requests still running after %v; closing their connections\n", shutdownGrace)
		if err = srv.Close(); errors.Is(err, net.ErrClosed) {
			err = nil // the listener, which Shutdown closed
		}
	}
	if err != nil {
		return fail("%v", err)
	}
	fmt.Fprintln(stderr, "segviz: stopped")
	return exitOK
}

// openSource opens DIR read-only (with its remote, when remote is a
// --remote URI), or builds the demo.
func openSource(dir, remote string) (*viz.Session, string, func(), error) {
	if dir == "" {
		d, err := demo.Get()
		if err != nil {
			return nil, "", nil, err
		}
		sess := viz.NewSession(d.FS, viz.Options{
			Name: "segviz demo", Demo: true, Now: func() time.Time { return d.Now }, Notes: d.Notes,
			Config: func(string) config.Config { return d.Config },
		})
		return sess, "the demo (" + demo.LogDir + ": orders-0, orders-1)", func() { sess.Close() }, nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, "", nil, err
	}
	if !st.IsDir() {
		return nil, "", nil, fmt.Errorf("%w: %s", errNotDir, dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", nil, err
	}
	// The partitions are found as verify finds them (by the directory's
	// own name too, which the rooted FS below calls "."): a folder that
	// holds none is refused, not served as an empty page.
	parts, err := inspect.FindPartitions(vfs.OS(), filepath.ToSlash(abs))
	if err != nil {
		return nil, "", nil, err
	}
	fsys, root, err := web.OpenRoot(abs)
	if err != nil {
		return nil, "", nil, err
	}
	if remote == "" {
		sess := viz.NewSession(fsys, viz.Options{Name: filepath.Base(abs)})
		return sess, abs + " (read-only)", func() { sess.Close(); root.Close() }, nil
	}
	if len(parts) != 1 || parts[0].Dir != filepath.ToSlash(abs) {
		root.Close()
		return nil, "", nil, fmt.Errorf("%w: --remote takes one partition directory; %s is not one", inspect.ErrNoPartition, abs)
	}
	sess, rdir, closeRemote, err := openTiered(fsys, abs, remote)
	if err != nil {
		root.Close()
		return nil, "", nil, err
	}
	return sess, abs + " with its remote " + rdir + " (read-only)", func() { sess.Close(); closeRemote(); root.Close() }, nil
}

// openTiered opens the session of the partition directory abs (local,
// its rooted FS, where it is ".") with the remote at the --remote URI
// remote: over a tier.View of the served remote segments below the local
// ones, with the strip's remote segments.
func openTiered(local vfs.FS, abs, remote string) (*viz.Session, string, func(), error) {
	rdir, err := parseTierRemote(remote)
	if err != nil {
		return nil, "", nil, err
	}
	tp, err := remotePartition(vfs.OS(), rdir, filepath.ToSlash(abs))
	if err != nil {
		return nil, "", nil, fmt.Errorf("--remote %s: %w", remote, err)
	}
	rfs, rroot, err := web.OpenRoot(filepath.FromSlash(rdir))
	if err != nil {
		return nil, "", nil, fmt.Errorf("--remote %s: %w", remote, err)
	}
	d := tier.NewDir(rfs, ".")
	meta, discovered, err := remoteMetadata(d, tp)
	if err != nil {
		rroot.Close()
		return nil, "", nil, fmt.Errorf("--remote %s: %w", remote, err)
	}
	served := tier.RemoteLog(meta).ServedFrom()
	view, err := d.NewView(local, ".", served)
	if err != nil {
		rroot.Close()
		return nil, "", nil, err
	}
	rj := &viz.RemoteJSON{Dir: path.Join(rdir, d.PartitionDir(tp)), Metadata: "segkit", Segments: []viz.RemoteSegmentJSON{}}
	if discovered {
		rj.Metadata = "files"
	}
	inView := map[tier.UUID]bool{}
	for _, m := range view.Segments() {
		inView[m.ID.ID] = true
	}
	for _, m := range served {
		rj.Segments = append(rj.Segments, viz.RemoteSegmentJSON{
			BaseOffset: m.StartOffset, EndOffset: m.EndOffset, Size: m.SegmentSizeInBytes, MaxTimestamp: m.MaxTimestampMs,
			ID: m.ID.ID.String(), State: m.State.String(), Local: !inView[m.ID.ID],
		})
	}
	sess := viz.NewSession(view, viz.Options{Name: filepath.Base(abs), Remote: func(dir string) *viz.RemoteJSON {
		if path.Clean(dir) == "." {
			return rj
		}
		return nil
	}})
	return sess, rdir, func() { rroot.Close() }, nil
}

// errNotDir is the error of a DIR that is not a directory.
var errNotDir = errors.New("not a directory")

// hostList is a repeatable flag of host names.
type hostList []string

func (l *hostList) String() string { return strings.Join(*l, ",") }

func (l *hostList) Set(name string) error {
	if name == "" || strings.ContainsAny(name, "/ ") {
		return fmt.Errorf("%q is not a host name", name)
	}
	*l = append(*l, name)
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// urlHost is the host:port to print: the address listened on, or
// 127.0.0.1 for a wildcard one.
func urlHost(a *net.TCPAddr, host string) string {
	h := a.IP.String()
	switch {
	case host == "localhost":
		h = "localhost"
	case a.IP.IsUnspecified():
		h = "127.0.0.1"
	}
	return net.JoinHostPort(h, fmt.Sprint(a.Port))
}
