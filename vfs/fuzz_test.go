package vfs

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzMemCrash runs a random sequence of file and directory operations, with
// crashes, against Mem and a reference model that knows, for every name and
// file, what has been made durable. After each crash it checks the clone
// against the model (see checkCrash), then carries on from the clone.
func FuzzMemCrash(f *testing.F) {
	f.Add(fuzzProgram(fCreate, 0, fAppend, 0, 200, fSyncFile, 0, fAppend, 0, 130, fCrash, 1, 132))
	f.Fuzz(func(t *testing.T, prog []byte) {
		runFuzzProgram(t, prog)
	})
}

// The fuzz program's operations: one byte, taken modulo fNumOps, then its
// arguments, one byte each (see fuzzState.step).
const (
	fCreate   = iota // name
	fAppend          // name, length
	fWriteAt         // name, offset high, offset low, length
	fTruncate        // name, size high, size low
	fSyncFile        // name
	fSyncDir         // dir
	fRename          // name, name
	fRemove          // name
	fCrash           // seed, config
	fSyncAll         //
	fNumOps
)

var (
	fuzzNames = []string{"a", "b", "d/a", "d/c"}
	fuzzDirs  = []string{".", "d"}
)

// fuzzLen maps a byte to a write length: 0..127 as is, then up to ~12 KiB.
func fuzzLen(b byte) int {
	if b < 128 {
		return int(b)
	}
	return (int(b) - 127) * 97
}

// fuzzConfig maps a byte to a crash configuration.
func fuzzConfig(seed, b byte) CrashConfig {
	return CrashConfig{
		Seed:                uint64(seed),
		UnsyncedDataPercent: []int{0, 25, 50, 75, 100}[b%5],
		TornWrites:          b >= 128,
	}
}

func fuzzProgram(ops ...int) []byte {
	b := make([]byte, len(ops))
	for i, op := range ops {
		b[i] = byte(op)
	}
	return b
}

// mFile is the model of one file (by inode number).
type mFile struct {
	cur, syn []byte
	dirty    bool            // written or truncated since the last Sync
	anchored bool            // had a durable name, and was not removed since
	names    map[string]bool // names it has had since the last crash
}

// fuzzState is the model: current bindings, and what is durable.
type fuzzState struct {
	t     *testing.T
	m     *Mem
	files map[uint64]*mFile
	bind  map[string]uint64          // name -> inode, 0 for none
	need  map[string]map[string]bool // name -> directories still to sync before bind[name] is durable
	ever  map[string]map[uint64]bool // name -> inodes it named since the last crash
	ctr   int
	log   []string
}

func newFuzzState(t *testing.T) *fuzzState {
	s := &fuzzState{t: t, m: NewMem()}
	if err := s.m.MkdirAll("d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(s.m, "."); err != nil {
		t.Fatal(err)
	}
	s.reset()
	return s
}

// reset adopts the Mem's state as fully durable.
func (s *fuzzState) reset() {
	s.files = map[uint64]*mFile{}
	s.bind = map[string]uint64{}
	s.need = map[string]map[string]bool{}
	s.ever = map[string]map[uint64]bool{}
	for _, n := range fuzzNames {
		s.ever[n] = map[uint64]bool{}
		ino, data := s.lookup(s.m, n)
		if ino == 0 {
			continue
		}
		s.bind[n] = ino
		s.ever[n][ino] = true
		s.files[ino] = &mFile{cur: data, syn: slices.Clone(data), anchored: true, names: map[string]bool{n: true}}
	}
}

// lookup returns the inode number and content of name in m, or 0.
func (s *fuzzState) lookup(m *Mem, name string) (uint64, []byte) {
	m.mu.RLock()
	_, _, n, err := m.walk(name)
	m.mu.RUnlock()
	if err != nil || n == nil {
		return 0, nil
	}
	data, err := ReadFile(m, name)
	if err != nil {
		s.t.Fatalf("ReadFile(%s): %v", name, err)
	}
	return n.ino, data
}

func (s *fuzzState) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("%s\nops:\n  %s\nmem:\n%v", fmt.Sprintf(format, args...), strings.Join(s.log, "\n  "), s.m)
}

func (s *fuzzState) must(err error, what string) {
	s.t.Helper()
	if err != nil {
		s.fatalf("%s: %v", what, err)
	}
}

// rebind records that an operation touching dirs set name to ino.
func (s *fuzzState) rebind(name string, ino uint64, dirs ...string) {
	if old := s.bind[name]; old != 0 && old != ino {
		// Whoever held the name loses it; if it was not moved elsewhere
		// by this same operation, it is removed.
		stillNamed := false
		for n, i := range s.bind {
			if i == old && n != name {
				stillNamed = true
			}
		}
		if !stillNamed {
			s.files[old].anchored = false
		}
	}
	s.bind[name] = ino
	s.need[name] = map[string]bool{}
	for _, d := range dirs {
		s.need[name][d] = true
	}
	s.ever[name][ino] = true
	if ino != 0 {
		s.files[ino].names[name] = true
	}
}

func (s *fuzzState) syncFile(name string) {
	f, err := s.m.Open(name)
	s.must(err, "Open")
	s.must(f.Sync(), "Sync")
	s.must(f.Close(), "Close")
	mf := s.files[s.bind[name]]
	mf.syn, mf.dirty = slices.Clone(mf.cur), false
}

func (s *fuzzState) syncDir(dir string) {
	s.must(SyncDir(s.m, dir), "SyncDir")
	for _, name := range fuzzNames {
		need := s.need[name]
		if !need[dir] {
			continue
		}
		delete(need, dir)
		if len(need) == 0 && s.bind[name] != 0 {
			s.files[s.bind[name]].anchored = true
		}
	}
}

func (s *fuzzState) data(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(1 + (s.ctr*7+i)%250)
	}
	s.ctr++
	return b
}

func (s *fuzzState) step(r *fuzzReader) {
	op := int(r.next()) % fNumOps
	name := func() string { return fuzzNames[int(r.next())%len(fuzzNames)] }
	switch op {
	case fCreate:
		n := name()
		s.log = append(s.log, "create "+n)
		f, err := s.m.Create(n)
		s.must(err, "Create")
		s.must(f.Close(), "Close")
		if ino := s.bind[n]; ino != 0 {
			mf := s.files[ino]
			mf.dirty = mf.dirty || len(mf.cur) > 0
			mf.cur = nil
			return
		}
		ino, _ := s.lookup(s.m, n)
		s.files[ino] = &mFile{names: map[string]bool{}}
		s.rebind(n, ino, path.Dir(n))
	case fAppend, fWriteAt:
		n := name()
		var off int
		if op == fWriteAt {
			off = (int(r.next())<<8 | int(r.next())) % 20000
		}
		data := s.data(fuzzLen(r.next()))
		if s.bind[n] == 0 {
			return
		}
		mf := s.files[s.bind[n]]
		if op == fAppend {
			s.log = append(s.log, fmt.Sprintf("append %s %d", n, len(data)))
			f, err := s.m.OpenFile(n, os.O_WRONLY|os.O_APPEND, 0)
			s.must(err, "OpenFile")
			_, err = f.Write(data)
			s.must(err, "Write")
			s.must(f.Close(), "Close")
			off = len(mf.cur)
		} else {
			s.log = append(s.log, fmt.Sprintf("writeat %s %d %d", n, off, len(data)))
			f, err := s.m.OpenFile(n, os.O_WRONLY, 0)
			s.must(err, "OpenFile")
			_, err = f.WriteAt(data, int64(off))
			s.must(err, "WriteAt")
			s.must(f.Close(), "Close")
		}
		if len(data) == 0 {
			return // an empty write extends nothing
		}
		if end := off + len(data); end > len(mf.cur) {
			mf.cur = append(mf.cur, make([]byte, end-len(mf.cur))...)
		}
		copy(mf.cur[off:], data)
		mf.dirty = mf.dirty || len(data) > 0
	case fTruncate:
		n := name()
		size := (int(r.next())<<8 | int(r.next())) % 20000
		if s.bind[n] == 0 {
			return
		}
		s.log = append(s.log, fmt.Sprintf("truncate %s %d", n, size))
		f, err := s.m.OpenFile(n, os.O_WRONLY, 0)
		s.must(err, "OpenFile")
		s.must(f.Truncate(int64(size)), "Truncate")
		s.must(f.Close(), "Close")
		mf := s.files[s.bind[n]]
		if size < len(mf.cur) {
			mf.cur = mf.cur[:size:size]
		} else {
			mf.cur = append(mf.cur, make([]byte, size-len(mf.cur))...)
		}
		mf.dirty = true
	case fSyncFile:
		n := name()
		if s.bind[n] == 0 {
			return
		}
		s.log = append(s.log, "sync "+n)
		s.syncFile(n)
	case fSyncDir:
		d := fuzzDirs[int(r.next())%len(fuzzDirs)]
		s.log = append(s.log, "syncdir "+d)
		s.syncDir(d)
	case fRename:
		from, to := name(), name()
		s.log = append(s.log, "rename "+from+" "+to)
		err := s.m.Rename(from, to)
		if s.bind[from] == 0 {
			if !errors.Is(err, fs.ErrNotExist) {
				s.fatalf("Rename of a missing file: %v", err)
			}
			return
		}
		s.must(err, "Rename")
		if from == to {
			return
		}
		ino := s.bind[from]
		s.rebind(to, ino, path.Dir(from), path.Dir(to))
		s.rebind(from, 0, path.Dir(from), path.Dir(to))
	case fRemove:
		n := name()
		s.log = append(s.log, "remove "+n)
		err := s.m.Remove(n)
		if s.bind[n] == 0 {
			if !errors.Is(err, fs.ErrNotExist) {
				s.fatalf("Remove of a missing file: %v", err)
			}
			return
		}
		s.must(err, "Remove")
		s.rebind(n, 0, path.Dir(n))
	case fCrash:
		cfg := fuzzConfig(r.next(), r.next())
		s.log = append(s.log, fmt.Sprintf("crash %+v", cfg))
		s.crash(cfg)
	case fSyncAll:
		s.log = append(s.log, "syncall")
		for _, n := range fuzzNames {
			if s.bind[n] != 0 {
				s.syncFile(n)
			}
		}
		for _, d := range fuzzDirs {
			s.syncDir(d)
		}
	}
}

// checkCurrent checks that the Mem holds what the model says it holds now.
func (s *fuzzState) checkCurrent() {
	for _, n := range fuzzNames {
		ino, data := s.lookup(s.m, n)
		if ino != s.bind[n] {
			s.fatalf("%s is inode %d, model says %d", n, ino, s.bind[n])
		}
		if ino != 0 && !bytes.Equal(data, s.files[ino].cur) {
			s.fatalf("%s holds %d bytes, model says %d", n, len(data), len(s.files[ino].cur))
		}
	}
}

// crash takes a crash clone and checks it against the model:
//   - a name names only a file it named since the last crash;
//   - no file has two names;
//   - a name whose binding is durable (every directory its last operation
//     touched was synced since) has that binding;
//   - a file that had a durable name and was not removed since has a name;
//   - each byte of a file is its synced or its current value (or zero past
//     the synced length), and its length lies between the two lengths; a
//     file with no unsynced change is exactly its synced content;
//   - with UnsyncedDataPercent 0 every file is its synced content; with 100
//     and no torn writes, the clone is the current state.
func (s *fuzzState) crash(cfg CrashConfig) {
	c := s.m.CrashClone(cfg)
	seen := map[uint64]string{}
	for _, n := range fuzzNames {
		ino, got := s.lookup(c, n)
		if need := s.need[n]; len(need) == 0 && ino != s.bind[n] {
			s.fatalf("durable binding of %s lost: inode %d, want %d (%+v)\nclone:\n%v", n, ino, s.bind[n], cfg, c)
		}
		if cfg.UnsyncedDataPercent == 100 && !cfg.TornWrites && ino != s.bind[n] {
			s.fatalf("with everything kept, %s is inode %d, want %d\nclone:\n%v", n, ino, s.bind[n], c)
		}
		if ino == 0 {
			continue
		}
		if !s.ever[n][ino] {
			s.fatalf("%s names inode %d, which it never named (%+v)\nclone:\n%v", n, ino, cfg, c)
		}
		if other, dup := seen[ino]; dup {
			s.fatalf("inode %d under both %s and %s (%+v)\nclone:\n%v", ino, other, n, cfg, c)
		}
		seen[ino] = n
		mf := s.files[ino]
		if err := checkCrashData(got, mf.syn, mf.cur, mf.dirty); err != nil {
			s.fatalf("%s (inode %d) after crash %+v: %v", n, ino, cfg, err)
		}
		if cfg.UnsyncedDataPercent == 0 && !bytes.Equal(got, mf.syn) {
			s.fatalf("%s: with nothing unsynced kept, %d bytes, want the %d synced", n, len(got), len(mf.syn))
		}
		if cfg.UnsyncedDataPercent == 100 && !cfg.TornWrites && !bytes.Equal(got, mf.cur) {
			s.fatalf("%s: with everything kept, %d bytes, want the %d current", n, len(got), len(mf.cur))
		}
	}
	for _, ino := range slices.Sorted(maps.Keys(s.files)) {
		if mf := s.files[ino]; mf.anchored && seen[ino] == "" {
			s.fatalf("inode %d (names %v) had a durable name and was not removed, but is gone (%+v)\nclone:\n%v",
				ino, slices.Sorted(maps.Keys(mf.names)), cfg, c)
		}
	}
	s.m = c
	s.reset()
}

// checkCrashData checks a file's content after a crash against its synced
// content syn and current content cur.
func checkCrashData(got, syn, cur []byte, dirty bool) error {
	if !dirty {
		if !bytes.Equal(got, syn) {
			return fmt.Errorf("clean file changed: %d bytes, want %d", len(got), len(syn))
		}
		return nil
	}
	if lo, hi := min(len(syn), len(cur)), max(len(syn), len(cur)); len(got) < lo || len(got) > hi {
		return fmt.Errorf("length %d outside [%d, %d]", len(got), lo, hi)
	}
	for i, b := range got {
		inS, inC := i < len(syn), i < len(cur)
		switch {
		case inS && inC && b != syn[i] && b != cur[i]:
			return fmt.Errorf("byte %d = %#x, synced %#x, current %#x", i, b, syn[i], cur[i])
		case inS && !inC && b != syn[i]:
			return fmt.Errorf("byte %d = %#x past the current end, synced %#x", i, b, syn[i])
		case !inS && b != cur[i] && b != 0:
			return fmt.Errorf("byte %d = %#x past the synced end, current %#x", i, b, cur[i])
		}
	}
	return nil
}

type fuzzReader struct{ b []byte }

func (r *fuzzReader) next() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func runFuzzProgram(t *testing.T, prog []byte) {
	s := newFuzzState(t)
	r := &fuzzReader{prog}
	for steps := 0; len(r.b) > 0 && steps < 300; steps++ {
		s.step(r)
		s.checkCurrent()
	}
	// End with a crash in each extreme configuration.
	base := s.m
	for _, cfg := range []CrashConfig{{}, {UnsyncedDataPercent: 100}, {Seed: 3, UnsyncedDataPercent: 50, TornWrites: true}} {
		s.log = append(s.log, fmt.Sprintf("final crash %+v", cfg))
		s2 := *s
		s2.files = maps.Clone(s.files) // crash resets the model: keep ours
		s2.crash(cfg)
		s.m = base
	}
}

var updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/fuzz/FuzzMemCrash from fuzzSeeds")

// fuzzSeeds are the committed corpus: each a scenario worth keeping.
var fuzzSeeds = map[string][]int{
	"append_sync_crash":           {fCreate, 0, fSyncDir, 0, fAppend, 0, 200, fSyncFile, 0, fAppend, 0, 150, fCrash, 1, 1},
	"append_unsynced_torn":        {fCreate, 0, fSyncDir, 0, fSyncFile, 0, fAppend, 0, 250, fAppend, 0, 250, fCrash, 2, 130},
	"append_unsynced_keep_all":    {fCreate, 0, fSyncDir, 0, fAppend, 0, 250, fCrash, 0, 4},
	"append_unsynced_drop_all":    {fCreate, 0, fSyncDir, 0, fAppend, 0, 250, fCrash, 0, 0},
	"create_no_dirsync":           {fCreate, 1, fAppend, 1, 100, fSyncFile, 1, fCrash, 5, 0},
	"create_dirsync_only":         {fCreate, 1, fSyncDir, 0, fCrash, 5, 2},
	"subdir_create_sync_wrong":    {fCreate, 2, fAppend, 2, 90, fSyncFile, 2, fSyncDir, 0, fCrash, 6, 1},
	"subdir_create_sync_right":    {fCreate, 2, fAppend, 2, 90, fSyncFile, 2, fSyncDir, 1, fCrash, 6, 1},
	"rename_same_dir":             {fCreate, 0, fAppend, 0, 40, fSyncAll, fRename, 0, 1, fCrash, 7, 2},
	"rename_same_dir_synced":      {fCreate, 0, fAppend, 0, 40, fSyncAll, fRename, 0, 1, fSyncDir, 0, fCrash, 7, 2},
	"rename_cross_dir_dst_synced": {fCreate, 0, fAppend, 0, 40, fSyncAll, fRename, 0, 3, fSyncDir, 1, fCrash, 8, 2},
	"rename_cross_dir_src_synced": {fCreate, 0, fAppend, 0, 40, fSyncAll, fRename, 0, 3, fSyncDir, 0, fCrash, 8, 2},
	"rename_cross_dir_both":       {fCreate, 0, fAppend, 0, 40, fSyncAll, fRename, 0, 3, fSyncDir, 0, fSyncDir, 1, fCrash, 8, 2},
	"rename_over_existing":        {fCreate, 0, fAppend, 0, 10, fCreate, 1, fAppend, 1, 20, fSyncAll, fRename, 0, 1, fCrash, 9, 2},
	"rename_chain":                {fCreate, 0, fSyncAll, fRename, 0, 1, fRename, 1, 2, fRename, 2, 3, fCrash, 10, 2},
	"rename_chain_reuse_name":     {fCreate, 0, fSyncAll, fRename, 0, 1, fCreate, 0, fRename, 1, 2, fCrash, 11, 3},
	"rename_swap_via_third":       {fCreate, 0, fCreate, 1, fSyncAll, fRename, 0, 2, fRename, 1, 0, fRename, 2, 1, fCrash, 12, 2},
	"rename_back_and_forth":       {fCreate, 0, fSyncAll, fRename, 0, 3, fSyncDir, 1, fRename, 3, 0, fSyncDir, 0, fCrash, 13, 3},
	"remove_unsynced":             {fCreate, 0, fAppend, 0, 30, fSyncAll, fRemove, 0, fCrash, 14, 0},
	"remove_synced":               {fCreate, 0, fAppend, 0, 30, fSyncAll, fRemove, 0, fSyncDir, 0, fCrash, 14, 4},
	"remove_recreate":             {fCreate, 0, fAppend, 0, 30, fSyncAll, fRemove, 0, fCreate, 0, fAppend, 0, 5, fCrash, 15, 2},
	"overwrite_synced_torn":       {fCreate, 0, fAppend, 0, 255, fSyncAll, fWriteAt, 0, 4, 0, 200, fCrash, 16, 132},
	"overwrite_many_spans":        {fCreate, 0, fAppend, 0, 255, fSyncAll, fWriteAt, 0, 1, 0, 50, fWriteAt, 0, 8, 0, 50, fWriteAt, 0, 1, 40, 100, fCrash, 17, 131},
	"writeat_past_end_hole":       {fCreate, 0, fSyncAll, fWriteAt, 0, 60, 0, 20, fCrash, 18, 132},
	"truncate_shrink_unsynced":    {fCreate, 0, fAppend, 0, 250, fSyncAll, fTruncate, 0, 0, 100, fCrash, 19, 2},
	"truncate_shrink_regrow":      {fCreate, 0, fAppend, 0, 250, fSyncAll, fTruncate, 0, 0, 100, fTruncate, 0, 40, 0, fWriteAt, 0, 20, 0, 9, fCrash, 20, 131},
	"truncate_then_sync":          {fCreate, 0, fAppend, 0, 250, fSyncAll, fTruncate, 0, 0, 7, fSyncFile, 0, fCrash, 21, 2},
	"create_truncates_synced":     {fCreate, 0, fAppend, 0, 120, fSyncAll, fCreate, 0, fAppend, 0, 3, fCrash, 22, 133},
	"double_crash":                {fCreate, 0, fAppend, 0, 200, fSyncAll, fAppend, 0, 200, fCrash, 23, 132, fAppend, 0, 100, fCrash, 24, 130},
	"checkpoint_protocol":         {fCreate, 1, fAppend, 1, 12, fSyncAll, fCreate, 0, fAppend, 0, 12, fSyncFile, 0, fRename, 0, 1, fSyncDir, 0, fCrash, 25, 2},
	"checkpoint_protocol_nosync":  {fCreate, 1, fAppend, 1, 12, fSyncAll, fCreate, 0, fAppend, 0, 12, fRename, 0, 1, fSyncDir, 0, fCrash, 25, 2},
	"segment_roll":                {fCreate, 0, fAppend, 0, 255, fSyncAll, fCreate, 2, fAppend, 2, 200, fSyncFile, 2, fSyncDir, 1, fCreate, 3, fAppend, 3, 30, fCrash, 26, 132},
	"retention_rename_remove":     {fCreate, 2, fCreate, 3, fSyncAll, fRename, 2, 0, fSyncDir, 1, fRemove, 0, fCrash, 27, 2},
	"many_ops_no_sync":            {fCreate, 0, fCreate, 1, fCreate, 2, fCreate, 3, fRename, 0, 1, fRemove, 2, fRename, 3, 2, fAppend, 2, 90, fCrash, 28, 1},
	"sync_all_then_everything":    {fCreate, 0, fAppend, 0, 200, fCreate, 2, fAppend, 2, 200, fSyncAll, fRename, 0, 3, fWriteAt, 3, 0, 0, 255, fTruncate, 2, 0, 1, fCrash, 29, 134},
	"large_blocks_torn":           {fCreate, 0, fSyncAll, fAppend, 0, 255, fAppend, 0, 255, fAppend, 0, 255, fAppend, 0, 255, fCrash, 30, 131},
}

// TestUpdateFuzzSeeds writes the seed corpus when run with -update-seeds.
func TestUpdateFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzMemCrash")
	if !*updateSeeds {
		for name, prog := range fuzzSeeds {
			want := "go test fuzz v1\n[]byte(" + strconv.Quote(string(fuzzProgram(prog...))) + ")\n"
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || string(got) != want {
				t.Errorf("seed %s is missing or stale: run go test -run TestUpdateFuzzSeeds -update-seeds", name)
			}
		}
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, prog := range fuzzSeeds {
		data := "go test fuzz v1\n[]byte(" + strconv.Quote(string(fuzzProgram(prog...))) + ")\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
