package timeline

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"time"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/vfs"
)

// notable reports whether instants of action a may be noted (Note): an
// action that is whole as soon as it is made, and that the engine's
// recovery can tell from the partition's files alone — a roll.
func notable(a Action) bool { return a == ActionRoll }

// Note records a completed instant of action (ActionRoll only) with
// result at once, without waiting for it to be durable or even written:
// Instants returns it at once, and its one file is written, with no
// sync, by a goroutine of the timeline's that stops when it has nothing
// left to write. It exists for the append path, where a roll happens
// at every segment.bytes and three durable writes per roll would cost
// more than the roll itself.
//
// A noted instant is written and durable after the next Sync, and before
// the next durable write of the timeline (Begin, Inflight, Complete, Rollback,
// Import and archival sync the noted instants first), so a durable
// instant never follows one a crash can lose. Until then a crash may
// lose it, or tear its file: Open removes a noted instant's file that
// does not decode (read-only, skips it) and lists it in Dropped, and the
// engine's recovery, which finds the roll's segment on disk, records it
// again. Only a file cut short or zero-filled is taken for torn: any
// other damage is an error, as for every other file. A roll needs no
// requested or inflight state: the recovery of a partition already
// completes or undoes a roll a crash interrupted from the files alone.
func (t *Timeline) Note(action Action, result Payload) (Instant, error) {
	if !notable(action) {
		if newPayload(action) == nil {
			return Instant{}, fmt.Errorf("%w %q", ErrUnknownAction, string(action))
		}
		return Instant{}, fmt.Errorf("%w: a %s instant must be begun; only roll instants are noted", ErrState, action)
	}
	result, err := checkPayload(action, result)
	if err != nil {
		return Instant{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writable(); err != nil {
		return Instant{}, err
	}
	now := t.opt.Clock.Now()
	r, err := nextTime(t.last, now)
	if err != nil {
		return Instant{}, err
	}
	c, err := nextTime(r, now)
	if err != nil {
		return Instant{}, err
	}
	back, line, err := encode(Instant{Time: r, Action: action, State: Completed, Completed: c, Result: result})
	if err != nil {
		return Instant{}, err
	}
	t.last = c
	name := fileName{time: r, completed: c, action: action, state: Completed}.String()
	if !t.dirsMade {
		if err := t.fsys.MkdirAll(t.hdir, 0o755); err != nil {
			return Instant{}, t.fail(err)
		}
		t.dirsMade = true
	}
	// The file is written by a goroutine of the timeline's, so that the
	// roll does not wait for the filesystem's metadata journal (a file
	// creation waits for the commit of the last fsync's transaction: a
	// millisecond or more while a log flushes). Every durable write, Sync
	// and archival waits for it first (drainNotes).
	t.insertDone(activeInstant{time: r, completed: c, name: name, line: line})
	t.noteq = append(t.noteq, queuedNote{name: name, line: line})
	if !t.writing {
		t.writing = true
		go t.writeNotes()
	}
	if len(t.done) > t.opt.ArchiveAfter && t.opt.ArchiveAfter >= 0 {
		if err := t.drainNotes(); err != nil {
			return Instant{}, err
		}
		if err := t.maybeArchive(); err != nil {
			return Instant{}, err
		}
	}
	return back, nil
}

// queuedNote is a noted instant's file, not written yet.
type queuedNote struct {
	name string
	line []byte
}

// writeNotes writes the queued noted files, one at a time, without
// holding t.mu while it writes, and returns once the queue is empty. At
// most one runs at a time (t.writing).
func (t *Timeline) writeNotes() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.noteq) > 0 && t.err == nil {
		n := t.noteq[0]
		t.noteq = t.noteq[1:]
		t.mu.Unlock()
		err := t.writeNoSync(path.Join(t.tdir, n.name), n.line)
		t.mu.Lock()
		if err != nil {
			t.fail(err)
			break
		}
		t.unsynced = append(t.unsynced, n.name)
	}
	t.noteq = nil
	t.writing = false
	t.idle.Broadcast()
}

// drainNotes waits, with t.mu held, until the queued noted files are
// written, and returns the write error if one failed.
func (t *Timeline) drainNotes() error {
	for t.writing {
		t.idle.Wait()
	}
	if t.err != nil {
		return fmt.Errorf("%w: %w", ErrFailed, t.err)
	}
	return nil
}

// torn reports whether b, which failed to decode with err, looks as a
// crash leaves a file written without a sync: cut short (empty, or
// without its newline) or a hole of zero bytes. A CRC mismatch or a bad
// value in a whole line is damage, not a crash, and stays an error.
func torn(b []byte, err error) bool {
	if errors.Is(err, format.ErrTruncated) {
		return true
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// writeNoSync writes a new file whole, without syncing it.
func (t *Timeline) writeNoSync(p string, data []byte) error {
	f, err := t.fsys.Create(p)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Sync makes the noted instants durable: their files synced, then the
// timeline's directories. It does nothing when there are none.
func (t *Timeline) Sync() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writable(); err != nil {
		if errors.Is(err, ErrReadOnly) {
			return nil
		}
		return err
	}
	return t.syncNoted()
}

// syncNoted is Sync with t.mu held.
func (t *Timeline) syncNoted() error {
	if err := t.drainNotes(); err != nil {
		return err
	}
	if len(t.unsynced) == 0 {
		return nil // writeFile makes the directories durable itself
	}
	if err := t.ensureDirs(); err != nil {
		return t.fail(err)
	}
	for _, name := range t.unsynced {
		f, err := t.fsys.OpenFile(path.Join(t.tdir, name), 0, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue // archived since: the archive file is durable
		}
		if err != nil {
			return t.fail(err)
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return t.fail(err)
		}
	}
	if err := vfs.SyncDir(t.fsys, t.tdir); err != nil {
		return t.fail(err)
	}
	t.unsynced = t.unsynced[:0]
	return nil
}

// Dropped returns the names of the noted instants' files that Open (or
// a reload) found torn by a crash and removed — read-only, skipped. The
// changes they recorded are in the partition's files: the engine records
// them again.
func (t *Timeline) Dropped() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.Clone(t.dropped)
}

// Import records a completed instant of action with result that another
// record of the change gives (a line of a broker's log): its time is at,
// not the clock, and it is marked Imported. It is written durably, like
// a completion. Its instant time is at's millisecond with the lowest
// sequence number free there, its completion the next one.
//
// Import refuses (ErrTimeRange) a time at or before the archived
// timeline's last, which would break the archive's order, and a
// rollback (ErrState). Importing the same change twice records it
// twice: the caller checks Instants first.
func (t *Timeline) Import(action Action, at time.Time, result Payload) (Instant, error) {
	if newPayload(action) == nil {
		return Instant{}, fmt.Errorf("%w %q", ErrUnknownAction, string(action))
	}
	if action == ActionRollback {
		return Instant{}, fmt.Errorf("%w: a rollback is not imported", ErrState)
	}
	result, err := checkPayload(action, result)
	if err != nil {
		return Instant{}, err
	}
	ms := at.UnixMilli()
	if ms < 0 || ms > MaxMillis {
		return Instant{}, fmt.Errorf("%w: %s", ErrTimeRange, at.UTC().Format(time.RFC3339Nano))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writable(); err != nil {
		return Instant{}, err
	}
	if n := len(t.archives); n > 0 && ms <= t.archives[n-1].maxTime.Millis {
		return Instant{}, fmt.Errorf("%w: an instant at %s would precede the end of the archived timeline (%s)", ErrTimeRange, at.UTC().Format(time.RFC3339Nano), t.archives[n-1].maxTime)
	}
	used := map[InstantTime]bool{}
	for _, d := range t.done {
		used[d.time], used[d.completed] = true, true
	}
	for tm := range t.pending {
		used[tm] = true
	}
	var r, c InstantTime
	for seq := 0; ; seq++ {
		if seq+1 > MaxSeq {
			return Instant{}, fmt.Errorf("%w: no free instant time in millisecond %d", ErrTimeRange, ms)
		}
		r, c = InstantTime{Millis: ms, Seq: uint16(seq)}, InstantTime{Millis: ms, Seq: uint16(seq + 1)}
		if !used[r] && !used[c] {
			break
		}
	}
	back, line, err := encode(Instant{Time: r, Action: action, State: Completed, Completed: c, Result: result, Imported: true})
	if err != nil {
		return Instant{}, err
	}
	name := fileName{time: r, completed: c, action: action, state: Completed}.String()
	if err := t.write(t.tdir, name, line); err != nil {
		return Instant{}, err
	}
	t.last = maxTime(t.last, c)
	t.insertDone(activeInstant{time: r, completed: c, name: name, line: line})
	if err := t.maybeArchive(); err != nil {
		return Instant{}, err
	}
	return back, nil
}

// Hold is a savepoint in force: a legal hold on the offsets
// FirstOffset to LastOffset, which retention and compaction must not
// remove (see Savepoint).
type Hold struct {
	// Savepoint is the time of the savepoint instant that took the hold,
	// Label its label.
	Savepoint InstantTime
	Label     string
	// FirstOffset and LastOffset are the first and last offset held.
	FirstOffset, LastOffset int64
}

// String names the hold as plans and bounds do: `savepoint "L" (T)`.
func (h Hold) String() string { return fmt.Sprintf("savepoint %q (%s)", h.Label, h.Savepoint) }

// Holds returns the savepoints in force, oldest first: every completed
// savepoint instant that takes a hold, unless a later one released it.
func (t *Timeline) Holds() ([]Hold, error) {
	insts, err := t.Instants(Filter{Actions: []Action{ActionSavepoint}})
	if err != nil {
		return nil, err
	}
	return HoldsOf(insts), nil
}

// HoldsOf returns the holds in force after the instants insts (in time
// order; instants of other actions are ignored).
func HoldsOf(insts []Instant) []Hold {
	var out []Hold
	for _, inst := range insts {
		sp, ok := inst.Result.(*Savepoint)
		if !ok || inst.State != Completed {
			if sp, ok = inst.Plan.(*Savepoint); !ok || inst.State != Completed {
				continue
			}
		}
		if sp.Release != nil {
			out = slices.DeleteFunc(out, func(h Hold) bool { return h.Savepoint == *sp.Release })
			continue
		}
		out = append(out, Hold{Savepoint: inst.Time, Label: sp.Label, FirstOffset: sp.FirstOffset, LastOffset: sp.LastOffset})
	}
	return out
}
