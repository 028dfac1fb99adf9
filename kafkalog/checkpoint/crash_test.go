package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/segkit/segkit/vfs"
)

// writer writes generation gen of one kind of file under dir "d" and
// returns the file's path and the bytes it must hold.
type writer func(fsys vfs.FS, gen int) (path string, want []byte, err error)

var writers = map[string]writer{
	"offsets": func(fsys vfs.FS, gen int) (string, []byte, error) {
		offs := map[TopicPartition]int64{}
		for i := range 50 * gen { // big enough to span blocks when torn
			offs[TopicPartition{fmt.Sprintf("topic-%03d", i), int32(i % 7)}] = int64(gen*1000 + i)
		}
		p := "d/" + RecoveryPointFile
		return p, AppendOffsets(nil, SortedOffsets(offs)), WriteOffsets(fsys, p, offs)
	},
	"leader-epoch": func(fsys vfs.FS, gen int) (string, []byte, error) {
		c := NewLeaderEpochCache()
		for i := range 3 * gen {
			c.Assign(int32(i), int64(i*100))
		}
		p := "d/" + LeaderEpochFile
		return p, AppendLeaderEpochs(nil, c.Entries()), c.Flush(fsys, p)
	},
	"partition.metadata": func(fsys vfs.FS, gen int) (string, []byte, error) {
		id := UUID{0: byte(gen), 15: 9}
		return "d/" + PartitionMetadataFile, AppendPartitionMetadata(nil, PartitionMetadata{TopicID: id}), WritePartitionMetadata(fsys, "d", id)
	},
	"clean-shutdown": func(fsys vfs.FS, gen int) (string, []byte, error) {
		return "d/" + CleanShutdownFile, AppendCleanShutdown(nil, int64(gen)), WriteCleanShutdown(fsys, "d", int64(gen))
	},
}

var crashConfigs = []vfs.CrashConfig{
	{UnsyncedDataPercent: 0},
	{UnsyncedDataPercent: 30},
	{UnsyncedDataPercent: 70, TornWrites: true},
	{UnsyncedDataPercent: 100},
	{UnsyncedDataPercent: 100, TornWrites: true},
}

// TestCrashDuringWrite crashes every write path at every mutating
// operation (vfs.CrashAfter(k) for k = 0, 1, ... until the write
// completes) and, for many crash clones of each point, checks that the
// file holds exactly the old or the new content: never a mix, never
// missing once it existed, and the new content once the write returned.
// Then it writes again on the crashed disk, stray .tmp and all.
func TestCrashDuringWrite(t *testing.T) {
	for name, write := range writers {
		for _, existed := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/existed=%v", name, existed), func(t *testing.T) {
				points := 0
				for k := 0; ; k++ {
					m := vfs.NewMem()
					must(t, m.MkdirAll("d", 0o755))
					must(t, vfs.SyncDir(m, "."))
					var old []byte
					if existed {
						_, want, err := write(m, 1)
						must(t, err)
						old = want
					}
					crash := vfs.CrashAfter(k)
					p, want, err := write(vfs.WithFaults(m, crash), 2)
					if !crash.Crashed() {
						must(t, err)
					} else if err == nil {
						t.Fatalf("k=%d: the write reported success after the crash", k)
					}
					for _, cfg := range crashConfigs {
						for seed := range uint64(40) {
							cfg.Seed = seed
							c := m.CrashClone(cfg)
							got, rerr := vfs.ReadFile(c, p)
							switch {
							case errors.Is(rerr, fs.ErrNotExist):
								if existed || err == nil {
									t.Fatalf("k=%d %+v: the file is gone (existed=%v, write err=%v)", k, cfg, existed, err)
								}
							case rerr != nil:
								t.Fatal(rerr)
							case bytes.Equal(got, want):
							case bytes.Equal(got, old) && existed && err != nil:
							default:
								t.Fatalf("k=%d %+v: file holds %q\nold %q\nnew %q (write err %v)", k, cfg, got, old, want, err)
							}
							// Whatever the crash left, including a stray
							// .tmp, a new write succeeds and reads back.
							_, want3, err3 := write(c, 3)
							must(t, err3)
							if got3, _ := vfs.ReadFile(c, p); !bytes.Equal(got3, want3) {
								t.Fatalf("k=%d: rewrite after crash read back %q", k, got3)
							}
							if _, err := c.Stat(p + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
								t.Fatalf("k=%d: .tmp left after a successful write: %v", k, err)
							}
						}
					}
					points++
					if !crash.Crashed() {
						break
					}
				}
				if points < 5 {
					t.Errorf("only %d crash points", points)
				}
			})
		}
	}
}

// TestStrayTmpIgnored: a leftover .tmp full of garbage does not affect
// reading, and the next write replaces it.
func TestStrayTmpIgnored(t *testing.T) {
	m := vfs.NewMem()
	must(t, m.MkdirAll("d", 0o755))
	p := "d/" + RecoveryPointFile
	must(t, WriteOffsets(m, p, map[TopicPartition]int64{{"t", 0}: 5}))
	must(t, vfs.WriteFile(m, p+".tmp", []byte("\x00garbage\x00"), 0o644))
	got, err := ReadOffsets(m, p)
	if err != nil || got[TopicPartition{"t", 0}] != 5 {
		t.Fatalf("read with a stray .tmp: %v %v", got, err)
	}
	must(t, WriteOffsets(m, p, map[TopicPartition]int64{{"t", 0}: 6}))
	if got, _ := ReadOffsets(m, p); got[TopicPartition{"t", 0}] != 6 {
		t.Errorf("after rewrite: %v", got)
	}
	if _, err := m.Stat(p + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stray .tmp still there: %v", err)
	}
}

// TestWriteErrorsSurface injects an I/O error at every operation of each
// write and checks that it is reported, and that the file then holds the
// old or the new content.
func TestWriteErrorsSurface(t *testing.T) {
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			for k := int64(0); ; k++ {
				m := vfs.NewMem()
				must(t, m.MkdirAll("d", 0o755))
				_, old, err := write(m, 1)
				must(t, err)
				ff := vfs.WithFaults(m, vfs.EIO(vfs.And(vfs.Mutating(), vfs.OnIndex(k))))
				p, want, err := write(ff, 2)
				injected := false
				for _, op := range ff.Log() {
					if errors.Is(op.Err, vfs.ErrInjected) {
						injected = true
					}
				}
				if !injected {
					must(t, err)
					break
				}
				if !errors.Is(err, vfs.ErrInjected) {
					t.Fatalf("k=%d: injected error not reported: %v", k, err)
				}
				if got, _ := vfs.ReadFile(m, p); !bytes.Equal(got, old) && !bytes.Equal(got, want) {
					t.Fatalf("k=%d: file holds %q", k, got)
				}
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
