package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// The part of govulncheck's JSON protocol (golang.org/x/vuln/internal/govulncheck,
// protocol v1.0.0) that the summary reads.
type message struct {
	Config *struct {
		GoVersion string `json:"go_version"`
		DB        string `json:"db"`
	} `json:"config"`
	OSV *struct {
		ID      string `json:"id"`
		Summary string `json:"summary"`
	} `json:"osv"`
	Finding *finding `json:"finding"`
}

type finding struct {
	OSV          string   `json:"osv"`
	FixedVersion string   `json:"fixed_version"`
	Trace        []*frame `json:"trace"`
}

type frame struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Package  string `json:"package"`
	Function string `json:"function"`
	Receiver string `json:"receiver"`
	Position *struct {
		Filename string `json:"filename"`
		Line     int    `json:"line"`
		Column   int    `json:"column"`
	} `json:"position"`
}

// Levels of a finding, as govulncheck reports them: the module is required,
// a vulnerable package is imported, a vulnerable symbol is called.
const (
	levelModule = iota
	levelPackage
	levelSymbol
)

type vuln struct {
	id, summary string
	level       int
	first       *finding // the first finding at level
}

type result struct {
	dir, goVersion string
	vulns          []*vuln // sorted by id
	elapsed        time.Duration
}

func (r *result) count(level int) int {
	n := 0
	for _, v := range r.vulns {
		if v.level == level {
			n++
		}
	}
	return n
}

func scanAll(db string, dirs []string) (int, error) {
	var results []*result
	reachable := map[string]bool{}
	for _, d := range dirs {
		r, err := scan(db, d)
		if err != nil {
			return 0, err
		}
		results = append(results, r)
		report(r)
		for _, v := range r.vulns {
			if v.level == levelSymbol {
				reachable[v.id] = true
			}
		}
	}
	fmt.Println()
	if len(reachable) == 0 {
		fmt.Printf("vulncheck: ok, no reachable vulnerabilities in %s\n", strings.Join(dirs, ", "))
		return 0, nil
	}
	var per []string
	for _, r := range results {
		per = append(per, fmt.Sprintf("%s %d", r.dir, r.count(levelSymbol)))
	}
	fmt.Printf("vulncheck: FAIL: %d distinct reachable vulnerabilities (%s)\n", len(reachable), strings.Join(per, ", "))
	if fix := stdlibFix(results); fix != "" {
		fmt.Printf("vulncheck: the standard-library ones are fixed in %s (the newest fixed version among them)\n", fix)
	}
	fmt.Printf("vulncheck: govulncheck's own report: go -C tools tool govulncheck -db file://%s -C DIR ./...\n", db)
	return 1, nil
}

// scan runs govulncheck on the module in dir.
func scan(db, dir string) (*result, error) {
	abs, err := filepath.Abs(filepath.Join(*root, dir))
	if err != nil {
		return nil, err
	}
	args := []string{"tool", "govulncheck", "-format", "json", "-db", "file://" + db, "-C", abs}
	if *tests {
		args = append(args, "-test")
	}
	args = append(args, "./...")
	start := time.Now()
	cmd := exec.Command("go", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("govulncheck in %s: %v\n%s", dir, err, stderr.Bytes())
	}
	r := &result{dir: dir, elapsed: time.Since(start)}
	byID := map[string]*vuln{}
	dec := json.NewDecoder(&stdout)
	for {
		var m message
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("govulncheck in %s: reading its output: %v", dir, err)
		}
		switch {
		case m.Config != nil:
			r.goVersion = m.Config.GoVersion
		case m.OSV != nil:
			v := byID[m.OSV.ID]
			if v == nil {
				v = &vuln{id: m.OSV.ID, level: -1}
				byID[m.OSV.ID] = v
			}
			v.summary = m.OSV.Summary
		case m.Finding != nil && len(m.Finding.Trace) > 0:
			f := m.Finding
			v := byID[f.OSV]
			if v == nil {
				v = &vuln{id: f.OSV, level: -1}
				byID[f.OSV] = v
			}
			level := levelModule
			switch top := f.Trace[0]; {
			case top.Function != "":
				level = levelSymbol
			case top.Package != "":
				level = levelPackage
			}
			if level > v.level {
				v.level, v.first = level, f
			}
		}
	}
	for _, v := range byID {
		if v.first != nil { // an OSV message with no finding is only context
			r.vulns = append(r.vulns, v)
		}
	}
	slices.SortFunc(r.vulns, func(a, b *vuln) int { return strings.Compare(a.id, b.id) })
	return r, nil
}

func report(r *result) {
	fmt.Printf("\n== %s (%s, %.0fs): %d reachable; %d more in imported packages, %d more in required modules, whose vulnerable code is not called\n",
		r.dir, r.goVersion, r.elapsed.Seconds(), r.count(levelSymbol), r.count(levelPackage), r.count(levelModule))
	for _, level := range []int{levelSymbol, levelPackage, levelModule} {
		if level != levelSymbol && !*verbose {
			continue
		}
		for _, v := range r.vulns {
			if v.level != level {
				continue
			}
			top := v.first.Trace[0]
			where := top.Package
			if where == "" {
				where = top.Module
			}
			tag := map[int]string{levelSymbol: "called", levelPackage: "imported", levelModule: "required"}[level]
			fmt.Printf("  %s  %-8s %s@%s, fixed in %s: %s\n", v.id, tag, where, goVersion(top), fixedIn(v.first), v.summary)
			if level == levelSymbol {
				fmt.Printf("      e.g. %s\n", trace(v.first.Trace))
			}
		}
	}
}

// goVersion writes the version of frame f's module as go does: go1.26.8
// for the standard library, v1.2.3 for others.
func goVersion(f *frame) string {
	if f.Module == "stdlib" || f.Module == "toolchain" {
		return "go" + strings.TrimPrefix(f.Version, "v")
	}
	return f.Version
}

func fixedIn(f *finding) string {
	if f.FixedVersion == "" {
		return "(no fix)"
	}
	if top := f.Trace[0]; top.Module == "stdlib" || top.Module == "toolchain" {
		return "go" + strings.TrimPrefix(f.FixedVersion, "v")
	}
	return f.FixedVersion
}

// trace writes a call stack from the module's code (the last frame) to the
// vulnerable symbol (the first), as govulncheck's text output does.
func trace(t []*frame) string {
	entry := t[len(t)-1]
	var b strings.Builder
	if p := entry.Position; p != nil {
		fmt.Fprintf(&b, "%s:%d:%d: ", p.Filename, p.Line, p.Column)
	}
	b.WriteString(funcName(entry))
	if len(t) > 1 {
		b.WriteString(" calls " + funcName(t[len(t)-2]))
	}
	if len(t) > 2 {
		if len(t) > 3 {
			b.WriteString(", which eventually calls ")
		} else {
			b.WriteString(", which calls ")
		}
		b.WriteString(funcName(t[0]))
	}
	return b.String()
}

func funcName(f *frame) string {
	name := f.Function
	if f.Receiver != "" {
		name = strings.TrimPrefix(f.Receiver, "*") + "." + name
	}
	return path.Base(f.Package) + "." + name
}

// stdlibFix returns the newest fixed Go version among the reachable
// standard-library vulnerabilities, or "".
func stdlibFix(results []*result) string {
	newest := ""
	for _, r := range results {
		for _, v := range r.vulns {
			if v.level != levelSymbol || v.first.Trace[0].Module != "stdlib" || v.first.FixedVersion == "" {
				continue
			}
			if newest == "" || semver.Compare(v.first.FixedVersion, newest) > 0 {
				newest = v.first.FixedVersion
			}
		}
	}
	if newest == "" {
		return ""
	}
	return "go" + strings.TrimPrefix(newest, "v")
}
