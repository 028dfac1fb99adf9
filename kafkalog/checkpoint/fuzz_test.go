package checkpoint

import (
	"errors"
	"flag"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/vfs"
)

var generate = flag.Bool("generate", false, "regenerate the committed fuzz seed corpora from ../shared/kafka-real")

// checkCorrupt fails unless err is a *format.CorruptionError wrapping
// format.ErrInvalid at an offset within the input.
func checkCorrupt(t *testing.T, err error, path string, n int) {
	t.Helper()
	var ce *format.CorruptionError
	if !errors.As(err, &ce) || !errors.Is(err, format.ErrInvalid) {
		t.Fatalf("untyped error %v (%T)", err, err)
	}
	if ce.Offset < 0 || ce.Offset > int64(n) || ce.Path != path {
		t.Fatalf("error %v: offset %d outside [0, %d] or path %q", err, ce.Offset, n, ce.Path)
	}
}

// FuzzReadOffsetCheckpoint: reading never panics, errors are typed and
// positioned, and whatever reads back writes out and re-reads equal.
func FuzzReadOffsetCheckpoint(f *testing.F) {
	f.Add([]byte("0\n2\norders 0 42\norders 1 17\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := vfs.NewMem()
		must(t, vfs.WriteFile(m, "in", b, 0o644))
		entries, err := ReadOffsetEntries(m, "in")
		if err != nil {
			checkCorrupt(t, err, "in", len(b))
			return
		}
		if err := WriteOffsetEntries(m, "out", entries); err != nil {
			t.Fatalf("cannot write what was read (%v): %v", entries, err)
		}
		again, err := ReadOffsetEntries(m, "out")
		if err != nil || !reflect.DeepEqual(again, entries) && len(again)+len(entries) != 0 {
			t.Fatalf("re-read %v, %v; want %v", again, err, entries)
		}
		if _, err := ReadOffsets(m, "in"); err != nil {
			t.Fatalf("ReadOffsets failed where ReadOffsetEntries did not: %v", err)
		}
	})
}

// FuzzReadLeaderEpochCheckpoint: the codec and the cache loader never
// panic, errors are typed, and both round trips are stable.
func FuzzReadLeaderEpochCheckpoint(f *testing.F) {
	f.Add([]byte("0\n3\n0 0\n2 1020\n5 6437\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := ParseLeaderEpochs(b)
		if err != nil {
			checkCorrupt(t, err, "", len(b))
		} else if again, err := ParseLeaderEpochs(AppendLeaderEpochs(nil, entries)); err != nil || !reflect.DeepEqual(again, entries) && len(again)+len(entries) != 0 {
			t.Fatalf("codec round trip: %v, %v; want %v", again, err, entries)
		}
		m := vfs.NewMem()
		must(t, vfs.WriteFile(m, "in", b, 0o644))
		c, err := LoadLeaderEpochCache(m, "in")
		if c == nil {
			t.Fatal("nil cache")
		}
		if err != nil {
			checkCorrupt(t, err, "in", len(b))
			if c.Len() != 0 {
				t.Fatal("a failed load returned entries")
			}
			return
		}
		loaded := c.Entries()
		for i := 1; i < len(loaded); i++ {
			if loaded[i].Epoch <= loaded[i-1].Epoch || loaded[i].StartOffset <= loaded[i-1].StartOffset {
				t.Fatalf("cache not strictly increasing: %v", loaded)
			}
		}
		must(t, c.Flush(m, "out"))
		c2, err := LoadLeaderEpochCache(m, "out")
		if err != nil || !reflect.DeepEqual(c2.Entries(), loaded) {
			t.Fatalf("cache round trip: %v, %v; want %v", c2.Entries(), err, loaded)
		}
	})
}

// FuzzReadPartitionMetadata: reading never panics, errors are typed, and
// what reads back writes out and re-reads equal.
func FuzzReadPartitionMetadata(f *testing.F) {
	f.Add([]byte("version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := vfs.NewMem()
		must(t, m.MkdirAll("p", 0o755))
		must(t, vfs.WriteFile(m, "p/"+PartitionMetadataFile, b, 0o644))
		pm, err := ReadPartitionMetadata(m, "p")
		if err != nil {
			checkCorrupt(t, err, "p/"+PartitionMetadataFile, len(b))
			return
		}
		if pm.Version < 0 || pm.TopicID.IsZero() {
			t.Fatalf("accepted %+v", pm)
		}
		if again, err := ParsePartitionMetadata(AppendPartitionMetadata(nil, pm)); err != nil || again != pm {
			t.Fatalf("codec round trip: %+v, %v; want %+v", again, err, pm)
		}
		must(t, m.MkdirAll("q", 0o755))
		must(t, WritePartitionMetadata(m, "q", pm.TopicID))
		again, err := ReadPartitionMetadata(m, "q")
		if err != nil || again.TopicID != pm.TopicID || again.Version != 0 {
			t.Fatalf("file round trip: %+v, %v; want topic %v", again, err, pm.TopicID)
		}
	})
}

// TestGenerateCorpus writes the seed corpora: every distinct real file of
// each kind, plus edge cases. Run with -generate.
func TestGenerateCorpus(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz from ../shared/kafka-real")
	}
	collect := func(names ...string) [][]byte {
		var out [][]byte
		for _, n := range names {
			for _, p := range realdata.Glob(t, n) {
				b, err := readOS(p)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, b)
			}
		}
		return out
	}
	strs := func(ss ...string) [][]byte {
		out := make([][]byte, len(ss))
		for i, s := range ss {
			out[i] = []byte(s)
		}
		return out
	}
	write := func(target, prefix string, seeds [][]byte) {
		if err := fuzzseed.Write(filepath.Join("testdata", "fuzz", target), prefix, seeds, 200); err != nil {
			t.Fatal(err)
		}
	}
	write("FuzzReadOffsetCheckpoint", "real", collect(RecoveryPointFile, LogStartOffsetFile, ReplicationOffsetFile, CleanerOffsetFile))
	write("FuzzReadOffsetCheckpoint", "edge", strs("", "0", "0\n", "1\n0\n", "0\n-1\n", "0\n2147483647\nt 0 1\n", "0\r\n1\r\nt 0 1\r\n",
		"0\n1\n 0 1\n", "0\n1\nt 0 1 2\n", "0\n1\nt\t0\t1\n", "0\n2\nt 0 1\nt 0 2\n", "0\n1\nt 0 9223372036854775808\n", "0\n1\n\n", "0\n1\nt\xff 0 1\n"))
	write("FuzzReadLeaderEpochCheckpoint", "real", collect(LeaderEpochFile))
	write("FuzzReadLeaderEpochCheckpoint", "edge", strs("", "0\n", "0\n0\n", "1\n1\n0 0\n", "0\n2\n5 10\n3 20\n", "0\n2\n0 0\n-1 5\n",
		"0\n1\n0 -1\n", "0\n3\n0 0\n2 10", "0\n2\n1 5\n1 5\n", "0\n1\n2147483647 9223372036854775807\n", "0\n1\n0 0 0\n", "\x00\x00"))
	write("FuzzReadPartitionMetadata", "real", collect(PartitionMetadataFile))
	write("FuzzReadPartitionMetadata", "edge", strs("", "version: 0", "version: 0\n", "version:0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg",
		"version: -1\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg", "version: 7\r\ntopic_id:\tRkh9AX0GSAe8U38BBNFwlg\nmore",
		"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg==", "version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlh",
		"version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwl", "version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlgAAA"))
}

func readOS(p string) ([]byte, error) { return vfs.ReadFile(vfs.OS(), p) }
