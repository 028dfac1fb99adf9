package viz

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// PartitionJSON is the overview of one partition: what the timeline draws.
// It comes from the directory listing, the segments' indexes and first
// batch headers (retention.StateOf), never from decoding records.
type PartitionJSON struct {
	Dir       string `json:"dir"`
	Name      string `json:"name"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`

	LogStartOffset    int64  `json:"logStartOffset"`
	LogEndOffset      int64  `json:"logEndOffset"`
	HighWatermark     int64  `json:"highWatermark"`
	HighWatermarkFrom string `json:"highWatermarkFrom"`
	RecoveryPoint     int64  `json:"recoveryPoint"`
	CleanShutdown     bool   `json:"cleanShutdown"`
	Now               int64  `json:"now"`
	Bytes             int64  `json:"bytes"`

	Segments     []SegmentJSON `json:"segments"`
	Deleted      []DeletedJSON `json:"deleted"`
	OtherFiles   []FileJSON    `json:"otherFiles"`
	LoadProblems []FindingJSON `json:"loadProblems"`
	// Config holds the retention settings the what-if starts from: the
	// topic's, or Kafka's defaults (a directory holds no topic config).
	Config map[string]int64 `json:"config"`
	Note   string           `json:"note,omitempty"`
	// Remote is the partition's remote store, when it is tiered and the
	// session knows its remote (segviz serve --remote).
	Remote *RemoteJSON `json:"remote,omitempty"`
}

// RemoteJSON is a tiered partition's remote store.
type RemoteJSON struct {
	// Dir is the remote's directory of the partition.
	Dir string `json:"dir"`
	// Metadata says where the remote segments come from: "segkit" (the
	// remote log metadata beside the data) or "files" (the files alone).
	Metadata string `json:"metadata"`
	// Segments are the served remote segments, oldest first.
	Segments []RemoteSegmentJSON `json:"segments"`
}

// RemoteSegmentJSON is one served remote segment.
type RemoteSegmentJSON struct {
	BaseOffset int64 `json:"baseOffset"`
	// EndOffset is the metadata's end offset: the next segment's base
	// offset minus one.
	EndOffset    int64  `json:"endOffset"`
	Size         int64  `json:"size"`
	MaxTimestamp int64  `json:"maxTimestamp"`
	ID           string `json:"id"`
	State        string `json:"state"`
	// Local says a local segment has the same base offset: the segment is
	// on local disk too (copied, not yet deleted by local retention).
	Local bool `json:"local"`
}

// SegmentJSON is one segment of the timeline.
type SegmentJSON struct {
	BaseOffset int64 `json:"baseOffset"`
	// NextOffset is the next segment's base, or the log end offset.
	NextOffset int64 `json:"nextOffset"`
	Size       int64 `json:"size"`
	// FirstTimestamp is the first batch's max timestamp (from which
	// segment.ms counts), LargestTimestamp the largest record timestamp
	// (the time index's last entry); -1 when there is none.
	FirstTimestamp   int64 `json:"firstTimestamp"`
	LargestTimestamp int64 `json:"largestTimestamp"`
	LastModified     int64 `json:"lastModified"`
	Active           bool  `json:"active"`
	// Where is "local" (on local disk only), "remote" (only in the remote
	// store: its files are read from there) or "both" (on local disk and
	// copied to the remote).
	Where string     `json:"where"`
	Files []FileJSON `json:"files"`
	Note  string     `json:"note,omitempty"`
}

// DeletedJSON is a segment whose files are waiting as .deleted (retention
// or DeleteRecords removed it; Kafka deletes the files
// file.delete.delay.ms later). Its records are no longer readable.
type DeletedJSON struct {
	BaseOffset   int64      `json:"baseOffset"`
	Size         int64      `json:"size"`
	LastModified int64      `json:"lastModified"`
	Suffix       string     `json:"suffix"`
	Files        []FileJSON `json:"files"`
	Note         string     `json:"note,omitempty"`
}

// FileJSON is one file of a partition directory.
type FileJSON struct {
	Name         string `json:"name"`
	Size         int64  `json:"size"`
	Kind         string `json:"kind"` // log, index, timeindex, txnindex, snapshot, other
	LastModified int64  `json:"lastModified"`
}

// Partition returns the overview of p["dir"] (p["reload"] reopens it).
func (s *Session) Partition(q Params) (*PartitionJSON, error) {
	p, err := s.partitionParam(q, q.flag("reload"))
	if err != nil {
		return nil, err
	}
	st, hwFrom, err := s.state(p)
	if err != nil {
		return nil, err
	}
	load := p.l.LoadReport()
	out := &PartitionJSON{
		Dir: p.dir, Name: s.dirName(p.dir),
		LogStartOffset: st.LogStartOffset, LogEndOffset: st.LogEndOffset,
		HighWatermark: st.HighWatermark, HighWatermarkFrom: hwFrom,
		RecoveryPoint: load.RecoveryPoint, CleanShutdown: load.CleanShutdown,
		Now: s.opt.Now().UnixMilli(), Bytes: st.Size(),
		Segments: []SegmentJSON{}, Deleted: []DeletedJSON{}, OtherFiles: []FileJSON{},
		LoadProblems: []FindingJSON{},
		Config:       configJSON(p.cfg),
	}
	for _, pr := range load.Problems {
		out.LoadProblems = append(out.LoadProblems, placeFinding(pr))
	}
	out.Topic, out.Partition = topicPartition(out.Name)
	notes := s.opt.Notes[p.dir]
	out.Note = notes[-1]

	infos, err := vfs.ReadDir(s.fsys, p.dir)
	if err != nil {
		return nil, notFound(err)
	}
	files := map[int64][]FileJSON{}
	deleted := map[int64]*DeletedJSON{}
	for _, fi := range infos {
		if fi.IsDir() {
			continue
		}
		f := FileJSON{Name: fi.Name(), Size: fi.Size(), Kind: fileKind(fi.Name()), LastModified: fi.ModTime().UnixMilli()}
		base, ext, err := segment.ParseFileName(fi.Name())
		if err != nil {
			out.OtherFiles = append(out.OtherFiles, f)
			continue
		}
		if suffix, ok := tempSuffix(ext); ok {
			d := deleted[base]
			if d == nil {
				d = &DeletedJSON{BaseOffset: base, Suffix: suffix, Note: notes[base]}
				deleted[base] = d
			}
			d.Files = append(d.Files, f)
			if strings.HasPrefix(ext, segment.LogSuffix) {
				d.Size, d.LastModified = fi.Size(), f.LastModified
			}
			continue
		}
		files[base] = append(files[base], f)
	}
	var remote map[int64]RemoteSegmentJSON
	if s.opt.Remote != nil {
		if out.Remote = s.opt.Remote(p.dir); out.Remote != nil {
			remote = map[int64]RemoteSegmentJSON{}
			for _, r := range out.Remote.Segments {
				remote[r.BaseOffset] = r
			}
		}
	}
	for i, info := range st.Segments {
		where := "local"
		if r, ok := remote[info.BaseOffset]; ok {
			where = "remote"
			if r.Local {
				where = "both"
			}
		}
		sj := SegmentJSON{
			Where:      where,
			BaseOffset: info.BaseOffset, NextOffset: st.NextOffset(i), Size: info.Size,
			FirstTimestamp: info.FirstBatchTimestamp, LargestTimestamp: info.LargestRecordTimestamp,
			LastModified: info.LastModified, Active: i == len(st.Segments)-1,
			Files: files[info.BaseOffset], Note: notes[info.BaseOffset],
		}
		if sj.Files == nil {
			sj.Files = []FileJSON{}
		}
		delete(files, info.BaseOffset)
		out.Segments = append(out.Segments, sj)
	}
	for _, fs := range files { // snapshots and orphans
		out.OtherFiles = append(out.OtherFiles, fs...)
	}
	sort.Slice(out.OtherFiles, func(i, j int) bool { return out.OtherFiles[i].Name < out.OtherFiles[j].Name })
	for _, d := range deleted {
		out.Deleted = append(out.Deleted, *d)
	}
	sort.Slice(out.Deleted, func(i, j int) bool { return out.Deleted[i].BaseOffset < out.Deleted[j].BaseOffset })
	return out, nil
}

// state reads the partition's retention state, with the high watermark
// from the log directory's replication-offset-checkpoint when it has one,
// as `segviz retention` reads it.
func (s *Session) state(p *partition) (retention.LogState, string, error) {
	st, err := retention.StateOf(p.l)
	if err != nil {
		return st, "", fmt.Errorf("%s: %w", p.dir, err)
	}
	hwFrom := "the log end offset (no replication-offset-checkpoint entry)"
	if m, err := checkpoint.ReadOffsets(s.fsys, path.Join(path.Dir(p.dir), "replication-offset-checkpoint")); err == nil {
		if hw, ok := m[p.l.TopicPartition()]; ok {
			st.HighWatermark = min(max(hw, st.LogStartOffset), st.LogEndOffset)
			hwFrom = "replication-offset-checkpoint"
		}
	}
	return st, hwFrom, nil
}

func configJSON(c config.Config) map[string]int64 {
	return map[string]int64{
		config.RetentionMs:       c.RetentionMs,
		config.RetentionBytes:    c.RetentionBytes,
		config.SegmentMs:         c.SegmentMs,
		config.SegmentBytes:      int64(c.SegmentSize()),
		config.FileDeleteDelayMs: c.FileDeleteDelayMs,
	}
}

// tempSuffix reports whether a segment file extension carries a temporary
// suffix (".log.deleted", ".index.swap", ...), and which.
func tempSuffix(ext string) (string, bool) {
	_, tmp := segment.SplitTempSuffix(ext)
	return tmp, tmp != ""
}

func fileKind(name string) string {
	_, ext, err := segment.ParseFileName(name)
	if err != nil {
		return "other"
	}
	if s, ok := tempSuffix(ext); ok {
		ext = strings.TrimSuffix(ext, s)
	}
	switch ext {
	case segment.LogSuffix:
		return "log"
	case segment.IndexSuffix:
		return "index"
	case segment.TimeIndexSuffix:
		return "timeindex"
	case segment.TxnIndexSuffix:
		return "txnindex"
	case segment.SnapshotSuffix:
		return "snapshot"
	}
	return "other"
}
