/* The reader's code sandbox: a Web Worker with its own Pyodide and NumPy, nothing else, for
 * ONE run.
 *
 * The page (app/sandbox/host.js) boots it ahead of the reader's next run, sends it copies of
 * the numbers the code needs and reads back plain data. Nothing here can reach the app: the app
 * runs in another interpreter (a server under `panel serve`, another worker on the static site).
 * After its one run (or when the run takes too long, or the interpreter dies) this worker is
 * gone: it closes itself as soon as it has answered, and the page terminates it, so nothing the
 * code left (a patched module, a replaced runner, a timer, a listener, memory) outlives the run.
 *
 *   page -> worker  {type: "init", config, runner, files}
 *   worker -> page  {type: "ready", ms} | {type: "failed", message, url}
 *   page -> worker  {type: "run", nonce, request}       request: JSON text for run_json()
 *   worker -> page  {type: "done", nonce, answer, output, more, ms}
 *                   {type: "fatal", nonce, message}      the interpreter cannot go on
 */
"use strict";

// Captured before any reader code runs: reassigning self.postMessage or self.close from Python
// changes nothing here.
const post = self.postMessage.bind(self);
const closeSelf = self.close.bind(self);
let ran = false;
const MAX_LINES = 200;          // printed lines sent back; the rest are counted
const MAX_LINE_CHARS = 500;
const MAX_CHARS = 20000;

const ROOT = "/home/pyodide/sandbox";
let py = null;
let runJson = null;
const out = { lines: [], chars: 0, more: 0 };

function capture(line) {
  if (out.lines.length < MAX_LINES && out.chars < MAX_CHARS) {
    const text = line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) + " …" : line;
    out.lines.push(text);
    out.chars += text.length;
  } else {
    out.more += 1;
  }
}

function b64bytes(text) {
  const bin = atob(text);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

// Files the code may import (the model package, its checkpoint), written to the sandbox's own
// in-memory file system: whatever the code does to them stays here.
function writeFiles(files, root) {
  for (const [path, data] of Object.entries(files || {})) {
    const full = `${root}/${path}`;
    py.FS.mkdirTree(full.slice(0, full.lastIndexOf("/")));
    py.FS.writeFile(full, b64bytes(data));
  }
}

const files = {};               // written at start-up, or as soon as they arrive after it

function addFiles(more) {
  Object.assign(files, more || {});
  if (runJson) {
    writeFiles(more, ROOT);
    py.runPython("import importlib; importlib.invalidate_caches()");
  }
}

async function init(msg) {
  const cfg = msg.config;
  const t0 = performance.now();
  let step = cfg.pyodide;
  try {
    importScripts(cfg.pyodide);
    step = cfg.indexURL;
    py = await loadPyodide({
      indexURL: cfg.indexURL,
      stdLibURL: cfg.stdLibURL || undefined,
      lockFileURL: cfg.lockFileURL || undefined,
      packageBaseUrl: cfg.packageBaseUrl || undefined,
      packages: cfg.packages || ["numpy"],
      stdout: capture,
      stderr: capture,
    });
    const missing = (cfg.packages || ["numpy"]).filter((p) => !(p in py.loadedPackages));
    if (missing.length) throw new Error(`packages not installed: ${missing.join(", ")}`);
    step = "setup";
    py.FS.mkdirTree(ROOT);
    writeFiles(Object.assign(files, msg.files || {}), ROOT);
    py.FS.writeFile(`${ROOT}/kv_sandbox_runner.py`, msg.runner);
    py.runPython(`import sys; sys.path.insert(0, ${JSON.stringify(ROOT)})`);
    if (cfg.lazy && cfg.lazy.module) {
      const index = await (await fetch(cfg.lazy.index)).text();
      py.pyimport(cfg.lazy.module).install_lazy_importer(index, cfg.lazy.base);
    }
    runJson = py.pyimport("kv_sandbox_runner").run_json;
  } catch (e) {
    const message = e && e.message ? e.message : (e && e.errno !== undefined ? `file system error ${e.errno}` : e);
    post({ type: "failed", message: String(message).slice(0, 2000), url: step });
    return;
  }
  post({ type: "ready", ms: performance.now() - t0 });
}

function run(msg) {
  ran = true;
  out.lines = [];
  out.chars = 0;
  out.more = 0;
  const t0 = performance.now();
  let answer;
  try {
    answer = runJson(msg.request);
    py.runPython("import sys; sys.__stdout__.flush(); sys.__stderr__.flush()");
  } catch (e) {
    // The runner catches every Python exception: what reaches here is the interpreter itself failing
    // (a stack overflow, a fatal error). This worker cannot be trusted any more.
    post({ type: "fatal", nonce: msg.nonce, message: String(e && e.message ? e.message : e).slice(-2000) });
    closeSelf();
    return;
  }
  post({ type: "done", nonce: msg.nonce, answer, output: out.lines.slice(), more: out.more,
         ms: performance.now() - t0 });
  closeSelf();            // what the code queued (timers, callbacks) never runs: this interpreter is done
}

// addEventListener, not onmessage: code that reassigns self.onmessage cannot take this over.
self.addEventListener("message", async (event) => {
  const msg = event.data || {};
  if (msg.type === "init" && py === null) await init(msg);
  else if (msg.type === "files" && !ran) addFiles(msg.files);
  else if (msg.type === "run" && runJson && !ran) run(msg);
});
