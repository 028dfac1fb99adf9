package record_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// printPartition is the README's "Using the library" example, verbatim:
// TestREADMEExampleInSync fails when the two differ.
func printPartition(dir string) error {
	l, err := kafkalog.Open(vfs.OS(), dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer l.Close()
	// Every record from the log start offset on, of every magic: v2
	// batches and the legacy v0/v1 messages old segments still hold.
	for r, err := range l.Records(l.LogStartOffset()) {
		if err != nil {
			return err // corruption, or records that do not decode
		}
		fmt.Println(r.Offset, r.Timestamp, string(r.Key), string(r.Value))
	}
	return nil
}

// TestREADMEExampleInSync checks that the README's library example is
// printPartition, character for character (tabs as in gofmt).
func TestREADMEExampleInSync(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "\n## Using the library\n")
	if !ok {
		t.Fatal(`README.md has no "## Using the library" section`)
	}
	_, block, ok := strings.Cut(sec, "```go\n")
	if !ok {
		t.Fatal("the section has no ```go block")
	}
	block, _, _ = strings.Cut(block, "```")
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, fn, _ := strings.Cut(string(src), "\nfunc printPartition(")
	fn, _, _ = strings.Cut(fn, "\n}\n")
	fn = "func printPartition(" + fn + "\n}\n"
	if block != fn {
		t.Errorf("README.md's library example differs from printPartition in record/readme_test.go:\n--- README\n%s--- printPartition\n%s", block, fn)
	}
}

// TestREADMEExample runs the README's example on every partition a real
// broker wrote (magic 0, 1 and 2; every codec) and checks what it prints
// against a direct scan of the segment files: the same records, in order.
func TestREADMEExample(t *testing.T) {
	magics := map[int8]int{}
	dirs := map[string]string{}
	for _, dir := range realdata.PartitionDirs(t) {
		dirs[realdata.Rel(t, dir)] = dir
	}
	// No real partition holds magic 0: the golden magic-0 segments (lz4
	// with KAFKA-3160's checksum, and sarama's) become partitions.
	golden, _ := filepath.Glob(filepath.Join("..", "testdata", "golden", "magic0-*.log"))
	for _, p := range golden {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "golden-0")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		dirs["golden/"+filepath.Base(p)] = dir
	}
	names := slices.Sorted(maps.Keys(dirs))
	for _, name := range names {
		dir := dirs[name]
		t.Run(name, func(t *testing.T) {
			want, start, end := scanPartition(t, dir, magics)
			out, err := os.CreateTemp(t.TempDir(), "stdout")
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			stdout := os.Stdout
			os.Stdout = out
			err = printPartition(dir)
			os.Stdout = stdout
			if err != nil {
				t.Fatalf("the README example failed: %v", err)
			}
			if _, err := out.Seek(0, 0); err != nil {
				t.Fatal(err)
			}
			var got []int64
			for sc := bufio.NewScanner(out); sc.Scan(); {
				f, _, _ := strings.Cut(sc.Text(), " ")
				if off, err := strconv.ParseInt(f, 10, 64); err == nil && (len(got) == 0 || off > got[len(got)-1]) {
					got = append(got, off) // values may hold newlines: keep the offset lines
				}
			}
			var w []int64
			for _, o := range want {
				if o >= start && o < end {
					w = append(w, o)
				}
			}
			if !equalInt64s(got, w) {
				t.Fatalf("the README example printed %d records (%v...), a scan of the files finds %d in [%d, %d)", len(got), head(got), len(w), start, end)
			}
		})
	}
	for _, m := range []int8{record.MagicV0, record.MagicV1, record.MagicV2} {
		if magics[m] == 0 {
			t.Errorf("no partition with magic %d entries: the example is not checked on it", m)
		}
	}
	t.Logf("entries by magic: %v", magics)
}

func head(s []int64) []int64 { return s[:min(len(s), 5)] }

// scanPartition reads every record of a partition's segment files directly,
// and returns their offsets in file order with the log's start and end
// offsets, counting entries by magic.
func scanPartition(t *testing.T, dir string, magics map[int8]int) (offsets []int64, start, end int64) {
	t.Helper()
	l, err := kafkalog.Open(vfs.OS(), dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	start, end = l.LogStartOffset(), l.LogEndOffset()
	l.Close()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	var it record.EntryIterator
	var r record.Record
	for _, p := range logs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for s := record.NewScanner(data, p, 0); s.Next(); {
			e := s.Entry()
			magics[e.Magic]++
			it.Reset(e)
			for it.Next(&r) {
				offsets = append(offsets, r.Offset)
			}
		}
	}
	return offsets, start, end
}

// TestIteratorResetLegacy is the regression test of the README example's
// panic: Iterator.Reset on the Batch of a legacy entry (a zero Batch), or
// on any Batch too short for the v2 header, records an error instead of
// panicking with "slice bounds out of range".
func TestIteratorResetLegacy(t *testing.T) {
	var w record.Builder
	legacy, err := w.AppendLegacyWrapper(nil, &record.LegacySpec{Magic: record.MagicV1, Codec: compress.Gzip}, []record.Record{{Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	s := record.NewScanner(legacy, "", 0)
	if !s.Next() {
		t.Fatalf("no legacy entry: %v", s.Err())
	}
	for _, tt := range []struct {
		name string
		b    record.Batch
	}{
		{"legacy_entry", s.Entry().Batch},
		{"zero", record.Batch{}},
		{"short_raw", record.Batch{Raw: make([]byte, record.RecordBatchOverhead-1), BatchHeader: record.BatchHeader{Magic: record.MagicV2, RecordCount: 3}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var it record.Iterator
			var r record.Record
			it.Reset(&tt.b)
			if it.Next(&r) {
				t.Fatal("Next returned a record")
			}
			if err := it.Err(); !errors.Is(err, format.ErrMagic) {
				t.Fatalf("Err() = %v, want format.ErrMagic", err)
			}
			if err := it.Validate(&tt.b); !errors.Is(err, format.ErrMagic) {
				t.Fatalf("Validate = %v, want format.ErrMagic", err)
			}
			_ = tt.b.Payload()
			_ = tt.b.ComputeCRC()
		})
	}
	var m record.LegacyMessage
	_ = m.ComputeCRC()
}

// TestReaderScannerZerosMidFile is the regression test of a hang FuzzReadAPI
// found: a ReaderScanner whose buffer (ChunkSize, 1 MiB by default) was all
// zeros before the end of the file refilled the same bytes for ever, as a
// preallocated segment's zero tail longer than a chunk would make it. It
// now stops there, like Scanner, and reports the tail.
func TestReaderScannerZerosMidFile(t *testing.T) {
	batch := mustBatch(t, 2)
	for _, tt := range []struct {
		name  string
		chunk int
		zeros int
		after []byte
	}{
		{"zeros_then_batch_small_chunk", 97, 300, batch},
		{"zeros_then_byte", 97, 91, []byte{0xe2}},
		{"zero_tail_past_default_chunk", 0, record.DefaultChunkSize + 4096, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := append(append(append([]byte{}, batch...), make([]byte, tt.zeros)...), tt.after...)
			var rs record.ReaderScanner
			rs.ChunkSize = tt.chunk
			rs.Reset(bytes.NewReader(in), int64(len(in)), "", 0)
			done := make(chan int)
			go func() {
				n := 0
				for rs.Next() {
					n++
				}
				done <- n
			}()
			select {
			case n := <-done:
				if n != 1 || rs.Err() != nil || rs.ValidEnd() != int64(len(batch)) {
					t.Fatalf("%d entries, err %v, valid end %d; want 1, nil, %d", n, rs.Err(), rs.ValidEnd(), len(batch))
				}
				if k, at, rest := rs.Tail(); k == record.TailNone || at != int64(len(batch)) || rest != int64(len(in)-len(batch)) {
					t.Fatalf("Tail() = %v %d %d", k, at, rest)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("ReaderScanner.Next does not return")
			}
		})
	}
}
