"""build.lock.json: the sha256 of every input the build fetches from npm and PyPI.

The build checks the installed Panel and the Pyodide it pins against it (`check_pins`);
`python build.py --update-lock` records new ones: the Pyodide version Panel pins and the installed
panel and bokeh (the page's JavaScript comes from them, so the wheels must be the same versions)."""

from __future__ import annotations

import json
import shutil
import tempfile
from importlib.metadata import version as installed_version
from pathlib import Path

from .common import LOCK_PATH, BuildError, log, sha256_file
from .inputs import Inputs, npm_pack, pip_download


def load_lock() -> dict:
    return json.loads(LOCK_PATH.read_text(encoding="utf-8"))


def check_pins(pre: dict, lock: dict) -> dict:
    """The installed Panel (its JavaScript goes into the page) must be the one the lock records,
    and the Pyodide it pins the one the lock records."""
    if pre["pyodide_version"] != lock["pyodide"]["version"]:
        raise BuildError(
            f"Panel {pre['panel_version']} pins Pyodide {pre['pyodide_version']} but build.lock.json "
            f"records Pyodide {lock['pyodide']['version']}: run `python build.py --update-lock`."
        )
    for pkg in ("panel", "bokeh"):
        if not any(f.startswith(f"{pkg}-{pre[pkg + '_version']}-") for f in lock["wheels"]):
            raise BuildError(
                f"the installed {pkg} is {pre[pkg + '_version']} but build.lock.json records another "
                "version; the page's JS must match the wheel: run `python build.py --update-lock`."
            )
    return pre


def wanted_wheels(lock: dict) -> list[str]:
    """name==version of each recorded wheel; panel and bokeh at their installed versions."""
    pinned = {"panel": installed_version("panel"), "bokeh": installed_version("bokeh")}
    specs = []
    for filename in lock["wheels"]:
        name, version = filename.split("-")[:2]
        specs.append(f"{name}=={pinned.get(name, version)}")
    return specs


def update_lock(cache: Path) -> None:
    """Download the inputs afresh, record their sha256 and keep them in the cache."""
    from app.wasm import pyodide_version

    version = pyodide_version()
    lock = load_lock()
    inputs = Inputs(cache, version)
    inputs.downloads.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tgz = npm_pack(version, Path(tmp))
        lock["pyodide"] = {"version": version, "npm": f"pyodide@{version}", "sha256": sha256_file(tgz)}
        shutil.copyfile(tgz, inputs.downloads / tgz.name)
        pip_download(wanted_wheels(lock), Path(tmp))
        wheels = sorted(Path(tmp).glob("*.whl"))
        lock["wheels"] = {p.name: sha256_file(p) for p in wheels}
        for p in wheels:
            shutil.copyfile(p, inputs.downloads / p.name)
    LOCK_PATH.write_text(json.dumps(lock, indent=2) + "\n", encoding="utf-8")
    log(f"updated {LOCK_PATH.name}: pyodide {version}, {len(lock['wheels'])} wheels")
