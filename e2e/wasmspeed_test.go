package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/chromedp"
)

// TestWASMVerifySpeed measures verification by the WASM engine in the page
// over dropped files against segviz verify (native) on the same files, in
// the same run, alternating (SEGVIZ_E2E_ROUNDS rounds, 3 by default), and
// logs the bests, the medians, their ratios and the Blob slices each
// verification read; and, to tell the phases apart, how long the page
// takes only to read every byte of the dropped files
// (Blob.slice().arrayBuffer() in pieces of 1 to 16 MiB, one to four in
// flight, with and without the main thread kept busy, and File.stream()),
// unless SEGVIZ_E2E_READS=0. Each round also times the floor: the browser
// reading every byte of the files in a worker and doing nothing else,
// which no engine in the page can beat; the log gives each phase's CPU
// time (both cores) and the ratios of the floor to native verify and of
// WASM verify to the floor. It runs only with SEGVIZ_E2E_BIG set to a
// size in MiB, as TestFirstRenderBig.
//
// SEGVIZ_E2E_DIR keeps the generated partition there (and reuses it when
// it is already there, with the same size). SEGVIZ_E2E_ENGINES=
// name=file.wasm.gz,… loads more engines into the same page and times
// them in the same rounds (an A/B comparison under the same load).
// SEGVIZ_E2E_PROFILE names a file to write the page's CPU profile of one
// WASM verification to (a .cpuprofile that Chromium's DevTools open), of
// the first of SEGVIZ_E2E_ENGINES if any, and prints its top functions by
// self time. SEGVIZ_BIN measures another segviz binary (and the engine it
// embeds).
func TestWASMVerifySpeed(t *testing.T) {
	mib, _ := strconv.Atoi(os.Getenv("SEGVIZ_E2E_BIG"))
	if mib <= 0 {
		t.Skip("set SEGVIZ_E2E_BIG=1024 to measure WASM verification against native")
	}
	setup(t)
	dir := filepath.Join(t.TempDir(), "big-0")
	var records int64
	if keep := os.Getenv("SEGVIZ_E2E_DIR"); keep != "" {
		dir = filepath.Join(keep, fmt.Sprintf("big-%dMiB-0", mib))
		stamp := filepath.Join(keep, fmt.Sprintf("big-%dMiB.records", mib))
		if b, err := os.ReadFile(stamp); err == nil {
			records, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		}
		if records == 0 {
			os.RemoveAll(dir)
			_, records = generate(t, dir, int64(mib)<<20)
			os.WriteFile(stamp, []byte(strconv.FormatInt(records, 10)), 0o644)
		}
	} else {
		_, records = generate(t, dir, int64(mib)<<20)
	}
	t.Logf("partition %s: %d MiB, %d records", dir, mib, records)

	srv := startServer(t, dir)
	ctx := newBrowser(t)
	do(t, ctx, "open segviz", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"))
	eval[bool](t, ctx, `import('/static/engine.js').then(m => m.loadWasm()).then(() => true)`)
	do(t, ctx, "drop the folder", chromedp.SetUploadFiles("#folder-input", []string{dir}, chromedp.NodeReady))
	waitFor(t, ctx, "the dropped timeline", `document.querySelector('#source-name').textContent.startsWith('dropped') && document.querySelector('#timeline .seg-bar')`, 120*time.Second)
	waitFor(t, ctx, "the dropped census", `document.querySelector('#census')?.dataset.done === 'true'`, 900*time.Second)
	pdir := eval[string](t, ctx, `segkit.call('partitions', {}).then(r => r.partitions[0].dir)`)

	// Reading alone: every byte of every dropped file (given again to an
	// input of the test's own), in pieces of size bytes, inFlight at a
	// time.
	eval[bool](t, ctx, `(() => { const i = document.createElement('input'); i.type = 'file'; i.multiple = true; i.webkitdirectory = true; i.id = 'speed-input'; i.hidden = true; document.body.append(i); return true; })()`)
	do(t, ctx, "give the files to the test's input", chromedp.SetUploadFiles("#speed-input", []string{dir}, chromedp.NodeReady))
	readAll := func(size, inFlight int, spin float64, yield bool) string {
		ms := eval[float64](t, ctx, fmt.Sprintf(`(async () => {
			const files = Array.from(document.querySelector('#speed-input').files);
			const spin = %g; // ms of busy main thread per MiB received
			const yieldEach = %t; // return to the event loop after each MiB's spin
			const ch = new MessageChannel();
			const yieldTask = () => new Promise((r) => { ch.port1.onmessage = r; ch.port2.postMessage(0); });
			const t0 = performance.now();
			let n = 0;
			for (const f of files) {
				const q = [];
				for (let off = 0; off < f.size || q.length; ) {
					while (q.length < %d && off < f.size) { q.push(f.slice(off, off + %d).arrayBuffer()); off += %d; }
					const got = new Uint8Array(await q.shift()).length;
					n += got;
					for (let mib = 0; mib < got / 1048576; mib++) {
						for (const end = performance.now() + spin * Math.min(1, got / 1048576 - mib); performance.now() < end; ) {}
						if (yieldEach && spin > 0) await yieldTask();
					}
				}
			}
			return performance.now() - t0;
		})()`, spin, yield, inFlight, size, size))
		label := fmt.Sprintf("%d KiB×%d in flight", size>>10, inFlight)
		if spin > 0 {
			label += fmt.Sprintf(" with %gms/MiB busy", spin)
			if yield {
				label += ", yielding each MiB"
			}
		}
		return fmt.Sprintf("%s %s", label, time.Duration(ms*float64(time.Millisecond)).Round(time.Millisecond))
	}
	streamAll := func() string {
		ms := eval[float64](t, ctx, `(async () => {
			const files = Array.from(document.querySelector('#speed-input').files);
			const t0 = performance.now();
			let n = 0;
			for (const f of files) {
				const r = f.stream().getReader();
				for (;;) { const {done, value} = await r.read(); if (done) break; n += value.length; }
			}
			return performance.now() - t0;
		})()`)
		return fmt.Sprintf("File.stream() %s", time.Duration(ms*float64(time.Millisecond)).Round(time.Millisecond))
	}
	var reads []string
	if os.Getenv("SEGVIZ_E2E_READS") != "0" {
		readAll(1<<20, 1, 0, false) // warm up
		// The busy variants keep the main thread busy for a while after
		// each MiB received, as the engine is while it checks what it
		// read: when their time is that of reading plus being busy, the
		// browser does not read on while the main thread is busy; the
		// yielding ones return to the event loop after each MiB's spin.
		for _, c := range []struct {
			size, inFlight int
			spin           float64
			yield          bool
		}{{1 << 20, 1, 0, false}, {4 << 20, 4, 0, false}, {16 << 20, 1, 0, false}, {16 << 20, 2, 0, false}, {16 << 20, 4, 0, false},
			{16 << 20, 2, 1, false}, {16 << 20, 2, 1, true}, {16 << 20, 4, 1, false}, {16 << 20, 4, 1, true}} {
			reads = append(reads, readAll(c.size, c.inFlight, c.spin, c.yield))
		}
		reads = append(reads, streamAll())
	}

	native := func() time.Duration {
		start := time.Now()
		run(t, []int{0, 1}, "verify", "--json", dir)
		return time.Since(start)
	}
	// verifyWith times a verification by the engine the JavaScript
	// expression engine names, of its partition directory dir, and counts
	// the Blob.slice() calls it makes and the bytes they ask for
	// (slices[engine]: those of its last verification).
	slices := map[string][2]int64{}
	verifyWith := func(engine, dir string) time.Duration {
		c, cancel := context.WithTimeout(ctx, 1800*time.Second)
		defer cancel()
		res, err := chromedp.Run(c, chromedp.Evaluate[[]float64](fmt.Sprintf(`(async () => {
			const slice = Blob.prototype.slice;
			let calls = 0, bytes = 0;
			Blob.prototype.slice = function (a, b) { calls++; bytes += Math.min(b ?? this.size, this.size) - (a ?? 0); return slice.call(this, a, b); };
			try {
				const t0 = performance.now();
				const r = await %s.call('verify', {dir: %q});
				return [performance.now() - t0, r.records, calls, bytes];
			} finally {
				Blob.prototype.slice = slice;
			}
		})()`, engine, dir), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("verify in the page with %s: %v", engine, err)
		}
		if int64(res[1]) != records {
			t.Errorf("the WASM verification with %s read %d records, want %d", engine, int64(res[1]), records)
		}
		slices[engine] = [2]int64{int64(res[2]), int64(res[3])}
		return time.Duration(res[0] * float64(time.Millisecond))
	}
	wasm := func() time.Duration { return verifyWith("segkit", pdir) }

	// SEGVIZ_E2E_ENGINES=name=file.wasm.gz,… loads more engines into the
	// page (each a gzipped build of ./wasm, as internal/web/wasmdist
	// holds), gives each the same files, and times them in the same
	// rounds: an A/B comparison under the same load.
	type engine struct{ name, expr, dir string }
	var engines []engine
	if spec := os.Getenv("SEGVIZ_E2E_ENGINES"); spec != "" {
		for _, item := range strings.Split(spec, ",") {
			name, file, ok := strings.Cut(item, "=")
			if !ok {
				t.Fatalf("SEGVIZ_E2E_ENGINES: %q is not name=file.wasm.gz", item)
			}
			gz, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			e := engine{name: name, expr: fmt.Sprintf("globalThis.speedEngines[%q]", name)}
			eval[bool](t, ctx, fmt.Sprintf(`(async () => {
				const gz = Uint8Array.from(atob(%q), (c) => c.charCodeAt(0));
				const raw = await new Response(new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
				const go = new globalThis.Go();
				const ready = new Promise((resolve) => { globalThis.segkitReady = resolve; });
				const page = globalThis.segkit;
				const { instance } = await WebAssembly.instantiate(raw, go.importObject);
				go.run(instance);
				await ready;
				(globalThis.speedEngines ??= {})[%q] = globalThis.segkit;
				globalThis.segkit = page;
				const files = Array.from(document.querySelector('#speed-input').files);
				await %s.addFiles(files.map((f) => ({path: f.webkitRelativePath, file: f})));
				return true;
			})()`, base64.StdEncoding.EncodeToString(gz), name, e.expr))
			e.dir = eval[string](t, ctx, e.expr+`.call('partitions', {}).then(r => r.partitions[0].dir)`)
			engines = append(engines, e)
		}
	}

	// Rounds alternate native and WASM, so that both see the same load
	// on a shared machine; the ratios are of the bests and of the medians.
	rounds := 3
	if n, _ := strconv.Atoi(os.Getenv("SEGVIZ_E2E_ROUNDS")); n > 0 {
		rounds = n
	}
	// The floor: the browser reading every byte of the files, and
	// nothing else, the fastest way measured here (a worker, 16 MiB
	// pieces, two in flight: FileReaderSync, File.stream() and the page's
	// main thread were all slower), in a blank page of its own (a worker
	// from a blob: URL, which segviz's page's CSP forbids). Each phase's
	// CPU time, both cores (/proc/stat), says what the browser spends on
	// it.
	blank, closeBlank := chromedp.NewContext(ctx)
	defer closeBlank()
	if err := chromedp.Do(blank); err != nil { // opens the tab, for the life of blank
		t.Fatalf("opening a blank page: %v", err)
	}
	do(t, blank, "open a blank page", chromedp.Navigate("about:blank"))
	eval[bool](t, blank, `(() => { const i = document.createElement('input'); i.type = 'file'; i.multiple = true; i.webkitdirectory = true; i.id = 'floor-input'; document.body.append(i); return true; })()`)
	do(t, blank, "give the files to the blank page", chromedp.SetUploadFiles("#floor-input", []string{dir}, chromedp.NodeReady))
	floor := func() time.Duration {
		ms := eval[float64](t, blank, `(async () => {
			const code = "onmessage = async (e) => { let n = 0; for (const f of e.data) { const q = []; for (let off = 0; off < f.size || q.length; ) { while (q.length < 2 && off < f.size) { q.push(f.slice(off, off + (16 << 20)).arrayBuffer()); off += 16 << 20; } n += (await q.shift()).byteLength; } } postMessage(n); };";
			const w = new Worker(URL.createObjectURL(new Blob([code], {type: 'text/javascript'})));
			const files = Array.from(document.querySelector('#floor-input').files);
			const t0 = performance.now();
			await new Promise((res) => { w.onmessage = res; w.postMessage(files); });
			const ms = performance.now() - t0;
			w.terminate();
			return ms;
		})()`)
		return time.Duration(ms * float64(time.Millisecond))
	}
	cpu := map[string][]float64{}
	timed := func(name string, f func() time.Duration) time.Duration {
		c0 := cpuSeconds(t)
		d := f()
		cpu[name] = append(cpu[name], cpuSeconds(t)-c0)
		return d
	}

	var nat, was, flo []time.Duration
	other := make([][]time.Duration, len(engines))
	for range rounds {
		nat = append(nat, timed("native", native))
		was = append(was, timed("wasm", wasm))
		flo = append(flo, timed("floor", floor))
		for i, e := range engines {
			other[i] = append(other[i], verifyWith(e.expr, e.dir))
		}
	}
	nat = append(nat, timed("native", native))
	sorted := func(d []time.Duration) []time.Duration {
		s := append([]time.Duration(nil), d...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s
	}
	best := func(d []time.Duration) time.Duration { return sorted(d)[0] }
	median := func(d []time.Duration) time.Duration { return sorted(d)[len(d)/2] }
	round := func(d []time.Duration) string {
		var s []string
		for _, x := range d {
			s = append(s, x.Round(time.Millisecond).String())
		}
		return strings.Join(s, " ")
	}
	line := func(name, expr string, d []time.Duration) string {
		sl := slices[expr]
		return fmt.Sprintf("%s: %s (best %s, median %s): %.2f× the best native, %.2f× the median; %d Blob slices, %d MiB",
			name, round(d), best(d).Round(time.Millisecond), median(d).Round(time.Millisecond),
			float64(best(d))/float64(best(nat)), float64(median(d))/float64(median(nat)), sl[0], sl[1]>>20)
	}
	var more strings.Builder
	for i, e := range engines {
		fmt.Fprintf(&more, "\n  %s", line("WASM verify with engine "+e.name, e.expr, other[i]))
	}
	medianCPU := func(name string) float64 {
		c := append([]float64(nil), cpu[name]...)
		sort.Float64s(c)
		return c[len(c)/2]
	}
	t.Logf("\n%d MiB partition, %d records:\n  page reads every byte (Blob.slice().arrayBuffer()): %s\n  native segviz verify: %s (best %s, median %s; %.2f CPU-seconds, median)\n  %s; %.2f CPU-seconds%s"+
		"\n  the floor, reading every byte in a worker and nothing else: %s (best %s, median %s; %.2f CPU-seconds): %.2f× the best native, %.2f× the median; WASM verify takes %.2f× the floor (best), %.2f× (median)",
		mib, records, strings.Join(reads, ", "), round(nat), best(nat).Round(time.Millisecond), median(nat).Round(time.Millisecond), medianCPU("native"),
		line("WASM verify in the page", "segkit", was), medianCPU("wasm"), more.String(),
		round(flo), best(flo).Round(time.Millisecond), median(flo).Round(time.Millisecond), medianCPU("floor"),
		float64(best(flo))/float64(best(nat)), float64(median(flo))/float64(median(nat)),
		float64(best(was))/float64(best(flo)), float64(median(was))/float64(median(flo)))

	if out := os.Getenv("SEGVIZ_E2E_PROFILE"); out != "" {
		var prof *profiler.Profile
		do(t, ctx, "start the profiler", chromedp.Func(func(ctx context.Context, s *chromedp.Target) error {
			if _, err := cdp.Call(ctx, s, profiler.Enable, cdp.Empty{}); err != nil {
				return err
			}
			if _, err := cdp.Call(ctx, s, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 200}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, s, profiler.Start, cdp.Empty{})
			return err
		}))
		// The first engine of SEGVIZ_E2E_ENGINES when there is one: a
		// build with its function names (the embedded one has none).
		profiled := engine{name: "embedded", expr: "segkit", dir: pdir}
		if len(engines) > 0 {
			profiled = engines[0]
		}
		d := verifyWith(profiled.expr, profiled.dir)
		do(t, ctx, "stop the profiler", chromedp.Func(func(ctx context.Context, s *chromedp.Target) error {
			r, err := cdp.Call(ctx, s, profiler.Stop, cdp.Empty{})
			prof = r.Profile
			return err
		}))
		b, err := json.Marshal(prof)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("profiled WASM verify with engine %s (%s): %s\n%s", profiled.name, d.Round(time.Millisecond), out, topSelf(prof, 30))
	}
}

// topSelf lists the n functions of a CPU profile with the most self time.
func topSelf(p *profiler.Profile, n int) string {
	self := map[int64]int64{}
	for i, id := range p.Samples {
		if i < len(p.TimeDeltas) {
			self[id] += p.TimeDeltas[i]
		}
	}
	by := map[string]int64{}
	var total int64
	for _, node := range p.Nodes {
		us := self[int64(node.ID)]
		total += us
		by[node.CallFrame.FunctionName] += us
	}
	type kv struct {
		k string
		v int64
	}
	var list []kv
	for k, v := range by {
		list = append(list, kv{k, v})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].v > list[j].v })
	var sb strings.Builder
	for i, e := range list {
		if i >= n {
			break
		}
		fmt.Fprintf(&sb, "  %5.1f%% %7.1f ms  %s\n", 100*float64(e.v)/float64(max(total, 1)), float64(e.v)/1000, e.k)
	}
	return sb.String()
}

// cpuSeconds is the CPU time the machine has spent so far, all cores,
// from /proc/stat (user, nice, system, irq, softirq, steal): what the
// browser's processes and segviz spend in a phase, which a page's own
// clock cannot see.
func cpuSeconds(t *testing.T) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatalf("reading the CPU time: %v", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		t.Fatalf("/proc/stat: unexpected first line %q", line)
	}
	var ticks float64
	for i, x := range f[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest times are in user already
			continue
		}
		v, err := strconv.ParseFloat(x, 64)
		if err != nil {
			t.Fatalf("/proc/stat: %q: %v", line, err)
		}
		ticks += v
	}
	return ticks / 100 // USER_HZ
}
