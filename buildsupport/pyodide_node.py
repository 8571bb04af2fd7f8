"""The browser's own Python at build time: Pyodide under Node.js (buildsupport/in_pyodide/run.js)
compiles the page's modules to its bytecode and traces which ones the page imports at start-up."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from .common import RECIPE, SENTINEL_CDN, BuildError, dir_digest, log, short_key
from .packages import Package, Runtime
from .wheels import unpack_slim

IN_PYODIDE = Path(__file__).resolve().parent / "in_pyodide"
RESULT = "@@RESULT@@"
# What the page's worker sets before Python starts (static/worker.js).
PAGE_ENV = {"PANEL_CDN_ROOT": SENTINEL_CDN, "BOKEH_RESOURCES": "cdn"}


def run_in_pyodide(
    runtime: Runtime, host: Path, module: str, function: str, arg: str, paths: list[str] = (), env: dict | None = None
) -> str:
    """module.function(arg) inside Pyodide, with host mounted at /host; its string result."""
    if not shutil.which("node"):
        raise BuildError(
            "node (Node.js) not found: the build runs Pyodide under Node.js to compile and "
            "trace the page's Python. Install Node.js (>= 18)."
        )
    request = host / f".request-{function}.json"
    request.write_text(
        json.dumps(
            {
                "host": str(host),
                "paths": list(paths),
                "module": module,
                "function": function,
                "arg": arg,
                "env": env or {},
            }
        ),
        encoding="utf-8",
    )
    proc = subprocess.run(
        ["node", str(IN_PYODIDE / "run.js"), str(runtime.dir / "pyodide.js"), f"{runtime.dir}/", str(request)],
        capture_output=True,
        text=True,
    )
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT)), None)
    if proc.returncode != 0 or line is None:
        raise BuildError(
            f"{module}.{function} in Pyodide under Node.js failed:\n{(proc.stderr or proc.stdout)[-2000:]}"
        )
    return line[len(RESULT) :]


def compile_trees(runtime: Runtime, work: Path, jobs: list[dict]) -> dict:
    """Compile the trees under work/<job["dir"]> (in_pyodide/compile_pyc.py jobs) in Pyodide."""
    jobs = [{**job, "root": f"/host/{job['dir']}"} for job in jobs]
    report = run_in_pyodide(runtime, work, "in_pyodide.compile_pyc", "compile_jobs", json.dumps(jobs))
    return {root.removeprefix("/host/"): counts for root, counts in json.loads(report).items()}


def trace_key(inputs, packages: list[Package], app_src: Path) -> str:
    """The trace depends on the app, the wheels, the tracer and the runtime version."""
    return short_key(
        RECIPE,
        inputs.version,
        dir_digest(app_src),
        dir_digest(IN_PYODIDE),
        *sorted(p.wheel.name for p in packages if p.wheel),
    )


def trace_imports(
    inputs, runtime: Runtime, packages: list[Package], app_src: Path, queries: list[str]
) -> list[str] | None:
    """Modules the page's start-up imports in Pyodide (in_pyodide/trace_imports.py), cached; None
    (with a warning) if it cannot run: the build then compiles what CPython imported. With
    KV_EXPLORABLE_STRICT_TRACE set (the tests set it), a trace that fails fails the build."""
    cached = inputs.derived / "trace" / f"{trace_key(inputs, packages, app_src)}.json"
    if cached.is_file():
        return json.loads(cached.read_text())
    inputs.derived.mkdir(parents=True, exist_ok=True)
    started = time.time()
    with tempfile.TemporaryDirectory(dir=inputs.derived) as tmp:
        work = Path(tmp)
        shutil.copytree(app_src, work / "app")
        trees = ["/host/app"]
        for i, package in enumerate(p for p in packages if p.wheel):
            unpack_slim(package.wheel, work / f"t{i}", package.rule)
            trees.append(f"/host/t{i}")
        try:
            out = run_in_pyodide(
                runtime, work, "in_pyodide.trace_imports", "trace", json.dumps(queries), trees, PAGE_ENV
            )
        except BuildError as e:
            if os.environ.get("KV_EXPLORABLE_STRICT_TRACE"):  # the tests: a broken trace is a failure
                raise
            log(f"warning: tracing the page's imports failed; compiling what CPython imports instead:\n{e}")
            return None
    modules = json.loads(out)
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(modules), encoding="utf-8")
    log(f"traced the page's imports in Pyodide under Node.js: {len(modules)} modules ({time.time() - started:.1f}s)")
    return modules
