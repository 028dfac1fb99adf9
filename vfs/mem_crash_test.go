package vfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"

	"github.com/segkit/segkit/vfs"
)

// configs are the crash configurations every crash test sweeps, each over
// many seeds.
var configs = []vfs.CrashConfig{
	{UnsyncedDataPercent: 0},
	{UnsyncedDataPercent: 30},
	{UnsyncedDataPercent: 70, TornWrites: true},
	{UnsyncedDataPercent: 100},
	{UnsyncedDataPercent: 100, TornWrites: true},
}

const seeds = 200

// eachClone calls check on clones of m for every config and seed.
func eachClone(t *testing.T, m *vfs.Mem, check func(t *testing.T, cfg vfs.CrashConfig, c *vfs.Mem)) {
	t.Helper()
	for _, cfg := range configs {
		for seed := range uint64(seeds) {
			cfg.Seed = seed
			c := m.CrashClone(cfg)
			check(t, cfg, c)
			if t.Failed() {
				t.Fatalf("config %+v\nbefore the crash:\n%v\nafter:\n%v", cfg, m, c)
			}
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeSynced(t *testing.T, m vfs.FS, name string, data []byte) {
	t.Helper()
	f, err := m.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	must(t, err)
	_, err = f.Write(data)
	must(t, err)
	must(t, f.Sync())
	must(t, f.Close())
}

func content(t *testing.T, m vfs.FS, name string) ([]byte, bool) {
	t.Helper()
	b, err := vfs.ReadFile(m, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	must(t, err)
	return b, true
}

func TestCrashSyncedSurvives(t *testing.T) {
	m := vfs.NewMem()
	must(t, m.MkdirAll("p", 0o755))
	must(t, vfs.SyncDir(m, "."))
	synced := bytes.Repeat([]byte("synced!"), 1500) // ~10 KiB: several blocks
	writeSynced(t, m, "p/log", synced)
	must(t, vfs.SyncDir(m, "p"))
	// Unsynced appends after it.
	f, err := m.OpenFile("p/log", os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	unsynced := bytes.Repeat([]byte("tail"), 3000)
	f.Write(unsynced)
	f.Close()
	current := append(append([]byte(nil), synced...), unsynced...)

	eachClone(t, m, func(t *testing.T, cfg vfs.CrashConfig, c *vfs.Mem) {
		got, ok := content(t, c, "p/log")
		if !ok {
			t.Fatalf("synced file lost")
		}
		if !bytes.HasPrefix(got, synced) {
			t.Fatalf("synced bytes damaged")
		}
		if len(got) > len(current) {
			t.Fatalf("file grew past what was written")
		}
		tail := got[len(synced):]
		for i, b := range tail {
			if b != 0 && b != current[len(synced)+i] {
				t.Fatalf("byte %d is %q: neither written nor zero", len(synced)+i, b)
			}
		}
		switch {
		case cfg.UnsyncedDataPercent == 0 && len(got) != len(synced):
			t.Fatalf("with 0%% unsynced kept, got %d bytes, want %d", len(got), len(synced))
		case cfg.UnsyncedDataPercent == 100 && !cfg.TornWrites && !bytes.Equal(got, current):
			t.Fatalf("with 100%% unsynced kept, got %d bytes, want everything", len(got))
		}
	})
}

func TestCrashUnsyncedMayVanish(t *testing.T) {
	m := vfs.NewMem()
	writeSynced(t, m, "synced-dir-entry", []byte("a"))
	must(t, vfs.SyncDir(m, "."))
	writeSynced(t, m, "data-synced-entry-not", []byte("b")) // data synced, directory not
	vfs.WriteFile(m, "nothing-synced", []byte("c"), 0o644)
	must(t, m.MkdirAll("newdir", 0o755))
	writeSynced(t, m, "newdir/f", []byte("d"))
	must(t, vfs.SyncDir(m, "newdir")) // its entries are durable, but newdir itself is not

	var sawGone, sawKept [3]bool
	eachClone(t, m, func(t *testing.T, cfg vfs.CrashConfig, c *vfs.Mem) {
		if got, ok := content(t, c, "synced-dir-entry"); !ok || string(got) != "a" {
			t.Fatalf("durable file: %q, %v", got, ok)
		}
		for i, name := range []string{"data-synced-entry-not", "nothing-synced", "newdir/f"} {
			got, ok := content(t, c, name)
			if ok {
				sawKept[i] = true
				if name == "data-synced-entry-not" && string(got) != "b" {
					t.Fatalf("%s holds %q", name, got)
				}
			} else {
				sawGone[i] = true
			}
			if cfg.UnsyncedDataPercent == 0 && ok {
				t.Fatalf("%s survived with 0%% unsynced kept", name)
			}
			if cfg.UnsyncedDataPercent == 100 && !ok {
				t.Fatalf("%s lost with 100%% unsynced kept", name)
			}
		}
	})
	for i := range sawGone {
		if !sawGone[i] || !sawKept[i] {
			t.Errorf("file %d: gone in some clone %v, kept in some %v; want both", i, sawGone[i], sawKept[i])
		}
	}
}

func TestCrashTornWrites(t *testing.T) {
	m := vfs.NewMem()
	writeSynced(t, m, "f", bytes.Repeat([]byte{'S'}, 5000))
	must(t, vfs.SyncDir(m, "."))
	f, err := m.OpenFile("f", os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	f.Write(bytes.Repeat([]byte{'U'}, 20000)) // one write: any cut inside it is torn
	f.Close()

	lengths := map[int]bool{}
	holes := false
	cfg := vfs.CrashConfig{UnsyncedDataPercent: 80, TornWrites: true}
	for seed := range uint64(1000) {
		cfg.Seed = seed
		got, _ := content(t, m.CrashClone(cfg), "f")
		lengths[len(got)] = true
		if bytes.Contains(got, []byte{'U', 0}) || bytes.Contains(got, []byte{'S', 0}) {
			holes = true
		}
	}
	torn := 0
	for l := range lengths {
		if l > 5000 && l < 25000 && l%4096 != 0 {
			torn++
		}
	}
	if torn < 10 {
		t.Errorf("only %d distinct torn lengths inside the write, want cuts at arbitrary bytes", torn)
	}
	if !holes {
		t.Errorf("no clone had zero-filled holes (block mode)")
	}
}

func TestCrashOverwriteAndTruncate(t *testing.T) {
	m := vfs.NewMem()
	orig := []byte("0123456789abcdefghij")
	writeSynced(t, m, "f", orig)
	must(t, vfs.SyncDir(m, "."))
	f, err := m.OpenFile("f", os.O_RDWR, 0)
	must(t, err)
	f.WriteAt([]byte("XXXX"), 2) // overwrite synced bytes
	f.Truncate(8)                // cut synced bytes
	f.Truncate(12)               // grow again: zeros
	f.WriteAt([]byte("YY"), 14)  // past the current end, inside the synced length
	f.Close()
	current := []byte("01XXXX67\x00\x00\x00\x00\x00\x00YY")

	eachClone(t, m, func(t *testing.T, cfg vfs.CrashConfig, c *vfs.Mem) {
		got, ok := content(t, c, "f")
		if !ok {
			t.Fatalf("file lost")
		}
		if len(got) < min(len(orig), len(current)) || len(got) > max(len(orig), len(current)) {
			t.Fatalf("length %d outside [%d, %d]", len(got), min(len(orig), len(current)), max(len(orig), len(current)))
		}
		for i, b := range got {
			inS, inC := i < len(orig), i < len(current)
			switch {
			case inS && inC && b != orig[i] && b != current[i],
				inS && !inC && b != orig[i],
				!inS && inC && b != current[i] && b != 0:
				t.Fatalf("byte %d = %q; synced %q, current %q", i, b, orig, current)
			}
		}
		if cfg.UnsyncedDataPercent == 0 && !bytes.Equal(got, orig) {
			t.Fatalf("with 0%% kept: %q, want %q", got, orig)
		}
		if cfg.UnsyncedDataPercent == 100 && !cfg.TornWrites && !bytes.Equal(got, current) {
			t.Fatalf("with 100%% kept: %q, want %q", got, current)
		}
	})

	// After a Sync the new content is the floor.
	f, _ = m.OpenFile("f", os.O_RDWR, 0)
	must(t, f.Sync())
	f.Close()
	eachClone(t, m, func(t *testing.T, cfg vfs.CrashConfig, c *vfs.Mem) {
		if got, _ := content(t, c, "f"); !bytes.Equal(got, current) {
			t.Fatalf("after Sync: %q, want %q", got, current)
		}
	})
}

func TestCrashRenameAtomic(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to string
		sync     []string // directories synced after the rename
		durable  bool     // the rename must have happened
	}{
		{"same-dir", "d1/a", "d1/b", nil, false},
		{"cross-dir", "d1/a", "d2/b", nil, false},
		{"cross-dir/dst-synced", "d1/a", "d2/b", []string{"d2"}, false},
		{"cross-dir/src-synced", "d1/a", "d2/b", []string{"d1"}, false},
		{"cross-dir/both-synced", "d1/a", "d2/b", []string{"d1", "d2"}, true},
		{"same-dir/synced", "d1/a", "d1/b", []string{"d1"}, true},
		{"over-existing", "d1/a", "d1/old", nil, false},
		{"over-existing/synced", "d1/a", "d1/old", []string{"d1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := vfs.NewMem()
			must(t, m.MkdirAll("d1", 0o755))
			must(t, m.MkdirAll("d2", 0o755))
			must(t, vfs.SyncDir(m, "."))
			writeSynced(t, m, "d1/a", []byte("payload"))
			writeSynced(t, m, "d1/old", []byte("previous"))
			must(t, vfs.SyncDir(m, "d1"))
			must(t, m.Rename(tc.from, tc.to))
			for _, d := range tc.sync {
				must(t, vfs.SyncDir(m, d))
			}
			var sawOld, sawNew bool
			eachClone(t, m, func(t *testing.T, cfg vfs.CrashConfig, c *vfs.Mem) {
				_, atOld := content(t, c, tc.from)
				got, atNew := content(t, c, tc.to)
				if atNew && string(got) == "payload" {
					sawNew = true
				} else {
					atNew = false
				}
				sawOld = sawOld || atOld
				if atOld == atNew {
					t.Fatalf("file at old name %v, at new name %v: want exactly one", atOld, atNew)
				}
				if tc.durable && atOld {
					t.Fatalf("durable rename undone")
				}
				if tc.to == "d1/old" && !atNew {
					if prev, ok := content(t, c, "d1/old"); !ok || string(prev) != "previous" {
						t.Fatalf("rename undone but the replaced file is %q, %v", prev, ok)
					}
				}
			})
			if !tc.durable && (!sawOld || !sawNew) {
				t.Errorf("saw the old name %v, the new name %v: want both outcomes", sawOld, sawNew)
			}
		})
	}
}

func TestCrashRenameChain(t *testing.T) {
	// a -> b -> c without syncs: a crash keeps a prefix of the chain, so
	// the file is under exactly one of the three names.
	m := vfs.NewMem()
	writeSynced(t, m, "a", []byte("x"))
	must(t, vfs.SyncDir(m, "."))
	must(t, m.Rename("a", "b"))
	writeSynced(t, m, "a", []byte("new a")) // reuses the name: depends on the first rename
	must(t, m.Rename("b", "c"))
	seen := map[string]bool{}
	eachClone(t, m, func(t *testing.T, cfg vfs.CrashConfig, c *vfs.Mem) {
		var at []string
		for _, n := range []string{"a", "b", "c"} {
			if got, ok := content(t, c, n); ok && string(got) == "x" {
				at = append(at, n)
			}
		}
		if len(at) != 1 {
			t.Fatalf("file x under %q, want exactly one name", at)
		}
		seen[at[0]] = true
	})
	if len(seen) != 3 {
		t.Errorf("file seen under %v, want all of a, b, c", seen)
	}
}

func TestCrashRemove(t *testing.T) {
	m := vfs.NewMem()
	must(t, m.MkdirAll("d/e", 0o755))
	writeSynced(t, m, "d/e/f", []byte("f"))
	writeSynced(t, m, "g", []byte("g"))
	for _, d := range []string{"d/e", "d", "."} {
		must(t, vfs.SyncDir(m, d))
	}
	must(t, m.Remove("g"))
	must(t, m.RemoveAll("d"))
	eachClone(t, m, func(t *testing.T, cfg vfs.CrashConfig, c *vfs.Mem) {
		g, gok := content(t, c, "g")
		if cfg.UnsyncedDataPercent == 0 && (!gok || string(g) != "g") {
			t.Fatalf("unsynced remove not undone: %q, %v", g, gok)
		}
		if _, err := c.Stat("d/e/f"); cfg.UnsyncedDataPercent == 0 && err != nil {
			t.Fatalf("unsynced RemoveAll not undone: %v", err)
		}
		if cfg.UnsyncedDataPercent == 100 && gok {
			t.Fatalf("remove undone with 100%% kept")
		}
	})
	must(t, vfs.SyncDir(m, "."))
	eachClone(t, m, func(t *testing.T, cfg vfs.CrashConfig, c *vfs.Mem) {
		// Syncing the root makes removing g and d durable: d's contents
		// go with it, whatever happened inside d.
		for _, n := range []string{"g", "d", "d/e/f"} {
			if _, err := c.Stat(n); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("%s after a synced remove: %v", n, err)
			}
		}
	})
}

func TestCrashWriteFileAtomic(t *testing.T) {
	// Crash at every mutating operation of WriteFileAtomic: the checkpoint
	// holds the old or the new content, never anything else (C8).
	old, updated := []byte("0\n1\nt 0 41\n"), []byte("0\n1\nt 0 42\n")
	for k := 0; ; k++ {
		m := vfs.NewMem()
		writeSynced(t, m, "cp", old)
		must(t, vfs.SyncDir(m, "."))
		crash := vfs.CrashAfter(k)
		err := vfs.WriteFileAtomic(vfs.WithFaults(m, crash), "cp", updated, 0o644)
		if !crash.Crashed() {
			must(t, err)
			if k < 4 {
				t.Fatalf("only %d crash points", k)
			}
			break
		}
		if !errors.Is(err, vfs.ErrCrashed) {
			t.Fatalf("k=%d: error %v, want ErrCrashed", k, err)
		}
		eachClone(t, m, func(t *testing.T, cfg vfs.CrashConfig, c *vfs.Mem) {
			got, ok := content(t, c, "cp")
			if !ok || (!bytes.Equal(got, old) && !bytes.Equal(got, updated)) {
				t.Fatalf("k=%d: checkpoint %q, %v", k, got, ok)
			}
		})
	}
}

func TestCrashCloneIsIndependent(t *testing.T) {
	m := vfs.NewMem()
	writeSynced(t, m, "f", []byte("abc"))
	must(t, vfs.SyncDir(m, "."))
	c := m.CrashClone(vfs.CrashConfig{})
	must(t, vfs.WriteFile(c, "f", []byte("changed"), 0o644))
	must(t, vfs.WriteFile(c, "g", nil, 0o644))
	if got, _ := content(t, m, "f"); string(got) != "abc" {
		t.Fatalf("writing the clone changed the original: %q", got)
	}
	if _, ok := content(t, m, "g"); ok {
		t.Fatalf("creating in the clone created in the original")
	}
	// A clone is synced throughout: cloning it again loses nothing.
	c2 := c.CrashClone(vfs.CrashConfig{})
	if got, _ := content(t, c2, "f"); string(got) != "abc" {
		t.Fatalf("clone of a clone: %q (the unsynced write is gone, the synced data stays)", got)
	}
}

func TestCrashCloneDeterministic(t *testing.T) {
	m := vfs.NewMem()
	for i := range 20 {
		vfs.WriteFile(m, fmt.Sprintf("f%d", i), bytes.Repeat([]byte{byte(i)}, 10000+i), 0o644)
	}
	cfg := vfs.CrashConfig{Seed: 7, UnsyncedDataPercent: 50, TornWrites: true}
	a, b := m.CrashClone(cfg).String(), m.CrashClone(cfg).String()
	if a != b {
		t.Fatalf("same seed, different clones:\n%s\n%s", a, b)
	}
}

// TestCrashDirRenames renames directories into each other's places: no
// crash may lose a subtree in a cycle or show it twice.
func TestCrashDirRenames(t *testing.T) {
	m := vfs.NewMem()
	must(t, m.MkdirAll("a", 0o755))
	must(t, m.MkdirAll("b", 0o755))
	writeSynced(t, m, "a/f", []byte("f"))
	writeSynced(t, m, "b/g", []byte("g"))
	for _, d := range []string{"a", "b", "."} {
		must(t, vfs.SyncDir(m, d))
	}
	must(t, m.Rename("a", "b/x")) // a inside b
	must(t, m.Rename("b/x", "a")) // and out again
	must(t, m.Rename("b", "a/y")) // b inside a
	var walk func(c *vfs.Mem, dir string, found map[string]int)
	walk = func(c *vfs.Mem, dir string, found map[string]int) {
		infos, err := vfs.ReadDir(c, dir)
		must(t, err)
		for _, fi := range infos {
			p := dir + "/" + fi.Name()
			if fi.IsDir() {
				walk(c, p, found)
				continue
			}
			b, err := vfs.ReadFile(c, p)
			must(t, err)
			found[string(b)]++
		}
	}
	eachClone(t, m, func(t *testing.T, cfg vfs.CrashConfig, c *vfs.Mem) {
		found := map[string]int{}
		walk(c, ".", found)
		if found["f"] != 1 || found["g"] != 1 {
			t.Fatalf("files found %v, want f and g once each", found)
		}
	})
}
