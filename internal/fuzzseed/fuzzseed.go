package fuzzseed

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
