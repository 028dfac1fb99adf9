package timeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/segkit/segkit/vfs"
)

// crashOpt are the options of the crash workload: archival and merges
// every few instants.
func crashOpt(c Clock) Options { return Options{Clock: c, ArchiveAfter: 4, MergeAfter: 2} }

// modelInstant is what the workload did to one instant it began.
type modelInstant struct {
	action                       Action
	plan, result                 Payload
	inflightTried, inflightAcked bool
	completeTried, completeAcked bool
	rollbackTried, rollbackAcked bool
	completed                    Instant // once completeAcked
}

// crashModel is what the workload did, and how far it got.
type crashModel struct {
	begun      map[InstantTime]*modelInstant
	beginTried []Action // actions of Begins that returned an error
	err        error    // the error that stopped it, nil if none
	final      *Timeline
}

// crashWorkload runs begins, inflights, completions (some of them late,
// holding archival back) and rollbacks on fsys until the first error,
// recording what each call returned.
func crashWorkload(fsys vfs.FS) *crashModel {
	mdl := &crashModel{begun: map[InstantTime]*modelInstant{}}
	tl, err := Open(fsys, partDir, crashOpt(newClock()))
	if err != nil {
		mdl.err = err
		return mdl
	}
	mdl.final = tl
	var late []*Txn // begun, completed some steps later
	begin := func(a Action, plan Payload) *Txn {
		x, err := tl.Begin(a, plan)
		if err != nil {
			mdl.beginTried = append(mdl.beginTried, a)
			mdl.err = err
			return nil
		}
		mdl.begun[x.Instant().Time] = &modelInstant{action: a, plan: plan}
		return x
	}
	inflight := func(x *Txn) bool {
		m := mdl.begun[x.Instant().Time]
		m.inflightTried = true
		if err := x.Inflight(); err != nil {
			mdl.err = err
			return false
		}
		m.inflightAcked = true
		return true
	}
	complete := func(x *Txn, result Payload) bool {
		m := mdl.begun[x.Instant().Time]
		m.completeTried, m.result = true, result
		if err := x.Complete(result); err != nil {
			mdl.err = err
			return false
		}
		m.completeAcked, m.completed = true, x.Instant()
		return true
	}
	rollback := func(x *Txn) bool {
		m := mdl.begun[x.Instant().Time]
		m.rollbackTried = true
		if err := x.Rollback("crash test"); err != nil {
			mdl.err = err
			return false
		}
		m.rollbackAcked = true
		return true
	}
	for i := range 24 {
		ok := true
		switch i % 6 {
		case 0, 5:
			if x := begin(ActionRoll, rollPlan(i)); x == nil {
				ok = false
			} else {
				ok = inflight(x) && complete(x, &Roll{Reason: "segment.bytes", NewBaseOffset: int64(i)})
			}
		case 1:
			if x := begin(ActionClean, &Clean{Rule: "time", Now: int64(i)}); x == nil {
				ok = false
			} else {
				ok = complete(x, &Clean{Rule: "time", Now: int64(i), NewLogStartOffset: int64(i)})
			}
		case 2:
			if x := begin(ActionCompaction, &Compaction{FirstDirtyOffset: int64(i)}); x == nil {
				ok = false
			} else {
				ok = inflight(x) && rollback(x)
			}
		case 3:
			// Begun now, completed three steps later: archival waits.
			if x := begin(ActionTruncate, &Truncate{Reason: "divergence", OldLogEndOffset: int64(i)}); x == nil {
				ok = false
			} else {
				late = append(late, x)
				ok = inflight(x)
			}
		case 4:
			if x := begin(ActionRecovery, nil); x == nil {
				ok = false
			} else {
				ok = rollback(x)
			}
		}
		if ok && i%6 == 0 && len(late) > 0 {
			ok = complete(late[0], &Truncate{Reason: "divergence", NewLogEndOffset: 1})
			late = late[1:]
		}
		if !ok {
			return mdl
		}
	}
	// Left pending: a requested and an inflight instant.
	if x := begin(ActionSavepoint, &Savepoint{Label: "hold"}); x == nil || !inflight(x) {
		return mdl
	}
	begin(ActionRestore, &Restore{NewLogEndOffset: 5})
	return mdl
}

// TestCrashAtEveryWritePoint crashes the workload at every mutating
// operation in turn (each create, write, sync, rename, remove and mkdir
// of Begin, Inflight, Complete, Rollback, archival and merges), takes
// four power cuts of each point (unsynced state dropped, kept in part
// with torn writes, kept whole) and checks every image: it opens,
// read-only and writable alike; no instant whose Complete or Rollback
// returned is lost, and none is seen twice; every instant seen completed
// was completed or rolled back by the workload, with its payloads;
// nothing requested or inflight is seen by Instants; every instant whose
// Begin returned is completed, rolled back or pending, and pending no
// earlier than its last acknowledged state. Then the image's pending
// instants are rolled back, a new instant is recorded, and the timeline
// must hold all of it on the next Open, the new instant after every other.
func TestCrashAtEveryWritePoint(t *testing.T) {
	base := newPartition(t)
	full := crashWorkload(base.CrashClone(vfs.CrashConfig{}))
	if full.err != nil {
		t.Fatalf("the workload fails without a crash: %v", full.err)
	}
	layers := map[int]bool{}
	for _, a := range full.final.archives {
		layers[a.name.layer] = true
	}
	if !layers[0] || !layers[1] || len(full.final.Pending()) != 3 {
		t.Fatalf("the workload does not exercise archival (layers %v) or leave pending instants (%d)", layers, len(full.final.Pending()))
	}

	stride := 1
	if testing.Short() || raceEnabled {
		stride = 7
	}
	points, images := 0, 0
	for k := 0; ; k += stride {
		m := base.CrashClone(vfs.CrashConfig{})
		crash := vfs.CrashAfter(k)
		mdl := crashWorkload(vfs.WithFaults(m, crash))
		if !crash.Crashed() {
			if mdl.err != nil {
				t.Fatalf("no crash at %d, yet: %v", k, mdl.err)
			}
			break
		}
		if mdl.err == nil || !errors.Is(mdl.err, vfs.ErrCrashed) {
			t.Fatalf("crash after %d operations: the workload ended with %v", k, mdl.err)
		}
		points++
		for seed := range uint64(4) {
			cfg := vfs.CrashConfig{Seed: seed + uint64(k)*4, UnsyncedDataPercent: []int{0, 50, 100, 30}[seed], TornWrites: seed%2 == 1}
			img := m.CrashClone(cfg)
			if err := checkCrashImage(t, img, mdl); err != nil {
				t.Fatalf("crash after %d operations, power cut %+v: %v", k, cfg, err)
			}
			images++
		}
	}
	if points*stride < 200 {
		t.Fatalf("only %d crash points", points)
	}
	t.Logf("%d crash points, %d images checked", points, images)
}

// checkCrashImage checks one image against what the workload did.
func checkCrashImage(t *testing.T, img *vfs.Mem, mdl *crashModel) error {
	ro, err := Open(img, partDir, Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("read-only Open: %w", err)
	}
	roInsts, err := ro.Instants(Filter{})
	if err != nil {
		return fmt.Errorf("read-only Instants: %w", err)
	}
	tl, err := Open(img, partDir, crashOpt(newClock()))
	if err != nil {
		return fmt.Errorf("Open: %w", err)
	}
	insts, err := tl.Instants(Filter{})
	if err != nil {
		return fmt.Errorf("Instants: %w", err)
	}
	if d := sameInstants(t, roInsts, insts); d != "" {
		return fmt.Errorf("read-only and writable Opens differ:\n%s", d)
	}
	pending := tl.Pending()
	if len(pending) != len(ro.Pending()) {
		return fmt.Errorf("%d pending read-only, %d writable", len(ro.Pending()), len(pending))
	}

	seen := map[InstantTime]Instant{}       // completed, by time
	rolledBack := map[InstantTime]Instant{} // rollbacks, by the time they name
	for i, in := range insts {
		if in.State != Completed {
			return fmt.Errorf("Instants returned %s", in)
		}
		if i > 0 && in.Time.Compare(insts[i-1].Time) <= 0 {
			return fmt.Errorf("Instants out of order or twice: %s after %s", in, insts[i-1])
		}
		if in.Action == ActionRollback {
			rb := in.Plan.(*Rollback)
			m := mdl.begun[rb.Instant]
			if m == nil || !m.rollbackTried {
				return fmt.Errorf("%s rolls back %s, which the workload did not roll back", in, rb.Instant)
			}
			if rb.InstantAction != m.action || (rb.InstantState == Inflight) != m.inflightAcked || encodedPayload(rb.Plan) != encodedPayload(m.plan) {
				return fmt.Errorf("%s: rollback of %s %s %s, the workload's was %s inflight %v", in, rb.InstantAction, rb.InstantState, encodedPayload(rb.Plan), m.action, m.inflightAcked)
			}
			if _, dup := rolledBack[rb.Instant]; dup {
				return fmt.Errorf("%s rolled back twice", rb.Instant)
			}
			rolledBack[rb.Instant] = in
			continue
		}
		m := mdl.begun[in.Time]
		if m == nil || !m.completeTried {
			return fmt.Errorf("%s is completed, the workload did not complete it", in)
		}
		if m.completeAcked && encoded(t, in) != encoded(t, m.completed) {
			return fmt.Errorf("%s is not as its Complete left it: %s, want %s", in, encoded(t, in), encoded(t, m.completed))
		}
		if in.Action != m.action || encodedPayload(in.Plan) != encodedPayload(m.plan) || encodedPayload(in.Result) != encodedPayload(m.result) {
			return fmt.Errorf("%s: payloads %s %s, want %s %s", in, encodedPayload(in.Plan), encodedPayload(in.Result), encodedPayload(m.plan), encodedPayload(m.result))
		}
		seen[in.Time] = in
	}
	pend := map[InstantTime]Instant{}
	unknown := 0
	for _, x := range pending {
		in := x.Instant()
		pend[in.Time] = in
		m := mdl.begun[in.Time]
		if m == nil {
			// A Begin that was cut short may have written its file.
			unknown++
			if unknown > 1 || len(mdl.beginTried) == 0 || in.Action != mdl.beginTried[len(mdl.beginTried)-1] || in.State != Requested {
				return fmt.Errorf("pending %s was never begun", in)
			}
			continue
		}
		if in.State == Inflight && !m.inflightTried || m.inflightAcked && in.State != Inflight || encodedPayload(in.Plan) != encodedPayload(m.plan) {
			return fmt.Errorf("pending %s (plan %s): the workload's Inflight tried %v, acknowledged %v, plan %s", in, encodedPayload(in.Plan), m.inflightTried, m.inflightAcked, encodedPayload(m.plan))
		}
	}
	for tm, m := range mdl.begun {
		_, c := seen[tm]
		_, r := rolledBack[tm]
		_, p := pend[tm]
		switch {
		case btoi(c)+btoi(r)+btoi(p) != 1:
			return fmt.Errorf("instant %s (%s): completed %v, rolled back %v, pending %v; want exactly one", tm, m.action, c, r, p)
		case m.completeAcked && !c:
			return fmt.Errorf("instant %s: Complete returned, and it is not completed", tm)
		case m.rollbackAcked && !r:
			return fmt.Errorf("instant %s: Rollback returned, and it is not rolled back", tm)
		}
	}

	// Recover as the engine would, and go on.
	for _, x := range pending {
		if err := x.Rollback("recovered"); err != nil {
			return fmt.Errorf("Rollback of %s: %w", x.Instant(), err)
		}
	}
	x, err := tl.Begin(ActionRoll, rollPlan(99))
	if err != nil {
		return fmt.Errorf("Begin after the crash: %w", err)
	}
	if err := x.Complete(nil); err != nil {
		return fmt.Errorf("Complete after the crash: %w", err)
	}
	again, err := Open(img, partDir, crashOpt(newClock()))
	if err != nil {
		return fmt.Errorf("Open after recovering: %w", err)
	}
	after, err := again.Instants(Filter{})
	if err != nil {
		return err
	}
	if len(again.Pending()) != 0 || len(after) != len(insts)+len(pending)+1 {
		return fmt.Errorf("after recovering: %d pending, %d instants; want 0 and %d", len(again.Pending()), len(after), len(insts)+len(pending)+1)
	}
	if last := after[len(after)-1]; last.Time != x.Instant().Time {
		return fmt.Errorf("the instant begun after the crash, %s, is not the last: %s", x.Instant(), last)
	}
	for _, in := range insts {
		if _, ok := slices.BinarySearchFunc(after, in.Time, func(a Instant, tm InstantTime) int { return a.Time.Compare(tm) }); !ok {
			return fmt.Errorf("after recovering, %s is gone", in)
		}
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// encodedPayload is the JSON of a payload ("null" for none), to compare
// payloads of either pointer or value type.
func encodedPayload(p Payload) string {
	b, err := json.Marshal(p)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(b)
}
