package repair

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"slices"
	"sort"
	"time"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/internal/resync"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// RecoverOptions tune Recover.
type RecoverOptions struct {
	// Config is the log's configuration; nil means Kafka's defaults.
	// Recovery reads only segment.index.bytes and index.interval.bytes.
	Config *kafkalog.Config
	// Clock is the log's clock; nil means the wall clock.
	Clock segment.Clock
}

// RecoverReport says what recovery did to a partition.
type RecoverReport struct {
	Dir string `json:"dir"`
	// CleanShutdown reports that the log directory had a clean-shutdown
	// marker: Recover set it aside so that recovery runs, and put it back
	// once the log was closed cleanly.
	CleanShutdown bool `json:"cleanShutdown"`
	// RecoveryPoint is the checkpointed recovery point, which Recover
	// reset to 0 so that every segment is recovered (-1: none).
	RecoveryPoint int64 `json:"recoveryPoint"`
	// LogEndBefore is the offset after the last valid entry before
	// recovery, counting entries past resync.Damage (what a salvage could reach);
	// LogEndAfter the log end offset after it.
	LogEndBefore int64 `json:"logEndBefore"`
	LogEndAfter  int64 `json:"logEndAfter"`
	// Segments lists each segment recovered.
	Segments []RecoveredSegment `json:"segments"`
	// Deleted lists the files Kafka's load removed: segments after a
	// truncation (with what they held), leftovers and orphans.
	Deleted []DeletedFile `json:"deleted"`
	// Renamed lists .swap files completed into place.
	Renamed []string `json:"renamed"`
	// Replaced lists the files of the segments a completed .swap took the
	// place of (kafkalog.LoadReport.Replaced): the end of an interrupted
	// compaction, not a truncation, and not counted in Changed.
	Replaced []string `json:"replaced"`
	// Findings lists what Recover found about the partition's files
	// before recovery (ListPartition): each symbolic link it followed
	// (KindSymlink), and each index larger than Kafka could have written
	// (KindIndexTooLarge), which it removed unread for recovery to
	// rebuild; then what the engine could not trust but loaded anyway
	// (kafkalog.LoadReport.Problems: a bad checkpoint or snapshot, a
	// batch the producer state refused). segviz recover --out puts first
	// those of the copy it made (CopyPartitionFiles), which name the
	// source's files.
	Findings []finding.Problem `json:"findings"`
	// Changed reports that recovery truncated or deleted something.
	Changed bool `json:"changed"`
}

// RecoveredSegment is one segment recovery went through.
type RecoveredSegment struct {
	File       string `json:"file"`
	BaseOffset int64  `json:"baseOffset"`
	// Why the segment was recovered (kafkalog.RecoveredSegment.Why): "unclean
	// shutdown", "missing index", "forced, after a clean shutdown" ...; a segment
	// recovered twice (its index was missing, then the whole log was) has
	// one entry, with both reasons.
	Why        string `json:"why"`
	SizeBefore int64  `json:"sizeBefore"`
	SizeAfter  int64  `json:"sizeAfter"`
	Truncated  int64  `json:"truncated"`
	// Reason is why the segment was cut: the corruption at
	// ReasonPosition, or the kind of tail ("partial entry", "zero
	// padding"); empty when nothing was cut.
	Reason         string `json:"reason"`
	ReasonPosition int64  `json:"reasonPosition"`
	// Entries is the number of entries kept.
	Entries int `json:"entries"`
	// LostEntries and LostRecords count the valid entries in the cut bytes,
	// found by reading past the resync.Damage (FindEntry), which recovery drops
	// and a salvage keeps; LostOffsets are their offsets.
	LostEntries int         `json:"lostEntries"`
	LostRecords int64       `json:"lostRecords"`
	LostOffsets OffsetRange `json:"lostOffsets"`
}

// DeletedFile is a file recovery removed.
type DeletedFile struct {
	File string `json:"file"`
	// Size and the entry counts are known for .log files.
	Size         int64       `json:"size"`
	Entries      int         `json:"entries"`
	Records      int64       `json:"records"`
	Offsets      OffsetRange `json:"offsets"`
	WholeSegment bool        `json:"wholeSegment"`
}

// scannedEntry is what Recover remembers of an entry before recovery.
type scannedEntry struct {
	pos, end    int64
	first, last int64
	records     int64
}

// Recover runs the log engine's recovery (kafkalog.Open, as a broker loads a
// log after an unclean shutdown) on every segment of the partition
// directory dir of fsys, in place, and reports what it truncated and
// deleted, and why.
//
// Recovery covers every segment (kafkalog.Options.ForceRecovery), whatever the
// clean-shutdown marker and the recovery point say. The engine removes the
// log directory's marker, if any, before it writes, and puts it back when
// the log is closed cleanly.
//
// What recovery drops is read past resync.Damage just before it goes (the
// bytes after a cut, each segment deleted after it), so that the report can
// say which valid entries the truncation drops; the rest of the log is
// read only by the recovery itself. (A directory with a .swap is read
// whole first: completing the swap replaces segments before recovery
// starts.)
//
// The directory is listed as ListPartition lists it: symbolic links are
// followed (the engine reads and truncates through them, as Kafka does),
// an index larger than Kafka could have written is removed unread (the
// engine would scan it whole; recovery rebuilds it), both reported in
// Findings; a special file segkit reads (a FIFO named like a segment, a
// dangling link) makes Recover fail before it writes anything, with an
// error matching vfs.ErrNotRegular.
//
// dir must be a partition directory (CheckPartitionDir); Recover holds its
// lock (kafkalog.LockPartition) throughout, and fails with a *kafkalog.LockError if a
// broker or another writer holds the log directory. Unlike a writer's
// Open, it truncates corruption (kafkalog.Options.TruncateCorrupt): that is the
// repair.
func Recover(fsys vfs.FS, dir string, opt RecoverOptions) (RecoverReport, error) {
	return recoverDir(fsys, dir, opt, false)
}

// recoverDir is Recover. With prescanAll it reads every .log before
// recovery, as it does for a directory with a .swap: the report is the
// same, which the tests check (recoverDir both ways).
func recoverDir(fsys vfs.FS, dir string, opt RecoverOptions, prescanAll bool) (RecoverReport, error) {
	dir = path.Clean(dir)
	rep := RecoverReport{Dir: dir, RecoveryPoint: -1, Segments: []RecoveredSegment{}, Deleted: []DeletedFile{}, Renamed: []string{}, Replaced: []string{}, Findings: []finding.Problem{}}
	if err := inspect.CheckPartitionDir(fsys, dir); err != nil {
		return rep, err
	}
	if _, err := fsys.Stat(dir); err != nil {
		return rep, err
	}
	// The lock is held from the prescan to the marker's return, so that
	// no other writer changes the partition or the marker in between.
	lk, err := kafkalog.LockPartition(fsys, dir)
	if err != nil {
		return rep, err
	}
	defer lk.Close()
	entries, err := inspect.ListPartition(fsys, dir)
	if err != nil {
		return rep, err
	}
	sizes := map[string]int64{} // of the entries, by name
	for _, e := range entries {
		_, ext, err := segment.ParseFileName(e.Name())
		if err == nil && ext == segment.LogSuffix+segment.SwapSuffix {
			prescanAll = true
		}
		sizes[e.Name()] = e.Size()
	}
	var scans, swapScans map[int64]*segmentScan
	var before int64
	var discard func(file string, from int64) error
	if prescanAll {
		scans, swapScans, before, err = prescan(fsys, dir, entries)
		if err != nil {
			return rep, err
		}
	} else {
		// What the recovery drops is read just before it goes.
		scans, swapScans = map[int64]*segmentScan{}, map[int64]*segmentScan{}
		var sr scanner
		discard = func(file string, from int64) error {
			base, ext, err := segment.ParseFileName(path.Base(file))
			if err != nil || ext != segment.LogSuffix {
				return nil
			}
			sc := scans[base]
			if sc == nil {
				sc = &segmentScan{size: sizes[path.Base(file)]}
				scans[base] = sc
			}
			next, err := sr.scan(fsys, file, from, sc)
			before = max(before, next, base)
			return err
		}
	}

	parent := path.Dir(dir)
	tp, err := checkpoint.ParseDirName(path.Base(dir))
	if err != nil {
		tp = checkpoint.TopicPartition{Topic: path.Base(dir), Partition: -1}
	}
	markerPath := path.Join(parent, checkpoint.CleanShutdownFile)
	marker, err := vfs.ReadFile(fsys, markerPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rep, err
	}
	clean := err == nil
	epoch, ok := checkpoint.ParseCleanShutdown(marker)
	if !ok {
		epoch = checkpoint.UnknownBrokerEpoch
	}
	rep.CleanShutdown = clean
	rpPath := path.Join(parent, checkpoint.RecoveryPointFile)
	if m, err := checkpoint.ReadOffsets(fsys, rpPath); err == nil {
		if rp, ok := m[tp]; ok {
			rep.RecoveryPoint = rp
		}
	}

	// An index larger than Kafka could have written is not read: the
	// engine would scan it whole (a sparse 1 TiB one for hours). Recovery
	// rebuilds every index anyway, as Kafka's does one it finds corrupt,
	// so it goes first. A .deleted or .cleaned one the engine deletes
	// unread.
	var remove []string
	rep.Findings = entryFindings(dir, entries, func(e inspect.PartitionEntry) string {
		_, ext, _ := segment.ParseFileName(e.Name())
		if _, tmp := segment.SplitTempSuffix(ext); tmp == segment.DeletedSuffix || tmp == segment.CleanedSuffix {
			return "not read: Kafka's load deletes it"
		}
		remove = append(remove, e.Name())
		return "not read: removed, and rebuilt by the recovery"
	})
	for _, name := range remove {
		if err := fsys.Remove(path.Join(dir, name)); err != nil {
			return rep, err
		}
	}

	cfg := kafkalog.DefaultConfig()
	if opt.Config != nil {
		cfg = *opt.Config
	}
	l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: opt.Clock, BrokerEpoch: epoch, ForceRecovery: true, TruncateCorrupt: true, Locked: true, BeforeDiscard: discard})
	if err != nil {
		return rep, err
	}
	lr := l.LoadReport()
	if !prescanAll {
		// The log end before: what the recovery kept (every segment is
		// recovered, its valid prefix in increasing offsets), what it
		// dropped (read by discard), and the last segment's base.
		for _, e := range entries {
			if base, ext, err := segment.ParseFileName(e.Name()); err == nil && ext == segment.LogSuffix {
				before = max(before, base)
			}
		}
		for _, rs := range lr.Recovered {
			before = max(before, rs.Result.NextOffset)
		}
	}
	rep.LogEndBefore = before
	at := map[int64]int{} // base offset -> index in rep.Segments
	for _, rs := range lr.Recovered {
		file := segment.Path(dir, rs.BaseOffset, segment.LogSuffix)
		sc := scans[rs.BaseOffset]
		if slices.Contains(lr.Renamed, segment.FileName(rs.BaseOffset, segment.LogSuffix+segment.SwapSuffix)) {
			sc = swapScans[rs.BaseOffset] // the segment is now the swap's
		}
		if sc == nil && !prescanAll {
			sc = &segmentScan{size: sizes[segment.FileName(rs.BaseOffset, segment.LogSuffix)]} // nothing was cut from it
		}
		if sc == nil {
			// A .swap renamed into place: prescan saw no .log at its base.
			sc = &segmentScan{}
		}
		r := rs.Result
		seg := RecoveredSegment{File: file, BaseOffset: rs.BaseOffset, Why: rs.Why, SizeBefore: sc.size, SizeAfter: r.ValidBytes,
			Truncated: r.Truncated, ReasonPosition: -1, Entries: r.Entries, LostOffsets: OffsetRange{First: -1, Last: -1}}
		if r.Truncated > 0 {
			rep.Changed = true
			switch {
			case r.Reason != nil:
				seg.Reason = resync.Describe(r.Reason)
				seg.ReasonPosition = resync.CorruptionOffset(r.Reason, r.ValidBytes)
			case r.Tail != record.TailNone:
				seg.Reason = r.Tail.String()
				seg.ReasonPosition = r.ValidBytes
			default:
				seg.Reason = "cut"
				seg.ReasonPosition = r.ValidBytes
			}
			for _, e := range sc.entries {
				if e.pos < r.ValidBytes {
					continue
				}
				if seg.LostEntries == 0 {
					seg.LostOffsets.First = e.first
				}
				seg.LostEntries++
				seg.LostRecords += e.records
				seg.LostOffsets.Last = max(seg.LostOffsets.Last, e.last)
			}
		}
		if i, ok := at[rs.BaseOffset]; ok {
			// Recovered again (a missing index, then the whole log): one
			// entry per segment, with both reasons.
			prev := &rep.Segments[i]
			prev.Why += ", then " + seg.Why
			prev.SizeAfter, prev.Entries = seg.SizeAfter, seg.Entries
			if seg.Truncated > 0 {
				seg.Truncated += prev.Truncated
				seg.Why, seg.SizeBefore = prev.Why, prev.SizeBefore
				if prev.Reason != "" {
					seg.Reason, seg.ReasonPosition = prev.Reason, prev.ReasonPosition
				}
				*prev = seg
			}
			continue
		}
		at[rs.BaseOffset] = len(rep.Segments)
		rep.Segments = append(rep.Segments, seg)
	}
	sort.SliceStable(rep.Segments, func(i, j int) bool { return rep.Segments[i].BaseOffset < rep.Segments[j].BaseOffset })
	for _, name := range lr.Deleted {
		rep.Changed = true
		d := DeletedFile{File: path.Join(dir, name), Offsets: OffsetRange{First: -1, Last: -1}}
		if base, ext, err := segment.ParseFileName(name); err == nil && ext == segment.LogSuffix {
			if sc, ok := scans[base]; ok {
				d.WholeSegment = true
				d.Size = sc.size
				for _, e := range sc.entries {
					if d.Entries == 0 {
						d.Offsets.First = e.first
					}
					d.Entries++
					d.Records += e.records
					d.Offsets.Last = max(d.Offsets.Last, e.last)
				}
			}
		}
		rep.Deleted = append(rep.Deleted, d)
	}
	rep.Renamed = append(rep.Renamed, lr.Renamed...)
	rep.Replaced = append(rep.Replaced, lr.Replaced...)
	rep.Findings = append(rep.Findings, lr.Problems...)
	rep.LogEndAfter = l.LogEndOffset()
	if err := l.Close(); err != nil {
		return rep, err
	}
	if clean {
		// Put back the marker as it was (Kafka before 3.7 wrote it empty).
		if err := vfs.WriteFileAtomic(fsys, markerPath, marker, 0o644); err != nil {
			return rep, fmt.Errorf("inspect: the log was recovered, but the clean-shutdown marker could not be put back: %w", err)
		}
	}
	return rep, nil
}

// segmentScan is what prescan found in one .log.
type segmentScan struct {
	size    int64
	entries []scannedEntry
}

// prescan reads every .log and .log.swap of dir (entries, from
// ListPartition) past resync.Damage, and returns what each holds and the offset
// after the last valid entry of the partition (of its .log files).
func prescan(fsys vfs.FS, dir string, entries []inspect.PartitionEntry) (logs, swaps map[int64]*segmentScan, next int64, err error) {
	out := map[int64]*segmentScan{}
	swaps = map[int64]*segmentScan{}
	var bases []int64
	var sr scanner
	for _, fi := range entries {
		base, ext, err := segment.ParseFileName(fi.Name())
		swap := ext == segment.LogSuffix+segment.SwapSuffix
		if err != nil || ext != segment.LogSuffix && !swap || fi.IsDir() {
			continue
		}
		sc := &segmentScan{size: fi.Size()}
		if swap {
			swaps[base] = sc // what a completed swap puts in place
		} else {
			bases = append(bases, base)
			out[base] = sc
		}
		n, err := sr.scan(fsys, path.Join(dir, fi.Name()), 0, sc)
		if err != nil {
			return nil, nil, 0, err
		}
		if !swap {
			next = max(next, n)
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	if len(bases) > 0 {
		next = max(next, bases[len(bases)-1])
	}
	return out, swaps, next, nil
}

// scanner reads .log files past resync.Damage for Recover's report.
type scanner struct {
	w   resync.Walker
	lit record.LegacyIterator
	rec record.Record
}

// scan reads the valid entries of the .log file from position from (an
// entry's start) to its end, past damage, into sc, and returns the offset
// after the last of them (0 if none).
func (sr *scanner) scan(fsys vfs.FS, file string, from int64, sc *segmentScan) (next int64, err error) {
	f, err := fsys.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	if from > size {
		return 0, nil
	}
	err = sr.w.Walk(io.NewSectionReader(f, from, size-from), size-from, file, func(e *record.Entry) error {
		var records int64
		if e.Magic == record.MagicV2 {
			records = int64(e.Batch.RecordCount)
		} else {
			sr.lit.Reset(&e.Legacy) // a compressed wrapper holds several
			for sr.lit.Next(&sr.rec) {
				records++
			}
		}
		pos := from + e.Position
		sc.entries = append(sc.entries, scannedEntry{pos: pos, end: pos + int64(e.Size()), first: e.BaseOffset(), last: e.LastOffset(), records: records})
		next = max(next, e.LastOffset()+1)
		return nil
	}, func(resync.Damage) error { return nil })
	// A segment read again from 0 (cut, then deleted whole with the rest
	// of the log) adds the entries before its cut to those after it: in
	// file order, each once.
	slices.SortStableFunc(sc.entries, func(a, b scannedEntry) int { return cmp.Compare(a.pos, b.pos) })
	sc.entries = slices.CompactFunc(sc.entries, func(a, b scannedEntry) bool { return a.pos == b.pos })
	return next, err
}

// Details of the findings about a partition's entries, shared by Recover,
// Salvage and CopyPartitionFiles.
const (
	// linkDetail is Verify's wording (inspect/verify.go), with the copy.
	linkDetail = "a symbolic link; read and copied as the %d-byte file it points to, as Kafka would"
	// Sizes above 2 GiB are errors, as Verify has them; the others
	// warnings.
	tooLargeErrorBytes = math.MaxInt32
)

// entryFindings returns the findings about entries of dir, in their
// order: a KindSymlink (info) for each followed link, and a
// KindIndexTooLarge for each index too large, whose detail ends with
// done(e), what is done instead of reading it.
func entryFindings(dir string, entries []inspect.PartitionEntry, done func(inspect.PartitionEntry) string) []finding.Problem {
	out := []finding.Problem{}
	for _, e := range entries {
		name := path.Join(dir, e.Name())
		if vfs.Followed(e.FileInfo) && !e.IsDir() {
			out = append(out, finding.Problem{File: name, Position: -1, Kind: finding.KindSymlink, Level: finding.Info, Detail: fmt.Sprintf(linkDetail, e.Size())})
		}
		if e.TooLarge != "" {
			level := finding.Warning
			if e.Size() > tooLargeErrorBytes {
				level = finding.Error
			}
			out = append(out, finding.Problem{File: name, Position: -1, Kind: finding.KindIndexTooLarge, Level: level, Detail: e.TooLarge + "; " + done(e)})
		}
	}
	return out
}

// CopyPartitionFiles copies the files of the partition directory src
// (ListPartition) into the directory dst, created if needed, keeping their
// modification times, and syncs dst. A symbolic link is copied as the file
// it points to; an index larger than Kafka could have written is not
// copied (recovering the copy rebuilds it); subdirectories, and special
// files of names segkit does not read, are left out. It returns the
// findings about what it followed and left out (KindSymlink,
// KindIndexTooLarge), naming src's files, and fails as ListPartition does
// for a special file segkit reads, before copying anything.
func CopyPartitionFiles(fsys vfs.FS, src, dst string) ([]finding.Problem, error) {
	src, dst = path.Clean(src), path.Clean(dst)
	entries, err := inspect.ListPartition(fsys, src)
	if err != nil {
		return nil, err
	}
	if err := fsys.MkdirAll(dst, 0o755); err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.Mode().IsRegular() || e.TooLarge != "" {
			continue
		}
		if err := copyFile(fsys, path.Join(src, e.Name()), path.Join(dst, e.Name()), e.ModTime()); err != nil {
			return nil, err
		}
	}
	if err := vfs.SyncDir(fsys, dst); err != nil {
		return nil, err
	}
	return entryFindings(src, entries, func(inspect.PartitionEntry) string { return "not copied: recovering the copy rebuilds it" }), nil
}

// copyPiece is how much copyFile copies before it starts the writeback of
// what it copied.
const copyPiece = 64 << 20

// copyFile copies the regular file from to a new file to, durably, and
// gives it the modification time mtime.
func copyFile(fsys vfs.FS, from, to string, mtime time.Time) error {
	in, err := fsys.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := fsys.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	// The copy goes in pieces, each handed to writeback once written
	// (vfs.StartWriteback does not wait), so that the disk writes the copy
	// while the rest is copied and the Sync below waits only for the last
	// pieces: on 1 GiB, 0.65-0.8 s against 0.85-0.97 s for a copy and then
	// its Sync.
	for {
		n, err := io.Copy(out, io.LimitReader(in, copyPiece))
		if err != nil {
			out.Close()
			return err
		}
		if n < copyPiece {
			break
		}
		if err := vfs.StartWriteback(out); err != nil {
			out.Close()
			return err
		}
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return fsys.Chtimes(to, mtime, mtime)
}
