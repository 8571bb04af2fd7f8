/* The page's side of the reader's code sandbox (the "render" script of app/sandbox's
 * CodeSandbox; runs in the browser with `model`, `data`, `state`, `view` in scope, under
 * `panel serve` and on the static site alike).
 *
 * One host per page (window.__kvSandboxHost). Every run gets an interpreter of its own: a Web
 * Worker with its own Pyodide and NumPy (static/sandbox.js), booted ahead (`spare`) and thrown
 * away when the run ends, answered or not. Nothing a run leaves behind (a module it patched, the
 * runner it replaced, a timer, a listener, the memory it took) can reach the next one. While a
 * run executes, the next interpreter boots beside it, so the reader's next run does not wait for
 * it. A run longer than its limit, or an interpreter that dies, ends the same way: its worker is
 * terminated. The answer goes back in data.response, plain data only; the app's own interpreter
 * is never involved.
 */
if (!window.__kvSandboxHost) {
  const BOOT_LIMIT_MS = 180000;

  const host = {
    spare: null,           // {worker, ready: promise of {ok, message, url}, ok}: the next run's interpreter
    running: null,         // the worker of the run in flight
    phase: "off",          // off | starting | ready | running | failed
    data: null,            // the component's data (the latest rendered view)
    files: {},
    pending: null,         // {id, nonce, timer}
    stats: { starts: 0, runs: 0, lastStartMs: null, lastFailure: null },
  };
  window.__kvSandboxHost = host;

  const setPhase = (phase) => {
    host.phase = phase;
    if (host.data) host.data.status = phase;
  };

  // The phase the reader's next run would meet: running, or the spare's state.
  const settle = () => {
    if (host.pending) return setPhase("running");
    if (!host.spare) return setPhase(host.phase === "failed" ? "failed" : "off");
    setPhase(host.spare.ok === undefined ? "starting" : host.spare.ok ? "ready" : "failed");
  };

  const absolute = (url) => (url ? new URL(url, document.baseURI).href : url);

  // BokehJS hands the component's dict parameters over as Maps: plain objects from here on.
  const plain = (x) => {
    if (x instanceof Map) return Object.fromEntries([...x.entries()].map(([k, v]) => [k, plain(v)]));
    if (Array.isArray(x)) return x.map(plain);
    return x;
  };

  function runtimeConfig() {
    const cfg = Object.assign({}, window.kvSandboxConfig || plain(host.data.runtime) || {});
    for (const key of ["worker", "pyodide", "indexURL", "stdLibURL", "lockFileURL", "packageBaseUrl"]) {
      if (cfg[key]) cfg[key] = absolute(cfg[key]);
    }
    if (cfg.lazy) cfg.lazy = Object.assign({}, cfg.lazy, { index: absolute(cfg.lazy.index), base: absolute(cfg.lazy.base) });
    if (cfg.folders) cfg.folders = cfg.folders.map(absolute);
    return cfg;
  }

  // No request leaves the reader's code but the runtime's own files, whatever the host sends: its
  // worker is a blob: worker created by a hidden srcdoc frame whose <meta> Content-Security-Policy
  // lets scripts and connections reach only those files, and workers start only from blob: URLs. A
  // blob: worker keeps its creator's policy for its life, and passes it to any worker it starts;
  // nothing run inside can lift it (docs/sandbox.md, tests/test_sandbox_browser.py).
  //
  // The files it reads: its runtime's, and the folders of its wheels and lazy archives (`folders`, the
  // static site's: its package base is the site's root, which is more than the sandbox needs).
  const READS = ["worker", "pyodide", "indexURL", "stdLibURL", "lockFileURL"];

  // A runtime address as a CSP source: a folder (ending in /) admits the files under it, a file itself.
  const source = (url) => {
    const u = new URL(url);
    return u.origin + u.pathname.replace(/[;,'"\s]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
  };

  function policyFor(cfg) {
    const urls = READS.map((k) => cfg[k]).concat(cfg.lazy ? [cfg.lazy.index] : [], cfg.folders || []);
    const sources = [...new Set(urls.filter(Boolean).map(source))].join(" ");
    return `default-src 'none'; script-src ${sources} 'wasm-unsafe-eval' 'unsafe-eval'; ` +
      `connect-src ${sources}; worker-src blob:; base-uri 'none'; form-action 'none'`;
  }

  const creators = new Map();                   // policy -> promise of its frame's window

  function creator(policy) {
    const known = creators.get(policy);
    if (known && known.frame.isConnected) return known.window;
    const frame = document.createElement("iframe");
    frame.hidden = true;
    frame.title = "sandbox";
    frame.setAttribute("aria-hidden", "true");
    frame.srcdoc = `<!doctype html><meta http-equiv="Content-Security-Policy" content="${policy.replace(/&/g, "&amp;").replace(/"/g, "&quot;")}">`;
    const window_ = new Promise((resolve) => frame.addEventListener("load", () => resolve(frame.contentWindow), { once: true }));
    document.body.append(frame);
    creators.set(policy, { frame, window: window_ });
    return window_;
  }

  // `own`: under the sandbox's own policy (a blob: worker of the frame); else the worker's file,
  // under the host's policy only (a host whose policy forbids blob: workers).
  async function newWorker(cfg, own, spare) {
    if (!own) return new Worker(cfg.worker);
    const code = cfg.worker ? `importScripts(${JSON.stringify(cfg.worker)});` : plain(host.data.sources).worker;
    const url = (spare.url = URL.createObjectURL(new Blob([code], { type: "text/javascript" })));
    const made = await creator(policyFor(cfg));
    return new made.Worker(url);
  }

  // A worker for the next run, booting now. Its "ready" or "failed" counts once, during its boot;
  // after that only the run's own answer (with the run's nonce) does.
  function boot() {
    const cfg = runtimeConfig();
    const t0 = performance.now();
    const spare = { worker: null, ok: undefined, heard: false };
    host.stats.starts += 1;
    spare.ready = new Promise((resolve) => {
      spare.finish = (result) => {
        if (spare.ok !== undefined) return;
        clearTimeout(spare.timer);
        spare.ok = result.ok;
        if (spare.url) URL.revokeObjectURL(spare.url);
        if (!result.ok) {
          host.stats.lastFailure = `${result.message} (${result.url})`;
          if (spare.worker) spare.worker.terminate();
        } else {
          host.stats.lastStartMs = performance.now() - t0;
          host.stats.policy = spare.own ? "own" : "host";
          performance.mark("kv-sandbox-ready");
        }
        resolve(result);
        settle();
      };
      if (!cfg.pyodide || !cfg.indexURL) return spare.finish({ ok: false, message: "no Python runtime is configured for the sandbox", url: "" });
      spare.timer = setTimeout(() => spare.finish({ ok: false, message: "the sandbox did not start in time", url: cfg.indexURL }), BOOT_LIMIT_MS);
      start(spare, cfg, true);
    });
    host.spare = spare;
    settle();
    return spare;
  }

  // The spare's worker, started. One that fails before a word under the sandbox's own policy (a host
  // policy that forbids blob: workers) starts again from its file, under the host's policy.
  async function start(spare, cfg, own) {
    let worker;
    try {
      worker = await newWorker(cfg, own, spare);
    } catch (e) {
      return spare.finish({ ok: false, message: String(e), url: cfg.worker || "sandbox worker" });
    }
    if (spare.ok !== undefined) return worker.terminate();     // its boot ended meanwhile (timed out)
    Object.assign(spare, { worker, own });
    worker.addEventListener("message", (event) => {
      spare.heard = true;
      onMessage(spare, event.data || {});
    });
    worker.addEventListener("error", (event) => {
      event.preventDefault();
      if (spare.ok === undefined && own && !spare.heard && cfg.worker) {
        worker.terminate();
        start(spare, cfg, false);
      } else if (spare.ok === undefined) {
        spare.finish({ ok: false, message: event.message || "the sandbox worker failed", url: cfg.worker || "" });
      } else if (host.running === worker) crashed(event.message || "the sandbox worker failed");
    });
    worker.postMessage({ type: "init", config: cfg, runner: plain(host.data.sources).runner, files: host.files });
  }

  // The run's worker is done with, whatever happened: terminate it (its timers, listeners and
  // memory go with it).
  function discard() {
    if (host.running) host.running.terminate();
    host.running = null;
  }

  function respond(answer) {
    const pending = host.pending;
    if (!pending) return;
    clearTimeout(pending.timer);
    host.pending = null;
    discard();
    if (host.data) host.data.response = Object.assign({ id: pending.id }, answer);
    settle();
  }

  function crashed(message) {
    respond({ status: "crashed", message: String(message).slice(-2000) });
  }

  function onMessage(spare, msg) {
    if (msg.type === "ready" || msg.type === "failed") {
      if (spare.ok === undefined) {
        spare.finish(msg.type === "ready" ? { ok: true }
          : { ok: false, message: String(msg.message || "").slice(0, 2000), url: String(msg.url || "").slice(0, 500) });
      }
      return;                                   // later, the run's code saying so changes nothing
    }
    const pending = host.pending;
    // Only the answer of the run in flight, from its own worker, counts; anything else (a message
    // the code itself posted, say) is dropped.
    if (!pending || spare.worker !== host.running || msg.nonce !== pending.nonce) return;
    if (msg.type === "fatal") return crashed(msg.message);
    if (msg.type !== "done" || typeof msg.answer !== "string") return;
    respond({
      status: "done",
      answer: msg.answer.slice(0, 2000000),
      output: Array.isArray(msg.output) ? msg.output.slice(0, 200).map((s) => String(s).slice(0, 600)) : [],
      more: Number.isFinite(msg.more) ? msg.more : 0,
      ms: Number.isFinite(msg.ms) ? msg.ms : null,
    });
  }

  host.attach = (data) => {
    host.data = data;
    settle();
  };

  // The reader opened a section that runs code: have an interpreter ready.
  host.want = () => {
    if (!host.spare || host.spare.ok === false) boot();
  };

  host.setFiles = (files) => {
    host.files = plain(files) || {};
    // a spare that booted without them gets them now (it has run nothing yet)
    const spare = host.spare;
    if (spare && spare.worker && spare.ok !== false && Object.keys(host.files).length) {
      spare.worker.postMessage({ type: "files", files: host.files });
    }
  };

  host.run = async (request) => {
    request = plain(request);
    if (!request || request.id === undefined || (host.pending && host.pending.id === request.id)) return;
    if (host.pending) {                          // one run at a time (app/sandbox queues them)
      if (host.data) host.data.response = { id: request.id, status: "busy" };
      return;
    }
    const pending = (host.pending = { id: request.id, nonce: crypto.getRandomValues(new Uint32Array(4)).join("-") });
    setPhase("running");
    let spare = host.spare && host.spare.ok !== false ? host.spare : boot();
    const started = await spare.ready;
    if (host.pending !== pending) return;
    if (!started.ok) {
      host.spare = null;
      setPhase("failed");
      return respond({ status: "unavailable", message: started.message, url: started.url });
    }
    // This interpreter is the run's, and only the run's; the next one boots beside it.
    host.running = spare.worker;
    host.spare = null;
    boot();
    host.stats.runs += 1;
    setPhase("running");
    const limit = Math.max(1, Math.min(60, Number(request.limit_s) || 5));
    pending.timer = setTimeout(() => {
      if (host.pending === pending) respond({ status: "timeout", limit_s: limit });
    }, limit * 1000);
    host.running.postMessage({ type: "run", nonce: pending.nonce, request: request.payload });
  };
}
window.__kvSandboxHost.attach(data);
window.__kvSandboxHost.setFiles(data.files);
if (data.wanted) window.__kvSandboxHost.want();
