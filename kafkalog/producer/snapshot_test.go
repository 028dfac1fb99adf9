package producer

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

func mustHex(s string) []byte {
	var clean []byte
	for _, c := range []byte(s) {
		if c != ' ' && c != '\n' && c != '\t' {
			clean = append(clean, c)
		}
	}
	b, err := hex.DecodeString(string(clean))
	if err != nil {
		panic(err)
	}
	return b
}

func randomEntries(r *rand.Rand, n int) []Entry {
	es := make([]Entry, n)
	for i := range es {
		es[i] = Entry{
			ProducerID: r.Int64(), Epoch: int16(r.Uint32()), LastSequence: int32(r.Uint32()), LastOffset: r.Int64(),
			OffsetDelta: int32(r.Uint32()), Timestamp: r.Int64(), CoordinatorEpoch: int32(r.Uint32()), CurrentTxnFirstOffset: r.Int64(),
		}
	}
	return es
}

func TestSnapshotCodec(t *testing.T) {
	tests := []struct {
		name    string
		entries []Entry
		raw     []byte
	}{
		// The empty 10-byte form found all over the real data.
		{"empty", nil, mustHex("0001 48674bc7 00000000")},
		// The ksqlDB command topic's snapshot after one committed
		// transaction (ItumelengMogase set, offset 2).
		{"one", []Entry{{0, 0, 0, 0, 0, 1728561475581, 0, -1}}, mustHex(`0001 0ea0d37a 00000001
			0000000000000000 0000 00000000 0000000000000000 00000000 00000192764aeffd 00000000 ffffffffffffffff`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendSnapshot(nil, tt.entries)
			if !bytes.Equal(got, tt.raw) {
				t.Errorf("AppendSnapshot =\n%x\nwant\n%x", got, tt.raw)
			}
			if len(got) != SizeSnapshot(len(tt.entries)) {
				t.Errorf("SizeSnapshot = %d, encoded %d", SizeSnapshot(len(tt.entries)), len(got))
			}
			dec, err := DecodeSnapshot(tt.raw)
			if err != nil || (len(dec) != 0 || len(tt.entries) != 0) && !reflect.DeepEqual(dec, tt.entries) {
				t.Errorf("DecodeSnapshot = %v, %v", dec, err)
			}
		})
	}
	r := rand.New(rand.NewPCG(1, 1))
	for n := range 20 {
		es := randomEntries(r, n)
		prefix := []byte("prefix")
		b := AppendSnapshot(prefix[:len(prefix):len(prefix)], es)
		if string(b[:6]) != "prefix" {
			t.Fatal("AppendSnapshot changed dst's bytes")
		}
		got, err := DecodeSnapshot(b[6:])
		if err != nil || !reflect.DeepEqual(got, es) && n > 0 {
			t.Fatalf("n=%d: round trip %v, %v", n, got, err)
		}
	}
}

func TestDecodeSnapshotErrors(t *testing.T) {
	good := AppendSnapshot(nil, randomEntries(rand.New(rand.NewPCG(2, 2)), 3))
	set := func(off int, v []byte) []byte {
		b := bytes.Clone(good)
		copy(b[off:], v)
		return b
	}
	recrc := func(b []byte) []byte {
		format.PutUint32(b[crcOffset:], format.CRC32C(b[entriesOffset:]))
		return b
	}
	tests := []struct {
		name string
		in   []byte
		off  int64
		err  error
		msg  string
	}{
		{"nil", nil, 0, format.ErrTruncated, "Snapshot failed schema validation"},
		{"short", good[:9], 9, format.ErrTruncated, "Snapshot failed schema validation"},
		{"torn_entries", good[:SnapshotHeaderSize+EntrySize+7], countOffset, format.ErrTruncated, "3 entries need 138 bytes, only 53 available"},
		{"count_too_large", set(countOffset, []byte{0x7f, 0xff, 0xff, 0xff}), countOffset, format.ErrTruncated, "2147483647 entries need"},
		{"count_negative", set(countOffset, []byte{0xff, 0xff, 0xff, 0xff}), countOffset, format.ErrInvalid, "Array size -1 cannot be negative"},
		{"version_0", set(0, []byte{0, 0}), 0, format.ErrInvalid, "Snapshot contained an unknown file version 0"},
		{"version_2", recrc(set(0, []byte{0, 2})), 0, format.ErrInvalid, "unknown file version 2"},
		{"bad_crc", set(crcOffset, []byte{0, 0, 0, 0}), crcOffset, format.ErrCRC, "Snapshot is corrupt (CRC is no longer valid). Stored crc: 0. Computed crc: "},
		{"flipped_entry_byte", set(40, []byte{good[40] ^ 0x10}), crcOffset, format.ErrCRC, "CRC is no longer valid"},
		{"zeroed_tail", append(good[:len(good)-8:len(good)-8], make([]byte, 8)...), crcOffset, format.ErrCRC, "CRC"},
		{"trailing_bad_crc", append(bytes.Clone(good), 1, 2, 3), crcOffset, format.ErrCRC, "CRC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeSnapshot(tt.in)
			var ce *format.CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want a CorruptionError wrapping %v", err, tt.err)
			}
			if ce.Offset != tt.off || !bytes.Contains([]byte(err.Error()), []byte(tt.msg)) {
				t.Errorf("error %q at %d, want %q at %d", err, ce.Offset, tt.msg, tt.off)
			}
		})
	}
	// Every proper prefix is an error (a torn write is never read as a
	// shorter valid snapshot), and truncation is reported as such.
	for n := range len(good) {
		_, err := DecodeSnapshot(good[:n])
		if !errors.Is(err, format.ErrTruncated) {
			t.Errorf("prefix %d: %v", n, err)
		}
	}
	// Every single-bit flip outside the version is caught by the CRC or
	// the structure checks.
	for i := 2; i < len(good); i++ {
		for bit := range 8 {
			b := bytes.Clone(good)
			b[i] ^= 1 << bit
			if _, err := DecodeSnapshot(b); err == nil {
				t.Fatalf("flip of byte %d bit %d not detected", i, bit)
			}
		}
	}
	// Bytes after the last entry are covered by the CRC and ignored, as
	// Kafka's Schema.read ignores them.
	tr := recrc(append(bytes.Clone(good), 9, 9))
	if got, err := DecodeSnapshot(tr); err != nil || len(got) != 3 {
		t.Errorf("trailing bytes with a valid CRC: %d entries, %v", len(got), err)
	}
}

// TestDecodeSnapshotAllocs checks that a lying entry count allocates
// nothing: the count is checked against the bytes first.
func TestDecodeSnapshotAllocs(t *testing.T) {
	b := mustHex("0001 00000000 7fffffff")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		DecodeSnapshot(b)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 100; per > 1024 {
		t.Errorf("%d bytes allocated per decode of a lying count", per)
	}
	good := AppendSnapshot(nil, randomEntries(rand.New(rand.NewPCG(3, 3)), 4))
	if a := testing.AllocsPerRun(100, func() { DecodeSnapshot(good) }); a != 1 {
		t.Errorf("DecodeSnapshot: %v allocations, want 1", a)
	}
	dst := make([]byte, 0, 1024)
	es := randomEntries(rand.New(rand.NewPCG(4, 4)), 4)
	if a := testing.AllocsPerRun(100, func() { AppendSnapshot(dst[:0], es) }); a != 0 {
		t.Errorf("AppendSnapshot into a big enough dst: %v allocations", a)
	}
}

func TestSnapshotFiles(t *testing.T) {
	m := vfs.NewMem()
	must(t, m.MkdirAll("p", 0o755))
	if offs, err := ListSnapshots(m, "p"); err != nil || len(offs) != 0 {
		t.Fatalf("empty dir: %v %v", offs, err)
	}
	if offs, err := ListSnapshots(m, "missing"); err != nil || offs != nil {
		t.Errorf("missing dir: %v %v", offs, err)
	}
	es := []Entry{{ProducerID: 7, LastOffset: 3, LastSequence: 3, Timestamp: 99, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}}
	for _, off := range []int64{35, 2, 1 << 40} {
		must(t, WriteSnapshot(m, "p", off, es))
	}
	for _, name := range []string{"x.snapshot", "00000000000000000009.snapshot.deleted", "00000000000000000005.log", "0000000000000000001.snapshot"} {
		must(t, vfs.WriteFile(m, "p/"+name, nil, 0o644))
	}
	must(t, m.MkdirAll("p/00000000000000000004.snapshot", 0o755))
	offs, err := ListSnapshots(m, "p")
	if err != nil || !reflect.DeepEqual(offs, []int64{2, 35, 1 << 40}) {
		t.Errorf("ListSnapshots = %v, %v", offs, err)
	}
	if SnapshotFileName(35) != "00000000000000000035.snapshot" {
		t.Errorf("SnapshotFileName(35) = %q", SnapshotFileName(35))
	}
	got, err := ReadSnapshot(m, "p", 35)
	if err != nil || !reflect.DeepEqual(got, es) {
		t.Errorf("ReadSnapshot = %v, %v", got, err)
	}
	// A longer stale file at the same offset is truncated, not left with
	// a tail (Kafka's writer would leave one, and then fail the CRC).
	must(t, WriteSnapshot(m, "p", 2, randomEntries(rand.New(rand.NewPCG(5, 5)), 10)))
	must(t, WriteSnapshot(m, "p", 2, nil))
	if got, err := ReadSnapshot(m, "p", 2); err != nil || len(got) != 0 {
		t.Errorf("rewritten snapshot: %v, %v", got, err)
	}
	must(t, vfs.WriteFile(m, "p/"+SnapshotFileName(35), []byte{0, 1, 2}, 0o644))
	_, err = ReadSnapshot(m, "p", 35)
	var ce *format.CorruptionError
	if !errors.As(err, &ce) || ce.Path != "p/00000000000000000035.snapshot" {
		t.Errorf("corrupt file: %v", err)
	}
	must(t, DeleteSnapshot(m, "p", 35))
	must(t, DeleteSnapshot(m, "p", 35))
	if offs, _ := ListSnapshots(m, "p"); !reflect.DeepEqual(offs, []int64{2, 1 << 40}) {
		t.Errorf("after delete: %v", offs)
	}
}

// TestWriteSnapshotCrash crashes WriteSnapshot at every mutating
// operation: after the crash the file is missing, or decodes to the
// entries written, or fails to decode with a typed error. It is never a
// different valid snapshot.
func TestWriteSnapshotCrash(t *testing.T) {
	es := randomEntries(rand.New(rand.NewPCG(6, 6)), 200) // ~9 KiB: several blocks
	for k := 0; ; k++ {
		m := vfs.NewMem()
		must(t, m.MkdirAll("p", 0o755))
		must(t, vfs.SyncDir(m, "."))
		crash := vfs.CrashAfter(k)
		err := WriteSnapshot(vfs.WithFaults(m, crash), "p", 100, es)
		for _, cfg := range []vfs.CrashConfig{{UnsyncedDataPercent: 0}, {UnsyncedDataPercent: 50, TornWrites: true}, {UnsyncedDataPercent: 100, TornWrites: true}, {UnsyncedDataPercent: 100}} {
			for seed := range uint64(30) {
				cfg.Seed = seed
				c := m.CrashClone(cfg)
				got, rerr := ReadSnapshot(c, "p", 100)
				var ce *format.CorruptionError
				switch {
				case rerr == nil:
					if !reflect.DeepEqual(got, es) {
						t.Fatalf("k=%d %+v: a different valid snapshot", k, cfg)
					}
				case isNotExist(rerr):
					// No directory fsync, as in Kafka: even a completed
					// write may lose its directory entry.
				case errors.As(rerr, &ce):
					if !crash.Crashed() {
						t.Fatalf("k=%d %+v: a completed, fsynced write reads back corrupt: %v", k, cfg, rerr)
					}
				default:
					t.Fatalf("k=%d %+v: untyped error %v", k, cfg, rerr)
				}
			}
		}
		if !crash.Crashed() {
			must(t, err)
			break
		}
	}
}

func TestSequenceArithmetic(t *testing.T) {
	for _, tt := range []struct{ seq, delta, last int32 }{
		{0, 0, 0}, {5, 3, 8}, {math.MaxInt32, 0, math.MaxInt32}, {math.MaxInt32, 1, 0}, {math.MaxInt32 - 1, 5, 3},
	} {
		if got := incrementSequence(tt.seq, tt.delta); got != tt.last {
			t.Errorf("incrementSequence(%d, %d) = %d, want %d", tt.seq, tt.delta, got, tt.last)
		}
		if got := decrementSequence(tt.last, tt.delta); got != tt.seq {
			t.Errorf("decrementSequence(%d, %d) = %d, want %d", tt.last, tt.delta, got, tt.seq)
		}
	}
	b := BatchInfo{BaseSequence: record.NoSequence, BaseOffset: 10, LastOffset: 12}
	if b.LastSequence() != record.NoSequence {
		t.Error("record.NoSequence must stay")
	}
}
