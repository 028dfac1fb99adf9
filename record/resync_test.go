package record_test

import (
	"sync/atomic"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/record"
)

// garbageFile is a ReaderAt over size bytes of pseudo-random garbage
// (a hash of each 8-byte word's position, so nothing is held in
// memory) with entry at position at, counting the bytes read.
type garbageFile struct {
	size, at int64
	entry    []byte
	read     atomic.Int64
}

func (g *garbageFile) ReadAt(p []byte, off int64) (int, error) {
	g.read.Add(int64(len(p)))
	for i := range p {
		pos := off + int64(i)
		if pos >= g.at && pos < g.at+int64(len(g.entry)) {
			p[i] = g.entry[pos-g.at]
			continue
		}
		p[i] = byte(splitmix64(uint64(pos>>3)) >> (8 * (pos & 7)))
	}
	return len(p), nil
}

// splitmix64 is a hash of x (SplitMix64's output function).
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// TestFindEntryReadsLittle: resynchronising over 256 KiB of garbage at
// the start of a 1 GiB file does not read the huge legacy messages its
// garbage lengths claim. Reading the whole of every plausible legacy
// message (28 of them here) before checking its value length read 17.6
// GB (80 s). A plausible v2 batch's checksum is still computed over its
// claimed length (none reaches it here; about one per 256 KiB of
// garbage in other data).
func TestFindEntryReadsLittle(t *testing.T) {
	var b record.Builder
	spec := record.NewBatchSpec(7, compress.None)
	entry, err := b.AppendBatch(nil, &spec, []record.Record{{Value: []byte("found")}})
	if err != nil {
		t.Fatal(err)
	}
	const garbage = 256 << 10
	g := &garbageFile{size: 1 << 30, at: garbage, entry: entry}
	got, ok, err := record.FindEntry(g, g.size, 0)
	if err != nil || !ok || got != garbage {
		t.Fatalf("FindEntry = %d, %v, %v; want %d, true", got, ok, err, garbage)
	}
	if n := g.read.Load(); n > g.size/4 {
		t.Errorf("FindEntry read %d bytes to cross %d bytes of garbage", n, garbage)
	} else {
		t.Logf("FindEntry read %d bytes to cross %d bytes of garbage", n, garbage)
	}
}
