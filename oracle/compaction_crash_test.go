package oracle_test

// Crashing a compaction at every write and rename, and loading what the
// power cut left with segkit and with Kafka's own loader.

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/oracle"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/repair"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// The partition of the crash sweep, in the vfs.Mem: its log directory and
// its directory.
const (
	ccLogDir = "/kafka"
	ccDir    = ccLogDir + "/crash-0"
)

// ccInterval is index.interval.bytes of the partition and of the clean.
const ccInterval = "100"

// ccCut is a way to take a crash point's disk after the power cut
// (vfs.Mem.CrashClone; the seed is the crash point's).
type ccCut struct {
	name string
	cfg  vfs.CrashConfig
}

// ccPowerCuts are the power cuts of every crash point: unsynced data and
// directory changes all dropped, half of them kept with torn writes, all
// kept.
var ccPowerCuts = []ccCut{
	{"dropped", vfs.CrashConfig{UnsyncedDataPercent: 0}},
	{"torn", vfs.CrashConfig{UnsyncedDataPercent: 50, TornWrites: true}},
	{"kept", vfs.CrashConfig{UnsyncedDataPercent: 100}},
}

// ccRenameCuts are the extra power cuts of the crash points at a rename
// or a sync of the partition directory, where which of the renames not yet
// synced survive is what matters: each kept or dropped at random.
var ccRenameCuts = []ccCut{
	{"half-0", vfs.CrashConfig{UnsyncedDataPercent: 50}},
	{"half-1", vfs.CrashConfig{UnsyncedDataPercent: 50}},
	{"half-2", vfs.CrashConfig{UnsyncedDataPercent: 50}},
}

// ccImage is one distinct disk a crash left.
type ccImage struct {
	id    string
	mem   *vfs.Mem // the disk after the power cut
	from  []string // the crash points and power cuts that left it
	first string   // the operation the first of them stopped ("completed": none)
	files []string // the partition directory's files, "name:size"
	// The log directory's state: the cleaner checkpoint's entry for the
	// partition, and whether a clean-shutdown marker is there.
	ckpt            int64
	hasCkpt, marker bool
	src, rec, kafka string // the image on disk, for Kafka and for segkit's Recover; Kafka's copy of src
}

// ccFiles are the files of a partition directory, by name.
type ccFiles map[string][]byte

// TestCompactionCrashMatchesKafka crashes compaction.Clean of a keyed,
// transactional partition (9 segments, 4 groups) at every mutating
// filesystem operation (all of them, but a stride of the plain data
// writes of .cleaned files; every operation is named in the log), takes
// the disk as a power cut leaves it (vfs.Mem.CrashClone: 3 ways, 3 more at
// the renames), writes each distinct image to a directory, and loads it
// with Kafka's LogLoader (oracle/kafka recover: recovery point 0, one
// call for all images, in two JVMs), with segkit's repair.Recover (from
// recovery point 0 too, on a copy on disk) and with kafkalog.Open as a
// restart after the crash runs it (the image's own recovery point and
// clean-shutdown marker, on a copy in the Mem).
//
// Every image must load in all three, to the same log start and end
// offsets and the same segments with the same bytes. Kafka and Recover
// must leave the same files (leftovers deleted, or completed, alike) with
// byte-identical rebuilt indexes; Open the same files, with each index
// Kafka's rebuilt one or the one written with the .log beside it. Every
// segment must be wholly a source segment or wholly one the finished
// clean writes, a written cleaner checkpoint means the clean is complete,
// and a read_committed consumer must see what it saw before the clean, in
// Kafka's directory and in Open's (reading the segments, and fetching from
// the start); a fetch at any batch's offset must return that batch.
// Producer snapshots are compared by name only, with the two ways Kafka's
// load differs (see snapshotDiffs).
func TestCompactionCrashMatchesKafka(t *testing.T) {
	t.Parallel() // two at a time: one alone keeps 1.3 of the 2 cores busy
	oracle.Require(t)
	start := time.Now()
	tmp := t.TempDir()

	// The partition: written by segkit's engine on disk (the generator of
	// the compaction comparison), then put durably into a vfs.Mem.
	now := baseTs + 3*day
	gen := filepath.Join(tmp, "gen", "crash-0")
	writeCompactPartition(t, gen, genSpec{
		seed: 14, appends: 45, keys: 40, tombstones: 0.2, unkeyed: 0.03,
		codecs: allCodecs, rollEvery: 5, txn: true, idem: true,
		horizons: []int64{now - hour}, // tombstones this clean removes
		props:    map[string]string{config.IndexIntervalBytes: ccInterval},
	})
	props := map[string]string{
		config.CleanupPolicy: config.CleanupPolicyCompact, config.MinCleanableDirtyRatio: "0.01",
		config.IndexIntervalBytes: ccInterval, config.SegmentIndexBytes: "8192",
		config.InternalSegmentBytes: "2500", // several groups
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(props)
	if err != nil {
		t.Fatal(err)
	}
	kafkaFlags := []string{"--config", "cleanup.policy=compact", "--config", "index.interval.bytes=" + ccInterval, "--config", "segment.index.bytes=8192"}
	opt := compaction.Options{Clock: fixedClock{now}}

	base := vfs.NewMem()
	ccImport(t, base, filepath.Dir(gen), ccLogDir)
	ccImport(t, base, gen, ccDir)
	osGen := filepath.ToSlash(gen)
	preView, preLEO, err := ccView(vfs.OS(), osGen, false)
	if err != nil {
		t.Fatal(err)
	}
	pre, err := ccOutcome(vfs.OS(), osGen)
	if err != nil {
		t.Fatal(err)
	}
	preFiles := ccRead(t, vfs.OS(), osGen)

	// The clean that completes, with every operation logged.
	ref := base.CrashClone(vfs.CrashConfig{})
	if a, b := ccTree(t, base), ccTree(t, ref); !slices.Equal(a, b) {
		t.Fatalf("the imported partition is not all durable:\n%v\nvs\n%v", a, b)
	}
	logged := vfs.WithFaults(ref, nil)
	rep, err := compaction.Clean(logged, ccDir, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	multi := 0
	for _, g := range rep.Groups {
		if len(g.Sources) > 1 {
			multi++
		}
	}
	if !rep.Cleanable || len(rep.Groups) < 2 || multi < 2 || rep.Removed.Records == 0 {
		t.Fatalf("the clean should rewrite several groups of several segments and remove records: %s", rep)
	}
	var muts []vfs.Op
	for _, op := range logged.Log() {
		if op.Kind.Mutating() {
			muts = append(muts, op)
		}
	}
	postFiles := ccRead(t, ref, ccDir)
	var postDesc []string
	for _, n := range slices.Sorted(maps.Keys(postFiles)) {
		postDesc = append(postDesc, fmt.Sprintf("%s:%d", n, len(postFiles[n])))
	}
	t.Logf("after the clean: %v", postDesc)
	if maps.EqualFunc(ccOnly(preFiles, segment.LogSuffix), ccOnly(postFiles, segment.LogSuffix), bytes.Equal) {
		t.Fatal("the clean changed no segment")
	}

	// The crash points: every operation but the data writes of the
	// .cleaned files, of which the first and last of each file and every
	// fourth; and the clean that completes.
	var points []int
	lastWrite := map[string]int{}
	for k, op := range muts {
		if ccDataWrite(op) {
			lastWrite[op.Path] = k
		}
	}
	seenWrite := map[string]bool{}
	for k, op := range muts {
		if ccDataWrite(op) && seenWrite[op.Path] && lastWrite[op.Path] != k && k%4 != 0 {
			continue
		}
		seenWrite[op.Path] = true
		points = append(points, k)
	}
	points = append(points, len(muts))

	images := map[[32]byte]*ccImage{}
	var order []*ccImage
	hit := map[string]int{} // operation label → crash points that stopped it
	nImages := 0
	for _, k := range points {
		m := base.CrashClone(vfs.CrashConfig{})
		crash := vfs.CrashAfter(k)
		ffs := vfs.WithFaults(m, crash)
		_, err := compaction.Clean(ffs, ccDir, cfg, opt)
		label := "completed"
		if k < len(muts) {
			if !crash.Crashed() || !errors.Is(err, vfs.ErrCrashed) {
				t.Fatalf("crash point %d (%v): crashed %v, Clean returned %v", k, muts[k], crash.Crashed(), err)
			}
			var stopped *vfs.Op
			for _, op := range ffs.Log() {
				if errors.Is(op.Err, vfs.ErrCrashed) {
					stopped = &op
					break
				}
			}
			if stopped == nil || stopped.Kind != muts[k].Kind || stopped.Path != muts[k].Path || stopped.NewPath != muts[k].NewPath {
				t.Fatalf("crash point %d stopped %v, but the completed clean's operation %d is %v: the clean's operations are not deterministic", k, stopped, k, muts[k])
			}
			label = ccLabel(muts[k])
		} else if crash.Crashed() || err != nil {
			t.Fatalf("crash point %d, past every operation: crashed %v, %v", k, crash.Crashed(), err)
		}
		hit[label]++
		cuts := ccPowerCuts
		if k < len(muts) && (muts[k].Kind == vfs.OpRename || muts[k].Kind == vfs.OpSync && muts[k].Path == ccDir) {
			cuts = append(slices.Clone(cuts), ccRenameCuts...)
		}
		for s, pc := range cuts {
			c := pc.cfg
			c.Seed = uint64(k)*100 + uint64(s)
			img := m.CrashClone(c)
			h := ccHash(t, img)
			from := fmt.Sprintf("%d/%s", k, pc.name)
			nImages++
			if x := images[h]; x != nil {
				x.from = append(x.from, from)
				continue
			}
			x := &ccImage{id: fmt.Sprintf("i%03d", len(order)), mem: img, from: []string{from}, first: label}
			x.src = filepath.Join(tmp, "img", x.id)
			x.kafka = filepath.Join(tmp, "kafka", x.id, "crash-0")
			x.rec = filepath.Join(tmp, "rec", x.id)
			ccExport(t, img, ccLogDir, x.src)
			ccExport(t, img, ccLogDir, x.rec)
			must(os.MkdirAll(filepath.Dir(x.kafka), 0o755))
			x.files = ccListing(t, img, ccDir)
			ck, err := checkpoint.ReadOffsets(img, path.Join(ccLogDir, checkpoint.CleanerOffsetFile))
			if err == nil {
				x.ckpt, x.hasCkpt = ck[checkpoint.TopicPartition{Topic: "crash", Partition: 0}]
			}
			_, err = img.Stat(path.Join(ccLogDir, checkpoint.CleanShutdownFile))
			x.marker = err == nil
			images[h] = x
			order = append(order, x)
		}
	}
	tSweep := time.Since(start)

	// segkit's Open (on a copy in the Mem) and Recover (on a copy on disk)
	// load every image while Kafka's loader does.
	type mine struct {
		open, rec       outcome
		openErr, recErr error
		openFS          vfs.FS
	}
	mines := make([]mine, len(order))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, x := range order {
			m := x.mem.CrashClone(vfs.CrashConfig{}) // a copy
			l, err := kafkalog.Open(m, ccDir, cfg, kafkalog.Options{Clock: fixedClock{now}})
			if err == nil {
				err = l.Close()
			}
			if err == nil {
				mines[i].open, err = ccOutcome(m, ccDir)
			}
			mines[i].openErr, mines[i].openFS = err, m
			dir := filepath.ToSlash(filepath.Join(x.rec, "crash-0"))
			if _, err := repair.Recover(vfs.OS(), dir, repair.RecoverOptions{Config: &cfg}); err != nil {
				mines[i].recErr = err
				continue
			}
			mines[i].rec, mines[i].recErr = ccOutcome(vfs.OS(), dir)
		}
	}()
	var pairs []recoverPair
	for _, x := range order {
		pairs = append(pairs, recoverPair{src: filepath.Join(x.src, "crash-0"), out: x.kafka, flags: kafkaFlags})
	}
	kafka := kafkaRecoverAll(t, pairs)
	tKafka := time.Since(start)
	<-done
	tSegkit := time.Since(start)

	// What each image held and became.
	var (
		states, leftovers, openIndexes                = map[string]int{}, map[string]int{}, map[string]int{}
		indexFiles, swapsDone, kafkaDeleted, disagree int
		withMarker, fetchFailed, overlaps             int
		snapshotDiffs                                 = map[string]int{}
	)
	for i, x := range order {
		k := kafka[x.kafka]
		my := mines[i]
		where := ccWhere(x)
		has := func(suffix string) bool {
			return slices.ContainsFunc(x.files, func(f string) bool { return strings.Contains(f, suffix+":") })
		}
		for _, suf := range []string{segment.CleanedSuffix, segment.SwapSuffix, segment.DeletedSuffix} {
			if has(suf) {
				leftovers[suf]++
			}
		}
		if has(segment.SwapSuffix) && has(segment.DeletedSuffix) {
			leftovers[".swap beside .deleted"]++
		}
		if has(segment.SwapSuffix) && has(segment.CleanedSuffix) {
			leftovers[".swap beside .cleaned"]++
		}
		if x.marker {
			withMarker++
		}
		if k.Error != "" || my.openErr != nil || my.recErr != nil {
			disagree++
			t.Errorf("%s: does not load: Kafka %q, segkit Open %v, segkit Recover %v", where, k.Error, my.openErr, my.recErr)
			continue
		}
		bad := false
		fail := func(format string, args ...any) {
			bad = true
			t.Errorf("%s: "+format, append([]any{where}, args...)...)
		}
		kd, rd := filepath.ToSlash(x.kafka), filepath.ToSlash(filepath.Join(x.rec, "crash-0"))
		if d := cmp.Diff(k.outcome(), my.open); d != "" {
			fail("Kafka's load and segkit's Open differ (-Kafka +segkit):\n%s", d)
		}
		if d := cmp.Diff(k.outcome(), my.rec); d != "" {
			fail("Kafka's load and segkit's Recover differ (-Kafka +segkit):\n%s", d)
		}
		kList, rList := ccSegmentFiles(ccListing(t, vfs.OS(), kd)), ccSegmentFiles(ccListing(t, vfs.OS(), rd))
		oList := ccSegmentFiles(ccListing(t, my.openFS, ccDir))
		if !slices.Equal(ccNoSnapshots(kList), ccNoSnapshots(rList)) {
			fail("the files after the load differ:\nKafka          %v\nsegkit Recover %v", kList, rList)
		}
		if !slices.Equal(ccNames(ccNoSnapshots(kList)), ccNames(ccNoSnapshots(oList))) {
			fail("the files after the load differ:\nKafka       %v\nsegkit Open %v", kList, oList)
		}
		for _, f := range kList {
			if strings.Contains(f, segment.CleanedSuffix) || strings.Contains(f, segment.SwapSuffix) || strings.Contains(f, segment.DeletedSuffix) {
				fail("a leftover stays after Kafka's load: %s", f)
			}
		}
		kFiles, rFiles, oFiles := ccRead(t, vfs.OS(), kd), ccRead(t, vfs.OS(), rd), ccRead(t, my.openFS, ccDir)
		kLogs := ccOnly(kFiles, segment.LogSuffix)
		if !maps.EqualFunc(kLogs, ccOnly(oFiles, segment.LogSuffix), bytes.Equal) || !maps.EqualFunc(kLogs, ccOnly(rFiles, segment.LogSuffix), bytes.Equal) {
			fail("the .log bytes after the load differ between Kafka and segkit")
		}
		for _, f := range x.files {
			if name, ok := strings.CutSuffix(f[:strings.LastIndexByte(f, ':')], segment.SwapSuffix); ok && strings.HasSuffix(name, segment.LogSuffix) {
				if b, ok := kFiles[name]; ok && bytes.Equal(b, postFiles[name]) {
					swapsDone++
				}
			}
		}
		kafkaDeleted += len(k.SegmentsDeleted)
		// Each segment wholly old or wholly new.
		old, nw := 0, 0
		for name, b := range kLogs {
			switch {
			case bytes.Equal(b, preFiles[name]) && bytes.Equal(b, postFiles[name]):
			case bytes.Equal(b, preFiles[name]):
				old++
			case bytes.Equal(b, postFiles[name]):
				nw++
			default:
				fail("%s (%d bytes) is neither the source segment nor the cleaned one", name, len(b))
			}
		}
		state := "mixed"
		switch {
		case maps.EqualFunc(kLogs, ccOnly(preFiles, segment.LogSuffix), bytes.Equal):
			state = "old"
		case maps.EqualFunc(kLogs, ccOnly(postFiles, segment.LogSuffix), bytes.Equal):
			state = "new"
		case old == 0 && nw == 0:
			state = "other"
		}
		states[state]++
		if state == "old" && !cmp.Equal(k.outcome(), pre) {
			fail("the source segments, but Kafka's load left %v, not %v", k.outcome(), pre)
		}
		if x.hasCkpt && state != "new" {
			fail("the cleaner checkpoint (%d) is written, but the state is %s", x.ckpt, state)
		}
		if x.marker && state != "old" && state != "new" {
			fail("the clean-shutdown marker is there, but the state is %s", state)
		}
		// A consumer that fetches at any batch's offset (through the
		// offset index) gets that batch, from Open's directory; where a
		// segment overlaps the next (both loaders keep a source segment
		// whose .deleted rename did not survive, beside the cleaned
		// segment that covers it), the later one serves the overlap.
		overlap, err := ccFetch(my.openFS, ccDir, kLogs)
		note := ""
		if overlap {
			overlaps++
			note = "; the segments overlap: both loads keep a source segment whose rename to .deleted did not survive beside the cleaned segment that covers it (whose rename from .swap did), and segkit's read refuses the cleaned segment's batches past the next segment's base where Kafka's LogSegment.read serves them unchecked"
		}
		if err != nil {
			fetchFailed++
			fail("fetching from segkit Open's directory: %v%s", err, note)
		}
		// What a read_committed consumer sees, in Kafka's directory and
		// in Open's: reading the segments' bytes, and fetching from the
		// start.
		for _, d := range []struct {
			who   string
			fsys  vfs.FS
			dir   string
			fetch bool
		}{{"Kafka", vfs.OS(), kd, false}, {"segkit Open", my.openFS, ccDir, false}, {"segkit Open", my.openFS, ccDir, true}} {
			v, leo, err := ccView(d.fsys, d.dir, d.fetch)
			how := map[bool]string{false: "reading the segments", true: "fetching"}[d.fetch]
			if err != nil {
				fail("a read_committed consumer %s of %s's directory: %v%s", how, d.who, err, note)
				continue
			}
			if leo != preLEO || !maps.Equal(v, preView) {
				fail("a read_committed consumer %s of %s's directory sees a change (log end %d, was %d):\n%s", how, d.who, leo, preLEO, cmp.Diff(preView, v))
			}
		}
		// The producer snapshots: Kafka's recovery from 0 re-takes one at
		// each segment's end, and its removeStraySnapshots deletes those
		// at no segment's base but the latest; segkit's loader does
		// neither.
		kSnaps, rSnaps, oSnaps := ccSnapshots(kList), ccSnapshots(rList), ccSnapshots(oList)
		for _, o := range []struct {
			who   string
			snaps map[int64]bool
		}{{"Recover", rSnaps}, {"Open", oSnaps}} {
			for off := range maps.Keys(kSnaps) {
				if !o.snaps[off] {
					if _, isBase := kLogs[segment.FileName(off, segment.LogSuffix)]; isBase || off == k.LogEndOffset {
						snapshotDiffs["Kafka's recovery took one that segkit "+o.who+" did not"]++
						continue
					}
					fail("Kafka's load keeps the snapshot at %d, segkit %s's does not", off, o.who)
				}
			}
			for off := range maps.Keys(o.snaps) {
				if !kSnaps[off] {
					if _, isBase := kLogs[segment.FileName(off, segment.LogSuffix)]; !isBase {
						snapshotDiffs["a stray one segkit "+o.who+" keeps and Kafka's removeStraySnapshots deletes"]++
						continue
					}
					fail("segkit %s keeps the snapshot at segment base %d, Kafka's load does not", o.who, off)
				}
			}
		}
		// The indexes: Kafka's and Recover's, both rebuilt from recovery
		// point 0, byte for byte; Open's (which trusts the segments below
		// the image's recovery point) Kafka's, or those of the segment
		// version its .log is.
		for name, kb := range kFiles {
			if strings.HasSuffix(name, segment.LogSuffix) || strings.HasSuffix(name, segment.SnapshotSuffix) || !strings.HasPrefix(name, "0") {
				continue
			}
			indexFiles++
			if !bytes.Equal(kb, rFiles[name]) {
				fail("%s: Kafka's (%d bytes) and segkit Recover's (%d bytes) differ", name, len(kb), len(rFiles[name]))
			}
			logName := name[:strings.IndexByte(name, '.')] + segment.LogSuffix
			ob := oFiles[name]
			switch {
			case bytes.Equal(ob, kb):
				openIndexes["as Kafka rebuilt it"]++
			case bytes.Equal(kLogs[logName], preFiles[logName]) && bytes.Equal(ob, preFiles[name]):
				openIndexes["the source segment's"]++
			case bytes.Equal(kLogs[logName], postFiles[logName]) && bytes.Equal(ob, postFiles[name]):
				openIndexes["the cleaned segment's"]++
			default:
				openIndexes["foreign"]++
				why := ""
				if _, lone := x.mem.Stat(path.Join(ccDir, name+segment.SwapSuffix)); lone == nil && bytes.Equal(ob, postFiles[name]) {
					why = fmt.Sprintf(": the image held a lone %s.swap (no .log.swap, no .cleaned file at or below it), which the load renamed over the source segment's %s, as Kafka 4.3.1's LogLoader.load does too (its third pass renames every .swap file); only Kafka's recovery from 0 rebuilt it",
						name, name)
				}
				fail("segkit Open's %s (%d bytes) is the cleaned segment's %v, beside the source segment's %s (the source's own %s is %d bytes, Kafka's rebuilt one %d)%s",
					name, len(ob), bytes.Equal(ob, postFiles[name]), logName, name, len(preFiles[name]), len(kb), why)
			}
		}
		if bad {
			disagree++
		}
	}

	// What the sweep covered.
	labels := slices.Sorted(maps.Keys(hit))
	var b strings.Builder
	for _, l := range labels {
		fmt.Fprintf(&b, "  %3d before %s\n", hit[l], l)
	}
	t.Logf("compaction.Clean of %d segments into %d groups (%d mutating operations): %d crash points, %d power cuts each (%d at a rename or a sync of the partition directory), %d images, %d distinct; the crash points by the operation they stopped:\n%s",
		len(ccOnly(preFiles, segment.LogSuffix)), len(rep.Groups), len(muts), len(points), len(ccPowerCuts), len(ccPowerCuts)+len(ccRenameCuts), nImages, len(order), b.String())
	t.Logf("time: %v to generate and sweep, Kafka's loads done at %v, segkit's at %v, all compared at %v", tSweep, tKafka, tSegkit, time.Since(start))
	t.Logf("images: states %v; holding leftovers %v; %d with a clean-shutdown marker; Kafka completed %d .swap and deleted %d segments; %d index files Kafka and segkit Recover rebuilt identical; segkit Open's index files: %v (foreign: a cleaned segment's beside a source .log); producer snapshots that differ: %v; %d images where a fetch from segkit Open's directory fails; %d images with overlapping segments after both loads; %d images fail a check",
		states, leftovers, withMarker, swapsDone, kafkaDeleted, indexFiles, openIndexes, snapshotDiffs, fetchFailed, overlaps, disagree)

	// Every kind of operation was crashed at, and every kind of leftover
	// loaded.
	for _, want := range []string{
		"create *.log.cleaned", "writeat *.log.cleaned", "sync *.log.cleaned", "sync *.index.cleaned", "chtimes *.log.cleaned",
		"rename *.log.cleaned -> *.log.swap", "rename *.index.cleaned -> *.index.swap", "rename *.txnindex.cleaned -> *.txnindex.swap",
		"sync <partition>",
		"rename *.log -> *.log.deleted", "rename *.index -> *.index.deleted", "rename *.timeindex -> *.timeindex.deleted",
		"rename *.log.swap -> *.log", "rename *.timeindex.swap -> *.timeindex",
		"remove *.log.deleted", "remove *.index.deleted", "remove *.snapshot",
		"remove <log dir>/.kafka_cleanshutdown", "sync <log dir>",
		"create <log dir>/cleaner-offset-checkpoint.tmp", "write <log dir>/cleaner-offset-checkpoint.tmp",
		"sync <log dir>/cleaner-offset-checkpoint.tmp", "rename <log dir>/cleaner-offset-checkpoint.tmp -> <log dir>/cleaner-offset-checkpoint",
		"rename <log dir>/.kafka_cleanshutdown.tmp -> <log dir>/.kafka_cleanshutdown",
		"completed",
	} {
		if hit[want] == 0 {
			t.Errorf("no crash point stopped %q", want)
		}
	}
	for _, want := range []string{segment.CleanedSuffix, segment.SwapSuffix, segment.DeletedSuffix, ".swap beside .deleted", ".swap beside .cleaned"} {
		if leftovers[want] == 0 {
			t.Errorf("no image held %s leftovers", want)
		}
	}
	for _, want := range []string{"old", "new", "mixed"} {
		if states[want] == 0 {
			t.Errorf("no image was in state %s", want)
		}
	}
	if swapsDone == 0 {
		t.Error("Kafka completed no .swap")
	}
	if len(order) < 100 {
		t.Errorf("only %d distinct images", len(order))
	}
}

// ccWhere describes an image for a failure: where the crash was, the
// leftovers and the log directory's state.
func ccWhere(x *ccImage) string {
	from := x.from
	more := ""
	if len(from) > 4 {
		from, more = from[:4], fmt.Sprintf(" and %d more", len(x.from)-4)
	}
	var left []string
	for _, f := range x.files {
		name, _, _ := strings.Cut(f, ":")
		if strings.HasSuffix(name, segment.CleanedSuffix) || strings.HasSuffix(name, segment.SwapSuffix) || strings.HasSuffix(name, segment.DeletedSuffix) {
			left = append(left, f)
		}
	}
	ckpt := "none"
	if x.hasCkpt {
		ckpt = fmt.Sprint(x.ckpt)
	}
	return fmt.Sprintf("image %s (crash point/power cut %v%s, the first before %s; leftovers %v; cleaner checkpoint %s, clean-shutdown marker %v)",
		x.id, from, more, x.first, left, ckpt, x.marker)
}

// ccDataWrite reports whether op writes data to a .cleaned file.
func ccDataWrite(op vfs.Op) bool {
	return (op.Kind == vfs.OpWrite || op.Kind == vfs.OpWriteAt) && strings.HasSuffix(op.Path, segment.CleanedSuffix)
}

var ccBase = regexp.MustCompile(`^[0-9]{20}\.`)

// ccLabel names an operation by kind and the kind of file it acts on:
// "rename *.log.cleaned -> *.log.swap", "sync <partition>".
func ccLabel(op vfs.Op) string {
	name := func(p string) string {
		switch {
		case p == ccDir:
			return "<partition>"
		case p == ccLogDir:
			return "<log dir>"
		case path.Dir(p) == ccLogDir:
			return "<log dir>/" + path.Base(p)
		}
		return ccBase.ReplaceAllString(path.Base(p), "*.")
	}
	s := op.Kind.String() + " " + name(op.Path)
	if op.Kind == vfs.OpRename {
		s += " -> " + name(op.NewPath)
	}
	return s
}

// ccImport copies the regular files of the directory src into the Mem
// directory dst, durably, keeping modification times.
func ccImport(t testing.TB, m *vfs.Mem, src, dst string) {
	t.Helper()
	must(m.MkdirAll(dst, 0o755))
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		p := path.Join(dst, e.Name())
		f, err := m.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Write(b)
		must(errors.Join(err, f.Sync(), f.Close()))
		must(m.Chtimes(p, fi.ModTime(), fi.ModTime()))
	}
	for d := dst; ; d = path.Dir(d) {
		must(vfs.SyncDir(m, d))
		if d == "/" {
			break
		}
	}
}

// ccExport writes the Mem directory src, recursively, into a new
// directory dst, keeping modification times.
func ccExport(t testing.TB, m vfs.FS, src, dst string) {
	t.Helper()
	must(os.MkdirAll(dst, 0o755))
	infos, err := vfs.ReadDir(m, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, fi := range infos {
		p, d := path.Join(src, fi.Name()), filepath.Join(dst, fi.Name())
		if fi.IsDir() {
			ccExport(t, m, p, d)
			continue
		}
		b, err := vfs.ReadFile(m, p)
		if err != nil {
			t.Fatal(err)
		}
		must(os.WriteFile(d, b, 0o644))
		must(os.Chtimes(d, fi.ModTime(), fi.ModTime()))
	}
}

// ccTree lists every file of the Mem under the log directory, with its
// size.
func ccTree(t testing.TB, m vfs.FS) []string {
	t.Helper()
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		infos, err := vfs.ReadDir(m, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, fi := range infos {
			p := path.Join(dir, fi.Name())
			if fi.IsDir() {
				walk(p)
				continue
			}
			out = append(out, fmt.Sprintf("%s:%d", p, fi.Size()))
		}
	}
	walk(ccLogDir)
	return out
}

// ccHash hashes the names and contents of the files under the Mem's log
// directory.
func ccHash(t testing.TB, m vfs.FS) [32]byte {
	t.Helper()
	h := sha256.New()
	for _, f := range ccTree(t, m) {
		p := f[:strings.LastIndexByte(f, ':')]
		b, err := vfs.ReadFile(m, p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
	}
	return [32]byte(h.Sum(nil))
}

// ccListing lists the files of a directory as "name:size", sorted.
func ccListing(t testing.TB, fsys vfs.FS, dir string) []string {
	t.Helper()
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, fi := range infos {
		if fi.IsDir() {
			continue // Kafka's loader skips every entry that is not a regular file (.segkit)
		}
		out = append(out, fmt.Sprintf("%s:%d", fi.Name(), fi.Size()))
	}
	return out
}

// ccNoSnapshots drops the producer snapshots from a listing.
func ccNoSnapshots(files []string) []string {
	return slices.DeleteFunc(slices.Clone(files), func(f string) bool {
		name, _, _ := strings.Cut(f, ":")
		return strings.HasSuffix(name, segment.SnapshotSuffix)
	})
}

// ccSnapshots returns the offsets of the producer snapshots of a listing.
func ccSnapshots(files []string) map[int64]bool {
	out := map[int64]bool{}
	for _, f := range files {
		name, _, _ := strings.Cut(f, ":")
		if off, ext, err := segment.ParseFileName(name); err == nil && ext == segment.SnapshotSuffix {
			out[off] = true
		}
	}
	return out
}

// ccFetch opens dir read-only and fetches at the base offset of every
// batch of logs (Kafka's segments after its load): the first entry
// returned must be that batch, byte for byte. A batch of a segment that
// the next segment overlaps is not fetched (overlap reports that there is
// one): Kafka's read, like segkit's, serves from the last segment whose
// base offset is at or below the offset.
func ccFetch(fsys vfs.FS, dir string, logs ccFiles) (overlap bool, err error) {
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		return false, err
	}
	defer l.Close()
	names := slices.Sorted(maps.Keys(logs))
	for i, name := range names {
		nextBase := int64(math.MaxInt64)
		if i+1 < len(names) {
			nextBase, _, _ = segment.ParseFileName(names[i+1])
		}
		sc := record.NewScanner(logs[name], name, 0)
		for sc.Next() {
			want := sc.Entry()
			if want.LastOffset() >= nextBase {
				overlap = true
			}
			if want.BaseOffset() >= nextBase {
				continue
			}
			res, err := l.Read(want.BaseOffset(), 1, nil, kafkalog.ReadOptions{})
			if err != nil {
				return overlap, fmt.Errorf("offset %d (%s position %d): %w", want.BaseOffset(), name, want.Position, err)
			}
			got := record.NewScanner(res.Records, "", 0)
			if !got.Next() || !bytes.Equal(got.Entry().Raw(), want.Raw()) {
				desc := "nothing"
				if len(res.Records) > 0 {
					desc = fmt.Sprintf("the entry at offset %d", got.Entry().BaseOffset())
				}
				return overlap, fmt.Errorf("offset %d (%s position %d): got %s (%d bytes)", want.BaseOffset(), name, want.Position, desc, len(res.Records))
			}
		}
		if err := sc.Err(); err != nil {
			return overlap, err
		}
	}
	return overlap, nil
}

// ccSegmentFiles drops the sizes of producer snapshots from a listing:
// Kafka's loader rewrites them with the producers its wall clock has not
// expired (TestRecoveryMatchesKafka does not compare them either).
func ccSegmentFiles(files []string) []string {
	out := slices.Clone(files)
	for i, f := range out {
		if name, _, _ := strings.Cut(f, ":"); strings.HasSuffix(name, segment.SnapshotSuffix) {
			out[i] = name
		}
	}
	return out
}

// ccNames drops the sizes from a listing.
func ccNames(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i], _, _ = strings.Cut(f, ":")
	}
	return out
}

// ccRead reads the segment files (.log and indexes, no snapshots) of a
// directory.
func ccRead(t testing.TB, fsys vfs.FS, dir string) ccFiles {
	t.Helper()
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	out := ccFiles{}
	for _, fi := range infos {
		_, ext, err := segment.ParseFileName(fi.Name())
		if err != nil || !slices.Contains(segmentKinds, ext) {
			continue
		}
		b, err := vfs.ReadFile(fsys, path.Join(dir, fi.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[fi.Name()] = b
	}
	return out
}

// ccOnly returns the files of fs with the suffix.
func ccOnly(fs ccFiles, suffix string) ccFiles {
	out := ccFiles{}
	for n, b := range fs {
		if strings.HasSuffix(n, suffix) {
			out[n] = b
		}
	}
	return out
}

// ccFile returns a file of the image's partition directory, nil if none.
func ccFile(m vfs.FS, name string) []byte {
	b, _ := vfs.ReadFile(m, path.Join(ccDir, name))
	return b
}

// ccOutcome opens a cleanly closed partition read-only and returns its
// log start and end offsets and its segments (readOutcome on any FS).
func ccOutcome(fsys vfs.FS, dir string) (outcome, error) {
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		return outcome{}, err
	}
	o := outcome{LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset()}
	l.Close()
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		return outcome{}, err
	}
	for _, fi := range infos {
		if base, ext, err := segment.ParseFileName(fi.Name()); err == nil && ext == segment.LogSuffix {
			o.Segments = append(o.Segments, segInfo{BaseOffset: base, Size: fi.Size()})
		}
	}
	sort.Slice(o.Segments, func(i, j int) bool { return o.Segments[i].BaseOffset < o.Segments[j].BaseOffset })
	return o, nil
}

// ccView reads a partition directory as a read_committed consumer from
// the start: records of aborted transactions (per the .txnindex files)
// are skipped, a record with a value sets its key (as "offset:value", so
// that a moved offset shows), a tombstone deletes it. It also returns the
// log end offset. With fetch it reads as a consumer does, by fetches at
// the next offset (through the offset indexes); otherwise it reads every
// segment's bytes from the first.
func ccView(fsys vfs.FS, dir string, fetch bool) (map[string]string, int64, error) {
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		return nil, 0, err
	}
	defer l.Close()
	type span struct{ first, last int64 }
	aborted := map[int64][]span{}
	segs := l.Segments()
	for _, s := range segs {
		x, err := index.OpenTransactionIndex(fsys, s.TxnIndexPath(), s.BaseOffset(), index.OpenOptions{})
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		for _, a := range x.All() {
			aborted[a.ProducerID] = append(aborted[a.ProducerID], span{a.FirstOffset, a.LastOffset})
		}
		x.Close()
	}
	view := map[string]string{}
	var it record.Iterator
	var r record.Record
	// apply applies the records at or after from of the entries of buf; it
	// returns the offset after the last.
	apply := func(buf []byte, name string, from int64) (int64, error) {
		next := from
		sc := record.NewScanner(buf, name, 0)
		for sc.Next() {
			b := &sc.Entry().Batch
			if last := sc.Entry().LastOffset(); last < from {
				continue
			} else {
				next = last + 1
			}
			if b.Attributes.IsControl() {
				continue
			}
			skip := false
			if b.Attributes.IsTransactional() {
				for _, a := range aborted[b.ProducerID] {
					if b.BaseOffset >= a.first && b.BaseOffset <= a.last {
						skip = true
					}
				}
			}
			it.Reset(b)
			for it.Next(&r) {
				if skip || r.Key == nil || r.Offset < from {
					continue
				}
				if r.Value == nil {
					delete(view, string(r.Key))
				} else {
					view[string(r.Key)] = fmt.Sprintf("%d:%s", r.Offset, r.Value)
				}
			}
			if err := it.Err(); err != nil {
				return next, err
			}
		}
		return next, sc.Err()
	}
	if fetch {
		for off := l.LogStartOffset(); off < l.LogEndOffset(); {
			res, err := l.Read(off, 1<<20, nil, kafkalog.ReadOptions{})
			if err != nil {
				return nil, 0, fmt.Errorf("fetch at %d: %w", off, err)
			}
			next, err := apply(res.Records, fmt.Sprintf("fetch at %d", off), off)
			if err != nil {
				return nil, 0, err
			}
			if next <= off {
				return nil, 0, fmt.Errorf("fetch at %d returned nothing before the log end %d", off, l.LogEndOffset())
			}
			off = next
		}
		return view, l.LogEndOffset(), nil
	}
	for _, s := range segs {
		if s.Size() == 0 {
			continue
		}
		buf := make([]byte, s.Size())
		if _, err := s.ReadAt(buf, 0); err != nil {
			return nil, 0, err
		}
		if _, err := apply(buf, s.LogPath(), -1); err != nil {
			return nil, 0, err
		}
	}
	return view, l.LogEndOffset(), nil
}
