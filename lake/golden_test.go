package lake

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/vfs"
)

var update = flag.Bool("update", false, "rewrite testdata/golden_files.txt")

// TestGoldenFiles: the files of the rich partition, with their offsets,
// buckets, triggers, rows, sizes and checksums, are the ones checked in
// (testdata/golden_files.txt; -update rewrites it). A change here is a
// change of the data file bytes: files already in a catalog would no
// longer rebuild to their checksums.
func TestGoldenFiles(t *testing.T) {
	ctx := context.Background()
	fsys := vfs.NewMem()
	g := newGen(t, fsys, "/logs/orders-0")
	writeRich(g)
	cat := openCatalog(t, newClock())
	if err := NewIndexer(cat, openSource(t, fsys, g.dir), testOptions()).Once(ctx); err != nil {
		t.Fatal(err)
	}
	files, err := cat.Files(ctx, 1, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "%d-%d bucket=%d trigger=%s schema=%d rows=%d bytes=%d %s\n", f.StartOffset, f.EndOffset, f.Bucket, f.Trigger, f.SchemaVersion, f.Rows, f.Bytes, f.Checksum)
	}
	path := filepath.Join("testdata", "golden_files.txt")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Fatalf("files differ from %s (run with -update if the change is intended):\n got\n%s\nwant\n%s", path, b.String(), want)
	}
}
