package tier

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"strings"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// RemoteReport says what Verify read of a partition's remote.
type RemoteReport struct {
	// PartitionDir is the remote's directory of the partition.
	PartitionDir string `json:"partitionDir"`
	// TopicID is the topic id naming it.
	TopicID string `json:"topicId"`
	// Metadata is "segkit" when the remote log metadata is the one Dir
	// keeps beside the data, "files" when there is none and the segments
	// come from the files alone (Discover: a remote a broker wrote), and
	// "corrupt" when a metadata file does not decode (the remote checks
	// stopped there).
	Metadata string `json:"metadata"`
	// Segments is how many remote segments are served; StartOffset and
	// EndOffset the offsets they hold (-1 when none).
	Segments    int   `json:"segments"`
	StartOffset int64 `json:"startOffset"`
	EndOffset   int64 `json:"endOffset"`
	// Viewed is how many of them lie below the first local segment and
	// were verified as part of the partition's log (the others are on
	// local disk too, where the local files are verified).
	Viewed int `json:"viewed"`
	// LocalStartOffset is the first local segment's base offset, -1 when
	// the partition directory has none.
	LocalStartOffset int64 `json:"localStartOffset"`
}

// Verify checks a tiered partition as one log: the partition directory
// pdir of local, with the remote segments of tp in d below its first local
// segment read through a View, by inspect.Verify (every batch, index,
// transaction index, producer snapshot and the leader epochs, across the
// remote and local segments) — and the remote against its metadata:
//
//   - a metadata file that does not decode (finding.KindRemoteMetadataCorrupt);
//   - a served segment without one of its files (KindRemoteFileMissing), or
//     whose .log is not the metadata's size or holds offsets outside its
//     start and end offsets (KindRemoteMetadataMismatch);
//   - offsets no served segment holds between two of them or up to the first
//     local segment (KindRemoteGap), and served segments that overlap
//     (KindRemoteOverlap);
//   - remote files no metadata names (KindRemoteOrphanFile), and copies or
//     deletions that did not finish (KindRemoteUnfinished).
//
// A problem in a remote file names the remote file (the Dir's path, as
// RemoteFile does), not the view's name. Verify writes nothing.
func Verify(local vfs.FS, pdir string, d *Dir, tp TopicIDPartition, opt inspect.Options) (inspect.Report, RemoteReport, error) {
	pdir = path.Clean(pdir)
	rr := RemoteReport{PartitionDir: d.PartitionDir(tp), TopicID: tp.TopicID.String(), StartOffset: -1, EndOffset: -1, LocalStartOffset: -1}
	localBase, err := firstLocalBase(local, pdir)
	if err != nil {
		return inspect.Report{}, rr, err
	}
	if localBase != math.MaxInt64 {
		rr.LocalStartOffset = localBase
	}
	var problems []finding.Problem
	add := func(file string, pos int64, kind string, level finding.Level, format string, args ...any) {
		problems = append(problems, finding.Problem{File: file, Position: pos, Kind: kind, Level: level, Detail: fmt.Sprintf(format, args...)})
	}

	meta, err := d.ListSegmentMetadata(tp)
	var ce *format.CorruptionError
	rr.Metadata = "segkit"
	switch {
	case errors.As(err, &ce):
		rr.Metadata = "corrupt"
		add(ce.Path, ce.Offset, finding.KindRemoteMetadataCorrupt, finding.Error, "%v; the remote's segments are not checked", ce.Err)
		meta = nil
	case err != nil:
		return inspect.Report{}, rr, err
	case len(meta) == 0:
		if meta, err = d.Discover(tp); err != nil {
			return inspect.Report{}, rr, err
		}
		if len(meta) > 0 {
			rr.Metadata = "files"
		}
	}
	served := RemoteLog(meta).ServedFrom()
	rr.Segments = len(served)
	if len(served) > 0 {
		rr.StartOffset, rr.EndOffset = served[0].StartOffset, served[len(served)-1].EndOffset
	}
	if rr.Metadata == "segkit" {
		for _, m := range meta {
			switch {
			case m.State == CopySegmentStarted || m.Abandoned && m.State != DeleteSegmentFinished:
				add(d.MetadataPath(m), -1, finding.KindRemoteUnfinished, finding.Info,
					"the copy of segment %d (offsets %d-%d, remote segment %s) did not finish (%s); it is not served, and the next tier upload deletes it", m.StartOffset, m.StartOffset, m.EndOffset, m.ID.ID, m.State)
			case m.State == DeleteSegmentStarted:
				add(d.MetadataPath(m), -1, finding.KindRemoteUnfinished, finding.Info,
					"the deletion of remote segment %s (offsets %d-%d) did not finish; it is not served, and the next tier upload finishes it", m.ID.ID, m.StartOffset, m.EndOffset)
			}
		}
		if err := d.orphans(tp, meta, add); err != nil {
			return inspect.Report{}, rr, err
		}
	}
	for i, m := range served {
		if err := d.checkFiles(m, rr.Metadata == "files", add); err != nil {
			return inspect.Report{}, rr, err
		}
		if i > 0 {
			prev := served[i-1]
			switch {
			case m.StartOffset > prev.EndOffset+1:
				add(d.FilePath(m, FileSegment), -1, finding.KindRemoteGap, finding.Error,
					"offsets %d-%d are in no remote segment: the segment before ends at %d, this one starts at %d", prev.EndOffset+1, m.StartOffset-1, prev.EndOffset, m.StartOffset)
			case m.StartOffset <= prev.EndOffset:
				add(d.FilePath(m, FileSegment), -1, finding.KindRemoteOverlap, finding.Error,
					"offsets %d-%d are in two served remote segments: %s (%d-%d) and %s (%d-%d)", m.StartOffset, min(m.EndOffset, prev.EndOffset), prev.ID.ID, prev.StartOffset, prev.EndOffset, m.ID.ID, m.StartOffset, m.EndOffset)
			}
		}
	}
	if n := len(served); n > 0 && localBase != math.MaxInt64 && served[n-1].EndOffset+1 < localBase {
		last := served[n-1]
		add(d.FilePath(last, FileSegment), -1, finding.KindRemoteGap, finding.Error,
			"offsets %d-%d are neither in the remote (its last segment ends at %d) nor on local disk (the first local segment starts at %d): a read there fails", last.EndOffset+1, localBase-1, last.EndOffset, localBase)
	}
	v, err := d.NewView(local, pdir, served)
	if err != nil {
		return inspect.Report{}, rr, err
	}
	rr.Viewed = len(v.Segments())
	rep, err := inspect.Verify(v, pdir, opt)
	if err != nil {
		return rep, rr, err
	}
	// Name the remote files, and check what the .log files hold against
	// the metadata.
	files := v.Files()
	rename := func(s string) string {
		for name, f := range files {
			if strings.Contains(s, name) {
				s = strings.ReplaceAll(s, name, f.Path)
			}
		}
		return s
	}
	for i := range rep.Problems {
		p := &rep.Problems[i]
		if f, ok := files[p.File]; ok {
			p.File = f.Path
		}
		p.Detail = rename(p.Detail)
	}
	for pi := range rep.Partitions {
		for si := range rep.Partitions[pi].Segments {
			s := &rep.Partitions[pi].Segments[si]
			f, ok := files[s.File]
			if !ok {
				continue
			}
			s.File = f.Path
			m := f.Segment
			if s.FirstOffset >= 0 && (s.FirstOffset < m.StartOffset || s.LastOffset > m.EndOffset) {
				add(f.Path, -1, finding.KindRemoteMetadataMismatch, finding.Error,
					"the .log holds offsets %d-%d, its metadata says %d-%d", s.FirstOffset, s.LastOffset, m.StartOffset, m.EndOffset)
			}
		}
	}
	if len(rep.Partitions) == 1 {
		pr := &rep.Partitions[0]
		for _, p := range problems {
			switch p.Level {
			case finding.Error:
				pr.Errors++
			case finding.Warning:
				pr.Warnings++
			}
		}
	}
	rep.Problems = append(rep.Problems, problems...)
	rep.OK = rep.Count(finding.Error) == 0
	return rep, rr, nil
}

// firstLocalBase is the base offset of the first .log in pdir;
// math.MaxInt64 when there is none.
func firstLocalBase(fsys vfs.FS, pdir string) (int64, error) {
	infos, err := vfs.ReadDir(fsys, pdir)
	if err != nil {
		return 0, err
	}
	first := int64(math.MaxInt64)
	for _, fi := range infos {
		if base, ext, err := segment.ParseFileName(fi.Name()); err == nil && ext == segment.LogSuffix && !fi.IsDir() {
			first = min(first, base)
		}
	}
	return first, nil
}

// checkFiles reports the files a served segment lacks and a .log whose
// size is not the metadata's. Metadata discovered from the files says
// nothing about a transaction index or the size.
func (d *Dir) checkFiles(m SegmentMetadata, discovered bool, add func(string, int64, string, finding.Level, string, ...any)) error {
	for t := FileSegment; t < numFileTypes; t++ {
		if t == FileTransactionIndex && (discovered || m.TxnIdxEmpty) {
			continue
		}
		p := d.FilePath(m, t)
		fi, err := d.fsys.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			add(p, -1, finding.KindRemoteFileMissing, finding.Error,
				"remote segment %s (offsets %d-%d) is served but has no %s file", m.ID.ID, m.StartOffset, m.EndOffset, t.Suffix())
			continue
		}
		if err != nil {
			return err
		}
		if t == FileSegment && !discovered && fi.Size() != m.SegmentSizeInBytes {
			add(p, -1, finding.KindRemoteMetadataMismatch, finding.Error,
				"the .log is %d bytes, its metadata says %d", fi.Size(), m.SegmentSizeInBytes)
		}
	}
	return nil
}

// orphans reports the files of tp's remote directory that no metadata
// names, and temporary files of the metadata directory.
func (d *Dir) orphans(tp TopicIDPartition, meta []SegmentMetadata, add func(string, int64, string, finding.Level, string, ...any)) error {
	files, err := d.Files(tp)
	if err != nil {
		return err
	}
	known := map[UUID]bool{}
	for _, m := range meta {
		known[m.ID.ID] = true
	}
	for _, f := range files {
		if rest, ok := strings.CutPrefix(f.Name, MetadataDirName+"/"); ok {
			add(path.Join(d.MetadataDir(tp), rest), -1, finding.KindRemoteOrphanFile, finding.Warning,
				"a temporary file of an interrupted metadata write; the next tier upload deletes it")
			continue
		}
		if !known[f.ID] {
			add(path.Join(d.PartitionDir(tp), f.Name), -1, finding.KindRemoteOrphanFile, finding.Warning,
				"no remote log metadata names this file; it is not served, and tier upload reports it and leaves it (delete it once you know whose it is)")
		}
	}
	return nil
}
