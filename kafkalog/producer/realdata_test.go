package producer

import (
	"bytes"
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// scalaOrdered lists the real snapshots with more than one entry written
// by Kafka 3.4 or earlier, whose ProducerStateManager was Scala code
// keeping producers in a scala.collection.mutable.HashMap (Scala 2.12's:
// buckets from a byte-swapped, rotated hash, iterated from the highest):
// tenitems-0 holds ids 2, 4, 3 where Java's HashMap order is 2, 3, 4.
var scalaOrdered = map[string][]int64{
	"macsakini__KafkaCluster/kafka/data/tenitems-0/00000000000000000009.snapshot": {2, 3, 4},
}

// TestRealSnapshots decodes every real .snapshot (CRC checked), re-encodes
// the entries byte-identically, writes them back through WriteSnapshot,
// and loads them into a State whose Snapshot must give the same bytes
// (Java HashMap order), except for the Scala-era files above.
func TestRealSnapshots(t *testing.T) {
	paths := realdata.Glob(t, "*.snapshot")
	var total, nonEmpty, identical, stateIdentical int
	for _, p := range paths {
		rel := realdata.Rel(t, p)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		total++
		entries, err := DecodeSnapshot(data)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if len(entries) > 0 {
			nonEmpty++
		}
		if out := AppendSnapshot(nil, entries); !bytes.Equal(out, data) {
			t.Errorf("%s: re-encoding differs:\n got %x\nwant %x", rel, out, data)
			continue
		}
		name := filepath.Base(p)
		off, err := parseSnapshotName(name)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		m := vfs.NewMem()
		must(t, m.MkdirAll("p", 0o755))
		must(t, WriteSnapshot(m, "p", off, entries))
		if out, _ := vfs.ReadFile(m, "p/"+name); !bytes.Equal(out, data) {
			t.Errorf("%s: WriteSnapshot wrote %x", rel, out)
			continue
		}
		identical++

		s := NewState()
		s.Load(entries, off)
		got := AppendSnapshot(nil, s.Snapshot())
		if want, ok := scalaOrdered[rel]; ok {
			var ids []int64
			for _, e := range s.Snapshot() {
				ids = append(ids, e.ProducerID)
			}
			if !slices.Equal(ids, want) || bytes.Equal(got, data) || len(got) != len(data) {
				t.Errorf("%s: Java order %v, want %v, differing from the file's", rel, ids, want)
			}
			continue
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s: State round trip differs:\n got %x\nwant %x", rel, got, data)
			continue
		}
		stateIdentical++
	}
	t.Logf(".snapshot: %d files (%d non-empty), %d byte-identical through the codec and WriteSnapshot, %d through Load+Snapshot, %d in Scala order",
		total, nonEmpty, identical, stateIdentical, len(scalaOrdered))
	if identical != total || stateIdentical+len(scalaOrdered) != total || total < 100 || nonEmpty < 7 {
		t.Errorf("not every file was identical")
	}
}

func parseSnapshotName(name string) (int64, error) {
	m := vfs.NewMem()
	m.MkdirAll("d", 0o755)
	vfs.WriteFile(m, "d/"+name, nil, 0o644)
	offs, err := ListSnapshots(m, "d")
	if err != nil || len(offs) != 1 {
		return 0, os.ErrInvalid
	}
	return offs[0], nil
}

// TestReplayRealLogs rebuilds the producer state of real partitions from
// their logs, as recovery does, and compares it with the snapshots the
// broker took: replaying the batches below a snapshot's offset must give
// exactly the snapshot's bytes. This covers idempotent producers
// (fuzibotond: 2-3 producers, Java order), a transaction with a COMMIT
// marker (ItumelengMogase's ksqlDB command topic), and every partition
// whose producers are all -1 (the empty form).
func TestReplayRealLogs(t *testing.T) {
	var compared, matched int
	seen := map[string]bool{}
	for _, dir := range realdata.PartitionDirs(t) {
		rel := realdata.Rel(t, dir)
		snaps, err := filepath.Glob(filepath.Join(dir, "*.snapshot"))
		if err != nil || len(snaps) == 0 {
			continue
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		slices.Sort(logs)
		if filepath.Base(logs[0]) != "00000000000000000000.log" {
			continue // retention or compaction removed the start
		}
		var batches []record.Batch
		legacy := false
		for _, lp := range logs {
			b, err := os.ReadFile(lp)
			if err != nil {
				t.Fatal(err)
			}
			sc := record.NewScanner(b, lp, 0)
			for sc.Next() {
				e := sc.Entry()
				if e.Magic != record.MagicV2 {
					legacy = true
					continue
				}
				batches = append(batches, e.Batch)
			}
			if err := sc.Err(); err != nil {
				t.Fatalf("%s: %v", lp, err)
			}
		}
		if legacy || len(batches) == 0 || batches[0].BaseOffset != 0 {
			continue
		}
		for _, sp := range snaps {
			off, _ := parseSnapshotName(filepath.Base(sp))
			want, _ := os.ReadFile(sp)
			s := NewState()
			var it record.Iterator
			for i := range batches {
				if batches[i].LastOffset() >= off {
					break
				}
				info, err := FromBatch(&batches[i], &it)
				if err != nil {
					t.Fatalf("%s: %v", rel, err)
				}
				if _, _, err := s.Replay(info); err != nil {
					t.Fatalf("%s: %v", rel, err)
				}
			}
			if s.MapEndOffset() != off && s.Len() == 0 && len(want) > SnapshotHeaderSize {
				continue // the snapshot is past the replayed data
			}
			compared++
			got := AppendSnapshot(nil, s.Snapshot())
			if javaOrder, ok := scalaOrdered[realdata.Rel(t, sp)]; ok {
				// Same entries in another order: Kafka 3.4's Scala map.
				gotE, _ := DecodeSnapshot(got)
				wantE, _ := DecodeSnapshot(want)
				var ids []int64
				for _, e := range gotE {
					ids = append(ids, e.ProducerID)
				}
				sortByID := func(es []Entry) []Entry {
					return slices.SortedFunc(slices.Values(es), func(a, b Entry) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
				}
				if !slices.Equal(ids, javaOrder) || !slices.Equal(sortByID(gotE), sortByID(wantE)) {
					t.Errorf("%s: replayed %+v, broker %+v", rel, gotE, wantE)
					continue
				}
				matched++
				continue
			}
			if !bytes.Equal(got, want) {
				gotE, _ := DecodeSnapshot(got)
				wantE, _ := DecodeSnapshot(want)
				t.Errorf("%s/%s: replayed state differs from the broker's snapshot:\n got %+v\nwant %+v", rel, filepath.Base(sp), gotE, wantE)
				continue
			}
			matched++
			seen[realdata.Rel(t, sp)] = true
		}
	}
	t.Logf("replayed %d real snapshots from their logs, %d match (%d byte-identical, %d equal up to Kafka 3.4's entry order)", compared, matched, matched-len(scalaOrdered), len(scalaOrdered))
	if compared < 20 || matched != compared {
		t.Errorf("%d of %d matched", matched, compared)
	}
	// The transactional and the multi-producer cases must be among them.
	for _, want := range []string{
		"ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_confluent-ksql-default__command_topic-0/00000000000000000002.snapshot",
		"fuzibotond__Experts-in-team-innovation/kafka/data/sensor-data-topic-0/00000000000000000034.snapshot",
		"fuzibotond__Experts-in-team-innovation/kafka/data/sensor-data-topic-0/00000000000000000035.snapshot",
	} {
		if !seen[want] {
			t.Errorf("%s was not replayed byte-identically", want)
		}
	}
}
