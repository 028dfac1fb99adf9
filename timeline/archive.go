package timeline

import (
	"slices"
)

// maybeArchive moves the oldest completed instants of the active
// timeline into archive files once it holds more than ArchiveAfter,
// leaving ArchiveAfter/2, and never past the earliest pending instant:
// the archived timeline is always a prefix of the timeline, so its files
// cover disjoint, increasing ranges. Then it merges archive files.
func (t *Timeline) maybeArchive() error {
	if t.opt.ArchiveAfter < 0 || len(t.done) <= t.opt.ArchiveAfter {
		return nil
	}
	var limit InstantTime // the earliest pending instant, if any
	for tm := range t.pending {
		if limit.IsZero() || tm.Compare(limit) < 0 {
			limit = tm
		}
	}
	n := 0
	for n < len(t.done)-t.opt.ArchiveAfter/2 && (limit.IsZero() || t.done[n].time.Compare(limit) < 0) {
		n++
	}
	for n > 0 {
		// As many as fit in one archive file.
		size, k := int64(maxHeaderLine), 0
		for k < n && (k == 0 || size+int64(len(t.done[k].line)) <= maxArchiveFile) {
			size += int64(len(t.done[k].line))
			k++
		}
		batch := t.done[:k]
		lines := make([][]byte, k)
		names := make([]string, k)
		h := archiveHeader{Count: k, Min: batch[0].time, Max: batch[k-1].time}
		for i, a := range batch {
			lines[i], names[i] = a.line, a.name
			h.MaxTime = maxTime(h.MaxTime, a.completed)
		}
		a, err := t.writeArchive(h, lines)
		if err != nil {
			return err
		}
		t.archives = append(t.archives, a) // the newest
		t.done = slices.Delete(t.done, 0, k)
		t.unsynced = slices.DeleteFunc(t.unsynced, func(n string) bool { return slices.Contains(names, n) })
		if err := t.remove(t.tdir, names); err != nil {
			return err
		}
		n -= k
	}
	return t.maybeMerge()
}

// writeArchive writes the archive file of header h and record lines
// lines, durably.
func (t *Timeline) writeArchive(h archiveHeader, lines [][]byte) (archiveFile, error) {
	data, err := encodeArchive(h, lines)
	if err != nil {
		return archiveFile{}, t.fail(err)
	}
	an := archiveName{min: h.Min, max: h.Max, layer: h.Layer}
	if err := t.writeFile(t.hdir, an.String(), data); err != nil {
		return archiveFile{}, err
	}
	return archiveFile{name: an, file: an.String(), size: int64(len(data)), count: h.Count, maxTime: h.MaxTime}, nil
}

// maybeMerge merges, layer by layer from 0, the oldest MergeAfter files
// of a layer into one file of the next layer, while a layer has that
// many and the merged file stays within MergeLimitBytes. Every file of a
// layer is older than every file of the layers below it, so the files
// merged are neighbours and the ranges stay disjoint. The merged file is
// written before the files it replaces are removed; Open removes those
// a crash left.
func (t *Timeline) maybeMerge() error {
	for layer := 0; layer < maxLayer; layer++ {
		for {
			var idx []int
			for i, a := range t.archives {
				if a.name.layer == layer {
					idx = append(idx, i)
				}
			}
			if len(idx) < t.opt.MergeAfter {
				break
			}
			idx = idx[:t.opt.MergeAfter]
			first, last := idx[0], idx[len(idx)-1]
			if last-first+1 != len(idx) {
				return nil // not neighbours: a layout this package does not write
			}
			var size int64 = int64(maxHeaderLine)
			for _, i := range idx {
				size += t.archives[i].size
			}
			if size > t.opt.MergeLimitBytes {
				break
			}
			old := slices.Clone(t.archives[first : last+1])
			h := archiveHeader{Min: old[0].name.min, Max: old[len(old)-1].name.max, Layer: layer + 1}
			var lines [][]byte
			for _, a := range old {
				_, ls, err := t.readArchive(a)
				if err != nil {
					return t.fail(err)
				}
				lines = append(lines, ls...)
				h.Count += a.count
				h.MaxTime = maxTime(h.MaxTime, a.maxTime)
			}
			a, err := t.writeArchive(h, lines)
			if err != nil {
				return err
			}
			t.archives = slices.Replace(t.archives, first, last+1, a)
			names := make([]string, len(old))
			for i, a := range old {
				names[i] = a.file
			}
			if err := t.remove(t.hdir, names); err != nil {
				return err
			}
		}
	}
	return nil
}
