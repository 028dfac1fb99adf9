package realdata

import (
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// EnvDir names an environment variable that overrides the location.
const EnvDir = "SEGKIT_KAFKA_REAL"

// Find returns the kafka-real directory, or an error saying where it was
// looked for.
func Find() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d, nil
		}
		return "", errors.New("realdata: $" + EnvDir + " = " + d + " is not a directory")
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	// Walk up to the repository root (the directory holding go.mod with no
	// parent go.mod of the same tree), then look beside it.
	tried := []string{}
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "..", "shared", "kafka-real")
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			tried = append(tried, cand)
			if st, err := os.Stat(cand); err == nil && st.IsDir() {
				return filepath.Clean(cand), nil
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", errors.New("realdata: no ../shared/kafka-real beside the repository (looked at " + strings.Join(tried, ", ") + ")")
}

// Dir returns the kafka-real directory for a test. When it is missing the
// test is skipped, unless CI=true, when it fails.
func Dir(tb testing.TB) string {
	tb.Helper()
	d, err := Find()
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%v: CI must run the real-data tests", err)
		}
		tb.Skipf("%v: real-data test skipped (set CI=true to make this a failure)", err)
	}
	return d
}

// BrokerDir returns the repository's testdata/kafka-broker: partitions a
// Kafka 4.3.1 broker wrote (see its PROVENANCE.md), committed so that a clone
// without ../shared (and without Java) still tests against broker files.
func BrokerDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/segkit/segkit\n") {
			cand := filepath.Join(d, "testdata", "kafka-broker")
			if st, err := os.Stat(cand); err == nil && st.IsDir() {
				return cand, nil
			}
			return "", errors.New("realdata: no testdata/kafka-broker in " + d)
		}
		if filepath.Dir(d) == d {
			return "", errors.New("realdata: not inside the segkit repository")
		}
	}
}

// Roots returns the directories of broker-written files the tests read:
// ../shared/kafka-real and the repository's testdata/kafka-broker. A missing
// kafka-real skips the test (fails it under CI=true) as Dir does.
func Roots(tb testing.TB) []string {
	tb.Helper()
	roots := []string{Dir(tb)}
	if b, err := BrokerDir(); err == nil {
		roots = append(roots, b)
	} else {
		tb.Fatal(err)
	}
	return roots
}

// Glob returns the files under the kafka-real directory and
// testdata/kafka-broker whose base name matches pattern (filepath.Match
// syntax), sorted, as paths.
func Glob(tb testing.TB, pattern string) []string {
	tb.Helper()
	var out []string
	for _, root := range Roots(tb) {
		out = append(out, glob(tb, root, pattern)...)
	}
	sort.Strings(out)
	if len(out) == 0 {
		tb.Fatalf("realdata: no %s files under %s", pattern, strings.Join(Roots(tb), ", "))
	}
	return out
}

// GlobUnder is Glob restricted to one root (one of Roots).
func GlobUnder(tb testing.TB, root, pattern string) []string {
	tb.Helper()
	out := glob(tb, root, pattern)
	sort.Strings(out)
	return out
}

func glob(tb testing.TB, root, pattern string) []string {
	tb.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if ok, _ := filepath.Match(pattern, d.Name()); ok {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// Rel returns p relative to the kafka-real directory (or, for the broker
// files, to the repository's testdata, as "kafka-broker/..."), for test names.
func Rel(tb testing.TB, p string) string {
	if b, err := BrokerDir(); err == nil {
		if r, err := filepath.Rel(filepath.Dir(b), p); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r)
		}
	}
	r, err := filepath.Rel(Dir(tb), p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(r)
}

// PartitionDirs returns every directory under kafka-real that holds at
// least one segment (.log) file, sorted.
func PartitionDirs(tb testing.TB) []string {
	tb.Helper()
	seen := map[string]bool{}
	var out []string
	for _, p := range Glob(tb, "*.log") {
		d := filepath.Dir(p)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// LogDirs returns the directories that hold the partition directories
// (PartitionDirs' parents: the log directories), in the order of their
// first partition.
func LogDirs(tb testing.TB) []string {
	tb.Helper()
	seen := map[string]bool{}
	var out []string
	for _, d := range PartitionDirs(tb) {
		if l := filepath.Dir(d); !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// FixtureRecordSet decodes a segmentio/kafka-go fixture (.hex: a captured
// Fetch response) and returns the record set it carries: the bytes after
// the last int32 size field that runs exactly to the end of the response.
func FixtureRecordSet(tb testing.TB, path string) []byte {
	tb.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(text)))
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	// The partition's record set is the response's last field. Its int32
	// size prefix is the first position p with size == len(b)-p.
	for p := 12; p+4 <= len(b); p++ {
		n := int(int32(uint32(b[p-4])<<24 | uint32(b[p-3])<<16 | uint32(b[p-2])<<8 | uint32(b[p-1])))
		if n > 0 && n == len(b)-p {
			return b[p:]
		}
	}
	tb.Fatalf("%s: no record set found", path)
	return nil
}
