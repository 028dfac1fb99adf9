package fuzz

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"testing"

	"github.com/segkit/segkit/internal/dumplog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// A FuzzDumpJSON input is a mode byte and a file (doc.go):
//
//	mode  bits 0-1  file kind: 0 .log, 1 .index, 2 .timeindex, 3 .txnindex
//	      bit 2     Deep (one line per record)
//	      bit 3     PrintData (keys and values)
//	      bit 4     also run the text dump
//	      bit 5     Verify (index kinds: cross-check against the .log)
//	.log          the rest of the input
//	index kinds   a 2-byte big-endian length n, n bytes of .log, then the
//	              index file
const (
	dumpKindMask   = 3
	dumpDeep       = 1 << 2
	dumpPrintData  = 1 << 3
	dumpText       = 1 << 4
	dumpVerify     = 1 << 5
	dumpSegment    = "00000000000000000000"
	dumpMaxDecomp  = 1 << 20
	dumpMaxLineLen = 8 << 20
)

var dumpExts = [4]string{".log", ".index", ".timeindex", ".txnindex"}

// encodeDump builds a FuzzDumpJSON input.
func encodeDump(mode byte, log, idx []byte) []byte {
	b := []byte{mode}
	if mode&dumpKindMask == 0 {
		return append(b, log...)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(log)))
	b = append(b, log...)
	return append(b, idx...)
}

func decodeDump(data []byte) (mode byte, log, idx []byte) {
	if len(data) == 0 {
		return 0, nil, nil
	}
	mode, data = data[0], data[1:]
	if mode&dumpKindMask == 0 {
		return mode, data, nil
	}
	n := 0
	if len(data) >= 2 {
		n = int(binary.BigEndian.Uint16(data))
		data = data[2:]
	} else {
		data = nil
	}
	n = min(n, len(data))
	return mode, data[:n], data[n:]
}

// runDumpJSON is FuzzDumpJSON's body: the dump never panics, returns no
// error for bytes it can read, and prints only valid JSON lines of the
// documented types, consistent with its result.
func runDumpJSON(t testing.TB, data []byte) {
	mode, log, idx := decodeDump(data)
	if mode&dumpKindMask == 0 {
		checkLogDump(t, mode, log)
		return
	}
	mem := vfs.NewMem()
	if err := vfs.WriteFile(mem, dumpSegment+".log", log, 0o644); err != nil {
		t.Fatal(err)
	}
	p := dumpSegment + dumpExts[mode&dumpKindMask]
	if err := vfs.WriteFile(mem, p, idx, 0o644); err != nil {
		t.Fatal(err)
	}
	opt := dumplog.IndexOptions{JSON: true, Verify: mode&dumpVerify != 0}
	var out bytes.Buffer
	res, err := dumplog.Index(&out, mem, p, opt)
	if err != nil {
		t.Fatalf("Index(%s): %v", p, err)
	}
	counts := checkJSONLines(t, &out, map[string]any{
		"index": &dumplog.IndexJSON{}, "timeindex": &dumplog.TimeIndexJSON{}, "txnindex": &dumplog.TxnIndexJSON{},
		"problem": &dumplog.ProblemJSON{}, "sanity": &dumplog.SanityJSON{},
	})
	entries := counts["index"] + counts["timeindex"] + counts["txnindex"]
	if entries != res.Entries {
		t.Fatalf("%d entry lines, result says %d", entries, res.Entries)
	}
	if counts["problem"] != res.Errors+res.Warnings+res.Infos {
		t.Fatalf("%d problem lines, result says %d+%d+%d", counts["problem"], res.Errors, res.Warnings, res.Infos)
	}
	if mode&dumpText != 0 {
		opt.JSON = false
		if _, err := dumplog.Index(io.Discard, mem, p, opt); err != nil {
			t.Fatalf("text Index(%s): %v", p, err)
		}
	}
}

func checkLogDump(t testing.TB, mode byte, log []byte) {
	opt := dumplog.Options{JSON: true, Deep: mode&dumpDeep != 0, PrintData: mode&dumpPrintData != 0, MaxDecompressed: dumpMaxDecomp}
	var out bytes.Buffer
	path := dumpSegment + ".log"
	res, err := dumplog.Log(&out, bytes.NewReader(log), int64(len(log)), path, opt)
	if err != nil {
		t.Fatalf("Log: %v", err)
	}
	deep := opt.Deep || opt.PrintData
	var batch *dumplog.BatchJSON
	var recordsInBatch int
	counts := map[string]int{}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, dumpMaxLineLen)
	for sc.Scan() {
		line := sc.Bytes()
		typ := lineType(t, line)
		counts[typ]++
		switch typ {
		case "batch":
			var b dumplog.BatchJSON
			strictJSON(t, line, &b)
			if b.File != path || b.Position < 0 || b.Position+int64(b.Size) > int64(len(log)) || b.Size < record.LogOverhead {
				t.Fatalf("batch line %s: outside the %d-byte file", line, len(log))
			}
			batch, recordsInBatch = &b, 0
		case "record":
			if !deep {
				t.Fatalf("record line without --deep: %s", line)
			}
			if batch == nil {
				t.Fatalf("record line before any batch: %s", line)
			}
			var r dumplog.RecordJSON
			strictJSON(t, line, &r)
			recordsInBatch++
			if batch.Magic == record.MagicV2 && (r.Offset < batch.BaseOffset || r.Offset > batch.LastOffset || recordsInBatch > batch.Count) {
				t.Fatalf("record %s outside its batch %+v", line, batch)
			}
			checkRecordData(t, line, &r, opt.PrintData)
		case "error":
			var e dumplog.ErrorJSON
			strictJSON(t, line, &e)
			if e.File != path || e.Error == "" || e.Position < 0 || e.Position > int64(len(log)) {
				t.Fatalf("error line %s", line)
			}
		default:
			t.Fatalf("line of undocumented type %q: %s", typ, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the dump: %v", err)
	}
	if counts["batch"] != res.Batches || counts["error"] != res.Problems {
		t.Fatalf("%d batch and %d error lines, result %+v", counts["batch"], counts["error"], res)
	}
	if mode&dumpText != 0 {
		if _, err := dumplog.Log(io.Discard, bytes.NewReader(log), int64(len(log)), path, dumplog.Options{Deep: opt.Deep, PrintData: opt.PrintData, MaxDecompressed: dumpMaxDecomp}); err != nil {
			t.Fatalf("text Log: %v", err)
		}
	}
}

// checkRecordData checks a record line's sizes against its data.
func checkRecordData(t testing.TB, line []byte, r *dumplog.RecordJSON, printData bool) {
	if r.KeySize < -1 || r.ValueSize < -1 {
		t.Fatalf("record %s: sizes below -1", line)
	}
	if !printData {
		if r.Key != nil || r.Value != nil {
			t.Fatalf("record %s: data without --print-data", line)
		}
		return
	}
	for _, kv := range []struct {
		v    *string
		size int
	}{{r.Key, r.KeySize}, {r.Value, r.ValueSize}} {
		if kv.v == nil {
			if kv.size != -1 {
				t.Fatalf("record %s: null data of size %d", line, kv.size)
			}
			continue
		}
		b, err := base64.StdEncoding.DecodeString(*kv.v)
		if err != nil || len(b) != kv.size {
			t.Fatalf("record %s: data does not decode to %d bytes: %v", line, kv.size, err)
		}
	}
	if !bytes.Contains(line, []byte(`"key":`)) || !bytes.Contains(line, []byte(`"value":`)) {
		t.Fatalf("record %s: --print-data must print key and value, null included", line)
	}
}

// lineType returns the "type" of a JSON object line.
func lineType(t testing.TB, line []byte) string {
	var head struct {
		Type string `json:"type"`
	}
	if !json.Valid(line) {
		t.Fatalf("not valid JSON: %q", line)
	}
	if err := json.Unmarshal(line, &head); err != nil || head.Type == "" {
		t.Fatalf("not a typed JSON object (%v): %s", err, line)
	}
	return head.Type
}

// strictJSON decodes a line into the documented type, refusing fields it
// does not declare.
func strictJSON(t testing.TB, line []byte, v any) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		t.Fatalf("line %s is not a %T: %v", line, v, err)
	}
}

// checkJSONLines checks that every line is one of the given types and
// returns how many of each.
func checkJSONLines(t testing.TB, out io.Reader, types map[string]any) map[string]int {
	counts := map[string]int{}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, dumpMaxLineLen)
	for sc.Scan() {
		line := sc.Bytes()
		typ := lineType(t, line)
		v, ok := types[typ]
		if !ok {
			t.Fatalf("line of undocumented type %q: %s", typ, line)
		}
		strictJSON(t, line, v)
		counts[typ]++
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the dump: %v", err)
	}
	return counts
}
