// Call one Python function inside Pyodide under Node.js and print what it returns.
//
//   node run.js <pyodide.js> <indexURL> <request.json>
//
// request.json: {"host": folder mounted at /host, "paths": folders to append to sys.path,
//                "module": "in_pyodide.compile_pyc", "function": "compile_jobs", "arg": "...",
//                "env": {...}}
// buildsupport/ is mounted at /kvbuild and comes first on sys.path. The function takes one
// string and returns a string (async functions are awaited); it is printed after @@RESULT@@.
"use strict";
const fs = require("fs");
const path = require("path");
const { loadPyodide } = require(process.argv[2]);

// panel.io.pyodide imports XMLHttpRequest from js; Node.js has none, and the trace sends nothing.
globalThis.XMLHttpRequest ??= class { open() {} send() {} setRequestHeader() {} };

function mount(py, hostDir, at) {
  py.FS.mkdir(at);
  py.FS.mount(py.FS.filesystems.NODEFS, { root: hostDir }, at);
}

(async () => {
  const request = JSON.parse(fs.readFileSync(process.argv[4], "utf8"));
  const py = await loadPyodide({ indexURL: process.argv[3], env: request.env || {} });
  mount(py, request.host, "/host");
  mount(py, path.resolve(__dirname, ".."), "/kvbuild");
  const sys = py.pyimport("sys");
  sys.dont_write_bytecode = true;  // no __pycache__ written into the repository through the mount
  sys.path.insert(0, "/kvbuild");
  for (const p of request.paths || []) sys.path.append(p);
  const result = await py.pyimport(request.module)[request.function](request.arg);
  console.log("@@RESULT@@" + result);
})().catch((e) => { console.error(String(e)); process.exit(1); });
