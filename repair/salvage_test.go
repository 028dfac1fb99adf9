package repair_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/repair"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// entryInfo is one entry of an original .log.
type entryInfo struct {
	file        string
	pos, end    int64
	first, last int64
	raw         []byte
}

// scanEntries returns the entries of every .log of dir, in offset order.
func scanEntries(t *testing.T, fsys vfs.FS, dir string) []entryInfo {
	t.Helper()
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []entryInfo
	for _, fi := range infos {
		if _, ext, err := segment.ParseFileName(fi.Name()); err != nil || ext != segment.LogSuffix {
			continue
		}
		b, err := vfs.ReadFile(fsys, path.Join(dir, fi.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s := record.NewScanner(b, fi.Name(), 0)
		for s.Next() {
			e := s.Entry()
			out = append(out, entryInfo{file: fi.Name(), pos: e.Position, end: e.Position + int64(e.Size()), first: e.BaseOffset(), last: e.LastOffset(), raw: bytes.Clone(e.Raw())})
		}
		if s.Err() != nil {
			t.Fatalf("%s: %v", fi.Name(), s.Err())
		}
	}
	return out
}

// region is a damaged byte range of one file.
type region struct {
	file       string
	start, end int64
}

// damageRealPartition copies a real partition into a Mem, applies the
// damage and returns the Mem, the original entries, and the entries each
// damaged region hits (merged into expected lost ranges per file).
func damageRealPartition(t *testing.T, src string, damage func(name string, b []byte, entries []entryInfo) []region) (*vfs.Mem, []entryInfo, []region) {
	t.Helper()
	m := copyToMem(t, src, "/in/"+filepath.Base(src))
	dir := "/in/" + filepath.Base(src)
	orig := scanEntries(t, m, dir)
	var regions []region
	files := map[string]bool{}
	for _, e := range orig {
		files[e.file] = true
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		p := path.Join(dir, name)
		b, err := vfs.ReadFile(m, p)
		if err != nil {
			t.Fatal(err)
		}
		var fe []entryInfo
		for _, e := range orig {
			if e.file == name {
				fe = append(fe, e)
			}
		}
		regions = append(regions, damage(name, b, fe)...)
		if err := vfs.WriteFile(m, p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Expected lost ranges: the union of the entries each region touches.
	var lost []region
	for _, e := range orig {
		hit := false
		for _, r := range regions {
			if r.file == e.file && r.start < e.end && r.end > e.pos {
				hit = true
			}
		}
		if !hit {
			continue
		}
		if n := len(lost); n > 0 && lost[n-1].file == e.file && lost[n-1].end == e.pos {
			lost[n-1].end = e.end
		} else {
			lost = append(lost, region{e.file, e.pos, e.end})
		}
	}
	return m, orig, lost
}

func TestSalvageRealPartition(t *testing.T) {
	src := filepath.Join(realdata.Dir(t), "macsakini__KafkaCluster/kafka/data/test-0")
	rng := rand.New(rand.NewPCG(1, 2))
	m, orig, lost := damageRealPartition(t, src, func(name string, b []byte, es []entryInfo) []region {
		var rs []region
		// Garbage over the middle of entry 20.
		g := es[20].pos + 100
		for i := g; i < g+300; i++ {
			b[i] = byte(rng.Uint32())
		}
		rs = append(rs, region{name, g, g + 300})
		// A zeroed 4 KiB block from inside entry 50.
		z := es[50].pos + 777
		clear(b[z : z+4096])
		rs = append(rs, region{name, z, z + 4096})
		// A length field of entry 90 set to garbage.
		format.PutInt32(b[es[90].pos+record.LengthOffset:], 0x7fff0000)
		rs = append(rs, region{name, es[90].pos + record.LengthOffset, es[90].pos + record.LengthOffset + 4})
		return rs
	})
	rep, err := repair.Salvage(m, "/in/test-0", m, "/out/test-0", repair.SalvageOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The lost ranges are exactly the damaged entries.
	var gotLost []region
	for _, f := range rep.Files {
		for _, l := range f.Lost {
			gotLost = append(gotLost, region{path.Base(f.File), l.Start, l.End})
			if l.Length != l.End-l.Start {
				t.Errorf("length %d of %d..%d", l.Length, l.Start, l.End)
			}
		}
	}
	if !slices.Equal(gotLost, lost) {
		t.Errorf("lost ranges %v, want %v", gotLost, lost)
	}

	// Every other entry is in the output, byte for byte, in order.
	var want [][]byte
	var lostBytes, keptBytes int64
	var missing []repair.OffsetRange
	for _, e := range orig {
		damaged := false
		for _, l := range lost {
			if e.pos >= l.start && e.end <= l.end {
				damaged = true
			}
		}
		if damaged {
			lostBytes += e.end - e.pos
			if n := len(missing); n > 0 && missing[n-1].Last == e.first-1 {
				missing[n-1].Last = e.last
			} else {
				missing = append(missing, repair.OffsetRange{First: e.first, Last: e.last})
			}
			continue
		}
		keptBytes += e.end - e.pos
		want = append(want, e.raw)
	}
	var got [][]byte
	for _, e := range scanEntries(t, m, "/out/test-0") {
		got = append(got, e.raw)
	}
	if len(got) != len(want) {
		t.Fatalf("output has %d entries, want %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("output entry %d differs from the original", i)
		}
	}
	if rep.BytesLost != lostBytes || rep.BytesKept != keptBytes || rep.Batches != int64(len(want)) || len(rep.Dropped) != 0 {
		t.Errorf("report: lost %d kept %d batches %d dropped %d; want %d, %d, %d, 0", rep.BytesLost, rep.BytesKept, rep.Batches, len(rep.Dropped), lostBytes, keptBytes, len(want))
	}
	if !slices.Equal(rep.MissingOffsets, missing) {
		t.Errorf("missing offsets %v, want %v", rep.MissingOffsets, missing)
	}
	t.Logf("test-0: %d bytes, %d entries; damaged %d byte ranges: lost %d bytes (%d entries, offsets %v), kept %d bytes (%d entries)",
		rep.Files[0].Size, len(orig), len(lost), rep.BytesLost, len(orig)-len(want), rep.MissingOffsets, rep.BytesKept, rep.Batches)

	// The output is a valid partition: no errors (the offset gaps are
	// warnings).
	vr, err := inspect.Verify(m, "/out/test-0", inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !vr.OK {
		t.Errorf("salvaged partition has errors:\n%s", dump(vr))
	}

	// Recovery, on the same damage, keeps only the prefix before the
	// first damaged entry.
	rr, err := repair.Recover(m, "/in/test-0", repair.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	firstLost := lost[0].start
	var prefix int
	for _, e := range orig {
		if e.end <= firstLost {
			prefix++
		}
	}
	if len(rr.Segments) != 1 || rr.Segments[0].SizeAfter != firstLost || rr.Segments[0].Entries != prefix || !rr.Changed {
		t.Fatalf("recover: %+v, want the segment cut at %d with %d entries", rr.Segments, firstLost, prefix)
	}
	if rr.LogEndAfter != orig[prefix].first {
		t.Errorf("recover: log end %d, want %d", rr.LogEndAfter, orig[prefix].first)
	}
	t.Logf("recover on the same damage: kept %d entries (%d bytes, offsets 0..%d); cut %d bytes holding %d valid entries (%d records, offsets %v) that salvage keeps",
		rr.Segments[0].Entries, rr.Segments[0].SizeAfter, rr.LogEndAfter-1, rr.Segments[0].Truncated, rr.Segments[0].LostEntries, rr.Segments[0].LostRecords, rr.Segments[0].LostOffsets)
}

// TestSalvageRealMultiSegment damages the second of four segments of a
// real partition: recovery cuts it and deletes the two after it, salvage
// keeps them.
func TestSalvageRealMultiSegment(t *testing.T) {
	src := filepath.Join(realdata.Dir(t), "dipendrasaini__kafka-learnning-series/tmp/kafka-logs-1/invoice-1")
	m, orig, lost := damageRealPartition(t, src, func(name string, b []byte, es []entryInfo) []region {
		if name != "00000000000000030620.log" {
			return nil
		}
		at := es[len(es)/2].pos + 2000
		clear(b[at : at+4096])
		return []region{{name, at, at + 4096}}
	})
	rep, err := repair.Salvage(m, "/in/invoice-1", m, "/out/invoice-1", repair.SalvageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var lostEntries int
	for _, e := range orig {
		if e.file == lost[0].file && e.pos >= lost[0].start && e.end <= lost[0].end {
			lostEntries++
		}
	}
	out := scanEntries(t, m, "/out/invoice-1")
	if len(out) != len(orig)-lostEntries || rep.BytesLost != lost[0].end-lost[0].start {
		t.Errorf("kept %d entries of %d (%d lost), lost %d bytes; want %d entries, %d bytes", len(out), len(orig), lostEntries, rep.BytesLost, len(orig)-lostEntries, lost[0].end-lost[0].start)
	}
	if len(rep.Files) != 4 || len(rep.Files[1].Lost) != 1 {
		t.Errorf("files %+v", rep.Files)
	}
	infos, _ := vfs.ReadDir(m, "/out/invoice-1")
	var segs int
	for _, fi := range infos {
		if _, ext, err := segment.ParseFileName(fi.Name()); err == nil && ext == segment.LogSuffix {
			segs++
		}
	}
	if segs != 4 {
		t.Errorf("output has %d segments, want 4 (one per input segment)", segs)
	}

	rr, err := repair.Recover(m, "/in/invoice-1", repair.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var deleted, deletedEntries int
	for _, d := range rr.Deleted {
		if d.WholeSegment {
			deleted++
			deletedEntries += d.Entries
		}
	}
	var cut *repair.RecoveredSegment
	for i := range rr.Segments {
		if rr.Segments[i].Truncated > 0 {
			cut = &rr.Segments[i]
		}
	}
	if deleted != 2 || cut == nil || cut.BaseOffset != 30620 {
		t.Fatalf("recover: deleted %d segments, cut %+v; want 2 and segment 30620", deleted, cut)
	}
	t.Logf("invoice-1: salvage kept %d of %d entries (lost %d bytes, offsets %v); recover cut %d bytes of segment 30620 (%d valid entries past the damage) and deleted 2 segments (%d entries): log end %d -> %d",
		len(out), len(orig), rep.BytesLost, rep.MissingOffsets, cut.Truncated, cut.LostEntries, deletedEntries, rr.LogEndBefore, rr.LogEndAfter)
}

func TestSalvageDropsDuplicates(t *testing.T) {
	f := newFixture(t, nil)
	f.add(t, 3, 2, compress.Snappy, 0)
	f.close(t)
	b := f.read(t, seg0+".log")
	pos, size := batches(t, b)
	dup := bytes.Clone(b[pos[1] : pos[1]+size[1]])
	f.write(t, f.path(seg0+".log"), append(b, dup...)) // batch 1 again at the end
	rep, err := repair.Salvage(f.fs, f.dir, f.fs, "/out/t-0", repair.SalvageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dropped) != 1 || rep.Dropped[0].Position != int64(len(b)) || rep.Batches != 3 || rep.BytesLost != 0 {
		t.Errorf("report %+v", rep)
	}
	if _, err := repair.Salvage(f.fs, f.dir, f.fs, "/out/t-0", repair.SalvageOptions{}); !errors.Is(err, repair.ErrOutputExists) {
		t.Errorf("second salvage into the same directory: %v, want ErrOutputExists", err)
	}
}

func TestSalvageTornTail(t *testing.T) {
	f := newFixture(t, nil)
	f.add(t, 3, 2, compress.None, 0)
	f.close(t)
	f.edit(t, seg0+".log", func(b []byte) []byte { return b[:len(b)-5] })
	rep, err := repair.Salvage(f.fs, f.dir, f.fs, "/out/t-0", repair.SalvageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Batches != 2 || len(rep.MissingOffsets) != 1 || rep.MissingOffsets[0] != (repair.OffsetRange{First: 4, Last: -1}) {
		t.Errorf("batches %d missing %v", rep.Batches, rep.MissingOffsets)
	}
}

func TestFindEntry(t *testing.T) {
	f := newFixture(t, nil)
	f.add(t, 3, 4, compress.Gzip, 0)
	f.close(t)
	b := f.read(t, seg0+".log")
	pos, _ := batches(t, b)
	for from, want := range map[int64]int64{0: 0, 1: int64(pos[1]), int64(pos[1]): int64(pos[1]), int64(pos[2]) + 1: -1} {
		got, ok, err := record.FindEntry(bytes.NewReader(b), int64(len(b)), from)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("FindEntry from %d = %d, want %d", from, got, want)
		}
	}
	// Garbage before a batch: found past it.
	junk := append(bytes.Repeat([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 2}, 100), b...)
	if got, ok, _ := record.FindEntry(bytes.NewReader(junk), int64(len(junk)), 0); !ok || got != 1700 {
		t.Errorf("after junk: %d %v, want 1700", got, ok)
	}
}

// TestSalvageIndexTooLarge: Salvage reads no index; one larger than Kafka
// could have written is reported, and the output is whole.
func TestSalvageIndexTooLarge(t *testing.T) {
	f := threeSegments(t)
	growIndex(t, f, seg0+".timeindex", tooLarge)
	rep, err := repair.Salvage(f.fs, f.dir, f.fs, "/out/t-0", repair.SalvageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Kind != finding.KindIndexTooLarge || rep.Findings[0].File != f.path(seg0+".timeindex") ||
		!strings.HasSuffix(rep.Findings[0].Detail, "not read: salvage reads no index, and builds the output's from the batches it keeps") {
		t.Errorf("findings %v", rep.Findings)
	}
	if rep.Records != 70 || rep.BytesLost != 0 {
		t.Errorf("kept %d records, lost %d bytes; want 70, 0", rep.Records, rep.BytesLost)
	}
}
