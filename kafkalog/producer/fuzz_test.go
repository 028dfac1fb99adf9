package producer

import (
	"bytes"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/record"
)

var generate = flag.Bool("generate", false, "regenerate the committed fuzz seed corpora from ../shared/kafka-real")

// FuzzDecodeSnapshot: decoding never panics, never allocates more than
// the input holds, fails only with typed, positioned errors, and what it
// accepts re-encodes to a snapshot that decodes equal (and to the same
// bytes when the input has no trailing bytes). Loading the entries into a
// State and snapshotting again gives the same entries.
func FuzzDecodeSnapshot(f *testing.F) {
	f.Add(AppendSnapshot(nil, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := DecodeSnapshot(b)
		if err != nil {
			var ce *format.CorruptionError
			if !errors.As(err, &ce) || !(errors.Is(err, format.ErrTruncated) || errors.Is(err, format.ErrInvalid) || errors.Is(err, format.ErrCRC)) {
				t.Fatalf("untyped error %v", err)
			}
			if ce.Offset < 0 || ce.Offset > int64(len(b)) {
				t.Fatalf("offset %d outside the input of %d bytes", ce.Offset, len(b))
			}
			return
		}
		if len(entries)*EntrySize > len(b) {
			t.Fatalf("%d entries from %d bytes", len(entries), len(b))
		}
		out := AppendSnapshot(nil, entries)
		again, err := DecodeSnapshot(out)
		if err != nil || !reflect.DeepEqual(again, entries) && len(entries) > 0 {
			t.Fatalf("round trip: %v %v", again, err)
		}
		if len(b) == SizeSnapshot(len(entries)) && !bytes.Equal(out, b) {
			t.Fatalf("re-encoding differs:\n got %x\nwant %x", out, b)
		}
		s := NewState()
		s.Load(entries, 0)
		byID := map[int64]Entry{}
		for _, e := range entries {
			byID[e.ProducerID] = e
		}
		snap := s.Snapshot()
		if len(snap) != len(byID) {
			t.Fatalf("state has %d producers, snapshot %d distinct", len(snap), len(byID))
		}
		for _, e := range snap {
			w := byID[e.ProducerID]
			if w.LastOffset < 0 { // no batch retained: Kafka writes -1, -1, 0
				w.LastSequence, w.LastOffset, w.OffsetDelta = record.NoSequence, -1, 0
			}
			if w.CurrentTxnFirstOffset < 0 {
				w.CurrentTxnFirstOffset = NoTxn
			}
			if e != w {
				t.Fatalf("state changed entry %+v to %+v", w, e)
			}
		}
	})
}

// TestGenerateCorpus writes FuzzDecodeSnapshot's seeds: every distinct
// real snapshot and edge cases. Run with -generate.
func TestGenerateCorpus(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz from ../shared/kafka-real")
	}
	var real [][]byte
	for _, p := range realdata.Glob(t, "*.snapshot") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		real = append(real, b)
	}
	r := rand.New(rand.NewPCG(7, 7))
	three := AppendSnapshot(nil, randomEntries(r, 3))
	recrc := func(b []byte) []byte {
		b = bytes.Clone(b)
		format.PutUint32(b[crcOffset:], format.CRC32C(b[entriesOffset:]))
		return b
	}
	withField := func(b []byte, off int, v ...byte) []byte {
		b = bytes.Clone(b)
		copy(b[off:], v)
		return b
	}
	open := AppendSnapshot(nil, []Entry{
		{ProducerID: 1, Epoch: 0, LastSequence: 4, LastOffset: 9, OffsetDelta: 4, Timestamp: 100, CoordinatorEpoch: -1, CurrentTxnFirstOffset: 5},
		{ProducerID: 17, Epoch: 2, LastSequence: -1, LastOffset: -1, OffsetDelta: 0, Timestamp: 90, CoordinatorEpoch: 3, CurrentTxnFirstOffset: -1},
		{ProducerID: 1, Epoch: 1, LastSequence: 0, LastOffset: 12, OffsetDelta: 0, Timestamp: 110, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1},
	})
	edge := [][]byte{
		nil,
		{0, 1},
		three[:SnapshotHeaderSize-1],
		three[:SnapshotHeaderSize+EntrySize+20],
		three,
		open,
		recrc(withField(three, countOffset, 0x7f, 0xff, 0xff, 0xff)),
		withField(three, countOffset, 0xff, 0xff, 0xff, 0xff),
		withField(three, 0, 0, 2),
		recrc(withField(three, 0, 0, 0)),
		withField(three, crcOffset, 0, 0, 0, 0),
		recrc(append(bytes.Clone(three), 1, 2, 3)),
		append(bytes.Clone(three), 1, 2, 3),
		make([]byte, SnapshotHeaderSize+EntrySize),
	}
	if err := fuzzseed.Write(filepath.Join("testdata", "fuzz", "FuzzDecodeSnapshot"), "real", real, 100); err != nil {
		t.Fatal(err)
	}
	if err := fuzzseed.Write(filepath.Join("testdata", "fuzz", "FuzzDecodeSnapshot"), "edge", edge, 100); err != nil {
		t.Fatal(err)
	}
}
