/* The yardstick page of tests/bench_load.py: the site's own Pyodide, in a Web Worker started at
 * once, as the site's loader does; it installs NumPy and imports it, nothing else. The worker's
 * performance marks land on this page's timeline; body[data-ready] and the mark "kv-ready" say
 * NumPy is imported. */
(function () {
  "use strict";
  const cfg = JSON.parse(document.getElementById("kv-config").textContent);
  const abs = (u) => (u ? new URL(u, document.baseURI).href : null);
  const worker = new Worker("bare-worker.js");
  worker.onmessage = (event) => {
    const msg = event.data;
    if (msg.type === "mark") performance.mark(msg.name, { startTime: msg.at - performance.timeOrigin });
    if (msg.type === "ready") {
      performance.mark("kv-ready");
      document.body.dataset.ready = "true";
    }
    if (msg.type === "error") document.body.dataset.error = msg.message;
  };
  worker.postMessage({
    pyodide: abs(cfg.pyodide), indexURL: abs(cfg.indexURL), stdlib: abs(cfg.stdlib), lock: abs(cfg.lock),
    packageBaseUrl: abs(cfg.packageBaseUrl),
  });
})();
