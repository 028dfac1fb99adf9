package repair

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"sort"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/internal/resync"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// ErrOutputExists is returned by Salvage when its output directory already
// holds files.
var ErrOutputExists = errors.New("inspect: output directory exists and is not empty")

// SalvageOptions tune Salvage.
type SalvageOptions struct {
	// Config is the output partition's configuration; nil means Kafka's
	// defaults with segment.ms disabled, so that segments follow the
	// input's (Salvage rolls a new segment at each input segment).
	Config *kafkalog.Config
	// Clock is the output log's clock; nil means the wall clock.
	Clock segment.Clock
	// Progress, if set, is called as the input is read, with the bytes
	// read so far and the total.
	Progress func(done, total int64)
	// MaxDecompressed bounds the decompressed size of one batch's records
	// while they are validated; 0 means record.DefaultMaxDecompressed.
	MaxDecompressed int
}

// SalvageReport says what Salvage kept and what it lost.
type SalvageReport struct {
	Dir    string `json:"dir"`
	OutDir string `json:"outDir"`
	// Files has one entry per input .log, in offset order.
	Files []SalvageFile `json:"files"`
	// Batches, Records and BytesKept count the entries written to the
	// output; BytesLost the bytes of the input's damaged regions;
	// BytesDropped those of valid entries not kept (see Dropped).
	Batches      int64 `json:"batches"`
	Records      int64 `json:"records"`
	BytesKept    int64 `json:"bytesKept"`
	BytesLost    int64 `json:"bytesLost"`
	BytesDropped int64 `json:"bytesDropped"`
	// Dropped lists valid entries that were not kept because their offsets
	// do not follow the entries kept before them (duplicates, an older
	// copy, an entry embedded in a damaged batch's value).
	Dropped []DroppedEntry `json:"dropped"`
	// MissingOffsets lists the offsets the damaged regions held: between
	// the last entry kept before a damaged region and the first kept after
	// it. Gaps between two intact entries (compaction) are not listed.
	MissingOffsets []OffsetRange `json:"missingOffsets"`
	// FirstOffset and NextOffset delimit the output's offsets (-1 and the
	// first segment's base offset when nothing was kept).
	FirstOffset int64 `json:"firstOffset"`
	NextOffset  int64 `json:"nextOffset"`
	// Findings lists what Salvage found about the input's files
	// (ListPartition): each symbolic link it followed (KindSymlink), and
	// each index larger than Kafka could have written (KindIndexTooLarge),
	// which it did not read: it reads no index, and builds the output's
	// from the entries it keeps.
	Findings []finding.Problem `json:"findings"`
}

// SalvageFile describes one input .log.
type SalvageFile struct {
	File      string      `json:"file"`
	Size      int64       `json:"size"`
	Batches   int64       `json:"batches"`
	Records   int64       `json:"records"`
	BytesKept int64       `json:"bytesKept"`
	BytesLost int64       `json:"bytesLost"`
	Lost      []LostRange `json:"lost"`
}

// LostRange is a damaged region of an input .log: bytes [Start, End).
type LostRange struct {
	Start  int64 `json:"start"`
	End    int64 `json:"end"`
	Length int64 `json:"length"`
	// Reason is what was wrong at Start.
	Reason string `json:"reason"`
}

// DroppedEntry is a valid entry Salvage did not keep.
type DroppedEntry struct {
	File        string `json:"file"`
	Position    int64  `json:"position"`
	Size        int64  `json:"size"`
	FirstOffset int64  `json:"firstOffset"`
	LastOffset  int64  `json:"lastOffset"`
	Reason      string `json:"reason"`
}

// OffsetRange is the offsets First..Last, inclusive. Last is -1 when the
// range runs to an end nothing tells (resync.Damage at the end of the last
// segment).
type OffsetRange struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

// String formats r as "First-Last", or "First-?" for an open range.
func (r OffsetRange) String() string {
	if r.Last < 0 {
		return fmt.Sprintf("%d-?", r.First)
	}
	if r.First == r.Last {
		return fmt.Sprint(r.First)
	}
	return fmt.Sprintf("%d-%d", r.First, r.Last)
}

// Salvage reads every .log of the partition directory dir of in, keeps
// every valid entry it can find — past resync.Damage too, which Kafka's recovery
// cannot do — and writes them, offsets unchanged, to a new partition
// directory outDir of out with log.AppendAsFollower, one append per entry,
// rolling a new segment at each input segment. It reports the byte ranges
// lost, per file, and the offsets they held.
//
// An entry is valid when its header is plausible, its checksum verifies and
// its records decode; after resync.Damage, reading resumes at the next valid entry
// (FindEntry). Entries are kept only while their offsets increase: a
// duplicate or backwards entry is dropped and listed. The input is only
// read. outDir must not exist or be empty; like any log the engine closes,
// its parent directory receives the checkpoint files and the clean-shutdown
// marker. partition.metadata is copied when it is valid; the leader epoch
// checkpoint and producer state are rebuilt from the entries kept.
//
// The input is listed as ListPartition lists it: a symbolic link is read
// as the file it points to, an index too large is not read (Salvage reads
// no index), both reported in Findings; a special file segkit reads (a
// FIFO named like a segment) stops the salvage before it writes anything.
//
// The error is for what stops the salvage: an input that cannot be read,
// an output that cannot be written, or ErrOutputExists.
func Salvage(in vfs.FS, dir string, out vfs.FS, outDir string, opt SalvageOptions) (SalvageReport, error) {
	dir, outDir = path.Clean(dir), path.Clean(outDir)
	rep := SalvageReport{Dir: dir, OutDir: outDir, Files: []SalvageFile{}, Dropped: []DroppedEntry{}, MissingOffsets: []OffsetRange{}, FirstOffset: -1, Findings: []finding.Problem{}}
	entries, err := inspect.ListPartition(in, dir)
	if err != nil {
		return rep, err
	}
	rep.Findings = entryFindings(dir, entries, func(inspect.PartitionEntry) string {
		return "not read: salvage reads no index, and builds the output's from the batches it keeps"
	})
	type logFile struct {
		base int64
		fi   fs.FileInfo
	}
	var logs []logFile
	var total int64
	for _, e := range entries {
		fi := e.FileInfo
		if base, ext, err := segment.ParseFileName(fi.Name()); err == nil && ext == segment.LogSuffix && !fi.IsDir() {
			logs = append(logs, logFile{base, fi})
			total += fi.Size()
		}
	}
	sort.Slice(logs, func(i, j int) bool { return logs[i].base < logs[j].base })
	if outInfos, err := vfs.ReadDir(out, outDir); err == nil && len(outInfos) > 0 {
		return rep, fmt.Errorf("%w: %s", ErrOutputExists, outDir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rep, err
	}

	cfg := kafkalog.DefaultConfig()
	cfg.SegmentMs = math.MaxInt64
	if opt.Config != nil {
		cfg = *opt.Config
	}
	l, err := kafkalog.Open(out, outDir, cfg, kafkalog.Options{Clock: opt.Clock})
	if err != nil {
		return rep, err
	}
	s := salvager{rep: &rep, l: l, prevLast: -1, total: total, progress: opt.Progress}
	s.it.MaxDecompressed = opt.MaxDecompressed
	s.lit.MaxDecompressed = opt.MaxDecompressed
	for i, lf := range logs {
		if i > 0 {
			if err := l.Roll(); err != nil {
				l.Close()
				return rep, err
			}
		}
		if err := s.file(in, path.Join(dir, lf.fi.Name()), lf.base, lf.fi.Size()); err != nil {
			l.Close()
			return rep, err
		}
	}
	s.closeMissing(-1)
	if len(logs) > 0 && rep.FirstOffset < 0 {
		rep.NextOffset = logs[0].base
	}
	rep.NextOffset = max(rep.NextOffset, l.LogEndOffset())
	if err := l.Close(); err != nil {
		return rep, err
	}
	if m, err := checkpoint.ReadPartitionMetadata(in, dir); err == nil {
		if err := checkpoint.WritePartitionMetadata(out, outDir, m.TopicID); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// salvager holds the state of one Salvage.
type salvager struct {
	rep      *SalvageReport
	l        *kafkalog.Log
	w        resync.Walker
	it       record.Iterator
	lit      record.LegacyIterator
	rec      record.Record
	prevLast int64 // last offset kept, -1 before any
	// pending is set while resync.Damage has been seen since the last entry kept:
	// the offsets from pendingFrom on are missing until the next one.
	pending     bool
	pendingFrom int64
	done, total int64
	progress    func(done, total int64)
}

func (s *salvager) file(in vfs.FS, file string, base, size int64) error {
	sf := SalvageFile{File: file, Size: size, Lost: []LostRange{}}
	f, err := in.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	start := s.done
	lastReport := int64(0)
	entry := func(e *record.Entry) error {
		first, records, recErr := s.validate(e)
		if recErr != nil {
			s.lose(&sf, base, e.Position, e.Position+int64(e.Size()), fmt.Sprintf("its checksum verifies but its records do not decode: %v", recErr))
			return nil
		}
		last := e.LastOffset()
		if first <= s.prevLast {
			s.rep.Dropped = append(s.rep.Dropped, DroppedEntry{File: file, Position: e.Position, Size: int64(e.Size()), FirstOffset: first, LastOffset: last,
				Reason: fmt.Sprintf("offsets %d..%d do not follow offset %d, already kept", first, last, s.prevLast)})
			s.rep.BytesDropped += int64(e.Size())
			return nil
		}
		if _, err := s.l.AppendAsFollower(e.Raw()); err != nil {
			if errors.Is(err, kafkalog.ErrInvalidRecords) {
				s.rep.Dropped = append(s.rep.Dropped, DroppedEntry{File: file, Position: e.Position, Size: int64(e.Size()), FirstOffset: first, LastOffset: last, Reason: err.Error()})
				s.rep.BytesDropped += int64(e.Size())
				return nil
			}
			return err
		}
		s.closeMissing(first)
		if s.rep.FirstOffset < 0 {
			s.rep.FirstOffset = first
		}
		s.prevLast = last
		sf.Batches++
		sf.Records += records
		sf.BytesKept += int64(e.Size())
		if s.progress != nil && e.Position-lastReport >= 1<<20 {
			lastReport = e.Position
			s.progress(start+e.Position, s.total)
		}
		return nil
	}
	hurt := func(d resync.Damage) error {
		reason := "bytes that are not an entry"
		switch {
		case d.Err != nil:
			reason = resync.Describe(d.Err)
		case d.Zeros:
			reason = "zero bytes"
		case d.ZeroRun >= record.HeaderSizeUpToMagic:
			reason = fmt.Sprintf("%d zero bytes, then the rest of a damaged entry", d.ZeroRun)
		case !d.Resynced:
			reason = "a partial entry at the end of the file"
		}
		s.lose(&sf, base, d.Start, d.End, reason)
		return nil
	}
	if err := s.w.Walk(f, size, file, entry, hurt); err != nil {
		return fmt.Errorf("inspect: %s: %w", file, err)
	}
	s.done = start + size
	if s.progress != nil {
		s.progress(s.done, s.total)
	}
	s.rep.Files = append(s.rep.Files, sf)
	s.rep.Batches += sf.Batches
	s.rep.Records += sf.Records
	s.rep.BytesKept += sf.BytesKept
	s.rep.BytesLost += sf.BytesLost
	return nil
}

// validate decodes an entry's records, and returns its first offset and
// record count.
func (s *salvager) validate(e *record.Entry) (first, records int64, err error) {
	first = e.BaseOffset()
	if e.Magic == record.MagicV2 {
		if err := s.it.Validate(&e.Batch); err != nil {
			return first, 0, err
		}
		return first, int64(e.Batch.RecordCount), nil
	}
	s.lit.Reset(&e.Legacy)
	for s.lit.Next(&s.rec) {
		if records == 0 {
			first = s.rec.Offset
		}
		records++
	}
	return first, records, s.lit.Err()
}

// lose records a lost byte range, merged with the previous one when they
// touch.
func (s *salvager) lose(sf *SalvageFile, base, start, end int64, reason string) {
	if n := len(sf.Lost); n > 0 && sf.Lost[n-1].End == start {
		sf.Lost[n-1].End = end
		sf.Lost[n-1].Length = end - sf.Lost[n-1].Start
	} else {
		sf.Lost = append(sf.Lost, LostRange{Start: start, End: end, Length: end - start, Reason: reason})
	}
	sf.BytesLost += end - start
	if !s.pending {
		s.pending = true
		s.pendingFrom = s.prevLast + 1
		if s.prevLast < 0 {
			s.pendingFrom = base
		}
	}
}

// closeMissing ends the pending run of missing offsets at next, the first
// offset kept after resync.Damage (-1: the end of the log).
func (s *salvager) closeMissing(next int64) {
	if !s.pending {
		return
	}
	s.pending = false
	switch {
	case next < 0:
		s.rep.MissingOffsets = append(s.rep.MissingOffsets, OffsetRange{First: s.pendingFrom, Last: -1})
	case next > s.pendingFrom:
		s.rep.MissingOffsets = append(s.rep.MissingOffsets, OffsetRange{First: s.pendingFrom, Last: next - 1})
	}
}
