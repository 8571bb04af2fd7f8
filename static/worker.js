/* Web Worker: boots Pyodide, installs the packages listed in the site's own
 * lock file, unpacks the app archive, runs create_app(query) and keeps the
 * Python document in sync with the page (same protocol as Panel's
 * pyodide-worker template: render / rendered / patch / idle; the app reads
 * the URL once, from the query given at start, so no "location" message).
 *
 * The page sends {type: "start", config} first; every URL in config is
 * absolute (resolved by the page against its own address).
 */
"use strict";

let pyodide = null;
let wasm = null;               // app/wasm.py, once the app archive is unpacked
let stage = "runtime";
const pending = new Map();     // url -> kind, for downloads in flight
const failures = [];           // {url, reason}, or {url, script: true}: a script that could not be loaded
// Where the reader is on the page's preview (static/loader/controls.js): {seq, query}, the query of the state
// after the reader's first `seq` actions. The app is built there; when the page is ready to show it, the
// document is moved to where the reader is then ("move"), and the page replays only what comes after.
let position = null;
let builtSeq = 0; // the actions the Python document holds

function post(msg) { self.postMessage(msg); }

// A performance mark on the page's timeline (tests/bench_load.py reads them): this worker's clock
// starts when it is created, so the mark travels as an absolute time.
function mark(name) {
  post({ type: "mark", name, at: performance.timeOrigin + performance.now() });
}
mark("kv-worker-start");
function status(newStage, detail) {
  stage = newStage;
  post({ type: "status", stage, detail: detail || "", at: Date.now() });
}

function kindOf(url) {
  if (/\.whl(\?|$)/.test(url)) return "packages";
  if (/\.zip(\?|$)/.test(url) && /\/app\.[^/]*\.zip/.test(url)) return "app";
  return "runtime";
}

// Watch every download Pyodide makes: progress by kind and the exact file
// that failed (HTTP status, integrity mismatch, network error).
const realFetch = self.fetch.bind(self);
self.fetch = async (input, init) => {
  const url = typeof input === "string" ? input : (input && input.url) || String(input);
  const kind = kindOf(url);
  pending.set(url, kind);
  post({ type: "fetch", url, kind, state: "start", at: Date.now() });
  try {
    const resp = await realFetch(input, init);
    if (!resp.ok) {
      failures.push({ url, reason: `HTTP ${resp.status}` });
      post({ type: "fetch", url, kind, state: "fail", reason: `HTTP ${resp.status}` });
      failFast(url, `HTTP ${resp.status}`);
    } else {
      post({ type: "fetch", url, kind, state: "done", at: Date.now() });
    }
    return resp;
  } catch (e) {
    const reason = (init && init.integrity)
      ? `download failed or content does not match its sha256 (${e})`
      : `download failed (${e})`;
    failures.push({ url, reason });
    post({ type: "fetch", url, kind, state: "fail", reason });
    failFast(url, reason);
    throw e;
  } finally {
    pending.delete(url);
  }
};

// A file the start-up needs did not arrive: say so now. (Pyodide may otherwise wait for ever on a
// missing pyodide.asm.wasm, and the page would show a creeping bar.) Later downloads (lazy modules)
// fail as ImportErrors in Python instead.
let started = false;
function failFast(url, reason) {
  if (!started) fail(url, new Error(`${url}: ${reason}`));
}

function fail(where, err) {
  const detail = err && err.message ? err.message : String(err);
  const lines = detail.trim().split("\n");
  post({
    type: "error",
    stage,
    where,
    failures: failures.slice(),
    message: lines[lines.length - 1] || detail,
    detail,
    live: started,
  });
}

async function fetchBytes(url) {
  const resp = await self.fetch(url);
  if (!resp.ok) throw new Error(`${url}: HTTP ${resp.status}`);
  return resp.arrayBuffer();
}

// After a fatal error (out of memory, a stack overflow in the app) Pyodide refuses every call.
function alive() {
  try {
    pyodide.runPython("0");
    return true;
  } catch (e) {
    return false;
  }
}

function sendPatch(patch, buffers, msg_id) {
  post({ type: "patch", patch, buffers });
}

async function start(cfg) {
  const t0 = performance.now();
  const times = {};
  // The app archive downloads while the runtime boots.
  const appBytes = fetchBytes(cfg.app);
  appBytes.catch(() => {});
  const lazyIndex = self.fetch(cfg.lazy).then((r) => {
    if (!r.ok) throw new Error(`${cfg.lazy}: HTTP ${r.status}`);
    return r.text();
  });
  lazyIndex.catch(() => {});

  status("runtime", cfg.pyodide);
  try {
    importScripts(cfg.pyodide);
  } catch (e) {
    failures.push({ url: cfg.pyodide, script: true });  // the page says why, in the reader's language
    return fail(cfg.pyodide, e);
  }
  mark("kv-pyodide-js");
  try {
    pyodide = await loadPyodide({
      indexURL: cfg.indexURL,
      stdLibURL: cfg.stdlib || undefined,
      lockFileURL: cfg.lock,
      packageBaseUrl: cfg.packageBaseUrl,
      packages: cfg.packages,
      env: { PANEL_CDN_ROOT: cfg.panelCdnRoot, BOKEH_RESOURCES: "cdn" },
    });
  } catch (e) {
    return fail(failures.length ? failures[0].url : cfg.indexURL, e);
  }
  times.boot = performance.now() - t0;
  mark("kv-booted");
  const missing = cfg.packages.filter((p) => !(p in pyodide.loadedPackages));
  if (missing.length) {
    const what = failures.length ? failures.map((f) => f.url).join(", ") : missing.join(", ");
    return fail(what, new Error(`packages not installed: ${missing.join(", ")}`));
  }
  return runApp(cfg, t0, times, appBytes, lazyIndex);
}

// The app, on the booted runtime: its archive unpacked, the lazy importer installed, Panel imported, the
// app built at the reader's position and its document sent to the page.
async function runApp(cfg, t0, times, appBytes, lazyIndex) {
  status("app", "app");
  try {
    pyodide.unpackArchive(await appBytes, "zip", { extractDir: "/home/pyodide/kv" });
    pyodide.pyimport("sys").path.insert(0, "/home/pyodide/kv");
    wasm = pyodide.pyimport("app.wasm");  // the page's Python side (app/wasm.py)
  } catch (e) {
    return fail(cfg.app, e);
  }
  mark("kv-app-unpacked");
  try {
    // Modules the app does not import at start-up come on first import (app/lazyimport.py).
    wasm.install_lazy_importer(await lazyIndex, cfg.packageBaseUrl,
                               (url, ms, name) => post({ type: "lazy", url, ms, name, at: Date.now() }));
  } catch (e) {
    return fail(cfg.lazy, e);
  }
  try {
    status("app", "panel");
    wasm.import_panel();
    times.import_panel = performance.now() - t0;
    mark("kv-panel-imported");
    status("app", "create_app");
    // The reader may have moved on the preview while Python booted: the messages that say so are
    // read now (this task yields once), and the app starts where the reader is.
    await new Promise((resolve) => setTimeout(resolve, 0));
    const built = position || { seq: cfg.seq || 0, query: cfg.query || "" };
    builtSeq = built.seq;
    wasm.build_app(built.query);
    mark("kv-app-built");
    const result = await wasm.document();
    times.app = performance.now() - t0;
    mark("kv-document");
    started = true;
    post({ type: "render", ...documentOf(result), times, seq: built.seq });
  } catch (e) {
    return fail("app", e);
  }
}

function documentOf(result) {
  const [docs_json, render_items, root_ids] = result.toJs();
  result.destroy();
  return { docs_json, render_items, root_ids };
}

// The page is about to show the document: if the reader has moved on the preview since it was built
// (`seq`: their latest place, the query of that state), the app goes straight there (app/wasm.py
// move_to: the steps, with no page to draw them) and the page gets that document instead; else it
// hears it is current. Either way this is the document it embeds and links.
async function moveTo(msg) {
  try {
    if (msg.seq > builtSeq) {
      wasm.move_to(msg.query);
      builtSeq = msg.seq;
      post({ type: "moved", ...documentOf(await wasm.document()), seq: msg.seq });
      mark("kv-moved");
    } else {
      post({ type: "moved", seq: builtSeq });
    }
  } catch (e) {
    if (!alive()) return fail("app", e);
    post({ type: "pyerror", message: String(e) });
    post({ type: "moved", seq: builtSeq });
  }
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === "start") {
    await start(msg.config);
  } else if (msg.type === "position") {
    if (!position || msg.seq > position.seq) position = { seq: msg.seq, query: msg.query };
  } else if (msg.type === "move") {
    await moveTo(msg);
  } else if (msg.type === "rendered") {
    wasm.link(sendPatch);
  } else if (msg.type === "replay") {
    // The reader's actions on the preview after the state the app was built at, in order, once.
    try {
      wasm.replay(JSON.stringify(msg.commands));
    } catch (e) {
      if (!alive()) return fail("app", e);
      post({ type: "pyerror", message: String(e) });
    }
    post({ type: "idle" });
  } else if (msg.type === "patch") {
    try {
      wasm.apply_patch(msg.patch);
    } catch (e) {
      if (!alive()) return fail("app", e);     // the interpreter itself is gone: the page must say so
      post({ type: "pyerror", message: String(e) });
    }
    post({ type: "idle" });
  } else if (msg.type === "modules") {
    // Diagnostics (tests): import the named modules, then list those imported from source
    // (not precompiled).
    const out = wasm.source_modules(JSON.stringify(msg.import || []));
    post({ type: "modules", modules: JSON.parse(out), count: Object.keys(pyodide.loadedPackages).length });
  }
};
