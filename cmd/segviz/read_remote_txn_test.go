package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// TestReadCommittedRemote: read_committed below the local log start
// offset takes the aborted transactions from the remote segments'
// transaction indexes, and from the local ones when the ABORT marker is
// on local disk, as a broker's RemoteLogManager does. In each case
// producer 11's transaction (offsets 2-3) is aborted by a marker in a
// later segment than its records, and producer 10's (6) commits:
//
//	segment 0:  0-1 plain, 2-3 producer 11
//	segment 4:  4 ABORT 11, 5 producer 10 … (where the cases differ)
//
// Before the upload, and after local retention left only the active
// segment, read_committed from 0 gets the same records.
func TestReadCommittedRemote(t *testing.T) {
	for _, tc := range []struct {
		name string
		// build writes the partition after offsets 0-3.
		build func(x *txnWriter)
		// copied is how many segments the upload copies.
		copied int
		want   []int64
	}{
		{"abort marker in the next remote segment", func(x *txnWriter) {
			x.roll()
			x.marker(11, record.ControlAbort) // 4
			x.add(10, 1)                      // 5
			x.marker(10, record.ControlCommit)
			x.roll()
			x.add(-1, 2) // 7-8
		}, 2, []int64{0, 1, 5, 7, 8}},
		{"abort marker in the local log", func(x *txnWriter) {
			x.roll()
			x.marker(11, record.ControlAbort) // 4
			x.add(10, 1)                      // 5
			x.marker(10, record.ControlCommit)
			x.add(-1, 2) // 7-8
		}, 1, []int64{0, 1, 5, 7, 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "kafka-logs", "payments-3")
			remote := filepath.Join(root, "tiered")
			if err := os.MkdirAll(remote, 0o755); err != nil {
				t.Fatal(err)
			}
			x := newTxnWriter(t, dir)
			x.add(-1, 2)
			x.add(11, 2)
			tc.build(x)
			x.close()
			if err := checkpoint.WritePartitionMetadata(vfs.OS(), filepath.ToSlash(dir), checkpoint.UUID{1: 9}); err != nil {
				t.Fatal(err)
			}
			committed := func(args ...string) []int64 {
				t.Helper()
				code, out, errs := readCmd(append([]string{"--isolation", "read_committed"}, args...)...)
				if code != exitOK {
					t.Fatalf("read_committed %v: exit %d: %s", args, code, errs)
				}
				return textOffsets(t, out)
			}
			if got := committed(dir); !slices.Equal(got, tc.want) {
				t.Fatalf("read_committed before the upload: %v, want %v", got, tc.want)
			}
			uri := "file://" + remote
			up := tierUploadOf(t, append(tierEnable, "--remote", uri, "--now", fmt.Sprint(readT0+3600_000), dir)...)
			if len(up.Copied) != tc.copied || len(up.DeletedLocal) != tc.copied {
				t.Fatalf("upload: copied %d, deleted %d locally; want %d, %d", len(up.Copied), len(up.DeletedLocal), tc.copied, tc.copied)
			}
			if got := committed("--remote", uri, "--from", "0", dir); !slices.Equal(got, tc.want) {
				t.Errorf("read_committed --remote from 0: %v, want %v", got, tc.want)
			}
			// From inside the aborted transaction, and read_uncommitted
			// still gets the aborted records.
			if got := committed("--remote", uri, "--from", "3", dir); !slices.Equal(got, tc.want[2:]) {
				t.Errorf("read_committed --remote from 3: %v, want %v", got, tc.want[2:])
			}
			code, out, errs := readCmd("--remote", uri, "--from", "0", dir)
			if got := textOffsets(t, out); code != exitOK || !slices.Equal(got, []int64{0, 1, 2, 3, 5, 7, 8}) {
				t.Errorf("read_uncommitted --remote: exit %d %s, %v", code, errs, got)
			}
		})
	}
}
