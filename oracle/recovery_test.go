package oracle_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/segment"
)

// recoverySource is a partition directory the damages start from.
type recoverySource struct {
	name  string
	dir   string
	props map[string]string // index settings both recoveries use
}

func (s recoverySource) flags() []string {
	var f []string
	keys := make([]string, 0, len(s.props))
	for k := range s.props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f = append(f, "--config", k+"="+s.props[k])
	}
	return f
}

func (s recoverySource) config(t testing.TB) *kafkalog.Config {
	t.Helper()
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(s.props)
	if err != nil {
		t.Fatal(err)
	}
	return &cfg
}

// generatedSources writes the segkit partitions the damages start from:
// several segments, every codec, increasing and non-monotonic timestamps,
// dense indexes.
func generatedSources(t testing.TB, root string) []recoverySource {
	t.Helper()
	specs := []struct {
		name          string
		props         map[string]string
		segments, bps int
		maxRecs, vsz  int
		codecs        []compress.Codec
		jitter        bool
	}{
		{"gen-mixed-0", map[string]string{"index.interval.bytes": "256"}, 4, 30, 8, 40, allCodecs, false},
		{"gen-none-0", map[string]string{"index.interval.bytes": "100"}, 3, 40, 3, 60, []compress.Codec{compress.None}, true},
		{"gen-zstd-gzip-0", map[string]string{"index.interval.bytes": "512"}, 5, 20, 20, 30, []compress.Codec{compress.Zstd, compress.Gzip}, true},
		{"gen-lz4-snappy-0", map[string]string{}, 2, 60, 10, 200, []compress.Codec{compress.LZ4, compress.Snappy, compress.None}, false},
	}
	var out []recoverySource
	for i, sp := range specs {
		rng := rand.New(rand.NewPCG(uint64(i)+1, 7))
		dir := filepath.Join(root, sp.name, sp.name)
		writeLog(t, dir, sp.props, genPlan(rng, sp.segments, sp.bps, sp.maxRecs, sp.vsz, sp.codecs, sp.jitter))
		out = append(out, recoverySource{name: sp.name, dir: dir, props: sp.props})
	}
	return out
}

// A damage changes a copy of a partition directory; it reports what it did,
// or false when the partition offers nothing to damage that way.
type damage func(rng *rand.Rand, dir string) (damageInfo, bool)

// damageInfo says what a damage did: in words, and for a flipped bit the
// file, the position of the entry and the header field it hit.
type damageInfo struct {
	desc     string
	file     string
	entryPos int64
	field    string
}

// damages are the kinds of damage, by name.
var damages = []struct {
	kind string
	do   damage
}{
	{"torn-tail", tornTail},
	{"zero-tail", zeroTail},
	{"flip-header", flipIn("header")},
	{"flip-record", flipIn("records")},
	{"flip-crc", flipIn("crc")},
	{"flip-base-offset", flipIn("baseOffset")},
	{"index-truncated", truncateIndex(segment.IndexSuffix)},
	{"timeindex-truncated", truncateIndex(segment.TimeIndexSuffix)},
	{"index-zero-padded", padIndex(segment.IndexSuffix)},
	{"timeindex-zero-padded", padIndex(segment.TimeIndexSuffix)},
	{"index-missing", removeIndexes(segment.IndexSuffix)},
	{"timeindex-missing", removeIndexes(segment.TimeIndexSuffix)},
	{"indexes-missing", removeIndexes(segment.IndexSuffix, segment.TimeIndexSuffix)},
	{"leftover-deleted", leftoverDeleted},
	{"leftover-cleaned", leftoverCleaned},
	{"leftover-swap", leftoverSwap},
	{"leftover-cleaned-and-swap", leftoverCleanedAndSwap},
}

// logBases returns the base offsets of the .log files of dir, sorted.
func logBases(dir string) []int64 {
	ents, _ := os.ReadDir(dir)
	var out []int64
	for _, e := range ents {
		if base, ext, err := segment.ParseFileName(e.Name()); err == nil && ext == segment.LogSuffix {
			out = append(out, base)
		}
	}
	slices.Sort(out)
	return out
}

func segPath(dir string, base int64, ext string) string {
	return filepath.Join(dir, segment.FileName(base, ext))
}

// entrySpan is one entry (batch, or legacy message or wrapper) of a .log.
type entrySpan struct{ pos, end int }

// entries splits b into its entries by their length fields, stopping at the
// first that does not fit.
func entries(b []byte) []entrySpan {
	var out []entrySpan
	for pos := 0; pos+17 <= len(b); {
		size := int(int32(uint32(b[pos+8])<<24 | uint32(b[pos+9])<<16 | uint32(b[pos+10])<<8 | uint32(b[pos+11])))
		end := pos + 12 + size
		if size < 14 || end > len(b) {
			break
		}
		out = append(out, entrySpan{pos, end})
		pos = end
	}
	return out
}

// pickLog picks the .log of a segment of dir at least minSize bytes long,
// the last one more often than the others, and returns its path and size.
func pickLog(rng *rand.Rand, dir string, minSize int64) (string, int64, bool) {
	type seg struct {
		path string
		size int64
	}
	var ok []seg
	for _, b := range logBases(dir) {
		p := segPath(dir, b, segment.LogSuffix)
		if fi, err := os.Stat(p); err == nil && fi.Size() >= minSize {
			ok = append(ok, seg{p, fi.Size()})
		}
	}
	if len(ok) == 0 {
		return "", 0, false
	}
	s := ok[rng.IntN(len(ok))]
	if rng.IntN(5) < 3 {
		s = ok[len(ok)-1]
	}
	return s.path, s.size, true
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func tornTail(rng *rand.Rand, dir string) (damageInfo, bool) {
	p, size, ok := pickLog(rng, dir, 2)
	if !ok {
		return damageInfo{}, false
	}
	at := 1 + rng.Int64N(size-1)
	must(os.Truncate(p, at))
	return damageInfo{desc: fmt.Sprintf("%s cut from %d to %d bytes", filepath.Base(p), size, at)}, true
}

func zeroTail(rng *rand.Rand, dir string) (damageInfo, bool) {
	p, _, ok := pickLog(rng, dir, 1)
	if !ok {
		return damageInfo{}, false
	}
	n := 1 + rng.IntN(300)
	appendZeros(p, n)
	return damageInfo{desc: fmt.Sprintf("%s + %d zero bytes", filepath.Base(p), n)}, true
}

func appendZeros(p string, n int) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	must(err)
	_, err = f.Write(make([]byte, n))
	must(err)
	must(f.Close())
}

// flipIn flips one bit of a random entry, in its header (the fields before
// the records, CRC included), its records, its CRC or its baseOffset (which
// no checksum covers).
func flipIn(where string) damage {
	return func(rng *rand.Rand, dir string) (damageInfo, bool) {
		p, _, ok := pickLog(rng, dir, 61)
		if !ok {
			return damageInfo{}, false
		}
		b, err := os.ReadFile(p)
		must(err)
		es := entries(b)
		if len(es) == 0 {
			return damageInfo{}, false
		}
		e := es[rng.IntN(len(es))]
		v2 := b[e.pos+16] == 2
		var lo, hi int
		switch {
		case where == "baseOffset":
			lo, hi = e.pos, e.pos+8
			lo, hi = e.pos, e.pos+61
		case where == "header":
			lo, hi = e.pos, e.pos+min(26, e.end-e.pos)
		case where == "crc" && v2:
			lo, hi = e.pos+17, e.pos+21
		case where == "crc":
			lo, hi = e.pos+12, e.pos+16
		case v2:
			lo, hi = e.pos+61, e.end
		default:
			lo, hi = e.pos+26, e.end
		}
		if hi <= lo {
			return damageInfo{}, false
		}
		at := lo + rng.IntN(hi-lo)
		bit := byte(1) << rng.IntN(8)
		b[at] ^= bit
		must(os.WriteFile(p, b, 0o644))
		f := fieldAt(at-e.pos, v2)
		return damageInfo{desc: fmt.Sprintf("%s byte %d (entry at %d, %s byte %d) ^= %#02x", filepath.Base(p), at, e.pos, f, at-e.pos, bit),
			file: filepath.Base(p), entryPos: int64(e.pos), field: f}, true
	}
}

// v2Fields and legacyFields name the header fields by their first byte.
var (
	v2Fields = []struct {
		at   int
		name string
	}{{0, "baseOffset"}, {8, "batchLength"}, {12, "partitionLeaderEpoch"}, {16, "magic"}, {17, "crc"}, {21, "attributes"}, {23, "lastOffsetDelta"}, {27, "baseTimestamp"}, {35, "maxTimestamp"}, {43, "producerId"}, {51, "producerEpoch"}, {53, "baseSequence"}, {57, "recordsCount"}, {61, "records"}}
	legacyFields = []struct {
		at   int
		name string
	}{{0, "offset"}, {8, "messageSize"}, {12, "crc"}, {16, "magic"}, {17, "attributes"}, {18, "timestamp or key"}, {26, "message body"}}
)

// fieldAt names the field of an entry's byte rel.
func fieldAt(rel int, v2 bool) string {
	fields := legacyFields
	if v2 {
		fields = v2Fields
	}
	name := ""
	for _, f := range fields {
		if rel >= f.at {
			name = f.name
		}
	}
	return name
}

// pickIndex picks a segment of dir that has an index file with suffix ext.
func pickIndex(rng *rand.Rand, dir, ext string) (string, int64, bool) {
	var ok []string
	for _, b := range logBases(dir) {
		if _, err := os.Stat(segPath(dir, b, ext)); err == nil {
			ok = append(ok, segPath(dir, b, ext))
		}
	}
	if len(ok) == 0 {
		return "", 0, false
	}
	p := ok[rng.IntN(len(ok))]
	fi, _ := os.Stat(p)
	return p, fi.Size(), true
}

func truncateIndex(ext string) damage {
	return func(rng *rand.Rand, dir string) (damageInfo, bool) {
		p, size, ok := pickIndex(rng, dir, ext)
		if !ok || size == 0 {
			return damageInfo{}, false
		}
		at := rng.Int64N(size)
		must(os.Truncate(p, at))
		return damageInfo{desc: fmt.Sprintf("%s cut from %d to %d bytes", filepath.Base(p), size, at)}, true
	}
}

func padIndex(ext string) damage {
	return func(rng *rand.Rand, dir string) (damageInfo, bool) {
		p, size, ok := pickIndex(rng, dir, ext)
		if !ok {
			return damageInfo{}, false
		}
		entry := 8
		if ext == segment.TimeIndexSuffix {
			entry = 12
		}
		n := entry * (1 + rng.IntN(50))
		if rng.IntN(3) == 0 {
			n += 1 + rng.IntN(entry-1) // not a whole entry: fails the sanity check
		}
		appendZeros(p, n)
		return damageInfo{desc: fmt.Sprintf("%s (%d bytes) + %d zero bytes", filepath.Base(p), size, n)}, true
	}
}

func removeIndexes(exts ...string) damage {
	return func(rng *rand.Rand, dir string) (damageInfo, bool) {
		bases := logBases(dir)
		if len(bases) == 0 {
			return damageInfo{}, false
		}
		base := bases[rng.IntN(len(bases))]
		var gone []string
		for _, ext := range exts {
			if os.Remove(segPath(dir, base, ext)) == nil {
				gone = append(gone, segment.FileName(base, ext))
			}
		}
		if len(gone) == 0 {
			return damageInfo{}, false
		}
		return damageInfo{desc: "removed " + strings.Join(gone, ", ")}, true
	}
}

// segmentKinds are the per-segment files a leftover carries.
var segmentKinds = []string{segment.LogSuffix, segment.IndexSuffix, segment.TimeIndexSuffix, segment.TxnIndexSuffix}

// renameSegment renames the files of segment base to carry suffix
// (".deleted"), as retention or a compaction's replacement does.
func renameSegment(dir string, base int64, suffix string) []string {
	var done []string
	for _, ext := range append(slices.Clone(segmentKinds), segment.SnapshotSuffix) {
		p := segPath(dir, base, ext)
		if _, err := os.Stat(p); err == nil {
			must(os.Rename(p, p+suffix))
			done = append(done, filepath.Base(p)+suffix)
		}
	}
	return done
}

// leftoverDeleted renames a prefix of the segments to .deleted, as a
// retention check a crash interrupted after the renames leaves them.
func leftoverDeleted(rng *rand.Rand, dir string) (damageInfo, bool) {
	bases := logBases(dir)
	if len(bases) < 2 {
		return damageInfo{}, false
	}
	k := 1 + rng.IntN(len(bases)-1)
	var done []string
	for _, b := range bases[:k] {
		done = append(done, renameSegment(dir, b, segment.DeletedSuffix)...)
	}
	return damageInfo{desc: "renamed " + strings.Join(done, ", ")}, true
}

// concatLogs returns the .log bytes of bases, one after the other: the
// segment a compaction of them that kept everything would write.
func concatLogs(dir string, bases []int64) []byte {
	var b []byte
	for _, base := range bases {
		d, err := os.ReadFile(segPath(dir, base, segment.LogSuffix))
		must(err)
		b = append(b, d...)
	}
	return b
}

// pickRun picks consecutive segments i..j of dir.
func pickRun(rng *rand.Rand, bases []int64) []int64 {
	i := rng.IntN(len(bases))
	j := i + rng.IntN(min(3, len(bases)-i))
	return bases[i : j+1]
}

// leftoverCleaned writes the .cleaned files of a compaction that had not
// finished (possibly cut short): Kafka deletes them.
func leftoverCleaned(rng *rand.Rand, dir string) (damageInfo, bool) {
	bases := logBases(dir)
	if len(bases) == 0 {
		return damageInfo{}, false
	}
	run := pickRun(rng, bases)
	b := concatLogs(dir, run)
	b = b[:rng.IntN(len(b)+1)]
	p := segPath(dir, run[0], segment.LogSuffix+segment.CleanedSuffix)
	must(os.WriteFile(p, b, 0o644))
	names := []string{filepath.Base(p)}
	if rng.IntN(2) == 0 {
		q := segPath(dir, run[0], segment.IndexSuffix+segment.CleanedSuffix)
		must(os.WriteFile(q, make([]byte, 8*rng.IntN(4)), 0o644))
		names = append(names, filepath.Base(q))
	}
	return damageInfo{desc: fmt.Sprintf("wrote %s (%d bytes, from segments %v)", strings.Join(names, ", "), len(b), run)}, true
}

// writeSwap writes a .log.swap replacing the segments of run, and with
// renamed also renames the sources to .deleted (a crash after step 3 of
// LocalLog.replaceSegments instead of before it).
func writeSwap(rng *rand.Rand, dir string, run []int64) string {
	b := concatLogs(dir, run)
	p := segPath(dir, run[0], segment.LogSuffix+segment.SwapSuffix)
	must(os.WriteFile(p, b, 0o644))
	desc := fmt.Sprintf("wrote %s (%d bytes, segments %v)", filepath.Base(p), len(b), run)
	if rng.IntN(2) == 0 {
		var done []string
		for _, base := range run {
			done = append(done, renameSegment(dir, base, segment.DeletedSuffix)...)
		}
		desc += ", sources renamed " + strings.Join(done, ", ")
	}
	return desc
}

// leftoverSwap leaves a completed compaction's .swap beside its sources:
// Kafka deletes the sources in the swap's range and renames it into place.
func leftoverSwap(rng *rand.Rand, dir string) (damageInfo, bool) {
	bases := logBases(dir)
	if len(bases) == 0 {
		return damageInfo{}, false
	}
	return damageInfo{desc: writeSwap(rng, dir, pickRun(rng, bases))}, true
}

// leftoverCleanedAndSwap leaves a .swap and .cleaned files: Kafka deletes a
// swap at or above the lowest .cleaned offset (an unfinished split or
// clean) and keeps one below it.
func leftoverCleanedAndSwap(rng *rand.Rand, dir string) (damageInfo, bool) {
	bases := logBases(dir)
	if len(bases) == 0 {
		return damageInfo{}, false
	}
	run := pickRun(rng, bases)
	cleanedBase := bases[rng.IntN(len(bases))]
	if rng.IntN(2) == 0 {
		cleanedBase = run[0] // a split's .cleaned beside its .swap
	}
	p := segPath(dir, cleanedBase, segment.LogSuffix+segment.CleanedSuffix)
	d, err := os.ReadFile(segPath(dir, cleanedBase, segment.LogSuffix))
	must(err)
	must(os.WriteFile(p, d[:rng.IntN(len(d)+1)], 0o644))
	return damageInfo{desc: writeSwap(rng, dir, run) + ", wrote " + filepath.Base(p)}, true
}

// recoveryCase is one damaged copy.
type recoveryCase struct {
	id, kind string
	damageInfo
	src            recoverySource
	dmg, mine, out string
}

// expectedDifference is a place where segkit's recovery deliberately does
// not do what Kafka's does; matches says whether a case is one.
type expectedDifference struct {
	name    string
	kafka   string // Kafka's behaviour
	segkit  string
	matches func(c recoveryCase, k kafkaResult, s outcome, serr error, orig outcome) bool
}

var expectedDifferences = []expectedDifference{{
	name: "full-index-stays-sparser",
	kafka: "LogSegment.recover appends an index entry every index.interval.bytes; once an index " +
		"holds segment.index.bytes, the append throws IllegalArgumentException(\"Attempt to append " +
		"to a full [time] index\") and the log does not load",
	segkit: "a full index stays sparser (the README's differences table; seed regress-bug14-recovery-index-full): the log loads and nothing is cut",
	matches: func(c recoveryCase, k kafkaResult, s outcome, serr error, orig outcome) bool {
		return c.kind == "index-full" && strings.Contains(k.Error, "Attempt to append to a full") && serr == nil && cmp.Equal(s, orig)
	},
}, {
	name: "damaged-base-offset-kept",
	kafka: "the batch CRC does not cover baseOffset, and LogSegment.recover checks only the CRC and " +
		"that the last offset fits the segment (ensureOffsetInRange): a batch whose baseOffset was " +
		"damaged is kept, and served with offsets out of order",
	segkit: "the entry whose offsets do not follow its neighbours' is damage (docs/crash-safety.md): " +
		"recovery cuts the segment there and deletes every later segment",
	matches: func(c recoveryCase, k kafkaResult, s outcome, serr error, orig outcome) bool {
		return c.field == "baseOffset" && k.Error == "" && serr == nil &&
			cmp.Equal(k.Segments, orig.Segments) && cutAt(s, c.file, c.entryPos)
	},
}, {
	name: "damaged-base-offset-overflow",
	kafka: "a baseOffset damaged beyond the segment's 32-bit range makes LogSegment.recover throw " +
		"LogSegmentOffsetOverflowException; LogLoader then runs splitOverflowedSegment, which either " +
		"rewrites the segment into segments based at the damaged offsets (the log then starts or goes " +
		"on there) or throws IllegalArgumentException(\"Split operation is only permitted for " +
		"segments with overflow\") and the log does not load",
	segkit: "the entry is damage (log-offset-out-of-range): recovery cuts the segment there and deletes every later segment",
	matches: func(c recoveryCase, k kafkaResult, s outcome, serr error, orig outcome) bool {
		if c.field != "baseOffset" || serr != nil || !cutAt(s, c.file, c.entryPos) {
			return false
		}
		if strings.Contains(k.Error, "Split operation is only permitted") {
			return true
		}
		for _, ks := range k.Segments {
			if !slices.ContainsFunc(orig.Segments, func(o segInfo) bool { return o.BaseOffset == ks.BaseOffset }) {
				return k.Error == "" // a segment split off at a damaged offset
			}
		}
		return false
	},
}, {
	name: "damaged-base-offset-invalid-offset",
	kafka: "a damaged baseOffset still in the segment's range but above the offsets after it makes " +
		"OffsetIndex.append throw InvalidOffsetException at the next batch indexed; LogLoader.recoverLog " +
		"catches it (\"Found invalid offset during recovery. Deleting the corrupt segment and creating " +
		"an empty one with starting offset …\") and truncates the whole segment to its base offset",
	segkit: "recovery cuts the segment at the damaged entry (the valid batches before it stay) and deletes every later segment",
	matches: func(c recoveryCase, k kafkaResult, s outcome, serr error, orig outcome) bool {
		if c.field != "baseOffset" || serr != nil || k.Error != "" || !cutAt(s, c.file, c.entryPos) {
			return false
		}
		kept := slices.IndexFunc(k.Segments, func(ks segInfo) bool {
			return segment.FileName(ks.BaseOffset, segment.LogSuffix) == c.file
		})
		return kept >= 0 && k.Segments[kept].Size == 0
	},
}}

// cutAt reports whether o ends with the segment of file cut at pos.
func cutAt(o outcome, file string, pos int64) bool {
	if len(o.Segments) == 0 {
		return false
	}
	last := o.Segments[len(o.Segments)-1]
	return segment.FileName(last.BaseOffset, segment.LogSuffix) == file && last.Size == pos
}

// TestRecoveryMatchesKafka damages copies of real and segkit-written
// partitions in seeded ways, recovers each with segkit (repair.Recover)
// and with Kafka (UnifiedLog/LogLoader via oracle/kafka recover), and
// requires the same log start and end offsets and the same segments with
// the same sizes (the truncation point), except where a named expected
// difference says otherwise.
func TestRecoveryMatchesKafka(t *testing.T) {
	t.Parallel() // two at a time: one alone keeps 1.3 of the 2 cores busy
	oracle.Require(t)
	tmp := t.TempDir()
	var sources []recoverySource
	for _, d := range realPartitions(t) {
		sources = append(sources, recoverySource{name: shortName(d), dir: d})
	}
	nReal := len(sources)
	gen := generatedSources(t, filepath.Join(tmp, "gen"))
	sources = append(sources, gen...)

	const perKind = 13
	var cases []recoveryCase
	for k, dm := range damages {
		for i := 0; i < perKind; i++ {
			rng := rand.New(rand.NewPCG(uint64(k), uint64(i)))
			c := recoveryCase{id: fmt.Sprintf("%s-%02d", dm.kind, i), kind: dm.kind}
			ok := false
			for try := 0; try < 20 && !ok; try++ {
				// Half the cases from generated partitions (many
				// segments, every codec), half from real ones (falling
				// back to generated ones when few real ones qualify).
				if i%2 == 0 || try >= 10 {
					c.src = gen[rng.IntN(len(gen))]
				} else {
					c.src = sources[rng.IntN(nReal)]
				}
				c.dmg = filepath.Join(tmp, "dmg", c.id, filepath.Base(c.src.dir))
				os.RemoveAll(filepath.Dir(c.dmg))
				copyDir(t, c.src.dir, c.dmg)
				c.damageInfo, ok = dm.do(rng, c.dmg)
			}
			if !ok {
				t.Fatalf("%s: no source partition to damage", c.id)
			}
			cases = append(cases, c)
		}
	}
	// A full offset index: the generated partitions recovered with an index
	// of a few entries (no other damage).
	for i, g := range gen {
		c := recoveryCase{id: fmt.Sprintf("index-full-%02d", i), kind: "index-full", damageInfo: damageInfo{desc: "segment.index.bytes=24, index.interval.bytes=1"}}
		c.src = recoverySource{name: g.name, dir: g.dir, props: map[string]string{"segment.index.bytes": "24", "index.interval.bytes": "1"}}
		c.dmg = filepath.Join(tmp, "dmg", c.id, filepath.Base(g.dir))
		copyDir(t, g.dir, c.dmg)
		cases = append(cases, c)
	}

	var pairs []recoverPair
	for i := range cases {
		c := &cases[i]
		c.mine = filepath.Join(tmp, "segkit", c.id, filepath.Base(c.dmg))
		c.out = filepath.Join(tmp, "kafka", c.id, filepath.Base(c.dmg))
		copyDir(t, c.dmg, c.mine)
		must(os.MkdirAll(filepath.Dir(c.out), 0o755))
		pairs = append(pairs, recoverPair{src: c.dmg, out: c.out, flags: c.src.flags()})
	}
	// segkit's recoveries run while Kafka's do.
	type mine struct {
		orig, got outcome
		err       error
	}
	mines := make([]mine, len(cases))
	cfgs := make([]*kafkalog.Config, len(cases))
	for i, c := range cases {
		cfgs[i] = c.src.config(t)
	}
	done := make(chan error, 1)
	go func() {
		for i, c := range cases {
			orig, err := readOutcome(c.src.dir)
			if err != nil {
				done <- fmt.Errorf("%s: reading the undamaged source %s: %v", c.id, c.src.dir, err)
				return
			}
			got, _, err := segkitRecover(c.mine, cfgs[i])
			mines[i] = mine{orig, got, err}
		}
		done <- nil
	}()
	kafka := kafkaRecoverAll(t, pairs)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	type tally struct{ cases, agree, bothRefuse, expected, differ, indexFiles, indexSame int }
	tallies := map[string]*tally{}
	byExpected := map[string]int{}
	for i, c := range cases {
		tl := tallies[c.kind]
		if tl == nil {
			tl = &tally{}
			tallies[c.kind] = tl
		}
		tl.cases++
		k := kafka[c.out]
		orig, s, serr := mines[i].orig, mines[i].got, mines[i].err
		if ed, ok := matchExpected(c, k, s, serr, orig); ok {
			tl.expected++
			byExpected[ed]++
			continue
		}
		switch {
		case k.Error != "" && serr != nil:
			tl.bothRefuse++
			continue
		case k.Error != "":
			tl.differ++
			t.Errorf("%s (%s; %s): Kafka refuses to load (%s), segkit recovers to %v", c.id, c.src.name, c.desc, k.Error, s)
			continue
		case serr != nil:
			tl.differ++
			t.Errorf("%s (%s; %s): segkit fails (%v), Kafka recovers to %v", c.id, c.src.name, c.desc, serr, k.outcome())
			continue
		}
		if d := cmp.Diff(k.outcome(), s); d != "" {
			tl.differ++
			t.Errorf("%s (%s; %s): recovery differs (-Kafka +segkit):\n%s\nreproduce: go test -run 'TestRecoveryMatchesKafka' and look at the damage above applied to %s",
				c.id, c.src.name, c.desc, d, c.src.dir)
			continue
		}
		tl.agree++
		n, diffs := compareIndexFiles(t, c.out, c.mine)
		tl.indexFiles += n
		tl.indexSame += n - len(diffs)
		for _, d := range diffs {
			t.Errorf("%s (%s; %s): rebuilt indexes differ: %s", c.id, c.src.name, c.desc, d)
		}
	}
	kinds := make([]string, 0, len(tallies))
	for k := range tallies {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var total tally
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %5s %5s %6s %8s %6s %s\n", "damage", "cases", "agree", "refuse", "expected", "differ", "index files identical")
	for _, k := range kinds {
		tl := tallies[k]
		fmt.Fprintf(&b, "%-26s %5d %5d %6d %8d %6d %d/%d\n", k, tl.cases, tl.agree, tl.bothRefuse, tl.expected, tl.differ, tl.indexSame, tl.indexFiles)
		total.cases += tl.cases
		total.agree += tl.agree
		total.bothRefuse += tl.bothRefuse
		total.expected += tl.expected
		total.differ += tl.differ
		total.indexFiles += tl.indexFiles
		total.indexSame += tl.indexSame
	}
	fmt.Fprintf(&b, "%-26s %5d %5d %6d %8d %6d %d/%d\n", "total", total.cases, total.agree, total.bothRefuse, total.expected, total.differ, total.indexSame, total.indexFiles)
	for _, ed := range expectedDifferences {
		fmt.Fprintf(&b, "expected difference %s: %d cases (Kafka: %s; segkit: %s)\n", ed.name, byExpected[ed.name], ed.kafka, ed.segkit)
	}
	t.Logf("recovery, segkit vs Kafka 4.3.1, %d sources (%d real, %d generated):\n%s", len(sources), nReal, len(gen), b.String())
	if total.cases < 200 {
		t.Errorf("only %d damaged partitions, want at least 200", total.cases)
	}
	for _, ed := range expectedDifferences {
		if byExpected[ed.name] == 0 {
			t.Errorf("expected difference %s never happened: it is no longer a difference, or the cases no longer reach it", ed.name)
		}
	}
}

func matchExpected(c recoveryCase, k kafkaResult, s outcome, serr error, orig outcome) (string, bool) {
	for _, ed := range expectedDifferences {
		if ed.matches(c, k, s, serr, orig) {
			return ed.name, true
		}
	}
	return "", false
}
