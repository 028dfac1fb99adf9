package timeline

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/vfs"
)

// The timeline's place in a partition directory. These names are part of
// the on-disk format and should not be changed.
const (
	// DirName is the active timeline's directory, relative to the
	// partition directory: a subdirectory, which Kafka's LogLoader never
	// looks into (it lists the partition directory and skips everything
	// that is not a regular file).
	DirName = ".segkit/timeline"
	// HistoryDirName is the archived timeline's directory, inside DirName.
	HistoryDirName = "history"
)

// Dir returns the active timeline's directory of a partition directory.
func Dir(partitionDir string) string { return path.Join(partitionDir, DirName) }

// The defaults of Options.
const (
	DefaultArchiveAfter    = 100
	DefaultMergeAfter      = 10
	DefaultMergeLimitBytes = 16 << 20
)

// Options configure Open. The zero value opens for writing with the
// defaults.
type Options struct {
	// ReadOnly opens the timeline for reading only: Open neither creates
	// nor removes anything, and the mutating methods return ErrReadOnly.
	// Another process may write the timeline meanwhile (see the package
	// doc).
	ReadOnly bool

	// ArchiveAfter is how many completed instants the active timeline
	// holds at most: when a completion makes more, the oldest are moved
	// into an archive file, down to ArchiveAfter/2. Zero means
	// DefaultArchiveAfter (100); a negative value never archives.
	ArchiveAfter int

	// MergeAfter is how many archive files of one layer are merged into
	// one file of the next layer (Hudi's LSM timeline compaction). Zero
	// means DefaultMergeAfter (10); values below 2 mean 2.
	MergeAfter int

	// MergeLimitBytes bounds the archive files merges write: files whose
	// merge would be larger stay as they are. Zero means
	// DefaultMergeLimitBytes (16 MiB); it is at most 64 MiB, the size
	// over which an archive file is not read.
	MergeLimitBytes int64

	// Clock stamps instant times; nil means the system clock.
	Clock Clock
}

func (o Options) withDefaults() Options {
	if o.ArchiveAfter == 0 {
		o.ArchiveAfter = DefaultArchiveAfter
	}
	switch {
	case o.MergeAfter == 0:
		o.MergeAfter = DefaultMergeAfter
	case o.MergeAfter < 2:
		o.MergeAfter = 2
	}
	if o.MergeLimitBytes <= 0 {
		o.MergeLimitBytes = DefaultMergeLimitBytes
	}
	o.MergeLimitBytes = min(o.MergeLimitBytes, maxArchiveFile)
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	return o
}

// Instant is one entry of the timeline: an action, at an instant time,
// in a state.
type Instant struct {
	// Time is the instant's requested time: when Begin wrote it. It
	// identifies the instant.
	Time InstantTime
	// Action is what the instant does.
	Action Action
	// State is how far it has come.
	State State
	// Completed is when it completed (State Completed only; zero
	// otherwise). It is after Time, and unique too.
	Completed InstantTime
	// Plan is what Begin was given, Result what Complete was given (nil
	// if none), each of the action's payload type, as a pointer (*Roll
	// for ActionRoll, ...). A rollback's Plan is a *Rollback. Each call
	// that returns an Instant returns payloads of its own.
	Plan, Result Payload
	// Imported says the instant was rebuilt from another record of the
	// change (a broker's log, by Import), not written as the change was
	// made: its times are those the record gives.
	Imported bool
}

// String describes the instant in one line: "<time> <action> <state>",
// and " at <completed>" once completed.
func (i Instant) String() string {
	s := i.Time.String() + " " + string(i.Action) + " " + i.State.String()
	if i.State == Completed {
		s += " at " + i.Completed.String()
	}
	return s
}

// Filter chooses instants. The zero Filter chooses every one.
type Filter struct {
	// Actions chooses instants of these actions; empty means all.
	Actions []Action
	// Since and Until choose instants whose Time t is Since <= t < Until;
	// a zero Until means no upper bound.
	Since, Until InstantTime
}

func (f Filter) matchTime(t InstantTime) bool {
	return t.Compare(f.Since) >= 0 && (f.Until.IsZero() || t.Compare(f.Until) < 0)
}

func (f Filter) match(i *Instant) bool {
	return f.matchTime(i.Time) && (len(f.Actions) == 0 || slices.Contains(f.Actions, i.Action))
}

// overlaps reports whether [lo, hi] holds a time f may choose.
func (f Filter) overlaps(lo, hi InstantTime) bool {
	return hi.Compare(f.Since) >= 0 && (f.Until.IsZero() || lo.Compare(f.Until) < 0)
}

// Timeline is the timeline of one partition directory. It is safe for
// concurrent use: mutations are serialised, and Instants and Pending run
// in parallel with each other.
type Timeline struct {
	fsys             vfs.FS
	pdir, tdir, hdir string
	opt              Options

	mu        sync.RWMutex
	err       error // sticky: the first failed write
	dirsReady bool
	dirsMade  bool                 // the directories exist, maybe not durably
	unsynced  []string             // noted instants' files not yet synced
	noteq     []queuedNote         // noted instants' files not yet written
	writing   bool                 // writeNotes runs
	idle      *sync.Cond           // broadcast when writeNotes stops
	dropped   []string             // torn noted files Open removed
	last      InstantTime          // the greatest time seen or issued
	done      []activeInstant      // the active completed instants, by Time
	pending   map[InstantTime]*Txn // requested and inflight instants
	archives  []archiveFile        // by min: disjoint, increasing
}

// activeInstant is a completed instant of the active timeline.
type activeInstant struct {
	time, completed InstantTime
	name            string // its file name
	line            []byte // its record line, the file's content
}

// archiveFile is one file of the archived timeline.
type archiveFile struct {
	name    archiveName
	file    string // its file name
	size    int64
	count   int
	maxTime InstantTime
}

// errVanished marks a listed file that was gone when read: another
// process moved it (archival, a merge). Open and Instants of a read-only
// timeline load again.
var errVanished = errors.New("timeline: a file vanished while it was read")

// maxLoadAttempts bounds the loads Open and Instants retry when files
// vanish under them.
const maxLoadAttempts = 100

// Open opens the timeline of the partition directory partitionDir, which
// must exist. A partition without a timeline has an empty one; its
// directories are created by the first Begin.
//
// Open reads the active timeline whole and the header of every archive
// file; archived instants are read when Instants asks for them. Unless
// ReadOnly, it removes what interrupted writes left (temporary files, the
// requested and inflight files of completed or rolled-back instants,
// active files of instants already archived, archive files already
// merged). It returns a *format.CorruptionError for a file it cannot
// decode or that contradicts another. Pending returns the instants that
// were requested or inflight: the caller finishes or rolls them back.
func Open(fsys vfs.FS, partitionDir string, opt Options) (*Timeline, error) {
	st, err := fsys.Stat(partitionDir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: partitionDir, Err: errors.New("timeline: not a partition directory")}
	}
	tdir := Dir(partitionDir)
	t := &Timeline{fsys: fsys, pdir: partitionDir, tdir: tdir, hdir: path.Join(tdir, HistoryDirName), opt: opt.withDefaults()}
	t.idle = sync.NewCond(&t.mu)
	for attempt := 1; ; attempt++ {
		err := t.load()
		if err == nil {
			return t, nil
		}
		if !errors.Is(err, errVanished) || attempt == maxLoadAttempts {
			return nil, err
		}
	}
}

// listDir lists dir; a missing dir is empty.
func (t *Timeline) listDir(dir string) ([]fs.FileInfo, error) {
	infos, err := vfs.ReadDir(t.fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return infos, err
}

// readFile reads a timeline file of at most limit bytes.
func (t *Timeline) readFile(p string, limit int64) ([]byte, error) {
	b, err := vfs.ReadFileLimit(t.fsys, p, limit)
	switch {
	case errors.Is(err, vfs.ErrTooLarge):
		return nil, &format.CorruptionError{Path: p, Offset: limit, Err: fmt.Errorf("%w: %w", format.ErrTooLarge, err)}
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %w", errVanished, err)
	}
	return b, err
}

// group gathers the files of one instant time in the active timeline.
type group struct {
	time             InstantTime
	action           Action
	req, infl        *Instant
	reqName, infName string
	done             *activeInstant
	doneInst         *Instant
}

func (g *group) files() []string {
	var out []string
	for _, n := range []string{g.reqName, g.infName} {
		if n != "" {
			out = append(out, n)
		}
	}
	if g.done != nil {
		out = append(out, g.done.name)
	}
	return out
}

// load reads the timeline from disk into t, replacing what t held; if
// it fails, t is as it was.
func (t *Timeline) load() error {
	s := &Timeline{fsys: t.fsys, pdir: t.pdir, tdir: t.tdir, hdir: t.hdir, opt: t.opt, pending: map[InstantTime]*Txn{}}
	if err := s.read(t); err != nil {
		return err
	}
	t.err, t.dirsReady, t.dirsMade, t.unsynced = nil, false, false, nil
	t.last, t.done, t.pending, t.archives = s.last, s.done, s.pending, s.archives
	t.dropped = append(t.dropped, s.dropped...)
	return nil
}

// read reads the timeline from disk into the empty timeline t; the Txns
// of its pending instants belong to owner.
func (t *Timeline) read(owner *Timeline) error {
	var leftovers []string   // paths to remove
	var tornFiles []fileName // noted instants' files a crash tore

	// The active timeline first, then the history: archival writes the
	// archive file before it removes the active ones, so a concurrent
	// archival cannot hide an instant from this order.
	infos, err := t.listDir(t.tdir)
	if err != nil {
		return err
	}
	groups := map[InstantTime]*group{}
	for _, fi := range infos {
		name := fi.Name()
		switch {
		case fi.IsDir():
			continue
		case strings.HasSuffix(name, tmpSuffix):
			leftovers = append(leftovers, path.Join(t.tdir, name))
			continue
		case name == "" || name[0] < '0' || name[0] > '9':
			continue // not ours
		}
		p := path.Join(t.tdir, name)
		fn, err := parseFileName(name)
		if err != nil {
			return &format.CorruptionError{Path: p, Offset: 0, Err: fmt.Errorf("%w: %w", format.ErrInvalid, err)}
		}
		b, err := t.readFile(p, maxInstantFile)
		if err != nil {
			return err
		}
		inst, err := decodeInstantFile(p, b)
		if err != nil {
			if fn.state == Completed && notable(fn.action) && torn(b, err) {
				// A noted instant a crash tore before it was synced
				// (Dropped, unless archived: see below).
				tornFiles = append(tornFiles, fn)
				leftovers = append(leftovers, p)
				continue
			}
			return err
		}
		if inst.Time != fn.time || inst.Action != fn.action || inst.State != fn.state || inst.Completed != fn.completed {
			return format.Corruptf(p, jsonStart, format.ErrInvalid, "the record is %s, the file name says %s", inst, fn)
		}
		g := groups[fn.time]
		if g == nil {
			g = &group{time: fn.time, action: fn.action}
			groups[fn.time] = g
		}
		if g.action != fn.action {
			return format.Corruptf(p, 0, format.ErrInvalid, "instant %s is a %s and a %s", fn.time, g.action, fn.action)
		}
		switch fn.state {
		case Requested:
			g.req, g.reqName = &inst, name
		case Inflight:
			g.infl, g.infName = &inst, name
		case Completed:
			if g.done != nil {
				return format.Corruptf(p, 0, format.ErrInvalid, "instant %s completed twice: %s and %s", fn.time, g.done.name, name)
			}
			g.done = &activeInstant{time: fn.time, completed: fn.completed, name: name, line: b}
			g.doneInst = &inst
		}
	}

	hinfos, err := t.listDir(t.hdir)
	if err != nil {
		return err
	}
	var files []archiveFile
	for _, fi := range hinfos {
		name := fi.Name()
		switch {
		case fi.IsDir():
			continue
		case strings.HasSuffix(name, tmpSuffix):
			leftovers = append(leftovers, path.Join(t.hdir, name))
			continue
		case name == "" || name[0] < '0' || name[0] > '9':
			continue
		}
		a, err := t.readArchiveHeader(name)
		if err != nil {
			return err
		}
		files = append(files, a)
	}
	// By min, and the higher layer first among equal mins: a merge's
	// output comes before the files it merged.
	slices.SortFunc(files, func(a, b archiveFile) int {
		if c := a.name.min.Compare(b.name.min); c != 0 {
			return c
		}
		return cmp.Compare(b.name.layer, a.name.layer)
	})
	for _, a := range files {
		if n := len(t.archives); n > 0 && a.name.min.Compare(t.archives[n-1].name.max) <= 0 {
			k := t.archives[n-1]
			if k.name.layer > a.name.layer && a.name.max.Compare(k.name.max) <= 0 {
				// A file a merge into k has not removed yet.
				if err := t.checkMerged(a, k); err != nil {
					return err
				}
				leftovers = append(leftovers, path.Join(t.hdir, a.file))
				continue
			}
			return format.Corruptf(path.Join(t.hdir, a.file), 0, format.ErrInvalid, "archive %s overlaps %s", a.file, k.file)
		}
		t.archives = append(t.archives, a)
		t.last = maxTime(t.last, a.maxTime)
	}
	if t.opt.ReadOnly {
		// A directory listing is not atomic on every filesystem: one
		// that ran across a merge can miss both its output (created
		// behind it) and its inputs (removed ahead of it). A second
		// listing that agrees rules that out.
		again, err := t.listDir(t.hdir)
		if err != nil {
			return err
		}
		if !sameNames(hinfos, again) {
			return errVanished
		}
	}
	var maxArchived InstantTime
	if n := len(t.archives); n > 0 {
		maxArchived = t.archives[n-1].name.max
	}
	for _, fn := range tornFiles {
		if len(t.archives) == 0 || fn.time.Compare(maxArchived) > 0 {
			t.dropped = append(t.dropped, fn.String())
		} // else archived whole before its active file was removed
	}

	// Rolled-back instants whose files a crash left behind.
	rolledBack := map[InstantTime]bool{}
	for _, g := range groups {
		if g.doneInst != nil && g.action == ActionRollback {
			rolledBack[g.doneInst.Plan.(*Rollback).Instant] = true
		}
	}
	times := make([]InstantTime, 0, len(groups))
	for tm := range groups {
		times = append(times, tm)
	}
	slices.SortFunc(times, InstantTime.Compare)
	for _, tm := range times {
		g := groups[tm]
		t.last = maxTime(t.last, tm)
		if g.done != nil {
			t.last = maxTime(t.last, g.done.completed)
		}
		p := path.Join(t.tdir, g.files()[0])
		switch {
		case g.done != nil && rolledBack[tm]:
			return format.Corruptf(p, 0, format.ErrInvalid, "instant %s is completed, and a rollback names it", tm)
		case len(t.archives) > 0 && tm.Compare(maxArchived) <= 0:
			// Archived: the active files are what archival or its
			// instant's completion did not remove yet.
			if !rolledBack[tm] {
				if err := t.checkArchived(p, g); err != nil {
					return err
				}
			}
			leftovers = append(leftovers, t.paths(g.files())...)
		case g.done != nil:
			t.done = append(t.done, *g.done)
			leftovers = append(leftovers, t.paths(g.files()[:len(g.files())-1])...)
		case rolledBack[tm]:
			leftovers = append(leftovers, t.paths(g.files())...)
		default:
			x := &Txn{t: owner, files: g.files()}
			if g.req != nil {
				x.inst = *g.req // the plan as Begin wrote it
			} else {
				x.inst = *g.infl
			}
			if g.infl != nil {
				x.inst.State = Inflight
			}
			t.pending[tm] = x
		}
	}
	if t.opt.ReadOnly || len(leftovers) == 0 {
		return nil
	}
	dirs := map[string]bool{}
	for _, p := range leftovers {
		if err := t.fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		dirs[path.Dir(p)] = true
	}
	for d := range dirs {
		if err := vfs.SyncDir(t.fsys, d); err != nil {
			return err
		}
	}
	return nil
}

func sameNames(a, b []fs.FileInfo) bool {
	return slices.EqualFunc(a, b, func(x, y fs.FileInfo) bool { return x.Name() == y.Name() })
}

func (t *Timeline) paths(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = path.Join(t.tdir, n)
	}
	return out
}

func maxTime(a, b InstantTime) InstantTime {
	if a.Compare(b) >= 0 {
		return a
	}
	return b
}

// readArchiveHeader reads the header line of the archive file name.
func (t *Timeline) readArchiveHeader(name string) (archiveFile, error) {
	p := path.Join(t.hdir, name)
	an, err := parseArchiveName(name)
	if err != nil {
		return archiveFile{}, &format.CorruptionError{Path: p, Offset: 0, Err: fmt.Errorf("%w: %w", format.ErrInvalid, err)}
	}
	f, err := t.fsys.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return archiveFile{}, fmt.Errorf("%w: %w", errVanished, err)
	}
	if err != nil {
		return archiveFile{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return archiveFile{}, err
	}
	if err := vfs.CheckRegular(p, st); err != nil {
		return archiveFile{}, err
	}
	if st.Size() > maxArchiveFile {
		return archiveFile{}, format.Corruptf(p, maxArchiveFile, format.ErrTooLarge, "archive file of %d bytes, over the limit of %d", st.Size(), maxArchiveFile)
	}
	buf := make([]byte, min(int64(maxHeaderLine), st.Size()))
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return archiveFile{}, err
	}
	buf = buf[:n]
	if bytes.IndexByte(buf, '\n') < 0 && n == maxHeaderLine {
		return archiveFile{}, format.Corruptf(p, int64(n), format.ErrTooLarge, "archive header line longer than %d bytes", maxHeaderLine)
	}
	h, _, err := decodeArchiveHeader(p, buf, an)
	if err != nil {
		return archiveFile{}, err
	}
	return archiveFile{name: an, file: name, size: st.Size(), count: h.Count, maxTime: h.MaxTime}, nil
}

// readArchive reads and decodes a whole archive file.
func (t *Timeline) readArchive(a archiveFile) ([]Instant, [][]byte, error) {
	p := path.Join(t.hdir, a.file)
	b, err := t.readFile(p, maxArchiveFile)
	if err != nil {
		return nil, nil, err
	}
	insts, lines, err := decodeArchive(p, b, a.name)
	if err == nil && len(insts) != a.count {
		err = format.Corruptf(p, 0, format.ErrInvalid, "%d instants, %d when the timeline was opened", len(insts), a.count)
	}
	return insts, lines, err
}

// checkMerged checks that every record of archive a is in archive k, a
// merge of a with others.
func (t *Timeline) checkMerged(a, k archiveFile) error {
	_, al, err := t.readArchive(a)
	if err != nil {
		return err
	}
	_, kl, err := t.readArchive(k)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, l := range kl {
		have[string(l)] = true
	}
	for _, l := range al {
		if !have[string(l)] {
			return format.Corruptf(path.Join(t.hdir, a.file), 0, format.ErrInvalid, "archive %s lies inside %s, a later layer, but holds instants it does not", a.file, k.file)
		}
	}
	return nil
}

// checkArchived checks that the instant of g, at or below the archived
// timeline's max, is archived: completed, as its active file says if it
// is completed there, or rolled back by an archived rollback if it is
// pending there (a reader can list its requested file, and then the
// history after the writer rolled it back and archived the rollback).
func (t *Timeline) checkArchived(p string, g *group) error {
	for _, a := range t.archives {
		if a.name.max.Compare(g.time) < 0 {
			continue
		}
		if g.done != nil && a.name.min.Compare(g.time) > 0 {
			break
		}
		insts, lines, err := t.readArchive(a)
		if err != nil {
			return err
		}
		for i, inst := range insts {
			if inst.Time == g.time && (g.done == nil || bytes.Equal(lines[i], g.done.line)) {
				return nil
			}
			if g.done == nil && inst.Action == ActionRollback && inst.Plan.(*Rollback).Instant == g.time {
				return nil
			}
		}
	}
	return format.Corruptf(p, 0, format.ErrInvalid, "instant %s is at or below the archived timeline's max %s but not archived as it is here", g.time, t.archives[len(t.archives)-1].name.max)
}

// writable returns why t cannot be written, if it cannot.
func (t *Timeline) writable() error {
	if t.opt.ReadOnly {
		return ErrReadOnly
	}
	if t.err != nil {
		return fmt.Errorf("%w: %w", ErrFailed, t.err)
	}
	return nil
}

// fail records the first failed write and returns err.
func (t *Timeline) fail(err error) error {
	if t.err == nil {
		t.err = err
	}
	return err
}

// Err returns the error of the first write that failed, which every
// later mutation reports (matching ErrFailed), or nil.
func (t *Timeline) Err() error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.err
}

// ensureDirs creates the timeline's directories and makes them durable,
// once per Timeline: a file's name is only durable once the names of the
// directories above it are.
func (t *Timeline) ensureDirs() error {
	if t.dirsReady {
		return nil
	}
	if err := t.fsys.MkdirAll(t.hdir, 0o755); err != nil {
		return err
	}
	t.dirsMade = true
	for _, d := range []string{t.pdir, path.Dir(t.tdir), t.tdir} {
		if err := vfs.SyncDir(t.fsys, d); err != nil {
			return err
		}
	}
	t.dirsReady = true
	return nil
}

// encode returns the record line of inst and inst with its payloads
// replaced by their decoded copies, checking the line's size.
func encode(inst Instant) (Instant, []byte, error) {
	line, err := encodeInstant(&inst)
	if err != nil {
		return Instant{}, nil, err
	}
	if int64(len(line)) > maxInstantFile {
		return Instant{}, nil, fmt.Errorf("%w: a %s record of %d bytes, over the limit of %d", ErrPayload, inst.Action, len(line), maxInstantFile)
	}
	back, err := decodeInstantFile("", line)
	if err != nil {
		return Instant{}, nil, fmt.Errorf("%w: it does not decode back: %w", ErrPayload, err)
	}
	return back, line, nil
}

// write writes a file of the timeline's directory dir durably, after
// the noted instants, so that a durable instant never follows one a
// crash could lose.
func (t *Timeline) write(dir, name string, data []byte) error {
	if err := t.syncNoted(); err != nil {
		return err
	}
	return t.writeFile(dir, name, data)
}

// writeFile writes a file of the timeline's directory dir durably, and
// nothing else: for archive files, which hold only instants older than
// every active one, noted or not.
func (t *Timeline) writeFile(dir, name string, data []byte) error {
	if err := t.ensureDirs(); err != nil {
		return t.fail(err)
	}
	if err := vfs.WriteFileAtomic(t.fsys, path.Join(dir, name), data, 0o644); err != nil {
		return t.fail(err)
	}
	return nil
}

// remove removes files of dir and syncs dir.
func (t *Timeline) remove(dir string, names []string) error {
	for _, n := range names {
		if err := t.fsys.Remove(path.Join(dir, n)); err != nil {
			return t.fail(err)
		}
	}
	if len(names) > 0 {
		if err := vfs.SyncDir(t.fsys, dir); err != nil {
			return t.fail(err)
		}
	}
	return nil
}

// Begin starts an instant of action with plan (nil for none), a payload
// of the action's type (a Roll or *Roll for ActionRoll, ...): it writes
// the instant REQUESTED, durably, and returns its Txn. The caller then
// calls Inflight before it changes any file, and Complete after its last
// change is durable (or Rollback). Several instants may be pending at
// once.
func (t *Timeline) Begin(action Action, plan Payload) (*Txn, error) {
	if newPayload(action) == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownAction, string(action))
	}
	if action == ActionRollback {
		return nil, fmt.Errorf("%w: a rollback is written by Txn.Rollback, not begun", ErrState)
	}
	plan, err := checkPayload(action, plan)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writable(); err != nil {
		return nil, err
	}
	tm, err := nextTime(t.last, t.opt.Clock.Now())
	if err != nil {
		return nil, err
	}
	inst, line, err := encode(Instant{Time: tm, Action: action, State: Requested, Plan: plan})
	if err != nil {
		return nil, err
	}
	t.last = tm
	name := fileName{time: tm, action: action, state: Requested}.String()
	if err := t.write(t.tdir, name, line); err != nil {
		return nil, err
	}
	x := &Txn{t: t, inst: inst, files: []string{name}}
	t.pending[tm] = x
	return x, nil
}

// Pending returns the instants that are requested or inflight, oldest
// first: after Open, those an earlier run left unfinished, which the
// engine's recovery completes (the action's changes are all in place) or
// rolls back (they were undone, or never made). The Txns are the live
// ones: a Txn another goroutine holds may move on after Pending returns.
func (t *Timeline) Pending() []*Txn {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]*Txn, 0, len(t.pending))
	for _, x := range t.pending {
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b *Txn) int { return a.inst.Time.Compare(b.inst.Time) })
	return out
}

// Instants returns the completed instants that f chooses, active and
// archived alike, ordered by Time. Requested and inflight instants are
// never returned (see Pending), nor are rolled-back ones; the rollback
// instants that rolled them back are. Archive files are read as needed:
// only those whose time range f may choose from.
func (t *Timeline) Instants(f Filter) ([]Instant, error) {
	for attempt := 1; ; attempt++ {
		out, err := t.instants(f)
		if !errors.Is(err, errVanished) || !t.opt.ReadOnly || attempt == maxLoadAttempts {
			return out, err
		}
		// The writer archived or merged since this timeline was loaded.
		t.mu.Lock()
		err = t.load()
		t.mu.Unlock()
		if err != nil && !errors.Is(err, errVanished) {
			return nil, err
		}
	}
}

func (t *Timeline) instants(f Filter) ([]Instant, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []Instant
	for _, a := range t.archives {
		if !f.overlaps(a.name.min, a.name.max) {
			continue
		}
		insts, _, err := t.readArchive(a)
		if err != nil {
			return nil, err
		}
		for i := range insts {
			if f.match(&insts[i]) {
				out = append(out, insts[i])
			}
		}
	}
	for _, d := range t.done {
		if !f.matchTime(d.time) {
			continue
		}
		inst, err := decodeInstantFile(path.Join(t.tdir, d.name), d.line)
		if err != nil {
			return nil, err
		}
		if f.match(&inst) {
			out = append(out, inst)
		}
	}
	slices.SortStableFunc(out, func(a, b Instant) int { return a.Time.Compare(b.Time) })
	// A read-only timeline's active instants may since have been
	// archived: the same instant twice.
	return slices.CompactFunc(out, func(a, b Instant) bool { return a.Time == b.Time }), nil
}

// insertDone adds a completed instant to the active timeline.
func (t *Timeline) insertDone(a activeInstant) {
	i, _ := slices.BinarySearchFunc(t.done, a.time, func(d activeInstant, tm InstantTime) int { return d.time.Compare(tm) })
	t.done = slices.Insert(t.done, i, a)
}

// Txn is a pending instant: begun, and neither completed nor rolled
// back. Its methods are safe for concurrent use (they take the
// Timeline's lock).
type Txn struct {
	t     *Timeline
	inst  Instant  // State Requested or Inflight
	files []string // its files in the active timeline
	done  bool
}

// Instant returns the instant as it stands: requested or inflight, or,
// once Complete returned nil, completed (with its Completed time and
// Result); after Rollback, as it was when rolled back.
func (x *Txn) Instant() Instant {
	x.t.mu.RLock()
	defer x.t.mu.RUnlock()
	inst := x.inst
	if b, err := encodeInstant(&inst); err == nil {
		if back, err := decodeInstantFile("", b); err == nil {
			inst.Plan, inst.Result = back.Plan, back.Result // copies of its own
		}
	}
	return inst
}

// Inflight marks the instant INFLIGHT, durably: call it before the
// action changes the first file. It is an ErrState error unless the
// instant is requested.
func (x *Txn) Inflight() error {
	t := x.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writable(); err != nil {
		return err
	}
	if x.done || x.inst.State != Requested {
		return fmt.Errorf("%w: instant %s is %s, not requested", ErrState, x.inst.Time, x.state())
	}
	inst := x.inst
	inst.State = Inflight
	_, line, err := encode(inst)
	if err != nil {
		return err
	}
	name := fileName{time: inst.Time, action: inst.Action, state: Inflight}.String()
	if err := t.write(t.tdir, name, line); err != nil {
		return err
	}
	x.inst.State = Inflight
	x.files = append(x.files, name)
	return nil
}

func (x *Txn) state() string {
	if x.done {
		return "finished"
	}
	return x.inst.State.String()
}

// Complete marks the instant COMPLETED with result (nil for none), a
// payload of the action's type: call it after the action's last change
// is durable. The instant is durable, and every reader sees it, once
// Complete returns nil; then the files of its earlier states are removed,
// and the oldest completed instants archived if the active timeline
// holds more than Options.ArchiveAfter. After an error, the outcome is
// unknown until the timeline is opened again.
func (x *Txn) Complete(result Payload) error {
	t := x.t
	result, err := checkPayload(x.inst.Action, result)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writable(); err != nil {
		return err
	}
	if x.done {
		return fmt.Errorf("%w: instant %s is finished", ErrState, x.inst.Time)
	}
	c, err := nextTime(t.last, t.opt.Clock.Now())
	if err != nil {
		return err
	}
	inst := x.inst
	inst.State, inst.Completed, inst.Result = Completed, c, result
	back, line, err := encode(inst)
	if err != nil {
		return err
	}
	t.last = c
	return t.finish(x, &back, activeInstant{time: inst.Time, completed: c, name: fileName{time: inst.Time, completed: c, action: inst.Action, state: Completed}.String(), line: line})
}

// Rollback rolls the instant back: it writes a completed rollback
// instant (ActionRollback, with a *Rollback plan naming this instant, its
// state and reason), durably, and then removes this instant's files. Call
// it once the action's changes are undone, or when it made none. After
// an error, the outcome is unknown until the timeline is opened again.
func (x *Txn) Rollback(reason string) error {
	t := x.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writable(); err != nil {
		return err
	}
	if x.done {
		return fmt.Errorf("%w: instant %s is finished", ErrState, x.inst.Time)
	}
	r, err := nextTime(t.last, t.opt.Clock.Now())
	if err != nil {
		return err
	}
	c, err := nextTime(r, t.opt.Clock.Now())
	if err != nil {
		return err
	}
	rb := &Rollback{Instant: x.inst.Time, InstantAction: x.inst.Action, InstantState: x.inst.State, Reason: reason, Plan: x.inst.Plan}
	_, line, err := encode(Instant{Time: r, Action: ActionRollback, State: Completed, Completed: c, Plan: rb})
	if err != nil {
		return err
	}
	t.last = c
	return t.finish(x, nil, activeInstant{time: r, completed: c, name: fileName{time: r, completed: c, action: ActionRollback, state: Completed}.String(), line: line})
}

// finish writes the completed instant a that ends x (its completion,
// completed, or its rollback), removes x's files and archives if need be.
func (t *Timeline) finish(x *Txn, completed *Instant, a activeInstant) error {
	if err := t.write(t.tdir, a.name, a.line); err != nil {
		return err
	}
	if completed != nil {
		x.inst = *completed
	}
	x.done = true
	delete(t.pending, x.inst.Time)
	t.insertDone(a)
	if err := t.remove(t.tdir, x.files); err != nil {
		return err
	}
	return t.maybeArchive()
}
