package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/segkit/segkit/internal/viz"
)

// TestServeRemote: serve --remote after the article's upload and local
// retention shows the four remote segments and the local one on one strip
// (where "remote" and "local"), with the remote's segments in "remote";
// the batches of a remote segment are served from the remote's files, and
// verification covers them (4,000 records, no error).
func TestServeRemote(t *testing.T) {
	dir, remote := tierFixture(t)
	uri := "file://" + remote
	tierUploadOf(t, append(tierEnable, "--remote", uri, "--now", fmt.Sprint(tierT0+1000), dir)...)
	// Before local retention: every closed segment is on both sides.
	url, stdout, _ := startServe(t, serveOptions{addr: "127.0.0.1:0", dir: dir, remote: uri})
	var p viz.PartitionJSON
	if code := getJSON(t, url+"api/partition?dir=.", &p); code != 200 {
		t.Fatalf("partition: %d", code)
	}
	if got := wheres(p); got != "both both both both local" || p.Remote == nil || len(p.Remote.Segments) != 4 || !strings.Contains(stdout.String(), "with its remote") {
		t.Errorf("before local retention: segments %s, remote %+v; stdout %q", got, p.Remote, stdout)
	}

	tierUploadOf(t, append(tierEnable, "--remote", uri, "--now", fmt.Sprint(tierT0+120_000), dir)...)
	url, _, _ = startServe(t, serveOptions{addr: "127.0.0.1:0", dir: dir, remote: uri})
	p = viz.PartitionJSON{}
	getJSON(t, url+"api/partition?dir=.", &p)
	if got := wheres(p); got != "remote remote remote remote local" || p.LogStartOffset != 0 || p.LogEndOffset != 4000 || p.Remote.Metadata != "segkit" {
		t.Fatalf("after local retention: segments %s, log %d..%d, remote %+v", got, p.LogStartOffset, p.LogEndOffset, p.Remote)
	}
	for i, r := range p.Remote.Segments {
		if r.Local || r.BaseOffset != p.Segments[i].BaseOffset || r.EndOffset+1 != p.Segments[i].NextOffset || r.State != "COPY_SEGMENT_FINISHED" {
			t.Errorf("remote segment %d: %+v; strip segment %+v", i, r, p.Segments[i])
		}
	}
	var b viz.BatchesJSON
	if code := getJSON(t, url+fmt.Sprintf("api/batches?dir=.&base=%d&limit=3", p.Segments[1].BaseOffset), &b); code != 200 || len(b.Batches) != 3 || b.Batches[0].BaseOffset != p.Segments[1].BaseOffset {
		t.Errorf("batches of remote segment %d: %d %+v", p.Segments[1].BaseOffset, code, b)
	}
	var v viz.VerifyJSON
	if code := getJSON(t, url+"api/verify?dir=.", &v); code != 200 || !v.OK || v.Records != 4000 || v.Segments != 5 {
		t.Errorf("verify: %d ok %v, %d records in %d segments, %d errors", code, v.OK, v.Records, v.Segments, v.Errors)
	}

	// --remote takes one partition directory.
	if code, _, errs := runSegviz("serve", "--remote", uri); code != exitUsage || !strings.Contains(errs, "partition directory") {
		t.Errorf("serve --remote without DIR: exit %d: %s", code, errs)
	}
}

func wheres(p viz.PartitionJSON) string {
	var w []string
	for _, s := range p.Segments {
		w = append(w, s.Where)
	}
	return strings.Join(w, " ")
}
