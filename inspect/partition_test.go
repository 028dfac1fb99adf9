package inspect_test

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/internal/recordinput"
	"github.com/segkit/segkit/repair"
	"github.com/segkit/segkit/vfs"
)

// TestCheckPartitionDir: the writers (Append, Recover) accept only a
// partition directory, and write nothing into anything else — "/", a log
// directory, an empty directory not named as a partition, a directory
// inside a partition.
func TestCheckPartitionDir(t *testing.T) {
	mem := vfs.NewMem()
	recs, err := recordinput.ParseRecords(strings.NewReader(`{"value":"dg=="}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recordinput.Append(mem, "logs/orders-0", recs, recordinput.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := mem.MkdirAll("empty", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"logs/orders-0", "logs/orders-1", "new/orders-0"} {
		if err := inspect.CheckPartitionDir(mem, dir); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
	before := mem.String()
	for _, dir := range []string{"/", ".", "logs", "empty", "logs/orders-0/inner-0", "logs/orders", "logs/orders-0.abc-delete"} {
		err := inspect.CheckPartitionDir(mem, dir)
		if !errors.Is(err, inspect.ErrNotPartition) {
			t.Errorf("%s: %v, want ErrNotPartition", dir, err)
		}
		if _, err := recordinput.Append(mem, dir, recs, recordinput.AppendOptions{}); !errors.Is(err, inspect.ErrNotPartition) {
			t.Errorf("Append %s: %v", dir, err)
		}
		if _, err := repair.Recover(mem, dir, repair.RecoverOptions{}); !errors.Is(err, inspect.ErrNotPartition) {
			t.Errorf("Recover %s: %v", dir, err)
		}
	}
	if after := mem.String(); after != before {
		t.Fatalf("a refused writer wrote:\n%s\nnow:\n%s", before, after)
	}
}

// TestFindPartitions: the one discovery routine of verify and serve. A
// folder of log directories whose name ends in -2 is a log directory, not
// partition 2 of a topic (before, verify took "disk-2" for a partition,
// checked nothing in it and said OK).
func TestFindPartitions(t *testing.T) {
	mem := vfs.NewMem()
	write := emptyFileWriter(t, mem)
	seg := "00000000000000000000.log"
	write("host/disk-1/orders-0/" + seg)
	write("host/disk-2/orders-1/" + seg)
	write("host/disk-2/orders-2/leader-epoch-checkpoint")
	write("host/disk-2/recovery-point-offset-checkpoint")
	write("mixed/" + seg)
	write("mixed/orders-0/" + seg)
	write("odd/t-0/abc.log") // a partition holding only a badly named segment
	write("other/notes.txt")
	for _, d := range []string{"host/disk-2/empty-7", "plain", "host/disk-1/orders-3.abc123-delete"} {
		if err := mem.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		dir  string
		want []string // nil: ErrNoPartition
	}{
		{"host/disk-1/orders-0", []string{"host/disk-1/orders-0"}},
		{"host/disk-2", []string{"host/disk-2/empty-7", "host/disk-2/orders-1", "host/disk-2/orders-2"}},
		{"host", []string{"host/disk-1/orders-0", "host/disk-1/orders-3.abc123-delete", "host/disk-2/empty-7", "host/disk-2/orders-1", "host/disk-2/orders-2"}},
		{"host/disk-2/empty-7", []string{"host/disk-2/empty-7"}},
		{"odd", []string{"odd/t-0"}},
		{"mixed", nil},
		{"other", nil},
		{"plain", nil},
	} {
		got, err := inspect.FindPartitions(mem, tc.dir)
		var dirs []string
		for _, l := range got {
			dirs = append(dirs, l.Dir)
		}
		if tc.want == nil {
			if !errors.Is(err, inspect.ErrNoPartition) {
				t.Errorf("%s: %v, %v; want ErrNoPartition", tc.dir, dirs, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.dir, err)
			continue
		}
		if diff := cmp.Diff(tc.want, dirs); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.dir, diff)
		}
	}
}

// TestFindPartitionsConcurrent holds the concurrent walk Verify uses to
// FindPartitions' sequential one: the same listings, and the same error
// when a directory is refused or the walk meets too many directories,
// whichever the sequential order meets first.
func TestFindPartitionsConcurrent(t *testing.T) {
	mem := vfs.NewMem()
	write := emptyFileWriter(t, mem)
	seg := "00000000000000000000.log"
	for i := range 300 {
		write(fmt.Sprintf("logs/t-%d/%s", i, seg))
		write(fmt.Sprintf("refused/t-%d/%s", i, seg))
	}
	write("logs/recovery-point-offset-checkpoint")
	write("refused/t-150/inner-0/" + seg) // a partition holding partitions: refused
	write("refused/t-250/inner-0/" + seg)
	// More than findDirs (10,000) directories: in huge, with a refused
	// one early in the walk's order and one late (the sequential walk
	// meets the early refusal first); in toomany, with only the late one.
	for _, top := range []string{"huge", "toomany"} {
		for i := range 10100 {
			if err := mem.MkdirAll(fmt.Sprintf("%s/d-%05d", top, i), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		write(top + "/d-10099/t-0/" + seg)
		write(top + "/d-10099/" + seg)
	}
	write("huge/d-00003/t-0/" + seg)
	write("huge/d-00003/" + seg)
	names := func(ls []inspect.Listing) []string {
		var out []string
		for _, l := range ls {
			var es []string
			for _, e := range l.Entries {
				es = append(es, e.Name())
			}
			out = append(out, l.Dir+": "+strings.Join(es, " "))
		}
		return out
	}
	for _, dir := range []string{"logs", "refused", "huge", "toomany", "logs/t-7"} {
		want, wantErr := inspect.FindPartitions(mem, dir)
		for _, workers := range []int{2, 4, 16} {
			got, err := inspect.FindPartitionsWorkers(mem, dir, workers)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("%s, %d workers: error %v, want %v", dir, workers, err, wantErr)
			}
			if d := cmp.Diff(names(want), names(got)); d != "" {
				t.Errorf("%s, %d workers: (-sequential +concurrent)\n%s", dir, workers, d)
			}
		}
		if dir == "huge" && (wantErr == nil || !strings.Contains(wantErr.Error(), "d-00003")) {
			t.Errorf("huge: %v, want the refusal of d-00003", wantErr)
		}
		if dir == "toomany" && (wantErr == nil || !strings.Contains(wantErr.Error(), "more than")) {
			t.Errorf("toomany: %v, want the limit's error", wantErr)
		}
	}
}

// emptyFileWriter returns a function that creates an empty file in mem,
// with its directories.
func emptyFileWriter(t *testing.T, mem *vfs.Mem) func(name string) {
	return func(name string) {
		t.Helper()
		if err := mem.MkdirAll(path.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := mem.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}
