package fuzzseed

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Encode returns the corpus file text for one seed whose arguments are
// values: []byte, string, bool, and the integer and float kinds go test
// supports.
func Encode(values ...any) string {
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, v := range values {
		switch x := v.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%s)\n", strconv.Quote(string(x)))
		case string:
			fmt.Fprintf(&b, "string(%s)\n", strconv.Quote(x))
		case bool:
			fmt.Fprintf(&b, "bool(%v)\n", x)
		case int:
			fmt.Fprintf(&b, "int(%d)\n", x)
		case int8:
			fmt.Fprintf(&b, "int8(%d)\n", x)
		case int16:
			fmt.Fprintf(&b, "int16(%d)\n", x)
		case int32:
			fmt.Fprintf(&b, "int32(%d)\n", x)
		case int64:
			fmt.Fprintf(&b, "int64(%d)\n", x)
		case uint:
			fmt.Fprintf(&b, "uint(%d)\n", x)
		case uint8:
			fmt.Fprintf(&b, "byte(%d)\n", x)
		case uint16:
			fmt.Fprintf(&b, "uint16(%d)\n", x)
		case uint32:
			fmt.Fprintf(&b, "uint32(%d)\n", x)
		case uint64:
			fmt.Fprintf(&b, "uint64(%d)\n", x)
		case float64:
			fmt.Fprintf(&b, "float64(%v)\n", x)
		default:
			panic(fmt.Sprintf("fuzzseed: unsupported type %T", v))
		}
	}
	return b.String()
}

// Write writes up to max single-[]byte seeds into dir, named
// prefix-<hash>, skipping duplicates. Files already there are kept.
func Write(dir, prefix string, seeds [][]byte, max int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	seen := map[string]bool{}
	n := 0
	for _, s := range seeds {
		if n >= max {
			break
		}
		sum := sha256.Sum256(s)
		name := prefix + "-" + hex.EncodeToString(sum[:8])
		if seen[name] {
			continue
		}
		seen[name] = true
		if err := os.WriteFile(filepath.Join(dir, name), []byte(Encode(s)), 0o644); err != nil {
			return err
		}
		n++
	}
	return nil
}

// MaxSeed is the repository's bound on a committed seed file.
const MaxSeed = 10 << 10

// Grow collects the seeds of one fuzz target and writes them as grow-*
// files of testdata/fuzz/<target>: each named by a hash of its content,
// never a duplicate of a file already in the directory, each under MaxSeed,
// at most Caps[kind] (DefaultCap otherwise) of each kind. The seed
// generators of the packages' thin corpora share it.
type Grow struct {
	// Caps bounds the seeds of a kind; DefaultCap the kinds not in it.
	Caps       map[string]int
	DefaultCap int
	// Kinds counts the seeds added per kind.
	Kinds map[string]int

	tb     testing.TB
	dir    string
	target string
	seen   map[string]bool
	files  map[string]string
}

// NewGrow starts a Grow for target, in testdata/fuzz/<target> of the
// current directory (a package's directory under go test), with a
// DefaultCap of 1000.
func NewGrow(tb testing.TB, target string) *Grow {
	g := &Grow{tb: tb, target: target, dir: filepath.Join("testdata", "fuzz", target), seen: map[string]bool{},
		files: map[string]string{}, Kinds: map[string]int{}, Caps: map[string]int{}, DefaultCap: 1000}
	ents, _ := os.ReadDir(g.dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "grow-") {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(g.dir, e.Name())); err == nil {
			g.seen[string(b)] = true
		}
	}
	return g
}

// Add adds one seed (the fuzz function's arguments, in order); it reports
// whether the seed was new, small enough and within its kind's cap.
func (g *Grow) Add(kind string, values ...any) bool {
	text := Encode(values...)
	limit, ok := g.Caps[kind]
	if !ok {
		limit = g.DefaultCap
	}
	if len(text) >= MaxSeed || g.seen[text] || g.Kinds[kind] >= limit {
		return false
	}
	g.seen[text] = true
	sum := sha256.Sum256([]byte(text))
	g.files["grow-"+kind+"-"+hex.EncodeToString(sum[:6])] = text
	g.Kinds[kind]++
	return true
}

// Write replaces the directory's grow-* files with the collected ones.
func (g *Grow) Write() {
	g.tb.Helper()
	if err := os.MkdirAll(g.dir, 0o755); err != nil {
		g.tb.Fatal(err)
	}
	ents, _ := os.ReadDir(g.dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "grow-") {
			if err := os.Remove(filepath.Join(g.dir, e.Name())); err != nil {
				g.tb.Fatal(err)
			}
		}
	}
	for name, text := range g.files {
		if err := os.WriteFile(filepath.Join(g.dir, name), []byte(text), 0o644); err != nil {
			g.tb.Fatal(err)
		}
	}
	g.tb.Logf("%s: %d grow seeds %v", g.target, len(g.files), g.Kinds)
}
