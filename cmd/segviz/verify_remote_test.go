package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/finding"
)

// TestVerifyRemote: after the article's upload and local retention,
// verify --remote reads the four remote segments and the local one as one
// log of 4,000 records from offset 0 and passes (without --remote the
// local partition alone starts at 3817 and passes too); a remote offset
// index removed is an error naming the remote file, in text and JSON.
func TestVerifyRemote(t *testing.T) {
	dir, remote := tierFixture(t)
	uri := "file://" + remote
	tierUploadOf(t, append(tierEnable, "--remote", uri, "--now", fmt.Sprint(tierT0+1000), dir)...)
	tierUploadOf(t, append(tierEnable, "--remote", uri, "--now", fmt.Sprint(tierT0+120_000), dir)...)
	now := fmt.Sprint(tierT0 + 120_000)

	code, out, errs := runSegviz("verify", "--now", now, "--remote", uri, dir)
	if code != exitOK {
		t.Fatalf("verify --remote: exit %d: %s\n%s", code, errs, out)
	}
	if !strings.Contains(out, "4 served segments, offsets 0-3816") || !strings.Contains(out, "log start offset 0, log end offset 4000") || !strings.Contains(out, "4000 records") {
		t.Errorf("verify --remote output:\n%s", out)
	}
	code, out, _ = runSegviz("verify", "--json", "--now", now, "--remote", uri, dir)
	var v struct {
		OK         bool
		Records    int64
		Partitions []struct{ LogStartOffset int64 }
		Remote     map[string]any
		Problems   []finding.Problem
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != exitOK {
		t.Fatalf("verify --remote --json: exit %d, %v\n%s", code, err, out)
	}
	for _, k := range []string{"partitionDir", "topicId", "metadata", "segments", "startOffset", "endOffset", "viewed", "localStartOffset"} {
		if _, ok := v.Remote[k]; !ok {
			t.Errorf("remote has no %q: %v", k, v.Remote)
		}
	}
	if !v.OK || v.Records != 4000 || v.Partitions[0].LogStartOffset != 0 || v.Remote["metadata"] != "segkit" || v.Remote["viewed"] != 4.0 {
		t.Errorf("verify --remote --json: %+v", v)
	}

	// Without --remote: the local log alone.
	code, out, _ = runSegviz("verify", "--now", now, dir)
	if code != exitOK || !strings.Contains(out, "log start offset 3817") {
		t.Errorf("verify without --remote: exit %d\n%s", code, out)
	}

	idx, _ := filepath.Glob(filepath.Join(remote, "kafka-tiered-storage", "*", "*.index"))
	if len(idx) != 4 {
		t.Fatalf("remote indexes %v", idx)
	}
	if err := os.Remove(idx[2]); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runSegviz("verify", "--json", "--now", now, "--remote", uri, dir)
	v.Problems = nil
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != exitProblem {
		t.Fatalf("verify --remote with an index gone: exit %d, %v\n%s", code, err, out)
	}
	found := false
	for _, p := range v.Problems {
		if p.Kind == finding.KindRemoteFileMissing && filepath.FromSlash(p.File) == idx[2] {
			found = true
		}
	}
	if !found {
		t.Errorf("no %s for %s: %+v", finding.KindRemoteFileMissing, idx[2], v.Problems)
	}

	// Refusals: a log directory, an s3:// remote.
	if code, _, errs := runSegviz("verify", "--remote", uri, filepath.Dir(dir)); code != exitUsage || !strings.Contains(errs, "one partition directory") {
		t.Errorf("verify --remote of a log directory: exit %d: %s", code, errs)
	}
	if code, _, errs := runSegviz("verify", "--remote", "s3://bucket/x", dir); code != exitUsage || !strings.Contains(errs, "s3://") {
		t.Errorf("verify --remote s3://: exit %d: %s", code, errs)
	}
}
