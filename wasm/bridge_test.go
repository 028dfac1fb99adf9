//go:build js && wasm

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/demo"
	"github.com/segkit/segkit/internal/dumplog"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/internal/viz"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// The tests call the bridge as the page does: through the global segkit
// object, awaiting its Promises, with Blobs for files.

var registered = register(js.Global())

func segkit() js.Value { return js.Global().Get("segkit") }

// blob makes a JavaScript Blob of b that counts the bytes read from it
// (counter.calls, counter.bytes), with a lastModified.
func blob(b []byte, mtime time.Time, counter js.Value) js.Value {
	u8 := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(u8, b)
	bl := js.Global().Get("Blob").New([]any{u8})
	wrap := js.Global().Get("Function").New("blob", "counter", "mtime",
		`return {size: blob.size, lastModified: mtime, slice: (a, b) => { counter.calls++; counter.bytes += b - a; return blob.slice(a, b); }}`)
	return wrap.Invoke(bl, counter, float64(mtime.UnixMilli()))
}

func newCounter() js.Value {
	return js.ValueOf(map[string]any{"calls": 0, "bytes": 0})
}

// addFiles gives the bridge files by path.
func addFiles(t *testing.T, files map[string]js.Value) js.Value {
	t.Helper()
	list := js.Global().Get("Array").New()
	for p, f := range files {
		list.Call("push", js.ValueOf(map[string]any{"path": p, "file": f}))
	}
	v, err := await(segkit().Call("addFiles", list))
	if err != nil {
		t.Fatalf("addFiles: %v", err)
	}
	return v
}

// call runs a method through the bridge and decodes its result.
func call[T any](t *testing.T, method string, params map[string]any) T {
	t.Helper()
	v, err := await(segkit().Call("call", method, js.ValueOf(params)))
	if err != nil {
		t.Fatalf("segkit.call(%q, %v): %v", method, params, err)
	}
	var out T
	if err := json.Unmarshal([]byte(js.Global().Get("JSON").Call("stringify", v).String()), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// native runs the same method natively and decodes it the same way.
func native[T any](t *testing.T, s *viz.Session, method string, params map[string]any) T {
	t.Helper()
	p := viz.Params{}
	for k, v := range params {
		p[k] = fmt.Sprint(v)
	}
	v, err := s.Dispatch(method, p)
	if err != nil {
		t.Fatalf("native %s: %v", method, err)
	}
	b, _ := json.Marshal(v)
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// demoFiles turns the demo's filesystem into Blobs.
func demoFiles(t *testing.T, d *demo.Demo, counter js.Value) map[string]js.Value {
	t.Helper()
	files := map[string]js.Value{}
	var walk func(dir string)
	walk = func(dir string) {
		infos, err := vfs.ReadDir(d.FS, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, fi := range infos {
			p := path.Join(dir, fi.Name())
			if fi.IsDir() {
				walk(p)
				continue
			}
			data, err := vfs.ReadFile(d.FS, p)
			if err != nil {
				t.Fatal(err)
			}
			files[p] = blob(data, fi.ModTime(), counter)
		}
	}
	walk(demo.LogDir)
	return files
}

func TestBridgeMatchesNative(t *testing.T) {
	d, err := demo.Get()
	if err != nil {
		t.Fatal(err)
	}
	res := addFiles(t, demoFiles(t, d, newCounter()))
	if got := res.Get("name").String(); got != demo.LogDir {
		t.Errorf("name %q", got)
	}
	if n := res.Get("partitions").Length(); n != 2 {
		t.Fatalf("%d partitions", n)
	}
	nat := viz.NewSession(d.FS, viz.Options{Name: demo.LogDir, Config: func(string) config.Config { return config.Default() }})
	now := demo.Now.UnixMilli()
	for _, dir := range []string{demo.Partition, demo.Damaged} {
		p := call[viz.PartitionJSON](t, "partition", map[string]any{"dir": dir})
		np := native[viz.PartitionJSON](t, nat, "partition", map[string]any{"dir": dir})
		p.Now, np.Now = 0, 0
		same(t, "partition "+dir, p, np)
		for _, sg := range p.Segments {
			base := sg.BaseOffset
			q := map[string]any{"dir": dir, "base": base}
			same(t, fmt.Sprintf("scan %d", base), call[viz.ScanJSON](t, "scan", q), native[viz.ScanJSON](t, nat, "scan", q))
			bs := call[viz.BatchesJSON](t, "batches", map[string]any{"dir": dir, "base": base, "limit": 500})
			same(t, fmt.Sprintf("batches %d", base), bs, native[viz.BatchesJSON](t, nat, "batches", map[string]any{"dir": dir, "base": base, "limit": 500}))
			for i, b := range bs.Batches {
				if i%7 != 0 {
					continue
				}
				q := map[string]any{"dir": dir, "base": base, "position": b.Position}
				same(t, "records", call[viz.RecordsJSON](t, "records", q), native[viz.RecordsJSON](t, nat, "records", q))
				same(t, "layout", call[viz.LayoutJSON](t, "layout", q), native[viz.LayoutJSON](t, nat, "layout", q))
			}
			for _, kind := range []string{"offset", "time", "txn"} {
				q := map[string]any{"dir": dir, "base": base, "kind": kind, "check": true}
				same(t, "index "+kind, call[viz.IndexJSON](t, "index", q), native[viz.IndexJSON](t, nat, "index", q))
			}
		}
		q := map[string]any{"dir": dir, "now": now, "retention.ms": 3 * 86400000}
		same(t, "retention", call[viz.RetentionJSON](t, "retention", q), native[viz.RetentionJSON](t, nat, "retention", q))
		same(t, "verify", call[viz.VerifyJSON](t, "verify", q), native[viz.VerifyJSON](t, nat, "verify", q))
		// The lane (orders-0 has a timeline, orders-1 none) and "why is
		// this gone", over the dropped .segkit/timeline files.
		tq := map[string]any{"dir": dir}
		lane := call[viz.TimelineJSON](t, "timeline", tq)
		same(t, "timeline "+dir, lane, native[viz.TimelineJSON](t, nat, "timeline", tq))
		if want := dir == demo.Partition; (len(lane.Instants) > 0) != want {
			t.Errorf("timeline %s: %d instants", dir, len(lane.Instants))
		}
		for _, off := range []int64{0, 380, 2600, 1 << 40} {
			wq := map[string]any{"dir": dir, "offset": off}
			same(t, fmt.Sprintf("whygone %s %d", dir, off), call[viz.WhyGoneJSON](t, "whygone", wq), native[viz.WhyGoneJSON](t, nat, "whygone", wq))
		}
	}
	b := call[viz.BytesJSON](t, "bytes", map[string]any{"dir": demo.LogDir, "file": "log-start-offset-checkpoint", "length": 100})
	if b.Length == 0 || b.Length != int(b.FileSize) {
		t.Errorf("bytes %+v", b)
	}
}

func same[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Errorf("%s: the bridge answers\n%.600s\nnatively\n%.600s", what, g, w)
	}
}

func TestBridgeErrors(t *testing.T) {
	d, _ := demo.Get()
	addFiles(t, demoFiles(t, d, newCounter()))
	for _, tc := range []struct {
		method string
		params map[string]any
		kind   string
	}{
		{"nope", nil, "bad-request"},
		{"partition", map[string]any{"dir": "../x"}, "bad-request"},
		{"partition", map[string]any{"dir": "kafka-logs/none-0"}, "not-found"},
		{"scan", map[string]any{"dir": demo.Partition, "base": 1}, "not-found"},
	} {
		_, err := await(segkit().Call("call", tc.method, js.ValueOf(tc.params)))
		if err == nil {
			t.Errorf("%s %v: no error", tc.method, tc.params)
			continue
		}
		// The rejection is an Error with a kind.
		p := segkit().Call("call", tc.method, js.ValueOf(tc.params))
		kind := js.Global().Get("Promise").Call("resolve", p).Call("catch", js.FuncOf(func(_ js.Value, args []js.Value) any { return args[0].Get("kind") }))
		v, _ := await(kind)
		if v.String() != tc.kind {
			t.Errorf("%s %v: kind %q, want %q (%v)", tc.method, tc.params, v.String(), tc.kind, err)
		}
	}
	if _, err := await(segkit().Call("addFiles", js.ValueOf([]any{}))); err == nil || !strings.Contains(err.Error(), "no files") {
		t.Errorf("addFiles of nothing: %v", err)
	}
}

// TestBridgePaging checks that a large segment is read a block at a time:
// a scan page, a layout and a hex page read a small part of the file.
func TestBridgePaging(t *testing.T) {
	mem := vfs.NewMem()
	cfg := config.Default()
	l, err := kafkalog.Open(mem, "big-0", cfg, kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	val := bytes.Repeat([]byte("0123456789abcdef"), 64)
	recs := make([]record.Record, 16)
	for i := range recs {
		recs[i] = record.Record{Key: []byte(fmt.Sprint(i)), Value: val, Timestamp: time.Now().UnixMilli()}
	}
	var buf []byte
	for range 600 {
		spec := record.NewBatchSpec(0, compress.None)
		if buf, err = w.AppendBatch(buf[:0], &spec, recs); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(buf, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	counter := newCounter()
	files := map[string]js.Value{}
	infos, _ := vfs.ReadDir(mem, "big-0")
	var logSize int64
	for _, fi := range infos {
		data, _ := vfs.ReadFile(mem, "big-0/"+fi.Name())
		files["big-0/"+fi.Name()] = blob(data, fi.ModTime(), counter)
		if strings.HasSuffix(fi.Name(), ".log") {
			logSize = fi.Size()
		}
	}
	addFiles(t, files)
	part := call[viz.PartitionJSON](t, "partition", map[string]any{"dir": "big-0"})
	afterOpen := counter.Get("bytes").Int()
	sc := call[viz.ScanJSON](t, "scan", map[string]any{"dir": "big-0", "base": 0, "maxBytes": 1 << 20})
	read := counter.Get("bytes").Int() - afterOpen
	if sc.Done || len(sc.Rows.Position) == 0 || read > 3<<20 {
		t.Errorf("a 1 MiB scan page of a %d-byte segment read %d bytes (%d rows, done %v)", logSize, read, len(sc.Rows.Position), sc.Done)
	}
	last := sc.Rows.Position[len(sc.Rows.Position)-1]
	before := counter.Get("bytes").Int()
	call[viz.LayoutJSON](t, "layout", map[string]any{"dir": "big-0", "base": 0, "position": last})
	call[viz.BytesJSON](t, "bytes", map[string]any{"dir": "big-0", "file": "00000000000000000000.log", "position": logSize - 4096, "length": 4096})
	if n := counter.Get("bytes").Int() - before; n > 3<<20 {
		t.Errorf("a layout and a hex page read %d bytes", n)
	}
	if logSize < 8<<20 || part.Bytes != logSize {
		t.Errorf("segment of %d bytes, partition %d", logSize, part.Bytes)
	}
	t.Logf("%d-byte segment: opening read %d bytes in %d slices; a 1 MiB scan page %d bytes", logSize, afterOpen, counter.Get("calls").Int(), read)
}

// TestBridgeRealData counts a real broker's partition in the bridge as
// segviz dump does.
func TestBridgeRealData(t *testing.T) {
	root := realdata.Dir(t)
	dir := filepath.Join(root, "dipendrasaini__kafka-learnning-series", "tmp", "kafka-logs-1", "invoice-0")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]js.Value{}
	want := map[int64][2]int{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files["invoice-0/"+e.Name()] = blob(data, time.Now(), newCounter())
		if strings.HasSuffix(e.Name(), ".log") {
			res, err := dumplog.Log(&bytes.Buffer{}, bytes.NewReader(data), int64(len(data)), e.Name(), dumplog.Options{JSON: true})
			if err != nil {
				t.Fatal(err)
			}
			var base int64
			fmt.Sscanf(e.Name(), "%d", &base)
			want[base] = [2]int{res.Batches, res.Records}
		}
	}
	addFiles(t, files)
	p := call[viz.PartitionJSON](t, "partition", map[string]any{"dir": "invoice-0"})
	if len(p.Segments) != len(want) {
		t.Fatalf("%d segments, %d .log files", len(p.Segments), len(want))
	}
	for _, sg := range p.Segments {
		var rows, records int
		for from := int64(0); ; {
			sc := call[viz.ScanJSON](t, "scan", map[string]any{"dir": "invoice-0", "base": sg.BaseOffset, "from": from})
			rows += len(sc.Rows.Position)
			records += int(sc.Records)
			if sc.Done {
				break
			}
			from = sc.Next
		}
		if w := want[sg.BaseOffset]; rows != w[0] || records != w[1] {
			t.Errorf("segment %d: %d batches %d records, dump %d and %d", sg.BaseOffset, rows, records, w[0], w[1])
		}
	}
}

func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{"/a/b.log": "a/b.log", "a\\b.log": "a/b.log", "../../x": "x", "a/./b": "a/b"} {
		if got := cleanPath(in); got != want {
			t.Errorf("cleanPath(%q) = %q, want %q", in, got, want)
		}
	}
	_ = registered
}

// TestBlobReadAhead reads a 40 MiB Blob through a blobHandle as the
// engine does: sequentially in reads of varied sizes (read ahead once
// sequential, in pieces up to raMax), with reads elsewhere and reads
// across the pieces' ends mixed in, and compares every byte.
func TestBlobReadAhead(t *testing.T) {
	data := make([]byte, 40<<20+12345)
	for i := range data {
		data[i] = byte(i*7 + i>>13)
	}
	counter := newCounter()
	bf := newBlobFile("x.log", blob(data, time.Now(), counter))
	h := &blobHandle{f: &bf}
	check := func(off int64, n int) {
		t.Helper()
		p := make([]byte, n)
		got, err := h.ReadAt(p, off)
		want := min(int64(n), bf.size-off)
		if int64(got) != want || (err != nil) != (want < int64(n)) {
			t.Fatalf("ReadAt(%d bytes at %d) = %d, %v; want %d bytes", n, off, got, err, want)
		}
		if !bytes.Equal(p[:got], data[off:off+int64(got)]) {
			t.Fatalf("ReadAt(%d bytes at %d): wrong bytes", n, off)
		}
	}
	sizes := []int{61, 1 << 20, 1<<20 - 17, 3 << 20, 4096, 1, 9 << 20}
	var off int64
	for i := 0; off < bf.size; i++ {
		n := sizes[i%len(sizes)]
		check(off, n)
		if i%5 == 4 {
			check(int64(i)*1234567%bf.size, 100) // elsewhere
			check(off, n)                        // again
		}
		off += int64(n)
	}
	if calls := counter.Get("calls").Int(); calls > 40 {
		t.Errorf("%d slices for a 40 MiB sequential read", calls)
	}
	if read := counter.Get("bytes").Int(); int64(read) > 2*bf.size {
		t.Errorf("read %d bytes of a %d-byte file", read, bf.size)
	}
	t.Logf("%d slices, %d bytes", counter.Get("calls").Int(), counter.Get("bytes").Int())
	h.Close()
}

// TestBlobReadAheadConcurrent reads one handle from several goroutines at
// once, as the page's views and a verification may: one streams the file
// in 1 MiB reads (read ahead), others read ranges elsewhere and across the
// pieces' ends; every byte must be right.
func TestBlobReadAheadConcurrent(t *testing.T) {
	data := make([]byte, 24<<20+777)
	for i := range data {
		data[i] = byte(i*13 + i>>11)
	}
	bf := newBlobFile("x.log", blob(data, time.Now(), newCounter()))
	h := &blobHandle{f: &bf}
	defer h.Close()
	errs := make(chan error, 8)
	read := func(off int64, n int) error {
		p := make([]byte, n)
		got, err := h.ReadAt(p, off)
		want := min(int64(n), bf.size-off)
		if int64(got) != want || (err != nil) != (want < int64(n)) {
			return fmt.Errorf("ReadAt(%d bytes at %d) = %d, %v; want %d bytes", n, off, got, err, want)
		}
		if !bytes.Equal(p[:got], data[off:off+int64(got)]) {
			return fmt.Errorf("ReadAt(%d bytes at %d): wrong bytes", n, off)
		}
		return nil
	}
	streaming := make(chan struct{})
	go func() {
		var err error
		off := int64(0)
		for ; off < bf.size && err == nil; off += 1 << 20 {
			err = read(off, 1<<20)
			if off == 6<<20 {
				close(streaming) // reading ahead from now on
			}
		}
		if off <= 6<<20 {
			close(streaming)
		}
		errs <- err
	}()
	for g := range 3 {
		go func() {
			<-streaming
			var err error
			for i := 0; i < 40 && err == nil; i++ {
				off := int64(g*7919+i*1048573) % bf.size
				err = read(off, 1+(i*4099)%(3<<20))
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestBlobReadAheadShrunk reads a file whose Blob is shorter than the size
// it was dropped with (a file that changed): the reads return every byte
// there is, then an error, never other bytes.
func TestBlobReadAheadShrunk(t *testing.T) {
	data := make([]byte, 12<<20+5000)
	for i := range data {
		data[i] = byte(i * 31)
	}
	bf := newBlobFile("x.log", blob(data, time.Now(), newCounter()))
	bf.size += 3 << 20
	h := &blobHandle{f: &bf}
	defer h.Close()
	var off int64
	var err error
	for off < bf.size && err == nil {
		p := make([]byte, 1<<20)
		var n int
		n, err = h.ReadAt(p, off)
		if off+int64(n) > int64(len(data)) || !bytes.Equal(p[:n], data[off:off+int64(n)]) {
			t.Fatalf("ReadAt(1 MiB at %d) = %d bytes: not the file's", off, n)
		}
		off += int64(n)
	}
	if off != int64(len(data)) || err == nil {
		t.Fatalf("read %d bytes of a %d-byte file, then %v; want all of it, then an error", off, len(data), err)
	}
	t.Logf("read %d bytes, then %v", off, err)
}
