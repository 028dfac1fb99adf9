package main

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"testing"

	"golang.org/x/exp/apidiff"
)

func typeCheck(t *testing.T, src string) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("example.com/m/p", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

const src = `package p

import "io"

const (
	A     = 8
	B int = 1 << 40
	S     = "s"
)

type Level int8

const Warn Level = 1

var ErrX error

func F(name string, opts ...int) (*T, error) { return nil, nil }
func G[K comparable, V any](m map[K]V, f func(key K) bool) []K { return nil }

type T struct {
	Name string
	io.Reader
	hidden int
}

func (t *T) M(b []byte) (n int, err error) { return 0, nil }
func (t T) V() Level { return 0 }
func (t *T) m() {}

type I interface {
	io.Closer
	Do(ch <-chan int) error
	private()
}

type Num interface{ ~int | ~int64 }

type Set[E comparable] struct{ m map[E]struct{} }

func (s *Set[E]) Add(e E) {}

type Alias = T

type Fn func(x int, cb func(err error)) error

type unexported struct{ X int }
`

func TestAPILines(t *testing.T) {
	got := apiLines(typeCheck(t, src))
	want := []string{
		"const A = 8",
		"const A untyped int",
		"const B = 1099511627776",
		"const B int",
		"const S = \"s\"",
		"const S untyped string",
		"const Warn = 1",
		"const Warn Level",
		"func F(string, ...int) (*T, error)",
		"func G[K comparable, V any](map[K]V, func(K) bool) []K",
		"method (*Set[E]) Add(E)",
		"method (*T) M([]byte) (int, error)",
		"method (T) Read([]byte) (int, error)",
		"method (T) V() Level",
		"type Alias = T",
		"type Fn func(int, func(error)) error",
		"type I interface { Close, Do, unexported methods }",
		"type I interface, Close() error",
		"type I interface, Do(<-chan int) error",
		"type Level int8",
		"type Num interface{~int | ~int64}",
		"type Set[E comparable] struct",
		"type T struct",
		"type T struct, Name string",
		"type T struct, embedded io.Reader",
		"var ErrX error",
	}
	for i := range want {
		want[i] = "pkg example.com/m/p, " + want[i]
	}
	if !slices.Equal(got, want) {
		t.Errorf("apiLines:\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestExportRoundTrip checks that the baseline, read back from its export
// data, lists the same API, and that apidiff sees a rename through it.
func TestExportRoundTrip(t *testing.T) {
	pkg := typeCheck(t, src)
	data, err := encodePackage(pkg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := encodePackage(pkg)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != string(again) {
		t.Error("export data is not deterministic")
	}
	base, err := decodePackage(token.NewFileSet(), data)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := apiLines(base), apiLines(pkg); !slices.Equal(got, want) {
		t.Errorf("API read back from export data:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	old := &apidiff.Module{Path: "example.com/m", Packages: []*types.Package{base}}
	same := apidiff.ModuleChanges(old, &apidiff.Module{Path: "example.com/m", Packages: []*types.Package{pkg}})
	if len(same.Changes) != 0 {
		t.Errorf("changes against itself: %v", same)
	}
	renamed := typeCheck(t, strings.Replace(src, "func F(", "func Open(", 1))
	r := apidiff.ModuleChanges(old, &apidiff.Module{Path: "example.com/m", Packages: []*types.Package{renamed}})
	var incompatible, compatible []string
	for _, c := range r.Changes {
		if c.Compatible {
			compatible = append(compatible, c.Message)
		} else {
			incompatible = append(incompatible, c.Message)
		}
	}
	if !slices.Equal(incompatible, []string{"./p.F: removed"}) || !slices.Equal(compatible, []string{"./p.Open: added"}) {
		t.Errorf("rename F to Open: incompatible %q, compatible %q", incompatible, compatible)
	}
}
