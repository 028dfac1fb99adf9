package checkpoint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/segkit/segkit/internal/realdata"
)

// addRealFiles adds every file named name under ../shared/kafka-real as a
// seed (the real-data directory is optional for seeds).
func addRealFiles(f *testing.F, name string) {
	dir, err := realdata.Find()
	if err != nil {
		return
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
		return nil
	})
}

// FuzzParseCleanShutdown: the marker parser never panics, and whatever
// epoch it reads is what writing that epoch gives back.
func FuzzParseCleanShutdown(f *testing.F) {
	for _, s := range []string{"", `{"version":0,"brokerEpoch":6439}`, `{"brokerEpoch":-1}`, `{"version":0}`, `[1]`, `{"brokerEpoch":1e3}`, `{"brokerEpoch":9223372036854775807}`, "\xff"} {
		f.Add([]byte(s))
	}
	addRealFiles(f, CleanShutdownFile)
	f.Fuzz(func(t *testing.T, b []byte) {
		epoch, ok := ParseCleanShutdown(b)
		if !ok {
			return
		}
		again, ok2 := ParseCleanShutdown(AppendCleanShutdown(nil, epoch))
		if !ok2 || again != epoch {
			t.Fatalf("epoch %d re-read as %d, %v", epoch, again, ok2)
		}
	})
}

// FuzzParseMetaProperties: never a panic, errors typed and positioned, and
// a parse that succeeds keeps every property it reports.
func FuzzParseMetaProperties(f *testing.F) {
	for _, s := range []string{"version=0\nbroker.id=1\n", "#c\nversion=1\nnode.id=3\ncluster.id=abc\n", "version:1\\\n\nnode.id 2", "version=2\n", "a\\u00e9=b\n"} {
		f.Add([]byte(s))
	}
	addRealFiles(f, "meta.properties")
	f.Fuzz(func(t *testing.T, b []byte) {
		mp, err := ParseMetaProperties(b)
		if err != nil {
			checkCorrupt(t, err, "", len(b))
			return
		}
		if mp.Version != 0 && mp.Version != 1 {
			t.Fatalf("accepted version %d", mp.Version)
		}
		if _, hasCluster := mp.Props["cluster.id"]; mp.Version == 1 && (!mp.HasNodeID || !hasCluster) {
			t.Fatalf("version 1 without node.id or cluster.id: %+v", mp)
		}
	})
}
