package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/repair"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// A FuzzRecoverCorrupt input is a base partition and a corruption recipe
// (doc.go):
//
//	base    byte 0, bit 7 clear: a generated partition, from bytes 0-3:
//	          byte 0  bits 0-1 segment.bytes (300, 600, 1200, 4096)
//	                  bit 2    index.interval.bytes 0 (else 128)
//	                  bits 3-4 how it was left: closed cleanly; closed, then
//	                           the clean-shutdown marker removed; closed,
//	                           marker and recovery point removed; not closed
//	                           (a crash image, everything synced kept)
//	          byte 1  batches (1 + b%32)
//	          byte 2  codecs used (bit i: codec i%5), 0: none only
//	          byte 3  bit 0 transactions (with an abort); bit 1 follower
//	                  appends; bits 2-3 records per batch (1-4)
//	        byte 0 = 0x80: real files, as a file archive:
//	          uvarint count, then per file uvarint name length, name
//	          ("p/<file>" in the partition directory, "d/<file>" in the log
//	          directory), uvarint data length, data
//	recipe  up to 16 ops of 5 bytes: kind, file, position (2 bytes), argument
const (
	recoverDir     = "kafka-logs"
	recoverArchive = 0x80
	recoverOpSize  = 5
	recoverMaxOps  = 16
)

// Corruption kinds (the recipe op's first byte, modulo numCorruptions).
const (
	corFlip       = iota // xor the byte at position with arg|1
	corTruncate          // cut the file at position
	corZero              // zero arg+1 bytes from position
	corGarbage           // append arg+1 pseudo-random bytes
	corDelete            // remove the file
	corJunkFile          // create a leftover or junk file (arg chooses which)
	corMarker            // remove (arg even) or write the clean-shutdown marker
	corSetByte           // set the byte at position to arg
	corCopy              // append arg+1 bytes copied from position of the same file
	corCheckpoint        // set the recovery point (arg bit 0: or the log start offset) checkpoint to position
	numCorruptions
)

var corruptionNames = [numCorruptions]string{"flip", "truncate", "zero", "garbage", "delete", "junk-file", "marker", "set-byte", "copy", "checkpoint"}

type corruption struct {
	kind, file byte
	pos        uint16
	arg        byte
}

func (c corruption) String() string {
	return fmt.Sprintf("%s(file %d, pos %d, arg %d)", corruptionNames[int(c.kind)%numCorruptions], c.file, c.pos, c.arg)
}

// recoverCase is a decoded FuzzRecoverCorrupt input.
type recoverCase struct {
	gen    [4]byte           // generated base, when files is nil
	files  map[string][]byte // real base: "p/..." and "d/..." files
	part   string            // the partition directory's name
	recipe []corruption
}

func appendUvarintBytes(b []byte, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (c recoverCase) encode() []byte {
	var b []byte
	if c.files == nil {
		b = append(b, c.gen[:]...)
	} else {
		b = append(b, recoverArchive)
		names := make([]string, 0, len(c.files))
		for n := range c.files {
			names = append(names, n)
		}
		sort.Strings(names)
		b = binary.AppendUvarint(b, uint64(len(names)+1))
		b = appendUvarintBytes(b, []byte("name"))
		b = appendUvarintBytes(b, []byte(c.part))
		for _, n := range names {
			b = appendUvarintBytes(b, []byte(n))
			b = appendUvarintBytes(b, c.files[n])
		}
	}
	for _, op := range c.recipe {
		b = append(b, op.kind, op.file, byte(op.pos>>8), byte(op.pos), op.arg)
	}
	return b
}

func decodeRecoverCase(data []byte) recoverCase {
	var c recoverCase
	if len(data) > 0 && data[0] == recoverArchive {
		data = data[1:]
		c.files = map[string][]byte{}
		c.part = "t-0"
		n, k := binary.Uvarint(data)
		if k <= 0 {
			n, data = 0, nil
		} else {
			data = data[k:]
		}
		next := func() ([]byte, bool) {
			l, k := binary.Uvarint(data)
			if k <= 0 || l > uint64(len(data)-k) {
				data = nil
				return nil, false
			}
			v := data[k : k+int(l)]
			data = data[k+int(l):]
			return v, true
		}
		for range min(n, 64) {
			name, ok1 := next()
			body, ok2 := next()
			if !ok1 || !ok2 {
				break
			}
			if string(name) == "name" {
				// A Kafka topic name (legal characters only), a dash and the
				// partition: checkpoint.ParseDirName takes more than the
				// checkpoint files can hold.
				if validPartDir.MatchString(string(body)) {
					c.part = string(body)
				}
				continue
			}
			c.files[string(name)] = body
		}
	} else {
		for i := range c.gen {
			if i < len(data) {
				c.gen[i] = data[i]
			}
		}
		data = data[min(len(data), len(c.gen)):]
	}
	for len(data) >= recoverOpSize && len(c.recipe) < recoverMaxOps {
		c.recipe = append(c.recipe, corruption{data[0] % numCorruptions, data[1], binary.BigEndian.Uint16(data[2:]), data[4]})
		data = data[recoverOpSize:]
	}
	return c
}

var validPartDir = regexp.MustCompile(`^[A-Za-z0-9._-]{1,200}-[0-9]{1,9}$`)

// original is what the base partition holds: the records of its valid
// batches by offset. A damaged archive (the fuzzer mutates real files too)
// can hold different valid records at one offset: such an offset has no
// single original, only alternatives, any of which may be served.
//
// A real file can also end in a torn entry, which a corruption can
// complete (copying the few missing bytes from an identical record
// elsewhere): its checksum then holds, and what it serves is what the
// broker had begun to write. logs keeps the original .log files to
// recognise those.
type original struct {
	at   map[int64]*mrec
	alts map[int64][]*mrec
	logs [][]byte
}

// holds reports whether the checksummed bytes of raw, a served entry,
// are in an original .log: its records are then the broker's, whatever
// its unchecked header fields say. A mutated archive can hold a batch
// whose length or magic field is damaged, which no reader can take as
// original; a corruption that mends the field makes it readable again.
func (o original) holds(raw []byte) bool {
	from := 16 // a legacy message's CRC covers its magic on
	if len(raw) > record.MagicOffset && int8(raw[record.MagicOffset]) == record.MagicV2 {
		from = record.CRCOffset + 4
	}
	if len(raw) <= from {
		return false
	}
	for _, d := range o.logs {
		if bytes.Contains(d, raw[from:]) {
			return true
		}
	}
	return false
}

// completes reports whether raw, a served entry, is the completion of a
// torn entry at the end of an original .log: the file ends with a proper
// prefix of raw that holds at least the whole batch header (and so the
// checksum), the baseOffset aside, which no checksum covers.
func (o original) completes(raw []byte) bool {
	for _, d := range o.logs {
		for m := record.RecordBatchOverhead; m < len(raw) && m <= len(d); m++ {
			if bytes.Equal(d[len(d)-m+8:], raw[8:m]) {
				return true
			}
		}
	}
	return false
}

func newOriginal() original { return original{at: map[int64]*mrec{}, alts: map[int64][]*mrec{}} }

// served reports whether r, served at its offset, is original there.
func (o original) served(r *mrec) bool {
	if x := o.at[r.off]; x != nil {
		return x.equal(r)
	}
	for _, x := range o.alts[r.off] {
		if x.equal(r) {
			return true
		}
	}
	return false
}

// each calls f for every original record, alternatives included.
func (o original) each(f func(*mrec) bool) bool {
	for _, x := range o.at {
		if f(x) {
			return true
		}
	}
	for _, xs := range o.alts {
		for _, x := range xs {
			if f(x) {
				return true
			}
		}
	}
	return false
}

// renumbered reports whether r is an original record served at another
// offset: a batch's baseOffset field is not covered by its checksum (in
// Kafka's format too), so a damaged one renumbers an intact batch, which
// nothing can detect unless the offsets stop increasing.
func (o original) renumbered(r *mrec) bool {
	return o.each(func(x *mrec) bool {
		c := *r
		c.off = x.off
		return x.equal(&c)
	})
}

// hasTimestamp reports whether some original record carries ts (a
// renumbered one may be found at another offset).
func (o original) hasTimestamp(ts int64) bool {
	return o.each(func(x *mrec) bool { return x.ts == ts })
}

// buildBase writes the base partition into a fresh Mem and returns the
// records it holds.
func (c recoverCase) buildBase(t testing.TB, clk *clock) (*vfs.Mem, string, kafkalog.Config, original) {
	mem := vfs.MemOptions{Clock: clk.Now}.New()
	if c.files != nil {
		return c.buildReal(t, mem)
	}
	g := c.gen
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{
		config.SegmentBytes:       strconv.Itoa([]int{300, 600, 1200, 4096}[g[0]&3]),
		config.IndexIntervalBytes: map[bool]string{true: "0", false: "128"}[g[0]&4 != 0],
		config.SegmentIndexBytes:  "4096",
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := recoverDir + "/gen-0"
	l, err := kafkalog.Open(mem, dir, cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	orig := newOriginal()
	var b record.Builder
	var it record.Iterator
	n := 1 + int(g[1]%32)
	perBatch := 1 + int(g[3]>>2)&3
	for i := range n {
		codec := compress.None
		if g[2] != 0 {
			codec = compress.Codec(bitAt(g[2], i) % 5)
		}
		recs := make([]record.Record, 1+i%perBatch)
		for j := range recs {
			recs[j] = record.Record{Timestamp: clk.ms + int64(j), Key: fmt.Appendf(nil, "k%d", i), Value: bytes.Repeat([]byte{byte('a' + i%26)}, 5+(i*7+j)%40)}
		}
		spec := record.NewBatchSpec(0, codec)
		txn := g[3]&1 != 0 && i%4 == 1
		if txn {
			spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence, spec.Transactional = 5, 0, int32(i), true
		}
		var raw []byte
		if g[3]&2 != 0 && i%3 == 2 {
			spec.BaseOffset = l.LogEndOffset() + int64(i%2) // a follower batch, with a gap every other time
			raw, err = b.AppendBatch(nil, &spec, recs)
			if err == nil {
				_, err = l.AppendAsFollower(raw)
			}
		} else {
			raw, err = b.AppendBatch(nil, &spec, recs)
			if err == nil {
				_, err = l.Append(raw, int32(i/8))
			}
		}
		if err != nil {
			t.Fatalf("building the base: %v", err)
		}
		mb, err := decodeBatch(raw, &it)
		if err != nil {
			t.Fatal(err)
		}
		for k := range mb.recs {
			orig.at[mb.recs[k].off] = &mb.recs[k]
		}
		if txn {
			mspec := record.NewBatchSpec(0, compress.None)
			mspec.ProducerID, mspec.ProducerEpoch = 5, 0
			typ := record.ControlCommit
			if i%8 == 1 {
				typ = record.ControlAbort
			}
			raw, _ := b.AppendEndTxnMarker(nil, &mspec, record.EndTxnMarker{Type: typ}, clk.ms)
			if _, err := l.Append(raw, int32(i/8)); err != nil {
				t.Fatalf("building the base: %v", err)
			}
			mb, _ := decodeBatch(raw, &it)
			orig.at[mb.base] = &mb.recs[0]
		}
		clk.ms += 1000
	}
	switch (g[0] >> 3) & 3 {
	case 0, 1, 2:
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if (g[0]>>3)&3 >= 1 {
			mem.Remove(recoverDir + "/" + checkpoint.CleanShutdownFile)
		}
		if (g[0]>>3)&3 == 2 {
			mem.Remove(recoverDir + "/" + checkpoint.RecoveryPointFile)
		}
	case 3:
		// A crash image: what is synced (all of it after the flush) and
		// the unsynced index files of the active segment.
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		mem = mem.CrashClone(vfs.CrashConfig{Seed: uint64(n), UnsyncedDataPercent: 100})
	}
	return mem, dir, cfg, orig
}

func bitAt(mask byte, i int) int {
	// the i-th set bit's position, cycling
	var set []int
	for k := range 8 {
		if mask&(1<<k) != 0 {
			set = append(set, k)
		}
	}
	return set[i%len(set)]
}

// buildReal writes an archive's files and decodes the records of every
// valid batch of its .log files (offsets seen twice with different
// records are dropped: the archive itself may be damaged).
func (c recoverCase) buildReal(t testing.TB, mem *vfs.Mem) (*vfs.Mem, string, kafkalog.Config, original) {
	dir := recoverDir + "/" + c.part
	if err := mem.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	orig := newOriginal()
	ambiguous := map[int64]bool{}
	var it record.EntryIterator
	var r record.Record
	names := make([]string, 0, len(c.files))
	for n := range c.files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		data := c.files[n]
		var p string
		switch {
		case strings.HasPrefix(n, "p/"):
			p = dir + "/" + path.Base(n[2:])
		case strings.HasPrefix(n, "d/"):
			p = recoverDir + "/" + path.Base(n[2:])
		default:
			continue
		}
		if err := vfs.WriteFile(mem, p, data, 0o644); err != nil {
			continue // a name that is a directory, say
		}
		if _, ext, err := segment.ParseFileName(path.Base(p)); err != nil || ext != segment.LogSuffix {
			continue
		}
		orig.logs = append(orig.logs, data)
		add := func(rec *record.Record) {
			m := &mrec{off: rec.Offset, ts: rec.Timestamp, key: cloneNull(rec.Key), val: cloneNull(rec.Value)}
			for _, h := range rec.Headers {
				m.hdrs = append(m.hdrs, record.Header{Key: slices.Clone(h.Key), Value: cloneNull(h.Value)})
			}
			if o := orig.at[m.off]; o != nil && !o.equal(m) {
				ambiguous[m.off] = true
			}
			orig.at[m.off] = m
			orig.alts[m.off] = append(orig.alts[m.off], m)
		}
		// Every valid entry of the file is original, past damage too (the
		// fuzzer mutates the archive itself): resume at the next one after
		// each bad region, as Salvage does.
		for pos := int64(0); pos < int64(len(data)); {
			s := record.NewScanner(data[pos:], p, pos)
			s.Validate = true
			for s.Next() {
				it.Reset(s.Entry())
				for it.Next(&r) {
					add(&r)
				}
			}
			if k, _, _ := s.Tail(); s.Err() == nil && k == record.TailNone {
				break
			}
			next, ok, err := record.FindEntry(bytes.NewReader(data), int64(len(data)), pos+int64(s.ValidBytes())+1)
			if err != nil || !ok {
				break
			}
			pos = next
		}
	}
	for off := range orig.alts {
		if !ambiguous[off] {
			delete(orig.alts, off)
		} else {
			delete(orig.at, off)
		}
	}
	for _, p := range []string{recoverDir, dir} {
		vfs.SyncDir(mem, p)
	}
	cfg, _ := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{config.SegmentBytes: "4096", config.SegmentIndexBytes: "4096"})
	return mem.CrashClone(vfs.CrashConfig{UnsyncedDataPercent: 100}), dir, cfg, orig
}

// copyMem returns a copy of mem's current state.
func copyMem(mem *vfs.Mem) *vfs.Mem { return mem.CrashClone(vfs.CrashConfig{UnsyncedDataPercent: 100}) }

// corruptFiles lists the files a recipe may damage: the partition's and
// the log directory's, sorted.
func corruptFiles(mem *vfs.Mem, dir string) []string {
	var out []string
	for _, d := range []string{dir, path.Dir(dir)} {
		infos, _ := vfs.ReadDir(mem, d)
		for _, fi := range infos {
			if !fi.IsDir() {
				out = append(out, d+"/"+fi.Name())
			}
		}
	}
	sort.Strings(out)
	return out
}

var junkNames = []string{".log.deleted", ".index.swap", ".log.swap", ".log.cleaned", ".timeindex.deleted", ".index.deleted",
	"leader-epoch-checkpoint", "partition.metadata", "../" + checkpoint.RecoveryPointFile, "../" + checkpoint.LogStartOffsetFile,
	"../" + checkpoint.CleanShutdownFile, "odd name.txt", "123.log", ".snapshot", ".txnindex", "00000000000000000000.log.swap"}

// corrupt applies a recipe to mem.
func (c recoverCase) corrupt(t testing.TB, mem *vfs.Mem, dir string) {
	for i, op := range c.recipe {
		files := corruptFiles(mem, dir)
		if len(files) == 0 {
			return
		}
		p := files[int(op.file)%len(files)]
		data, err := vfs.ReadFile(mem, p)
		if err != nil {
			t.Fatal(err)
		}
		pos := int(op.pos)
		rng := rand.New(rand.NewPCG(uint64(op.pos), uint64(i)))
		switch op.kind {
		case corFlip, corSetByte:
			if len(data) == 0 {
				continue
			}
			pos %= len(data)
			if op.kind == corFlip {
				data[pos] ^= op.arg | 1
			} else {
				data[pos] = op.arg
			}
		case corTruncate:
			data = data[:pos%(len(data)+1)]
		case corZero:
			if len(data) == 0 {
				continue
			}
			pos %= len(data)
			clear(data[pos:min(len(data), pos+int(op.arg)+1)])
		case corGarbage:
			g := make([]byte, int(op.arg)+1)
			for k := range g {
				g[k] = byte(rng.Uint32())
			}
			data = append(data, g...)
		case corCopy:
			if len(data) == 0 {
				continue
			}
			pos %= len(data)
			data = append(data, data[pos:min(len(data), pos+int(op.arg)+1)]...)
		case corDelete:
			mem.Remove(p)
			continue
		case corJunkFile:
			name := junkNames[int(op.arg)%len(junkNames)]
			if strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "../") {
				base, _, err := segment.ParseFileName(path.Base(p))
				if err != nil {
					base = int64(op.pos)
				}
				name = segment.FileName(base, "") + name
			}
			junk := make([]byte, int(op.pos)%64)
			for k := range junk {
				junk[k] = byte(rng.Uint32())
			}
			vfs.WriteFile(mem, path.Clean(dir+"/"+name), junk, 0o644)
			continue
		case corMarker:
			mp := path.Dir(dir) + "/" + checkpoint.CleanShutdownFile
			if op.arg%2 == 0 {
				mem.Remove(mp)
			} else {
				vfs.WriteFile(mem, mp, []byte(`{"version":0,"brokerEpoch":1}`), 0o644)
			}
			continue
		case corCheckpoint:
			name := checkpoint.RecoveryPointFile
			if op.arg&1 != 0 {
				name = checkpoint.LogStartOffsetFile
			}
			tp, _ := checkpoint.ParseDirName(path.Base(dir))
			checkpoint.WriteOffsets(mem, path.Dir(dir)+"/"+name, map[checkpoint.TopicPartition]int64{tp: int64(op.pos)})
			continue
		}
		if err := vfs.WriteFile(mem, p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What a recipe leaves is on disk: the copies taken from mem keep it.
	for _, d := range []string{path.Dir(dir), dir} {
		vfs.SyncDir(mem, d)
	}
}

// damage describes, for each .log of the base, whether the recipe damaged
// it in a way the format can detect: a changed byte in a valid entry's
// checksummed region or magic (errorLevel), or a length that is no longer
// an entry boundary of the valid entries, or garbage after them (any
// problem).
type damage struct {
	path       string
	errorLevel bool
}

func detectableDamage(before, after *vfs.Mem, dir string) []damage {
	var out []damage
	infos, _ := vfs.ReadDir(before, dir)
	for _, fi := range infos {
		if _, ext, err := segment.ParseFileName(fi.Name()); err != nil || ext != segment.LogSuffix {
			continue
		}
		p := dir + "/" + fi.Name()
		old, err1 := vfs.ReadFile(before, p)
		cur, err2 := vfs.ReadFile(after, p)
		if err1 != nil || err2 != nil {
			continue // deleted: nothing to read, Verify may see an orphan
		}
		s := record.NewScanner(old, p, 0)
		var ends []int
		var crcRegions [][2]int
		for s.Next() {
			e := s.Entry()
			start := int(e.Position)
			ends = append(ends, start+e.Size())
			crcRegions = append(crcRegions, [2]int{start + record.MagicOffset, start + e.Size()})
		}
		if s.Err() != nil {
			continue // the base is damaged already
		}
		valid := s.ValidBytes()
		d := damage{path: p}
		hit := false
		for k, r := range crcRegions {
			for i := r[0]; i < r[1] && i < len(cur); i++ {
				if cur[i] != old[i] {
					// Bad bytes followed by valid entries are corruption
					// (an error); in the last entry they may read as a torn
					// or zeroed tail (a warning in the active segment).
					hit = true
					for j := k + 1; j < len(crcRegions); j++ {
						start := crcRegions[j][0] - record.MagicOffset
						if ends[j] <= len(cur) && bytes.Equal(cur[start:ends[j]], old[start:ends[j]]) {
							d.errorLevel = true // an intact entry follows
						}
					}
					break
				}
			}
		}
		switch {
		case len(cur) < valid && len(cur) > 0 && !slices.Contains(ends, len(cur)):
			hit = true // cut inside an entry: a torn tail
		case len(cur) > len(old) && len(old) == valid:
			hit = true // bytes after the last entry
		}
		if hit {
			out = append(out, d)
		}
	}
	return out
}

// runRecoverCorrupt is FuzzRecoverCorrupt's body.
func runRecoverCorrupt(t testing.TB, data []byte) {
	c := decodeRecoverCase(data)
	clk := &clock{ms: baseTime}
	base, dir, cfg, orig := c.buildBase(t, clk)
	bad := copyMem(base)
	c.corrupt(t, bad, dir)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\nrecipe %v", fmt.Sprintf(format, args...), c.recipe)
	}

	// inspect.Verify reports every damage the format can detect.
	rep, err := inspect.Verify(copyMem(bad), dir, inspect.Options{Now: clk.ms})
	if err != nil && !errors.Is(err, inspect.ErrNoPartition) {
		fail("inspect.Verify: %v", err)
	}
	for _, d := range detectableDamage(base, bad, dir) {
		found := false
		for _, p := range rep.Problems {
			if p.File == d.path && (p.Level == finding.Error || (!d.errorLevel && p.Level == finding.Warning)) {
				found = true
			}
		}
		if !found {
			fail("%s was damaged (error level %v), inspect.Verify reports nothing about it: %v", d.path, d.errorLevel, rep.Problems)
		}
	}

	// Salvage keeps only original records.
	out := vfs.MemOptions{Clock: clk.Now}.New()
	salvaged := map[int64]bool{}
	// Small preallocated indexes keep the in-memory disk cheap (Kafka's
	// default segment.index.bytes is 10 MiB a file).
	outCfg, _ := kafkalog.ParseConfig(map[string]string{config.SegmentIndexBytes: "4096", config.SegmentMs: strconv.FormatInt(1<<62, 10)})
	sr, err := repair.Salvage(copyMem(bad), dir, out, "salvage/"+path.Base(dir), repair.SalvageOptions{Clock: clk, Config: &outCfg})
	if err != nil {
		fail("repair.Salvage: %v", err)
	}
	// Salvage keeps entries only while offsets increase, and lists the
	// valid ones it drops (after a batch whose unchecked baseOffset was
	// raised, say): those count as found.
	for _, d := range sr.Dropped {
		for off := d.FirstOffset; off <= d.LastOffset && off-d.FirstOffset < 1<<16; off++ {
			salvaged[off] = true
		}
	}
	if sl, err := kafkalog.Open(out, "salvage/"+path.Base(dir), outCfg, kafkalog.Options{Clock: clk}); err != nil {
		fail("opening the salvaged partition: %v", err)
	} else {
		for _, r := range readTolerant(t, sl, orig, fail) {
			salvaged[r] = true
		}
		sl.Close()
	}

	// A writer's Open cuts only torn tails: on corruption it fails with a
	// *kafkalog.CorruptLogError and leaves the damaged segment as it was.
	try := copyMem(bad)
	if l, err := kafkalog.Open(try, dir, cfg, kafkalog.Options{Clock: clk}); err == nil {
		l.Close()
	} else if ce := (*kafkalog.CorruptLogError)(nil); errors.As(err, &ce) {
		want, _ := vfs.ReadFile(bad, ce.Path)
		got, _ := vfs.ReadFile(try, ce.Path)
		swapped := false // a .swap completed into place replaces the file first
		infos, _ := vfs.ReadDir(bad, dir)
		for _, fi := range infos {
			swapped = swapped || strings.HasSuffix(fi.Name(), segment.SwapSuffix)
		}
		if !swapped && !bytes.Equal(got, want) || ce.Position >= ce.Size {
			fail("%v: the refused open changed the file (%d bytes, were %d)", err, len(got), len(want))
		}
	} else if !typedError(err) {
		fail("kafkalog.Open failed with an untyped error: %T %v", err, err)
	}

	// Open in recovery mode (TruncateCorrupt, as Kafka's LogLoader)
	// recovers or fails with a typed error; what it serves is original,
	// and salvage has it too.
	disk := copyMem(bad)
	l, err := kafkalog.Open(disk, dir, cfg, kafkalog.Options{Clock: clk, TruncateCorrupt: true})
	if err != nil {
		if !typedError(err) {
			fail("kafkalog.Open failed with an untyped error: %T %v", err, err)
		}
		return
	}
	recovered := readTolerant(t, l, orig, fail)
	// Open completes .swap files (a junk one included, as Kafka does);
	// Salvage reads the segments as they are: no comparison then.
	swapped := len(l.LoadReport().Renamed) > 0
	for _, off := range recovered {
		if !swapped && !salvaged[off] && off >= l.LogStartOffset() {
			fail("offset %d is served after recovery but not salvaged", off)
		}
	}
	for _, ts := range []int64{baseTime, baseTime + 5000, kafkalog.MaxTimestamp} {
		to, found, err := l.OffsetForTimestamp(ts)
		var ce *format.CorruptionError
		if err != nil && !errors.As(err, &ce) {
			fail("OffsetForTimestamp(%d): untyped error %v", ts, err)
		}
		if found && to.Offset >= 0 && to.Offset < l.LogEndOffset() {
			if o := orig.at[to.Offset]; o != nil && o.ts != to.Timestamp && !orig.hasTimestamp(to.Timestamp) {
				fail("OffsetForTimestamp(%d) = %+v, the original record there is stamped %d", ts, to, o.ts)
			}
		}
	}
	clean := l.LoadReport().CleanShutdown
	// I4: the log takes appends and a second recovery changes nothing.
	if !clean {
		var b record.Builder
		spec := record.NewBatchSpec(0, compress.None)
		raw, _ := b.AppendBatch(nil, &spec, []record.Record{{Timestamp: clk.ms, Value: []byte("after")}})
		if _, err := l.Append(raw, -1); err != nil {
			fail("append after recovery: %v", err)
		}
	}
	lso, leo := l.LogStartOffset(), l.LogEndOffset()
	if err := l.Close(); err != nil {
		fail("close after recovery: %v", err)
	}
	l2, err := kafkalog.Open(disk, dir, cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		fail("reopen after recovery: %v", err)
	}
	defer l2.Close()
	if !clean && (l2.LogStartOffset() != lso || l2.LogEndOffset() != leo || len(l2.LoadReport().Recovered) != 0) {
		fail("second open: offsets %d..%d (were %d..%d), recovered %+v", l2.LogStartOffset(), l2.LogEndOffset(), lso, leo, l2.LoadReport().Recovered)
	}
}

// typedError reports whether err is one callers can act on: a
// *format.CorruptionError, an *fs.PathError, or one of the packages'
// sentinel errors.
func typedError(err error) bool {
	var ce *format.CorruptionError
	var pe *fs.PathError
	if errors.As(err, &ce) || errors.As(err, &pe) {
		return true
	}
	for _, s := range []error{format.ErrInvalid, format.ErrCRC, format.ErrTruncated, index.ErrInvalidSize, index.ErrCorruptIndex,
		index.ErrOffsetOrder, index.ErrOffsetOverflow, index.ErrUnsupportedVersion,
		segment.ErrOffsetOverflow, segment.ErrTooLarge, kafkalog.ErrInvalidRecords} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// readTolerant reads every record from the log start offset. A corrupt
// entry (a log opened without recovery) must come as a
// *format.CorruptionError; the read then goes on at the next segment.
// Every record served must be the original one at its offset (or the one
// appended after recovery). It returns the offsets served.
func readTolerant(t testing.TB, l *kafkalog.Log, orig original, fail func(string, ...any)) []int64 {
	var served []int64
	var it record.EntryIterator
	var r record.Record
	off := l.LogStartOffset()
	segs := l.Segments()
	for guard := 0; off < l.LogEndOffset() && guard < 100000; guard++ {
		res, err := l.Read(off, 1<<16, nil, kafkalog.ReadOptions{})
		if err != nil {
			var ce *format.CorruptionError
			if !errors.As(err, &ce) {
				fail("Read(%d): untyped error %v", off, err)
			}
			next := int64(-1)
			for _, s := range segs {
				if s.BaseOffset() > off {
					next = s.BaseOffset()
					break
				}
			}
			if next < 0 {
				break
			}
			off = next
			continue
		}
		if len(res.Records) == 0 {
			break
		}
		s := record.NewScanner(res.Records, "", 0)
		s.Validate = true
		for s.Next() {
			e := s.Entry()
			check := func() {
				if r.Offset < off {
					return
				}
				got := &mrec{off: r.Offset, ts: r.Timestamp, key: r.Key, val: r.Value, hdrs: r.Headers}
				if !orig.served(got) && string(r.Value) != "after" && !orig.renumbered(got) && !orig.completes(e.Raw()) && !orig.holds(e.Raw()) {
					fail("offset %d serves %q (ts %d), the original is %v (or one of %d alternatives)", r.Offset, r.Value, r.Timestamp, orig.at[r.Offset], len(orig.alts[r.Offset]))
				}
				served = append(served, r.Offset)
			}
			it.Reset(e)
			for it.Next(&r) {
				check()
			}
			if it.Err() != nil {
				fail("Read(%d) served an entry whose records do not decode: %v", off, it.Err())
			}
			off = max(off, e.LastOffset()+1)
		}
		if s.Err() != nil {
			fail("Read returned bytes that do not validate: %v", s.Err())
		}
	}
	return served
}
