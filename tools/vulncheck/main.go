// Command vulncheck runs govulncheck offline: it builds a Go vulnerability
// database from the OSV files of one version of the golang.org/x/vulndb
// module, then scans modules with govulncheck against it.
//
//	go -C tools tool vulncheck [flags] DIR...   scan the modules in DIRs (relative to
//	                                            -root); exit 1 if any calls a
//	                                            vulnerable symbol
//	go -C tools tool vulncheck -db              only build (or reuse) the database,
//	                                            and print its directory
//
// Run it from the tools module (scripts/vulncheck.sh does): govulncheck is
// that module's tool (go tool govulncheck, golang.org/x/vuln v1.9.0), so its
// version is pinned by tools/go.mod. It scans with the go command on PATH, so
// GOTOOLCHAIN selects the Go version whose standard library is checked.
//
// # The database
//
// The module comes from the module cache (go mod download, so a version
// already downloaded needs no network); its data/osv/GO-*.json are the
// entries. The database is written to <cache>/<version>/ (by default
// ${XDG_CACHE_HOME:-$HOME/.cache}/segkit-vulndb/<version>/) and reused while
// it is complete. The layout is the one golang.org/x/vulndb/cmd/indexdb
// writes (golang.org/x/vulndb/internal/database; its index/modules.json and
// index/vulns.json are byte for byte the same), without the .gz copies,
// which only the HTTP client reads:
//
//	index/db.json       {"modified": newest entry's modified time, or the version's commit time}
//	index/modules.json  [{"path", "vulns": [{"id", "modified", "fixed"}]}], by path, vulns by id
//	index/vulns.json    [{"id", "modified", "aliases"}], by id
//	ID/<id>.json        the OSV entry
//
// "fixed" is vulndb's osvutils.LatestFixed: the largest fixed version of the
// module's SEMVER ranges, or none if a later version reintroduces the
// vulnerability. (We do not run cmd/indexdb itself: building it pulls in
// vulndb's Cloud dependencies, minutes of downloads.)
//
// # The scan
//
// Each DIR is scanned with govulncheck -format json (-test adds the test
// files). A vulnerability is reachable when the module's code calls one of
// its vulnerable symbols; those fail the run. Vulnerabilities only in
// imported packages or required modules are counted and listed with -v.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// defaultVersion is the golang.org/x/vulndb version scripts/vulncheck.sh
// uses; bump it (the proxy's newest pseudo-version) to pick up new reports.
const defaultVersion = "v0.0.0-20261105234957-e22db6528018"

var (
	version = flag.String("version", defaultVersion, "golang.org/x/vulndb module version")
	cache   = flag.String("cache", "", "cache directory (default ${XDG_CACHE_HOME:-$HOME/.cache}/segkit-vulndb)")
	rebuild = flag.Bool("rebuild", false, "rebuild the database even if the cache has it")
	dbOnly  = flag.Bool("db", false, "only build the database, and print its directory")
	tests   = flag.Bool("test", false, "scan test files too (govulncheck -test)")
	root    = flag.String("root", ".", "directory the DIR arguments are relative to")
	verbose = flag.Bool("v", false, "also list the vulnerabilities that are imported or required but not called")
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: vulncheck [flags] DIR...\n       vulncheck -db [flags]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *dbOnly != (flag.NArg() == 0) {
		flag.Usage()
		os.Exit(2)
	}
	db, err := database()
	if err != nil {
		fmt.Fprintf(os.Stderr, "vulncheck: %v\n", err)
		os.Exit(2)
	}
	if *dbOnly {
		fmt.Println(db)
		return
	}
	code, err := scanAll(db, flag.Args())
	if err != nil {
		fmt.Fprintf(os.Stderr, "vulncheck: %v\n", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// database builds the database for -version, or finds it in the cache, and
// returns its directory.
func database() (string, error) {
	base := *cache
	if base == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(c, "segkit-vulndb")
	}
	if !semver.IsValid(*version) {
		return "", fmt.Errorf("bad version %q", *version)
	}
	out := filepath.Join(base, *version)
	// index/db.json is written last: its presence means the rest is there.
	if _, err := os.Stat(filepath.Join(out, "index", "db.json")); err == nil && !*rebuild {
		logf("database %s (cached)", out)
		return out, nil
	}

	start := time.Now()
	src, err := download(*version)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(base, ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	// The OSV files in the module carry no modification times (the
	// published database takes them from the repository's history), so
	// index/db.json gets the module version's commit time instead, which
	// govulncheck prints as "DB updated".
	stamp, _ := module.PseudoVersionTime(*version)
	n, err := build(filepath.Join(src, "data", "osv"), tmp, stamp)
	if err != nil {
		return "", err
	}
	if err := os.RemoveAll(out); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", err
	}
	logf("database %s: built from %d entries of golang.org/x/vulndb@%s in %.1fs", out, n, *version, time.Since(start).Seconds())
	return out, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "vulncheck: "+format+"\n", args...)
}
