package timeline

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/vfs"
)

var generate = flag.Bool("generate", false, "write the grow-* seeds of testdata/fuzz/FuzzOpen")

// A fuzz input is a timeline directory as text, txtar-like: each file is
// a line "-- <name> --" followed by its bytes. Names are relative to the
// active timeline's directory; "history/<name>" is in the archived one.
// An input that starts with fixCRCs has the CRC of every record line
// recomputed before it is written, so that mutations of the JSON reach
// the decoder behind the checksum.

const (
	fileMark = "-- "
	fixCRCs  = "!fixcrc\n"
)

// fixLineCRCs recomputes the CRC of every line of b that looks like a
// record line.
func fixLineCRCs(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line = b[:i+1]
		}
		b = b[len(line):]
		if len(line) > jsonStart && line[crcLen] == ' ' {
			js := bytes.TrimSuffix(line[jsonStart:], []byte("\n"))
			fixed, _ := appendLineRaw(js)
			if line[len(line)-1] != '\n' {
				fixed = fixed[:len(fixed)-1]
			}
			line = fixed
		}
		out = append(out, line...)
	}
	return out
}

// encodeTree returns the fuzz input holding the files of dir.
func encodeTree(t testing.TB, fsys vfs.FS, dir string) []byte {
	t.Helper()
	var b []byte
	for _, f := range files(t, fsys, dir) {
		data, err := vfs.ReadFile(fsys, path.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		b = fmt.Appendf(b, "%s%s --\n", fileMark, f)
		b = append(b, data...)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b = append(b, '\n')
		}
	}
	return b
}

// decodeTree splits a fuzz input into file names and contents. Lines
// "-- <name> --" start a file; a name that is not a plain file name (or
// history/ and one) is dropped with its content.
func decodeTree(in []byte) (names []string, contents [][]byte) {
	var cur int = -1
	for len(in) > 0 {
		line := in
		if i := bytes.IndexByte(in, '\n'); i >= 0 {
			line = in[:i+1]
		}
		in = in[len(line):]
		l := strings.TrimSuffix(string(line), "\n")
		if strings.HasPrefix(l, fileMark) && strings.HasSuffix(l, " --") && len(l) >= 2*len(fileMark) {
			name := l[len(fileMark) : len(l)-len(" --")]
			if validFuzzName(name) && !slices.Contains(names, name) {
				names = append(names, name)
				contents = append(contents, nil)
				cur = len(names) - 1
			} else {
				cur = -1
			}
			continue
		}
		if cur >= 0 {
			contents[cur] = append(contents[cur], line...)
		}
	}
	return names, contents
}

func validFuzzName(name string) bool {
	name = strings.TrimPrefix(name, HistoryDirName+"/")
	if name == "" || name == "." || name == ".." || name == HistoryDirName || len(name) > 100 {
		return false
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// typedError reports whether err is one FuzzOpen accepts: a corruption
// (*format.CorruptionError) or a filesystem error (*fs.PathError).
func typedError(err error) bool {
	var ce *format.CorruptionError
	var pe *fs.PathError
	return errors.As(err, &ce) || errors.As(err, &pe)
}

// openAll opens the timeline and reads every instant.
func openAll(fsys vfs.FS, opt Options) (*Timeline, []Instant, error) {
	tl, err := Open(fsys, partDir, opt)
	if err != nil {
		return nil, nil, err
	}
	insts, err := tl.Instants(Filter{})
	return tl, insts, err
}

// FuzzOpen opens timeline directories made of fuzzed files. It never
// panics, and fails only with typed errors; and when a directory opens:
// Instants are completed, in strictly increasing time; read-only and
// writable Opens see the same instants and pending ones, and so does a
// second writable Open (the first removed only leftovers); a new instant
// can be recorded, and the next Open sees it after all the others.
func FuzzOpen(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
		f.Add(append([]byte(fixCRCs), s...))
	}
	f.Add([]byte("-- 17172432000010000.roll.requested --\n00000000 {}\n"))
	f.Add([]byte("-- history/17172432000010000_17172432000020000_0.archive --\n"))
	f.Add([]byte("-- history --\nnot a directory\n"))
	f.Fuzz(fuzzBody)
}

func fuzzBody(t *testing.T, in []byte) {
	{
		m := newPartition(t)
		fix := bytes.HasPrefix(in, []byte(fixCRCs))
		names, contents := decodeTree(bytes.TrimPrefix(in, []byte(fixCRCs)))
		if fix {
			for i := range contents {
				contents[i] = fixLineCRCs(contents[i])
			}
		}
		tdir := Dir(partDir)
		if err := m.MkdirAll(path.Join(tdir, HistoryDirName), 0o755); err != nil {
			t.Fatal(err)
		}
		for i, n := range names {
			if err := vfs.WriteFile(m, path.Join(tdir, n), contents[i], 0o644); err != nil {
				if strings.HasPrefix(n, HistoryDirName+"/") {
					continue // a file named history took the directory's place
				}
				t.Fatal(err)
			}
		}
		opt := Options{ArchiveAfter: 4, MergeAfter: 2, Clock: newClock()}
		ro, roInsts, roErr := openAll(m, Options{ReadOnly: true})
		if roErr != nil && !typedError(roErr) {
			t.Fatalf("read-only: untyped error %T %v", roErr, roErr)
		}
		rw, insts, err := openAll(m, opt)
		if err != nil && !typedError(err) {
			t.Fatalf("writable: untyped error %T %v", err, err)
		}
		if (roErr == nil) != (err == nil) {
			t.Fatalf("read-only Open: %v; writable: %v", roErr, err)
		}
		if err != nil {
			return
		}
		checkList := func(what string, insts []Instant) {
			for i, in := range insts {
				if in.State != Completed || in.Completed.Compare(in.Time) <= 0 {
					t.Fatalf("%s: instant %s", what, in)
				}
				if i > 0 && in.Time.Compare(insts[i-1].Time) <= 0 {
					t.Fatalf("%s: %s after %s", what, in, insts[i-1])
				}
			}
		}
		checkList("writable", insts)
		if d := sameInstants(t, roInsts, insts); d != "" {
			t.Fatalf("read-only and writable Opens differ:\n%s", d)
		}
		pendingTimes := func(tl *Timeline) []string {
			var out []string
			for _, x := range tl.Pending() {
				in := x.Instant()
				if in.State != Requested && in.State != Inflight {
					t.Fatalf("pending %s", in)
				}
				out = append(out, in.String())
			}
			return out
		}
		if a, b := pendingTimes(ro), pendingTimes(rw); !slices.Equal(a, b) {
			t.Fatalf("pending read-only %v, writable %v", a, b)
		}
		_, again, err := openAll(m, opt)
		if err != nil {
			t.Fatalf("a second Open: %v", err)
		}
		if d := sameInstants(t, again, insts); d != "" {
			t.Fatalf("a second Open sees other instants:\n%s", d)
		}

		x, err := rw.Begin(ActionRoll, rollPlan(1))
		if err == nil {
			err = x.Complete(nil)
		}
		if errors.Is(err, ErrTimeRange) {
			return // the fuzzed times reach the year 2286
		}
		if err != nil {
			t.Fatalf("recording an instant: %v", err)
		}
		_, after, err := openAll(m, opt)
		if err != nil {
			t.Fatalf("Open after recording an instant: %v", err)
		}
		checkList("after recording", after)
		if len(after) != len(insts)+1 || after[len(after)-1].Time != x.Instant().Time {
			t.Fatalf("after recording %s: %d instants (was %d), the last %v", x.Instant(), len(after), len(insts), after[len(after)-1])
		}
	}
}

// fuzzSeeds returns timeline directories in the states the package
// writes and a crash leaves: active instants in every state, archived
// and merged ones, rollbacks, leftovers.
func fuzzSeeds(t testing.TB) [][]byte {
	var out [][]byte
	tdir := Dir(partDir)
	for _, n := range []int{1, 3, 9, 17} {
		m := newPartition(t)
		tl := mustOpen(t, m, Options{Clock: newClock(), ArchiveAfter: 4, MergeAfter: 2})
		for i := range n {
			switch i % 4 {
			case 0, 1:
				runInstant(t, tl, i)
			case 2:
				x, _ := tl.Begin(ActionClean, &Clean{Rule: "time", Segments: []SegmentRef{{BaseOffset: int64(i)}}})
				x.Inflight()
				x.Rollback("seed")
			case 3:
				x, _ := tl.Begin(ActionSavepoint, &Savepoint{Label: "s"})
				x.Complete(nil)
			}
		}
		x, _ := tl.Begin(ActionCompaction, &Compaction{FirstDirtyOffset: 3})
		out = append(out, encodeTree(t, m, tdir))
		x.Inflight()
		out = append(out, encodeTree(t, m, tdir))
		// Every prefix of the writes of a completion and its archival:
		// the leftovers a crash would leave.
		c := m.CrashClone(vfs.CrashConfig{})
		for k := 0; ; k++ {
			img := c.CrashClone(vfs.CrashConfig{})
			crash := vfs.CrashAfter(k)
			tl2, err := Open(vfs.WithFaults(img, crash), partDir, Options{Clock: newClock(), ArchiveAfter: 4, MergeAfter: 2})
			if err != nil {
				break
			}
			if p := tl2.Pending(); len(p) > 0 {
				p[0].Complete(nil)
			}
			if !crash.Crashed() {
				break
			}
			out = append(out, encodeTree(t, img, tdir))
		}
	}
	return out
}

// TestGenerateFuzzOpenSeeds writes the seeds of fuzzSeeds as grow-*
// files of testdata/fuzz/FuzzOpen. Run with -generate.
func TestGenerateFuzzOpenSeeds(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to write testdata/fuzz/FuzzOpen")
	}
	g := fuzzseed.NewGrow(t, "FuzzOpen")
	for _, s := range fuzzSeeds(t) {
		g.Add("timeline", s)
		g.Add("fixcrc", append([]byte(fixCRCs), s...))
	}
	g.Write()
}

// TestFuzzTreeRoundTrip checks the fuzz input encoding: a timeline
// directory encoded and decoded is the same files.
func TestFuzzTreeRoundTrip(t *testing.T) {
	m := newPartition(t)
	tl := mustOpen(t, m, Options{Clock: newClock(), ArchiveAfter: 4, MergeAfter: 3})
	for i := range 9 {
		runInstant(t, tl, i)
	}
	tdir := Dir(partDir)
	want := snapshot(t, m, tdir)
	names, contents := decodeTree(encodeTree(t, m, tdir))
	got := map[string][]byte{}
	for i, n := range names {
		got[n] = contents[i]
	}
	if !sameSnapshot(got, want) || len(want) < 3 {
		t.Errorf("round trip: %d files, want %d", len(got), len(want))
	}
}
