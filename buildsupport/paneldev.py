"""`python build.py dev`: the app under Panel's own server, for development, with the reader's
code sandbox served from local files.

The app runs on the server; the reader's code never does: it runs in the reader's browser,
in a Pyodide worker (static/sandbox.js) whose runtime and NumPy wheel this server hands out
under /kv-runtime/ (the same pinned, hash-checked files the static site ships). Plain
`panel serve app/explorable.py` works too: the sandbox then loads Pyodide from its CDN.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import sys
from pathlib import Path

from .common import DEFAULT_CACHE, BuildError, part_path
from .inputs import Inputs
from .lockfile import load_lock
from .packages import unpack_runtime

RUNTIME_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")


def sandbox_runtime(cache: Path, pyodide_wheels=()) -> Path:
    """A folder with Pyodide's runtime and NumPy's wheel (checked against Pyodide's lock), in the cache."""
    lock = load_lock()
    inputs = Inputs(cache, lock["pyodide"]["version"], list(pyodide_wheels))
    runtime = unpack_runtime(inputs, lock["pyodide"]["sha256"])
    numpy = runtime.lock["packages"]["numpy"]
    out = inputs.derived / f"sandbox-{runtime.dir.name}"
    if (out / numpy["file_name"]).is_file():
        return out
    staging = part_path(out)
    staging.mkdir(parents=True)
    for name in RUNTIME_FILES:
        shutil.copyfile(runtime.dir / name, staging / name)
    wheel = inputs.compiled_wheels({"numpy": numpy})["numpy"]
    shutil.copyfile(wheel, staging / numpy["file_name"])
    shutil.rmtree(out, ignore_errors=True)
    try:
        os.replace(staging, out)
    except OSError:  # another build put it there in the meantime: theirs is the same
        shutil.rmtree(staging, ignore_errors=True)
    return out


def serve(port: int = 5006, show: bool = True, cache: Path | None = None, pyodide_wheels=()) -> None:
    """Serve the explorable at http://127.0.0.1:<port>/explorable until interrupted."""
    runtime = sandbox_runtime(cache or DEFAULT_CACHE, pyodide_wheels)
    os.environ["KV_SANDBOX_RUNTIME"] = json.dumps(
        {"pyodide": "/kv-runtime/pyodide.js", "indexURL": "/kv-runtime/", "packages": ["numpy"]}
    )
    import panel as pn

    from app import intake
    from app.i18n import DEFAULT_LANG, tr
    from app.main import create_app
    from app.state import checkpoints

    intake.install()  # before the first request: its URL's arguments are checked too
    checkpoints.load_every()
    # What the server holds before its first reader (modules, checkpoints) lives as long as it: out of
    # the collector's full passes, which otherwise walk it again at every one.
    gc.collect()
    gc.freeze()

    print(f"serving the explorable at http://127.0.0.1:{port}/explorable  (Ctrl+C to stop)", flush=True)
    pn.serve(
        {"explorable": lambda: create_app(pn.state.session_args)},
        port=port,
        address="127.0.0.1",
        websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"],
        static_dirs={"kv-runtime": str(runtime)},
        show=show,
        title=tr(DEFAULT_LANG, "shell_title"),
        threaded=False,
        location=False,
    )  # the app reads the URL once (create_app); no second reading by Panel


def run(port: int, show: bool, cache: Path, pyodide_wheels=()) -> int:
    """`build.py dev`: serve until Ctrl+C; 1, with the reason on stderr, if the sandbox's runtime
    cannot be had."""
    try:
        serve(port, show, cache, pyodide_wheels)
    except BuildError as e:
        print(f"dev server failed: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0
