//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestAppendPeakRSS: segviz append streams its input, so its peak RSS is
// bounded by a batch, not by the input. It pipes SEGVIZ_APPEND_RSS_MIB MiB
// (default 64) of small JSON-lines records (about 90 bytes a line), made
// on the fly, into segviz append's standard input, and reads the child's
// peak RSS from its rusage (ru_maxrss, KiB on Linux). The bound is half the
// input, and at most 256 MiB: the 1 GiB run is
//
//	cd e2e && SEGVIZ_APPEND_RSS_MIB=1024 go test -run TestAppendPeakRSS -count=1 -v .
//
// Before streaming, 1.08 GB of small records peaked at 5.6 GB.
func TestAppendPeakRSS(t *testing.T) {
	mib := int64(64)
	if v := os.Getenv("SEGVIZ_APPEND_RSS_MIB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			t.Fatalf("SEGVIZ_APPEND_RSS_MIB=%q: want a size in MiB", v)
		}
		mib = n
	}
	size := mib << 20
	bound := min(size/2, 256<<20)
	bin := segvizBinary(t)
	dir := filepath.Join(t.TempDir(), "logs", "rss-0")

	cmd := exec.Command(bin, "append", dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type genResult struct {
		records int64
		err     error
	}
	gen := make(chan genResult, 1)
	go func() {
		n, err := writeRecords(stdin, size)
		if cerr := stdin.Close(); err == nil {
			err = cerr
		}
		gen <- genResult{n, err}
	}()
	// The acknowledgements: one line per batch, offsets contiguous.
	next := int64(0)
	var ackErr error
	dec := json.NewDecoder(stdout)
	for {
		var ack struct{ FirstOffset, LastOffset int64 }
		if err := dec.Decode(&ack); err == io.EOF {
			break
		} else if err != nil {
			ackErr = err
			io.Copy(io.Discard, stdout)
			break
		}
		if ack.FirstOffset != next || ack.LastOffset < ack.FirstOffset {
			ackErr = fmt.Errorf("acknowledged %+v after offset %d", ack, next-1)
		}
		next = ack.LastOffset + 1
	}
	werr := cmd.Wait()
	elapsed := time.Since(start)
	g := <-gen
	if werr != nil {
		t.Fatalf("segviz append: %v\n%s", werr, stderr.String())
	}
	if g.err != nil {
		t.Fatalf("writing the input: %v", g.err)
	}
	if ackErr != nil {
		t.Fatal(ackErr)
	}
	if next != g.records {
		t.Errorf("%d records acknowledged, %d written", next, g.records)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	t.Logf("segviz append of %d MiB (%d records) from a pipe: peak RSS %.1f MiB, %s (%.1f MiB/s)",
		mib, g.records, float64(rss)/(1<<20), elapsed.Round(time.Millisecond), float64(mib)/elapsed.Seconds())
	if rss > bound {
		t.Errorf("peak RSS %d MiB for %d MiB of input, want under %d MiB", rss>>20, mib, bound>>20)
	}
}

// writeRecords writes JSON lines of small records to w, about size bytes
// in all, and returns how many. Keys and values differ from line to line
// (key-N, value-N and padding), so that nothing is trivially repetitive.
func writeRecords(w io.Writer, size int64) (int64, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	var line, raw []byte
	var written, n int64
	for written < size {
		line = append(line[:0], `{"key":"`...)
		raw = strconv.AppendInt(append(raw[:0], "key-"...), n, 10)
		line = base64.StdEncoding.AppendEncode(line, raw)
		line = append(line, `","value":"`...)
		raw = strconv.AppendInt(append(raw[:0], "value-"...), n, 10)
		raw = append(raw, "-0123456789abcdefghijklmnop"...)
		line = base64.StdEncoding.AppendEncode(line, raw)
		line = append(line, "\"}\n"...)
		if _, err := bw.Write(line); err != nil {
			return n, err
		}
		written += int64(len(line))
		n++
	}
	return n, bw.Flush()
}
