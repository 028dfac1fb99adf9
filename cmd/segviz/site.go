package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/segkit/segkit/internal/web"
)

const siteHelp = `Usage: segviz site [--json] OUT

Writes a static copy of the visualiser into the directory OUT: the page,
its script (the page's modules bundled into one), its style, and the WASM
build of segkit's engine that this segviz carries (gzipped, as a script).
Serve OUT from any static web server, or open OUT/index.html from disk
(file://): it needs no segviz process. Partition files dropped on the
page, or chosen with its buttons, are read by the engine in the browser
and never leave it.

OUT must not exist, or be an empty directory: segviz site never
overwrites a file. It prints each file it wrote and its size.

--json prints {"dir": OUT, "files": [{"name", "bytes"}]} instead.

Exit status: 0 when written, 2 for a bad command line or an OUT that is
not empty, 3 when a file could not be written.

Examples:
  segviz site /tmp/segviz-site && python3 -m http.server -d /tmp/segviz-site
  segviz site ./site && chromium ./site/index.html
`

func runSite(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("site", siteHelp, stderr)
	jsonOut := fs.Bool("json", false, "print one JSON object")
	if code := parseFlags(fs, args, stdout); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "segviz site: want one output directory")
		fs.Usage()
		return exitUsage
	}
	out := fs.Arg(0)
	if ents, err := os.ReadDir(out); err == nil && len(ents) > 0 {
		fmt.Fprintf(stderr, "segviz site: %s is not empty (%d entries); give a new or empty directory: site never overwrites a file\n", out, len(ents))
		return exitUsage
	} else if err != nil && !os.IsNotExist(err) {
		fmt.Fprintf(stderr, "segviz site: %v\n", err)
		if st, serr := os.Stat(out); serr == nil && !st.IsDir() {
			return exitUsage
		}
		return exitFailure
	}
	files, err := web.Site()
	if err != nil {
		fmt.Fprintf(stderr, "segviz site: %v\n", err)
		return exitFailure
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintf(stderr, "segviz site: %v\n", err)
		return exitFailure
	}
	type fileJSON struct {
		Name  string `json:"name"`
		Bytes int    `json:"bytes"`
	}
	res := struct {
		Dir   string     `json:"dir"`
		Files []fileJSON `json:"files"`
	}{Dir: out}
	for _, f := range files {
		// O_EXCL: a file that appeared meanwhile is not overwritten.
		w, err := os.OpenFile(filepath.Join(out, f.Name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, err = w.Write(f.Data)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "segviz site: %v\n", err)
			return exitFailure
		}
		res.Files = append(res.Files, fileJSON{f.Name, len(f.Data)})
	}
	if !report(stdout, stderr, "site", *jsonOut, res, func() {
		for _, f := range res.Files {
			fmt.Fprintf(stdout, "%s\t%s\n", filepath.Join(out, f.Name), fmtSize(int64(f.Bytes)))
		}
		fmt.Fprintf(stdout, "segviz: wrote a static visualiser to %s; open %s or serve the directory\n", out, filepath.Join(out, "index.html"))
	}) {
		return exitFailure
	}
	return exitOK
}

// fmtSize prints n bytes as KiB or MiB.
func fmtSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
