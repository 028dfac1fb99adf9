package lake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/vfs"
)

const hour = int64(3600_000)

// writeRich writes a partition with every case: JSON and raw values,
// nulls, headers, a committed transaction with a plain batch inside it,
// an aborted one, compaction gaps, segment rolls, a transaction aborted
// across a roll, records 70 s apart (file_window), large values
// (file_bytes), later hours (bucket), a record late into an earlier
// hour, and an aborted transaction at the end.
func writeRich(g *gen) {
	g.put(t0, `{"amount":1,"name":"a"}`, `{"amount":2.5}`, "raw text", "<null>")
	g.txn(7, t0+100, `{"amount":3}`, `{"amount":4}`)
	g.put(t0+200, `{"flag":true}`)
	g.end(7, t0+250, true)
	g.txn(8, t0+300, "aborted1", "aborted2")
	g.end(8, t0+350, false)
	g.put(t0+400, "x")
	g.gap(3)
	g.put(t0+500, "y", "z")
	g.roll()
	g.put(t0+70_000, `{"amount":"seventy"}`) // window; amount widens to string
	big := strings.Repeat("b", 400)
	g.put(t0+70_001, big, big, big) // bytes
	g.txn(9, t0+70_010, "doomed")
	g.put(t0+70_020, `{"n":[1,2]}`)
	g.roll()
	g.end(9, t0+70_030, false)
	g.put(t0+hour+5, `{"amount":5}`) // bucket
	g.gap(2)
	g.put(t0+hour+6, "h1", `{"amount":6.25}`)
	g.put(t0+hour-10, "late") // earlier bucket: the same range, another file
	g.put(t0+2*hour, "h2a", "h2b")
	g.txn(10, t0+2*hour+1, "open-then-aborted")
	g.put(t0+2*hour+2, "h2c")
	g.end(10, t0+2*hour+3, false)
	g.put(t0+2*hour+4, "last")
}

func testOptions() Options {
	return Options{Table: "orders", FileBytes: 1000, BackfillOffsets: 7}
}

// TestTilingForward indexes a partition forward from offset 0 (the table
// was created when the partition was empty) and checks that the files
// tile the offsets exactly, that aborted records, markers and gaps sit
// in the file before them, and that the file_bytes, file_window, bucket
// and caught_up triggers each closed a range.
func TestTilingForward(t *testing.T) { testTilingForward(t, openCatalog) }

func testTilingForward(t *testing.T, openCatalog opener) {
	ctx := context.Background()
	fsys := vfs.NewMem()
	g := newGen(t, fsys, "/logs/orders-0")
	cat := openCatalog(t, newClock())
	o := testOptions()
	o.Clock = newClock()
	if err := NewIndexer(cat, openSource(t, fsys, g.dir), o).Once(ctx); err != nil {
		t.Fatal(err)
	}
	writeRich(g)
	src := openSource(t, fsys, g.dir)
	if err := NewIndexer(cat, src, o).Once(ctx); err != nil {
		t.Fatal(err)
	}
	// A later run starts at the last stable offset with an aborted
	// transaction, its marker and a gap before the next record: those
	// offsets go to the file before them (the caught_up one), not to
	// the next run's first file.
	g.txn(11, t0+2*hour+10, "aborted-at-resume")
	g.end(11, t0+2*hour+11, false)
	g.gap(2)
	g.put(t0+2*hour+12, "resumed")
	src = openSource(t, fsys, g.dir)
	if err := NewIndexer(cat, src, o).Once(ctx); err != nil {
		t.Fatal(err)
	}
	ix := readBack(t, cat, src, "orders", o)
	checkTiling(t, g, ix, 0, g.next)
	got := triggers(ix.files)
	for _, want := range []Trigger{TriggerBytes, TriggerWindow, TriggerBucket, TriggerCaughtUp} {
		if got[want] == 0 {
			t.Errorf("no range closed by %s: %v", want, got)
		}
	}
	// The late record made a range of two buckets: two files, one range.
	two := false
	for i := 1; i < len(ix.files); i++ {
		a, b := ix.files[i-1], ix.files[i]
		if a.StartOffset == b.StartOffset && a.EndOffset == b.EndOffset && a.Bucket < b.Bucket {
			two = true
		}
	}
	if !two {
		t.Error("no range with files in two buckets")
	}
	// The aborted transaction's offsets 8..10 and gap 12..14 lie in the
	// range that holds offsets 0..7.
	for _, f := range ix.files {
		if f.StartOffset == 0 && f.EndOffset < 16 {
			t.Errorf("first range ends at %d, before the gap and the records after it", f.EndOffset)
		}
	}
}

// TestTilingBackfill indexes the same partition by backfill alone
// (history all, the table created at its end): chunks of 7 offsets,
// backwards; the files tile [0, end) and the chunk trigger is used.
func TestTilingBackfill(t *testing.T) { testTilingBackfill(t, openCatalog) }

func testTilingBackfill(t *testing.T, openCatalog opener) {
	ctx := context.Background()
	fsys := vfs.NewMem()
	g := newGen(t, fsys, "/logs/orders-0")
	writeRich(g)
	cat := openCatalog(t, newClock())
	o := testOptions()
	o.BackfillOffsets = 12 // a chunk holds the bytes trigger's range
	src := openSource(t, fsys, g.dir)
	if err := NewIndexer(cat, src, o).Once(ctx); err != nil {
		t.Fatal(err)
	}
	ix := readBack(t, cat, src, "orders", o)
	checkTiling(t, g, ix, 0, g.next)
	got := triggers(ix.files)
	for _, want := range []Trigger{TriggerChunk, TriggerBytes, TriggerWindow, TriggerBucket} {
		if got[want] == 0 {
			t.Errorf("no range closed by %s: %v", want, got)
		}
	}
	st, _, _ := cat.State(ctx, 1, 0)
	if st.Start != 0 || st.End != g.next || st.BackfillTo != 0 {
		t.Errorf("state %+v, want [0, %d) backfilled to 0", st, g.next)
	}
}

// TestAgeTrigger: a live range whose first record was read file_window
// ago closes (age) at what was read, though no record came after it.
func TestAgeTrigger(t *testing.T) { testAgeTrigger(t, openCatalog) }

func testAgeTrigger(t *testing.T, openCatalog opener) {
	ctx := context.Background()
	fsys := vfs.NewMem()
	g := newGen(t, fsys, "/logs/orders-0")
	clk := newClock()
	cat := openCatalog(t, clk)
	o := testOptions()
	o.Clock, o.History = clk, History{Mode: HistoryNone}
	x := NewIndexer(cat, openSource(t, fsys, g.dir), o)
	if _, err := x.Step(ctx); err != nil {
		t.Fatal(err)
	}
	g.put(t0, "a", "b")
	g.txn(3, t0+1, "aborted")
	g.end(3, t0+2, false)
	for range 2 {
		if _, err := x.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	id, _ := cat.Table(ctx, "orders")
	if files, _ := cat.Files(ctx, id, 0, false); len(files) != 0 {
		t.Fatalf("%d files before file_window passed", len(files))
	}
	// Steps every 10 s (the lease is renewed on the way) until the
	// range's first record was read 60 s ago.
	for range 6 {
		clk.add(10 * time.Second)
		if _, err := x.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	files, err := cat.Files(ctx, id, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Trigger != TriggerAge || files[0].StartOffset != 0 || files[0].EndOffset != g.next-1 || files[0].Rows != 2 {
		t.Fatalf("files %+v, want one [0, %d] of 2 rows closed by age", files, g.next-1)
	}
}

// TestLeaseLateWrite: an indexer whose lease expired and was taken by
// another cannot write: its commit is rejected with a *LeaseError
// (ErrLeaseLost) and adds no file; the new holder's commits go on.
func TestLeaseLateWrite(t *testing.T) { testLeaseLateWrite(t, openCatalog) }

func testLeaseLateWrite(t *testing.T, openCatalog opener) {
	ctx := context.Background()
	clk := newClock()
	cat := openCatalog(t, clk)
	id, err := cat.Table(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	a, err := cat.AcquireLease(ctx, id, 0, "a", DefaultLeaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.AcquireLease(ctx, id, 0, "b", DefaultLeaseTTL); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("b took a held lease: %v", err)
	}
	if err := cat.InitState(ctx, a, PartitionState{Start: 0, End: 0}); err != nil {
		t.Fatal(err)
	}
	file := func(s, e int64) DataFile {
		return DataFile{StartOffset: s, EndOffset: e, Rows: 1, Bytes: 10, Checksum: "sha256:x", Footer: []byte("PAR1"), Trigger: TriggerBytes}
	}
	if _, err := cat.Commit(ctx, a, Commit{Dir: Forward, Start: 0, End: 9, Files: []DataFile{file(0, 9)}, BackfillTo: -1}); err != nil {
		t.Fatal(err)
	}
	clk.add(DefaultLeaseTTL + time.Millisecond) // a pauses past its lease
	b, err := cat.AcquireLease(ctx, id, 0, "b", DefaultLeaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	if b.Token <= a.Token {
		t.Fatalf("token %d after %d: not a new fencing token", b.Token, a.Token)
	}
	tests := []struct {
		name string
		do   func() error
	}{
		{"commit", func() error {
			_, err := cat.Commit(ctx, a, Commit{Dir: Forward, Start: 10, End: 19, Files: []DataFile{file(10, 19)}, BackfillTo: -1})
			return err
		}},
		{"renew", func() error { _, err := cat.RenewLease(ctx, a, DefaultLeaseTTL); return err }},
		{"expire", func() error { _, err := cat.Expire(ctx, a, 100); return err }},
	}
	for _, tt := range tests {
		err := tt.do()
		var le *LeaseError
		if !errors.As(err, &le) || !errors.Is(err, ErrLeaseLost) || le.Owner != "b" {
			t.Errorf("%s with the lost lease: %v, want a *LeaseError (ErrLeaseLost) naming b", tt.name, err)
		}
	}
	files, err := cat.Files(ctx, id, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("%d files after the late write, want 1", len(files))
	}
	// Even an expired lease no one took is lost: a commit needs an
	// unexpired lease.
	clk.add(DefaultLeaseTTL + time.Millisecond)
	if _, err := cat.Commit(ctx, b, Commit{Dir: Forward, Start: 10, End: 19, BackfillTo: -1}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("commit on an expired lease: %v", err)
	}
	b, err = cat.AcquireLease(ctx, id, 0, "b", DefaultLeaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Commit(ctx, b, Commit{Dir: Forward, Start: 10, End: 19, Files: []DataFile{file(10, 19)}, BackfillTo: -1}); err != nil {
		t.Fatal(err)
	}
	// A commit that is not next to the indexed range is refused.
	if _, err := cat.Commit(ctx, b, Commit{Dir: Forward, Start: 25, End: 30, BackfillTo: -1}); !errors.Is(err, ErrNotContiguous) {
		t.Fatalf("a commit leaving a gap: %v", err)
	}
}

// TestIndexerLosesLease: an indexer paused past its lease, whose
// partition another indexer took, fails its next write with
// ErrLeaseLost and adds nothing; the other goes on from the end of the
// indexed range.
func TestIndexerLosesLease(t *testing.T) { testIndexerLosesLease(t, openCatalog) }

func testIndexerLosesLease(t *testing.T, openCatalog opener) {
	ctx := context.Background()
	fsys := vfs.NewMem()
	g := newGen(t, fsys, "/logs/orders-0")
	clk := newClock()
	cat := openCatalog(t, clk)
	o := testOptions()
	o.Clock, o.History = clk, History{Mode: HistoryNone}
	a := NewIndexer(cat, openSource(t, fsys, g.dir), o)
	a.o.Owner = "a"
	if _, err := a.Step(ctx); err != nil {
		t.Fatal(err)
	}
	g.put(t0, "a1", "a2")
	g.put(t0+61_000, "a3") // closes [0, 1] at the window
	clk.add(DefaultLeaseTTL + time.Second)
	b := NewIndexer(cat, openSource(t, fsys, g.dir), o)
	b.o.Owner = "b"
	if err := b.Once(ctx); err != nil {
		t.Fatal(err)
	}
	id, _ := cat.Table(ctx, "orders")
	before, _ := cat.Files(ctx, id, 0, true)
	_, err := a.Step(ctx)
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("the paused indexer's step: %v, want ErrLeaseLost", err)
	}
	after, _ := cat.Files(ctx, id, 0, true)
	if len(after) != len(before) {
		t.Fatalf("%d files after the late write, %d before", len(after), len(before))
	}
	checkTiling(t, g, readBack(t, cat, openSource(t, fsys, g.dir), "orders", o), 0, g.next)
}

// TestStopRestart: an indexer stopped mid-range (its open range only in
// memory) and a new one started after more records were appended: no
// offset is indexed twice or missed.
func TestStopRestart(t *testing.T) { testStopRestart(t, openCatalog) }

func testStopRestart(t *testing.T, openCatalog opener) {
	for _, stopAfter := range []int{1, 2, 3} {
		t.Run(fmt.Sprint("stop_after_", stopAfter), func(t *testing.T) {
			ctx := context.Background()
			fsys := vfs.NewMem()
			g := newGen(t, fsys, "/logs/orders-0")
			clk := newClock()
			cat := openCatalog(t, clk)
			o := testOptions()
			o.Clock = clk
			if err := NewIndexer(cat, openSource(t, fsys, g.dir), o).Once(ctx); err != nil {
				t.Fatal(err)
			}
			writeRich(g)
			// a crashes (a panic unwinds it: no release, nothing more
			// written) after stopAfter commits, with a range in memory.
			a := NewIndexer(cat, openSource(t, fsys, g.dir), o)
			commits := 0
			type crash struct{}
			a.afterCommit = func(Commit) {
				if commits++; commits == stopAfter {
					panic(crash{})
				}
			}
			func() {
				defer func() {
					if _, ok := recover().(crash); !ok {
						t.Fatal("a did not crash")
					}
				}()
				a.Once(ctx)
			}()
			// a never released its lease (as after kill -9): b waits for
			// it to expire.
			g.put(t0+3*hour, "after-stop-1", `{"amount":7}`)
			if err := NewIndexer(cat, openSource(t, fsys, g.dir), o).Once(ctx); !errors.Is(err, ErrLeaseHeld) {
				t.Fatalf("b before a's lease expired: %v", err)
			}
			clk.add(DefaultLeaseTTL + time.Second)
			src := openSource(t, fsys, g.dir)
			if err := NewIndexer(cat, src, o).Once(ctx); err != nil {
				t.Fatal(err)
			}
			checkTiling(t, g, readBack(t, cat, src, "orders", o), 0, g.next)
		})
	}
}

// TestBackfill: history all, since and none, backfilled in chunks of 7
// while live indexing goes on (records appended between steps), give the
// files a single forward pass gives: the same rows over the same
// offsets, tiled exactly.
func TestBackfill(t *testing.T) { testBackfill(t, openCatalog) }

func testBackfill(t *testing.T, openCatalog opener) {
	ctx := context.Background()
	since := time.UnixMilli(t0 + hour) // the first record at or after it is offset 29's neighbourhood
	tests := []struct {
		name string
		h    History
	}{
		{"all", History{Mode: HistoryAll}},
		{"since", History{Mode: HistorySince, Since: since}},
		{"none", History{Mode: HistoryNone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			g := newGen(t, fsys, "/logs/orders-0")
			writeRich(g)
			lso0 := g.next
			clk := newClock()
			cat := openCatalog(t, clk)
			o := testOptions()
			o.Clock, o.History = clk, tt.h
			src := openSource(t, fsys, g.dir)
			x := NewIndexer(cat, src, o)
			for i := range 12 {
				if _, err := x.Step(ctx); err != nil {
					t.Fatal(err)
				}
				g.put(t0+3*hour+int64(i)*1000, fmt.Sprintf("live-%d", i))
				clk.add(time.Second)
			}
			if err := x.Once(ctx); err != nil {
				t.Fatal(err)
			}
			from := lso0
			switch tt.h.Mode {
			case HistoryAll:
				from = 0
			case HistorySince:
				o, ok, err := src.OffsetForTime(since)
				if err != nil || !ok {
					t.Fatal(ok, err)
				}
				from = o
			}
			ix := readBack(t, cat, src, "orders", o)
			checkTiling(t, g, ix, from, g.next)
			if tt.h.Mode != HistoryNone && triggers(ix.files)[TriggerChunk] == 0 {
				t.Errorf("no chunk: %v", triggers(ix.files))
			}
		})
	}
}

// TestRetention: files wholly below the earliest offset are marked
// expired: kept, and listed only when asked.
func TestRetention(t *testing.T) { testRetention(t, openCatalog) }

func testRetention(t *testing.T, openCatalog opener) {
	ctx := context.Background()
	fsys := vfs.NewMem()
	g := newGen(t, fsys, "/logs/orders-0")
	writeRich(g)
	cat := openCatalog(t, newClock())
	o := testOptions()
	src := openSource(t, fsys, g.dir)
	if err := NewIndexer(cat, src, o).Once(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.l.IncrementLogStartOffset(20); err != nil {
		t.Fatal(err)
	}
	g.put(t0+3*hour, "more")
	src2 := openSource(t, fsys, g.dir)
	if err := NewIndexer(cat, src2, o).Once(ctx); err != nil {
		t.Fatal(err)
	}
	all, _ := cat.Files(ctx, 1, 0, true)
	live, _ := cat.Files(ctx, 1, 0, false)
	n := 0
	for _, f := range all {
		if f.Expired != (f.EndOffset < 20) {
			t.Errorf("file [%d, %d] expired %v with the earliest offset at 20", f.StartOffset, f.EndOffset, f.Expired)
		}
		if f.Expired {
			n++
		}
	}
	if n == 0 || len(live) != len(all)-n {
		t.Fatalf("%d expired of %d, %d listed", n, len(all), len(live))
	}
}

// TestRebuildAcrossProcesses: the files rebuilt by other processes, with
// TZ=UTC and TZ=Asia/Kolkata, have the checksums the catalog holds.
func TestRebuildAcrossProcesses(t *testing.T) {
	if dir := os.Getenv("SEGKIT_LAKE_REBUILD_DIR"); dir != "" {
		rebuildChild(t, dir)
		return
	}
	ctx := context.Background()
	dir := t.TempDir()
	pdir := filepath.Join(dir, "logs", "orders-0")
	g := newGen(t, vfs.OS(), pdir)
	writeRich(g)
	g.close()
	cat, err := OpenSQLite(ctx, filepath.Join(dir, "catalog.db"), StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src := openSource(t, vfs.OS(), pdir)
	if err := NewIndexer(cat, src, testOptions()).Once(ctx); err != nil {
		t.Fatal(err)
	}
	files, err := cat.Files(ctx, 1, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, f := range files {
		fmt.Fprintf(&want, "%d %s\n", f.ID, f.Checksum)
	}
	cat.Close()
	for _, tz := range []string{"UTC", "Asia/Kolkata"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRebuildAcrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SEGKIT_LAKE_REBUILD_DIR="+dir, "TZ="+tz)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("TZ=%s: %v\n%s", tz, err, out)
		}
		got := between(string(out), "CHECKSUMS\n", "END\n")
		if got != want.String() {
			t.Fatalf("TZ=%s: checksums\n%s\nwant\n%s", tz, got, want.String())
		}
	}
}

func between(s, a, b string) string {
	i := strings.Index(s, a)
	j := strings.Index(s, b)
	if i < 0 || j < i {
		return ""
	}
	return s[i+len(a) : j]
}

// rebuildChild rebuilds every file of the catalog in dir and prints the
// checksums of the bytes it got.
func rebuildChild(t *testing.T, dir string) {
	ctx := context.Background()
	cat, err := OpenSQLite(ctx, filepath.Join(dir, "catalog.db"), StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	src := openSource(t, vfs.OS(), filepath.Join(dir, "logs", "orders-0"))
	files, err := cat.Files(ctx, 1, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("CHECKSUMS\n")
	for _, f := range files {
		out, err := Rebuild(ctx, cat, src, 1, f, testOptions())
		var ce *ChecksumError
		if err != nil && !errors.As(err, &ce) {
			t.Fatal(err)
		}
		// The checksum of the bytes this process built, whatever the
		// catalog says.
		sum := sha256.Sum256(out)
		fmt.Fprintf(&b, "%d sha256:%s\n", f.ID, hex.EncodeToString(sum[:]))
	}
	b.WriteString("END\n")
	fmt.Print(b.String())
}

// TestRetentionOvertakes: records deleted by retention before the
// indexer read them (it was stopped too long) are skipped: the indexed
// range moves past them with no file, the files after tile the rest,
// and indexing goes on.
func TestRetentionOvertakes(t *testing.T) { testRetentionOvertakes(t, openCatalog) }

func testRetentionOvertakes(t *testing.T, openCatalog opener) {
	ctx := context.Background()
	fsys := vfs.NewMem()
	g := newGen(t, fsys, "/logs/orders-0")
	cat := openCatalog(t, newClock())
	o := testOptions()
	if err := NewIndexer(cat, openSource(t, fsys, g.dir), o).Once(ctx); err != nil {
		t.Fatal(err)
	}
	writeRich(g)
	g.roll()
	if err := g.l.IncrementLogStartOffset(23); err != nil {
		t.Fatal(err)
	}
	g.put(t0+3*hour, "after-retention")
	src := openSource(t, fsys, g.dir)
	if err := NewIndexer(cat, src, o).Once(ctx); err != nil {
		t.Fatal(err)
	}
	st, _, _ := cat.State(ctx, 1, 0)
	if st.End != g.next {
		t.Fatalf("state %+v, want the end at %d", st, g.next)
	}
	ix := readBack(t, cat, src, "orders", o)
	checkTiling(t, g, ix, 23, g.next)
}

// TestCatalogLookups: a file by id is the listing's entry (statistics
// included), the tables and partitions are listed, an unknown id is
// ErrNoFile.
func TestCatalogLookups(t *testing.T) { testCatalogLookups(t, openCatalog) }

func testCatalogLookups(t *testing.T, openCatalog opener) {
	ctx := context.Background()
	fsys := vfs.NewMem()
	g := newGen(t, fsys, "/logs/orders-0")
	writeRich(g)
	cat := openCatalog(t, newClock())
	if err := NewIndexer(cat, openSource(t, fsys, g.dir), testOptions()).Once(ctx); err != nil {
		t.Fatal(err)
	}
	files, err := cat.Files(ctx, 1, 0, false)
	if err != nil || len(files) == 0 {
		t.Fatal(len(files), err)
	}
	for _, f := range files {
		got, err := cat.File(ctx, f.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, f) || got.Table != 1 || len(got.Columns) == 0 {
			t.Fatalf("File(%d) = %+v\nlisted %+v", f.ID, got, f)
		}
	}
	if _, err := cat.File(ctx, 1<<40); !errors.Is(err, ErrNoFile) {
		t.Fatalf("an unknown id: %v", err)
	}
	tables, err := cat.Tables(ctx)
	if err != nil || len(tables) != 1 || tables["orders"] != 1 {
		t.Fatalf("tables %v, %v", tables, err)
	}
	parts, err := cat.Partitions(ctx, 1)
	if err != nil || len(parts) != 1 || parts[0].Partition != 0 || parts[0].Start != 0 || parts[0].End != g.next {
		t.Fatalf("partitions %+v, %v", parts, err)
	}
}

// TestOnceCanceled: a canceled Once releases its lease (another indexer
// starts at once) and what it committed stays.
func TestOnceCanceled(t *testing.T) {
	ctx := context.Background()
	fsys := vfs.NewMem()
	g := newGen(t, fsys, "/logs/orders-0")
	writeRich(g)
	cat := openCatalog(t, newClock())
	o := testOptions()
	cctx, cancel := context.WithCancel(ctx)
	a := NewIndexer(cat, openSource(t, fsys, g.dir), o)
	a.afterCommit = func(Commit) { cancel() }
	if err := a.Once(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled Once: %v", err)
	}
	src := openSource(t, fsys, g.dir)
	if err := NewIndexer(cat, src, o).Once(ctx); err != nil {
		t.Fatalf("the next indexer: %v", err)
	}
	checkTiling(t, g, readBack(t, cat, src, "orders", o), 0, g.next)
}

// failingSource fails every Fetch after the first n.
type failingSource struct {
	Source
	n int
}

var errSourceBroke = errors.New("the source broke")

func (f *failingSource) Fetch(from, upTo int64) (Fetched, error) {
	if f.n <= 0 {
		return Fetched{}, errSourceBroke
	}
	f.n--
	return f.Source.Fetch(from, upTo)
}

// TestOnceFailureReleasesLease: an indexer whose source fails in the
// middle of Once returns the error and gives its lease up at once: the
// next indexer (another owner) takes the partition without waiting out
// the lease's TTL, and the files still tile the offsets.
func TestOnceFailureReleasesLease(t *testing.T) {
	ctx := context.Background()
	fsys := vfs.NewMem()
	g := newGen(t, fsys, "/logs/orders-0")
	writeRich(g)
	cat := openCatalog(t, newClock()) // the clock does not move: a held lease stays held
	o := testOptions()
	a := NewIndexer(cat, &failingSource{Source: openSource(t, fsys, g.dir), n: 1}, o)
	if err := a.Once(ctx); !errors.Is(err, errSourceBroke) {
		t.Fatalf("Once with a failing source: %v", err)
	}
	src := openSource(t, fsys, g.dir)
	b := o
	b.Owner = "the next one"
	if err := NewIndexer(cat, src, b).Once(ctx); err != nil {
		t.Fatalf("the next indexer, right after the failure: %v", err)
	}
	checkTiling(t, g, readBack(t, cat, src, "orders", o), 0, g.next)
}
