// Command apicheck guards the exported API of segkit's core module.
//
// The baseline lives in api/ at the repository root:
//
//	api/segkit.txt      one line per exported identifier, like Go's api/go1.*.txt;
//	                    this is the file reviewers read and diff
//	api/export/*.x      the export data of each package (golang.org/x/tools/go/gcexportdata,
//	                    in the single-package file format of golang.org/x/exp/cmd/apidiff:
//	                    the import path, a newline, then the data), which apidiff compares
//	api/export/go.version  the Go that built the apicheck that wrote them
//
// Run from the repository root (scripts/apicheck.sh does this):
//
//	go -C tools tool apicheck -root ..          compare the code with the baseline
//	go -C tools tool apicheck -root .. -write   rewrite the baseline from the code
//
// The check loads the core packages (the root module's packages without
// internal/, cmd/, main packages and packages that declare nothing exported,
// such as fuzz/, whose API is its tests) for GOOS=linux GOARCH=amd64 and
// compares them with the baseline using golang.org/x/exp/apidiff's
// ModuleChanges. It fails (exit 1) if
//   - apidiff finds an incompatible change (a removed or changed identifier,
//     a removed package, a method added to an interface ...);
//   - api/segkit.txt does not match the code, so any API change, compatible or
//     not, comes with its baseline in the same commit;
//   - api/segkit.txt does not match api/export (one was edited by hand);
//   - the API is different under one of the -ports (js/wasm and wasip1/wasm by
//     default): platform files may change behaviour, never the API.
//
// Compatible changes are printed as information. Exit status 2 means the check
// could not run (a package does not compile, the baseline is unreadable).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/exp/apidiff"
	"golang.org/x/tools/go/packages"
)

const (
	textFile  = "segkit.txt"
	exportDir = "export"
	basePort  = "linux/amd64"
)

var (
	root    = flag.String("root", ".", "repository root (the directory of the core module's go.mod)")
	write   = flag.Bool("write", false, "rewrite the baseline in api/ from the code instead of checking it")
	ports   = flag.String("ports", "js/wasm,wasip1/wasm", "comma-separated GOOS/GOARCH pairs whose API must equal "+basePort+"'s")
	verbose = flag.Bool("v", false, "list the packages checked and skipped")
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: apicheck [-root dir] [-write] [-ports list] [-v]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	code, err := run()
	if err != nil {
		fmt.Fprintf(os.Stderr, "apicheck: %v\n", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func run() (int, error) {
	dir, err := filepath.Abs(*root)
	if err != nil {
		return 0, err
	}
	apiDir := filepath.Join(dir, "api")

	// Load the base port and the other ports at once: each is a go list
	// -export of its own, and the two run in parallel on a warm cache.
	portList := []string{basePort}
	for p := range strings.SplitSeq(*ports, ",") {
		if p = strings.TrimSpace(p); p != "" && p != basePort {
			portList = append(portList, p)
		}
	}
	mods := make([]*apidiff.Module, len(portList))
	errs := make([]error, len(portList))
	var wg sync.WaitGroup
	for i, p := range portList {
		wg.Go(func() { mods[i], errs[i] = loadCore(dir, p) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			// The ports share their sources: the first one that fails says it.
			return 0, fmt.Errorf("loading the core packages for %s:\n%v", portList[i], err)
		}
	}
	cur := mods[0]
	curText := moduleText(cur)

	portsDiffer := false
	for i, p := range portList[1:] {
		if t := moduleText(mods[i+1]); !bytes.Equal(t, curText) {
			portsDiffer = true
			fmt.Printf("FAIL: the exported API differs between %s and %s (platform files may change behaviour, not the API):\n", basePort, p)
			printLineDiff(curText, t, basePort, p)
		}
	}

	if portsDiffer {
		fmt.Printf("\nGive every port the same API: an exported identifier declared in a platform\nfile (_js.go, //go:build ...) needs a counterpart in the others.\n")
		return 1, nil
	}
	if *write {
		if err := writeBaseline(apiDir, cur, curText); err != nil {
			return 0, err
		}
		fmt.Printf("apicheck: wrote api/%s and api/%s/ for %d packages\n", textFile, exportDir, len(cur.Packages))
		return 0, nil
	}

	failed := false
	base, err := readBaseline(apiDir, cur.Path)
	if err != nil {
		return 0, fmt.Errorf("reading the baseline: %v", err)
	}
	committedText, err := os.ReadFile(filepath.Join(apiDir, textFile))
	if err != nil {
		return 0, fmt.Errorf("reading the baseline: %v (create it with scripts/apicheck.sh -write)", err)
	}

	report := apidiff.ModuleChanges(base, cur)
	var incompatible, compatible []string
	for _, c := range report.Changes {
		if c.Compatible {
			compatible = append(compatible, c.Message)
		} else {
			incompatible = append(incompatible, c.Message)
		}
	}
	if len(compatible) > 0 {
		fmt.Printf("info: %d compatible API change(s) since the baseline:\n", len(compatible))
		for _, m := range compatible {
			fmt.Printf("  + %s\n", m)
		}
	}
	if len(incompatible) > 0 {
		failed = true
		fmt.Printf("FAIL: %d incompatible API change(s) since the baseline in api/:\n", len(incompatible))
		for _, m := range incompatible {
			fmt.Printf("  - %s\n", m)
		}
	}
	if baseText := moduleText(base); !bytes.Equal(baseText, committedText) {
		failed = true
		fmt.Printf("FAIL: api/%s does not match api/%s/ (edited by hand?):\n", textFile, exportDir)
		printLineDiff(baseText, committedText, "api/"+exportDir, "api/"+textFile)
	}
	if !bytes.Equal(curText, committedText) {
		failed = true
		fmt.Printf("FAIL: api/%s is out of date with the code:\n", textFile)
		printLineDiff(committedText, curText, "api/"+textFile, "code")
	}
	if !failed {
		fmt.Printf("apicheck: ok, the API of %d packages matches api/%s\n", len(cur.Packages), textFile)
		return 0, nil
	}
	fmt.Printf(`
To accept these changes, update the baseline in the same commit as the code:
    scripts/apicheck.sh -write
and commit api/ with it. Review the diff of api/%s; if any change above is
incompatible, the commit message must name it (what was removed or changed,
and why), so that the break is a decision rather than an accident.
`, textFile)
	return 1, nil
}

// loadCore loads the core module's API packages for one GOOS/GOARCH.
// Types come from the compiler's export data (go list -export), so a warm
// build cache makes this fast.
func loadCore(dir, port string) (*apidiff.Module, error) {
	goos, goarch, ok := strings.Cut(port, "/")
	if !ok {
		return nil, fmt.Errorf("bad port %q: want GOOS/GOARCH", port)
	}
	cfg := &packages.Config{
		Dir:  dir,
		Mode: packages.NeedName | packages.NeedTypes | packages.NeedModule,
		Env:  append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0"),
		Fset: token.NewFileSet(),
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return nil, err
	}
	var mod *apidiff.Module
	var errs []string
	for _, p := range pkgs {
		if p.Module != nil && p.Module.Main && mod == nil {
			mod = &apidiff.Module{Path: p.Module.Path}
		}
	}
	if mod == nil {
		return nil, fmt.Errorf("%s: no packages of the main module in %s", port, dir)
	}
	for _, p := range pkgs {
		if why := skip(mod.Path, p); why != "" {
			if *verbose && port == basePort {
				fmt.Printf("skip  %-45s %s\n", p.PkgPath, why)
			}
			continue
		}
		// Only the API packages (and so their dependencies) must compile:
		// a broken command or internal package is not this check's business.
		typeErrors := slices.ContainsFunc(p.Errors, func(e packages.Error) bool { return e.Kind == packages.TypeError })
		for _, e := range p.Errors {
			if typeErrors && (e.Pos == "" || e.Pos == "-") && strings.HasPrefix(e.Msg, "# ") {
				continue // the compiler's output, which the type errors repeat
			}
			if msg := e.Error(); !slices.Contains(errs, msg) {
				errs = append(errs, msg)
			}
		}
		if *verbose && port == basePort {
			fmt.Printf("check %s\n", p.PkgPath)
		}
		mod.Packages = append(mod.Packages, p.Types)
	}
	if len(errs) > 0 {
		const max = 10
		if len(errs) > max {
			errs = append(errs[:max], fmt.Sprintf("... and %d more", len(errs)-max))
		}
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	slices.SortFunc(mod.Packages, func(a, b *types.Package) int { return strings.Compare(a.Path(), b.Path()) })
	return mod, nil
}

// skip says why a package of the module is not part of its API, or "".
func skip(modPath string, p *packages.Package) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(p.PkgPath, modPath), "/")
	elems := strings.Split(rel, "/")
	switch {
	case p.Module == nil || p.Module.Path != modPath:
		return "not in the module"
	case slices.Contains(elems, "internal"):
		return "internal"
	case elems[0] == "cmd":
		return "under cmd/"
	case p.Name == "main":
		return "a command"
	case len(p.Errors) > 0 || p.Types == nil:
		return "" // checked, so that its errors are reported
	}
	for _, name := range p.Types.Scope().Names() {
		if token.IsExported(name) {
			return ""
		}
	}
	return "declares nothing exported (test-only)"
}

func moduleText(m *apidiff.Module) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The exported API of %s (GOOS=linux GOARCH=amd64).\n", m.Path)
	fmt.Fprintf(&b, "# Generated by scripts/apicheck.sh -write; do not edit. api/%s/ holds the same API as export data.\n", exportDir)
	for _, p := range m.Packages {
		for _, l := range apiLines(p) {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// printLineDiff prints the lines only in a (-) and only in b (+). The
// listings are sorted sets of lines, so this is their diff.
func printLineDiff(a, b []byte, aName, bName string) {
	al := strings.Split(strings.TrimSuffix(string(a), "\n"), "\n")
	bl := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	inA := make(map[string]bool, len(al))
	for _, l := range al {
		inA[l] = true
	}
	inB := make(map[string]bool, len(bl))
	for _, l := range bl {
		inB[l] = true
	}
	fmt.Printf("  --- %s\n  +++ %s\n", aName, bName)
	for _, l := range al {
		if !inB[l] {
			fmt.Printf("  -%s\n", l)
		}
	}
	for _, l := range bl {
		if !inA[l] {
			fmt.Printf("  +%s\n", l)
		}
	}
}
