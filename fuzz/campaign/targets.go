package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"sort"
	"strings"
)

// target is one fuzz target: a func FuzzXxx(*testing.F) of a package.
type target struct {
	Name       string
	ImportPath string
	Dir        string
}

// findTargets returns the fuzz targets declared in the given test files:
// top-level functions named Fuzz* taking one *testing.F (as `go test
// -list '^Fuzz'` reports them), sorted.
func findTargets(files []string) ([]string, error) {
	fset := token.NewFileSet()
	var out []string
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !isFuzzName(fd.Name.Name) || fd.Type.Params == nil || len(fd.Type.Params.List) != 1 {
				continue
			}
			if star, ok := fd.Type.Params.List[0].Type.(*ast.StarExpr); ok {
				if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "F" {
					out = append(out, fd.Name.Name)
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// isFuzzName reports whether name is a fuzz target's name: "Fuzz" and
// then nothing, or a character that is not a lower-case letter, as the
// testing package requires.
func isFuzzName(name string) bool {
	if !strings.HasPrefix(name, "Fuzz") {
		return false
	}
	rest := name[len("Fuzz"):]
	return rest == "" || !(rest[0] >= 'a' && rest[0] <= 'z')
}

var listSpec = regexp.MustCompile(`^\s*([\w./-]+\.)?Fuzz\w*\s*(,\s*([\w./-]+\.)?Fuzz\w*\s*)*$`)

// selectTargets keeps the targets named by spec: a comma-separated list
// of names (each a target or Package.Target), or a regular expression
// matched against the names; "" keeps all.
func selectTargets(all []target, spec string) ([]target, error) {
	if spec == "" {
		return all, nil
	}
	if listSpec.MatchString(spec) {
		want := map[string]bool{}
		for _, n := range strings.Split(spec, ",") {
			if n = strings.TrimSpace(n); n != "" {
				want[n] = true
			}
		}
		var out []target
		found := map[string]bool{}
		for _, t := range all {
			if want[t.Name] || want[t.ImportPath+"."+t.Name] {
				out = append(out, t)
				found[t.Name] = true
			}
		}
		for n := range want {
			if !found[n] && !found[n[strings.LastIndex(n, ".")+1:]] {
				return nil, fmt.Errorf("no fuzz target %q", n)
			}
		}
		return out, nil
	}
	re, err := regexp.Compile(spec)
	if err != nil {
		return nil, fmt.Errorf("-targets: %v", err)
	}
	var out []target
	for _, t := range all {
		if re.MatchString(t.Name) {
			out = append(out, t)
		}
	}
	return out, nil
}
