package lake

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/segkit/segkit/vfs"
)

func recordString(r Record) string {
	s := fmt.Sprintf("%d@%d %q=%q", r.Offset, r.Timestamp, r.Key, r.Value)
	for _, h := range r.Headers {
		s += fmt.Sprintf(" [%q:%q nil=%v]", h.Key, h.Value, h.Value == nil)
	}
	return s
}

// TestDirSourceCommitted: the directory source gives exactly the
// committed records (aborted ones and markers left out, across segment
// rolls and gaps), with their timestamps, keys, values and headers, and
// stops at the last stable offset while a transaction is open.
func TestDirSourceCommitted(t *testing.T) {
	fsys := vfs.NewMem()
	g := newGen(t, fsys, "/logs/orders-0")
	writeRich(g)
	end := g.next
	g.txn(20, t0+3*hour, "open-1", "open-2") // still open: the LSO stops here
	g.put(t0+3*hour+1, "after-open")
	src := openSource(t, fsys, g.dir)
	lso, _ := src.LastStableOffset()
	if lso != end {
		t.Fatalf("last stable offset %d, want %d (the open transaction's first offset)", lso, end)
	}
	for _, step := range []int64{1, 3, 1 << 40} { // reads bounded by upTo, and whole
		var got []string
		for from := int64(0); from < lso; {
			f, err := src.Fetch(from, min(from+step, lso))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range f.Records {
				got = append(got, recordString(r))
			}
			if f.Next <= from {
				t.Fatalf("no progress at %d", from)
			}
			from = f.Next
		}
		var want []string
		var offs []int64
		for off := range g.committed {
			if off < end {
				offs = append(offs, off)
			}
		}
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		for _, off := range offs {
			want = append(want, recordString(g.committed[off]))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("step %d:\n got %q\nwant %q", step, got, want)
		}
	}
	if f, err := src.Fetch(lso, 1<<40); err != nil || len(f.Records) != 0 || f.Next != lso {
		t.Fatalf("a read at the last stable offset: %d records, next %d, %v", len(f.Records), f.Next, err)
	}
}

// TestOpenTransaction: an indexer stops at the last stable offset while
// a transaction is open (its records are not indexed yet, nor the
// records after them), and indexes them once it commits.
func TestOpenTransaction(t *testing.T) { testOpenTransaction(t, openCatalog) }

func testOpenTransaction(t *testing.T, openCatalog opener) {
	ctx := t.Context()
	fsys := vfs.NewMem()
	g := newGen(t, fsys, "/logs/orders-0")
	writeRich(g)
	end := g.next
	g.txn(20, t0+3*hour, "open-1", "open-2")
	g.put(t0+3*hour+1, "after-open")
	cat := openCatalog(t, newClock())
	o := testOptions()
	if err := NewIndexer(cat, openSource(t, fsys, g.dir), o).Once(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := cat.State(ctx, 1, 0); st.Start != 0 || st.End != end {
		t.Fatalf("state %+v while a transaction is open at %d", st, end)
	}
	g.end(20, t0+3*hour+2, true)
	g.put(t0+3*hour+3, "after-commit")
	src := openSource(t, fsys, g.dir)
	if err := NewIndexer(cat, src, o).Once(ctx); err != nil {
		t.Fatal(err)
	}
	checkTiling(t, g, readBack(t, cat, src, "orders", o), 0, g.next)
}
