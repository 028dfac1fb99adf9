package inspect

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"

	kafkalog "github.com/segkit/segkit/log"
	"github.com/segkit/segkit/log/checkpoint"
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
	// recovery, counting entries past damage (what a salvage could reach);
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
	// Problems lists what the engine could not trust but loaded anyway
	// (a bad checkpoint or snapshot).
	Problems []string `json:"problems"`
	// Changed reports that recovery truncated or deleted something.
	Changed bool `json:"changed"`
}

// RecoveredSegment is one segment recovery went through.
type RecoveredSegment struct {
	File       string `json:"file"`
	BaseOffset int64  `json:"baseOffset"`
	// Why the segment was recovered: "unclean shutdown", "missing index".
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
	// found by reading past the damage (FindEntry), which recovery drops
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

// Recover runs the log engine's recovery (log.Open, as a broker loads a
// log after an unclean shutdown) on every segment of the partition
// directory dir of fsys, in place, and reports what it truncated and
// deleted, and why.
//
// Recovery covers every segment (log.Options.ForceRecovery), whatever the
// clean-shutdown marker and the recovery point say. The engine removes the
// log directory's marker, if any, before it writes, and puts it back when
// the log is closed cleanly.
//
// Before recovery, every .log is read past damage, so that the report can
// say which valid entries the truncation drops.
func Recover(fsys vfs.FS, dir string, opt RecoverOptions) (RecoverReport, error) {
	dir = path.Clean(dir)
	rep := RecoverReport{Dir: dir, RecoveryPoint: -1, Segments: []RecoveredSegment{}, Deleted: []DeletedFile{}, Renamed: []string{}, Problems: []string{}}
	scans, before, err := prescan(fsys, dir)
	if err != nil {
		return rep, err
	}
	rep.LogEndBefore = before

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

	cfg := kafkalog.DefaultConfig()
	if opt.Config != nil {
		cfg = *opt.Config
	}
	l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: opt.Clock, BrokerEpoch: epoch, ForceRecovery: true})
	if err != nil {
		return rep, err
	}
	lr := l.LoadReport()
	for _, rs := range lr.Recovered {
		file := segment.Path(dir, rs.BaseOffset, segment.LogSuffix)
		sc := scans[rs.BaseOffset]
		r := rs.Result
		seg := RecoveredSegment{File: file, BaseOffset: rs.BaseOffset, Why: rs.Why, SizeBefore: sc.size, SizeAfter: r.ValidBytes,
			Truncated: r.Truncated, ReasonPosition: -1, Entries: r.Entries, LostOffsets: OffsetRange{First: -1, Last: -1}}
		if r.Truncated > 0 {
			rep.Changed = true
			switch {
			case r.Reason != nil:
				seg.Reason = describe(r.Reason)
				seg.ReasonPosition = corruptionOffset(r.Reason, r.ValidBytes)
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
		rep.Segments = append(rep.Segments, seg)
	}
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
	rep.Problems = append(rep.Problems, lr.Problems...)
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

// prescan reads every .log of dir past damage, and returns what each holds
// and the offset after the last valid entry of the partition.
func prescan(fsys vfs.FS, dir string) (map[int64]*segmentScan, int64, error) {
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		return nil, 0, err
	}
	out := map[int64]*segmentScan{}
	var bases []int64
	var w walker
	var lit record.LegacyIterator
	var rec record.Record
	next := int64(0)
	for _, fi := range infos {
		base, ext, err := segment.ParseFileName(fi.Name())
		if err != nil || ext != segment.LogSuffix || fi.IsDir() {
			continue
		}
		bases = append(bases, base)
		sc := &segmentScan{size: fi.Size()}
		out[base] = sc
		file := path.Join(dir, fi.Name())
		f, err := fsys.Open(file)
		if err != nil {
			return nil, 0, err
		}
		err = w.walk(f, fi.Size(), file, func(e *record.Entry) error {
			var records int64
			if e.Magic == record.MagicV2 {
				records = int64(e.Batch.RecordCount)
			} else {
				lit.Reset(&e.Legacy) // a compressed wrapper holds several
				for lit.Next(&rec) {
					records++
				}
			}
			sc.entries = append(sc.entries, scannedEntry{pos: e.Position, end: e.Position + int64(e.Size()), first: e.BaseOffset(), last: e.LastOffset(), records: records})
			next = max(next, e.LastOffset()+1)
			return nil
		}, func(damage) error { return nil })
		f.Close()
		if err != nil {
			return nil, 0, err
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	if len(bases) > 0 {
		next = max(next, bases[len(bases)-1])
	}
	return out, next, nil
}
