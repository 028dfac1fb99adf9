package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/vfs"
)

// realFiles returns the contents of every real file named name, by path
// relative to kafka-real.
func realFiles(t *testing.T, name string) map[string][]byte {
	t.Helper()
	allOnce.Do(func() { all = realdata.Glob(t, "*") }) // one walk of the tree
	out := map[string][]byte{}
	for _, p := range all {
		if filepath.Base(p) != name {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[realdata.Rel(t, p)] = b
	}
	return out
}

var (
	allOnce sync.Once
	all     []string
)

// memWith returns a Mem holding data at dir/name.
func memWith(t *testing.T, dir, name string, data []byte) *vfs.Mem {
	t.Helper()
	m := vfs.NewMem()
	if err := m.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vfs.WriteFile(m, dir+"/"+name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRealOffsetCheckpoints re-encodes every real offset checkpoint:
// decode, write back through WriteOffsetEntries to a Mem, compare bytes.
//
// The one difference is the empty file. Kafka's CheckpointFile constructor
// creates the file empty (Files.createFile) when it does not exist, and a
// checkpoint nobody writes to stays that way: most real
// cleaner-offset-checkpoint files are 0 bytes. Reading one gives no
// entries, and Kafka's writer (like ours) writes no entries as "0\n0\n".
func TestRealOffsetCheckpoints(t *testing.T) {
	var total, identical, empty int
	for _, name := range []string{RecoveryPointFile, LogStartOffsetFile, ReplicationOffsetFile, CleanerOffsetFile} {
		for rel, data := range realFiles(t, name) {
			total++
			entries, err := ParseOffsets(data)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			m := memWith(t, "d", name, nil)
			if err := WriteOffsetEntries(m, "d/"+name, entries); err != nil {
				t.Errorf("%s: write: %v", rel, err)
				continue
			}
			out, _ := vfs.ReadFile(m, "d/"+name)
			if len(data) == 0 {
				empty++
				if len(entries) != 0 || string(out) != "0\n0\n" {
					t.Errorf("%s: empty file read as %v, re-encoded as %q", rel, entries, out)
				}
				continue
			}
			if !bytes.Equal(out, data) {
				t.Errorf("%s: re-encoding differs:\n got %q\nwant %q", rel, out, data)
				continue
			}
			identical++
			// The map reader sees every partition once.
			m2 := memWith(t, "d", name, data)
			offs, err := ReadOffsets(m2, "d/"+name)
			if err != nil || len(offs) != len(entries) {
				t.Errorf("%s: ReadOffsets: %d entries, %v", rel, len(offs), err)
			}
		}
	}
	t.Logf("offset checkpoints: %d files, %d non-empty re-encoded byte-identically, %d empty", total, identical, empty)
	if identical+empty != total || total < 40 {
		t.Errorf("only %d+%d of %d files handled", identical, empty, total)
	}
}

// TestRealLeaderEpochCheckpoints decodes every real leader-epoch-checkpoint
// through the codec and through LoadLeaderEpochCache, and checks that both
// the codec and the cache's Flush write the same bytes back.
func TestRealLeaderEpochCheckpoints(t *testing.T) {
	files := realFiles(t, LeaderEpochFile)
	n := 0
	for rel, data := range files {
		entries, err := ParseLeaderEpochs(data)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if out := AppendLeaderEpochs(nil, entries); !bytes.Equal(out, data) {
			t.Errorf("%s: codec re-encoding differs:\n got %q\nwant %q", rel, out, data)
			continue
		}
		m := memWith(t, "p", LeaderEpochFile, data)
		c, err := LoadLeaderEpochCache(m, "p/"+LeaderEpochFile)
		if err != nil {
			t.Errorf("%s: load: %v", rel, err)
			continue
		}
		if !reflect.DeepEqual(c.Entries(), entries) {
			t.Errorf("%s: the cache changed the entries: %v -> %v", rel, entries, c.Entries())
		}
		if err := c.Flush(m, "p/"+LeaderEpochFile+".out"); err != nil {
			t.Fatal(err)
		}
		if out, _ := vfs.ReadFile(m, "p/"+LeaderEpochFile+".out"); !bytes.Equal(out, data) {
			t.Errorf("%s: Flush differs:\n got %q\nwant %q", rel, out, data)
			continue
		}
		n++
	}
	t.Logf("leader-epoch-checkpoint: %d files, %d byte-identical through codec and cache", len(files), n)
	if n != len(files) || n < 50 {
		t.Errorf("only %d of %d files identical", n, len(files))
	}
}

// TestRealPartitionMetadata re-encodes every real partition.metadata.
func TestRealPartitionMetadata(t *testing.T) {
	files := realFiles(t, PartitionMetadataFile)
	n, metadataTopic := 0, 0
	for rel, data := range files {
		pm, err := ParsePartitionMetadata(data)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if pm.TopicID == MetadataTopicID {
			metadataTopic++
			if filepath.Base(filepath.Dir(rel)) != "__cluster_metadata-0" {
				t.Errorf("%s: the metadata topic ID outside __cluster_metadata", rel)
			}
		}
		m := vfs.NewMem()
		m.MkdirAll("p", 0o755)
		if err := WritePartitionMetadata(m, "p", pm.TopicID); err != nil {
			t.Fatal(err)
		}
		if out, _ := vfs.ReadFile(m, "p/"+PartitionMetadataFile); !bytes.Equal(out, data) {
			t.Errorf("%s: re-encoding differs:\n got %q\nwant %q", rel, out, data)
			continue
		}
		n++
	}
	t.Logf("partition.metadata: %d files, %d byte-identical (%d hold the metadata topic ID)", len(files), n, metadataTopic)
	if n != len(files) || n < 30 || metadataTopic == 0 {
		t.Errorf("only %d of %d files identical", n, len(files))
	}
}

// TestRealCleanShutdown reads every real .kafka_cleanshutdown. Brokers
// since Kafka 3.7 (KIP-966) write the JSON form, which re-encodes
// byte-identically; older ones (the macsakini and yuanliubei sets) left
// an empty file, which means a clean shutdown with no recorded epoch and
// cannot be re-encoded (we always record one).
func TestRealCleanShutdown(t *testing.T) {
	files := realFiles(t, CleanShutdownFile)
	var jsonFiles, emptyFiles int
	for rel, data := range files {
		dir := "data"
		m := memWith(t, dir, CleanShutdownFile, data)
		present, epoch, err := ReadCleanShutdown(m, dir)
		if err != nil || !present {
			t.Errorf("%s: %v %v", rel, present, err)
			continue
		}
		if len(data) == 0 {
			emptyFiles++
			if epoch != UnknownBrokerEpoch {
				t.Errorf("%s: empty marker gave epoch %d", rel, epoch)
			}
			continue
		}
		jsonFiles++
		if out := AppendCleanShutdown(nil, epoch); !bytes.Equal(out, data) {
			t.Errorf("%s: re-encoding differs:\n got %q\nwant %q", rel, out, data)
		}
	}
	t.Logf(".kafka_cleanshutdown: %d files, %d JSON (byte-identical), %d empty", len(files), jsonFiles, emptyFiles)
	if jsonFiles == 0 || emptyFiles == 0 {
		t.Errorf("expected both forms among the real files")
	}
}

// TestRealMetaProperties reads every real meta.properties.
func TestRealMetaProperties(t *testing.T) {
	files := realFiles(t, MetaPropertiesFile)
	versions := map[int32]int{}
	for rel, data := range files {
		mp, err := ParseMetaProperties(data)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		versions[mp.Version]++
		if !mp.HasNodeID {
			t.Errorf("%s: no node id", rel)
		}
		if mp.Version == 1 && mp.ClusterID == "" {
			t.Errorf("%s: version 1 without cluster.id", rel)
		}
		if _, ok := mp.Props["directory.id"]; ok && mp.DirectoryID.IsZero() {
			t.Errorf("%s: directory.id not decoded", rel)
		}
	}
	t.Logf("meta.properties: %d files, versions %v", len(files), versions)
	if versions[0] == 0 || versions[1] == 0 {
		t.Errorf("expected both versions among the real files: %v", versions)
	}
}

// TestRealPartitionDirNames parses the name of every real partition
// directory and checks DirName gives it back.
func TestRealPartitionDirNames(t *testing.T) {
	dirs := realdata.PartitionDirs(t)
	for _, d := range dirs {
		name := filepath.Base(d)
		tp, err := ParseDirName(name)
		if err != nil {
			t.Errorf("%s: %v", realdata.Rel(t, d), err)
			continue
		}
		if tp.DirName() != name {
			t.Errorf("%s: DirName() = %q", name, tp.DirName())
		}
	}
	// Every partition named in a real offset checkpoint has a valid
	// directory name.
	for rel, data := range realFiles(t, RecoveryPointFile) {
		entries, _ := ParseOffsets(data)
		for _, e := range entries {
			if got, err := ParseDirName(e.DirName()); err != nil || got != e.TopicPartition {
				t.Errorf("%s: %v: %v %v", rel, e.TopicPartition, got, err)
			}
		}
	}
	if len(dirs) == 0 || !slices.ContainsFunc(dirs, func(d string) bool { return filepath.Base(d) == "__consumer_offsets-17" }) {
		t.Errorf("partition dirs not found: %d", len(dirs))
	}
}
