package inspect_test

import (
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/vfs"
)

// FuzzFindPartitions builds a tree in a Mem from a list of paths (one per
// line; a trailing "/" makes a directory, anything else an empty file) and
// checks FindPartitions' invariants: it does not panic; it returns sorted,
// distinct directories under the root, or an error wrapping
// ErrNoPartition; no directory it returns holds (or is inside) another it
// returns; and each one it returns holds a partition's file or is named as
// a partition.
func FuzzFindPartitions(f *testing.F) {
	seg := "00000000000000000000.log"
	for _, s := range []string{
		"",
		"r/" + seg,
		"r/t-0/" + seg + "\nr/t-1/leader-epoch-checkpoint",
		"r/disk-2/t-0/" + seg + "\nr/disk-1/u-3/partition.metadata",
		"r/" + seg + "\nr/t-0/" + seg,
		"r/t-0/abc.log\nr/t-1/\nr/x/",
		"r/a/b/c/d-0/" + seg,
		"r/t-0.abc-delete/\nr/t-0-future/" + seg,
		"r/t-0/1.log.swap\nr/t-0/sub/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if len(spec) > 4096 {
			return
		}
		m := vfs.NewMem()
		if err := m.MkdirAll("r", 0o755); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(spec, "\n") {
			p := path.Clean("r/" + line)
			if !strings.HasPrefix(p, "r/") || strings.ContainsAny(line, "\x00\\") {
				continue
			}
			if strings.HasSuffix(line, "/") {
				m.MkdirAll(p, 0o755)
				continue
			}
			if m.MkdirAll(path.Dir(p), 0o755) == nil {
				vfs.WriteFile(m, p, nil, 0o644)
			}
		}
		got, err := inspect.FindPartitions(m, "r")
		if err != nil {
			if !errors.Is(err, inspect.ErrNoPartition) {
				t.Fatalf("FindPartitions: %v", err)
			}
			return
		}
		for i, l := range got {
			if l.Dir != "r" && !strings.HasPrefix(l.Dir, "r/") {
				t.Fatalf("%q is not under the root", l.Dir)
			}
			if i > 0 && got[i-1].Dir >= l.Dir {
				t.Fatalf("not sorted and distinct: %q then %q", got[i-1].Dir, l.Dir)
			}
			for _, o := range got {
				if o.Dir != l.Dir && strings.HasPrefix(o.Dir, l.Dir+"/") {
					t.Fatalf("%q is returned, and so is %q inside it", l.Dir, o.Dir)
				}
			}
		}
	})
}
