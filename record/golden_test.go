package record_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/segkit/segkit/record"
)

// The golden files in ../testdata/golden fill the gaps of the real broker
// data (no zstd, no magic 0, no ABORT marker): they were written by
// encoders independent of segkit (franz-go, sarama, pierrec/lz4 plus a
// hand-built KAFKA-3160 frame header), and each comes with a JSON manifest
// of its entries and records. The interop module generates them and checks
// that the committed bytes match its generator; this test checks that
// segkit reads every file to exactly its manifest. See
// ../testdata/README.md.

const goldenDir = "../testdata/golden"

// goldenManifest mirrors interop.Manifest (the core module cannot import
// the interop module).
type goldenManifest struct {
	File        string        `json:"file"`
	Description string        `json:"description"`
	Producer    string        `json:"producer"`
	Entries     []goldenEntry `json:"entries"`
}

type goldenEntry struct {
	Position             int64          `json:"position"`
	Size                 int            `json:"size"`
	Magic                int8           `json:"magic"`
	Codec                string         `json:"codec"`
	BaseOffset           int64          `json:"baseOffset"`
	LastOffset           int64          `json:"lastOffset"`
	PartitionLeaderEpoch int32          `json:"partitionLeaderEpoch"`
	TimestampType        string         `json:"timestampType"`
	MaxTimestamp         int64          `json:"maxTimestamp"`
	ProducerID           int64          `json:"producerId"`
	ProducerEpoch        int16          `json:"producerEpoch"`
	BaseSequence         int32          `json:"baseSequence"`
	Transactional        bool           `json:"transactional"`
	Control              bool           `json:"control"`
	CRC                  uint32         `json:"crc"`
	Records              []goldenRecord `json:"records"`
}

type goldenRecord struct {
	Offset    int64          `json:"offset"`
	Timestamp int64          `json:"timestamp"`
	Key       []byte         `json:"key"`
	Value     []byte         `json:"value"`
	Headers   []goldenHeader `json:"headers,omitempty"`
	Marker    *goldenMarker  `json:"marker,omitempty"`
}

type goldenHeader struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

type goldenMarker struct {
	Type             string `json:"type"`
	CoordinatorEpoch int32  `json:"coordinatorEpoch"`
}

func goldenCopy(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// goldenRecordOf converts a decoded record; control records also get their
// end-transaction marker.
func goldenRecordOf(t *testing.T, r *record.Record, control bool) goldenRecord {
	g := goldenRecord{Offset: r.Offset, Timestamp: r.Timestamp, Key: goldenCopy(r.Key), Value: goldenCopy(r.Value)}
	for _, h := range r.Headers {
		g.Headers = append(g.Headers, goldenHeader{Key: string(h.Key), Value: goldenCopy(h.Value)})
	}
	if control {
		m, err := record.ParseEndTxnMarker(r.Key, r.Value)
		if err != nil {
			t.Fatalf("offset %d: %v", r.Offset, err)
		}
		g.Marker = &goldenMarker{Type: m.Type.String(), CoordinatorEpoch: m.CoordinatorEpoch}
	}
	return g
}

// goldenDecode reads a whole golden log with a validating Scanner and the
// iterators, into the manifest's shape.
func goldenDecode(t *testing.T, path string, data []byte) []goldenEntry {
	s := record.NewScanner(data, path, 0)
	s.Validate = true
	var out []goldenEntry
	var it record.Iterator
	var lit record.LegacyIterator
	var r record.Record
	for s.Next() {
		e := s.Entry()
		g := goldenEntry{Position: e.Position, Size: e.Size(), Magic: e.Magic, LastOffset: e.LastOffset(), MaxTimestamp: e.MaxTimestamp()}
		if e.Magic == record.MagicV2 {
			b := &e.Batch
			if b.ComputeCRC() != b.CRC {
				t.Fatalf("%s at %d: CRC", path, e.Position)
			}
			g.Codec = b.Attributes.Codec().String()
			g.BaseOffset = b.BaseOffset
			g.PartitionLeaderEpoch = b.PartitionLeaderEpoch
			g.TimestampType = b.Attributes.TimestampType().String()
			g.ProducerID, g.ProducerEpoch, g.BaseSequence = b.ProducerID, b.ProducerEpoch, b.BaseSequence
			g.Transactional, g.Control = b.Attributes.IsTransactional(), b.Attributes.IsControl()
			g.CRC = b.CRC
			it.Reset(b)
			for it.Next(&r) {
				g.Records = append(g.Records, goldenRecordOf(t, &r, g.Control))
			}
			if err := it.Err(); err != nil {
				t.Fatalf("%s at %d: %v", path, e.Position, err)
			}
			if it.Remaining() != 0 || len(g.Records) != int(b.RecordCount) {
				t.Fatalf("%s at %d: %d records of %d", path, e.Position, len(g.Records), b.RecordCount)
			}
		} else {
			m := &e.Legacy
			if m.ComputeCRC() != m.CRC {
				t.Fatalf("%s at %d: CRC", path, e.Position)
			}
			g.Codec = m.Codec().String()
			g.PartitionLeaderEpoch = record.NoPartitionLeaderEpoch
			g.TimestampType = m.TimestampType().String()
			g.ProducerID, g.ProducerEpoch, g.BaseSequence = record.NoProducerID, record.NoProducerEpoch, record.NoSequence
			g.CRC = m.CRC
			lit.Reset(m)
			for lit.Next(&r) {
				g.Records = append(g.Records, goldenRecordOf(t, &r, false))
			}
			if err := lit.Err(); err != nil {
				t.Fatalf("%s at %d: %v", path, e.Position, err)
			}
			if len(g.Records) > 0 {
				g.BaseOffset = g.Records[0].Offset
			}
		}
		out = append(out, g)
	}
	if err := s.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if kind, at, n := s.Tail(); kind != record.TailNone || s.ValidBytes() != len(data) {
		t.Fatalf("%s: tail %v at %d (%d bytes), %d valid bytes of %d", path, kind, at, n, s.ValidBytes(), len(data))
	}
	return out
}

func TestGoldenFiles(t *testing.T) {
	manifests, err := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The interop generator writes these four; a missing one is a failure.
	want := []string{"magic0-lz4.json", "magic0-sarama.json", "txn-abort-franz.json", "zstd-franz.json"}
	var have []string
	for _, m := range manifests {
		have = append(have, filepath.Base(m))
	}
	for _, w := range want {
		if !slices.Contains(have, w) {
			t.Errorf("missing %s in %s", w, goldenDir)
		}
	}
	seen := map[string]bool{}
	for _, mpath := range manifests {
		t.Run(filepath.Base(mpath), func(t *testing.T) {
			js, err := os.ReadFile(mpath)
			if err != nil {
				t.Fatal(err)
			}
			var m goldenManifest
			if err := json.Unmarshal(js, &m); err != nil {
				t.Fatal(err)
			}
			if m.File != strings.TrimSuffix(filepath.Base(mpath), ".json")+".log" {
				t.Fatalf("manifest names %q", m.File)
			}
			logPath := filepath.Join(goldenDir, m.File)
			data, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			got := goldenDecode(t, logPath, data)
			if diff := cmp.Diff(m.Entries, got); diff != "" {
				t.Errorf("%s: decoded entries differ from the manifest (-manifest +segkit):\n%s", m.File, diff)
			}
			for _, e := range got {
				seen["codec:"+e.Codec+"/magic"+string('0'+rune(e.Magic))] = true
				for _, r := range e.Records {
					if r.Marker != nil {
						seen["marker:"+r.Marker.Type] = true
					}
				}
			}
		})
	}
	// The gaps of the real data that these files exist to fill.
	for _, k := range []string{"codec:zstd/magic2", "marker:ABORT", "marker:COMMIT", "codec:lz4/magic0",
		"codec:gzip/magic0", "codec:snappy/magic0", "codec:none/magic0"} {
		if !seen[k] {
			t.Errorf("no golden file covers %s", k)
		}
	}
}
