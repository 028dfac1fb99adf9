package inspect_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/vfs"
)

// TestCheckPartitionDir: the writers (Append, Recover) accept only a
// partition directory, and write nothing into anything else — "/", a log
// directory, an empty directory not named as a partition, a directory
// inside a partition.
func TestCheckPartitionDir(t *testing.T) {
	mem := vfs.NewMem()
	recs, err := inspect.ParseRecords(strings.NewReader(`{"value":"dg=="}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inspect.Append(mem, "logs/orders-0", recs, inspect.AppendOptions{}); err != nil {
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
		if _, err := inspect.Append(mem, dir, recs, inspect.AppendOptions{}); !errors.Is(err, inspect.ErrNotPartition) {
			t.Errorf("Append %s: %v", dir, err)
		}
		if _, err := inspect.Recover(mem, dir, inspect.RecoverOptions{}); !errors.Is(err, inspect.ErrNotPartition) {
			t.Errorf("Recover %s: %v", dir, err)
		}
	}
	if after := mem.String(); after != before {
		t.Fatalf("a refused writer wrote:\n%s\nnow:\n%s", before, after)
	}
}
