"""`python build.py dev`: the app under Panel's own server, for development, with the reader's
code sandbox served from local files.

The app runs on the server; the reader's code never does: it runs in the reader's browser,
in a Pyodide worker (static/sandbox.js) whose runtime and NumPy wheel this server hands out
under /kv-runtime/ (the same pinned, hash-checked files the static site ships). Plain
`panel serve app/explorable.py` works too: the sandbox then loads Pyodide from its CDN.
"""
from __future__ import annotations

import json
import os
import shutil
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNTIME_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")


def sandbox_runtime(cache: Path, pyodide_wheels=()) -> Path:
    """A folder with Pyodide's runtime and NumPy's wheel (checked against Pyodide's lock), in the cache."""
    import build
    lock = build.load_lock()
    version = lock["pyodide"]["version"]
    extra = list(pyodide_wheels) + [d for d in os.environ.get("KV_EXPLORABLE_PYODIDE_WHEELS", "").split(os.pathsep) if d]
    inputs = build.Inputs(cache, version, extra)
    tarball = inputs.npm_tarball(lock["pyodide"]["sha256"])
    out = inputs.derived / f"sandbox-runtime-{version}-{build.sha256_file(tarball)[:12]}"
    if (out / "pyodide-lock.json").is_file():
        return out
    with tempfile.TemporaryDirectory(dir=inputs.cache) as tmp:
        with tarfile.open(tarball) as tf:
            tf.extractall(tmp, filter="data")
        staging = Path(tmp) / "runtime"
        staging.mkdir()
        for name in RUNTIME_FILES:
            shutil.copyfile(Path(tmp) / "package" / name, staging / name)
        numpy = json.loads((staging / "pyodide-lock.json").read_text(encoding="utf-8"))["packages"]["numpy"]
        shutil.copyfile(inputs.compiled_wheel(numpy["file_name"], numpy["sha256"]), staging / numpy["file_name"])
        if out.exists():
            shutil.rmtree(out)
        os.replace(staging, out)
    return out


def serve(port: int = 5006, show: bool = True, cache: Path | None = None, pyodide_wheels=()) -> None:
    """Serve the explorable at http://127.0.0.1:<port>/explorable until interrupted."""
    import build
    runtime = sandbox_runtime(cache or build.DEFAULT_CACHE, pyodide_wheels)
    os.environ["KV_SANDBOX_RUNTIME"] = json.dumps(
        {"pyodide": "/kv-runtime/pyodide.js", "indexURL": "/kv-runtime/", "packages": ["numpy"]})
    import panel as pn

    from app.main import create_app

    print(f"serving the explorable at http://127.0.0.1:{port}/explorable  (Ctrl+C to stop)", flush=True)
    pn.serve({"explorable": lambda: create_app(pn.state.session_args)}, port=port, address="127.0.0.1",
             websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"], static_dirs={"kv-runtime": str(runtime)},
             show=show, title="La caché de claves y valores", threaded=False,
             location=False)   # the app reads the URL once (create_app); no second reading by Panel
