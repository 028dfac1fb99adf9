package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"sync"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/vfs"
)

const (
	// LeaderEpochFile is the name of a partition directory's leader epoch
	// checkpoint.
	//
	// This constant is part of the on-disk format and should not be changed.
	LeaderEpochFile = "leader-epoch-checkpoint"

	// LeaderEpochVersion is the version of the leader epoch checkpoint
	// format.
	LeaderEpochVersion = 0

	// UndefinedEpoch is the epoch EndOffsetFor returns when it has no
	// answer (OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH).
	UndefinedEpoch = -1
	// UndefinedEpochOffset is the offset EndOffsetFor returns when it has
	// no answer (OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH_OFFSET).
	UndefinedEpochOffset = -1
)

// EpochEntry says that leader epoch Epoch began at offset StartOffset.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// String prints the entry as Kafka's EpochEntry.toString does.
func (e EpochEntry) String() string {
	return "EpochEntry(epoch=" + strconv.FormatInt(int64(e.Epoch), 10) + ", startOffset=" + strconv.FormatInt(e.StartOffset, 10) + ")"
}

// ParseLeaderEpochs decodes a leader epoch checkpoint, lines "epoch
// startOffset", in file order. It checks the syntax only, as
// LeaderEpochCheckpointFile does; LoadLeaderEpochCache applies the
// cache's rules. See ParseText for the errors.
func ParseLeaderEpochs(b []byte) ([]EpochEntry, error) {
	return ParseText(b, LeaderEpochVersion, parseEpochLine)
}

func parseEpochLine(f []string) (EpochEntry, bool) {
	if len(f) != 2 {
		return EpochEntry{}, false
	}
	e, ok1 := parseInt32(f[0])
	o, ok2 := parseInt64(f[1])
	return EpochEntry{e, o}, ok1 && ok2
}

// AppendLeaderEpochs appends the checkpoint text of entries, exactly as
// Kafka writes it.
func AppendLeaderEpochs(dst []byte, entries []EpochEntry) []byte {
	return AppendText(dst, LeaderEpochVersion, entries, func(dst []byte, e EpochEntry) []byte {
		dst = strconv.AppendInt(dst, int64(e.Epoch), 10)
		dst = append(dst, ' ')
		return strconv.AppendInt(dst, e.StartOffset, 10)
	})
}

// WriteLeaderEpochs replaces the named file with entries, atomically and
// durably (see WriteOffsetEntries).
func WriteLeaderEpochs(fsys vfs.FS, path string, entries []EpochEntry) error {
	return vfs.WriteFileAtomic(fsys, path, AppendLeaderEpochs(nil, entries), filePerm)
}

// LeaderEpochCache maps leader epochs to the offset each began at, with
// the rules of Kafka's LeaderEpochFileCache: epochs and start offsets
// strictly increase, and assigning an entry first removes every entry it
// contradicts. Unlike Kafka's, changes are made in memory only; Flush
// writes the checkpoint.
//
// A LeaderEpochCache is safe for concurrent use.
type LeaderEpochCache struct {
	mu      sync.RWMutex
	entries []EpochEntry // ascending epoch and start offset

	flushMu sync.Mutex // serialises Flush, as CheckpointFile.write's lock
}

// NewLeaderEpochCache returns an empty cache.
func NewLeaderEpochCache() *LeaderEpochCache { return &LeaderEpochCache{} }

// LoadLeaderEpochCache reads the named leader-epoch-checkpoint and assigns
// its entries in order, as the LeaderEpochFileCache constructor does. A
// missing (or empty) file gives an empty cache and no error.
//
// Kafka fails the whole log directory on a checkpoint it cannot read. Here
// the caller decides (RELIABILITY C8: a corrupt or missing checkpoint
// means full recovery, not a refusal to start): for bad content the error
// is a *format.CorruptionError naming the file and the line, wrapping
// format.ErrInvalid, and is returned together with an empty cache, ready
// to be rebuilt from the log's batches. A negative epoch or offset, which
// Kafka's assign rejects with IllegalArgumentException, is reported the
// same way. Other errors (I/O) also come with an empty cache.
func LoadLeaderEpochCache(fsys vfs.FS, path string) (*LeaderEpochCache, error) {
	c := NewLeaderEpochCache()
	entries, offsets, err := readText(fsys, path, LeaderEpochVersion, parseEpochLine)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	for i, e := range entries {
		if _, err := c.Assign(e.Epoch, e.StartOffset); err != nil {
			return NewLeaderEpochCache(), format.Corruptf(path, offsets[i], format.ErrInvalid, "%v", err)
		}
	}
	return c, nil
}

// ErrInvalidEpochEntry is returned by Assign for a negative epoch or
// start offset.
var ErrInvalidEpochEntry = errors.New("checkpoint: invalid leader epoch entry")

// Assign records that epoch began at startOffset, as
// LeaderEpochFileCache.assign does. Nothing changes (and it returns
// false) when epoch is the latest epoch and startOffset is not below its
// start. Otherwise every entry whose epoch is ≥ epoch or whose start
// offset is ≥ startOffset is removed, the new entry is added, and it
// returns true. This means an older epoch can be assigned, truncating the
// newer ones: callers that only move forward check LatestEpoch first, as
// Kafka's append path does. A negative epoch or offset is an error
// wrapping ErrInvalidEpochEntry and changes nothing.
func (c *LeaderEpochCache) Assign(epoch int32, startOffset int64) (bool, error) {
	e := EpochEntry{epoch, startOffset}
	if epoch < 0 || startOffset < 0 {
		return false, fmt.Errorf("%w: Received invalid partition leader epoch entry %v", ErrInvalidEpochEntry, e)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.entries); n > 0 {
		last := c.entries[n-1]
		if epoch == last.Epoch && startOffset >= last.StartOffset {
			return false, nil
		}
	}
	n := len(c.entries)
	for n > 0 && (c.entries[n-1].Epoch >= epoch || c.entries[n-1].StartOffset >= startOffset) {
		n--
	}
	c.entries = append(c.entries[:n], e)
	return true, nil
}

// LatestEpoch returns the latest epoch, if any.
func (c *LeaderEpochCache) LatestEpoch() (int32, bool) {
	e, ok := c.LatestEntry()
	return e.Epoch, ok
}

// LatestEntry returns the entry of the latest epoch, if any.
func (c *LeaderEpochCache) LatestEntry() (EpochEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.entries) == 0 {
		return EpochEntry{}, false
	}
	return c.entries[len(c.entries)-1], true
}

// EarliestEntry returns the entry of the earliest epoch, if any.
func (c *LeaderEpochCache) EarliestEntry() (EpochEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.entries) == 0 {
		return EpochEntry{}, false
	}
	return c.entries[0], true
}

// Entries returns a copy of the entries, by ascending epoch.
func (c *LeaderEpochCache) Entries() []EpochEntry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.entries)
}

// Len returns the number of entries.
func (c *LeaderEpochCache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}

// EndOffsetFor answers an OffsetsForLeaderEpoch request
// (LeaderEpochFileCache.endOffsetFor): the largest epoch ≤ requested and
// the offset that epoch ends at, which is the start offset of the next
// larger epoch, or logEndOffset when requested is the latest epoch. A
// requested epoch below every known epoch gives (requested, start of the
// first epoch); UndefinedEpoch, or one above the latest, gives
// (UndefinedEpoch, UndefinedEpochOffset).
func (c *LeaderEpochCache) EndOffsetFor(requested int32, logEndOffset int64) (int32, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if requested == UndefinedEpoch {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	n := len(c.entries)
	if n > 0 && c.entries[n-1].Epoch == requested {
		return requested, logEndOffset
	}
	// higher is the first entry with a larger epoch.
	higher, _ := slices.BinarySearchFunc(c.entries, requested, func(e EpochEntry, t int32) int {
		if e.Epoch <= t {
			return -1
		}
		return 1
	})
	if higher == n {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	if higher == 0 {
		return requested, c.entries[0].StartOffset
	}
	return c.entries[higher-1].Epoch, c.entries[higher].StartOffset
}

// EpochForOffset returns the epoch offset belongs to: that of the last
// entry starting at or before it (LeaderEpochFileCache.epochForOffset).
func (c *LeaderEpochCache) EpochForOffset(offset int64) (int32, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var epoch int32
	found := false
	for _, e := range c.entries {
		if e.StartOffset == offset {
			return e.Epoch, true
		}
		if e.StartOffset > offset {
			break
		}
		epoch, found = e.Epoch, true
	}
	return epoch, found
}

// TruncateFromEnd removes the entries starting at or after endOffset
// (after a log truncation to endOffset) and returns them. A negative
// endOffset removes nothing.
func (c *LeaderEpochCache) TruncateFromEnd(endOffset int64) []EpochEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	var removed []EpochEntry
	c.entries, removed = truncateFromEnd(c.entries, endOffset)
	return removed
}

func truncateFromEnd(entries []EpochEntry, endOffset int64) (kept, removed []EpochEntry) {
	n := len(entries)
	if endOffset < 0 || n == 0 || entries[n-1].StartOffset < endOffset {
		return entries, nil
	}
	for n > 0 && entries[n-1].StartOffset >= endOffset {
		n--
	}
	return entries[:n], slices.Clone(entries[n:])
}

// TruncateFromStart removes the entries starting at or before startOffset
// (after the log start offset moved there) and returns them, keeping the
// epoch of the last one removed, moved to start at startOffset: so
// TruncateFromStart(6) keeps an entry at offset 6
// (LeaderEpochFileCache.truncateFromStart).
func (c *LeaderEpochCache) TruncateFromStart(startOffset int64) []EpochEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	var removed []EpochEntry
	c.entries, removed = truncateFromStart(c.entries, startOffset)
	return removed
}

func truncateFromStart(entries []EpochEntry, startOffset int64) (kept, removed []EpochEntry) {
	i := 0
	for i < len(entries) && entries[i].StartOffset <= startOffset {
		i++
	}
	if i == 0 {
		return entries, nil
	}
	removed = slices.Clone(entries[:i])
	first := EpochEntry{removed[i-1].Epoch, startOffset}
	kept = append([]EpochEntry{first}, entries[i:]...)
	return kept, removed
}

// EntriesInRange returns the entries for the offsets [startOffset,
// endOffset), as LeaderEpochFileCache.epochEntriesInRange does: a copy
// truncated from the start (when startOffset ≥ 0) and from the end.
func (c *LeaderEpochCache) EntriesInRange(startOffset, endOffset int64) []EpochEntry {
	entries := c.Entries()
	if startOffset >= 0 {
		entries, _ = truncateFromStart(entries, startOffset)
	}
	entries, _ = truncateFromEnd(entries, endOffset)
	return entries
}

// Clear removes every entry.
func (c *LeaderEpochCache) Clear() {
	c.mu.Lock()
	c.entries = nil
	c.mu.Unlock()
}

// Flush writes the entries to the named checkpoint file, atomically and
// durably (see WriteOffsetEntries). Concurrent Flushes are serialised, and
// each writes the entries as they are when it starts writing, so the file
// never goes back to an older state.
func (c *LeaderEpochCache) Flush(fsys vfs.FS, path string) error {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	return WriteLeaderEpochs(fsys, path, c.Entries())
}
