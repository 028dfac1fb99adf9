package entrychunks_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/segkit/segkit/internal/entrychunks"
	"github.com/segkit/segkit/internal/maprange"
)

// TestRunMappedFileShrinks truncates a mapped file from process and from
// apply, then reads the chunk's bytes: in process the fault makes the
// chunk not clean (Run stops before it), in apply it is Run's error,
// maprange.ErrShrank. Neither crashes (SIGBUS without SetPanicOnFault).
func TestRunMappedFileShrinks(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	data, _ := entries(rng, 3000, 900)
	for _, in := range []string{"process", "apply"} {
		t.Run(in, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "seg.log")
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cut := func() {
				if err := os.Truncate(name, 0); err != nil {
					t.Error(err)
				}
			}
			var sum byte
			touch := func(b []byte) {
				for _, c := range b {
					sum += c
				}
			}
			applied := 0
			end, err := entrychunks.Run(f, 0, int64(len(data)), entrychunks.Options{Workers: 1, ChunkSize: 64 << 10, Map: maprange.For(f)},
				func(_ int, c entrychunks.Chunk, _ *struct{}) bool {
					if in == "process" {
						cut()
					}
					touch(c.Buf)
					return true
				},
				func(c entrychunks.Chunk, _ *struct{}) error {
					applied++
					if in == "apply" {
						cut()
						touch(c.Buf)
					}
					return nil
				})
			switch in {
			case "process":
				if err != nil || end != 0 || applied != 0 {
					t.Errorf("Run = %d, %v, %d chunks applied; want 0, nil, none", end, err, applied)
				}
			case "apply":
				if !errors.Is(err, maprange.ErrShrank) || applied != 1 {
					t.Errorf("Run = %d, %v, %d chunks applied; want %v after 1", end, err, applied, maprange.ErrShrank)
				}
			}
		})
	}
}
