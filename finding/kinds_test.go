package finding

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated part of docs/problems.md from Kinds")

const (
	docsBegin = "<!-- kinds: generated from finding.Kinds by go test ./finding -run TestKindsDoc -update; edit finding/kinds.go -->\n"
	docsEnd   = "<!-- kinds: end -->\n"
)

// renderKinds is the Markdown of Kinds: a table per group.
func renderKinds() string {
	var b strings.Builder
	group := ""
	for _, k := range Kinds() {
		if k.Group != group {
			if group != "" {
				b.WriteString("\n")
			}
			group = k.Group
			b.WriteString("**" + group + "**\n\n| kind | level | meaning | what to do |\n|---|---|---|---|\n")
		}
		b.WriteString("| `" + k.Name + "` | " + k.Levels + " | " + k.Meaning + " | " + k.Do + " |\n")
	}
	return b.String()
}

// TestKindsDoc: the problem-kinds tables of docs/problems.md are Kinds,
// rendered; a kind added to the code and not documented (or the reverse)
// fails here.
func TestKindsDoc(t *testing.T) {
	name := filepath.Join("..", "docs", "problems.md")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, docsBegin), strings.Index(doc, docsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated section (%q ... %q)", name, docsBegin, docsEnd)
	}
	want := renderKinds()
	if got := doc[i+len(docsBegin) : j]; got != want {
		if *update {
			if err := os.WriteFile(name, []byte(doc[:i+len(docsBegin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s is out of date with finding.Kinds: run go test ./finding -run TestKindsDoc -update", name)
	}
}

// TestKindsComplete: every Kind constant is in Kinds once, and Kinds holds
// nothing else.
func TestKindsComplete(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "kinds.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for k, n := range vs.Names {
				if strings.HasPrefix(n.Name, "Kind") {
					v, err := strconv.Unquote(vs.Values[k].(*ast.BasicLit).Value)
					if err != nil {
						t.Fatal(err)
					}
					consts[v] = true
				}
			}
		}
	}
	seen := map[string]bool{}
	for _, k := range Kinds() {
		if !consts[k.Name] {
			t.Errorf("Kinds lists %q, which is no Kind constant", k.Name)
		}
		if seen[k.Name] {
			t.Errorf("Kinds lists %q twice", k.Name)
		}
		seen[k.Name] = true
		if k.Group == "" || k.Levels == "" || k.Meaning == "" || k.Do == "" {
			t.Errorf("%q is not fully described: %+v", k.Name, k)
		}
	}
	for c := range consts {
		if !seen[c] {
			t.Errorf("the constant %q is not in Kinds", c)
		}
	}
}
