package tier

// RemoteLog is a partition's remote log metadata, every segment's latest
// state, oldest first (as MetadataManager.ListSegmentMetadata returns it).
// Its methods derive from the metadata alone what Tier derives, so that a
// read-only tool (segviz tier status, a forecast) needs no writable Tier
// and cannot disagree with one.
type RemoteLog []SegmentMetadata

// copied reports whether m reached COPY_SEGMENT_FINISHED.
func copied(m SegmentMetadata) bool { return !m.Abandoned && m.State != CopySegmentStarted }

// HighestCopiedOffset is the highest offset in remote storage: the largest
// end offset of a segment whose copy finished (-1: none), as
// UnifiedLog.highestOffsetInRemoteStorage, which remote deletions do not
// lower.
func (r RemoteLog) HighestCopiedOffset() int64 {
	h := int64(-1)
	for _, m := range r {
		if copied(m) {
			h = max(h, m.EndOffset)
		}
	}
	return h
}

// Floor is end+1 of the newest segment remote retention has begun to
// delete: no offset below it is served.
func (r RemoteLog) Floor() int64 {
	f := int64(0)
	for _, m := range r {
		if copied(m) && m.State >= DeleteSegmentStarted {
			f = max(f, m.EndOffset+1)
		}
	}
	return f
}

// LogStartOffset is the partition's log start offset (ListOffsets
// "earliest") given its local log start offset: the first served remote
// segment's start, or the local start when no remote segment is served
// below it, never below the floor.
func (r RemoteLog) LogStartOffset(localLogStart int64) int64 {
	floor := r.Floor()
	lowest := localLogStart
	for _, m := range r {
		if m.State == CopySegmentFinished && m.StartOffset >= floor {
			lowest = min(lowest, m.StartOffset)
			break
		}
	}
	return max(lowest, floor)
}

// Served returns the segments reads are served from, oldest first: the
// finished copies not being deleted.
func (r RemoteLog) Served() []SegmentMetadata {
	var out []SegmentMetadata
	for _, m := range r {
		if m.State == CopySegmentFinished {
			out = append(out, m)
		}
	}
	return out
}

// Holding returns the served segment holding offset.
func (r RemoteLog) Holding(offset int64) (SegmentMetadata, bool) {
	var m SegmentMetadata
	found := false
	for _, s := range r {
		if s.State == CopySegmentFinished && s.StartOffset <= offset && offset <= s.EndOffset {
			m, found = s, true
		}
	}
	return m, found
}

// ServedFrom returns the segments reads are served from, oldest first,
// that lie at or above the floor: what Tier.Read and a read-only reader
// of the remote serve.
func (r RemoteLog) ServedFrom() []SegmentMetadata {
	floor := r.Floor()
	var out []SegmentMetadata
	for _, m := range r.Served() {
		if m.StartOffset >= floor {
			out = append(out, m)
		}
	}
	return out
}
