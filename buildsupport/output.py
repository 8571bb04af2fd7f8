"""Writing dist/: into a staging folder beside it, then swapped in whole, so a failed build keeps
the previous site; text files get precompressed copies; build-info.json lists every file's sha256."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from .common import sha256_bytes, sha256_file, write_atomic
from .site import Site

# The wheels and zip archives are stored zips (buildsupport/zips.py): compressed whole, here.
COMPRESSIBLE = {".js", ".css", ".json", ".html", ".wasm", ".svg", ".map", ".txt", ".mjs", ".whl", ".zip"}
NOT_LISTED = ("_headers",)


def compressors(data: bytes) -> list[tuple[str, Callable[[], bytes]]]:
    """gzip always; zstd too where the tool exists (`build.py serve` sends what the browser accepts)."""
    found = [("gz", lambda: gzip.compress(data, compresslevel=9, mtime=0))]
    if shutil.which("zstd"):
        found.append(
            (
                "zst",
                lambda: subprocess.run(["zstd", "-19", "-q", "-c"], input=data, check=True, capture_output=True).stdout,
            )
        )
    return found


def precompress(path: Path, derived: Path) -> None:
    """Write path.gz (and path.zst) beside a text, wasm or archive file where that saves 10%, cached by
    content."""
    if path.suffix not in COMPRESSIBLE or path.stat().st_size < 1024:
        return
    data = path.read_bytes()
    key = sha256_bytes(data)
    for ext, pack in compressors(data):
        cached = derived / ext / f"{key}.{ext}"
        if not cached.is_file():
            write_atomic(cached, pack())
        if cached.stat().st_size < 0.9 * len(data):
            shutil.copyfile(cached, path.with_name(f"{path.name}.{ext}"))


def write_files(site: Site, staging: Path, derived: Path) -> dict[str, str]:
    """Every file of the site under staging, with its compressed copies; {path: sha256}."""
    listed = {}
    for rel, data in site.files.items():
        target = staging / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, Path):
            shutil.copyfile(data, target)
        else:
            target.write_bytes(data)
        if rel not in NOT_LISTED:
            listed[rel] = sha256_file(target)
        precompress(target, derived)
    return listed


def swap_in(staging: Path, out: Path) -> None:
    """Replace out with staging in two renames (the old folder goes after the new one is in place)."""
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}-old-{os.getpid()}")
        os.replace(out, old)
    os.replace(staging, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_dist(site: Site, out: Path, derived: Path, info: dict) -> int:
    """Write the site to out (atomically, as a whole); the number of bytes it holds uncompressed."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        info = {**info, "files": write_files(site, staging, derived)}
        (staging / "build-info.json").write_text(json.dumps(info, indent=1), encoding="utf-8")
        swap_in(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file() and p.suffix not in (".gz", ".zst"))
