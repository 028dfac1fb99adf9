package timeline

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/vfs"
)

// noteWorkload notes rolls and completes durable instants between them,
// recording which instants were acknowledged durable: a Complete that
// returned nil, or a noted one followed by a successful Sync or durable
// write.
type noteModel struct {
	durable []InstantTime // acknowledged durable, in order
	noted   []InstantTime // noted, maybe not durable
	err     error
}

func noteWorkload(fsys vfs.FS) *noteModel {
	mdl := &noteModel{}
	tl, err := Open(fsys, partDir, Options{Clock: newClock(), ArchiveAfter: 6, MergeAfter: 2})
	if err != nil {
		mdl.err = err
		return mdl
	}
	promote := func() {
		mdl.durable = append(mdl.durable, mdl.noted...)
		mdl.noted = nil
	}
	for i := range 13 {
		inst, err := tl.Note(ActionRoll, &Roll{Reason: "segment.bytes", NewBaseOffset: int64(100 * (i + 1))})
		if err != nil {
			mdl.err = err
			return mdl
		}
		mdl.noted = append(mdl.noted, inst.Time)
		switch i % 4 {
		case 1:
			if err := tl.Sync(); err != nil {
				mdl.err = err
				return mdl
			}
			promote()
		case 3:
			tx, err := tl.Begin(ActionClean, &Clean{Rule: "time"})
			if err != nil {
				mdl.err = err
				return mdl
			}
			promote() // Begin synced the noted instants first
			if err := tx.Complete(&Clean{Rule: "time", NewLogStartOffset: int64(i)}); err != nil {
				mdl.err = err
				return mdl
			}
			mdl.durable = append(mdl.durable, tx.Instant().Time)
		}
	}
	return mdl
}

// TestNoteCrashAtEveryWritePoint: whatever a crash leaves of noted
// instants, Open succeeds; every instant acknowledged durable is there;
// a noted instant is there whole or dropped; and none is missing before
// one that is there (a durable instant never follows a lost one).
func TestNoteCrashAtEveryWritePoint(t *testing.T) {
	base := newPartition(t)
	if mdl := noteWorkload(base.CrashClone(vfs.CrashConfig{})); mdl.err != nil || len(mdl.noted) == 0 {
		t.Fatalf("the workload without a crash: %v, %d noted at the end", mdl.err, len(mdl.noted))
	}
	points, images, dropped := 0, 0, 0
	for k := 0; ; k++ {
		m := base.CrashClone(vfs.CrashConfig{})
		crash := vfs.CrashAfter(k)
		mdl := noteWorkload(vfs.WithFaults(m, crash))
		if !crash.Crashed() {
			break
		}
		if !errors.Is(mdl.err, vfs.ErrCrashed) {
			t.Fatalf("crash after %d operations: the workload ended with %v", k, mdl.err)
		}
		points++
		for seed := range uint64(4) {
			cfg := vfs.CrashConfig{Seed: seed + uint64(k)*4, UnsyncedDataPercent: []int{0, 50, 100, 30}[seed], TornWrites: seed%2 == 1}
			img := m.CrashClone(cfg)
			tl, err := Open(img, partDir, Options{Clock: newClock(), ArchiveAfter: 6, MergeAfter: 2})
			if err != nil {
				t.Fatalf("crash after %d, %+v: Open: %v", k, cfg, err)
			}
			dropped += len(tl.Dropped())
			insts := mustInstants(t, tl, Filter{})
			have := map[InstantTime]bool{}
			for _, in := range insts {
				have[in.Time] = true
			}
			for _, d := range mdl.durable {
				if !have[d] {
					t.Fatalf("crash after %d, %+v: durable instant %s lost", k, cfg, d)
				}
			}
			// Only noted instants no sync followed may be lost: the
			// durable ones, checked above, include every instant before
			// the last durable write. A noted one that is there is whole
			// (Instants decoded it).
			// Open removed what it dropped: a second Open drops nothing.
			if again := mustOpen(t, img, Options{Clock: newClock()}); len(again.Dropped()) != 0 {
				t.Fatalf("crash after %d, %+v: a second Open dropped %v", k, cfg, again.Dropped())
			}
			images++
		}
	}
	if points < 50 || dropped == 0 {
		t.Fatalf("%d crash points, %d torn noted files: the sweep does not exercise tearing", points, dropped)
	}
	t.Logf("%d crash points, %d images, %d torn noted files dropped", points, images, dropped)
}

func TestNoteRefusesOtherActions(t *testing.T) {
	tl := mustOpen(t, newPartition(t), Options{Clock: newClock()})
	if _, err := tl.Note(ActionClean, &Clean{}); !errors.Is(err, ErrState) {
		t.Fatalf("Note(clean): %v, want ErrState", err)
	}
	if _, err := tl.Note("bogus", nil); !errors.Is(err, ErrUnknownAction) {
		t.Fatalf("Note(bogus): %v, want ErrUnknownAction", err)
	}
	ro := mustOpen(t, newPartition(t), Options{ReadOnly: true})
	if _, err := ro.Note(ActionRoll, &Roll{}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only Note: %v", err)
	}
	if err := ro.Sync(); err != nil {
		t.Fatalf("read-only Sync: %v", err)
	}
}

func TestImport(t *testing.T) {
	m := newPartition(t)
	clk := newClock()
	tl := mustOpen(t, m, Options{Clock: clk, ArchiveAfter: 4, MergeAfter: 2})
	at := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	c := &Clean{Rule: "time", Now: at.UnixMilli(), OldLogStartOffset: 0, NewLogStartOffset: 40}
	a, err := tl.Import(ActionClean, at, c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tl.Import(ActionClean, at, c) // the same millisecond: the next free sequence
	if err != nil {
		t.Fatal(err)
	}
	if !a.Imported || a.Time.Millis != at.UnixMilli() || a.Completed.Compare(a.Time) <= 0 || b.Time.Compare(a.Completed) <= 0 {
		t.Fatalf("imported instants %v and %v", a, b)
	}
	insts := mustInstants(t, mustOpen(t, m, Options{ReadOnly: true}), Filter{})
	if len(insts) != 2 || !insts[0].Imported || !insts[1].Imported {
		t.Fatalf("reopened: %v", insts)
	}
	if diff := cmp.Diff(c, insts[0].Result); diff != "" {
		t.Fatalf("imported payload (-want +got):\n%s", diff)
	}
	// Archive past the imported ones; importing before the archive's end
	// is then refused, after it allowed.
	for i := range 8 {
		tx, err := tl.Begin(ActionRoll, &Roll{NewBaseOffset: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Complete(nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(tl.archives) == 0 {
		t.Fatal("no archive")
	}
	if _, err := tl.Import(ActionClean, at, c); !errors.Is(err, ErrTimeRange) {
		t.Fatalf("import before the archive: %v, want ErrTimeRange", err)
	}
	later := clk.Now().Add(time.Hour)
	if _, err := tl.Import(ActionTruncate, later, &Truncate{Reason: "divergence"}); err != nil {
		t.Fatalf("import after the archive: %v", err)
	}
	if _, err := tl.Import(ActionRollback, later, nil); !errors.Is(err, ErrState) {
		t.Fatalf("import of a rollback: %v", err)
	}
	// A Begin after an import from the future stays after it.
	tx, err := tl.Begin(ActionRoll, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Instant().Time.Millis < later.UnixMilli() {
		t.Fatalf("Begin at %s, before the imported instant at %s", tx.Instant().Time, later)
	}
}

func TestHolds(t *testing.T) {
	tl := mustOpen(t, newPartition(t), Options{Clock: newClock()})
	take := func(label string, first, last int64, release *InstantTime) Instant {
		t.Helper()
		sp := &Savepoint{Label: label, FirstOffset: first, LastOffset: last, Release: release}
		tx, err := tl.Begin(ActionSavepoint, sp)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Complete(sp); err != nil {
			t.Fatal(err)
		}
		return tx.Instant()
	}
	a := take("audit", 10, 20, nil)
	b := take("legal", 0, 99, nil)
	got, err := tl.Holds()
	if err != nil {
		t.Fatal(err)
	}
	want := []Hold{{Savepoint: a.Time, Label: "audit", FirstOffset: 10, LastOffset: 20}, {Savepoint: b.Time, Label: "legal", FirstOffset: 0, LastOffset: 99}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("holds (-want +got):\n%s", diff)
	}
	take("", 0, 0, &a.Time)
	if got, _ := tl.Holds(); len(got) != 1 || got[0].Label != "legal" {
		t.Fatalf("after releasing audit: %v", got)
	}
	if s := want[1].String(); s != fmt.Sprintf("savepoint %q (%s)", "legal", b.Time) {
		t.Fatalf("String: %s", s)
	}
}

// TestTornFiles: a completed roll file cut short or zero-filled is what
// a crash leaves of a noted instant, and is dropped; any other damage, and
// any damage to another action's file, is a CorruptionError.
func TestTornFiles(t *testing.T) {
	tdir := Dir(partDir)
	tests := []struct {
		name    string
		action  Action
		edit    func([]byte) []byte
		dropped bool
		want    error
	}{
		{"roll_empty", ActionRoll, func([]byte) []byte { return nil }, true, nil},
		{"roll_cut", ActionRoll, func(b []byte) []byte { return b[:20] }, true, nil},
		{"roll_no_newline", ActionRoll, func(b []byte) []byte { return b[:len(b)-1] }, true, nil},
		{"roll_zeros", ActionRoll, func(b []byte) []byte { return make([]byte, len(b)) }, true, nil},
		{"roll_crc_flip", ActionRoll, func(b []byte) []byte { b = slices.Clone(b); b[0] ^= 1; return b }, false, format.ErrCRC},
		{"clean_empty", ActionClean, func([]byte) []byte { return nil }, false, format.ErrTruncated},
		{"clean_cut", ActionClean, func(b []byte) []byte { return b[:20] }, false, format.ErrTruncated},
		{"clean_zeros", ActionClean, func(b []byte) []byte { return make([]byte, len(b)) }, false, format.ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, ro := range []bool{true, false} {
				m := newPartition(t)
				tl := mustOpen(t, m, Options{Clock: newClock()})
				var inst Instant
				if tt.action == ActionRoll {
					var err error
					if inst, err = tl.Note(ActionRoll, &Roll{Reason: "segment.bytes", NewBaseOffset: 7}); err != nil {
						t.Fatal(err)
					}
					if err := tl.Sync(); err != nil { // the file is written
						t.Fatal(err)
					}
				} else {
					tx, err := tl.Begin(tt.action, nil)
					if err != nil {
						t.Fatal(err)
					}
					if err := tx.Complete(nil); err != nil {
						t.Fatal(err)
					}
					inst = tx.Instant()
				}
				name := fileName{time: inst.Time, completed: inst.Completed, action: inst.Action, state: Completed}.String()
				p := path.Join(tdir, name)
				b, err := vfs.ReadFile(m, p)
				if err != nil {
					t.Fatal(err)
				}
				if err := vfs.WriteFile(m, p, tt.edit(b), 0o644); err != nil {
					t.Fatal(err)
				}
				got, err := Open(m, partDir, Options{ReadOnly: ro})
				if !tt.dropped {
					var ce *format.CorruptionError
					if !errors.As(err, &ce) || !errors.Is(err, tt.want) || ce.Path != p {
						t.Fatalf("read-only %v: Open: %v, want a CorruptionError at %s matching %v", ro, err, p, tt.want)
					}
					continue
				}
				if err != nil {
					t.Fatalf("read-only %v: Open: %v", ro, err)
				}
				if diff := cmp.Diff([]string{name}, got.Dropped()); diff != "" {
					t.Fatalf("read-only %v: Dropped (-want +got):\n%s", ro, diff)
				}
				if insts := mustInstants(t, got, Filter{}); len(insts) != 0 {
					t.Fatalf("read-only %v: instants %v", ro, insts)
				}
				if _, err := m.Stat(p); ro == isNotExist(err) {
					t.Fatalf("read-only %v: the torn file's Stat: %v", ro, err)
				}
			}
		})
	}
}
