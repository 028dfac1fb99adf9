// The page's two data paths. Both answer the same methods (package viz)
// with the same objects: HttpEngine asks segviz's native engine through
// the JSON API; WasmEngine asks the WASM build of the same engine, in the
// page, over files the user dropped (nothing is uploaded).

export class EngineError extends Error {
  constructor(message, kind) {
    super(message);
    this.kind = kind;
  }
}

function strParams(params) {
  const out = {};
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null) continue;
    out[k] = String(v);
  }
  return out;
}

export class HttpEngine {
  constructor() {
    this.kind = "server";
  }
  async call(method, params) {
    const q = new URLSearchParams(strParams(params));
    let r;
    // 503: the server is busy decoding other requests (its limits on
    // work in flight); wait as Retry-After says and try again, a few times.
    for (let attempt = 0; ; attempt++) {
      try {
        r = await fetch(`/api/${encodeURIComponent(method)}?${q}`, { cache: "no-store" });
      } catch (e) {
        throw new EngineError(`segviz is not reachable (${e.message}); is it still running?`, "error");
      }
      if (r.status !== 503 || attempt >= 5 || !r.headers.get("Retry-After")) break;
      const secs = Math.min(Math.max(Number(r.headers.get("Retry-After")) || 1, 1), 10);
      await new Promise((resolve) => setTimeout(resolve, secs * 1000));
    }
    let body;
    try {
      body = await r.json();
    } catch {
      throw new EngineError(`${method}: HTTP ${r.status}`, "error");
    }
    if (!r.ok) {
      const kind = r.status === 400 ? "bad-request" : r.status === 404 ? "not-found" : r.status === 409 ? "cancelled" : "error";
      throw new EngineError(body.error || `HTTP ${r.status}`, kind);
    }
    return body;
  }
  fileURL(dir, name) {
    const p = (dir === "." ? "" : dir + "/") + name;
    return "/files/" + p.split("/").map(encodeURIComponent).join("/");
  }
}

export class WasmEngine {
  constructor(name) {
    this.kind = "wasm";
    this.name = name;
  }
  async call(method, params) {
    try {
      return await globalThis.segkit.call(method, strParams(params));
    } catch (e) {
      throw new EngineError(e.message || String(e), e.kind || "error");
    }
  }
  fileURL() {
    return null;
  }
}

let wasmLoading = null;

// loadWasm loads the WASM engine once; onStatus reports progress in words.
export function loadWasm(onStatus) {
  if (!wasmLoading) {
    wasmLoading = doLoadWasm(onStatus).catch((e) => {
      wasmLoading = null;
      throw e;
    });
  }
  return wasmLoading;
}

// siteWasm instantiates the engine a static site carries (segviz site):
// the gzip of the .wasm, base64, in SEGVIZ_SITE.wasm (a script, not a
// fetch, so that the page works from file:// too).
async function siteWasm(go) {
  const gz = Uint8Array.from(atob(globalThis.SEGVIZ_SITE.wasm), (c) => c.charCodeAt(0));
  const raw = await new Response(new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
  return WebAssembly.instantiate(raw, go.importObject);
}

async function doLoadWasm(onStatus) {
  if (globalThis.segkit) return globalThis.segkit;
  if (globalThis.SEGVIZ_SITE) {
    onStatus?.("Starting the WASM engine…");
    const go = new globalThis.Go();
    const ready = new Promise((resolve) => { globalThis.segkitReady = resolve; });
    const { instance } = await siteWasm(go);
    go.run(instance);
    await ready;
    return globalThis.segkit;
  }
  const st = await (await fetch("/wasm/status", { cache: "no-store" })).json();
  if (st.state === "unavailable") throw new EngineError(`The WASM engine is unavailable: ${st.reason}`, "unavailable");
  if (st.state === "building") onStatus?.("Building the WASM engine with the go command (first run of this version only; a minute at most)…");
  else onStatus?.("Loading the WASM engine…");
  if (!globalThis.Go) {
    await new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = "/wasm/wasm_exec.js";
      s.onload = resolve;
      s.onerror = () => reject(new EngineError("cannot load /wasm/wasm_exec.js", "unavailable"));
      document.head.append(s);
    });
  }
  const go = new globalThis.Go();
  const ready = new Promise((resolve) => { globalThis.segkitReady = resolve; });
  const resp = await fetch("/wasm/segkit.wasm");
  if (!resp.ok) throw new EngineError(await resp.text(), "unavailable");
  onStatus?.("Starting the WASM engine…");
  const { instance } = await WebAssembly.instantiateStreaming(resp, go.importObject);
  go.run(instance);
  await ready;
  return globalThis.segkit;
}

// collectDrop reads the files of a drop, folders included (their paths
// relative to what was dropped).
export async function collectDrop(dt) {
  const entries = [];
  for (const item of dt.items || []) {
    const entry = item.webkitGetAsEntry?.();
    if (entry) entries.push(entry);
  }
  if (!entries.length) return Array.from(dt.files || []).map((f) => ({ path: f.name, file: f }));
  const out = [];
  const walk = async (entry) => {
    if (entry.isFile) {
      const file = await new Promise((res, rej) => entry.file(res, rej));
      out.push({ path: entry.fullPath.replace(/^\//, ""), file });
      return;
    }
    const reader = entry.createReader();
    for (;;) {
      const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
      if (!batch.length) break;
      for (const e of batch) await walk(e);
    }
  };
  for (const e of entries) await walk(e);
  return out;
}

// filesFromInput reads an <input type=file>: a folder's files carry their
// relative paths.
export function filesFromInput(input) {
  return Array.from(input.files).map((f) => ({ path: f.webkitRelativePath || f.name, file: f }));
}
