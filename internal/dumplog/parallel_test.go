package dumplog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/benchdata"
	"github.com/segkit/segkit/record"
)

// mixedLog builds a log of n rounds of every kind of entry a dump
// describes: v2 batches (uncompressed with headers, zstd, a transaction
// marker, an offset gap) and legacy v0 and v1 messages and gzip wrappers.
func mixedLog(t testing.TB, n int) []byte {
	t.Helper()
	var w record.Builder
	var log []byte
	var err error
	off := int64(0)
	for round := range n {
		for _, c := range []compress.Codec{compress.None, compress.Zstd} {
			recs := benchdata.Records(benchdata.Shapes[0])[:1+round%5]
			for i := range recs {
				recs[i].Headers = []record.Header{{Key: []byte("trace"), Value: []byte("abc")}}
			}
			spec := record.NewBatchSpec(off, c)
			spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = 7, 1, int32(off)
			if log, err = w.AppendBatch(log, &spec, recs); err != nil {
				t.Fatal(err)
			}
			off += int64(len(recs))
			if round%3 == 1 {
				off += 5 // a gap: non-consecutive offsets
			}
		}
		spec := record.NewBatchSpec(off, compress.None)
		spec.ProducerID, spec.ProducerEpoch = 7, 1
		if log, err = w.AppendEndTxnMarker(log, &spec, record.EndTxnMarker{Type: record.ControlCommit}, benchdata.BaseTimestamp); err != nil {
			t.Fatal(err)
		}
		off++
		if round%4 == 3 {
			recs := benchdata.Records(benchdata.Shapes[0])[:3]
			for _, magic := range []int8{record.MagicV0, record.MagicV1} {
				for _, r := range recs {
					s := record.LegacySpec{Offset: off, Magic: magic, Timestamp: r.Timestamp}
					if log, err = record.AppendLegacyMessage(log, &s, r.Key, r.Value); err != nil {
						t.Fatal(err)
					}
					off++
				}
				s := record.LegacySpec{Offset: off, Magic: magic, Codec: compress.Gzip}
				if log, err = w.AppendLegacyWrapper(log, &s, recs); err != nil {
					t.Fatal(err)
				}
				off += int64(len(recs))
			}
		}
	}
	return log
}

// dumpBoth dumps log sequentially and in parallel (par goroutines, chunks
// of chunk bytes) and reports any difference in the output, the error
// lines, the result or the error.
func dumpBoth(t *testing.T, log []byte, opt Options, par, chunk int) {
	t.Helper()
	run := func(par, chunk int) (string, string, Result, error) {
		var out, errs bytes.Buffer
		o := opt
		o.Parallelism, o.Errors = par, &errs
		res, err := logChunked(&out, bytes.NewReader(log), int64(len(log)), "00000000000000000000.log", o, chunk)
		return out.String(), errs.String(), res, err
	}
	so, se, sr, serr := run(1, chunk)
	for _, mapped := range []bool{false, true} {
		var mappings atomic.Int64 // mapped and not yet released
		if mapped {
			// Options.Map over the log in memory: the chunks are slices of
			// it, read in place.
			opt.Map = func(off int64, n int) ([]byte, func(), error) {
				mappings.Add(1)
				var once sync.Once
				return log[off : off+int64(n)], func() { once.Do(func() { mappings.Add(-1) }) }, nil
			}
		}
		po, pe, pr, perr := run(par, chunk)
		if n := mappings.Load(); n != 0 {
			t.Errorf("parallel %d, chunks of %d: %d mappings left unreleased", par, chunk, n)
		}
		if d := cmp.Diff(so, po); d != "" {
			t.Errorf("parallel %d, chunks of %d, mapped %t: output differs (-sequential +parallel):\n%s", par, chunk, mapped, d)
		}
		if d := cmp.Diff(se, pe); d != "" {
			t.Errorf("parallel %d, chunks of %d, mapped %t: error lines differ (-sequential +parallel):\n%s", par, chunk, mapped, d)
		}
		if d := cmp.Diff(sr, pr); d != "" {
			t.Errorf("parallel %d, chunks of %d, mapped %t: result differs (-sequential +parallel):\n%s", par, chunk, mapped, d)
		}
		if fmt.Sprint(serr) != fmt.Sprint(perr) {
			t.Errorf("parallel %d, chunks of %d, mapped %t: error %v, sequential %v", par, chunk, mapped, perr, serr)
		}
	}
}

// TestParallelMatches holds the parallel dump to the sequential one, in
// every output mode, over clean logs and logs damaged in each way the
// dump reports: a bad CRC, a size out of range, zeros, a partial entry at
// the end, an entry past the end of the file.
func TestParallelMatches(t *testing.T) {
	clean := mixedLog(t, 40)
	t.Logf("log of %d bytes", len(clean))
	damaged := map[string][]byte{"clean": clean}
	// Positions of some entries, to damage the log where entries start.
	var starts []int
	for i := 0; i+record.LogOverhead <= len(clean); {
		starts = append(starts, i)
		i += record.LogOverhead + int(binary.BigEndian.Uint32(clean[i+record.LengthOffset:]))
	}
	mid := starts[len(starts)/2]
	with := func(name string, f func(b []byte) []byte) {
		damaged[name] = f(bytes.Clone(clean))
	}
	with("bad CRC", func(b []byte) []byte { b[mid+record.LogOverhead+30] ^= 0xff; return b })
	with("bad CRCs everywhere", func(b []byte) []byte {
		for i, s := range starts {
			if i%7 == 3 {
				b[s+record.LogOverhead+30] ^= 0xff
			}
		}
		return b
	})
	with("records that do not decode under a valid CRC", func(b []byte) []byte {
		// The first uncompressed v2 batch after mid: its first record's
		// length changed, its CRC made good again.
		s := mid
		for int8(b[s+record.MagicOffset]) != record.MagicV2 || b[s+record.AttributesOffset+1]&0x27 != 0 {
			s += record.LogOverhead + int(binary.BigEndian.Uint32(b[s+record.LengthOffset:]))
		}
		end := s + record.LogOverhead + int(binary.BigEndian.Uint32(b[s+record.LengthOffset:]))
		b[s+record.RecordsOffset] ^= 0x02
		binary.BigEndian.PutUint32(b[s+record.CRCOffset:], format.CRC32C(b[s+record.AttributesOffset:end]))
		return b
	})
	with("a KRaft control record that does not decode", func(b []byte) []byte {
		// A LEADER_CHANGE record whose value ends early: the deep dump
		// prints an error line for it, and counts no problem.
		var w record.Builder
		spec := record.NewBatchSpec(0, compress.None)
		spec.Control = true
		bad, err := w.AppendBatch(nil, &spec, []record.Record{{Key: []byte{0, 0, 0, 2}, Value: []byte{0xff}}})
		if err != nil {
			t.Fatal(err)
		}
		return slices.Concat(b[:mid], bad, b[mid:])
	})
	with("size below the minimum", func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[mid+record.LengthOffset:], 3)
		return b
	})
	with("size past the end", func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[mid+record.LengthOffset:], 1<<30)
		return b
	})
	with("zeros in the middle", func(b []byte) []byte { clear(b[mid : mid+4096]); return b })
	with("zeros at the end", func(b []byte) []byte { return append(b, make([]byte, 5000)...) })
	with("partial entry at the end", func(b []byte) []byte { return b[:len(b)-17] })
	with("a few bytes at the end", func(b []byte) []byte { return append(b, 1, 2, 3) })

	modes := []struct {
		name string
		opt  Options
	}{
		{"text", Options{}},
		{"deep", Options{Deep: true}},
		{"print-data", Options{PrintData: true}},
		{"skip-record-metadata", Options{PrintData: true, SkipRecordMetadata: true}},
		{"json", Options{JSON: true}},
		{"json-print-data", Options{JSON: true, PrintData: true}},
		{"max-bytes", Options{Deep: true, MaxBytes: int64(mid + 100)}},
	}
	for name, log := range damaged {
		for _, m := range modes {
			t.Run(name+"/"+m.name, func(t *testing.T) {
				for _, c := range []struct{ par, chunk int }{{2, 64}, {3, 1000}, {2, 4096}, {3, 1 << 16}} {
					dumpBoth(t, log, m.opt, c.par, c.chunk)
				}
			})
		}
	}
}

// TestParallelUsesChunks checks that the parallel dump does the work (the
// equality above would also hold if it always gave up at once): over a
// clean log it prints every chunk, leaving nothing to the sequential
// dump.
func TestParallelUsesChunks(t *testing.T) {
	log := mixedLog(t, 40)
	p := &printer{w: bufioDiscard(), opt: Options{Deep: true}, path: "00000000000000000000.log", last: -1}
	if end := p.parallel(bytes.NewReader(log), int64(len(log)), 2, 4096); end != int64(len(log)) {
		t.Fatalf("the parallel dump stopped at %d of %d bytes", end, len(log))
	}
	if p.res.Batches == 0 || p.res.Records == 0 {
		t.Fatalf("the parallel dump printed nothing: %+v", p.res)
	}
}

// FuzzParallel holds the parallel dump to the sequential one over any
// bytes, with chunks from 13 bytes up.
func FuzzParallel(f *testing.F) {
	f.Add(mixedLog(f, 2), uint16(100), true)
	f.Add(mixedLog(f, 2)[:3000], uint16(0), false)
	b := mixedLog(f, 2)
	b[700] ^= 1
	f.Add(b, uint16(500), true)
	f.Fuzz(func(t *testing.T, log []byte, chunk uint16, deep bool) {
		dumpBoth(t, log, Options{Deep: deep, MaxDecompressed: 1 << 20}, 2, record.LogOverhead+1+int(chunk))
	})
}

func bufioDiscard() *bufio.Writer { return bufio.NewWriter(io.Discard) }

// BenchmarkLogParallel dumps a 16 MiB log (mixedLog's entries), in plain
// and deep text, on one goroutine and on GOMAXPROCS, copied and through
// Options.Map (slices of the log in memory): run with -cpu 1,2.
func BenchmarkLogParallel(b *testing.B) {
	one := mixedLog(b, 40)
	var log []byte
	for len(log) < 16<<20 {
		log = append(log, one...)
	}
	for _, m := range []struct {
		name string
		opt  Options
	}{{"text", Options{}}, {"deep", Options{Deep: true}}} {
		for _, v := range []struct {
			name   string
			par    int
			mapped bool
		}{{"sequential", 1, false}, {"parallel", 0, false}, {"parallel-mapped", 0, true}} {
			b.Run(m.name+"/"+v.name, func(b *testing.B) {
				opt := m.opt
				opt.Parallelism = v.par
				if v.mapped {
					opt.Map = func(off int64, n int) ([]byte, func(), error) { return log[off : off+int64(n)], func() {}, nil }
				}
				b.SetBytes(int64(len(log)))
				b.ReportAllocs()
				r := bytes.NewReader(log)
				for b.Loop() {
					if _, err := Log(io.Discard, r, int64(len(log)), "00000000000000000000.log", opt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
