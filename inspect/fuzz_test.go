package inspect_test

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/fuzz/FuzzVerify from the real data and generated cases")

// FuzzVerify writes random bytes as a segment's .log (and, when indexes is
// set, .index and .timeindex) in a Mem partition and verifies it. Verify
// must not panic, must return no error (the only errors are I/O, and a
// Mem does not fail), and must report a problem on the .log whenever
// record.Scanner (validating every record) stops before the end of it,
// with an error-level one (OK false) when the Scanner reports corruption.
// It counts at least the entries the Scanner read before stopping.
func FuzzVerify(f *testing.F) {
	f.Add([]byte{}, []byte{}, []byte{}, false)
	f.Add(bytes.Repeat([]byte{0}, 100), []byte{}, []byte{}, true)
	f.Fuzz(func(t *testing.T, logData, idx, tidx []byte, indexes bool) {
		m := vfs.NewMem()
		dir := "/logs/t-0"
		if err := m.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		logPath := dir + "/00000000000000000000.log"
		write := func(name string, b []byte) {
			if err := vfs.WriteFile(m, name, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(logPath, logData)
		if indexes {
			write(dir+"/00000000000000000000.index", idx)
			write(dir+"/00000000000000000000.timeindex", tidx)
		}
		rep, err := inspect.Verify(m, dir, inspect.Options{Now: 1_772_442_000_000})
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		// The entries decoded concurrently (in chunks of one entry and of
		// many) give the report of the sequential walk.
		seq, err := inspect.Verify(m, dir, inspect.Options{Now: 1_772_442_000_000, Parallelism: 1})
		if d := cmp.Diff(seq, rep); err != nil || d != "" {
			t.Fatalf("Parallelism 1: %v, differs (-sequential +default):\n%s", err, d)
		}
		par, err := inspect.VerifyChunks(m, dir, inspect.Options{Now: 1_772_442_000_000, Parallelism: 3}, 1)
		if d := cmp.Diff(seq, par); err != nil || d != "" {
			t.Fatalf("Parallelism 3, chunks of one entry: %v, differs (-sequential +parallel):\n%s", err, d)
		}
		s := record.NewScanner(logData, logPath, 0)
		s.Validate = true
		n := 0
		for s.Next() {
			n++
		}
		if rep.Batches < int64(n) {
			t.Errorf("Verify counted %d batches, the Scanner read %d before stopping", rep.Batches, n)
		}
		onLog := false
		for _, p := range rep.Problems {
			if p.File == logPath && p.Level >= finding.Warning {
				onLog = true
			}
			if p.Position < -1 {
				t.Errorf("position %d: %s", p.Position, p)
			}
		}
		kind, _, _ := s.Tail()
		if (s.Err() != nil || kind != record.TailNone) && !onLog {
			t.Errorf("the Scanner stopped (%v, tail %v) but Verify reports nothing on the .log:\n%s", s.Err(), kind, dump(rep))
		}
		if s.Err() != nil && rep.OK {
			t.Errorf("the Scanner found corruption (%v) but Verify says OK:\n%s", s.Err(), dump(rep))
		}
	})
}

// TestUpdateFuzzVerifySeeds writes the committed seeds of FuzzVerify: the
// small segments written by real brokers (with their indexes when they
// have them), damaged copies of a few, and generated edge cases. Run with
// -update-seeds after changing the generator.
func TestUpdateFuzzVerifySeeds(t *testing.T) {
	if !*updateSeeds {
		t.Skip("run with -update-seeds to rewrite testdata/fuzz/FuzzVerify")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzVerify")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n := 0
	add := func(name string, log, idx, tidx []byte, indexes bool) {
		n++
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d-%s", n, name)), []byte(fuzzseed.Encode(log, idx, tidx, indexes)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	readOr := func(p string) ([]byte, bool) {
		b, err := os.ReadFile(p)
		return b, err == nil
	}
	mutated := 0
	for _, p := range realdata.Glob(t, "*.log") {
		st, err := os.Stat(p)
		if err != nil || st.Size() == 0 || st.Size() > 4<<10 {
			continue
		}
		log, _ := os.ReadFile(p)
		base := p[:len(p)-len(".log")]
		idx, ok1 := readOr(base + ".index")
		tidx, ok2 := readOr(base + ".timeindex")
		name := "real"
		add(name, log, idx, tidx, ok1 && ok2)
		if mutated < 6 {
			mutated++
			flip := bytes.Clone(log)
			flip[rng.IntN(len(flip))] ^= 1 << rng.IntN(8)
			add("real-bitflip", flip, idx, tidx, ok1 && ok2)
			add("real-torn", log[:len(log)-1-rng.IntN(len(log)/2)], idx, tidx, ok1 && ok2)
			add("real-zerotail", append(bytes.Clone(log), make([]byte, 64)...), idx, tidx, ok1 && ok2)
		}
	}

	// Generated: every codec, legacy messages, control batches.
	var w record.Builder
	recs := []record.Record{{Timestamp: 1_700_000_000_000, Key: []byte("k"), Value: []byte("v1")}, {Timestamp: 1_700_000_000_005, Value: []byte("v2"), Headers: []record.Header{{Key: []byte("h"), Value: []byte("x")}}}}
	var all []byte
	for c := compress.None; c <= compress.Zstd; c++ {
		spec := record.NewBatchSpec(int64(len(all)), c)
		b, err := w.AppendBatch(nil, &spec, recs)
		if err != nil {
			t.Fatal(err)
		}
		add("gen-"+c.String(), b, nil, nil, false)
		spec.BaseOffset = int64(c) * 2
		all, _ = w.AppendBatch(all, &spec, recs)
	}
	add("gen-all-codecs", all, nil, nil, false)
	for _, magic := range []int8{record.MagicV0, record.MagicV1} {
		m, err := record.AppendLegacyMessage(nil, &record.LegacySpec{Offset: 0, Magic: magic, Timestamp: 1_700_000_000_000}, []byte("k"), []byte("v"))
		if err != nil {
			t.Fatal(err)
		}
		m, _ = record.AppendLegacyMessage(m, &record.LegacySpec{Offset: 1, Magic: magic, Timestamp: 1_700_000_000_001}, nil, []byte("w"))
		add(fmt.Sprintf("gen-legacy-v%d", magic), m, nil, nil, false)
		wr, err := w.AppendLegacyWrapper(nil, &record.LegacySpec{Offset: 2, Magic: magic, Codec: compress.Gzip, Timestamp: 1_700_000_000_002}, recs)
		if err != nil {
			t.Fatal(err)
		}
		add(fmt.Sprintf("gen-legacy-wrapper-v%d", magic), append(m, wr...), nil, nil, false)
	}
	spec := record.NewBatchSpec(0, compress.None)
	spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence, spec.Transactional = 5, 0, 0, true
	txn, _ := w.AppendBatch(nil, &spec, recs)
	spec = record.NewBatchSpec(2, compress.None)
	spec.ProducerID, spec.ProducerEpoch = 5, 0
	txn, _ = w.AppendEndTxnMarker(txn, &spec, record.EndTxnMarker{Type: record.ControlAbort}, 1_700_000_000_010)
	add("gen-aborted-txn", txn, nil, nil, false)
	add("gen-crc-mid", func() []byte { b := bytes.Clone(all); b[80] ^= 1; return b }(), nil, nil, false)
	add("gen-zero-block", func() []byte { b := bytes.Clone(all); clear(b[70:140]); return b }(), nil, nil, false)
	add("gen-garbage", func() []byte {
		b := make([]byte, 300)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}(), nil, nil, false)
	add("gen-short", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 50, 0}, nil, nil, false)
	add("gen-index-garbage", all, []byte{0, 0, 0, 1, 0, 0, 0, 9, 255}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 1}, true)
	add("gen-index-zeros", all, make([]byte, 80), make([]byte, 120), true)
	t.Logf("wrote %d seeds", n)
}
