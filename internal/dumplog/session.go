package dumplog

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/maprange"
	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/vfs"
)

// Session is one run of Kafka's DumpLogSegments over several files, in
// text: each file is dumped by its suffix (.log and .checkpoint by Log;
// .index, .timeindex and .txnindex by Index; .snapshot, a producer state
// snapshot, here), an unknown suffix is reported on Stderr, and Close
// prints on Stderr what Kafka's tool prints there after the last file: the
// index mismatches, the time index errors and the non-consecutive offsets,
// per file, in the order of Kafka's java.util.HashMap.
//
// A Session is not safe for concurrent use.
type Session struct {
	// Stdout and Stderr receive what Kafka's tool prints on its standard
	// output and standard error.
	Stdout, Stderr io.Writer
	// FS holds the files.
	FS vfs.FS
	// Log and Index are the options of the dumps (their JSON and Errors
	// fields are ignored: a Session prints text, its errors on Stderr).
	Log   Options
	Index IndexOptions
	// Cwd is the directory relative paths are resolved against in the
	// summaries, which name files by absolute path as Java's
	// File.getAbsolutePath does (without cleaning "..").  Empty means the
	// working directory.
	Cwd string

	indexMismatches, timestampMismatches, outOfOrder, notFound, nonConsecutive javaMap
}

// Dump dumps one file. It returns the number of problems found (bad
// checksums, corruption, index errors) and an error when the file could
// not be read.
func (s *Session) Dump(path string) (problems int, err error) {
	path = javaPath(path)
	name := filepath.Base(path)
	suffix := ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		suffix = name[i:]
	}
	switch suffix {
	case ".log", ".checkpoint":
		return s.dumpLog(path)
	case ".index", ".timeindex", ".txnindex":
		opt := s.Index
		opt.JSON, opt.Errors = false, s.Stderr
		res, err := Index(s.Stdout, s.FS, path, opt)
		abs := s.abs(path)
		s.indexMismatches.add(abs, res.Mismatches)
		s.timestampMismatches.add(abs, res.TimestampMismatches)
		s.outOfOrder.add(abs, res.OutOfOrder)
		s.notFound.add(abs, res.NotFound)
		return res.Errors, err
	case ".snapshot":
		fmt.Fprintf(s.Stdout, "Dumping %s\n", path)
		return s.dumpSnapshot(path)
	}
	fmt.Fprintf(s.Stdout, "Dumping %s\n", path)
	fmt.Fprintf(s.Stderr, "Ignoring unknown file %s\n", path)
	return 0, nil
}

func (s *Session) dumpLog(path string) (int, error) {
	f, err := s.FS.Open(path)
	if err != nil {
		fmt.Fprintf(s.Stdout, "Dumping %s\n", path)
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	opt := s.Log
	opt.JSON, opt.Errors = false, s.Stderr
	if opt.Map == nil {
		opt.Map = maprange.ForReader(f, st.Size())
	}
	res, err := Log(s.Stdout, f, st.Size(), path, opt)
	s.nonConsecutive.add(s.abs(path), res.NonConsecutive)
	return res.Problems, err
}

// dumpSnapshot prints a producer state snapshot as dumpProducerIdSnapshot
// does: one line per producer, with its last batch when it has one.
func (s *Session) dumpSnapshot(path string) (int, error) {
	b, err := vfs.ReadFile(s.FS, path)
	if err != nil {
		return 0, err
	}
	entries, err := producer.DecodeSnapshot(b)
	if err != nil {
		// Kafka prints the CorruptSnapshotException's message.
		msg := err.Error()
		var ce *format.CorruptionError
		if errors.As(err, &ce) && ce.Err != nil {
			msg = ce.Err.Error()
			if cause := errors.Unwrap(ce.Err); cause != nil {
				msg = strings.TrimPrefix(msg, cause.Error()+": ")
			}
		}
		fmt.Fprintln(s.Stderr, msg)
		return 1, nil
	}
	for _, e := range entries {
		txn := "OptionalLong.empty"
		if e.CurrentTxnFirstOffset >= 0 {
			txn = fmt.Sprintf("OptionalLong[%d]", e.CurrentTxnFirstOffset)
		}
		fmt.Fprintf(s.Stdout, "producerId: %d producerEpoch: %d coordinatorEpoch: %d currentTxnFirstOffset: %s lastTimestamp: %d",
			e.ProducerID, e.Epoch, e.CoordinatorEpoch, txn, e.Timestamp)
		if e.LastOffset >= 0 {
			fmt.Fprintf(s.Stdout, " firstSequence: %d lastSequence: %d lastOffset: %d offsetDelta: %d timestamp: %d",
				decrementSequence(e.LastSequence, e.OffsetDelta), e.LastSequence, e.LastOffset, e.OffsetDelta, e.Timestamp)
		}
		fmt.Fprintln(s.Stdout)
	}
	return 0, nil
}

// decrementSequence is DefaultRecordBatch.decrementSequence: sequence
// numbers wrap from MaxInt32 to 0.
func decrementSequence(seq, dec int32) int32 {
	if seq < dec {
		return int32(int64(1<<31-1) - int64(dec) + int64(seq) + 1)
	}
	return seq - dec
}

// Close prints the findings Kafka's tool prints after all files.
func (s *Session) Close() {
	w := s.Stderr
	s.indexMismatches.print(w, "Mismatches in :%s\n", "  Index offset: %d, log offset: %d\n", treeDesc)
	s.timestampMismatches.print(w, "Found timestamp mismatch in :%s\n", "  Index timestamp: %d, log timestamp: %d\n", nil)
	s.outOfOrder.print(w, "Found out of order timestamp in :%s\n", "  Index timestamp: %d, Previously indexed timestamp: %d\n", nil)
	s.notFound.print(w, "The following indexed offsets are not found in :%s\n", "Indexed offset: %d, found log offset: %d\n", nil)
	s.nonConsecutive.print(w, "Non-consecutive offsets in %s\n", "  %d is followed by %d\n", treeAsc)
}

// abs is File.getAbsolutePath.
func (s *Session) abs(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	cwd := s.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	return javaPath(cwd + "/" + path)
}

// javaPath is a path as java.io.File normalizes it: no repeated or
// trailing separators.
func javaPath(p string) string {
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}

// javaMap holds per-file findings in the order a java.util.HashMap<String,
// ...> filled by computeIfAbsent iterates them: by bucket of the key's
// String.hashCode (spread as HashMap.hash does) in a table of the capacity
// the map grew to, and within a bucket newest first (computeIfAbsent puts
// a new key at the head of its bucket's chain, and a resize keeps the
// chains' order). The table starts at 16 buckets on the first call and
// doubles at the start of a call when the map holds more than 3/4 of that.
// (Kafka's maps of a few keys never turn a bucket into a tree.)
type javaMap struct {
	keys     []string
	vals     map[string][]OffsetPair
	capacity int
}

// add appends pairs to the findings of key: one computeIfAbsent call per
// pair, as Kafka makes them.
func (m *javaMap) add(key string, pairs []OffsetPair) {
	if len(pairs) == 0 {
		return
	}
	if m.vals == nil {
		m.vals = map[string][]OffsetPair{}
	}
	_, present := m.vals[key]
	for i := range pairs {
		if m.capacity == 0 {
			m.capacity = 16
		} else if len(m.keys) > m.capacity*3/4 {
			m.capacity *= 2
		}
		if i == 0 && !present {
			m.keys = append(m.keys, key)
		}
	}
	m.vals[key] = append(m.vals[key], pairs...)
}

// order returns the keys in HashMap iteration order.
func (m *javaMap) order() []string {
	bucket := func(k string) uint32 {
		var h uint32
		for _, c := range utf16.Encode([]rune(k)) {
			h = 31*h + uint32(c)
		}
		return (h ^ h>>16) & uint32(m.capacity-1)
	}
	keys := slices.Clone(m.keys)
	slices.Reverse(keys)
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(bucket(a), bucket(b)) })
	return keys
}

// A treeOrder turns a file's findings into the order and content of the
// java.util.TreeMap Kafka keeps them in: sorted by the first number, a
// later put of the same key replacing the earlier.
type treeOrder func([]OffsetPair) []OffsetPair

func treeAsc(ps []OffsetPair) []OffsetPair {
	last := map[int64]int64{}
	for _, p := range ps {
		last[p.First] = p.Second
	}
	out := make([]OffsetPair, 0, len(last))
	for k, v := range last {
		out = append(out, OffsetPair{k, v})
	}
	slices.SortFunc(out, func(a, b OffsetPair) int { return cmp.Compare(a.First, b.First) })
	return out
}

func treeDesc(ps []OffsetPair) []OffsetPair {
	out := treeAsc(ps)
	slices.Reverse(out)
	return out
}

// print prints each file's heading and findings; tree, if not nil, orders
// them.
func (m *javaMap) print(w io.Writer, heading, line string, tree treeOrder) {
	for _, k := range m.order() {
		fmt.Fprintf(w, heading, k)
		ps := m.vals[k]
		if tree != nil {
			ps = tree(ps)
		}
		for _, p := range ps {
			fmt.Fprintf(w, line, p.First, p.Second)
		}
	}
}

// Known reports whether path has a suffix Kafka's tool dumps.
func Known(path string) bool {
	switch filepath.Ext(path) {
	case ".log", ".checkpoint", ".index", ".timeindex", ".txnindex", ".snapshot":
		return true
	}
	return false
}
