package inspect

import (
	"io/fs"
	"path"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/vfs"
)

// PartitionEntry is an entry of a partition directory as Recover, Salvage
// and CopyPartitionFiles see it (ListPartition).
type PartitionEntry struct {
	// FileInfo describes the entry under its own name: for a symbolic
	// link, the file it points to (vfs.ReadDirFollow, vfs.Followed).
	fs.FileInfo
	// TooLarge, for an index larger than Kafka could have written beside
	// its segment's .log, says by how much and why (KindIndexTooLarge);
	// "" otherwise. Such an index is neither read nor copied: recovery
	// rebuilds it, and so does a salvage's output.
	TooLarge string
}

// ListPartition lists the partition directory dir, sorted by name, with
// symbolic links followed (vfs.ReadDirFollow): segkit reads, sizes and
// copies a linked file as the file it points to, as Kafka does. It marks
// the indexes (.index, .timeindex, .txnindex, temporary suffixes
// included) larger than Kafka could have written (TooLarge): a sparse
// 1 TiB .timeindex costs nothing on disk, and must not cost a full read
// or a dense copy.
//
// It fails with an error matching vfs.ErrNotRegular and naming the file
// when a file segkit reads — a segment's .log, index or snapshot,
// temporary suffixes included, leader-epoch-checkpoint or
// partition.metadata — is neither a regular file nor a directory: a FIFO
// (whose open blocks until a writer comes), a device, a socket, or a
// symbolic link to nothing. Verify refuses the same files. Other entries
// are listed as they are; subdirectories are left to the caller.
func ListPartition(fsys vfs.FS, dir string) ([]PartitionEntry, error) {
	infos, err := vfs.ReadDirFollow(fsys, dir)
	if err != nil {
		return nil, err
	}
	logSizes := map[string]int64{} // ".log" or ".log.swap" + base -> size
	active := int64(-1)            // base of the last .log
	for _, fi := range infos {
		base, ext, err := segment.ParseFileName(fi.Name())
		if err != nil || fi.IsDir() {
			continue
		}
		if ext == segment.LogSuffix || ext == segment.LogSuffix+segment.SwapSuffix {
			logSizes[segment.FileName(base, ext)] = fi.Size()
		}
		if ext == segment.LogSuffix {
			active = max(active, base)
		}
	}
	out := make([]PartitionEntry, 0, len(infos))
	for _, fi := range infos {
		e := PartitionEntry{FileInfo: fi}
		if fi.IsDir() || !readByInspect(fi.Name()) {
			out = append(out, e)
			continue
		}
		if err := vfs.CheckRegular(path.Join(dir, fi.Name()), fi); err != nil {
			return nil, err
		}
		if base, ext, err := segment.ParseFileName(fi.Name()); err == nil {
			kind, tmp := segment.SplitTempSuffix(ext)
			if size := indexEntrySize(kind); size > 0 {
				logName := segment.FileName(base, segment.LogSuffix)
				if tmp == segment.SwapSuffix {
					logName += segment.SwapSuffix
				}
				e.TooLarge = indexTooLarge(fi.Size(), logSizes[logName], size, base == active)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// readByInspect reports whether a partition directory's file of that name
// is one segkit (or the log engine it runs) reads.
func readByInspect(name string) bool {
	if _, _, err := segment.ParseFileName(name); err == nil {
		return true
	}
	return name == checkpoint.LeaderEpochFile || name == checkpoint.PartitionMetadataFile
}

// indexEntrySize returns the size of one entry of an index of that kind,
// or 0 if kind is not an index. A .txnindex has one entry per aborted
// transaction, not per batch, so the bound indexTooLarge derives from its
// .log is generous for it.
func indexEntrySize(kind string) int {
	switch kind {
	case segment.IndexSuffix:
		return index.EntrySize
	case segment.TimeIndexSuffix:
		return timeindex.EntrySize
	case segment.TxnIndexSuffix:
		return index.AbortedTxnSize
	}
	return 0
}
