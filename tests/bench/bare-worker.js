/* The yardstick's worker (tests/bench/bare.js): boot Pyodide with NumPy, import it. */
"use strict";

function mark(name) {
  self.postMessage({ type: "mark", name, at: performance.timeOrigin + performance.now() });
}
mark("kv-worker-start");

self.onmessage = async (event) => {
  const cfg = event.data;
  try {
    importScripts(cfg.pyodide);
    mark("kv-pyodide-js");
    const pyodide = await loadPyodide({
      indexURL: cfg.indexURL, stdLibURL: cfg.stdlib || undefined, lockFileURL: cfg.lock,
      packageBaseUrl: cfg.packageBaseUrl, packages: ["numpy"],
    });
    mark("kv-booted");
    pyodide.runPython("import numpy");
    mark("kv-numpy-imported");
    self.postMessage({ type: "ready" });
  } catch (e) {
    self.postMessage({ type: "error", message: String(e) });
  }
};
