package demo

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

func tree(t *testing.T, d *Demo) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := walk(d.FS, LogDir, func(name string, isDir bool) error {
		if isDir {
			return nil
		}
		b, err := vfs.ReadFile(d.FS, name)
		if err != nil {
			return err
		}
		st, err := d.FS.Stat(name)
		if err != nil {
			return err
		}
		out[name] = sha256.Sum256(append(b, []byte(st.ModTime().String())...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDeterministic(t *testing.T) {
	a, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	ta, tb := tree(t, a), tree(t, b)
	if len(ta) != len(tb) || len(ta) < 30 {
		t.Fatalf("%d and %d files", len(ta), len(tb))
	}
	for k, v := range ta {
		if tb[k] != v {
			t.Errorf("%s differs between builds", k)
		}
	}
}

// open opens orders-0 read-only, as segviz does.
func open(t *testing.T, d *Demo, dir string) *kafkalog.Log {
	t.Helper()
	l, err := kafkalog.Open(d.FS, dir, d.Config, kafkalog.Options{ReadOnly: true, Clock: fixed{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

type fixed struct{}

func (fixed) Now() time.Time { return Now }

func TestOrdersShowsEverything(t *testing.T) {
	d, err := Get()
	if err != nil {
		t.Fatal(err)
	}
	l := open(t, d, Partition)
	segs := l.Segments()
	if len(segs) != 7 {
		t.Fatalf("%d segments", len(segs))
	}
	if l.LogStartOffset() <= segs[0].BaseOffset() || l.LogStartOffset() >= segs[1].BaseOffset() {
		t.Errorf("log start offset %d not inside the first segment", l.LogStartOffset())
	}
	// A deleted segment waits as .deleted.
	for _, ext := range []string{".log.deleted", ".index.deleted", ".timeindex.deleted"} {
		if _, err := d.FS.Stat(segment.Path(Partition, 0, ext)); err != nil {
			t.Errorf("segment 0: %v", err)
		}
	}
	codecs := map[string]bool{}
	var commit, abort, empty, transactional, idempotent, tombstone, binary, headers bool
	var it record.Iterator
	var r record.Record
	for _, sg := range segs {
		data, err := vfs.ReadFile(d.FS, sg.LogPath())
		if err != nil {
			t.Fatal(err)
		}
		s := record.NewScanner(data, sg.LogPath(), 0)
		s.Validate = true
		for s.Next() {
			b := &s.Entry().Batch
			codecs[b.Attributes.Codec().String()] = true
			if b.RecordCount == 0 {
				empty = true
			}
			if b.Attributes.IsTransactional() && !b.Attributes.IsControl() {
				transactional = true
			}
			if b.ProducerID >= 0 && !b.Attributes.IsTransactional() {
				idempotent = true
			}
			it.Reset(b)
			for it.Next(&r) {
				if b.Attributes.IsControl() {
					m, err := record.ParseEndTxnMarker(r.Key, r.Value)
					if err != nil {
						t.Fatal(err)
					}
					commit = commit || m.Type == record.ControlCommit
					abort = abort || m.Type == record.ControlAbort
					continue
				}
				tombstone = tombstone || r.Value == nil
				binary = binary || (r.Key == nil && r.Value != nil)
				headers = headers || len(r.Headers) > 0
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if len(codecs) != 5 {
		t.Errorf("codecs %v", codecs)
	}
	for name, ok := range map[string]bool{"COMMIT": commit, "ABORT": abort, "empty batch": empty, "transactional batch": transactional,
		"idempotent producer": idempotent, "tombstone": tombstone, "binary value": binary, "headers": headers} {
		if !ok {
			t.Errorf("no %s", name)
		}
	}
	// The abort is in a .txnindex.
	x, err := index.OpenTransactionIndex(d.FS, segment.Path(Partition, 2559, segment.TxnIndexSuffix), 2559, index.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if all := x.All(); len(all) != 1 || all[0].ProducerID != 2000 {
		t.Errorf("txnindex %v", all)
	}
	x.Close()
}

func TestOrdersRetention(t *testing.T) {
	d, _ := Get()
	l := open(t, d, Partition)
	st, err := retention.StateOf(l)
	if err != nil {
		t.Fatal(err)
	}
	p := retention.PolicyFrom(d.Config, config.DefaultBroker())
	plan, err := p.Plan(st, Now.UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Deletions) != 2 || plan.Deletions[0].BaseOffset != 378 || plan.Deletions[1].BaseOffset != 967 {
		t.Errorf("Kafka's defaults at now delete %v, want segments 378 and 967 only", plan)
	}
	far := false
	for _, w := range plan.Warnings {
		base, _ := retention.WarningBase(w)
		if w.Kind == retention.KindFarPastTimestamp && base == 2361 {
			far = true
		}
		if base == 3248 {
			t.Errorf("the active segment is flagged: %v", w)
		}
	}
	if !far {
		t.Errorf("no far-past warning for the backlog: %v", plan.Warnings)
	}
	// Shorter retention deletes more.
	p.RetentionMs = 3 * 24 * 3600 * 1000
	if plan, _ := p.Plan(st, Now.UnixMilli()); len(plan.Deletions) != 4 {
		t.Errorf("3 days: %v", plan)
	}
}

func TestDamagedIsFound(t *testing.T) {
	d, _ := Get()
	rep, err := inspect.Verify(d.FS, Damaged, inspect.Options{Now: Now.UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, p := range rep.Problems {
		kinds[p.Kind] = true
	}
	for _, k := range []string{finding.KindLogCRC, finding.KindLogTornTail, finding.KindIndexNotBatchBoundary, finding.KindTimeOutOfOrder, finding.KindZeroPadding} {
		if !kinds[k] {
			t.Errorf("no %s in %v", k, kinds)
		}
	}
	rep, err = inspect.Verify(d.FS, Partition, inspect.Options{Now: Now.UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Errorf("orders-0 has errors: %v", rep.Problems)
	}
}

func TestExport(t *testing.T) {
	d, _ := Get()
	dir := t.TempDir()
	if err := d.Export(dir); err != nil {
		t.Fatal(err)
	}
	if err := d.Export(dir); err == nil {
		t.Error("a second export overwrote the first")
	}
	n := 0
	err := walk(d.FS, LogDir, func(name string, isDir bool) error {
		if isDir {
			return nil
		}
		n++
		want, _ := vfs.ReadFile(d.FS, name)
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		if string(got) != string(want) {
			return fmt.Errorf("%s differs", name)
		}
		mst, _ := d.FS.Stat(name)
		ost, _ := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
		if !ost.ModTime().Equal(mst.ModTime()) {
			return fmt.Errorf("%s: mtime %v, want %v", name, ost.ModTime(), mst.ModTime())
		}
		return nil
	})
	if err != nil || n < 30 {
		t.Fatalf("%d files: %v", n, err)
	}
	if !strings.HasPrefix(path.Clean(Partition), LogDir+"/") {
		t.Error("layout")
	}
}

// TestOrdersTimeline: orders-0's timeline holds what the build did, as
// the engine's code paths recorded it: a roll per roll, closing each
// segment at the next one's base; the savepoint and its release, so no
// hold is in force at Now; and the clean of the retention check 20 s
// before Now, which deleted segment 0 (whose files wait as .deleted) by
// the time rule. orders-1 has none.
func TestOrdersTimeline(t *testing.T) {
	d, _ := Get()
	tl, err := timeline.Open(d.FS, Partition, timeline.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	insts, err := tl.Instants(timeline.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tl.Pending()); n != 0 {
		t.Errorf("%d pending", n)
	}
	l := open(t, d, Partition)
	bases := []int64{0} // segment 0 is deleted, its files .deleted
	for _, s := range l.Segments() {
		bases = append(bases, s.BaseOffset())
	}
	var rolls []int64
	var clean *timeline.Clean
	for _, inst := range insts {
		if inst.State != timeline.Completed || inst.Imported {
			t.Errorf("instant %s: state %s, imported %v", inst, inst.State, inst.Imported)
		}
		switch p := inst.Result.(type) {
		case *timeline.Roll:
			i := len(rolls)
			if p.Closed == nil || i+1 >= len(bases) || p.Closed.BaseOffset != bases[i] || p.Closed.NextOffset != bases[i+1] || p.NewBaseOffset != bases[i+1] {
				t.Errorf("roll %d: %+v, want closing %d at %d", i, p, bases[i], bases[min(i+1, len(bases)-1)])
			}
			rolls = append(rolls, p.NewBaseOffset)
		case *timeline.Clean:
			clean = p
			if inst.Completed.Time() != Now.Add(-20*time.Second) {
				t.Errorf("the clean completed at %s", inst.Completed.Time())
			}
		}
	}
	if len(rolls) != len(bases)-1 {
		t.Errorf("%d rolls, want %d", len(rolls), len(bases)-1)
	}
	if clean == nil || clean.Rule != "time" || len(clean.Segments) != 1 || clean.Segments[0].BaseOffset != 0 || clean.NewLogStartOffset != bases[1] {
		t.Errorf("clean %+v", clean)
	}
	if holds := timeline.HoldsOf(insts); len(holds) != 0 {
		t.Errorf("holds in force at now: %v", holds)
	}
	if n := len(timeline.HoldsOf(insts[:len(insts)-2])); n != 1 {
		t.Errorf("%d holds before the release, want 1", n)
	}
	if _, err := d.FS.Stat(timeline.Dir(Damaged)); err == nil {
		t.Error("orders-1 has a timeline")
	}
}
