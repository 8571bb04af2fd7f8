"""The one zip writer of the build: wheels, the standard library, the lazy archives and the app.

Deterministic (sorted names, one fixed timestamp, fixed permissions), so the same inputs give the
same bytes, hence the same content-hashed names and a browser cache that survives rebuilds.

Stored (not deflated) by default: the server sends the whole archive compressed (the .zst and .gz
copies buildsupport/output.py writes beside it), which is 15-40% smaller than deflating each file
on its own (numpy's wheel 2.69 -> 1.92 MB, the standard library 2.04 -> 1.48 MB with zstd), and
the browser decompresses it off the worker's thread."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

from .common import part_path

FIXED_TIME = (2020, 1, 1, 0, 0, 0)


def write_zip(
    root: Path, out: Path, files: Iterable[Path] | None = None, deflate: bool = False, extra: dict | None = None
) -> Path:
    """Zip `files` (default: every file under root) with names relative to root, stored (or each
    deflated), and `extra` ({name: bytes}) first; atomic."""
    chosen = sorted(p for p in (files if files is not None else root.rglob("*")) if p.is_file())
    out.parent.mkdir(parents=True, exist_ok=True)
    part = part_path(out)
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    entries = [(name, lambda data=data: data) for name, data in (extra or {}).items()]
    entries += [(p.relative_to(root).as_posix(), p.read_bytes) for p in chosen]
    with zipfile.ZipFile(part, "w", method, compresslevel=9 if deflate else None) as z:
        for name, read in entries:
            info = zipfile.ZipInfo(name, FIXED_TIME)
            info.compress_type = method
            info.external_attr = 0o644 << 16
            z.writestr(info, read())
    os.replace(part, out)
    return out


def extract(archive: Path, dest: Path, keep: Callable[[str], bool] = lambda name: True) -> None:
    """Unpack the files of an archive whose names `keep` accepts."""
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            if info.is_dir() or not keep(info.filename):
                continue
            target = dest / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(info))
