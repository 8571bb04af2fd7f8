"""What the page runs on: the Pyodide runtime (its npm tarball, unpacked once into the cache) and
the packages it installs, the compiled ones from Pyodide's distribution, the pure ones from PyPI."""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .common import canonical, sha256_file
from .inputs import Inputs

# Built by Pyodide (or shipped with it); Pyodide's lock file has their sha256. nh3 is the HTML
# sanitizer Panel calls (Rust, compiled to WebAssembly).
COMPILED_PACKAGES = ("numpy", "pyyaml", "markupsafe", "packaging", "nh3")


@dataclass(frozen=True)
class Runtime:
    """The unpacked npm package: pyodide.js, the WebAssembly, python_stdlib.zip, pyodide-lock.json."""

    dir: Path

    @property
    def lock(self) -> dict:
        return json.loads((self.dir / "pyodide-lock.json").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Package:
    """One package the page installs."""

    name: str  # canonical name, the key in the site's lock file
    wheel: Path | None  # the checked source wheel; None with --cdn (Pyodide's CDN serves it)
    rule: str  # which slimming rule applies (buildsupport/wheels.py DROP)
    entry: dict | None = None  # its entry in Pyodide's lock file (compiled packages)


def unpack_runtime(inputs: Inputs, tarball_sha: str) -> Runtime:
    """The runtime from the checked npm tarball, unpacked into the cache once per tarball."""
    tarball = inputs.npm_tarball(tarball_sha)
    runtime = inputs.derived / f"pyodide-{inputs.version}-{sha256_file(tarball)[:12]}"
    if not (runtime / "pyodide-lock.json").is_file():
        runtime.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=inputs.cache))
        with tarfile.open(tarball) as tf:
            tf.extractall(tmp, filter="data")
        if runtime.exists():
            shutil.rmtree(runtime)
        os.replace(tmp / "package", runtime)
        shutil.rmtree(tmp)
    return Runtime(runtime)


def compiled_packages(inputs: Inputs, pyodide_lock: dict, cdn: bool) -> list[Package]:
    entries = {name: pyodide_lock["packages"][name] for name in COMPILED_PACKAGES}
    wheels = {} if cdn else inputs.compiled_wheels(entries)
    return [Package(name, wheels.get(name), name, entry) for name, entry in entries.items()]


def pure_packages(inputs: Inputs, locked_wheels: dict[str, str]) -> list[Package]:
    packages = []
    for filename, sha in locked_wheels.items():
        name = canonical(filename.split("-")[0])
        packages.append(Package(name, inputs.pure_wheel(filename, sha), name.replace("-", "_")))
    return packages


def fetch_packages(inputs: Inputs, runtime: Runtime, locked_wheels: dict[str, str], cdn: bool) -> list[Package]:
    """Every package the page installs, checked: compiled ones first (a missing one stops the build
    before the downloads), then the pure wheels of build.lock.json."""
    return compiled_packages(inputs, runtime.lock, cdn) + pure_packages(inputs, locked_wheels)
