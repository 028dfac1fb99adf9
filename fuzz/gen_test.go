package fuzz

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/record"
)

var generate = flag.Bool("generate", false, "rewrite the generated seed corpora under testdata/fuzz (edge cases, random cases, ../shared/kafka-real); bug and regression reproducers are kept")

// maxSeedBytes keeps every seed file small; a campaign minimises the
// corpus anyway.
const maxSeedBytes = 10 << 10

// TestGenerateSeeds writes the seed corpora of the three targets. Files
// named bug*, regress* and crash* (reproducers and crashers) are never
// touched; the others (edge-*, rand-*, real-*) are rewritten. It runs only
// with -generate, and needs ../shared/kafka-real.
func TestGenerateSeeds(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz")
	}
	rng := rand.New(rand.NewPCG(20261129, 1))
	write := func(target string, seeds map[string][]byte) {
		dir := filepath.Join("testdata", "fuzz", target)
		old, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range old {
			b := filepath.Base(f)
			if !strings.HasPrefix(b, "bug") && !strings.HasPrefix(b, "regress") && !strings.HasPrefix(b, "crash") {
				os.Remove(f)
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		names := make([]string, 0, len(seeds))
		for n := range seeds {
			names = append(names, n)
		}
		sort.Strings(names)
		kept := 0
		for _, n := range names {
			s := seeds[n]
			text := fuzzseed.Encode(s)
			if len(text) > maxSeedBytes {
				continue
			}
			sum := sha256.Sum256(s)
			p := filepath.Join(dir, n+"-"+hex.EncodeToString(sum[:6]))
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			kept++
		}
		t.Logf("%s: %d seeds", target, kept)
	}

	// FuzzLogOps: edge programs, random programs, and programs shaped
	// like the real partitions (their batches' record counts and codecs).
	logops := map[string][]byte{}
	for i, p := range edgePrograms() {
		logops[name("edge", i)] = p.encode()
	}
	for i := range 90 {
		p := randomProgram(rng)
		if len(p.ops) > 40 {
			p.ops = p.ops[:40]
		}
		logops[name("rand", i)] = p.encode()
	}
	for i, p := range realShapedPrograms(t) {
		logops[name("real", i)] = p.encode()
	}
	write("FuzzLogOps", logops)

	// FuzzRecoverCorrupt: every corruption kind on generated partitions,
	// and small real partitions with a few recipes each.
	rc := map[string][]byte{}
	for i, c := range edgeRecoverCases() {
		rc[name("edge", i)] = c.encode()
	}
	for i := range 50 {
		c := recoverCase{gen: [4]byte{byte(rng.IntN(256)), byte(rng.IntN(24)), byte(rng.IntN(256)), byte(rng.IntN(256))}}
		for range 1 + rng.IntN(3) {
			c.recipe = append(c.recipe, corruption{byte(rng.IntN(numCorruptions)), byte(rng.IntN(256)), uint16(rng.IntN(4096)), byte(rng.IntN(256))})
		}
		rc[name("rand", i)] = c.encode()
	}
	for i, c := range realRecoverCases(t, rng) {
		rc[name("real", i)] = c.encode()
	}
	write("FuzzRecoverCorrupt", rc)

	// FuzzDumpJSON: real segments, indexes and fixtures, generated
	// batches of every kind, and damaged copies.
	dj := map[string][]byte{}
	for i, s := range edgeDumps() {
		dj[name("edge", i)] = s
	}
	for i, s := range generatedDumps(t) {
		dj[name("gen", i)] = s
	}
	for i, s := range realDumps(t, rng) {
		dj[name("real", i)] = s
	}
	write("FuzzDumpJSON", dj)
}

func name(kind string, i int) string { return kind + "-" + leftPad(i) }

func leftPad(i int) string {
	s := "000" + itoa(i)
	return s[len(s)-3:]
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// realShapedPrograms turns small real partitions into FuzzLogOps
// programs: one append per batch with its record count (capped at 8) and
// codec, timestamps ascending, a roll where the partition has a segment
// boundary, then reads, lookups and a crash.
func realShapedPrograms(t *testing.T) []program {
	var out []program
	for _, dir := range realdata.PartitionDirs(t) {
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		sort.Strings(logs)
		p := program{cfg0: 0x03 | 0x04, cfg1: 0x00}
		for si, f := range logs {
			data, err := os.ReadFile(f)
			if err != nil || len(data) == 0 {
				continue
			}
			if si > 0 {
				p.ops = append(p.ops, op{opRoll, 0, 0, 0})
			}
			s := record.NewScanner(data, f, 0)
			for s.Next() && len(p.ops) < 24 {
				e := s.Entry()
				if e.Magic != record.MagicV2 {
					continue
				}
				n := min(int(e.Batch.RecordCount), 8)
				if n == 0 || e.Batch.Attributes.IsControl() {
					continue
				}
				codec := byte(e.Batch.Attributes.Codec())
				c := byte(0)
				if e.Batch.Attributes.IsTransactional() {
					c = 2
				}
				p.ops = append(p.ops, op{opAppend, byte(n-1) | codec<<3 | 1<<6, 1 | 2<<3, c})
			}
		}
		if len(p.ops) < 2 {
			continue
		}
		p.ops = append(p.ops, op{opRead, 3, 0, 1}, op{opLookup, 0, 0, 0}, op{opCrash, 0x06, 1, 2}, op{opReopen, 1, 0, 0})
		out = append(out, p)
		if len(out) == 16 {
			break
		}
	}
	return out
}

// realRecoverCases packs small real partitions (their files and their log
// directory's checkpoints and marker) with a few corruption recipes each.
func realRecoverCases(t *testing.T, rng *rand.Rand) []recoverCase {
	recipes := [][]corruption{
		nil,
		{{corFlip, 1, 100, 0x10}},
		{{corTruncate, 1, 200, 0}},
		{{corGarbage, 1, 7, 40}, {corMarker, 0, 0, 0}},
		{{corDelete, 2, 0, 0}},
		{{corJunkFile, 1, 30, 1}, {corZero, 1, 80, 60}},
		{{corCheckpoint, 0, 3, 0}, {corSetByte, 1, 20, 0xff}},
	}
	var out []recoverCase
	for _, dir := range realdata.PartitionDirs(t) {
		files := map[string][]byte{}
		total := 0
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			files["p/"+e.Name()] = b
			total += len(b)
		}
		for _, n := range []string{"recovery-point-offset-checkpoint", "log-start-offset-checkpoint", ".kafka_cleanshutdown"} {
			if b, err := os.ReadFile(filepath.Join(filepath.Dir(dir), n)); err == nil && len(b) < 2048 {
				files["d/"+n] = b
				total += len(b)
			}
		}
		if total > 6<<10 {
			continue
		}
		for k := range 3 {
			r := recipes[(len(out)+k)%len(recipes)]
			if k == 2 {
				r = []corruption{{byte(rng.IntN(numCorruptions)), byte(rng.IntN(256)), uint16(rng.IntN(4096)), byte(rng.IntN(256))}}
			}
			out = append(out, recoverCase{files: files, part: filepath.Base(dir), recipe: r})
		}
	}
	return out
}

// generatedDumps are batches of every kind: each codec, transactional
// data and markers, headers and nulls, empty batches, legacy v0/v1
// messages and wrappers; whole, and with index files.
func generatedDumps(t *testing.T) [][]byte {
	var b record.Builder
	var out [][]byte
	recs := []record.Record{
		{Timestamp: baseTime, Key: []byte("k"), Value: []byte("value"), Headers: []record.Header{{Key: []byte("h"), Value: []byte("v")}, {Key: []byte("n")}}},
		{Timestamp: baseTime + 5, Value: nil},
		{Timestamp: -1, Key: []byte{0xff, 0xfe}, Value: []byte{}},
	}
	var log []byte
	for c := compress.None; c <= compress.Zstd; c++ {
		spec := record.NewBatchSpec(int64(len(out)*3), c)
		batch, err := b.AppendBatch(nil, &spec, recs)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, encodeDump(dumpDeep|dumpPrintData|dumpText, batch, nil))
		log = append(log, batch...)
	}
	spec := record.NewBatchSpec(20, compress.None)
	spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence, spec.Transactional = 7, 1, 0, true
	txn, _ := b.AppendBatch(nil, &spec, recs[:1])
	abort, _ := b.AppendEndTxnMarker(nil, &record.BatchSpec{BaseOffset: 21, ProducerID: 7, ProducerEpoch: 1, BaseSequence: -1, PartitionLeaderEpoch: -1}, record.EndTxnMarker{Type: record.ControlAbort, CoordinatorEpoch: 3}, baseTime)
	empty := record.NewBatchSpec(22, compress.None)
	empty.LastOffsetDelta, empty.MaxTimestamp = 4, baseTime
	emptyBatch, _ := b.AppendBatch(nil, &empty, nil)
	v0, _ := record.AppendLegacyMessage(nil, &record.LegacySpec{Offset: 30, Magic: record.MagicV0}, []byte("k"), []byte("v0"))
	v1, _ := record.AppendLegacyMessage(nil, &record.LegacySpec{Offset: 31, Magic: record.MagicV1, Timestamp: baseTime}, nil, []byte("v1"))
	wrap, _ := b.AppendLegacyWrapper(nil, &record.LegacySpec{Offset: 32, Magic: record.MagicV1, Codec: compress.Gzip, Timestamp: baseTime}, recs[:2])
	for _, x := range [][]byte{txn, abort, emptyBatch, v0, v1, wrap} {
		out = append(out, encodeDump(dumpDeep|dumpPrintData, x, nil), encodeDump(0, x, nil))
	}
	log = append(append(append(log, txn...), abort...), emptyBatch...)
	all := append(append(append(log, v0...), v1...), wrap...)
	out = append(out, encodeDump(dumpDeep|dumpText, all, nil), encodeDump(dumpPrintData, all[:len(all)-7], nil))
	// Damaged copies: a flipped CRC, a bad length, a cut, trailing zeros.
	for i, cut := range []int{17, 9, len(log) / 2, len(log) - 1} {
		d := append([]byte{}, log...)
		d[cut] ^= 0x40
		out = append(out, encodeDump(dumpDeep|byte(i%2)*dumpPrintData, d, nil))
	}
	out = append(out, encodeDump(dumpDeep, log[:len(log)-20], nil), encodeDump(0, append(append([]byte{}, log...), make([]byte, 64)...), nil))
	// Index files over the log: entries that fit, and ones that do not.
	oidx := []byte{0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 100}
	tidx := append(append(make([]byte, 0, 24), 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0, 0, 0, 0, 2), 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 5, 0, 0, 0, 20)
	txnidx := make([]byte, 34)
	txnidx[9], txnidx[17], txnidx[25], txnidx[33] = 7, 20, 21, 22
	for _, mode := range []byte{1, 1 | dumpVerify, 1 | dumpVerify | dumpText, 2, 2 | dumpVerify, 3, 3 | dumpVerify} {
		idx := map[byte][]byte{1: oidx, 2: tidx, 3: txnidx}[mode&dumpKindMask]
		out = append(out, encodeDump(mode, log, idx), encodeDump(mode, log[:100], append(idx, 0, 1)))
	}
	return out
}

// realDumps are the small .log, .index and .timeindex files of
// ../shared/kafka-real (index files with their segment's .log), the
// segmentio/kafka-go record-set fixtures, and damaged copies of some.
func realDumps(t *testing.T, rng *rand.Rand) [][]byte {
	var out [][]byte
	for _, p := range realdata.Glob(t, "*.log") {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 || len(b) > 8<<10 {
			continue
		}
		mode := byte(dumpDeep | dumpPrintData)
		if len(out)%3 == 0 {
			mode |= dumpText
		}
		out = append(out, encodeDump(mode, b, nil))
		if len(out)%4 == 0 {
			d := append([]byte{}, b...)
			d[rng.IntN(len(d))] ^= byte(1 + rng.IntN(255))
			out = append(out, encodeDump(dumpDeep, d[:len(d)-rng.IntN(min(len(d), 40))], nil))
		}
	}
	for _, pat := range []string{"*.index", "*.timeindex"} {
		kind := byte(1)
		if pat == "*.timeindex" {
			kind = 2
		}
		for _, p := range realdata.Glob(t, pat) {
			idx, err := os.ReadFile(p)
			if err != nil || len(idx) == 0 {
				continue
			}
			log, err := os.ReadFile(strings.TrimSuffix(p, filepath.Ext(p)) + ".log")
			if err != nil || len(log)+len(idx) > 8<<10 || len(log) > 0xffff {
				continue
			}
			out = append(out, encodeDump(kind|dumpVerify, log, idx))
		}
	}
	for _, p := range realdata.Glob(t, "*.hex") {
		rs := realdata.FixtureRecordSet(t, p)
		if len(rs) <= 8<<10 {
			out = append(out, encodeDump(dumpDeep|dumpPrintData|dumpText, rs, nil))
		}
	}
	return out
}
