package oracle_test

// Helpers of the compaction comparison with Kafka's log cleaner: keyed,
// transactional partitions written with segkit's engine, the two cleaners
// run on copies of them (oracle/kafka clean --batch, compaction.Clean),
// and a comparison of what each left, batch by batch and file by file.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/verify"
	"github.com/segkit/segkit/vfs"
)

// compactCase is one partition and one clean of it, run by both cleaners.
type compactCase struct {
	name string
	src  string // the partition directory (its parent is its log directory)
	// ssrc, when set, is segkit's input instead of src (the second pass of
	// a two-pass clean goes on from each cleaner's own output).
	ssrc  string
	props map[string]string // the topic config of the clean
	now   int64
	// dedupe and ioBuffer are the cleaner's buffers (0: Kafka's defaults);
	// hw the high watermark (≤ 0: the log end offset).
	dedupe   int64
	ioBuffer int
	hw       int64
}

func (c compactCase) config(t testing.TB) kafkalog.Config {
	t.Helper()
	p := map[string]string{config.CleanupPolicy: config.CleanupPolicyCompact}
	for k, v := range c.props {
		p[k] = v
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(p)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	return cfg
}

// kafkaClean is one line of `oracle/kafka clean`.
type kafkaClean struct {
	ID                          string            `json:"id"`
	Out                         string            `json:"out"`
	Error                       string            `json:"error"`
	CheckpointBefore            *int64            `json:"checkpointBefore"`
	Checkpoint                  *int64            `json:"checkpoint"`
	LogStartOffset              int64             `json:"logStartOffset"`
	LogEndOffset                int64             `json:"logEndOffset"`
	HighWatermark               int64             `json:"highWatermark"`
	LastStableOffset            int64             `json:"lastStableOffset"`
	DeleteHorizonMs             int64             `json:"deleteHorizonMs"`
	LegacyDeleteHorizonMs       int64             `json:"legacyDeleteHorizonMs"`
	ActiveProducers             []kafkaProducer   `json:"activeProducers"`
	ForceUpdateCheckpoint       bool              `json:"forceUpdateCheckpoint"`
	FirstDirtyOffset            int64             `json:"firstDirtyOffset"`
	FirstUncleanableDirtyOffset int64             `json:"firstUncleanableDirtyOffset"`
	FirstUncleanableOffset      int64             `json:"firstUncleanableOffset"`
	CleanBytes                  int64             `json:"cleanBytes"`
	CleanableBytes              int64             `json:"cleanableBytes"`
	TotalBytes                  int64             `json:"totalBytes"`
	CleanableRatio              json.RawMessage   `json:"cleanableRatio"`
	MaxCompactionDelayMs        int64             `json:"maxCompactionDelayMs"`
	NeedCompactionNow           bool              `json:"needCompactionNow"`
	Cleaned                     bool              `json:"cleaned"`
	EndOffset                   int64             `json:"endOffset"`
	MapSlots                    int               `json:"mapSlots"`
	Stats                       *kafkaCleanerStat `json:"stats"`
	Segments                    []segInfo         `json:"segments"`
}

type kafkaProducer struct {
	ProducerID     int64 `json:"producerId"`
	ProducerEpoch  int16 `json:"producerEpoch"`
	LastDataOffset int64 `json:"lastDataOffset"`
}

type kafkaCleanerStat struct {
	BytesRead           int64   `json:"bytesRead"`
	BytesWritten        int64   `json:"bytesWritten"`
	MapBytesRead        int64   `json:"mapBytesRead"`
	MapMessagesRead     int64   `json:"mapMessagesRead"`
	MessagesRead        int64   `json:"messagesRead"`
	InvalidMessagesRead int64   `json:"invalidMessagesRead"`
	MessagesWritten     int64   `json:"messagesWritten"`
	BufferUtilization   float64 `json:"bufferUtilization"`
	MapEntries          int     `json:"mapEntries"`
}

// kafkaCleanAll runs Kafka's cleaner on every case (SRC copied to
// <root>/kafka/<case>/<partition>), in a few JVMs, and returns the results
// by case name.
func kafkaCleanAll(t testing.TB, root string, cases []compactCase) map[string]kafkaClean {
	t.Helper()
	var lines [][]byte
	for _, c := range cases {
		job := map[string]any{
			"id":     c.name,
			"src":    c.src,
			"out":    kafkaOut(root, c),
			"now":    c.now,
			"config": c.props,
		}
		if c.dedupe > 0 {
			job["dedupeBuffer"] = c.dedupe
		}
		if c.ioBuffer > 0 {
			job["ioBuffer"] = c.ioBuffer
		}
		if c.hw > 0 {
			job["highWatermark"] = c.hw
		}
		b, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, b)
	}
	const jvms = 2
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	res := map[string]kafkaClean{}
	var errs []string
	chunk := (len(lines) + jvms - 1) / jvms
	for i := 0; i < len(lines); i += chunk {
		in := bytes.Join(lines[i:min(i+chunk, len(lines))], []byte("\n"))
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := oracle.Run(ctx, in, "clean", "--batch")
			mu.Lock()
			defer mu.Unlock()
			sc := bufio.NewScanner(bytes.NewReader(out))
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				var r kafkaClean
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					errs = append(errs, fmt.Sprintf("oracle output %q: %v", sc.Text(), err))
					continue
				}
				res[r.ID] = r
			}
			if err != nil && !strings.Contains(err.Error(), "exit status 3") {
				errs = append(errs, err.Error())
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("oracle/kafka clean:\n%s", strings.Join(errs, "\n"))
	}
	for _, c := range cases {
		if _, ok := res[c.name]; !ok {
			t.Fatalf("oracle/kafka clean printed nothing for %s", c.name)
		}
	}
	return res
}

func kafkaOut(root string, c compactCase) string {
	return filepath.Join(root, "kafka", c.name, filepath.Base(c.src))
}

func segkitOut(root string, c compactCase) string {
	return filepath.Join(root, "segkit", c.name, filepath.Base(c.src))
}

// logDirFiles are the per-log-directory files the oracle carries from
// SRC's log directory into OUT's, for this partition.
var logDirFiles = []string{checkpoint.CleanerOffsetFile, checkpoint.LogStartOffsetFile, checkpoint.RecoveryPointFile}

// prepareCopy lays out dst as the oracle lays out OUT: the regular files
// of src (modification times kept), and in dst's parent this partition's
// entries of src's log-directory checkpoints and its clean-shutdown marker.
func prepareCopy(t testing.TB, src, dst string) {
	t.Helper()
	copyDir(t, src, dst)
	tp, err := checkpoint.ParseDirName(filepath.Base(src))
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	sp, dp := filepath.Dir(src), filepath.Dir(dst)
	for _, name := range logDirFiles {
		m, err := checkpoint.ReadOffsets(vfs.OS(), filepath.ToSlash(filepath.Join(sp, name)))
		if err != nil {
			continue
		}
		v, ok := m[tp]
		if !ok {
			continue
		}
		if err := checkpoint.WriteOffsets(vfs.OS(), filepath.ToSlash(filepath.Join(dp, name)), map[checkpoint.TopicPartition]int64{tp: v}); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(sp, checkpoint.CleanShutdownFile)); err == nil {
		if err := os.WriteFile(filepath.Join(dp, checkpoint.CleanShutdownFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// segkitClean runs compaction.Clean on a copy of c's partition.
func segkitClean(t testing.TB, root string, c compactCase) (*compaction.Report, error) {
	t.Helper()
	dir := segkitOut(root, c)
	src := c.src
	if c.ssrc != "" {
		src = c.ssrc
	}
	prepareCopy(t, src, dir)
	return compaction.Clean(vfs.OS(), filepath.ToSlash(dir), c.config(t), compaction.Options{
		Clock: fixedClock{c.now}, DedupeBufferSize: c.dedupe, IOBufferSize: c.ioBuffer, HighWatermark: c.hw,
	})
}

// cleanerCheckpoint reads the partition's cleaner-offset-checkpoint entry.
func cleanerCheckpoint(dir string) (int64, bool) {
	tp, err := checkpoint.ParseDirName(filepath.Base(dir))
	if err != nil {
		return 0, false
	}
	m, err := checkpoint.ReadOffsets(vfs.OS(), filepath.ToSlash(filepath.Join(filepath.Dir(dir), checkpoint.CleanerOffsetFile)))
	if err != nil {
		return 0, false
	}
	v, ok := m[tp]
	return v, ok
}

// tally counts what a comparison compared.
type tally struct {
	cases, cleaned           int
	segments, files          int
	batchesSame              int // byte for byte
	batchesRecords           int // recompressed: same header fields and records
	indexesSame, indexesRule int // .index/.timeindex byte for byte, or by Kafka's rule on our bytes
	txnIndexes               int
	horizons                 int // batches with a delete horizon compared
	// What the cleans exercised (from segkit's reports of cleans Kafka
	// agreed with).
	mapFull, multiGroup, emptied, stamped, tombstonesGone, markersGone, abortedGone, legacy int
}

func (a *tally) add(b tally) {
	a.cases += b.cases
	a.cleaned += b.cleaned
	a.segments += b.segments
	a.files += b.files
	a.batchesSame += b.batchesSame
	a.batchesRecords += b.batchesRecords
	a.indexesSame += b.indexesSame
	a.indexesRule += b.indexesRule
	a.txnIndexes += b.txnIndexes
	a.horizons += b.horizons
	a.mapFull += b.mapFull
	a.multiGroup += b.multiGroup
	a.emptied += b.emptied
	a.stamped += b.stamped
	a.tombstonesGone += b.tombstonesGone
	a.markersGone += b.markersGone
	a.abortedGone += b.abortedGone
	a.legacy += b.legacy
}

func (a tally) String() string {
	return fmt.Sprintf("%d cases (%d cleaned), %d segments, %d files; batches: %d byte for byte, %d recompressed compared by records; indexes: %d byte for byte, %d by Kafka's rule over recompressed bytes; %d .txnindex; %d delete horizons; cleans with: the map full %d, several groups %d, emptied batches %d, new horizons %d, tombstones removed %d, markers removed %d, aborted records removed %d, v0/v1 entries %d",
		a.cases, a.cleaned, a.segments, a.files, a.batchesSame, a.batchesRecords, a.indexesSame, a.indexesRule, a.txnIndexes, a.horizons,
		a.mapFull, a.multiGroup, a.emptied, a.stamped, a.tombstonesGone, a.markersGone, a.abortedGone, a.legacy)
}

// compareClean compares what Kafka's cleaner (k, and its OUT directory)
// and segkit's (rep, err, and its directory) did for c. It returns the
// differences, each with what it is, and what it compared. Without
// exactSizes (the two cleaners started from inputs that differ in
// recompressed bytes), the figures that count bytes are not compared.
func compareClean(t testing.TB, root string, c compactCase, k kafkaClean, rep *compaction.Report, serr error, exactSizes bool) ([]string, tally) {
	t.Helper()
	var d []string
	var n tally
	n.cases = 1
	diff := func(what string, want, got any) {
		if fmt.Sprint(want) != fmt.Sprint(got) {
			d = append(d, fmt.Sprintf("%s: Kafka %v, segkit %v", what, want, got))
		}
	}
	if k.Error != "" || serr != nil {
		if k.Error == "" || serr == nil {
			d = append(d, fmt.Sprintf("error: Kafka %q, segkit %v", k.Error, serr))
		}
		return d, n
	}
	diff("logStartOffset", k.LogStartOffset, rep.LogStartOffset)
	diff("logEndOffset", k.LogEndOffset, rep.LogEndOffset)
	diff("highWatermark", k.HighWatermark, rep.HighWatermark)
	diff("lastStableOffset", k.LastStableOffset, rep.LastStableOffset)
	var kp, sp []string
	for _, p := range k.ActiveProducers {
		kp = append(kp, fmt.Sprintf("%d/%d@%d", p.ProducerID, p.ProducerEpoch, p.LastDataOffset))
	}
	for _, p := range rep.ActiveProducers {
		sp = append(sp, fmt.Sprintf("%d/%d@%d", p.ProducerID, p.Epoch, p.LastDataOffset))
	}
	diff("activeProducers", kp, sp)
	diff("checkpointReset", k.ForceUpdateCheckpoint, rep.CheckpointReset)
	diff("firstDirtyOffset", k.FirstDirtyOffset, rep.FirstDirtyOffset)
	diff("firstUncleanableDirtyOffset", k.FirstUncleanableDirtyOffset, rep.FirstUncleanableDirtyOffset)
	diff("firstUncleanableOffset", k.FirstUncleanableOffset, rep.FirstUncleanableOffset)
	if exactSizes {
		diff("cleanBytes", k.CleanBytes, rep.CleanBytes)
		diff("cleanableBytes", k.CleanableBytes, rep.CleanableBytes)
		diff("totalBytes", k.TotalBytes, rep.TotalBytes)
		diff("cleanableRatio", javaDouble(k.CleanableRatio), rep.CleanableRatio)
	}
	diff("maxCompactionDelayMs", k.MaxCompactionDelayMs, rep.MaxCompactionDelayMs)
	diff("deleteHorizonMs", k.DeleteHorizonMs, rep.DeleteHorizonMs)
	diff("legacyDeleteHorizonMs", k.LegacyDeleteHorizonMs, rep.LegacyDeleteHorizonMs)
	diff("cleaned", k.Cleaned, rep.Cleanable)
	sckpt, sok := cleanerCheckpoint(segkitOut(root, c))
	kckpt := "none"
	if k.Checkpoint != nil {
		kckpt = strconv.FormatInt(*k.Checkpoint, 10)
	}
	gckpt := "none"
	if sok {
		gckpt = strconv.FormatInt(sckpt, 10)
	}
	diff("cleaner-offset-checkpoint", kckpt, gckpt)

	// The directories: segments, batches, indexes.
	kd, sd := kafkaOut(root, c), segkitOut(root, c)
	fd, fn, sizeDelta := compareSegmentDirs(t, kd, sd, c.config(t))
	d = append(d, fd...)
	n.add(fn)
	if k.Cleaned && rep.Cleanable {
		n.cleaned = 1
		one := func(b bool) int {
			if b {
				return 1
			}
			return 0
		}
		n.mapFull = one(rep.MapFull)
		n.multiGroup = one(len(rep.Groups) > 1)
		n.emptied = one(rep.Removed.BatchesEmptied > 0)
		n.tombstonesGone = one(rep.Removed.Tombstones > 0)
		n.markersGone = one(rep.Removed.Markers > 0)
		n.abortedGone = one(rep.Removed.Aborted > 0)
		for _, h := range rep.Horizons {
			n.stamped = max(n.stamped, one(h.New))
		}
		n.legacy = one(hasLegacy(c.src))
		diff("endOffset", k.EndOffset, rep.EndOffset)
		diff("mapSlots", k.MapSlots, rep.MapSlots)
		if ks := k.Stats; ks != nil {
			st := rep.Stats
			if exactSizes {
				diff("stats.bytesRead", ks.BytesRead, st.BytesRead)
				diff("stats.mapBytesRead", ks.MapBytesRead, st.MapBytesRead)
			}
			diff("stats.mapMessagesRead", ks.MapMessagesRead, st.MapMessagesRead)
			diff("stats.messagesRead", ks.MessagesRead, st.MessagesRead)
			diff("stats.invalidMessagesRead", ks.InvalidMessagesRead, st.InvalidMessagesRead)
			diff("stats.messagesWritten", ks.MessagesWritten, st.MessagesWritten)
			// Recompressed batches differ in size: bytesWritten differs by
			// exactly what they differ by.
			if exactSizes {
				diff("stats.bytesWritten (less the recompression size differences)", ks.BytesWritten, st.BytesWritten+sizeDelta)
			}
			diff("stats.bufferUtilization", ks.BufferUtilization, st.BufferUtilization)
			diff("map entries", ks.MapEntries, rep.MapEntries)
		}
	}
	return d, n
}

// javaDouble parses a Jackson-printed double: a number, or a string for
// NaN (0/0, an empty log) and the infinities.
func javaDouble(n json.RawMessage) float64 {
	f, err := strconv.ParseFloat(strings.Trim(string(n), `"`), 64)
	if err != nil {
		return -1
	}
	return f
}

// logBatch is one entry of a .log, with its raw bytes.
type logBatch struct {
	pos int64
	raw []byte
	e   record.Entry
}

func readBatches(p string) ([]logBatch, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var out []logBatch
	s := record.NewScanner(b, p, 0)
	for s.Next() {
		e := *s.Entry()
		out = append(out, logBatch{pos: e.Position, raw: e.Raw(), e: e})
	}
	if err := s.Err(); err != nil {
		return out, err
	}
	if k, at, n := s.Tail(); k != record.TailNone {
		return out, fmt.Errorf("%s: %d bytes of %v at %d", p, n, k, at)
	}
	return out, nil
}

// compareSegmentDirs compares the segments of Kafka's directory kd and
// segkit's sd: the same base offsets; per segment the same batches — byte
// for byte, or, for a batch Kafka recompressed (where Java's codec and
// Go's make different bytes), the same header fields but size and CRC and
// the same records; the .index and .timeindex byte for byte when the .log
// is, and otherwise as Kafka's rule builds them over segkit's bytes; the
// .txnindex byte for byte. sizeDelta is the sum of Kafka's size minus
// segkit's over the recompressed batches.
func compareSegmentDirs(t testing.TB, kd, sd string, cfg kafkalog.Config) (d []string, n tally, sizeDelta int64) {
	t.Helper()
	kl, sl := segmentFiles(t, kd, segment.LogSuffix), segmentFiles(t, sd, segment.LogSuffix)
	if !slices.Equal(kl, sl) {
		d = append(d, fmt.Sprintf("segments: Kafka %v, segkit %v", kl, sl))
		return d, n, 0
	}
	for _, ext := range []string{segment.TxnIndexSuffix} {
		kt, st := nonEmpty(t, kd, ext), nonEmpty(t, sd, ext)
		if !slices.Equal(kt, st) {
			d = append(d, fmt.Sprintf("%s files: Kafka %v, segkit %v", ext, kt, st))
		}
	}
	for _, name := range kl {
		n.segments++
		base, _, _ := segment.ParseFileName(name)
		kb, kerr := readBatches(filepath.Join(kd, name))
		sb, serr := readBatches(filepath.Join(sd, name))
		if kerr != nil || serr != nil {
			d = append(d, fmt.Sprintf("%s: reading: Kafka %v, segkit %v", name, kerr, serr))
			continue
		}
		n.files++
		if len(kb) != len(sb) {
			d = append(d, fmt.Sprintf("%s: Kafka %d batches, segkit %d", name, len(kb), len(sb)))
			continue
		}
		resized := false
		for i := range kb {
			same, how := compareBatch(&kb[i], &sb[i])
			if how != "" {
				d = append(d, fmt.Sprintf("%s batch %d (offset %d, position %d): %s", name, i, kb[i].e.BaseOffset(), kb[i].pos, how))
				continue
			}
			if kb[i].e.Magic == record.MagicV2 && kb[i].e.Batch.Attributes.HasDeleteHorizon() {
				n.horizons++
			}
			if same {
				n.batchesSame++
				continue
			}
			n.batchesRecords++
			if len(kb[i].raw) != len(sb[i].raw) {
				resized = true
				sizeDelta += int64(len(kb[i].raw) - len(sb[i].raw))
			}
		}
		// The indexes.
		for _, ix := range []struct {
			ext   string
			entry int
		}{{segment.IndexSuffix, index.EntrySize}, {segment.TimeIndexSuffix, timeindex.EntrySize}} {
			ip := segment.FileName(base, ix.ext)
			kx, err1 := os.ReadFile(filepath.Join(kd, ip))
			sx, err2 := os.ReadFile(filepath.Join(sd, ip))
			if err1 != nil || err2 != nil {
				if !(errors.Is(err1, fs.ErrNotExist) && errors.Is(err2, fs.ErrNotExist)) {
					d = append(d, fmt.Sprintf("%s: Kafka %v, segkit %v", ip, err1, err2))
				}
				continue
			}
			n.files++
			if !resized {
				if p := firstDiff(kx, sx); p >= 0 {
					d = append(d, fmt.Sprintf("%s: Kafka %d bytes, segkit %d; first difference in entry %d: Kafka %x, segkit %x", ip, len(kx), len(sx), p/ix.entry, entryAt(kx, p/ix.entry, ix.entry), entryAt(sx, p/ix.entry, ix.entry)))
				} else {
					n.indexesSame++
				}
				continue
			}
			// Recompressed bytes moved the positions: segkit's index must be
			// what Kafka's rule makes of segkit's .log.
			want, err := ruleIndex(sb, base, int(cfg.IndexIntervalBytes), ix.ext)
			if err != nil {
				d = append(d, fmt.Sprintf("%s: %v", ip, err))
				continue
			}
			if p := firstDiff(want, sx); p >= 0 {
				d = append(d, fmt.Sprintf("%s (recompressed segment): Kafka's rule over segkit's .log gives %d bytes, segkit wrote %d; first difference in entry %d", ip, len(want), len(sx), p/ix.entry))
			} else {
				n.indexesRule++
			}
		}
		tp := segment.FileName(base, segment.TxnIndexSuffix)
		kx, err1 := os.ReadFile(filepath.Join(kd, tp))
		sx, err2 := os.ReadFile(filepath.Join(sd, tp))
		if err1 == nil && err2 == nil {
			n.files++
			n.txnIndexes++
			if !bytes.Equal(kx, sx) {
				d = append(d, fmt.Sprintf("%s: Kafka %x, segkit %x", tp, kx, sx))
			}
		}
	}
	return d, n, sizeDelta
}

// nonEmpty lists the non-empty files of dir with the extension.
func nonEmpty(t testing.TB, dir, ext string) []string {
	var out []string
	for _, f := range segmentFiles(t, dir, ext) {
		if fi, err := os.Stat(filepath.Join(dir, f)); err == nil && fi.Size() > 0 {
			out = append(out, f)
		}
	}
	return out
}

// ruleIndex is the .index or .timeindex Kafka's per-batch rule builds
// over the batches of a cleaned segment.
func ruleIndex(bs []logBatch, base int64, interval int, ext string) ([]byte, error) {
	var sum []verify.LogEntrySummary
	for _, b := range bs {
		e := &b.e
		sum = append(sum, verify.LogEntrySummary{Position: b.pos, Size: int64(len(b.raw)), Magic: e.Magic,
			BaseOffset: e.BaseOffset(), LastOffset: e.LastOffset(), MaxTimestamp: e.MaxTimestamp(), OffsetOfMaxTimestamp: e.LastOffset()})
	}
	if ext == segment.IndexSuffix {
		return verify.RebuildOffsetIndex(nil, base, sum, interval)
	}
	return verify.RebuildTimeIndex(nil, base, sum, interval, verify.ShallowOffsets)
}

// compareBatch reports whether two batches are byte for byte the same;
// if not, whether they hold the same header (but length and CRC) and
// records, which is accepted only for a compressed batch (how says what
// differs otherwise).
func compareBatch(k, s *logBatch) (same bool, how string) {
	if bytes.Equal(k.raw, s.raw) {
		return true, ""
	}
	if k.e.Magic != record.MagicV2 || s.e.Magic != record.MagicV2 {
		return false, fmt.Sprintf("legacy entries differ: Kafka %x, segkit %x", k.raw, s.raw)
	}
	kh, sh := k.e.Batch.BatchHeader, s.e.Batch.BatchHeader
	if kh.Attributes.Codec() == compress.None {
		return false, fmt.Sprintf("uncompressed batches differ: Kafka %+v, segkit %+v (first differing byte %d)", kh, sh, firstDiff(k.raw, s.raw))
	}
	kh.Length, kh.CRC, sh.Length, sh.CRC = 0, 0, 0, 0
	if kh != sh {
		return false, fmt.Sprintf("headers differ: Kafka %+v, segkit %+v", kh, sh)
	}
	kr, err1 := batchRecords(&k.e)
	sr, err2 := batchRecords(&s.e)
	if err1 != nil || err2 != nil {
		return false, fmt.Sprintf("records: Kafka %v, segkit %v", err1, err2)
	}
	if !slices.Equal(kr, sr) {
		return false, fmt.Sprintf("records differ: Kafka %q, segkit %q", kr, sr)
	}
	return false, ""
}

// batchRecords describes every record of a batch: offset, timestamp,
// timestamp delta, attributes, key, value and headers.
func batchRecords(e *record.Entry) ([]string, error) {
	var it record.EntryIterator
	var r record.Record
	var out []string
	it.Reset(e)
	for it.Next(&r) {
		var b strings.Builder
		fmt.Fprintf(&b, "%d@%d(%d)a%d k=%q v=%q", r.Offset, r.Timestamp, r.TimestampDelta, r.Attributes, r.Key, r.Value)
		if r.Key == nil {
			b.WriteString(" k=null")
		}
		if r.Value == nil {
			b.WriteString(" v=null")
		}
		for _, h := range r.Headers {
			fmt.Fprintf(&b, " h[%q]=%q", h.Key, h.Value)
		}
		out = append(out, b.String())
	}
	return out, it.Err()
}

// --- generated partitions ---

// compactGen writes a keyed partition through segkit's engine as a leader
// appends: plain, idempotent and transactional producers (committed,
// aborted, some left open), tombstones (some in batches already carrying a
// delete horizon, as a first clean leaves them), unkeyed records, headers,
// every codec, explicit rolls.
type compactGen struct {
	t    testing.TB
	rng  *rand.Rand
	l    *kafkalog.Log
	b    record.Builder
	ts   int64
	keys int
	seq  map[int64]int32
	open map[int64]bool // transactional producers with an open transaction
	// epochs of the producers
	epoch map[int64]int16
	n     int // records written
}

// Producer ids of generated partitions: 3 transactional, 2 idempotent.
var (
	genTxnProducers  = []int64{4000, 4001, 4002}
	genIdemProducers = []int64{5000, 5001}
)

func (g *compactGen) record(tombstones, unkeyed float64) record.Record {
	r := record.Record{Timestamp: g.ts + int64(g.n%7)}
	g.n++
	if g.rng.Float64() >= unkeyed {
		r.Key = fmt.Appendf(nil, "key-%03d", g.rng.IntN(g.keys))
	}
	if g.rng.Float64() >= tombstones {
		v := make([]byte, 4+g.rng.IntN(120))
		for i := range v {
			v[i] = byte('a' + (g.n+i)%26)
		}
		r.Value = v
	}
	if g.rng.IntN(5) == 0 {
		r.Headers = []record.Header{{Key: []byte("h1"), Value: []byte(strconv.Itoa(g.n))}}
		if g.rng.IntN(3) == 0 {
			r.Headers = append(r.Headers, record.Header{Key: []byte("nil"), Value: nil})
		}
	}
	return r
}

func (g *compactGen) append(spec *record.BatchSpec, recs []record.Record) {
	g.t.Helper()
	buf, err := g.b.AppendBatch(nil, spec, recs)
	if err != nil {
		g.t.Fatal(err)
	}
	if _, err := g.l.Append(buf, 0); err != nil {
		g.t.Fatalf("append: %v", err)
	}
	g.ts += 200 + g.rng.Int64N(2000)
}

func (g *compactGen) data(pid int64, txn bool, codec compress.Codec, nrec int, tombstones, unkeyed float64) {
	recs := make([]record.Record, nrec)
	for i := range recs {
		recs[i] = g.record(tombstones, unkeyed)
	}
	spec := record.NewBatchSpec(0, codec)
	if pid >= 0 {
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = pid, g.epoch[pid], g.seq[pid]
		g.seq[pid] += int32(nrec)
	}
	spec.Transactional = txn
	g.append(&spec, recs)
}

func (g *compactGen) marker(pid int64, typ record.ControlType) {
	spec := record.NewBatchSpec(0, compress.None)
	spec.ProducerID, spec.ProducerEpoch = pid, g.epoch[pid]
	buf, err := g.b.AppendEndTxnMarker(nil, &spec, record.EndTxnMarker{Type: typ, CoordinatorEpoch: 3}, g.ts)
	if err != nil {
		g.t.Fatal(err)
	}
	if _, err := g.l.Append(buf, 0); err != nil {
		g.t.Fatalf("marker: %v", err)
	}
	g.ts += 100
	delete(g.open, pid)
}

// stamped appends a batch that already carries a delete horizon, as a
// previous clean leaves one: its tombstones go at the first clean after
// horizon.
func (g *compactGen) stamped(codec compress.Codec, horizon int64, nrec int) {
	recs := make([]record.Record, nrec)
	for i := range recs {
		recs[i] = g.record(0.6, 0)
	}
	spec := record.NewBatchSpec(0, codec)
	spec.DeleteHorizon, spec.DeleteHorizonMs = true, horizon
	g.append(&spec, recs)
}

// genSpec says what a generated partition is like.
type genSpec struct {
	seed       uint64
	appends    int
	keys       int
	tombstones float64
	unkeyed    float64
	codecs     []compress.Codec
	rollEvery  int  // appends per segment (about)
	txn        bool // transactional producers
	idem       bool // idempotent producers
	openTxn    bool // leave a transaction open at the end
	horizons   []int64
	props      map[string]string // written with (index.interval.bytes, message.timestamp.type)
	// ts is the first record's timestamp and now the engine's clock while
	// it writes; 0 means baseTs and writeNow.
	ts, now int64
}

// writeCompactPartition writes a partition by spec into dir (its parent
// is its log directory) and closes it cleanly.
func writeCompactPartition(t testing.TB, dir string, sp genSpec) {
	t.Helper()
	p := map[string]string{config.SegmentBytes: "1073741824", config.CleanupPolicy: config.CleanupPolicyCompact}
	for k, v := range sp.props {
		p[k] = v
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	ts, now := baseTs, writeNow
	if sp.ts != 0 {
		ts = sp.ts
	}
	if sp.now != 0 {
		now = sp.now
	}
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), cfg, kafkalog.Options{Clock: fixedClock{now}})
	if err != nil {
		t.Fatal(err)
	}
	g := &compactGen{t: t, rng: rand.New(rand.NewPCG(sp.seed, 0xc1ea)), l: l, ts: ts, keys: sp.keys,
		seq: map[int64]int32{}, open: map[int64]bool{}, epoch: map[int64]int16{}}
	for i, pid := range genTxnProducers {
		g.epoch[pid] = int16(i)
	}
	for _, pid := range genIdemProducers {
		g.epoch[pid] = 7
	}
	codec := func() compress.Codec { return sp.codecs[g.rng.IntN(len(sp.codecs))] }
	sinceRoll := 0
	for a := 0; a < sp.appends; a++ {
		if sinceRoll >= sp.rollEvery && g.rng.IntN(3) > 0 {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
			sinceRoll = 0
		}
		sinceRoll++
		nrec := 1 + g.rng.IntN(6)
		switch k := g.rng.IntN(20); {
		case k < 2 && len(sp.horizons) > 0:
			g.stamped(codec(), sp.horizons[g.rng.IntN(len(sp.horizons))], nrec)
		case k < 8 && sp.txn:
			pid := genTxnProducers[g.rng.IntN(len(genTxnProducers))]
			if g.open[pid] && g.rng.IntN(3) == 0 {
				typ := record.ControlCommit
				if g.rng.IntN(2) == 0 {
					typ = record.ControlAbort
				}
				g.marker(pid, typ)
				if g.rng.IntN(8) == 0 {
					g.epoch[pid]++ // a new producer session
				}
				continue
			}
			if !g.open[pid] && g.rng.IntN(12) == 0 {
				g.marker(pid, record.ControlAbort) // a marker with no transaction open
				continue
			}
			g.open[pid] = true
			g.data(pid, true, codec(), nrec, sp.tombstones, 0)
		case k < 11 && sp.idem:
			g.data(genIdemProducers[g.rng.IntN(len(genIdemProducers))], false, codec(), nrec, sp.tombstones, sp.unkeyed)
		default:
			g.data(-1, false, codec(), nrec, sp.tombstones, sp.unkeyed)
		}
	}
	// Close the transactions, but perhaps one.
	pids := make([]int64, 0, len(g.open))
	for pid := range g.open {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	for i, pid := range pids {
		if sp.openTxn && i == 0 {
			continue
		}
		typ := record.ControlCommit
		if g.rng.IntN(2) == 0 {
			typ = record.ControlAbort
		}
		g.marker(pid, typ)
	}
	g.data(-1, false, compress.None, 1, 0, 0) // the last offset is a plain record
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// sortedKeys returns m's keys sorted.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// hasLegacy reports whether a partition holds v0/v1 entries.
func hasLegacy(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), segment.LogSuffix) {
			continue
		}
		bs, _ := readBatches(filepath.Join(dir, e.Name()))
		for _, b := range bs {
			if b.e.Magic != record.MagicV2 {
				return true
			}
		}
	}
	return false
}
