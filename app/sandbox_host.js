/* The page's side of the reader's code sandbox (the "render" script of app/sandbox.py's
 * CodeSandbox; runs in the browser with `model`, `data`, `state`, `view` in scope, under
 * `panel serve` and on the static site alike).
 *
 * One host per page (window.__kvSandboxHost): it owns the sandbox worker (static/sandbox.js),
 * starts it when the app asks (data.wanted), sends it one run at a time, and answers in
 * data.response with plain data only. A run that takes longer than its limit, or an
 * interpreter that dies, gets the worker terminated and a fresh one started: the page never
 * waits longer than the limit, and the app's own interpreter is never involved.
 */
if (!window.__kvSandboxHost) {
  const BOOT_LIMIT_MS = 180000;

  const host = {
    worker: null,
    phase: "off",          // off | starting | ready | running | failed
    ready: null,           // promise of the current worker's start
    data: null,            // the component's data (the latest rendered view)
    files: {},
    pending: null,         // {id, nonce, timer, limit}
    stats: { starts: 0, lastStartMs: null },
  };
  window.__kvSandboxHost = host;

  const setPhase = (phase) => {
    host.phase = phase;
    if (host.data) host.data.status = phase;
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
    return cfg;
  }

  function newWorker(cfg) {
    if (cfg.worker) return new Worker(cfg.worker);
    // `panel serve`: no same-origin file for the worker; its source comes from the app.
    const blob = new Blob([plain(host.data.sources).worker], { type: "text/javascript" });
    return new Worker(URL.createObjectURL(blob));
  }

  function start() {
    const cfg = runtimeConfig();
    const t0 = performance.now();
    let worker;
    host.stats.starts += 1;
    setPhase("starting");
    host.ready = new Promise((resolve) => {
      const failed = (message, url) => {
        host.stats.lastFailure = `${message} (${url})`;
        if (host.worker === worker) {
          if (worker) worker.terminate();
          host.worker = null;
          setPhase("failed");
        }
        resolve({ ok: false, message, url });
      };
      if (!cfg.pyodide || !cfg.indexURL) return failed("no Python runtime is configured for the sandbox", "");
      try {
        worker = host.worker = newWorker(cfg);
      } catch (e) {
        return failed(String(e), cfg.worker || "sandbox worker");
      }
      const timer = setTimeout(() => failed("the sandbox did not start in time", cfg.indexURL), BOOT_LIMIT_MS);
      worker.addEventListener("message", (event) => onMessage(worker, event.data || {}));
      worker.addEventListener("error", (event) => {
        event.preventDefault();
        if (worker !== host.worker) return;
        if (host.phase === "starting") failed(event.message || "the sandbox worker failed", cfg.worker || "");
        else crashed(worker, event.message || "the sandbox worker failed");
      });
      worker.__ready = (msg) => {
        clearTimeout(timer);
        if (msg.type === "ready") {
          host.stats.lastStartMs = performance.now() - t0;
          performance.mark("kv-sandbox-ready");
          setPhase("ready");
          resolve({ ok: true });
        } else {
          failed(String(msg.message || "").slice(0, 2000), String(msg.url || "").slice(0, 500));
        }
      };
      worker.postMessage({ type: "init", config: cfg, runner: plain(host.data.sources).runner, files: host.files });
    });
    return host.ready;
  }

  function respond(answer) {
    const pending = host.pending;
    if (!pending) return;
    clearTimeout(pending.timer);
    host.pending = null;
    if (host.data) host.data.response = Object.assign({ id: pending.id }, answer);
  }

  function refuse(request, status) {
    if (host.data) host.data.response = { id: request.id, status };
  }

  // The interpreter is gone or cannot be trusted: throw it away, start a fresh one for the next run.
  function restart(worker) {
    if (host.worker === worker) {
      worker.terminate();
      host.worker = null;
      start();
    }
  }

  function crashed(worker, message) {
    respond({ status: "crashed", message: String(message).slice(-2000) });
    restart(worker);
  }

  function onMessage(worker, msg) {
    if (worker !== host.worker) return;
    if (msg.type === "ready" || msg.type === "failed") {
      if (worker.__ready) worker.__ready(msg);
      return;
    }
    const pending = host.pending;
    // Only the answer to the run in flight counts; anything else (a message the code itself
    // posted, say) is dropped.
    if (!pending || msg.nonce !== pending.nonce) return;
    if (msg.type === "fatal") return crashed(worker, msg.message);
    if (msg.type !== "done" || typeof msg.answer !== "string") return;
    respond({
      status: "done",
      answer: msg.answer.slice(0, 2000000),
      output: Array.isArray(msg.output) ? msg.output.slice(0, 200).map((s) => String(s).slice(0, 600)) : [],
      more: Number.isFinite(msg.more) ? msg.more : 0,
      ms: Number.isFinite(msg.ms) ? msg.ms : null,
    });
    setPhase("ready");
    // A memory bomb leaves the worker's memory grown for good: start a fresh one.
    if (msg.answer.includes('"MemoryError"')) restart(worker);
  }

  host.attach = (data) => {
    host.data = data;
    data.status = host.phase;
  };

  host.want = () => {
    if (host.phase === "off" || host.phase === "failed") start();
  };

  host.setFiles = (files) => {
    host.files = plain(files) || {};
    if (host.worker && Object.keys(host.files).length) host.worker.postMessage({ type: "files", files: host.files });
  };

  host.run = async (request) => {
    request = plain(request);
    if (!request || request.id === undefined || (host.pending && host.pending.id === request.id)) return;
    if (host.pending) return refuse(request, "busy");     // one run at a time
    const pending = (host.pending = { id: request.id, nonce: Math.random().toString(36).slice(2) + Date.now() });
    if (!host.worker || host.phase === "failed") start();
    const started = await host.ready;
    if (host.pending !== pending) return;
    if (!started.ok) return respond({ status: "unavailable", message: started.message, url: started.url });
    const worker = host.worker;
    const limit = Math.max(1, Math.min(60, Number(request.limit_s) || 5));
    pending.timer = setTimeout(() => {
      if (host.pending !== pending) return;
      respond({ status: "timeout", limit_s: limit });
      restart(worker);
    }, limit * 1000);
    setPhase("running");
    worker.postMessage({ type: "run", nonce: pending.nonce, request: request.payload });
  };
}
window.__kvSandboxHost.attach(data);
window.__kvSandboxHost.setFiles(data.files);
if (data.wanted) window.__kvSandboxHost.want();
