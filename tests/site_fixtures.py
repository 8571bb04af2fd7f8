"""Shared by the site tests: where the build cache and the compiled Pyodide wheels are,
and one build of each kind per test session (in a temporary folder, not dist/).

The compiled wheels (numpy, pyyaml, markupsafe, packaging, nh3 for Pyodide) cannot be
fetched with pip or npm. They are looked for in $KV_EXPLORABLE_PYODIDE_WHEELS, the build
cache and <repo>/../shared/pyodide-<version>/ (where CI and development machines have
them); tests that need them skip, naming the places looked in, when none holds them.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

import build

ROOT = Path(__file__).resolve().parents[1]


def compiled_wheel_candidates() -> list[Path]:
    version = json.loads(build.LOCK_PATH.read_text())["pyodide"]["version"]
    dirs = [d for d in os.environ.get("KV_EXPLORABLE_PYODIDE_WHEELS", "").split(os.pathsep) if d]
    return [Path(d) for d in dirs] + [
        build.DEFAULT_CACHE / f"pyodide-{version}",
        ROOT.parent / "shared" / f"pyodide-{version}",
    ]


REQUIRED = (
    "numpy-2.2.5-cp313-cp313-pyodide_2025_0_wasm32.whl",
    "pyyaml-6.0.2-cp313-cp313-pyodide_2025_0_wasm32.whl",
    "markupsafe-3.0.2-cp313-cp313-pyodide_2025_0_wasm32.whl",
    "packaging-24.2-py3-none-any.whl",
    "nh3-0.2.21-cp38-abi3-pyodide_2025_0_wasm32.whl",
)


def tools_missing() -> str | None:
    """The build runs npm (Pyodide's npm package) and Node.js (bytecode compilation)."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            return f"{tool} not found: the build needs Node.js and npm (apt-get install nodejs npm)"
    return None


def compiled_wheels_dir() -> Path | None:
    for d in compiled_wheel_candidates():
        if all((d / f).is_file() for f in REQUIRED):
            return d
    return None


def require_compiled_wheels() -> Path:
    d = compiled_wheels_dir()
    if d is None:
        pytest.skip(
            "the compiled Pyodide wheels ("
            + ", ".join(REQUIRED)
            + ") are in none of: "
            + ", ".join(str(p) for p in compiled_wheel_candidates())
            + " (set KV_EXPLORABLE_PYODIDE_WHEELS=DIR)"
        )
    return d


def shared_folder(run: str | None = None) -> Path:
    """Where this run's builds go. Under pytest-xdist every worker of one run shares the folder its run's
    id names (tests/conftest.py removes it when the run ends); alone, a folder of this process's."""
    run = run or os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run:
        folder = Path(tempfile.gettempdir()) / f"kv-site-tests-{run}"
        folder.mkdir(exist_ok=True)
        return folder
    folder = Path(tempfile.mkdtemp(prefix="kv-site-tests-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


@functools.cache
def _build(cdn: bool) -> Path:
    """One build of each kind per run: the first worker to need it builds it, under a lock the others
    wait on, and writes a mark that it is whole."""
    import fcntl

    from tests.tiers import require

    require("build", "builds the site")
    if tools_missing():
        pytest.skip(tools_missing())
    wheels = [] if cdn else [str(compiled_wheels_dir())]
    folder = shared_folder()
    out = folder / ("dist-cdn" if cdn else "dist")
    with open(folder / f"{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        whole = folder / f"{out.name}.whole"
        if not whole.exists():
            build.build(out, build.DEFAULT_CACHE, cdn=cdn, pyodide_wheels=wheels)
            whole.touch()
    return out


def build_ahead(run: str):
    """The run's self-contained site, built by a process of its own under _build's lock (a worker that
    needs it first waits on the lock, and finds it whole); None when it cannot be built here (the tests
    that need it skip, saying why)."""
    import subprocess
    import sys

    if tools_missing() or compiled_wheels_dir() is None:
        return None
    code = "from tests.site_fixtures import _build; _build(False)"
    env = {**os.environ, "PYTEST_XDIST_TESTRUNUID": run}
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.DEVNULL)


def site_self_contained() -> Path:
    require_compiled_wheels()
    return _build(False)


def site_cdn() -> Path:
    return _build(True)
