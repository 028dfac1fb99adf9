package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// Exit codes. They are part of the command's interface.
const (
	exitOK      = 0 // success, nothing wrong found
	exitProblem = 1 // the input has problems (corruption, torn tail, ...)
	exitUsage   = 2 // bad command line
	exitFailure = 3 // the command could not run (I/O error, ...)
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands []command

func init() {
	commands = []command{
		{"dump", "print the batches, records, and index entries of segment files", runDump},
		{"read", "print a partition's records from an offset or a time, as a consumer gets them", runRead},
		{"verify", "check a partition (or log) directory: CRCs, indexes, snapshots, checkpoints", runVerify},
		{"recover", "run Kafka's recovery on a copy (or in place) and say what it cut and why", runRecover},
		{"salvage", "copy every valid batch to a new partition, past corruption", runSalvage},
		{"append", "append JSON-lines records to a partition directory, creating it", runAppend},
		{"retention", "show what retention deletes and until when each record can be read; --apply does it", runRetention},
		{"history", "list the changes segkit recorded in a partition, and what removed an offset", runHistory},
		{"savepoint", "take, list or release a legal hold on offsets, which retention and compaction keep", runSavepoint},
		{"restore", "restore a partition to a savepoint: cut what was appended since (--apply does it)", runRestore},
		{"compact", "run Kafka's log cleaner once (or --dry-run) and say what it removed", runCompact},
		{"lake", "the indexer: a partition's committed records as Parquet files with exact statistics in a catalog (runs segviz-lake)", runLake},
		{"tier", "tiered storage: list local and remote segments (status), copy and apply local and total retention (upload)", runTier},
		{"serve", "serve the visualiser of a partition directory, or of the built-in demo", runServe},
		{"site", "write a static copy of the visualiser (page and WASM engine) that needs no server", runSite},
		{"version", "print segviz's version (module version, VCS revision) and the Go version", runVersion},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return runServe(nil, stdout, stderr) // the demo
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(args) > 1 {
			for _, c := range commands {
				if c.name == args[1] {
					return c.run([]string{"--help"}, stdout, stderr)
				}
			}
		}
		usage(stdout)
		return exitOK
	}
	if name == "--version" || name == "-version" {
		return runVersion(args[1:], stdout, stderr)
	}
	if strings.HasPrefix(name, "-") {
		// "segviz --addr host:port" is "segviz serve --addr host:port".
		return runServe(args, stdout, stderr)
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "segviz: unknown command %q\n\n", name)
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, `segviz inspects, checks, repairs and builds Kafka partition directories:
the .log, .index, .timeindex and checkpoint files a broker writes.

Usage:
  segviz COMMAND [flags] [arguments]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Run "segviz COMMAND --help" for a command's flags and examples, and
"segviz --version" (or "segviz version") for the version.

Exit status: 0 when all is well, 1 when the input has problems (corruption,
a torn tail, bad input lines; for recover and salvage: something was cut or
lost), 2 for a bad command line, 3 when the command could not run.

Examples:
  segviz verify /var/kafka-logs/orders-0
  segviz recover --out /tmp/orders-0 /var/kafka-logs/orders-0
  segviz salvage --out /tmp/orders-0 /var/kafka-logs/orders-0
  segviz append /tmp/logs/fixture-0 < records.jsonl
`)
}

// newFlagSet returns a flag set whose --help prints the given text and the
// flags, and whose errors are reported once.
func newFlagSet(name, help string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("segviz "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), help)
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and maps the outcome to an exit code: -1 to go on.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return exitOK
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	return -1
}

// report prints a command's report: indented JSON with asJSON, else the
// text printer's output. It reports false (after saying why on stderr)
// when the output could not be written.
func report(stdout, stderr io.Writer, name string, asJSON bool, v any, text func()) bool {
	if !asJSON {
		text()
		return true
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "segviz %s: %v\n", name, err)
		return false
	}
	return true
}

const versionHelp = `Usage: segviz version
       segviz --version

Prints segviz's version: the module version it was built from (a tag
with "go install ...@version"; from a checkout, the pseudo-version the go
command derives from the VCS, or "(devel)" when the build recorded no VCS
information, as with -buildvcs=false), the VCS revision and commit time
when the build recorded them (with "modified" when the work tree had
changes), and the Go version and platform.
`

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", versionHelp, stderr)
	if code := parseFlags(fs, args, stdout); code >= 0 {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(stderr, "segviz version: takes no arguments")
		return exitUsage
	}
	info, ok := debug.ReadBuildInfo()
	fmt.Fprintln(stdout, versionString(info, ok))
	return exitOK
}

// versionString formats the build information as one line:
//
//	segviz v1.2.0 (go1.26.8 linux/amd64)
//	segviz (devel) revision 4f2a9c1e0b7d, 2026-11-30T12:00:00Z, modified (go1.26.8 linux/amd64)
func versionString(info *debug.BuildInfo, ok bool) string {
	version := "(devel)"
	var vcs []string
	if ok && info != nil {
		if v := info.Main.Version; v != "" {
			version = v
		}
		var rev, at string
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			vcs = append(vcs, "revision "+rev[:min(len(rev), 12)])
			if at != "" {
				vcs = append(vcs, at)
			}
			if modified {
				vcs = append(vcs, "modified")
			}
		}
	}
	out := "segviz " + version
	if len(vcs) > 0 {
		out += " " + strings.Join(vcs, ", ")
	}
	return out + " (" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"
}
