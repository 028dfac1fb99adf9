package kafkalog_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// TestLoadProblems checks that what Open could not trust but loaded anyway
// comes back as findings naming the file, with a stable kind.
func TestLoadProblems(t *testing.T) {
	// (A garbled clean-shutdown marker is no problem: Kafka only asks
	// whether the file exists.)
	tests := []struct {
		name, file string // file is overwritten with garbage
		kind       string
	}{
		{"recovery point", "data/" + checkpoint.RecoveryPointFile, finding.KindCheckpointCorrupt},
		{"log start offset", "data/" + checkpoint.LogStartOffsetFile, finding.KindCheckpointCorrupt},
		{"leader epochs", "data/orders-0/" + checkpoint.LeaderEpochFile, finding.KindEpochCorrupt},
		{"producer snapshot", "data/orders-0/00000000000000000006.snapshot", finding.KindSnapshotCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			c := &clock{ms: 1_700_000_000_000}
			cfg := smallConfig(t, 2000)
			l := mustOpen(t, fsys, "data/orders-0", cfg, c)
			var w record.Builder
			for i := 0; i < 3; i++ {
				b, _ := buildBatch(t, &w, compress.None, i*2, 2, c.ms)
				if _, err := l.Append(b, 1); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if err := vfs.WriteFile(fsys, tc.file, []byte("not a checkpoint\x00\xff"), 0o644); err != nil {
				t.Fatal(err)
			}
			l = mustOpen(t, fsys, "data/orders-0", cfg, c)
			defer l.Close()
			got := l.LoadReport().Problems
			if len(got) != 1 {
				t.Fatalf("problems %v, want one about %s", got, tc.file)
			}
			p := got[0]
			p.Detail = ""
			if d := cmp.Diff(finding.Problem{File: tc.file, Position: -1, Kind: tc.kind, Level: finding.Warning}, p); d != "" {
				t.Errorf("problem (-want +got):\n%s\ndetail: %s", d, got[0].Detail)
			}
			if got[0].Detail == "" {
				t.Error("no detail")
			}
			if n := l.LogEndOffset(); n != 6 {
				t.Errorf("log end offset %d after loading past the problem, want 6", n)
			}
		})
	}
}
