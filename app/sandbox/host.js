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
    return cfg;
  }

  function newWorker(cfg) {
    if (cfg.worker) return new Worker(cfg.worker);
    // `panel serve`: no same-origin file for the worker; its source comes from the app.
    const blob = new Blob([plain(host.data.sources).worker], { type: "text/javascript" });
    return new Worker(URL.createObjectURL(blob));
  }

  // A worker for the next run, booting now. Its "ready" or "failed" counts once, during its boot;
  // after that only the run's own answer (with the run's nonce) does.
  function boot() {
    const cfg = runtimeConfig();
    const t0 = performance.now();
    const spare = { worker: null, ok: undefined };
    host.stats.starts += 1;
    spare.ready = new Promise((resolve) => {
      const finish = (result) => {
        if (spare.ok !== undefined) return;
        clearTimeout(spare.timer);
        spare.ok = result.ok;
        if (!result.ok) {
          host.stats.lastFailure = `${result.message} (${result.url})`;
          if (spare.worker) spare.worker.terminate();
        } else {
          host.stats.lastStartMs = performance.now() - t0;
          performance.mark("kv-sandbox-ready");
        }
        resolve(result);
        settle();
      };
      spare.finish = finish;
      if (!cfg.pyodide || !cfg.indexURL) return finish({ ok: false, message: "no Python runtime is configured for the sandbox", url: "" });
      try {
        spare.worker = newWorker(cfg);
      } catch (e) {
        return finish({ ok: false, message: String(e), url: cfg.worker || "sandbox worker" });
      }
      spare.timer = setTimeout(() => finish({ ok: false, message: "the sandbox did not start in time", url: cfg.indexURL }), BOOT_LIMIT_MS);
      spare.worker.addEventListener("message", (event) => onMessage(spare, event.data || {}));
      spare.worker.addEventListener("error", (event) => {
        event.preventDefault();
        if (spare.ok === undefined) finish({ ok: false, message: event.message || "the sandbox worker failed", url: cfg.worker || "" });
        else if (host.running === spare.worker) crashed(event.message || "the sandbox worker failed");
      });
      spare.worker.postMessage({ type: "init", config: cfg, runner: plain(host.data.sources).runner, files: host.files });
    });
    host.spare = spare;
    settle();
    return spare;
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
