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
let stage = "runtime";
const pending = new Map();     // url -> kind, for downloads in flight
const failures = [];           // {url, reason}

function post(msg) { self.postMessage(msg); }
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

// Modules the app does not import at start-up are left out of the wheels and the standard library
// (build.py puts them in *-lazy.zip archives). This finder fetches an archive the first time one
// of its modules is imported (synchronous XHR: allowed in workers), checks its sha256, extracts it
// and imports the module from there.
const LAZY_FINDER = `
import hashlib, io, json, os, sys, time, zipfile
import importlib.abc, importlib.util
from js import XMLHttpRequest, Uint8Array

class _KvLazyFinder(importlib.abc.MetaPathFinder):
    def __init__(self, index, base):
        self.archives = index["archives"]
        self.modules = index["modules"]
        self.base = base
        self.done = set()

    def _fetch(self, n, name):
        a = self.archives[n]
        url = self.base + a["url"]
        t = time.time()
        xhr = XMLHttpRequest.new()
        xhr.open("GET", url, False)
        xhr.responseType = "arraybuffer"
        xhr.send()
        if xhr.status != 200:
            raise ImportError(f"{url}: HTTP {xhr.status}")
        data = Uint8Array.new(xhr.response).to_bytes()
        if hashlib.sha256(data).hexdigest() != a["sha256"]:
            raise ImportError(f"{url}: content does not match its sha256")
        os.makedirs(a["root"], exist_ok=True)
        zipfile.ZipFile(io.BytesIO(data)).extractall(a["root"])
        importlib.invalidate_caches()
        self.done.add(n)
        kvLazyLoaded(url, (time.time() - t) * 1000, name)

    def find_spec(self, name, path=None, target=None):
        hit = self.modules.get(name)
        if hit is None:
            return None
        n, rel, is_pkg = hit
        if n not in self.done:
            self._fetch(n, name)
        full = self.archives[n]["root"] + "/" + rel
        return importlib.util.spec_from_file_location(
            name, full, submodule_search_locations=[os.path.dirname(full)] if is_pkg else None)

sys.meta_path.append(_KvLazyFinder(json.loads(KV_LAZY), KV_BASE))
del KV_LAZY
`;

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
    failures.push({ url: cfg.pyodide, reason: "could not load script" });
    return fail(cfg.pyodide, e);
  }
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
  const missing = cfg.packages.filter((p) => !(p in pyodide.loadedPackages));
  if (missing.length) {
    const what = failures.length ? failures.map((f) => f.url).join(", ") : missing.join(", ");
    return fail(what, new Error(`packages not installed: ${missing.join(", ")}`));
  }
  pyodide.globals.set("sendPatch", sendPatch);

  status("app", "app");
  try {
    pyodide.unpackArchive(await appBytes, "zip", { extractDir: "/home/pyodide/kv" });
  } catch (e) {
    return fail(cfg.app, e);
  }
  try {
    pyodide.globals.set("KV_LAZY", await lazyIndex);
    pyodide.globals.set("KV_BASE", cfg.packageBaseUrl);
    pyodide.globals.set("kvLazyLoaded", (url, ms, name) => post({ type: "lazy", url, ms, name, at: Date.now() }));
    pyodide.runPython(LAZY_FINDER);
  } catch (e) {
    return fail(cfg.lazy, e);
  }
  try {
    status("app", "panel");
    await pyodide.runPythonAsync(`
import gc, sys
gc.disable()  # start-up allocates much and frees little: collect once, after write_doc()
sys.path.insert(0, "/home/pyodide/kv")
import panel
from panel.io.pyodide import init_doc, write_doc
`);
    times.import_panel = performance.now() - t0;
    status("app", "create_app");
    pyodide.globals.set("KV_QUERY", cfg.query || "");
    const result = await pyodide.runPythonAsync(`
init_doc()
from app.main import create_app
create_app(KV_QUERY).servable()
_kv_result = await write_doc()
gc.enable()
gc.freeze()  # what start-up made stays: later collections skip it
_kv_result
`);
    const [docs_json, render_items, root_ids] = result.toJs();
    result.destroy();
    times.app = performance.now() - t0;
    started = true;
    post({ type: "render", docs_json, render_items, root_ids, times });
  } catch (e) {
    return fail("app", e);
  }
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === "start") {
    await start(msg.config);
  } else if (msg.type === "rendered") {
    await pyodide.runPythonAsync(`
from panel.io.state import state
from panel.io.pyodide import _link_docs_worker
_link_docs_worker(state.curdoc, sendPatch, setter="js")
`);
  } else if (msg.type === "patch") {
    pyodide.globals.set("patch", msg.patch);
    try {
      await pyodide.runPythonAsync(`
from panel.io.pyodide import _convert_json_patch
state.curdoc.apply_json_patch(_convert_json_patch(patch), setter="js")
`);
    } catch (e) {
      if (!alive()) return fail("app", e);     // the interpreter itself is gone: the page must say so
      post({ type: "pyerror", message: String(e) });
    }
    post({ type: "idle" });
  } else if (msg.type === "modules") {
    // Diagnostics (tests): import the named modules, then list those imported from source
    // (not precompiled).
    pyodide.globals.set("KV_IMPORT", JSON.stringify(msg.import || []));
    const out = await pyodide.runPythonAsync(`
import importlib, json, sys
for _name in json.loads(KV_IMPORT):
    importlib.import_module(_name)
json.dumps(sorted(n for n, m in list(sys.modules.items())
                  if (getattr(getattr(m, "__spec__", None), "origin", None) or "").endswith(".py")))
`);
    post({ type: "modules", modules: JSON.parse(out), count: Object.keys(pyodide.loadedPackages).length });
  }
};
