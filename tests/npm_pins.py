"""npm packages the tests use (never the site): each fetched once with `npm pack` into the build's
download cache (never into the repository) and checked against the sha256 pinned by its user.

    npm_file("axe-core", "4.14.1", SHA256, "package/axe.min.js")  -> the file's bytes
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest


def tarball(name: str, version: str, sha256: str) -> Path:
    """The package's tarball, from the cache (npm pack on the first run); skips without npm."""
    import build

    folder = build.DEFAULT_CACHE / "npm"
    path = folder / f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"
    if not path.is_file():
        if shutil.which("npm") is None:
            pytest.skip(f"npm not found: it fetches {name} (apt-get install npm)")
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["npm", "pack", f"{name}@{version}", "--silent"], cwd=folder, capture_output=True, text=True
        )
        if done.returncode != 0 or not path.is_file():
            pytest.skip(f"npm pack {name}@{version} failed: {done.stderr.strip()[-300:]}")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == sha256, f"{path} is not {name} {version} (sha256 {digest}): delete it"
    return path


@functools.cache
def npm_file(name: str, version: str, sha256: str, member: str) -> bytes:
    """One file of the pinned package."""
    with tarfile.open(tarball(name, version, sha256)) as tf:
        return tf.extractfile(member).read()
