package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// TestAppendRecordsRolls: the rolls "segviz append" makes are roll
// instants on the partition's timeline, each naming the segment it closed,
// and "segviz history --offset" names the roll that closed an offset's
// segment.
func TestAppendRecordsRolls(t *testing.T) {
	defer setNow(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))()
	dir := filepath.Join(t.TempDir(), "logs", "fixture-0")
	if code, _, errs := appendCmd(t, records(40), "--segment.bytes", "400", "--batch-records", "2", dir); code != exitOK {
		t.Fatalf("append: exit %d: %s", code, errs)
	}
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true, Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	segs := l.Segments()
	insts, err := l.Timeline().Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionRoll}})
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) < 4 || len(insts) != len(segs)-1 {
		t.Fatalf("%d segments, %d roll instants", len(segs), len(insts))
	}
	for i, in := range insts {
		r := in.Result.(*timeline.Roll)
		if r.Reason != "segment.bytes" || r.NewBaseOffset != segs[i+1].BaseOffset() || r.Closed == nil || r.Closed.BaseOffset != segs[i].BaseOffset() || r.Closed.NextOffset != segs[i+1].BaseOffset() {
			t.Fatalf("roll instant %d: %+v (closed %+v); segments %d and %d", i, r, r.Closed, segs[i].BaseOffset(), segs[i+1].BaseOffset())
		}
	}
	// An offset of the second segment was written before the second roll.
	n := segs[1].BaseOffset()
	var out, errb bytes.Buffer
	if code := runHistory([]string{"--offset", strconv.FormatInt(n, 10), "--json", dir}, &out, &errb); code != exitOK {
		t.Fatalf("history: exit %d: %s", code, errb.String())
	}
	var got struct {
		Readable  bool   `json:"readable"`
		WrittenBy *int64 `json:"writtenBy"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if !got.Readable || got.WrittenBy == nil || *got.WrittenBy != insts[1].Time.Millis {
		t.Fatalf("history --offset %d: %s, want written by %d", n, strings.TrimSpace(out.String()), insts[1].Time.Millis)
	}
}
